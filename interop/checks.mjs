// The checks an interop script makes: each prints `ok` or `FAIL`, and the
// closing line `interop <label>: N passed, N failed` that scripts/interop.sh sums.
let passed = 0;
let failed = 0;

export function check(name, ok, detail = '') {
    if (ok) {
        passed++;
        console.log(`  ok   ${name}`);
    } else {
        failed++;
        console.log(`  FAIL ${name}: ${typeof detail === 'string' ? detail : JSON.stringify(detail)}`);
    }
}

// Prints the closing line and exits: non-zero on a failure or no check at all.
export function finish(label) {
    console.log(`interop ${label}: ${passed} passed, ${failed} failed`);
    process.exit(failed || !passed ? 1 : 0);
}
