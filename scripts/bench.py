"""Side-by-side measurements of the release server against a ceiling.

Started by scripts/bench.sh (release binaries built, local DynamoDB up).
Everything listens on 127.0.0.1; every load run is bounded in time.
Writes bench/results.md.
"""
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import tempfile
import time
import urllib.request
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
SERVER = os.path.join(TARGET, "release/kobana-inbox-mcp")
CEILING = os.path.join(TARGET, "release/examples/ceiling")
PORT, ISSUER_PORT, CEILING_PORT = 3400, 3401, 3402
DURATION = int(os.environ.get("BENCH_SECONDS", "5"))
TABLE = f"bench-{os.getpid()}"
LOG = os.path.join(ROOT, ".local/bench-server.log")

ENV = dict(os.environ)
ENV.update({
    "PORT": str(PORT), "DEV_ISSUER_KEY": os.path.join(ROOT, ".local/bench-issuer.key"),
    "DEV_ISSUER_PORT": str(ISSUER_PORT), "TABLE_NAME": TABLE, "RATE_LIMIT_PER_MINUTE": "0",
    "LOG_FORMAT": "json", "RUST_LOG": "info",
})
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


def free(port):
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def wait_for(url, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=1) as r:
                return r.status
        except Exception:
            time.sleep(0.005)
    raise SystemExit(f"{url} did not answer")


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        fields = dict(line.split(":", 1) for line in f)
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


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


