#!/usr/bin/env bash
# `make fuzz`: every fuzz target (fuzz/fuzz_targets/) for FUZZ_SECS seconds
# each (default 60), with cargo-fuzz and libFuzzer. Fails on a crash or a
# broken invariant; the reproducer is left in fuzz/artifacts/<target>/.
# Corpora start from the recorded events' bodies and the test fixtures.
#
# The machine has one stable toolchain: libFuzzer's coverage instrumentation
# needs no sanitizer, so the targets build with `--sanitizer none`, and
# RUSTC_BOOTSTRAP=1 lets cargo-fuzz pass the few unstable flags it uses.
set -euo pipefail
cd "$(dirname "$0")/.."

SECS="${FUZZ_SECS:-60}"
TOOLS=.local/cargo-fuzz
if [ ! -x "$TOOLS/bin/cargo-fuzz" ]; then
  echo "installing cargo-fuzz into $TOOLS ..." >&2
  cargo install --locked --quiet --root "$TOOLS" cargo-fuzz
fi
export PATH="$PWD/$TOOLS/bin:$PATH" RUSTC_BOOTSTRAP=1

python3 scripts/fuzz-seeds.py
targets=$(sed -n 's/^name = "\([a-z_]*\)"$/\1/p' fuzz/Cargo.toml | grep -v kobana-inbox-fuzz)
summary=.local/fuzz-summary.txt
: >"$summary"
failed=0
for target in $targets; do
  echo "fuzz: $target for $SECS s" >&2
  log=".local/fuzz-$target.log"
  if cargo fuzz run --sanitizer none "$target" "fuzz/corpus/$target" -- \
      -max_total_time="$SECS" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 >"$log" 2>&1; then
    result=ok
  else
    result=FAILED
    failed=1
    tail -n 30 "$log" >&2
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  corpus=$(find "fuzz/corpus/$target" -type f | wc -l)
  printf '%-16s %-6s executions %-12s corpus %s\n' "$target" "$result" "${execs:-?}" "$corpus" | tee -a "$summary"
done
awk '{ for (i = 1; i <= NF; i++) if ($i == "executions") s += $(i + 1) } END { printf "fuzz: %d executions in all\n", s }' "$summary" | tee -a "$summary"
exit "$failed"
