//! What each DynamoDB call of a test consumed, for the capacity model
//! (`tests/it/capacity.rs`, `docs/capacity.md`): an SDK interceptor, on the
//! test suite's clients only (`StoreConfig::record_calls`, builds with the
//! `dev` feature), that keeps every request — its
//! operation and its JSON body — while any test has recording on; each test
//! takes the requests of its own table (tests run side by side).
//! The test turns the bodies into read and write units with DynamoDB's
//! rules. Off (one atomic load per call) unless a test turns it on; never in
//! a deployed function.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use aws_sdk_dynamodb::config::interceptors::BeforeTransmitInterceptorContextRef;
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};

/// One request as it went to DynamoDB.
#[derive(Debug, Clone)]
pub struct Call {
    /// `PutItem`, `Query`, `TransactWriteItems`, …
    pub operation: String,
    pub body: serde_json::Value,
}

/// How many tests are recording.
static ON: AtomicUsize = AtomicUsize::new(0);
static CALLS: Mutex<Vec<Call>> = Mutex::new(Vec::new());

fn calls() -> std::sync::MutexGuard<'static, Vec<Call>> {
    CALLS.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One more test records (every test's requests are kept while any does).
pub fn start() {
    ON.fetch_add(1, Ordering::SeqCst);
}

/// One test less records; with none left, what is kept is dropped.
pub fn stop() {
    if ON.fetch_sub(1, Ordering::SeqCst) == 1 {
        calls().clear();
    }
}

/// The requests kept so far that name `table`, taken out.
pub fn take(table: &str) -> Vec<Call> {
    let mut all = calls();
    let (mine, others): (Vec<Call>, Vec<Call>) = std::mem::take(&mut *all).into_iter().partition(|c| c.names(table));
    *all = others;
    mine
}

impl Call {
    /// Whether this request reads or writes `table`.
    fn names(&self, table: &str) -> bool {
        let named = |v: &serde_json::Value| v.get("TableName").and_then(serde_json::Value::as_str) == Some(table);
        named(&self.body)
            || self
                .body
                .get("TransactItems")
                .and_then(serde_json::Value::as_array)
                .is_some_and(|items| items.iter().any(|i| i.as_object().is_some_and(|o| o.values().any(named))))
    }
}

/// The interceptor `Store::connect` installs in dev builds.
#[derive(Debug)]
pub struct Recorder;

impl Intercept for Recorder {
    fn name(&self) -> &'static str {
        "capacity-recorder"
    }

    fn read_before_transmit(
        &self,
        context: &BeforeTransmitInterceptorContextRef<'_>,
        _components: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        if ON.load(Ordering::Relaxed) == 0 {
            return Ok(());
        }
        let request = context.request();
        let operation = request
            .headers()
            .get("x-amz-target")
            .and_then(|t| t.rsplit_once('.'))
            .map_or_else(String::new, |(_, op)| op.to_owned());
        let body = request.body().bytes().and_then(|b| serde_json::from_slice(b).ok()).unwrap_or_default();
        calls().push(Call { operation, body });
        Ok(())
    }
}
