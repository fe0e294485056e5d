//! Both binaries under the Lambda Runtime API (issue 14): a test double of
//! the Runtime API (`/2018-06-01/runtime/…`: next invocation, response,
//! error, init error) on loopback, and the real binaries started against it
//! in Lambda mode, as Lambda starts them. It exercises what the in-process
//! replay does not: INIT, the runtime loop of `lambda_runtime`, the
//! API Gateway conversion of `lambda_http`, the worker's stream batches and
//! partial-batch answers, and an INIT failure reported to the Runtime API.
//!
//! The double is four routes of a documented protocol. The AWS runtime
//! interface emulator is a binary from outside the registries these builds
//! reach; cargo-lambda's emulator (`cargo lambda watch --only-lambda-apis`)
//! speaks the same protocol for manual runs.

use crate::common;
use crate::events_replay;

use std::collections::{HashMap, VecDeque};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::BodyExt as _;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::Notify;

const MCP_BIN: &str = env!("CARGO_BIN_EXE_kobana-inbox-mcp");
const WORKER_BIN: &str = env!("CARGO_BIN_EXE_worker");
const SECRET: &str = "runtime-test-signing-secret-0123456789abcdef";

#[derive(Default)]
struct State {
    queue: VecDeque<(String, Vec<u8>)>,
    responses: HashMap<String, Value>,
    errors: HashMap<String, Value>,
    init_errors: Vec<(String, Value)>,
    served: u64,
    /// The function's polls for its next invocation: the first one ends INIT.
    nexts: u64,
}

/// The Runtime API double: invocations are queued by the test, handed to the
/// function on `next`, and its answers recorded.
#[derive(Clone)]
struct RuntimeApi {
    addr: std::net::SocketAddr,
    state: Arc<Mutex<State>>,
    changed: Arc<Notify>,
}

impl RuntimeApi {
    async fn start() -> RuntimeApi {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind the runtime API");
        let addr = listener.local_addr().expect("addr");
        let api = RuntimeApi { addr, state: Arc::default(), changed: Arc::new(Notify::new()) };
        let server = api.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                let api = server.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req| {
                        let api = api.clone();
                        async move { Ok::<_, std::convert::Infallible>(api.serve(req).await) }
                    });
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, service).await;
                });
            }
        });
        api
    }

    async fn serve(
        &self,
        req: http::Request<hyper::body::Incoming>,
    ) -> http::Response<http_body_util::Full<bytes::Bytes>> {
        let path = req.uri().path().to_owned();
        let body = req.into_body().collect().await.map(|b| b.to_bytes().to_vec()).unwrap_or_default();
        let json = || serde_json::from_slice::<Value>(&body).unwrap_or(Value::Null);
        let ok = |status: u16, body: Vec<u8>| {
            let mut response = http::Response::new(http_body_util::Full::new(bytes::Bytes::from(body)));
            *response.status_mut() = http::StatusCode::from_u16(status).expect("status");
            response
        };
        if path == "/2018-06-01/runtime/invocation/next" {
            self.state.lock().expect("state").nexts += 1;
            self.changed.notify_waiters();
            // Long poll, as Lambda does: the function waits here between invocations.
            loop {
                let notified = self.changed.notified();
                if let Some((id, event)) = self.state.lock().expect("state").queue.pop_front() {
                    let mut response = ok(200, event);
                    let headers = response.headers_mut();
                    let deadline = std::time::SystemTime::now() + Duration::from_secs(30);
                    let deadline = deadline.duration_since(std::time::UNIX_EPOCH).expect("time").as_millis();
                    headers.insert("lambda-runtime-aws-request-id", id.parse().expect("id"));
                    headers.insert("lambda-runtime-deadline-ms", deadline.to_string().parse().expect("deadline"));
                    headers.insert(
                        "lambda-runtime-invoked-function-arn",
                        "arn:aws:lambda:us-east-1:123456789012:function:inbox".parse().expect("arn"),
                    );
                    headers.insert(
                        "lambda-runtime-trace-id",
                        "Root=1-00000000-000000000000000000000000".parse().expect("trace"),
                    );
                    return response;
                }
                notified.await;
            }
        }
        let mut state = self.state.lock().expect("state");
        if path == "/2018-06-01/runtime/init/error" {
            state.init_errors.push((String::new(), json()));
        } else if let Some(rest) = path.strip_prefix("/2018-06-01/runtime/invocation/") {
            match rest.split_once('/') {
                Some((id, "response")) => {
                    state.responses.insert(id.to_owned(), json());
                }
                Some((id, "error")) => {
                    state.errors.insert(id.to_owned(), json());
                }
                _ => return ok(404, Vec::new()),
            }
        } else {
            return ok(404, Vec::new());
        }
        state.served += 1;
        drop(state);
        self.changed.notify_waiters();
        ok(202, b"{\"status\":\"OK\"}".to_vec())
    }

    /// Waits (bounded) for the function's first poll for an invocation: its INIT is over.
    async fn init_done(&self) {
        for _ in 0..600 {
            let notified = self.changed.notified();
            if self.state.lock().expect("state").nexts > 0 {
                return;
            }
            let _ = tokio::time::timeout(Duration::from_millis(100), notified).await;
        }
        panic!("the function never asked for an invocation");
    }

    /// Invokes the recorded event `name` (`events/`) and checks the answer against its recorded one.
    async fn answers_as_recorded(&self, h: &common::Harness, name: &str) {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("events");
        let event = std::fs::read_to_string(dir.join(format!("{name}.json"))).expect("event");
        let expected: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join(format!("{name}.expected.json"))).expect("expected"),
        )
        .expect("expected JSON");
        let answer = self.invoke(&events_replay::fill(&event, h)).await.unwrap_or_else(|e| panic!("{name}: {e}"));
        let problems = events_replay::compare(name, &expected, &answer);
        assert!(problems.is_empty(), "{name}:\n{}", problems.join("\n"));
    }

    /// Queues one invocation and waits (bounded) for its response or error.
    async fn invoke(&self, event: &str) -> Result<Value, Value> {
        let id = format!("req-{}", common::unique_table());
        self.state.lock().expect("state").queue.push_back((id.clone(), event.as_bytes().to_vec()));
        self.changed.notify_waiters();
        for _ in 0..600 {
            let notified = self.changed.notified();
            {
                let mut state = self.state.lock().expect("state");
                if let Some(response) = state.responses.remove(&id) {
                    return Ok(response);
                }
                if let Some(error) = state.errors.remove(&id) {
                    return Err(error);
                }
            }
            let _ = tokio::time::timeout(Duration::from_millis(100), notified).await;
        }
        panic!("no answer to invocation {id}");
    }
}

