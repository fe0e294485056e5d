"""Side-by-side measurements of the release server against its peers.

Peers: the ceiling (examples/ceiling.rs, a bare hyper server answering a
fixed JSON body), an rmcp server (bench/rmcp-peer: the official Rust MCP
SDK, Streamable HTTP, stateless, JSON responses, 21 tools, static bearer) and
the bare-SDK peer (examples/sdk_peer.rs: axum, the same static bearer, one
DynamoDB `GetItem` per request through the same SDK with its defaults), the
anchor of every row that reads the database. Optionally the server as it
was at an earlier commit (BENCH_BASELINE, built by scripts/bench.sh), for
before/after figures from the same run. Last, the mail benchmark: the
bill corpus (tests/bills) parsed, its PDFs' text read and searched for
boletos and Pix codes by examples/mail_bench.rs beside a Python peer doing
the same (scripts/bench_mail_peer.py), and the peak memory of reading a
10 MiB message (see the section "The mail benchmark" below).

Started by scripts/bench.sh (release binaries built, local DynamoDB up).
Everything listens on 127.0.0.1; every load run is bounded in time
(BENCH_SECONDS, default 5 s per wrk run; about 18 runs per repetition).
Only the processes this script starts are stopped, through their Popen
handles. Ports are free ones the kernel picks. Writes
.local/bench/results.md, or bench/results.md (the committed figures) with
BENCH_UPDATE=1.

Per row: req/s, p50, p99 and non-2xx from wrk, ratios to the ceiling at the
same concurrency, and the server's CPU time per request: the CPU time of all
the server's threads (/proc/<pid>/task/*/schedstat, nanoseconds; the
process's clock ticks, which keep the time of threads that ended, when a
thread ended during the run) read right before and right after the wrk run,
less what the process spends with no request in flight over the same time
(`background`: a poller, timers), over the requests wrk completed; and the
process's minor page faults per request over the same run. With
several repetitions a row gives the mean of its runs and the range of its
CPU per request. The peers run throughout; this server (and the baseline)
run one at a time, each started afresh per repetition, each logging to a
file of its own.

Environment:
  BENCH_SECONDS=N    seconds per wrk run (default 5).
  BENCH_REPS=N       repetitions of every load run (default 2).
  BENCH_ONLY=peers   measure only the ceiling and the rmcp peer (no server
                     build, no DynamoDB needed); prints the tables and
                     writes no file.
  BENCH_ONLY=mail    measure only the mail benchmark (no server, no
                     DynamoDB, no wrk); its section replaces the last one
                     of the results file, the rest kept.
  BENCH_MAIL_SECONDS=N  seconds per run of the bill messages (default 3).
  BENCH_MAIL_TIMEOUT=N  seconds after which a measuring process is stopped
                     (default 60; the peer's PDF library on hostile files).
  BENCH_MAIL_PYTHON=path  the peer's interpreter, with pypdf (scripts/bench.sh
                     makes its environment: .local/tools-bench).
  BENCH_UPDATE=1     write bench/results.md (the committed figures) instead
                     of .local/bench/results.md.
  BENCH_BASELINE_BIN=path, BENCH_BASELINE_REV=rev
                     the server built at an earlier commit (scripts/bench.sh
                     sets both from BENCH_BASELINE=<rev>).
  RMCP_PEER=path     the rmcp peer binary (default
                     $CARGO_TARGET_DIR/rmcp-peer/release/rmcp-peer).
"""
import glob
import json
import os
import re
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
SERVER = os.path.join(TARGET, "release/kobana-inbox-mcp")
CEILING = os.path.join(TARGET, "release/examples/ceiling")
SDK_PEER = os.path.join(TARGET, "release/examples/sdk_peer")
RMCP = os.environ.get("RMCP_PEER", os.path.join(TARGET, "rmcp-peer/release/rmcp-peer"))
BASELINE = os.environ.get("BENCH_BASELINE_BIN") or None
BASELINE_REV = os.environ.get("BENCH_BASELINE_REV", "baseline")


# Cores: every measured server on core 0, the local database and wrk on
# core 1 (when there are two): a server's CPU figures do not move with
# what the database or the load generator do, and a server gets one core, as
# a Lambda function of up to 1,769 MB gets one vCPU at most.
PIN = (os.cpu_count() or 1) >= 2 and os.environ.get("BENCH_PIN", "1") != "0"
SERVER_CPUS, OTHER_CPUS = ({0}, {1}) if PIN else (None, None)


def pinned(cpus):
    """A Popen preexec_fn that keeps the child (and its threads) on `cpus`."""
    return (lambda: os.sched_setaffinity(0, cpus)) if cpus else None


def pin_database():
    """Moves the local database (scripts/db.sh's moto) to OTHER_CPUS; the
    threads it starts per connection inherit it."""
    if not PIN:
        return
    port = os.environ.get("DYNAMODB_ENDPOINT", "").rsplit(":", 1)[-1].strip("/") or "8000"
    try:
        with open(os.path.join(ROOT, f".local/moto-{port}.pid")) as f:
            pid = int(f.read().strip())
        for task in os.listdir(f"/proc/{pid}/task"):
            os.sched_setaffinity(int(task), OTHER_CPUS)
    except (OSError, ValueError) as e:
        print(f"the local database stays unpinned ({e})", file=sys.stderr)


