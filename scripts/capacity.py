#!/usr/bin/env python3
"""The capacity model's figures for docs/capacity.md, from what the tests
measured (`tests/it/capacity.rs` writes .local/capacity.json and
.local/capacity-events.json during `make test`):

- per recorded event (a REST route, an MCP method or tool): DynamoDB
  requests, read and write units, and the cost of a million such calls
  (Lambda, API Gateway, DynamoDB on demand, CloudWatch Logs) at the prices
  below;
- per access pattern of the busy path: the units one ingestion puts on each
  key, and the ingestions per second at which that key reaches its limit,
  with one write shard and with the busiest workspace's count.

  scripts/capacity.py           print the tables (Markdown)
  scripts/capacity.py --write   replace the generated part of docs/capacity.md
  scripts/capacity.py --check   fail when docs/capacity.md's generated part is
                                not what the last measurement gives (make test)

Prices (US East, N. Virginia; list prices as of 2026-12-01, stated here so a
reader can redo the sums): Lambda arm64 $0.0000133334 per GB-second and $0.20
per million requests; API Gateway HTTP API $1.00 per million requests (first
300 million a month); DynamoDB on demand $0.625 per million write request
units and $0.125 per million read request units; CloudWatch Logs ingestion
$0.50 per GB. Assumptions: the function's memory is the template's (256 MB);
a call is billed 4 ms of its own work plus 4 ms per DynamoDB request (the
requests of one call are mostly sequential); a call writes about 1 KB of log
and metric lines.
"""

import json
import math
import os
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), ".."))
DOC = os.path.join(ROOT, "docs/capacity.md")
BEGIN, END = "<!-- capacity.py: begin -->", "<!-- capacity.py: end -->"

LAMBDA_GB_SECOND = 0.0000133334
LAMBDA_REQUEST = 0.20 / 1e6
MEMORY_GB = 256 / 1024
API_GATEWAY_REQUEST = 1.00 / 1e6
WRITE_UNIT = 0.625 / 1e6
READ_UNIT = 0.125 / 1e6
LOG_GB = 0.50
LOG_BYTES_PER_CALL = 1024
MS_OWN, MS_PER_REQUEST = 4, 4
WRITE_LIMIT, READ_LIMIT, HEADROOM = 1000.0, 3000.0, 0.5


def cost_per_million(event):
    ms = MS_OWN + MS_PER_REQUEST * event["requests"]
    per_call = (
        LAMBDA_REQUEST
        + LAMBDA_GB_SECOND * MEMORY_GB * ms / 1000
        + API_GATEWAY_REQUEST
        + WRITE_UNIT * event["write_units"]
        + READ_UNIT * event["read_units"]
        + LOG_GB * LOG_BYTES_PER_CALL / 1e9
    )
    return per_call * 1e6


def pattern(key):
    """A key class with the demo's ids replaced by what they stand for."""
    index, _, value = key.partition(" ")
    value = value.replace("org_demo", "{org}").replace("ws_main", "{ws}")
    parts = value.split("#")
    value = "#".join("{webhook}" if p.startswith("whk_") else p for p in parts)
    value = value.replace("#RL#usr_admin", "#RL#{person}").replace("#RL#svc_mailpipe", "#RL#{pipeline}")
    value = value.replace("#RLI#svc_mailpipe", "#RLI#{pipeline}")
    if "#RL#" in value or "#RLI#" in value:
        # The counters of one budget (`store::rate_limit`): one row.
        head, _, last = value.rpartition("#")
        value = f"{head}#{{counter}}" if last.isdigit() else f"{value}#{{counter}}"
    value = value.replace("#U#usr_admin", "#U#{person}").replace("#U#svc_mailpipe", "#U#{pipeline}")
    return f"{index} `{value}`"


def saturation(load, shards):
    """Ingestions per second at which a key class reaches its limit."""
    write = load["write"] - load["sharded_write"] + load["sharded_write"] / shards
    read = load["read"] - load["sharded_read"] + load["sharded_read"] / shards
    rates = [WRITE_LIMIT / write if write > 0 else math.inf, READ_LIMIT / read if read > 0 else math.inf]
    return min(rates)


