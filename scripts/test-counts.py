#!/usr/bin/env python3
"""What one `make test` ran, counted from each stage's own output (so no
document has to carry a number that goes stale): the cargo test binaries'
`test result:` lines, the recorded events on disk, and the summary line each
check beside the cargo tests prints. Writes `.local/test-counts.md` and
prints it; `make test` calls it last. A stage that did not run (a filtered
run) is left out."""

import pathlib
import re
import sys

LOCAL = pathlib.Path(".local")


def read(name):
    path = LOCAL / name
    return path.read_text(errors="replace") if path.exists() else ""


def cargo_counts(log):
    """Passed tests per test binary kind: unit (the library and binaries), integration (tests/)."""
    counts = {}
    kind = None
    for line in log.splitlines():
        running = re.match(r"\s*Running (unittests )?(\S+)", line)
        if running:
            kind = "unit" if running.group(1) else "integration"
            continue
        if line.strip().startswith("Doc-tests"):
            kind = "doc"
            continue
        result = re.match(r"test result: \w+\. (\d+) passed; (\d+) failed", line)
        if result and kind:
            passed, failed = map(int, result.groups())
            total = counts.setdefault(kind, [0, 0])
            total[0] += passed
            total[1] += failed
    return counts


def last(pattern, text):
    found = re.findall(pattern, text)
    return found[-1] if found else None


def main():
    rows = []
    cargo = cargo_counts(read("cargo-tests.log"))
    for kind in ("unit", "integration", "doc"):
        if kind in cargo:
            passed, failed = cargo[kind]
            rows.append((f"cargo tests, {kind}", f"{passed} passed, {failed} failed"))
    events = [p for p in pathlib.Path("events").glob("*.json") if not p.name.endswith(".expected.json")]
    if cargo:
        rows.append(("recorded events replayed", f"{len(events)} files in events/"))
    interop = last(r"interop: (\d+) passed, (\d+) failed", read("interop.log"))
    if interop:
        rows.append(("SDK interop checks", f"{interop[0]} passed, {interop[1]} failed"))
    cases = last(r"(\d+) generated, (\d+) passed", read("api-check.log"))
    if cases:
        rows.append(("API check (schemathesis) cases", f"{cases[0]} generated, {cases[1]} passed"))
    docs = last(r"doc-examples: (\d+) blocks ran, (\d+) passed, (\d+) failed", read("doc-examples.log"))
    if docs:
        rows.append(("documentation examples", f"{docs[1]} of {docs[0]} blocks passed"))
    run_checks = read("run-check.log")
    if run_checks:
        ok = len(re.findall(r"^  ok ", run_checks, re.M))
        failed = len(re.findall(r"^  FAIL ", run_checks, re.M))
        rows.append(("make run checks", f"{ok} passed, {failed} failed"))
    conformance = last(r"conformance: (fixtures .*)", read("conformance.log"))
    if conformance:
        rows.append(("conformance runner", conformance))
    if not rows:
        return 0
    text = "| What ran | Count |\n|---|---|\n" + "".join(f"| {name} | {count} |\n" for name, count in rows)
    (LOCAL / "test-counts.md").write_text(text)
    sys.stderr.write("\nmake test: what ran (.local/test-counts.md)\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