def free_port():
    """A port nothing listens on now (the kernel's pick on loopback)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


PORT, ISSUER_PORT, CEILING_PORT, RMCP_PORT, SDK_PORT = (free_port() for _ in range(5))
DURATION = int(os.environ.get("BENCH_SECONDS", "5"))
REPS = max(1, int(os.environ.get("BENCH_REPS", "2")))
STARTS = 9
PEERS_ONLY = os.environ.get("BENCH_ONLY", "") == "peers"
TABLE = f"bench-{os.getpid()}"
LOG = os.path.join(ROOT, ".local/bench-server.log")
# The baseline's log: a file as this server's is (not /dev/null), so both pay
# for their log lines alike.
BASELINE_LOG = os.path.join(ROOT, ".local/bench-baseline.log")
# Seconds of each idle window `background` measures.
IDLE_SECONDS = 1.0
CLK_TCK = os.sysconf("SC_CLK_TCK")
RMCP_TOOLS = 21
# The e-mail every DynamoDB-bound row reads (demo data, `make seed`), and its key.
EMAIL = "eml_telecom_nov"
EMAIL_KEY = ("T#org_demo#W#ws_main", f"EML#{EMAIL}")

ENV = dict(os.environ)
ENV.update({
    "PORT": str(PORT), "DEV_ISSUER_KEY": os.path.join(ROOT, ".local/bench-issuer.key"),
    "DEV_ISSUER_PORT": str(ISSUER_PORT), "TABLE_NAME": TABLE, "RATE_LIMIT_PER_MINUTE": "0",
    "LOG_FORMAT": "json", "RUST_LOG": "info",
    # No local job runner: it scans the table twice a second, which a
    # deployed function (its worker apart) does not.
    "LOCAL_JOB_POLL_MS": "0",
})
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
# The peers' bearer: a static string compared byte for byte (our server verifies a JWT).
BEARER = secrets.token_urlsafe(32)
RMCP_ENV = dict(os.environ, PORT=str(RMCP_PORT), BEARER=BEARER)
CEILING_ENV = dict(os.environ, PORT=str(CEILING_PORT))
SDK_ENV = dict(os.environ, PORT=str(SDK_PORT), BEARER=BEARER, TABLE_NAME=TABLE, PK=EMAIL_KEY[0], SK=EMAIL_KEY[1])
CEILING_BODY = {"jsonrpc": "2.0", "id": 1, "method": "x"}
# rmcp in stateless mode (legacy_session_mode off) answers a bare 2025-06-18
# tools/list with 200 and a JSON body: no initialize, no session id.
RMCP_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream",
                "mcp-protocol-version": "2025-06-18", "authorization": f"Bearer {BEARER}"}
RMCP_BODY = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
SDK_HEADERS = {"content-type": "application/json", "authorization": f"Bearer {BEARER}"}
SDK_BODY = {"id": EMAIL}
CALL = "tools/call emails_get (2026-07-28)"
DISCOVER = "server/discover (2026-07-28)"
SDK_ROW = "bare SDK GetItem"


def free(port):
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def post(url, headers, body, timeout=10):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.status, r.read()


def wait_for(attempt, what, timeout=30.0):
    """Calls attempt() until it returns without raising; 1 ms between tries."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            return attempt()
        except (OSError, urllib.error.URLError):
            time.sleep(0.001)
    raise SystemExit(f"{what} did not answer")


def get_ok(url):
    return lambda: urllib.request.urlopen(url, timeout=1).read()


def post_ok(url, headers, body):
    def attempt():
        status, answer = post(url, headers, body, timeout=5)
        if status != 200:
            raise SystemExit(f"{url} answered {status}: {answer[:200]!r}")
        return answer
    return attempt


def rss_kib(pid):
    """VmRSS, VmHWM, RssAnon (heap, stacks) and RssFile (the binary's and
    libraries' pages mapped in), in KiB."""
    with open(f"/proc/{pid}/status") as f:
        fields = dict(line.split(":", 1) for line in f)
    return tuple(int(fields[k].split()[0]) for k in ("VmRSS", "VmHWM", "RssAnon", "RssFile"))


def stat_fields(pid):
    """The process's /proc/<pid>/stat fields from field 3 (state) on: the
    command name before them may hold spaces. Its CPU clock ticks (utime +
    stime, all threads: fields 14 and 15) and its minor page faults (field 10:
    memory the allocator gave back to the kernel and touched again shows
    here) are read from it."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def cpu_reading(pid):
    """The process's CPU time, read two ways, and when: the sum of its live
    threads' own counters (schedstat's first field, nanoseconds) with their
    ids, and its clock ticks (10 ms each, but counting ended threads too)."""
    ns, threads = 0, set()
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                ns += int(f.read().split()[0])
            threads.add(tid)
        except (FileNotFoundError, ProcessLookupError):
            pass  # the thread ended between the listing and the read
    stat = stat_fields(pid)
    return {"ns": ns, "threads": threads, "ticks": int(stat[11]) + int(stat[12]), "faults": int(stat[7]),
            "at": time.monotonic()}


def cpu_seconds(before, after):
    """CPU seconds between two readings: from the threads' nanosecond counters
    when every thread of the first reading still runs; a thread that ended took
    its counter with it, and then the clock ticks are the measure."""
    if before["threads"] <= after["threads"]:
        return (after["ns"] - before["ns"]) / 1e9
    return (after["ticks"] - before["ticks"]) / CLK_TCK


# CPU seconds per second each measured process spends with no request in
# flight (by pid), subtracted from its runs: a run's CPU per request is then
# what the requests cost. The server at an earlier commit may run a local job
# poller (a table scan every 500 ms) that today's server is started without.
BACKGROUND = {}


def background(pid):
    """Measures and keeps the process's CPU rate over an idle window."""
    before = cpu_reading(pid)
    time.sleep(IDLE_SECONDS)
    after = cpu_reading(pid)
    BACKGROUND[pid] = max(0.0, cpu_seconds(before, after) / (after["at"] - before["at"]))
    return BACKGROUND[pid]


def scenarios(token, only_reads=False):
    common = {"content-type": "application/json", "accept": "application/json, text/event-stream",
              "authorization": f"Bearer {token}", "x-workspace-id": "ws_main"}
    def stateless(method, params, name=None):
        headers = dict(common, **{"mcp-protocol-version": "2026-07-28", "mcp-method": method})
        if name:
            headers["mcp-name"] = name
        return headers, {"jsonrpc": "2.0", "id": 1, "method": method, "params": dict(params, _meta=ENVELOPE)}
    every = [
        (DISCOVER, *stateless("server/discover", {})),
        ("tools/list (2026-07-28)", *stateless("tools/list", {})),
        ("tools/list (2025-06-18)", dict(common, **{"mcp-protocol-version": "2025-06-18"}),
         {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}),
        (CALL, *stateless("tools/call", {"name": "emails_get", "arguments": {"id": EMAIL}}, "emails_get")),
    ]
    return [s for s in every if s[0] in (DISCOVER, CALL)] if only_reads else every


