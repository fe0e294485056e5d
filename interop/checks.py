"""The checks an interop script makes: each prints `ok` or `FAIL`, and the
closing line `interop <label>: N passed, N failed` that scripts/interop.sh sums."""

import sys

passed, failed = 0, 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"  ok   {name}")
    else:
        failed += 1
        print(f"  FAIL {name}: {detail}")


def finish(label):
    """Prints the closing line and exits: non-zero on a failure or no check at all."""
    print(f"interop {label}: {passed} passed, {failed} failed")
    sys.exit(1 if failed or passed == 0 else 0)
