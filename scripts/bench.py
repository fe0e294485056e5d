"""Side-by-side measurements of the release server against two peers.

Peers: the ceiling (examples/ceiling.rs, a bare hyper server answering a
fixed JSON body) and an rmcp server (bench/rmcp-peer: the official Rust MCP
SDK, Streamable HTTP, stateless, JSON responses, 21 tools, static bearer).

Started by scripts/bench.sh (release binaries built, local DynamoDB up).
Everything listens on 127.0.0.1; every load run is bounded in time
(BENCH_SECONDS, default 5 s per wrk run; about 14 runs in all). Only the
processes this script starts are stopped, through their Popen handles.
Ports are free ones the kernel picks. Writes .local/bench/results.md, or
bench/results.md (the committed figures) with BENCH_UPDATE=1.

Per row: req/s, p50, p99 and non-2xx from wrk, ratios to the ceiling at the
same concurrency, and the server's CPU time per request: utime + stime of the
server process (/proc/<pid>/stat fields 14 and 15, clock ticks) read right
before and right after the wrk run, over the requests wrk completed. Our
server's rows also give their CPU per request as a multiple of our
`server/discover` at the same concurrency.

Environment:
  BENCH_SECONDS=N    seconds per wrk run (default 5).
  BENCH_ONLY=peers   measure only the ceiling and the rmcp peer (no server
                     build, no DynamoDB needed); prints the tables and
                     writes no file.
  BENCH_UPDATE=1     write bench/results.md (the committed figures) instead
                     of .local/bench/results.md.
  RMCP_PEER=path     the rmcp peer binary (default
                     $CARGO_TARGET_DIR/rmcp-peer/release/rmcp-peer).
"""
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
import time
import urllib.error
import urllib.request
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
SERVER = os.path.join(TARGET, "release/kobana-inbox-mcp")
CEILING = os.path.join(TARGET, "release/examples/ceiling")
RMCP = os.environ.get("RMCP_PEER", os.path.join(TARGET, "rmcp-peer/release/rmcp-peer"))


def free_port():
    """A port nothing listens on now (the kernel's pick on loopback)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


PORT, ISSUER_PORT, CEILING_PORT, RMCP_PORT = (free_port() for _ in range(4))
DURATION = int(os.environ.get("BENCH_SECONDS", "5"))
PEERS_ONLY = os.environ.get("BENCH_ONLY", "") == "peers"
TABLE = f"bench-{os.getpid()}"
LOG = os.path.join(ROOT, ".local/bench-server.log")
CLK_TCK = os.sysconf("SC_CLK_TCK")
RMCP_TOOLS = 21

ENV = dict(os.environ)
ENV.update({
    "PORT": str(PORT), "DEV_ISSUER_KEY": os.path.join(ROOT, ".local/bench-issuer.key"),
    "DEV_ISSUER_PORT": str(ISSUER_PORT), "TABLE_NAME": TABLE, "RATE_LIMIT_PER_MINUTE": "0",
    "LOG_FORMAT": "json", "RUST_LOG": "info",
})
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
# The rmcp peer's bearer: a static string compared byte for byte (our server verifies a JWT).
BEARER = secrets.token_urlsafe(32)
RMCP_ENV = dict(os.environ, PORT=str(RMCP_PORT), BEARER=BEARER)
CEILING_ENV = dict(os.environ, PORT=str(CEILING_PORT))
CEILING_BODY = {"jsonrpc": "2.0", "id": 1, "method": "x"}
# rmcp in stateless mode (legacy_session_mode off) answers a bare 2025-06-18
# tools/list with 200 and a JSON body: no initialize, no session id.
RMCP_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream",
                "mcp-protocol-version": "2025-06-18", "authorization": f"Bearer {BEARER}"}
RMCP_BODY = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}


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


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        fields = dict(line.split(":", 1) for line in f)
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def cpu_ticks(pid):
    """utime + stime of the whole process (all threads), in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        rest = f.read().rsplit(")", 1)[1].split()
    # rest[0] is field 3 (state): fields 14 and 15 are rest[11] and rest[12].
    return int(rest[11]) + int(rest[12])


