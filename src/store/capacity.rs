//! What each DynamoDB call of a test consumed, for the capacity model
//! (`tests/it/capacity.rs`, `docs/capacity.md`): an SDK interceptor, in
//! builds with the `dev` feature only, that keeps every request a test asks
//! it to keep — its operation and its JSON body — while `record` is on.
//! The test turns the bodies into read and write units with DynamoDB's
//! rules. Off (one atomic load per call) unless a test turns it on; never in
//! a deployed function.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use aws_sdk_dynamodb::config::interceptors::BeforeTransmitInterceptorContextRef;
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};

/// One request as it went to DynamoDB.
#[derive(Debug, Clone)]
pub struct Call {
    /// `PutItem`, `Query`, `TransactWriteItems`, …
    pub operation: String,
    pub body: serde_json::Value,
}

static ON: AtomicBool = AtomicBool::new(false);
static CALLS: Mutex<Vec<Call>> = Mutex::new(Vec::new());

/// Starts keeping requests (every test's: filter by table name).
pub fn record(on: bool) {
    ON.store(on, Ordering::SeqCst);
}

/// The requests kept so far, emptied.
pub fn take() -> Vec<Call> {
    std::mem::take(&mut *CALLS.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
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
        if !ON.load(Ordering::Relaxed) {
            return Ok(());
        }
        let request = context.request();
        let operation = request
            .headers()
            .get("x-amz-target")
            .and_then(|t| t.rsplit_once('.'))
            .map_or_else(String::new, |(_, op)| op.to_owned());
        let body = request.body().bytes().and_then(|b| serde_json::from_slice(b).ok()).unwrap_or_default();
        CALLS.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(Call { operation, body });
        Ok(())
    }
}