def wrk(url, headers, body, connections, pid):
    script = tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False)
    lines = ['wrk.method = "POST"', f"wrk.body = {json.dumps(json.dumps(body))}"]
    lines += [f"wrk.headers[{json.dumps(k)}] = {json.dumps(v)}" for k, v in headers.items()]
    script.write("\n".join(lines) + "\n")
    script.close()
    threads = 1 if connections == 1 else 2
    before = cpu_reading(pid)
    pin = ["taskset", "-c", ",".join(map(str, OTHER_CPUS))] if PIN else []
    out = subprocess.run(pin + ["wrk", "-t", str(threads), "-c", str(connections), "-d", f"{DURATION}s", "--latency",
                                "-s", script.name, url], capture_output=True, text=True, timeout=DURATION + 30).stdout
    after = cpu_reading(pid)
    os.unlink(script.name)
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    requests = int(re.search(r"^\s*(\d+) requests in", out, re.M).group(1))
    def pct(p):
        m = re.search(rf"^\s+{p}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        value, unit = float(m.group(1)), m.group(2)
        return value * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    spent = cpu_seconds(before, after) - BACKGROUND.get(pid, 0.0) * (after["at"] - before["at"])
    cpu_us = max(0.0, spent) * 1e6 / requests if requests else float("nan")
    return {"rps": rps, "p50": pct(50), "p99": pct(99), "errors": int(non2xx.group(1)) if non2xx else 0,
            "requests": requests, "cpu_us": cpu_us,
            "faults": (after["faults"] - before["faults"]) / requests if requests else float("nan")}


def stop(proc, sig=signal.SIGTERM):
    """Stops one process this script started (by its handle), if still running."""
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def start_server(binary, log_path=os.devnull):
    log = open(log_path, "w")
    proc = subprocess.Popen([binary, "serve"], env=ENV, stdout=log, stderr=log, preexec_fn=pinned(SERVER_CPUS))
    log.close()
    return proc


def rmcp_tools_list():
    status, body = post(f"http://127.0.0.1:{RMCP_PORT}/mcp", RMCP_HEADERS, RMCP_BODY, timeout=1)
    tools = json.loads(body)["result"]["tools"]
    if status != 200 or len(tools) != RMCP_TOOLS:
        raise SystemExit(f"rmcp peer answered {status} with {len(tools)} tools")
    return tools


def ceiling_answer():
    status, _ = post(f"http://127.0.0.1:{CEILING_PORT}/", {"content-type": "application/json"}, CEILING_BODY, timeout=1)
    return status


def sdk_read():
    answer = json.loads(post_ok(f"http://127.0.0.1:{SDK_PORT}/", SDK_HEADERS, SDK_BODY)())
    if answer.get("sk") != EMAIL_KEY[1]:
        raise SystemExit(f"the bare-SDK peer read {answer!r}")
    return answer


def median_start(start, first_answers):
    """Median over STARTS starts of process start → each first answer, in
    order (first_answers: callables, each retried until it answers)."""
    times = [[] for _ in first_answers]
    for _ in range(STARTS):
        started = time.monotonic()
        proc = start()
        try:
            for i, answer in enumerate(first_answers):
                wait_for(answer, "server")
                times[i].append((time.monotonic() - started) * 1000)
        finally:
            stop(proc, signal.SIGINT)
    return [statistics.median(t) for t in times]


def mean_row(runs):
    """One row from its repetitions: means, and the CPU range."""
    row = {k: statistics.mean(r[k] for r in runs) for k in ("rps", "p50", "p99", "cpu_us", "faults")}
    row["errors"] = sum(r["errors"] for r in runs)
    row["cpu_range"] = (min(r["cpu_us"] for r in runs), max(r["cpu_us"] for r in runs))
    return row


# --- The mail benchmark (BENCH_ONLY=mail alone; part of every full run) ---
#
# The product's main job on the bill corpus (tests/bills): a raw message
# parsed, every PDF attachment's text read, the boleto and Pix search run,
# by this product's code (examples/mail_bench.rs) and by a Python peer doing
# the same (scripts/bench_mail_peer.py: the standard `email` package, pypdf,
# the same searches), each a process of its own on the same core as the
# servers above, in one run on the same files.

MAIL_BENCH = os.path.join(TARGET, "release/examples/mail_bench")
MAIL_PEER = os.path.join(ROOT, "scripts/bench_mail_peer.py")
MAIL_PYTHON = os.environ.get("BENCH_MAIL_PYTHON", os.path.join(ROOT, ".local/tools-bench/bin/python"))
MAIL_SECONDS = float(os.environ.get("BENCH_MAIL_SECONDS", "3"))
MAIL_TIMEOUT = float(os.environ.get("BENCH_MAIL_TIMEOUT", "60"))
MAIL_ONLY = os.environ.get("BENCH_ONLY", "") == "mail"
BILLS = os.path.join(ROOT, "tests/bills")
# The memory measurement's message (made by the peer's `make-large`): the
# plain-utf8-qp bill with the corpus's eight boleto PDFs attached again, each
# given a page image of noise, 10 MiB in all.
MAIL_LARGE = os.path.join(ROOT, ".local/bench/mail-10mib.eml")
MAIL_LARGE_BASE = os.path.join(BILLS, "plain-utf8-qp.eml")
MAIL_MEMORY_LIMIT_MIB = 64
MAIL_RATIO_TARGET = 10
MAIL_HEADING = "## Mail processing: parse, PDF text, boleto and Pix search"


def mail_corpus():
    """The corpus's messages by kind: (bills, hostile), each a list of
    (name, path, what it must give: the bills' barcodes and Pix codes, and
    the reason), hostile ones being those whose record has a reason."""
    bills, hostile = [], []
    for path in sorted(glob.glob(os.path.join(BILLS, "*.eml"))):
        with open(path[:-4] + ".json") as f:
            facts = json.load(f)
        found = set()
        for bill in facts.get("bills", []):
            found.add(bill["barcode"])
            if bill.get("pix"):
                found.add(bill["pix"]["payload"])
        entry = (os.path.basename(path)[:-4], path, (found, facts.get("reason")))
        (hostile if facts.get("reason") else bills).append(entry)
    return bills, hostile


def run_limited(cmd, timeout=None):
    """Runs one measuring process on the servers' core; its JSON answer (None
    when it was stopped at `timeout` seconds or failed), its peak RSS in KiB
    (the kernel's ru_maxrss, from wait4) and whether it timed out."""
    err = tempfile.TemporaryFile()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, preexec_fn=pinned(SERVER_CPUS))
    timer = threading.Timer(timeout or MAIL_TIMEOUT, proc.kill)
    timer.start()
    try:
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        timer.cancel()
        proc.stdout.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode == -signal.SIGKILL:
        return None, usage.ru_maxrss, True
    if proc.returncode != 0:
        err.seek(0)
        raise SystemExit(f"{' '.join(cmd[:3])} failed ({proc.returncode}): {err.read().decode(errors='replace')[-2000:]}")
    return json.loads(out), usage.ru_maxrss, False