def scenarios(token):
    common = {"content-type": "application/json", "accept": "application/json, text/event-stream",
              "authorization": f"Bearer {token}", "x-workspace-id": "ws_main"}
    def stateless(method, params, name=None):
        headers = dict(common, **{"mcp-protocol-version": "2026-07-28", "mcp-method": method})
        if name:
            headers["mcp-name"] = name
        return headers, {"jsonrpc": "2.0", "id": 1, "method": method, "params": dict(params, _meta=ENVELOPE)}
    return [
        ("server/discover (2026-07-28)", *stateless("server/discover", {})),
        ("tools/list (2026-07-28)", *stateless("tools/list", {})),
        ("tools/list (2025-06-18)", dict(common, **{"mcp-protocol-version": "2025-06-18"}),
         {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}),
        ("tools/call emails_get (2026-07-28)",
         *stateless("tools/call", {"name": "emails_get", "arguments": {"id": "eml_telecom_nov"}}, "emails_get")),
    ]


def wrk(url, headers, body, connections, pid):
    script = tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False)
    lines = ['wrk.method = "POST"', f"wrk.body = {json.dumps(json.dumps(body))}"]
    lines += [f"wrk.headers[{json.dumps(k)}] = {json.dumps(v)}" for k, v in headers.items()]
    script.write("\n".join(lines) + "\n")
    script.close()
    threads = 1 if connections == 1 else 2
    before = cpu_ticks(pid)
    out = subprocess.run(["wrk", "-t", str(threads), "-c", str(connections), "-d", f"{DURATION}s", "--latency",
                          "-s", script.name, url], capture_output=True, text=True, timeout=DURATION + 30).stdout
    after = cpu_ticks(pid)
    os.unlink(script.name)
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    requests = int(re.search(r"^\s*(\d+) requests in", out, re.M).group(1))
    def pct(p):
        m = re.search(rf"^\s+{p}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        value, unit = float(m.group(1)), m.group(2)
        return value * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    cpu_us = (after - before) / CLK_TCK * 1e6 / requests if requests else float("nan")
    return {"rps": rps, "p50": pct(50), "p99": pct(99), "errors": int(non2xx.group(1)) if non2xx else 0,
            "requests": requests, "cpu_us": cpu_us}


def stop(proc, sig=signal.SIGTERM):
    """Stops one process this script started (by its handle), if still running."""
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def start_server():
    log = open(LOG, "w")
    started = time.monotonic()
    proc = subprocess.Popen([SERVER, "serve"], env=ENV, stdout=log, stderr=log)
    return proc, started


def rmcp_tools_list():
    status, body = post(f"http://127.0.0.1:{RMCP_PORT}/mcp", RMCP_HEADERS, RMCP_BODY, timeout=1)
    tools = json.loads(body)["result"]["tools"]
    if status != 200 or len(tools) != RMCP_TOOLS:
        raise SystemExit(f"rmcp peer answered {status} with {len(tools)} tools")
    return tools


def ceiling_answer():
    status, _ = post(f"http://127.0.0.1:{CEILING_PORT}/", {"content-type": "application/json"}, CEILING_BODY, timeout=1)
    return status


def startup_ms(cmd, env, first_answer, runs=5):
    """Median of `runs` starts: process start → first_answer() returned."""
    times = []
    for _ in range(runs):
        started = time.monotonic()
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL)
        try:
            wait_for(first_answer, cmd[0])
            times.append((time.monotonic() - started) * 1000)
        finally:
            stop(proc)
    return statistics.median(times)


