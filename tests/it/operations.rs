//! Running it like a service (issue 14): the real binary, started as
//! `make run` starts it, writes one Embedded Metric Format line per request;
//! the server's own origin needs no configuration.

use crate::common;

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_kobana-inbox-mcp");

/// A free loopback port (bound, then released for the child to take).
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

/// The binary in local mode, as `make run` starts it: own table (created and
/// seeded), own development issuer, stdout read line by line.
struct Served {
    child: Child,
    lines: mpsc::Receiver<String>,
    /// The server's log lines (stderr).
    logs: mpsc::Receiver<String>,
    port: u16,
    token: String,
}

impl Served {
    fn start() -> Served {
        Served::start_with(&[])
    }

    /// `start`, with these variables set for `serve` as well.
    fn start_with(env: &[(&str, &str)]) -> Served {
        let (port, issuer_port) = (free_port(), free_port());
        let key = std::env::temp_dir().join(format!("{}.key", common::unique_table()));
        let table = common::unique_table();
        let command = |args: &[&str]| binary(args, port, issuer_port, &key, &table);
        for step in [["create-table"], ["seed"]] {
            let out = command(&step).output().expect("run the binary");
            assert!(out.status.success(), "{step:?}: {}", String::from_utf8_lossy(&out.stderr));
        }
        let out = command(&["dev-token"]).output().expect("dev-token");
        let token = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        assert!(out.status.success() && !token.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
        let mut child = command(&["serve"])
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the server");
        let lines = read_lines(child.stdout.take().expect("piped stdout"));
        let logs = read_lines(child.stderr.take().expect("piped stderr"));
        Served { child, lines, logs, port, token }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// A request as the demo admin on `ws_main`.
    fn request(&self, client: &reqwest::Client, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.request_as(client, &self.token, method, path)
    }

    /// `request`, with `token` as the bearer.
    fn request_as(
        &self,
        client: &reqwest::Client,
        token: &str,
        method: reqwest::Method,
        path: &str,
    ) -> reqwest::RequestBuilder {
        client.request(method, self.url(path)).bearer_auth(token).header("x-workspace-id", "ws_main")
    }

    /// A 2026-07-28 request to `/mcp` with its routing headers.
    fn mcp(&self, client: &reqwest::Client, body: &Value) -> reqwest::RequestBuilder {
        self.mcp_as(client, &self.token, body)
    }

    /// `mcp`, with `token` as the bearer.
    fn mcp_as(&self, client: &reqwest::Client, token: &str, body: &Value) -> reqwest::RequestBuilder {
        let method = body["method"].as_str().unwrap_or_default();
        let mut req = self
            .request_as(client, token, reqwest::Method::POST, "/mcp")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", common::STATELESS)
            .header("mcp-method", method);
        if let Some(name) = body.pointer("/params/name").and_then(Value::as_str) {
            req = req.header("mcp-name", name);
        }
        req.body(body.to_string())
    }

    /// Waits for /health (bounded).
    async fn ready(&self, client: &reqwest::Client) {
        for _ in 0..100 {
            if client.get(self.url("/health")).send().await.is_ok_and(|r| r.status() == 200) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the server did not answer /health");
    }

    /// The next stdout line that is an EMF record (bounded wait).
    fn next_metric(&self) -> Value {
        loop {
            let line = self.lines.recv_timeout(Duration::from_secs(20)).expect("a metric line within 20 s");
            if let Ok(value) = serde_json::from_str::<Value>(&line)
                && value.get("_aws").is_some()
            {
                return value;
            }
        }
    }
}

/// The binary in local mode, as `make run` runs it, on its own ports, issuer
/// key and table.
fn binary(args: &[&str], port: u16, issuer_port: u16, key: &std::path::Path, table: &str) -> Command {
    let mut command = Command::new(BIN);
    command
        .args(args)
        .env("PORT", port.to_string())
        .env("DEV_ISSUER_KEY", key)
        .env("DEV_ISSUER_PORT", issuer_port.to_string())
        .env("TABLE_NAME", table)
        .env("DYNAMODB_ENDPOINT", common::dynamodb_endpoint())
        .env("RUST_LOG", "warn")
        .env_remove("MCP_RESOURCE")
        .env_remove("API_AUDIENCE")
        .env_remove("OAUTH_ISSUER")
        .env_remove("JWKS_URL")
        // Locally, metric lines are printed only when asked.
        .env("METRICS", "1")
        .env_remove("AWS_LAMBDA_RUNTIME_API");
    command
}

/// The lines of a child's output as they come (read on a thread of their
/// own, so the child never waits on a full pipe).
fn read_lines(output: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(output).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    lines
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[track_caller]
fn assert_emf(line: &Value, dimensions: &Value, metrics: &[&str]) {
    let spec = &line["_aws"]["CloudWatchMetrics"][0];
    assert_eq!(spec["Namespace"], "KobanaInbox", "{line}");
    assert!(line["_aws"]["Timestamp"].as_u64().is_some_and(|t| t > 1_700_000_000_000), "{line}");
    assert_eq!(&spec["Dimensions"], dimensions, "{line}");
    let names: Vec<&str> = spec["Metrics"].as_array().unwrap().iter().map(|m| m["Name"].as_str().unwrap()).collect();
    assert_eq!(names, metrics, "{line}");
    for name in metrics {
        assert!(line[*name].is_number(), "{name} has a value: {line}");
    }
    for set in dimensions.as_array().unwrap() {
        for dimension in set.as_array().unwrap() {
            assert!(line[dimension.as_str().unwrap()].is_string(), "dimension {dimension} has a value: {line}");
        }
    }
}

#[tokio::test]
async fn a_request_to_the_running_server_writes_one_metric_line() {
    let served = Served::start();
    let client = reqwest::Client::new();
    served.ready(&client).await;
    // /health is measured too: drain what came before the request.
    while served.lines.recv_timeout(Duration::from_millis(300)).is_ok() {}

    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "emails_get", "arguments": {"id": "eml_telecom_nov"}, "_meta": common::envelope()}});
    let resp = served.mcp(&client, &body).send().await.unwrap();
    assert_eq!(resp.status(), 200);

    let line = served.next_metric();
    let dims = json!([["Surface", "StatusClass"], ["Surface", "Operation"]]);
    assert_emf(&line, &dims, &["Requests", "Latency", "DynamoDbCalls", "RateLimited", "Unavailable"]);
    assert_eq!(
        (&line["Surface"], &line["Operation"], &line["StatusClass"]),
        (&json!("mcp"), &json!("emails_get"), &json!("2xx"))
    );
    assert_eq!((line["Requests"].as_f64(), line["RateLimited"].as_f64()), (Some(1.0), Some(0.0)), "{line}");
    assert!(line["DynamoDbCalls"].as_f64().is_some_and(|n| n >= 1.0), "the e-mail was read: {line}");
    assert!(line["RequestId"].is_string(), "{line}");
    assert!(!line.to_string().contains(&served.token), "no token in a metric line");
    assert!(served.lines.recv_timeout(Duration::from_millis(300)).is_err(), "one line per request");

    // A REST call is labelled by its operation; a method a client invents is not a dimension.
    let resp = served.request(&client, reqwest::Method::GET, "/api/v1/inboxes").send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let line = served.next_metric();
    assert_eq!((&line["Surface"], &line["Operation"]), (&json!("rest"), &json!("inboxes_list")), "{line}");
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "x/made-up-7f3a", "params": {"_meta": common::envelope()}});
    let resp = served.mcp(&client, &body).send().await.unwrap();
    assert_eq!(resp.status(), 404);
    let line = served.next_metric();
    assert_eq!((&line["Operation"], &line["StatusClass"]), (&json!("unknown"), &json!("4xx")), "{line}");

    // A long operation: the request, then the job (run by the in-process
    // poller) and its webhook delivery each write their line.
    let path = "/api/v1/emails/eml_energy_nov/reprocess";
    let resp = served.request(&client, reqwest::Method::POST, path).send().await.unwrap();
    assert_eq!(resp.status(), 202, "{:?}", resp.text().await);
    let (mut job, mut delivery) = (None, None);
    while job.is_none() || delivery.is_none() {
        let line = served.next_metric();
        if line.get("Jobs").is_some() {
            job = Some(line);
        } else if line.get("Deliveries").is_some() {
            delivery = Some(line);
        }
    }
    let job = job.unwrap();
    assert_emf(&job, &json!([["JobKind", "Outcome"]]), &["Jobs", "JobAttempts", "JobDuration"]);
    assert_eq!((&job["JobKind"], &job["Outcome"]), (&json!("email.reprocess"), &json!("succeeded")), "{job}");
    let delivery = delivery.unwrap();
    assert_emf(&delivery, &json!([["Outcome"], ["EventType", "Outcome"]]), &["Deliveries", "DeliveryLatency"]);
    assert_eq!(delivery["EventType"], "email.processed", "{delivery}");
}