def mail_sides():
    return {"ours": [MAIL_BENCH], "peer": [MAIL_PYTHON, MAIL_PEER]}


def outcome_ok(outcome, expected):
    found, reason = expected
    return set(outcome["found"]) == found and outcome["reason"] == reason and outcome["refused"] is None


def mail_section():
    """Measures both sides; the section's lines and whether each target is met."""
    for path in (MAIL_BENCH, MAIL_PYTHON):
        if not os.access(path, os.X_OK):
            raise SystemExit(f"{path} is missing: run scripts/bench.sh (BENCH_ONLY=mail for this part alone)")
    sides = mail_sides()
    bills, hostile = mail_corpus()
    files = [path for _, path, _ in bills]
    runs = {"ours": [], "peer": []}
    pairs = []
    for rep in range(REPS):
        order = ("peer", "ours") if rep % 2 == 0 else ("ours", "peer")
        got = {}
        for side in order:
            result, peak, _ = run_limited(sides[side] + ["throughput", str(MAIL_SECONDS)] + files,
                                          timeout=MAIL_SECONDS * 4 + MAIL_TIMEOUT)
            result["peak_kib"] = peak
            got[side] = result
            runs[side].append(result)
        rate = {s: got[s]["messages"] / got[s]["cpu_s"] for s in got}
        pairs.append(rate["ours"] / rate["peer"])
    ratio = statistics.geometric_mean(pairs)
    correct = {s: all(outcome_ok(o, exp) for o, (_, _, exp) in zip(runs[s][0]["outcomes"], bills)) for s in runs}

    # Each bill message alone, one second each side: where the time goes.
    each = []
    for name, path, expected in bills:
        row = {}
        for side, cmd in sides.items():
            result, _, _ = run_limited(cmd + ["throughput", "1", path])
            row[side] = result["cpu_s"] / result["messages"] * 1e3
        each.append((name, os.path.getsize(path), row))

    # The hostile messages, one at a time, each side stopped at MAIL_TIMEOUT.
    rough = []
    for name, path, expected in hostile:
        row = {}
        for side, cmd in sides.items():
            result, peak, timed_out = run_limited(cmd + ["throughput", "1", path])
            if timed_out:
                row[side] = (None, "stopped", peak, False)
            else:
                outcome = result["outcomes"][0]
                row[side] = (result["cpu_s"] / result["messages"] * 1e3, outcome["reason"] or "—", peak,
                             outcome_ok(outcome, expected))
        rough.append((name, os.path.getsize(path), row))

    # The 10 MiB message: made by the peer (pypdf writes the PDFs), then read
    # once by each side in a process of its own.
    os.makedirs(os.path.dirname(MAIL_LARGE), exist_ok=True)
    made = subprocess.run([MAIL_PYTHON, MAIL_PEER, "make-large", MAIL_LARGE, MAIL_LARGE_BASE] +
                          sorted(glob.glob(os.path.join(BILLS, "pdf/b[0-9]*.pdf"))),
                          check=True, capture_output=True, text=True)
    large = json.loads(made.stdout)
    memory = {}
    for side, cmd in sides.items():
        result, peak, _ = run_limited(cmd + ["memory", MAIL_LARGE])
        memory[side] = (result, peak)
    same_large = memory["ours"][0]["outcome"] == memory["peer"][0]["outcome"]
    ours_peak = memory["ours"][1] / 1024
    versions = subprocess.run([MAIL_PYTHON, "-c", "import platform, pypdf; "
                               "print(platform.python_version(), pypdf.__version__)"],
                              check=True, capture_output=True, text=True).stdout.split()
    met = {"ratio": ratio >= MAIL_RATIO_TARGET, "memory": ours_peak <= MAIL_MEMORY_LIMIT_MIB}

    mib = lambda kib: f"{kib / 1024:.1f} MiB"
    yes = lambda ok: "yes" if ok else "**no**"
    lines = [MAIL_HEADING, "",
             f"The product's main job on real mail, measured by `make bench` (`BENCH_ONLY=mail make bench` for this "
             f"section alone) on {time.strftime('%Y-%m-%d')}: each raw message of `tests/bills` read as ingestion and "
             "processing read it, by this product's code and by a peer doing the same in Python, in one run, one "
             "message at a time, each side a process of its own" +
             (" on core 0" if PIN else "") + ".", "",
             "- **This reader** (`examples/mail_bench.rs`, release build, mimalloc as the server and the worker): "
             "`inbox_mail::read` of the raw message (what `POST /inboxes/{id}/emails` does with a `message/rfc822` "
             "body: MIME, charsets, RFC 2047, the text and the attachments), the SHA-256 of each attachment, then "
             "for each attachment that looks like a PDF `inbox_mail::pdf::text` (the guard, then lopdf) and "
             "`inbox_domain::boleto::all` with `inbox_domain::pix::find_all` on its text, then the same search in "
             "the body's text. Not done: storing anything, the job, the webhook.",
             f"- **The Python peer** (`scripts/bench_mail_peer.py`, Python {versions[0]}, pypdf {versions[1]}): "
             "`email.parser.BytesParser(policy=policy.default)`, `get_body()` (plain text before HTML, HTML to text "
             "with `html.parser`), `iter_attachments()` with attached messages followed, each attachment's bytes "
             "decoded and hashed (`hashlib`), pypdf's `extract_text()` under the product's rules (encrypted not "
             "opened, over 100 pages refused, 256 KiB of text or 2 s, pypdf's own decompression limit taken as "
             "unreadable), and the same boleto search (digit groups, spans of 44/47/48 digits, modulo 10 and 11, "
             "currency, factor, amount) and Pix search (TLV, CRC-16 by `binascii.crc_hqx`, the Pix account).",
             "- Both sides' answers are checked against each message's `.json` (every bill's barcode and Pix code, "
             "or the PDF's reason) and must agree; CPU time is the measuring thread's own (`/proc/thread-self/"
             "schedstat`; `time.thread_time_ns()`, the same clock), over passes after a warm-up one, so neither "
             "the interpreter's nor the binary's start-up is counted; messages per second per core are messages "
             "over that CPU time.", "",
             "| Target (this run) | value | each pair of adjacent runs | target | met |", "|---|---:|---|---:|:---:|",
             f"| bill messages per second per core, this reader ÷ the Python peer ({len(bills)} messages, "
             f"{MAIL_SECONDS:g} s per run) | {ratio:.1f}× | {', '.join(f'{p:.1f}' for p in pairs)} | "
             f"≥ {MAIL_RATIO_TARGET}× | {yes(met['ratio'])} |",
             f"| peak RSS of a process reading one {large['bytes'] / 1048576:.1f} MiB message (this reader) | "
             f"{ours_peak:.1f} MiB | — | ≤ {MAIL_MEMORY_LIMIT_MIB} MiB | {yes(met['memory'])} |", "",
             "| The 8 bill messages, over and over | messages/s per core | CPU µs/message (range) | "
             "messages/s (wall, one thread) | peak RSS | answers as the corpus says |",
             "|---|---:|---:|---:|---:|:---:|"]
    for side, label in (("ours", "this reader"), ("peer", "Python peer")):
        r = runs[side]
        per = [x["cpu_s"] / x["messages"] * 1e6 for x in r]
        lines.append(f"| {label} | {statistics.mean(x['messages'] / x['cpu_s'] for x in r):.0f} | "
                     f"{statistics.mean(per):.0f} ({min(per):.0f}–{max(per):.0f}) | "
                     f"{statistics.mean(x['messages'] / x['wall_s'] for x in r):.0f} | "
                     f"{mib(max(x['peak_kib'] for x in r))} | {yes(correct[side])} |")
    lines += ["", "| Bill message (alone, 1 s each) | size | this reader: CPU µs/message | Python peer: CPU µs/message "
              "| peer ÷ this reader |", "|---|---:|---:|---:|---:|"]
    for name, size, row in each:
        lines.append(f"| `{name}` | {size / 1024:.0f} KiB | {row['ours'] * 1e3:.0f} | {row['peer'] * 1e3:.0f} | "
                     f"{row['peer'] / row['ours']:.1f}× |")
    lines += ["", f"Hostile messages, one at a time (each side run for 1 s, at least once, and stopped after "
              f"{MAIL_TIMEOUT:g} s: the peer's PDF library is bounded by that and by its own limits only):", "",
              "| Hostile message | size | this reader: CPU ms/message | reason | peak RSS | Python peer: CPU ms/message "
              "| reason | peak RSS | peer ÷ this reader |", "|---|---:|---:|---|---:|---:|---|---:|---:|"]
    for name, size, row in rough:
        def cell(side):
            ms, reason, peak, ok = row[side]
            when = f"> {MAIL_TIMEOUT * 1e3:.0f} (stopped)" if ms is None else f"{ms:.2f}"
            wrong = "" if ok else " (**not the corpus's**)"
            return f"{when} | `{reason}`{wrong} | {mib(peak)}"
        o, p = row["ours"][0], row["peer"][0]
        vs = "—" if o is None or p is None else f"{p / o:.1f}×"
        lines.append(f"| `{name}` | {size / 1024:.0f} KiB | {cell('ours')} | {cell('peer')} | {vs} |")
    stages = (("start", "process start"), ("file_read", "the message read into memory"),
              ("parsed", "parsed (text and attachments decoded, digests taken)"),
              ("end", "every PDF read, bills searched (the process's peak)"))
    lines += ["", f"Peak memory (VmHWM, the whole process) reading one {large['bytes'] / 1048576:.2f} MiB message "
              f"({large['bytes']} bytes): `plain-utf8-qp` with the corpus's {large['attachments']} boleto PDFs "
              f"attached again, each given a page image of {large['noise_per_pdf'] / 1048576:.2f} MiB of noise "
              "(8-bit grey, uncompressed: a scan's worth that does not compress), "
              f"{memory['ours'][0]['attachments']} attachments in all. The edge refuses a raw message over 4 MiB "
              "(docs/rest.md); the reading path is measured at 10 MiB all the same. Both sides found the same "
              f"bills in it: {yes(same_large)} ({len(memory['ours'][0]['outcome']['found'])} barcodes and Pix codes).",
              "", "| Peak RSS so far | this reader | Python peer |", "|---|---:|---:|"]
    for key, label in stages:
        lines.append(f"| {label} | {mib(memory['ours'][0]['peak_kib'][key])} | "
                     f"{mib(memory['peer'][0]['peak_kib'][key])} |")
    lines.append(f"| the process's ru_maxrss (wait4) | {mib(memory['ours'][1])} | {mib(memory['peer'][1])} |")
    return lines, met


