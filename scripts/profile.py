"""Instruction counts per request under callgrind: this server's
`tools/call emails_get` and the bare-SDK peer's `GetItem`, side by side.

Run by scripts/profile.sh (`make profile`), which builds both release
binaries with their symbols kept and starts the local database. Each server
runs under `valgrind --tool=callgrind` with instrumentation off; after a warm-up
(JWKS, membership, the first connection) instrumentation is switched on, N
requests are sent over one keep-alive connection, and the counts are
dumped. Instruction counts do not depend on the machine's load, so two runs
on a busy machine compare. Writes .local/profile/<name>.callgrind and prints
instructions per request and the functions that cost most (inclusive).

The rmcp peer's `tools/list` too, when `make bench` has built it (it has no
symbols: its total only).

Environment: PROFILE_REQUESTS (default 300), PROFILE_TOP (default 40),
PROFILE_ONLY=server|sdk|rmcp, PROFILE_BASELINE_BIN (a build of this server at
another commit, as `make bench` keeps it for BENCH_BASELINE: profiled the same
way in the same run, each request's count divided by the baseline's — the
load-independent before/after figure).
"""
import collections
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ["CARGO_TARGET_DIR"]
OUT = os.path.join(ROOT, ".local/profile")
N = int(os.environ.get("PROFILE_REQUESTS", "300"))
TOP = int(os.environ.get("PROFILE_TOP", "40"))
ONLY = os.environ.get("PROFILE_ONLY", "")
BASELINE = os.environ.get("PROFILE_BASELINE_BIN", "")
TABLE = f"profile-{os.getpid()}"
EMAIL = "eml_telecom_nov"
BEARER = "profile-bearer"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def callgrind(cmd, env, out):
    return subprocess.Popen(["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
                             *cmd], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def control(pid, *args):
    subprocess.run(["callgrind_control", *args, str(pid)], check=True, stdout=subprocess.DEVNULL)


def request(conn, path, headers, body):
    conn.request("POST", path, json.dumps(body), headers)
    answer = conn.getresponse()
    answer.read()
    return answer.status


def first_answer(port, proc, name, send):
    """A connection to a server starting under valgrind, and `send(conn)`'s
    result once it answers."""
    deadline = time.monotonic() + 120
    while True:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            return conn, send(conn)
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                raise SystemExit(f"{name} did not start under valgrind")
            time.sleep(0.2)


def mcp_call(token, method, params, name=None, version="2026-07-28"):
    """The path, headers and body of an MCP request in `version` (routing
    headers and `_meta` in 2026-07-28)."""
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream",
               "authorization": f"Bearer {token}", "x-workspace-id": "ws_main", "mcp-protocol-version": version}
    if version == "2026-07-28":
        headers["mcp-method"] = method
        if name:
            headers["mcp-name"] = name
        params = dict(params, _meta={"io.modelcontextprotocol/protocolVersion": version,
                                     "io.modelcontextprotocol/clientCapabilities": {}})
    return "/mcp", headers, {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def drive(port, phases, proc, out, name):
    """phases: [(label, path, headers, body)]; one dump per phase."""
    conn, status = first_answer(port, proc, name, lambda conn: request(conn, *phases[0][1:]))
    if status != 200:
        raise SystemExit(f"{name} answered {status}")
    for _ in range(20):  # warm: caches, the connection pool, lazy statics
        for phase in phases:
            request(conn, *phase[1:])
    for label, *call in phases:
        control(proc.pid, "-i", "on")
        for _ in range(N):
            if request(conn, *call) != 200:
                raise SystemExit(f"{name} {label} failed")
        control(proc.pid, "-i", "off")
        control(proc.pid, "-d")
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    results = {}
    for i, (label, *_) in enumerate(phases, start=1):
        report = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", f"{out}.{i}"],
                                capture_output=True, text=True).stdout
        total = next(int(l.split()[0].replace(",", "")) for l in report.splitlines()
                     if l.strip().endswith("PROGRAM TOTALS"))
        print(f"\n== {name} {label}: {total / N:,.0f} instructions per request ({N} requests) ==")
        rows = [l.strip() for l in report.splitlines() if l.strip()[:1].isdigit() and "PROGRAM TOTALS" not in l]
        for line in rows[:TOP]:
            count, _, fn = line.partition(" ")
            count = int(count.replace(",", ""))
            print(f"{count / N:>10,.0f}  {count / total * 100:5.1f}%  {fn.strip()[:160]}")
        results[label] = total / N
    return results


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        os.unlink(os.path.join(OUT, f))
    server = os.path.join(TARGET, "profiling/kobana-inbox-mcp")
    peer = os.path.join(TARGET, "profiling/examples/sdk_peer")
    port, issuer_port = free_port(), free_port()
    env = dict(os.environ, PORT=str(port), DEV_ISSUER_PORT=str(issuer_port), TABLE_NAME=TABLE,
               DEV_ISSUER_KEY=os.path.join(ROOT, ".local/bench-issuer.key"), RATE_LIMIT_PER_MINUTE="0",
               LOG_FORMAT="json", RUST_LOG="info", LOCAL_JOB_POLL_MS="0")  # as make bench runs it
    subprocess.run([server, "create-table"], env=env, check=True, stdout=subprocess.DEVNULL)
    subprocess.run([server, "seed"], env=env, check=True, stdout=subprocess.DEVNULL)
    results = {}
    if ONLY in ("", "sdk"):
        peer_port = free_port()
        peer_env = dict(os.environ, PORT=str(peer_port), BEARER=BEARER, TABLE_NAME=TABLE,
                        PK="T#org_demo#W#ws_main", SK=f"EML#{EMAIL}")
        out = os.path.join(OUT, "sdk.callgrind")
        phase = ("GetItem", "/", {"content-type": "application/json", "authorization": f"Bearer {BEARER}"},
                 {"id": EMAIL})
        results.update(drive(peer_port, [phase], callgrind([peer], peer_env, out), out, "bare-SDK peer"))
    def profile_server(binary, server_port, out, name):
        # The token's audience is the server's own URL: its port.
        token = subprocess.run([binary, "dev-token"], env=dict(env, AUD="mcp", PORT=str(server_port)), check=True,
                               capture_output=True, text=True).stdout.strip()
        def phase(label, method, params, tool=None):
            return label, *mcp_call(token, method, params, tool)
        phases = [phase("tools/call emails_get", "tools/call", {"name": "emails_get", "arguments": {"id": EMAIL}},
                        "emails_get"),
                  phase("server/discover", "server/discover", {})]
        return drive(server_port, phases, callgrind([binary, "serve"], dict(env, PORT=str(server_port)), out), out,
                     name)
    if ONLY in ("", "server"):
        results.update(profile_server(server, port, os.path.join(OUT, "server.callgrind"), "this server"))
        if BASELINE:
            before = profile_server(BASELINE, free_port(), os.path.join(OUT, "baseline.callgrind"), "the baseline")
            for label, count in before.items():
                print(f"{label}: {results[label]:,.0f} ÷ {count:,.0f} at the baseline = "
                      f"{results[label] / count:.3f}× instructions per request")
    rmcp = os.path.join(TARGET, "rmcp-peer/release/rmcp-peer")
    if ONLY in ("", "rmcp") and os.access(rmcp, os.X_OK):
        rmcp_port = free_port()
        out = os.path.join(OUT, "rmcp.callgrind")
        phase = ("tools/list", "/mcp", {"content-type": "application/json", "accept": "application/json, text/event-stream",
                                        "mcp-protocol-version": "2025-06-18", "authorization": f"Bearer {BEARER}"},
                 {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
        results.update({f"rmcp {k}": v for k, v in drive(rmcp_port, [phase], callgrind(
            [rmcp], dict(os.environ, PORT=str(rmcp_port), BEARER=BEARER), out), out, "rmcp peer").items()})
    if "server/discover" in results and "rmcp tools/list" in results:
        print(f"server/discover ÷ rmcp tools/list: {results['server/discover'] / results['rmcp tools/list']:.2f}× "
              "instructions per request")
    if "GetItem" in results and "tools/call emails_get" in results:
        print(f"\nemails_get ÷ bare-SDK GetItem: {results['tools/call emails_get'] / results['GetItem']:.2f}× "
              "instructions per request")


if __name__ == "__main__":
    main()