def main():
    ports = (CEILING_PORT, RMCP_PORT) if PEERS_ONLY else (PORT, ISSUER_PORT, CEILING_PORT, RMCP_PORT)
    for port in ports:
        if not free(port):
            raise SystemExit(f"port {port} is taken")
    for binary in (CEILING, RMCP) if PEERS_ONLY else (SERVER, CEILING, RMCP):
        if not os.access(binary, os.X_OK):
            raise SystemExit(f"{binary} is missing: run scripts/bench.sh")

    startup = {"ceiling": startup_ms([CEILING], CEILING_ENV, ceiling_answer),
               "rmcp": startup_ms([RMCP], RMCP_ENV, rmcp_tools_list)}

    token = None
    if not PEERS_ONLY:
        subprocess.run([SERVER, "create-table"], env=ENV, check=True)
        subprocess.run([SERVER, "seed"], env=ENV, check=True)
        token = subprocess.run([SERVER, "dev-token"], env=dict(ENV, AUD="mcp"), check=True,
                               capture_output=True, text=True).stdout.strip()
        # Process start to first answered request (median of 5 starts).
        health, first_mcp = [], []
        discover_headers, discover_body = scenarios(token)[0][1:]
        for _ in range(5):
            proc, started = start_server()
            try:
                wait_for(get_ok(f"http://127.0.0.1:{PORT}/health"), "/health")
                health.append((time.monotonic() - started) * 1000)
                status, _ = post(f"http://127.0.0.1:{PORT}/mcp", discover_headers, discover_body)
                assert status == 200
                first_mcp.append((time.monotonic() - started) * 1000)
            finally:
                stop(proc, signal.SIGINT)
        startup["health"], startup["discover"] = statistics.median(health), statistics.median(first_mcp)

    procs = {}
    rows, peer_rows = [], []
    rss = {}
    try:
        procs["ceiling"] = subprocess.Popen([CEILING], env=CEILING_ENV)
        procs["rmcp"] = subprocess.Popen([RMCP], env=RMCP_ENV)
        if not PEERS_ONLY:
            procs["server"], _ = start_server()
            wait_for(get_ok(f"http://127.0.0.1:{PORT}/health"), "/health")
            for name, headers, body in scenarios(token):
                # Warm: the first call loads the JWKS.
                post(f"http://127.0.0.1:{PORT}/mcp", headers, body)
        for _ in range(3):
            wait_for(ceiling_answer, "ceiling")
            wait_for(rmcp_tools_list, "rmcp peer")
        idle = {k: rss_kib(p.pid)[0] for k, p in procs.items()}

        for c in (1, 32):
            r = wrk(f"http://127.0.0.1:{CEILING_PORT}/", {"content-type": "application/json"}, CEILING_BODY, c,
                    procs["ceiling"].pid)
            peer_rows.append(("ceiling (fixed JSON)", c, r))
        ceiling_results = {c: r for _, c, r in peer_rows}
        for c in (1, 32):
            r = wrk(f"http://127.0.0.1:{RMCP_PORT}/mcp", RMCP_HEADERS, RMCP_BODY, c, procs["rmcp"].pid)
            peer_rows.append(("rmcp tools/list (2025-06-18)", c, r))
        if not PEERS_ONLY:
            for name, headers, body in scenarios(token):
                for c in (1, 32):
                    r = wrk(f"http://127.0.0.1:{PORT}/mcp", headers, body, c, procs["server"].pid)
                    rows.append((name, c, r))
        for k, p in procs.items():
            loaded, peak = rss_kib(p.pid)
            rss[k] = (idle[k], loaded, peak)
    finally:
        for k, p in procs.items():
            stop(p, signal.SIGINT if k == "server" else signal.SIGTERM)

    discover_cpu = {c: r["cpu_us"] for name, c, r in rows if name.startswith("server/discover")}

    def row(name, c, r, vs_discover="—"):
        ce = ceiling_results[c]
        return (f"| {name} | {c} | {r['rps']:.0f} | {r['rps'] / ce['rps']:.2f} | {r['p50']:.3f} | "
                f"{r['p50'] / ce['p50']:.1f}× | {r['p99']:.3f} | {r['p99'] / ce['p99']:.1f}× | {r['errors']} | "
                f"{r['cpu_us']:.1f} | {vs_discover} |")

    table = ["| Request | Conc. | req/s | ratio | p50 ms | ratio | p99 ms | ratio | non-2xx | CPU µs/req | CPU vs discover |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    table += [row(name, c, r) for name, c, r in peer_rows]
    for name, c, r in rows:
        base = discover_cpu.get(c)
        table.append(row(name, c, r, f"{r['cpu_us'] / base:.2f}×" if base else "—"))

    servers = [("ceiling", "ceiling"), ("rmcp", "rmcp peer")] + ([] if PEERS_ONLY else [("server", "this server")])
    memory = ["| Memory (RSS) | " + " | ".join(label for _, label in servers) + " |",
              "|---|" + "---:|" * len(servers)]
    for i, what in enumerate(("idle (after warm-up)", "after the load runs", "peak (VmHWM)")):
        memory.append(f"| {what} | " + " | ".join(f"{rss[k][i] / 1024:.1f} MiB" for k, _ in servers) + " |")
    start = ["| Start-up (median of 5): process start → first answered request | ms |", "|---|---:|",
             f"| ceiling: fixed body | {startup['ceiling']:.1f} |",
             f"| rmcp peer: `tools/list` with the bearer | {startup['rmcp']:.1f} |"]
    if not PEERS_ONLY:
        start += [f"| this server: `/health` | {startup['health']:.1f} |",
                  f"| this server: `server/discover` (JWKS fetch, DynamoDB client) | {startup['discover']:.1f} |"]

    mib = lambda n: f"{n / 1048576:.1f} MiB"
    if PEERS_ONLY:
        print("\n".join(table + [""] + start + [""] + memory +
                        ["", f"rmcp peer release binary: {mib(os.path.getsize(RMCP))}"]))
        return

    ours = {(name, c): r["cpu_us"] for name, c, r in rows}
    theirs = {c: r["cpu_us"] for name, c, r in peer_rows if name.startswith("rmcp")}
    versus = ", ".join(f"{ours[('tools/list (2025-06-18)', c)] / theirs[c]:.2f}× (concurrency {c})" for c in (1, 32))

    # DynamoDB round trips per request type, from the request spans.
    trips = {}
    with open(LOG) as f:
        for line in f:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            span = entry.get("span") or {}
            message = entry.get("message", entry.get("fields", {}).get("message"))
            if message == "answered" and "dynamodb_calls" in span:
                key = f"{span.get('method', span.get('path'))} → {span.get('status')}"
                trips.setdefault(key, set()).add(span["dynamodb_calls"])

    size = os.path.getsize(SERVER)
    zipped = os.path.join(ROOT, ".local/bench-bootstrap.zip")
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        z.write(SERVER, "bootstrap")
    lambda_sizes = []
    for fn in ("kobana-inbox-mcp", "worker"):
        path = os.path.join(TARGET, f"lambda/{fn}/bootstrap")
        if os.path.exists(path):
            zpath = path + ".zip"
            zsize = os.path.getsize(zpath) if os.path.exists(zpath) else None
            lambda_sizes.append((fn, os.path.getsize(path), zsize))

    out = ["# Benchmark results", "",
           f"Measured by `make bench` on {time.strftime('%Y-%m-%d')}: release builds, loopback, wrk, {DURATION} s per run, "
           "rate limit off, JWKS warm, local DynamoDB (moto) behind the reads. Three servers side by side in one run: "
           "the ceiling (a minimal hyper server answering a fixed JSON body; every ratio is to it at the same "
           "concurrency), an rmcp peer (bench/rmcp-peer: the official Rust MCP SDK, Streamable HTTP, stateless, "
           "JSON responses, 21 tools, a static bearer compared byte for byte, no JWT and no database; it is sent a bare "
           "2025-06-18 `tools/list`, which rmcp's stateless mode answers with 200 and JSON, no `initialize` first) "
           "and this server. "
           "Every request to this server verifies its JWT (EdDSA); requests that act on a workspace also read DynamoDB "
           "(the membership, then the data), so here their throughput and latency are bound by the local DynamoDB "
           "server (moto, Python, one action at a time), not by this server.", "",
           "CPU µs/req is the server process's own CPU time (user + system, all threads) during the run over the "
           "requests wrk completed: it does not count the database's or wrk's CPU, so it holds on a busy machine. "
           f"Its resolution is one clock tick ({1000 / CLK_TCK:.0f} ms) per run over the requests in it, so rows with "
           "few requests (the DynamoDB-bound ones) are coarse: BENCH_SECONDS=15 sharpens them. "
           "CPU vs discover divides it by this server's `server/discover` (JWT check only) at the same concurrency. "
           f"CPU per request of this server's `tools/list (2025-06-18)` relative to the rmcp peer's: {versus}.", ""]
    out += table
    out += [""] + start + [""] + memory
    out += ["", "| Artefact | size |", "|---|---:|",
            f"| release binary (x86_64, this machine) | {mib(size)} |",
            f"| zipped (deflate -9) | {mib(os.path.getsize(zipped))} |",
            f"| rmcp peer release binary (for comparison) | {mib(os.path.getsize(RMCP))} |"]
    for fn, raw, z in lambda_sizes:
        out.append(f"| `make build` {fn} bootstrap | {mib(raw)} |")
        if z:
            out.append(f"| `make build` {fn} bootstrap.zip | {mib(z)} |")
    artefacts = os.path.join(ROOT, "bench/artefacts.md")
    if os.path.exists(artefacts):
        # Written by scripts/sizes.sh (two release builds, not part of this run).
        with open(artefacts) as f:
            out += ["", "The dev feature (development issuer, demo data, development subcommands), with and "
                    "without: `scripts/sizes.sh`.", ""] + f.read().strip().split("\n")
    out += ["", "| DynamoDB round trips per request (method → status) | calls |", "|---|---:|"]
    for key in sorted(trips):
        out.append(f"| {key} | {', '.join(str(v) for v in sorted(trips[key]))} |")
    results = "bench/results.md" if os.environ.get("BENCH_UPDATE") == "1" else ".local/bench/results.md"
    os.makedirs(os.path.dirname(os.path.join(ROOT, results)), exist_ok=True)
    with open(os.path.join(ROOT, results), "w") as f:
        f.write("\n".join(out) + "\n")
    print(f"wrote {results}", file=sys.stderr)
    print("\n".join(out))


if __name__ == "__main__":
    main()