/// Every JSON log line a request writes names it under `span` (its id and
/// HTTP method, `name: "request"`), the line it writes inside (a refused
/// token) as well as its `answered` line, and the id is the one its metric
/// line carries.
#[tokio::test]
async fn the_log_lines_of_a_request_name_it() {
    let served = Served::start_with(&[("LOG_FORMAT", "json"), ("RUST_LOG", "info")]);
    let client = reqwest::Client::new();
    served.ready(&client).await;
    while served.lines.recv_timeout(Duration::from_millis(300)).is_ok() {}
    while served.logs.recv_timeout(Duration::from_millis(300)).is_ok() {}

    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "emails_get", "arguments": {"id": "eml_telecom_nov"}, "_meta": common::envelope()}});
    let resp = served.mcp(&client, &body).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let metric = served.next_metric();
    let lines = answered(&served.logs);
    let line = lines.last().unwrap();
    let request_id = line.pointer("/span/request_id").and_then(Value::as_str).unwrap_or_default().to_owned();
    assert!(!request_id.is_empty(), "{line}");
    assert_eq!(line["span"], json!({"request_id": request_id, "http_method": "POST", "name": "request"}), "{line}");
    assert_eq!(
        (&line["status"], &line["operation"], &line["level"]),
        (&json!(200), &json!("emails_get"), &json!("INFO"))
    );
    assert_eq!(metric["RequestId"], json!(request_id), "the metric line names the same request");

    // A refused token: the line written inside the request names it too, and
    // the next request is another.
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": common::envelope()}});
    let resp = served.mcp_as(&client, "not-a-token", &body).send().await.unwrap();
    assert_eq!(resp.status(), 401);
    let lines = answered(&served.logs);
    let rejected = lines.iter().find(|l| l["message"] == "token rejected").expect("a token rejected line");
    let last = lines.last().unwrap();
    assert_eq!(rejected["span"], last["span"], "{rejected}");
    assert_eq!(last["status"], 401);
    assert!(last["span"]["request_id"].as_str().is_some_and(|id| !id.is_empty() && id != request_id), "{last}");
    assert!(!lines.iter().any(|l| l.to_string().contains(&served.token)), "no token in a log line");
}

