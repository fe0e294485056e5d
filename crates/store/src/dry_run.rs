//! Dry runs (`admin … --dry-run`): the same table, read as usual, written
//! never. Two layers, so that a write added later cannot forget the rule:
//!
//! - the guard: a dry run's client carries `ReadOnly`, an SDK interceptor
//!   every call of that client passes, which lets through the read
//!   operations it names and refuses every other one before anything is
//!   sent. A write nobody taught to describe itself fails (the command
//!   reports an error); it is never made;
//! - the description: the write primitives administration uses
//!   (`transact`, `put_conditional`, the lone audit record) describe what
//!   they would write instead of calling DynamoDB (`Store::describe`), and
//!   answer as the real write would when its conditions hold. Conditions a
//!   transaction checks are therefore also checked by reads before it, in
//!   the operation (`inbox_api::org`), so a dry run answers what the real
//!   run would.

use std::sync::Mutex;

use aws_sdk_dynamodb::config::interceptors::BeforeTransmitInterceptorContextMut;
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};

/// The operations a dry run may call: reads only.
const READS: &[&str] =
    &["GetItem", "BatchGetItem", "Query", "Scan", "TransactGetItems", "DescribeTable", "DescribeTimeToLive"];

/// What a dry run would have written, in order.
#[derive(Debug, Default)]
pub(super) struct Described {
    writes: Mutex<Vec<Write>>,
}

/// One item a dry run would have written.
#[derive(Debug, Clone)]
struct Write {
    line: String,
    /// Part of a change (false: the audit record of a call that changed nothing).
    change: bool,
}

impl Described {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Write>> {
        self.writes.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(super) fn add(&self, change: bool, lines: Vec<String>) {
        self.lock().extend(lines.into_iter().map(|line| Write { line, change }));
    }

    pub(super) fn lines(&self) -> Vec<String> {
        self.lock().iter().map(|w| w.line.clone()).collect()
    }

    pub(super) fn changes(&self) -> bool {
        self.lock().iter().any(|w| w.change)
    }
}

/// The guard on a dry run's client: every operation that is not a read is
/// refused before it is sent.
#[derive(Debug)]
pub(super) struct ReadOnly;

/// The operation a request calls (`DynamoDB_20120810.PutItem` → `PutItem`).
fn operation(target: Option<&str>) -> &str {
    target.and_then(|t| t.rsplit_once('.')).map_or("", |(_, op)| op)
}

impl Intercept for ReadOnly {
    fn name(&self) -> &'static str {
        "dry-run-read-only"
    }

    // Once per call, before its first attempt (never retried).
    fn modify_before_retry_loop(
        &self,
        context: &mut BeforeTransmitInterceptorContextMut<'_>,
        _components: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let op = operation(context.request().headers().get("x-amz-target"));
        if READS.contains(&op) { Ok(()) } else { Err(format!("a dry run writes nothing: {op} refused").into()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_reads_are_named_as_allowed() {
        assert_eq!(operation(Some("DynamoDB_20120810.GetItem")), "GetItem");
        for write in ["PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem", "CreateTable", ""]
        {
            assert!(!READS.contains(&write), "{write}");
        }
        assert_eq!(operation(None), "");
    }
}
