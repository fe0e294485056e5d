#!/usr/bin/env python3
"""Summarises one run of the official conformance runner (scripts/conformance.sh).

    summary.py LABEL RESULTS_DIR BASELINE_YML

Reads every `checks.json` the runner wrote under RESULTS_DIR (`-o`), one
directory per scenario run, and the expected-failures baseline the run used
(`server:` entries, `scenario` or `scenario:check-id`). A scenario passes when
none of its checks is a FAILURE or a WARNING (the runner's own rule for a
baseline); it is not applicable when every such check is in the baseline (the
reason is the YAML comment there). Prints one line per
scenario and a closing line

    LABEL: P/T passed, N not applicable (K of them only warned), U unexpected failure(s)

and exits 1 when a failure is not in the baseline or a baseline entry no longer
fails (a stale entry, as the runner itself reports).
"""
import json
import re
import sys
from pathlib import Path


# The statuses the runner holds against a scenario when a baseline is given.
BAD = {"FAILURE", "WARNING"}


def baseline(path: Path) -> set[str]:
    entries = set()
    in_server = False
    for line in path.read_text().splitlines():
        stripped = line.split("#", 1)[0].rstrip()
        if not stripped:
            continue
        if re.match(r"^\S", stripped):
            in_server = stripped == "server:"
            continue
        m = re.match(r"^\s*-\s*(\S+)$", stripped)
        if in_server and m:
            entries.add(m.group(1))
    return entries


def scenario_of(directory: Path) -> str:
    # server-<scenario>-<ISO timestamp with dashes>
    m = re.match(r"^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$", directory.name)
    return m.group(1) if m else directory.name


def main() -> int:
    label, results, listed = sys.argv[1], Path(sys.argv[2]), baseline(Path(sys.argv[3]))
    # (wire, scenario) → its checks; the wire is the subdirectory, if any.
    scenarios: dict[tuple[str, str], list[dict]] = {}
    for checks in sorted(results.glob("**/checks.json")):
        wire = checks.parent.parent.relative_to(results).as_posix()
        key = ("" if wire == "." else wire, scenario_of(checks.parent))
        scenarios.setdefault(key, []).extend(json.loads(checks.read_text()))
    passed = not_applicable = warned = 0
    unexpected: list[str] = []
    used: set[str] = set()
    for (wire, name), checks in sorted(scenarios.items()):
        shown = f"{wire} {name}".strip()
        failing = sorted({c["id"] for c in checks if c.get("status") in BAD})
        only_warned = all(c.get("status") != "FAILURE" for c in checks)
        if not failing:
            passed += 1
            print(f"  ok    {shown}")
            continue
        excused = [f for f in failing if name in listed or f"{name}:{f}" in listed]
        used.update({name} if name in listed else {f"{name}:{f}" for f in excused})
        if len(excused) == len(failing):
            not_applicable += 1
            warned += only_warned
            print(f"  n/a   {shown} ({', '.join(failing)}{': warnings only' if only_warned else ''})")
        else:
            unexpected.append(shown)
            print(f"  FAIL  {shown} ({', '.join(f for f in failing if f not in excused)})")

    def passes(entry: str) -> bool:
        name, _, check = entry.partition(":")
        runs = [c for (_, n), checks in scenarios.items() if n == name for c in checks]
        statuses = {c.get("status") for c in runs if not check or c["id"] == check}
        # A check that did not run (its scenario stopped earlier) is no evidence either way.
        return bool(statuses) and not statuses & BAD and (not check or "SUCCESS" in statuses)

    stale = sorted(e for e in listed if e not in used and passes(e))
    for entry in stale:
        print(f"  STALE {entry} (in the baseline, but it passes)")
    total = len(scenarios)
    warnings = f" ({warned} of them only warned)" if warned else ""
    print(
        f"{label}: {passed}/{total} passed, {not_applicable} not applicable{warnings}, "
        f"{len(unexpected)} unexpected failure(s)"
    )
    return 1 if unexpected or stale else 0


if __name__ == "__main__":
    sys.exit(main())