def fmt_rate(rate):
    return "—" if math.isinf(rate) else f"{rate:,.0f}"


def tables():
    with open(os.path.join(ROOT, ".local/capacity-events.json")) as f:
        events = json.load(f)
    with open(os.path.join(ROOT, ".local/capacity.json")) as f:
        model = json.load(f)
    out = ["### Each recorded call", "",
           "| Event (route, method or tool) | status | DynamoDB requests | write units | read units | $ per million calls |",
           "|---|---:|---:|---:|---:|---:|"]
    for name, e in sorted(events.items()):
        out.append(f"| `{name}` | {e['status']} | {e['requests']} | {e['write_units']:g} | {e['read_units']:g} | "
                   f"{cost_per_million(e):.2f} |")
    shards = model["busiest"]["shards"]
    out += ["", "### The busy path, per key", "",
            f"One ingestion (the call, its job, one read of the e-mail, a tenth of a list). Ingestions per second at "
            f"which each key reaches its limit, with one write shard and with {shards}:", "",
            "| Key | write units | of them sharded | read units | of them sharded | saturates at (1 shard) | "
            f"saturates at ({shards} shards) |", "|---|---:|---:|---:|---:|---:|---:|"]
    merged = {}
    for key, load in model["per_ingestion_units"].items():
        p = pattern(key)
        m = merged.setdefault(p, {"write": 0, "sharded_write": 0, "read": 0, "sharded_read": 0})
        for k in m:
            m[k] += load[k]
    for p, load in sorted(merged.items()):
        if "#RL#" in p or "#RLI#" in p:
            # Bounded by the budget: one counter per 30,000 requests a minute.
            out.append(f"| {p} | {load['write']:.2f} | — | — | — | budget-bound | budget-bound |")
            continue
        out.append(f"| {p} | {load['write']:.2f} | {load['sharded_write']:.2f} | {load['read']:.2f} | "
                   f"{load['sharded_read']:.2f} | {fmt_rate(saturation(load, 1))} | {fmt_rate(saturation(load, shards))} |")
    busiest = model["busiest"]
    out += ["", f"The busiest organization ({model['busiest_rate_per_s']:,.0f} ingestions/s) needs {shards} write shards: "
            f"its hottest key, {pattern(busiest['hottest_key'])}, then runs at "
            f"{busiest['share_of_limit'] * 100:.0f} % of its limit (with one shard: "
            f"{model['busiest_with_one_shard']['share_of_limit'] * 100:,.0f} %). Shards by rank (Zipf, "
            f"{model['organizations']:,} organizations, {model['service_rate_per_s']:,.0f} ingestions/s in all): " +
            ", ".join(f"rank {r['rank']} ({r['rate']:,.0f}/s): {r['shards']}" for r in model["shards_by_rank"]) +
            ". Keys shared by every organization: " +
            (", ".join(k["key"] for k in model["shared_keys"]) or "none") + "."]
    return "\n".join(out) + "\n"


def main():
    text = tables()
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if not mode:
        print(text)
        return 0
    with open(DOC) as f:
        doc = f.read()
    start, end = doc.index(BEGIN) + len(BEGIN), doc.index(END)
    if mode == "--write":
        with open(DOC, "w") as f:
            f.write(doc[:start] + "\n" + text + doc[end:])
        print(f"wrote {DOC}")
        return 0
    committed = doc[start:end].strip()
    # The per-call table is exact; the busy path's figures move a little
    # with the random shards of the sampled ids, so only the per-call part,
    # and the shard count of the busiest organization, must match.
    per_call = lambda t: t.split("### The busy path")[0].strip()
    shards_line = lambda t: [l for l in t.splitlines() if l.startswith("The busiest organization")][0].split(":")[0]
    if per_call(committed) != per_call(text.strip()) or shards_line(committed) != shards_line(text):
        print("docs/capacity.md is not what the last measurement gives: run scripts/capacity.py --write", file=sys.stderr)
        return 1
    print("docs/capacity.md: the generated part matches the measurement")
    return 0


if __name__ == "__main__":
    sys.exit(main())