/// The JSON log lines of the next request, through its `answered` line (bounded wait).
fn answered(logs: &mpsc::Receiver<String>) -> Vec<Value> {
    let mut lines = Vec::new();
    loop {
        let line = logs.recv_timeout(Duration::from_secs(20)).expect("the request's answered line within 20 s");
        let value: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
        let done = value["message"] == "answered";
        lines.push(value);
        if done {
            return lines;
        }
    }
}

/// The rate-limit counter's call is the request's, though a task of its own
/// makes it (a read does not wait for it): a read's `answered` line counts
/// it in `dynamodb_calls` (and so does its metric line), and with no rate
/// limit the same read makes one call fewer.
#[tokio::test]
async fn a_reads_dynamodb_calls_include_its_rate_limit_counter() {
    for (limit, calls) in [("120", 2), ("0", 1)] {
        let served =
            Served::start_with(&[("LOG_FORMAT", "json"), ("RUST_LOG", "info"), ("RATE_LIMIT_PER_MINUTE", limit)]);
        let client = reqwest::Client::new();
        served.ready(&client).await;
        while served.logs.recv_timeout(Duration::from_millis(300)).is_ok() {}
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "emails_get", "arguments": {"id": "eml_telecom_nov"}, "_meta": common::envelope()}});
        // The first read also resolves the organization and the membership
        // (cached after it); the second reads the e-mail alone.
        for _ in 0..2 {
            let resp = served.mcp(&client, &body).send().await.unwrap();
            assert_eq!(resp.status(), 200);
        }
        let _first = answered(&served.logs);
        let second = answered(&served.logs);
        let line = second.last().unwrap();
        assert_eq!(line["operation"], "emails_get", "{line}");
        assert_eq!(line["dynamodb_calls"], json!(calls), "RATE_LIMIT_PER_MINUTE={limit}: {line}");
    }
}

#[test]
fn job_and_delivery_metric_lines_have_their_own_dimensions() {
    let line = inbox::telemetry::Emf {
        dimensions: &[&["JobKind", "Outcome"]],
        metrics: &[("Jobs", "Count", 1.0), ("JobDuration", "Milliseconds", 12.5)],
        properties: &[
            ("JobKind", json!("webhook.test")),
            ("Outcome", json!("succeeded")),
            ("Workspace", json!("ws_main")),
        ],
    }
    .to_json(1_800_000_000_000);
    assert_emf(&line, &json!([["JobKind", "Outcome"]]), &["Jobs", "JobDuration"]);
    assert_eq!(line["Workspace"], "ws_main", "tenant ids are properties, not dimensions");
}