def wrk(url, headers, body, connections):
    script = tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False)
    lines = ['wrk.method = "POST"', f"wrk.body = {json.dumps(json.dumps(body))}"]
    lines += [f"wrk.headers[{json.dumps(k)}] = {json.dumps(v)}" for k, v in headers.items()]
    script.write("\n".join(lines) + "\n")
    script.close()
    threads = 1 if connections == 1 else 2
    out = subprocess.run(["wrk", "-t", str(threads), "-c", str(connections), "-d", f"{DURATION}s", "--latency",
                          "-s", script.name, url], capture_output=True, text=True, timeout=DURATION + 30).stdout
    os.unlink(script.name)
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    def pct(p):
        m = re.search(rf"^\s+{p}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        value, unit = float(m.group(1)), m.group(2)
        return value * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {"rps": rps, "p50": pct(50), "p99": pct(99), "errors": int(non2xx.group(1)) if non2xx else 0}


def start_server():
    log = open(LOG, "w")
    started = time.monotonic()
    proc = subprocess.Popen([SERVER, "serve"], env=ENV, stdout=log, stderr=log)
    return proc, started


def main():
    for port in (PORT, ISSUER_PORT, CEILING_PORT):
        if not free(port):
            raise SystemExit(f"port {port} is taken")
    subprocess.run([SERVER, "create-table"], env=ENV, check=True)
    subprocess.run([SERVER, "seed"], env=ENV, check=True)
    token = subprocess.run([SERVER, "dev-token"], env=dict(ENV, AUD="mcp"), check=True,
                           capture_output=True, text=True).stdout.strip()

    # Process start to first answered request (median of 5 starts).
    health, first_mcp = [], []
    discover_headers, discover_body = scenarios(token)[0][1:]
    for _ in range(5):
        proc, started = start_server()
        wait_for(f"http://127.0.0.1:{PORT}/health")
        health.append((time.monotonic() - started) * 1000)
        req = urllib.request.Request(f"http://127.0.0.1:{PORT}/mcp", data=json.dumps(discover_body).encode(),
                                     headers=discover_headers, method="POST")
        with urllib.request.urlopen(req, timeout=10) as r:
            assert r.status == 200
        first_mcp.append((time.monotonic() - started) * 1000)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=10)

    proc, _ = start_server()
    wait_for(f"http://127.0.0.1:{PORT}/health")
    ceiling = subprocess.Popen([CEILING], env=dict(os.environ, PORT=str(CEILING_PORT)))
    wait_for(f"http://127.0.0.1:{CEILING_PORT}/")
    rows = []
    try:
        for name, headers, body in scenarios(token):
            # Warm: the first call loads the JWKS.
            req = urllib.request.Request(f"http://127.0.0.1:{PORT}/mcp", data=json.dumps(body).encode(),
                                         headers=headers, method="POST")
            urllib.request.urlopen(req, timeout=10).read()
        idle_rss, _ = rss_kib(proc.pid)
        ceiling_results = {c: wrk(f"http://127.0.0.1:{CEILING_PORT}/", {"content-type": "application/json"},
                                  {"jsonrpc": "2.0", "id": 1, "method": "x"}, c) for c in (1, 32)}
        for name, headers, body in scenarios(token):
            for c in (1, 32):
                r = wrk(f"http://127.0.0.1:{PORT}/mcp", headers, body, c)
                rows.append((name, c, r, ceiling_results[c]))
        loaded_rss, peak_rss = rss_kib(proc.pid)
    finally:
        ceiling.terminate()
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=10)

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
        path = os.path.join(ROOT, f"target/lambda/{fn}/bootstrap")
        if os.path.exists(path):
            zpath = path + ".zip"
            zsize = os.path.getsize(zpath) if os.path.exists(zpath) else None
            lambda_sizes.append((fn, os.path.getsize(path), zsize))

    mib = lambda n: f"{n / 1048576:.1f} MiB"
    out = ["# Benchmark results", "",
           f"Measured by `make bench` on {time.strftime('%Y-%m-%d')}: release build, loopback, wrk, {DURATION} s per run, "
           "rate limit off, JWKS warm, local DynamoDB (moto) behind the reads. "
           "Ratios are to a minimal hyper server answering a fixed JSON body (the ceiling). "
           "Every request verifies its JWT (EdDSA); requests that act on a workspace also read DynamoDB "
           "(the membership, then the data), so here they are bound by the local DynamoDB server "
           "(moto, Python, one action at a time), not by this server.", "",
           "| Request | Conc. | req/s | ratio | p50 ms | ratio | p99 ms | ratio | non-2xx |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for c in (1, 32):
        r = ceiling_results[c]
        out.append(f"| ceiling (fixed JSON) | {c} | {r['rps']:.0f} | 1.00 | {r['p50']:.3f} | 1.00 | {r['p99']:.3f} | 1.00 | {r['errors']} |")
    for name, c, r, ce in rows:
        out.append(f"| {name} | {c} | {r['rps']:.0f} | {r['rps'] / ce['rps']:.2f} | {r['p50']:.3f} | "
                   f"{r['p50'] / ce['p50']:.1f}× | {r['p99']:.3f} | {r['p99'] / ce['p99']:.1f}× | {r['errors']} |")
    out += ["", "| Start-up (median of 5) | ms |", "|---|---:|",
            f"| process start → first answered `/health` | {statistics.median(health):.1f} |",
            f"| process start → first answered `server/discover` (JWKS fetch, DynamoDB client) | {statistics.median(first_mcp):.1f} |",
            "", "| Memory | RSS |", "|---|---:|",
            f"| idle (after warm-up) | {idle_rss / 1024:.1f} MiB |",
            f"| after the load runs | {loaded_rss / 1024:.1f} MiB |",
            f"| peak | {peak_rss / 1024:.1f} MiB |",
            "", "| Artefact | size |", "|---|---:|",
            f"| release binary (x86_64, this machine) | {mib(size)} |",
            f"| zipped (deflate -9) | {mib(os.path.getsize(zipped))} |"]
    for fn, raw, z in lambda_sizes:
        out.append(f"| `make build` {fn} bootstrap | {mib(raw)} |")
        if z:
            out.append(f"| `make build` {fn} bootstrap.zip | {mib(z)} |")
    out += ["", "| DynamoDB round trips per request (method → status) | calls |", "|---|---:|"]
    for key in sorted(trips):
        out.append(f"| {key} | {', '.join(str(v) for v in sorted(trips[key]))} |")
    os.makedirs(os.path.join(ROOT, "bench"), exist_ok=True)
    with open(os.path.join(ROOT, "bench/results.md"), "w") as f:
        f.write("\n".join(out) + "\n")
    print("\n".join(out))


if __name__ == "__main__":
    main()