/// A binary started as Lambda starts it, against `api`.
struct Function(Child);

impl Function {
    fn start(bin: &str, api: &RuntimeApi, env: &[(&str, String)]) -> Function {
        let mut command = Command::new(bin);
        command
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("AWS_LAMBDA_RUNTIME_API", api.addr.to_string())
            .env("AWS_LAMBDA_FUNCTION_NAME", "inbox")
            .env("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST")
            .env("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "512")
            .env("AWS_LAMBDA_LOG_GROUP_NAME", "/aws/lambda/inbox")
            .env("AWS_LAMBDA_LOG_STREAM_NAME", "test")
            .env("AWS_REGION", "us-east-1")
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        for (name, value) in env {
            command.env(name, value);
        }
        Function(command.spawn().expect("start the function"))
    }

    /// Waits (bounded) for the process to end; its exit status. (Async: the
    /// Runtime API double runs on this test's runtime and must keep serving.)
    async fn exit(&mut self) -> std::process::ExitStatus {
        for _ in 0..200 {
            if let Some(status) = self.0.try_wait().expect("wait") {
                return status;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the function did not exit");
    }
}

impl Drop for Function {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A harness with the recorded events' public names and the function's
/// signing secret (records it seals open in the function too).
fn harness() -> common::Harness {
    common::Harness::with_config(|c| {
        c.mcp_resource = events_replay::RESOURCE.into();
        c.auth.api_audience = events_replay::API_AUDIENCE.into();
        c.rate_limit_per_minute = events_replay::RATE_LIMIT;
        c.ingest_rate_limit_per_minute = events_replay::INGEST_RATE_LIMIT;
        c.signing_secrets = vec![SECRET.into()];
    })
}

/// The environment of a deployed function, on the harness's table and issuer.
async fn deployed(h: &common::Harness) -> Vec<(&'static str, String)> {
    h.app().await;
    vec![
        ("MCP_RESOURCE", events_replay::RESOURCE.to_owned()),
        ("API_AUDIENCE", events_replay::API_AUDIENCE.to_owned()),
        ("RATE_LIMIT_PER_MINUTE", events_replay::RATE_LIMIT.to_string()),
        ("INGEST_RATE_LIMIT_PER_MINUTE", events_replay::INGEST_RATE_LIMIT.to_string()),
        ("OAUTH_ISSUER", common::ISSUER.to_owned()),
        ("JWKS_URL", h.jwks().await.url.clone()),
        ("SIGNING_SECRET", SECRET.to_owned()),
        ("TABLE_NAME", h.table.clone()),
        ("DYNAMODB_ENDPOINT", common::dynamodb_endpoint()),
        ("METRICS", "0".to_owned()),
    ]
}

#[tokio::test]
async fn the_mcp_function_answers_recorded_events_through_the_runtime_api() {
    let h = harness();
    let api = RuntimeApi::start().await;
    let _function = Function::start(MCP_BIN, &api, &deployed(&h).await);
    for name in [
        "mcp-2026-server-discover",
        "mcp-2026-tools-call-read",
        "mcp-2025-06-18-initialize",
        "mcp-2025-06-18-tools-list",
        "rest-get-email",
        "rest-v1-list-inboxes-stage",
        "auth-no-token",
        "mcp-2026-tasks-get",
    ] {
        api.answers_as_recorded(&h, name).await;
    }
}

/// INIT opens the table's connections the first request needs at once (a
/// read each of a key nothing writes, the container's own), so that
/// request's reads open none: a cold start's handshakes are paid while INIT
/// waits for the issuer's keys, not while the first caller waits.
#[tokio::test]
async fn init_opens_the_connections_the_first_request_reads_through() {
    let h = harness();
    let api = RuntimeApi::start().await;
    let operations = Arc::new(Mutex::new(Vec::<(String, Value)>::new()));
    let seen = Arc::clone(&operations);
    let proxy = common::proxy::Interposer::start(Arc::new(move |operation: &str, body: &Value| {
        seen.lock().expect("operations").push((operation.to_owned(), body.clone()));
        common::proxy::Rule::Forward
    }))
    .await;
    let env: Vec<(&str, String)> = deployed(&h)
        .await
        .into_iter()
        .map(|(name, value)| if name == "DYNAMODB_ENDPOINT" { (name, proxy.endpoint.clone()) } else { (name, value) })
        .collect();
    let _function = Function::start(MCP_BIN, &api, &env);
    api.init_done().await;

    // Three: the organization's and the person's reads, and the rate
    // counter's update beside them (the deployed function counts reads).
    const { assert!(events_replay::RATE_LIMIT > 0) };
    let primed = operations.lock().expect("operations").clone();
    let opened = proxy.connections.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(primed.len(), 3, "{primed:?}");
    assert_eq!(opened, 3, "INIT opened {opened} connections");
    let key = |body: &Value, name: &str| body["Key"][name]["S"].as_str().unwrap_or_default().to_owned();
    let first = key(&primed[0].1, "pk");
    assert!(first.starts_with("PRIME#") && first.len() > "PRIME#".len(), "{first}");
    for (operation, body) in &primed {
        assert_eq!(operation, "GetItem");
        assert_eq!((key(body, "pk"), key(body, "sk")), (first.clone(), first.clone()));
        assert_eq!(body["TableName"], h.table);
    }

    // The first request (cold membership cache: organization and
    // memberships side by side, then the e-mail) reads through them.
    api.answers_as_recorded(&h, "mcp-2026-tools-call-read").await;
    let read = operations.lock().expect("operations").len() - primed.len();
    assert!(read >= 3, "the first request made {read} calls");
    assert_eq!(proxy.connections.load(std::sync::atomic::Ordering::SeqCst), 3, "the first request opened a connection");

    // A second container reads a key of its own.
    let api2 = RuntimeApi::start().await;
    let _second = Function::start(MCP_BIN, &api2, &env);
    api2.init_done().await;
    let all = operations.lock().expect("operations").clone();
    let second = all
        .iter()
        .skip(primed.len() + read)
        .find(|(op, body)| op == "GetItem" && key(body, "pk").starts_with("PRIME#"));
    let second = second.map(|(_, body)| key(body, "pk")).expect("the second container primed");
    assert_ne!(second, first);
}

#[tokio::test]
async fn an_init_failure_is_reported_to_the_runtime_api_with_a_readable_message() {
    let h = harness();
    let api = RuntimeApi::start().await;
    let env: Vec<(&str, String)> =
        deployed(&h).await.into_iter().filter(|(name, _)| *name != "SIGNING_SECRET").collect();
    for bin in [MCP_BIN, WORKER_BIN] {
        let mut function = Function::start(bin, &api, &env);
        assert!(!function.exit().await.success(), "{bin} must not run without its signing secret");
    }
    let errors = api.state.lock().unwrap().init_errors.clone();
    assert_eq!(errors.len(), 2, "{errors:?}");
    for (_, error) in errors {
        assert_eq!(error["errorType"], "Runtime.ConfigurationError", "{error}");
        let message = error["errorMessage"].as_str().unwrap_or_default();
        assert!(message.contains("SIGNING_SECRET") && message.contains("required on Lambda"), "{message}");
    }
    assert_eq!(api.state.lock().unwrap().responses.len(), 0, "nothing was served");
}

/// A recorded stream batch with its job ids and sequence numbers replaced.
fn batch(name: &str, jobs: &[(&str, &str)]) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("events").join(format!("{name}.json"));
    let mut text = std::fs::read_to_string(path).expect("recorded batch");
    for (placeholder, id) in jobs {
        text = text.replace(placeholder, id);
    }
    text
}

fn ws_main() -> inbox::domain::Tenant {
    crate::jobs_and_webhooks::ws_main()
}

#[tokio::test]
async fn the_worker_runs_stream_batches_and_names_exactly_the_record_to_redeliver() {
    let h = harness();
    let app = h.app().await;
    let api = RuntimeApi::start().await;
    let jwks = h.jwks().await;
    let keys_fetched = jwks.hits();
    let _worker = Function::start(WORKER_BIN, &api, &deployed(&h).await);
    let new_job = |subject: &str| inbox::api::jobs::new_job(inbox::domain::records::JobKind::EmailReprocess, subject);

    // A new job: it runs, and the batch asks for nothing again.
    let job = new_job("eml_energy_nov");
    app.store.put_job(&ws_main(), &job).await.unwrap();
    let answer = api.invoke(&batch("worker-new-job", &[("{{JOB}}", &job.id)])).await.expect("worker answer");
    assert_eq!(answer, json!({"batchItemFailures": []}));
    let stored = app.store.get_job(&ws_main(), &job.id).await.unwrap().unwrap();
    assert_eq!(stored.status, inbox::domain::records::JobStatus::Succeeded);
    let email = app.store.get_email(&ws_main(), "eml_energy_nov").await.unwrap().unwrap();
    assert_eq!(email.status, inbox::domain::records::EmailStatus::Processed);

    // The same record delivered again: nothing runs twice, nothing to redeliver.
    let answer = api.invoke(&batch("worker-new-job", &[("{{JOB}}", &job.id)])).await.expect("worker answer");
    assert_eq!(answer, json!({"batchItemFailures": []}));
    let again = app.store.get_job(&ws_main(), &job.id).await.unwrap().unwrap();
    assert_eq!((again.attempts, again.updated_at), (stored.attempts, stored.updated_at), "not run again");

    // A batch whose second record is leased by a live runner elsewhere:
    // exactly that record is named for redelivery; the others ran.
    let (first, busy, third) = (new_job("eml_telecom_nov"), new_job("eml_rent_dec"), new_job("eml_receipt_1"));
    for job in [&first, &busy, &third] {
        app.store.put_job(&ws_main(), job).await.unwrap();
    }
    assert!(app.store.lease_job(&ws_main(), &busy.id, 600).await.unwrap().is_some());
    let text =
        batch("worker-partial-failure", &[("{{JOB_1}}", &first.id), ("{{JOB_2}}", &busy.id), ("{{JOB_3}}", &third.id)]);
    let answer = api.invoke(&text).await.expect("worker answer");
    assert_eq!(answer, json!({"batchItemFailures": [{"itemIdentifier": "5000000000000000000002"}]}));
    for (job, status) in [(&first, "succeeded"), (&busy, "running"), (&third, "succeeded")] {
        let stored = app.store.get_job(&ws_main(), &job.id).await.unwrap().unwrap();
        assert_eq!(stored.status.as_str(), status, "{}", job.id);
    }
    // The worker checks no token: its INIT and its batches never asked the issuer for keys.
    assert_eq!(jwks.hits(), keys_fetched, "the worker fetched the issuer's keys");
}

#[tokio::test]
async fn the_worker_runs_the_daily_retention_purge_on_its_schedule() {
    let h = harness();
    let app = h.app().await;
    let api = RuntimeApi::start().await;
    let _worker = Function::start(WORKER_BIN, &api, &deployed(&h).await);
    // ws_main keeps three days: its demo e-mails (from November) are past it.
    app.store.set_retention(&ws_main(), 3, None).await.unwrap();
    let answer = api.invoke(&batch("worker-retention-schedule", &[])).await.expect("worker answer");
    // Every live demo e-mail of ws_main but the one being processed; the other workspaces keep a year.
    assert_eq!(answer["swept"]["purged"], 5, "{answer}");
    assert_eq!(answer["swept"]["workspaces"], 3, "{answer}");
    let email = app.store.get_email(&ws_main(), "eml_telecom_nov").await.unwrap().unwrap();
    assert_eq!((email.subject.as_str(), email.text.as_str()), ("", ""));
    assert!(email.content_purged_at.is_some() && email.extracted.is_some(), "content gone, the bill kept");
    let again = api.invoke(&batch("worker-retention-schedule", &[])).await.expect("worker answer");
    assert_eq!(again["swept"]["purged"], 0, "{again}");
}

async fn secrets_manager() -> aws_sdk_secretsmanager::Client {
    let config = aws_config::defaults(aws_config::BehaviorVersion::latest())
        .region(aws_config::Region::new("us-east-1"))
        .endpoint_url(common::dynamodb_endpoint())
        .credentials_provider(aws_sdk_secretsmanager::config::Credentials::new("local", "local", None, None, "local"))
        .load()
        .await;
    aws_sdk_secretsmanager::Client::new(&config)
}

/// `GET /api/v1/emails?limit=1[&cursor=…]` as API Gateway sends it.
fn list_emails_event(h: &common::Harness, cursor: Option<&str>) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("events/rest-list-emails.json");
    let mut event: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("event")).expect("JSON");
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    query.append_pair("limit", "1");
    let mut parameters = json!({"limit": "1"});
    if let Some(cursor) = cursor {
        query.append_pair("cursor", cursor);
        parameters["cursor"] = json!(cursor);
    }
    event["rawQueryString"] = json!(query.finish());
    event["queryStringParameters"] = parameters;
    events_replay::fill(&event.to_string(), h)
}

#[tokio::test]
async fn the_signing_secret_comes_from_secrets_manager_and_survives_a_rotation() {
    let h = harness();
    h.app().await;
    // The harness (like containers started before the rotation) seals with SECRET.
    let first = Box::pin(h.api("GET", "/emails?limit=1").token(&api_token(&h)).send()).await.json();
    let old_cursor = first["meta"]["next_cursor"].as_str().expect("a next page").to_owned();

    let sm = secrets_manager().await;
    let created = sm.create_secret().name(common::unique_table()).secret_string(SECRET).send().await.unwrap();
    let arn = created.arn().expect("arn").to_owned();
    let rotated = "rotated-signing-secret-9876543210-abcdefghij";
    sm.put_secret_value().secret_id(&arn).secret_string(rotated).send().await.unwrap();

    let mut env: Vec<(&str, String)> =
        deployed(&h).await.into_iter().filter(|(name, _)| *name != "SIGNING_SECRET").collect();
    env.push(("SIGNING_SECRET_ARN", arn.clone()));
    env.push(("SECRETS_MANAGER_ENDPOINT", common::dynamodb_endpoint()));
    let api = RuntimeApi::start().await;
    let _function = Function::start(MCP_BIN, &api, &env);

    // The previous version still verifies: the old cursor opens.
    let answer = api.invoke(&list_emails_event(&h, Some(&old_cursor))).await.expect("answer");
    assert_eq!(answer["statusCode"], 200, "{answer}");
    // The current version signs: the function's cursor is not the old secret's.
    let answer = api.invoke(&list_emails_event(&h, None)).await.expect("answer");
    let body: Value = serde_json::from_str(answer["body"].as_str().unwrap()).unwrap();
    let new_cursor = body["meta"]["next_cursor"].as_str().expect("a next page").to_owned();
    let path = format!("/emails?limit=1&cursor={}", urlencode(&new_cursor));
    let resp = Box::pin(h.api("GET", &path).token(&api_token(&h)).send()).await;
    assert_eq!((resp.status, resp.json()["error"]["code"].as_str()), (400, Some("invalid_cursor")));

    // A secret that cannot be read is an init error that says which.
    let api = RuntimeApi::start().await;
    let mut env = env.clone();
    env.retain(|(name, _)| *name != "SIGNING_SECRET_ARN");
    env.push(("SIGNING_SECRET_ARN", format!("{arn}-gone")));
    let mut function = Function::start(MCP_BIN, &api, &env);
    assert!(!function.exit().await.success());
    let errors = api.state.lock().unwrap().init_errors.clone();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].1["errorType"], "Runtime.InitError");
    assert!(errors[0].1["errorMessage"].as_str().unwrap().contains("cannot read the signing secret"), "{errors:?}");
}

/// The demo admin's token for the recorded events' REST audience.
fn api_token(h: &common::Harness) -> String {
    let now = jsonwebtoken::get_current_timestamp();
    h.sign(&json!({"iss": common::ISSUER, "sub": "usr_admin", "org_id": "org_demo", "aud": events_replay::API_AUDIENCE,
        "scope": common::ADMIN_SCOPES, "iat": now, "exp": now + 600}))
}

fn urlencode(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}