/// `LOCAL_JOB_POLL_MS=0`, as `make bench` runs the server: no local job
/// runner, so an enqueued job stays queued (with the default, the test above
/// sees the runner finish one); a value that is not milliseconds stops the
/// server at start, naming the variable.
#[tokio::test]
async fn with_local_job_polling_off_an_enqueued_job_stays_queued() {
    let served = Served::start_with(&[("LOCAL_JOB_POLL_MS", "0")]);
    let client = reqwest::Client::new();
    served.ready(&client).await;
    let path = "/api/v1/emails/eml_energy_nov/reprocess";
    let resp = served.request(&client, reqwest::Method::POST, path).send().await.unwrap();
    assert_eq!(resp.status(), 202);
    let job: Value = resp.json().await.unwrap();
    let id = job["data"]["job"]["id"].as_str().unwrap_or_else(|| panic!("a job: {job}")).to_owned();
    // Three of the default runner's rounds.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let resp = served.request(&client, reqwest::Method::GET, &format!("/api/v1/jobs/{id}")).send().await.unwrap();
    let job: Value = resp.json().await.unwrap();
    assert_eq!(job["data"]["status"], "queued", "{job}");

    let key = std::env::temp_dir().join(format!("{}.key", common::unique_table()));
    let out = binary(&["serve"], free_port(), free_port(), &key, &common::unique_table())
        .env("LOCAL_JOB_POLL_MS", "soon")
        .output()
        .expect("run the binary");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("LOCAL_JOB_POLL_MS=soon: milliseconds"), "{stderr}");
}

/// `create-table` needs the table's settings only, as `admin` does: no issuer,
/// audience or signing secret, so an operator can make a table before any
/// identity provider exists.
#[tokio::test]
async fn create_table_needs_only_the_tables_settings() {
    let table = common::unique_table();
    let run = || {
        Command::new(BIN)
            .arg("create-table")
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("TABLE_NAME", &table)
            .env("DYNAMODB_ENDPOINT", common::dynamodb_endpoint())
            .output()
            .unwrap()
    };
    let first = run();
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    assert_eq!(String::from_utf8_lossy(&first.stdout).trim(), "created");
    let again = run();
    assert_eq!(String::from_utf8_lossy(&again.stdout).trim(), "exists", "{again:?}");
    assert!(common::table_dump_sorted(&table).await.is_empty(), "an empty table: nothing seeded");
}

/// `make run`'s snapshot of the local table: private on disk, and only of and
/// into a table on this machine, an empty one for a restore.
#[tokio::test]
async fn a_snapshot_is_private_and_goes_only_into_an_empty_local_table() {
    use std::os::unix::fs::PermissionsExt as _;
    let key = std::env::temp_dir().join(format!("{}.key", common::unique_table()));
    let (table, empty) = (common::unique_table(), common::unique_table());
    let dir = std::env::temp_dir().join(format!("{}-data", common::unique_table()));
    let file = dir.join("table.jsonl");
    let path = file.to_str().unwrap();
    let run = |table: &str, args: &[&str]| binary(args, free_port(), free_port(), &key, table).output().unwrap();
    for (table, step) in [(&table, "create-table"), (&table, "seed"), (&empty, "create-table")] {
        let out = run(table, &[step]);
        assert!(out.status.success(), "{step}: {}", String::from_utf8_lossy(&out.stderr));
    }
    assert!(run(&table, &["snapshot", "save", path]).status.success());
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!((mode(&file), mode(&dir)), (0o600, 0o700), "the file and the directory it made are the owner's");

    let before = common::table_dump_sorted(&table).await;
    let out = run(&table, &["snapshot", "restore", path]);
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("is not empty"), "{out:?}");
    assert_eq!(common::table_dump_sorted(&table).await, before, "a table with items is not restored into");
    for elsewhere in ["http://10.0.0.1:8000", "https://dynamodb.us-east-1.amazonaws.com"] {
        let out = binary(&["snapshot", "restore", path], free_port(), free_port(), &key, &empty)
            .env("DYNAMODB_ENDPOINT", elsewhere)
            .output()
            .unwrap();
        assert!(String::from_utf8_lossy(&out.stderr).contains("only a local table"), "{elsewhere}: {out:?}");
    }
    assert!(common::table_dump_sorted(&empty).await.is_empty());
    let out = run(&empty, &["snapshot", "restore", path]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(common::table_dump_sorted(&empty).await, before, "restored as saved");
    std::fs::remove_dir_all(&dir).unwrap();
}