def write_mail_section(lines):
    """BENCH_ONLY=mail: the section replaces its older self (always the last
    of the file) in the results file, the rest of it kept."""
    results = "bench/results.md" if os.environ.get("BENCH_UPDATE") == "1" else ".local/bench/results.md"
    path = os.path.join(ROOT, results)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    before = "# Benchmark results\n"
    if os.path.exists(path):
        with open(path) as f:
            before = f.read().split(MAIL_HEADING, 1)[0]
    with open(path, "w") as f:
        f.write(before.rstrip("\n") + "\n\n" + "\n".join(lines) + "\n")
    print(f"wrote the mail section of {results}", file=sys.stderr)


def main():
    if MAIL_ONLY:
        lines, met = mail_section()
        write_mail_section(lines)
        print("\n".join(lines))
        if not all(met.values()):
            print("make bench: a mail target is not met (the table above)", file=sys.stderr)
        return
    ports = (CEILING_PORT, RMCP_PORT) if PEERS_ONLY else (PORT, ISSUER_PORT, CEILING_PORT, RMCP_PORT, SDK_PORT)
    for port in ports:
        if not free(port):
            raise SystemExit(f"port {port} is taken")
    binaries = (CEILING, RMCP) if PEERS_ONLY else (SERVER, CEILING, RMCP, SDK_PEER, MAIL_BENCH, MAIL_PYTHON) + (
        (BASELINE,) if BASELINE else ())
    for binary in binaries:
        if not os.access(binary, os.X_OK):
            raise SystemExit(f"{binary} is missing: run scripts/bench.sh")

    def peer(binary, env):
        return subprocess.Popen([binary], env=env, stdout=subprocess.DEVNULL, preexec_fn=pinned(SERVER_CPUS))
    startup = {"ceiling": median_start(lambda: peer(CEILING, CEILING_ENV), [ceiling_answer])[0],
               "rmcp": median_start(lambda: peer(RMCP, RMCP_ENV), [rmcp_tools_list])[0]}

    # The servers measured against the peers: this one, then the baseline.
    servers = [("server", SERVER, "this server")]
    if BASELINE:
        servers.append(("baseline", BASELINE, f"this server at {BASELINE_REV}"))
    token = None
    if not PEERS_ONLY:
        pin_database()
        subprocess.run([SERVER, "create-table"], env=ENV, check=True, stdout=subprocess.DEVNULL)
        subprocess.run([SERVER, "seed"], env=ENV, check=True, stdout=subprocess.DEVNULL)
        token = subprocess.run([SERVER, "dev-token"], env=dict(ENV, AUD="mcp"), check=True,
                               capture_output=True, text=True).stdout.strip()
        startup["sdk"] = median_start(lambda: peer(SDK_PEER, SDK_ENV), [sdk_read])[0]
        mcp = f"http://127.0.0.1:{PORT}/mcp"
        (_, discover_headers, discover_body), (_, call_headers, call_body) = scenarios(token, only_reads=True)
        for key, binary, _ in servers:
            # Process start to the first answers: /health, then server/discover
            # (the JWKS fetch); and, in starts of their own, the first read.
            startup[key, "health"], startup[key, "discover"] = median_start(
                lambda: start_server(binary),
                [get_ok(f"http://127.0.0.1:{PORT}/health"), post_ok(mcp, discover_headers, discover_body)])
            startup[key, "read"] = median_start(lambda: start_server(binary), [post_ok(mcp, call_headers, call_body)])[0]

    peers = {}
    runs = {}  # (server, row name, concurrency) -> [wrk results]
    rss = {}
    idle_cpu = {}  # process -> its background CPU rate, one per start
    # (server, row, concurrency) -> its anchor's CPU per request over this
    # server's, one per pair of adjacent runs (see below).
    pairs = {}
    def measure(key, name, url, headers, body, pid, concurrencies=(1, 32)):
        out = {}
        for c in concurrencies:
            out[c] = wrk(url, headers, body, c, pid)
            runs.setdefault((key, name, c), []).append(out[c])
        return out
    # The anchor of a row, run right beside it at the same concurrency: the
    # ratios come from pairs of adjacent runs, so a machine whose speed
    # drifts during the run moves both sides of each ratio alike.
    anchors = {} if PEERS_ONLY else {
        CALL: ("sdk", SDK_ROW, f"http://127.0.0.1:{SDK_PORT}/", SDK_HEADERS, SDK_BODY),
        DISCOVER: ("rmcp", "rmcp tools/list (2025-06-18)", f"http://127.0.0.1:{RMCP_PORT}/mcp", RMCP_HEADERS, RMCP_BODY),
    }
    try:
        peers["ceiling"] = peer(CEILING, CEILING_ENV)
        peers["rmcp"] = peer(RMCP, RMCP_ENV)
        if not PEERS_ONLY:
            peers["sdk"] = peer(SDK_PEER, SDK_ENV)
        for _ in range(3):
            wait_for(ceiling_answer, "ceiling")
            wait_for(rmcp_tools_list, "rmcp peer")
            if not PEERS_ONLY:
                wait_for(sdk_read, "bare-SDK peer")
        idle = {k: rss_kib(p.pid)[0] for k, p in peers.items()}
        for k, p in peers.items():
            idle_cpu[k] = [background(p.pid)]
        for rep in range(REPS):
            measure("ceiling", "ceiling (fixed JSON)", f"http://127.0.0.1:{CEILING_PORT}/",
                    {"content-type": "application/json"}, CEILING_BODY, peers["ceiling"].pid)
            if PEERS_ONLY:
                measure("rmcp", "rmcp tools/list (2025-06-18)", f"http://127.0.0.1:{RMCP_PORT}/mcp", RMCP_HEADERS,
                        RMCP_BODY, peers["rmcp"].pid)
                continue
            for key, binary, _ in servers:
                proc = start_server(binary, LOG if key == "server" else BASELINE_LOG)
                try:
                    wait_for(get_ok(f"http://127.0.0.1:{PORT}/health"), "/health")
                    chosen = scenarios(token, only_reads=key != "server")
                    for _, headers, body in chosen:
                        # Warm: the first call loads the JWKS.
                        post_ok(f"http://127.0.0.1:{PORT}/mcp", headers, body)()
                    warm = rss_kib(proc.pid)[0]
                    idle_cpu.setdefault(key, []).append(background(proc.pid))
                    for name, headers, body in chosen:
                        for c in (1, 32):
                            run_ours = lambda: measure(key, name, f"http://127.0.0.1:{PORT}/mcp", headers, body,
                                                       proc.pid, (c,))[c]
                            if name not in anchors:
                                run_ours()
                                continue
                            peer_key, peer_row, url, peer_headers, peer_body = anchors[name]
                            run_anchor = lambda: measure(peer_key, peer_row, url, peer_headers, peer_body,
                                                         peers[peer_key].pid, (c,))[c]
                            # The anchor runs first in even repetitions and
                            # second in odd ones: whatever a run inherits
                            # from the one before it (this server's heavier
                            # rows, the database's state) falls on both sides.
                            if rep % 2 == 0:
                                anchor, ours = run_anchor(), run_ours()
                            else:
                                ours, anchor = run_ours(), run_anchor()
                            pairs.setdefault((key, name, c), []).append(ours["cpu_us"] / anchor["cpu_us"])
                    # What the server keeps once the load is over: wrk has
                    # closed its connections, give the server a moment to drop
                    # them, as the peers' memory is read after their last run.
                    time.sleep(1)
                    rss[key] = (warm, *rss_kib(proc.pid))
                finally:
                    stop(proc, signal.SIGINT)
        for k, p in peers.items():
            rss[k] = (idle[k], *rss_kib(p.pid))
    finally:
        for p in peers.values():
            stop(p)

    rows = {key: mean_row(r) for key, r in runs.items()}

    def paired(key, name, c):
        """The geometric mean of this row's ratios to its adjacent anchor runs."""
        ratios = pairs[key, name, c]
        return statistics.geometric_mean(ratios)
    ceiling = {c: rows["ceiling", "ceiling (fixed JSON)", c] for c in (1, 32)}

    def line(key, name, c):
        r, ce = rows[key, name, c], ceiling[c]
        label = name if key in ("server", "ceiling", "rmcp", "sdk") else f"{name} at {BASELINE_REV}"
        lo, hi = r["cpu_range"]
        spread = f" ({lo:.1f}–{hi:.1f})" if REPS > 1 else ""
        vs_sdk = "—"
        if (key, name, c) in pairs and name == CALL:
            vs_sdk = f"{paired(key, name, c):.2f}×"
        elif key == "sdk":
            vs_sdk = "1.00×"
        return (f"| {label} | {c} | {r['rps']:.0f} | {r['rps'] / ce['rps']:.2f} | {r['p50']:.3f} | "
                f"{r['p50'] / ce['p50']:.1f}× | {r['p99']:.3f} | {r['p99'] / ce['p99']:.1f}× | {r['errors']} | "
                f"{r['cpu_us']:.1f}{spread} | {vs_sdk} | {r['faults']:.3f} |")

    table = ["| Request | Conc. | req/s | vs ceiling | p50 ms | vs ceiling | p99 ms | vs ceiling | non-2xx | "
             "CPU µs/req" + (" (range)" if REPS > 1 else "") + " | CPU vs bare SDK | page faults/req |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    order = {"ceiling": 0, "rmcp": 1, "sdk": 2, "server": 3, "baseline": 4}
    table += [line(*key) for key in sorted(runs, key=lambda k: order[k[0]])]

    labels = [("ceiling", "ceiling"), ("rmcp", "rmcp peer")]
    if not PEERS_ONLY:
        labels += [("sdk", "bare-SDK peer")] + [(key, label) for key, _, label in servers]
    memory = ["| Memory (RSS) | " + " | ".join(label for _, label in labels) + " |",
              "|---|" + "---:|" * len(labels)]
    for i, what in enumerate(("idle (after warm-up)", "after the load runs", "peak (VmHWM)",
                              "after the load runs: anonymous (heap, stacks)",
                              "after the load runs: file-backed (binary, libraries)")):
        memory.append(f"| {what} | " + " | ".join(f"{rss[k][i] / 1024:.1f} MiB" for k, _ in labels) + " |")
    start = [f"| Start-up (median of {STARTS}): process start → first answered request | ms |", "|---|---:|",
             f"| ceiling: fixed body | {startup['ceiling']:.1f} |",
             f"| rmcp peer: `tools/list` with the bearer | {startup['rmcp']:.1f} |"]
    mib = lambda n: f"{n / 1048576:.1f} MiB"
    if PEERS_ONLY:
        print("\n".join(table + [""] + start + [""] + memory +
                        ["", f"rmcp peer release binary: {mib(os.path.getsize(RMCP))}"]))
        return
    start.append(f"| bare-SDK peer: first `GetItem` (SDK configuration, first connection) | {startup['sdk']:.1f} |")
    for key, _, label in servers:
        start += [f"| {label}: `/health` | {startup[key, 'health']:.1f} |",
                  f"| {label}: `server/discover` (JWKS fetch) | {startup[key, 'discover']:.1f} |",
                  f"| {label}: first `tools/call emails_get` (JWKS, membership, GetItem) | {startup[key, 'read']:.1f} |"]

    # What the issue of the bare-SDK anchor asks, as ratios of this run.
    def gate(what, value, limit, each=()):
        spread = each if isinstance(each, str) else (", ".join(f"{r:.2f}" for r in each) or "—")
        return f"| {what} | {value:.2f}× | {spread} | ≤ {limit}× | {'yes' if value <= limit else '**no**'} |"
    gates = ["| Ratio (this run) | value | each pair of adjacent runs | target | met |", "|---|---:|---|---:|:---:|"]
    for c in (1, 32):
        gates.append(gate(f"`emails_get` CPU/req ÷ bare-SDK `GetItem` (adjacent runs), c={c}",
                          paired("server", CALL, c), 1.2, pairs.get(("server", CALL, c), ())))
    if BASELINE:
        # Both measured against the same anchor: the ratio of their ratios.
        for c in (1, 32):
            gates.append(gate(f"`emails_get` CPU/req ÷ the same at {BASELINE_REV} (each against its adjacent anchor), c={c}",
                              paired("server", CALL, c) / paired("baseline", CALL, c), 0.8,
                              "at " + BASELINE_REV + " ÷ bare SDK: " +
                              ", ".join(f"{r:.2f}" for r in pairs.get(("baseline", CALL, c), ()))))
    gates.append(gate("start-up: first answer (`server/discover`: JWKS fetched, JWT verified) ÷ the bare-SDK peer's "
                      "first answer (`GetItem`)", startup["server", "discover"] / startup["sdk"], 1.1))
    gates.append(gate("start-up: first `emails_get` (three DynamoDB calls: organization, membership, e-mail) ÷ the "
                      "bare-SDK peer's first `GetItem` (one)", startup["server", "read"] / startup["sdk"], 1.1))
    gates.append(gate("RSS after load ÷ bare-SDK peer's", rss["server"][1] / rss["sdk"][1], 1.3))
    for c in (1, 32):
        gates.append(gate(f"`server/discover` CPU/req ÷ rmcp `tools/list` (adjacent runs), c={c}",
                          paired("server", DISCOVER, c), 0.5, pairs.get(("server", DISCOVER, c), ())))

    # DynamoDB round trips per request type, from the requests' log lines.
    trips = {}
    with open(LOG) as f:
        for entry_line in f:
            try:
                entry = json.loads(entry_line)
            except ValueError:
                continue
            # The request's `answered` line carries its fields itself (JSON lines, flattened).
            if entry.get("message") == "answered" and "dynamodb_calls" in entry:
                key = f"{entry.get('method', entry.get('path'))} → {entry.get('status')}"
                trips.setdefault(key, set()).add(entry["dynamodb_calls"])

    zipped = os.path.join(ROOT, ".local/bench-bootstrap.zip")
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        z.write(SERVER, "bootstrap")
    artefacts = ["| Artefact | size |", "|---|---:|",
                 f"| this server, release binary (x86_64, this machine, dev feature) | {mib(os.path.getsize(SERVER))} |",
                 f"| the same, zipped (deflate -9) | {mib(os.path.getsize(zipped))} |",
                 f"| bare-SDK peer release binary | {mib(os.path.getsize(SDK_PEER))} |",
                 f"| rmcp peer release binary | {mib(os.path.getsize(RMCP))} |"]
    if BASELINE:
        artefacts.append(f"| this server at {BASELINE_REV}, release binary | {mib(os.path.getsize(BASELINE))} |")
    for fn in ("kobana-inbox-mcp", "worker"):
        path = os.path.join(TARGET, f"lambda/{fn}/bootstrap")
        if os.path.exists(path):
            arch = subprocess.run(["file", "-b", path], capture_output=True, text=True).stdout.split(",")[1].strip() \
                if subprocess.run(["which", "file"], capture_output=True).returncode == 0 else "Lambda"
            artefacts.append(f"| `make build` {fn} bootstrap ({arch}) | {mib(os.path.getsize(path))} |")
            if os.path.exists(path + ".zip"):
                artefacts.append(f"| `make build` {fn} bootstrap.zip | {mib(os.path.getsize(path + '.zip'))} |")

    baseline_text = (f" A fifth, this server as it was at `{BASELINE_REV}`, runs the reads alone for before/after "
                     "figures of the same run." if BASELINE else "")
    out = ["# Benchmark results", "",
           f"Measured by `make bench` on {time.strftime('%Y-%m-%d')}: release builds, loopback, wrk, {DURATION} s per "
           f"run, {REPS} repetition{'s' if REPS > 1 else ''} (means; the CPU range in brackets), rate limit off, no local job "
           "runner (a function has none), JWKS warm, local DynamoDB (moto, HTTP/1.1 keep-alive) behind the reads" + (
               "; every measured server on core 0, the database and wrk on core 1 (a server gets one core, as a Lambda "
               "function of up to 1,769 MB gets one vCPU at most)" if PIN else "") + ". Four servers side by side in one run: "
           "the ceiling (a minimal hyper server answering a fixed JSON body; the throughput and latency ratios are to "
           "it at the same concurrency), an rmcp peer (bench/rmcp-peer: the official Rust MCP SDK, Streamable HTTP, "
           "stateless, JSON responses, 21 tools, a static bearer compared byte for byte, no JWT and no database; it is "
           "sent a bare 2025-06-18 `tools/list`), the bare-SDK peer (examples/sdk_peer.rs: axum, the same bearer "
           "compare, one `GetItem` of the same item per request through `aws-sdk-dynamodb` — same versions, the client "
           "configured as this server's was before its tuning: region, timeouts, standard retries, the SDK's defaults "
           "for the rest; the anchor of every row that reads the database) and this server." + baseline_text +
           " Every request to this server verifies its JWT (EdDSA); `tools/call emails_get` also resolves the "
           "membership (cached per container) and reads the e-mail.", "",
           "CPU vs bare SDK (and the ratios to rmcp): each run of this server's `emails_get` (`server/discover`) "
           "is paired with a run of the bare-SDK peer (rmcp's `tools/list`) at the same concurrency right beside it "
           "(before it in even repetitions, after it in odd ones), and the ratio is the geometric mean of those "
           "adjacent pairs; the before/after ratio divides the two servers' paired ratios. "
           "CPU µs/req is the server process's own CPU time (user + system, all threads) during the run over the "
           "requests wrk completed: it does not count the database's or wrk's CPU, so it holds on a busy machine "
           "(each thread's own nanosecond counter; the process's clock ticks, 10 ms, for a run in which a thread ended). "
           "What a process spends with no request in flight (a poller, timers; the table below, measured over "
           f"{IDLE_SECONDS:.0f} s idle after each start) is taken out of each of its runs, and each server writes its log "
           "lines to a file of its own. The DynamoDB-bound rows' throughput and "
           "latency are the local database's (moto: Python, one action at a time); their CPU per request is the "
           "server's own. Page faults per request are the process's minor faults during the run over its requests: "
           "memory the allocator hands back to the kernel and takes again costs one each.", ""]
    quiet = ["| Background CPU, no request in flight (taken out of each run) | " +
             " | ".join(label for _, label in labels) + " |", "|---|" + "---:|" * len(labels),
             "| µs of CPU a second (mean of the idle windows) | " +
             " | ".join(f"{statistics.mean(idle_cpu[k]) * 1e6:.0f}" for k, _ in labels) + " |"]
    out += gates + [""] + table + [""] + quiet + [""] + start + [""] + memory + [""] + artefacts
    sizes = os.path.join(ROOT, "bench/artefacts.md")
    if os.path.exists(sizes):
        # Written by scripts/sizes.sh (two release builds, not part of this run).
        with open(sizes) as f:
            out += ["", "The dev feature (development issuer, demo data, development subcommands), with and "
                    "without: `scripts/sizes.sh`.", ""] + f.read().strip().split("\n")
    out += ["", "| DynamoDB round trips per request (method → status) | calls |", "|---|---:|"]
    for key in sorted(trips):
        out.append(f"| {key} | {', '.join(str(v) for v in sorted(trips[key]))} |")
    # The mail section comes last: BENCH_ONLY=mail rewrites it alone.
    out += [""] + mail_section()[0]
    results = "bench/results.md" if os.environ.get("BENCH_UPDATE") == "1" else ".local/bench/results.md"
    os.makedirs(os.path.dirname(os.path.join(ROOT, results)), exist_ok=True)
    with open(os.path.join(ROOT, results), "w") as f:
        f.write("\n".join(out) + "\n")
    print(f"wrote {results}", file=sys.stderr)
    print("\n".join(out))


if __name__ == "__main__":
    main()
