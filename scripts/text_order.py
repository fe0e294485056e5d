"""The order of the server's code in its binary: the functions a running
server executes, laid out first and together.

A release binary is ~12 MiB of machine code, of which a running server
executes ~3 MiB, scattered: the linker places functions in the order the
compiler emits them. The kernel maps a binary's pages on first touch, and 64
KiB around each touched page at once (fault-around), so scattered code makes
nearly all of the text resident (10 of 12 MiB), and the hot path spans more
pages and cache lines than it needs. Told the order (`lld
--symbol-ordering-file`), the linker puts the executed functions first —
the hottest at the very front — and the rest after them.

    python3 scripts/text_order.py generate CALLGRIND BINARY OUT
        `make text-order` (scripts/text-order.sh): the functions a callgrind run
        of the profiling build executed (from process start: start-up, the
        first requests, then a mix of requests), hottest first, written to
        OUT as `<key> <size>` lines.
    python3 scripts/text_order.py map ORDER OBJECT...
        The linker wrapper (scripts/ordered-cc): the same list in terms of the
        symbols of the objects being linked, one per line.
    python3 scripts/text_order.py check
        `make test`: the committed list is well formed and names are matched
        as the link needs.

A Rust symbol's name carries a hash that changes with the build settings and
the target (`…17h<hash>E`, `…Cs<hash>_…`), so the list keeps each name
without it, beside the function's size. Where several instances of a
generic function share a name, the size picks the one that ran; where no
size matches (another target, changed code), every instance is placed. A
function the list does not know (new code) is placed after the listed ones:
a stale list costs memory, never correctness.
"""
import collections
import os
import re
import subprocess
import sys


def key(symbol):
    """A symbol's name without what changes between builds of the same code."""
    symbol = re.sub(r"\.llvm\.\d+$", "", symbol)
    if symbol.startswith("_ZN"):
        return re.sub(r"17h[0-9a-f]{16}E$", "E", symbol)
    if symbol.startswith("_R"):
        return re.sub(r"Cs[0-9A-Za-z]*_", "C", symbol)
    return symbol


def functions(paths):
    """(symbol, size) of every function defined in the given objects or binaries."""
    out = subprocess.run(["nm", "--defined-only", "-S", *paths], capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTwW":
            yield parts[3], int(parts[1], 16)


def executed(callgrind, binary):
    """Instructions executed per function of `binary` in a callgrind output (not demangled)."""
    name = binary.rsplit("/", 1)[-1]
    objects, names, cost = {}, {}, collections.Counter()
    current_object, current = "", None
    call = False
    spec = re.compile(r"^(c?)(ob|fn)=\((\d+)\)(?: (.*))?$")
    for line in open(callgrind, errors="replace"):
        if line.startswith("calls="):
            # The next cost line is the call's inclusive cost, not this function's own.
            call = True
            continue
        if call and (line[:1].isdigit() or line[:1] in "+-*"):
            call = False
            continue
        match = spec.match(line.rstrip("\n"))
        if match:
            called, kind, number, text = match.groups()
            table = objects if kind == "ob" else names
            if text:
                table[number] = text
            if not called and kind == "ob":
                current_object = objects.get(number, "")
            elif not called:
                current = names.get(number, "") if current_object.endswith(name) else None
            continue
        if current and (line[:1].isdigit() or line[:1] in "+-*"):
            fields = line.split()
            if len(fields) >= 2 and fields[1].isdigit():
                # callgrind marks recursive activations `name'2`: the same function.
                cost[current.split("'", 1)[0]] += int(fields[1])
    return cost


# Code a CPU runs where callgrind runs another: valgrind hides the SHA
# extensions from the program, so under it SHA-256 (SigV4 signs every table
# call with it) runs the portable code, and on the machine the code that uses
# the extensions. Each pattern names the function callgrind sees; its twin,
# the one the machine runs, is listed right after it with the same rank.
NATIVE_TWINS = [
    (re.compile(r"^_ZN4sha26sha25611compress256E$"), re.compile(r"^_ZN4sha26sha2567x86_sha8compressE$")),
    (re.compile(r"^(aws_lc_\w+_)?sha256_block_data_order_(avx|ssse3|nohw)$"),
     re.compile(r"^(aws_lc_\w+_)?sha256_block_data_order_hw$")),
]


def twins(symbol, sizes):
    """The functions the machine runs in place of `symbol` (see NATIVE_TWINS)."""
    for seen, runs in NATIVE_TWINS:
        if seen.match(key(symbol)):
            yield from (s for s in sizes if runs.match(key(s)))


def generate(callgrind, binary, out):
    sizes = dict(functions([binary]))
    cost = executed(callgrind, binary)
    listed = [(count, symbol) for symbol, count in cost.items() if symbol in sizes]
    listed.sort(key=lambda entry: -entry[0])
    seen = set()
    with open(out, "w") as f:
        f.write("# scripts/text_order.py: the functions a running server executes, hottest first"
                " (regenerate with `make text-order`)\n")
        for symbol in (s for _, executed_symbol in listed for s in (executed_symbol, *twins(executed_symbol, sizes))):
            entry = (key(symbol), sizes[symbol])
            if entry not in seen:
                seen.add(entry)
                f.write(f"{entry[0]} {entry[1]}\n")
    # What callgrind saw run (the twins it did not see are listed, not counted).
    total = sum(sizes[s] for _, s in listed)
    print(f"{out}: {len(seen)} functions listed, {total / 1048576:.1f} MiB of "
          f"{sum(sizes.values()) / 1048576:.1f} MiB of functions executed")


def map_order(order, paths):
    for symbol in placement(open(order), functions(paths)):
        print(symbol)


def placement(order, defined):
    """The symbols of `defined` ((symbol, size) pairs) in the order of the
    list's lines, each once."""
    by_key = collections.defaultdict(list)
    for symbol, size in defined:
        by_key[key(symbol)].append((symbol, size))
    placed = set()
    for line in order:
        if line.startswith("#") or not line.strip():
            continue
        name, _, size = line.rstrip("\n").rpartition(" ")
        candidates = by_key.get(name, [])
        chosen = [s for s, n in candidates if str(n) == size] or [s for s, _ in candidates]
        if not candidates and not name.startswith(("_ZN", "_R")):
            # C code (aws-lc, mimalloc) comes from static libraries the wrapper
            # does not read; its names carry no hash: the linker finds them.
            chosen = [name]
        for symbol in chosen:
            if symbol not in placed:
                placed.add(symbol)
                yield symbol


def check():
    """`make test`: the list is well formed, and names are matched as the link needs."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "text-order.txt")
    lines = [l.rstrip("\n") for l in open(path) if not l.startswith("#")]
    for line in lines:
        name, _, size = line.rpartition(" ")
        assert name and size.isdigit() and name == key(name), f"{path}: bad line {line!r}"
    assert len(lines) > 1000, f"{path}: {len(lines)} functions; regenerate it (make text-order)"
    assert key("_ZN5tokio7runtime4task3raw4poll17hed9a6f8beadb6b2dE.llvm.123") == "_ZN5tokio7runtime4task3raw4pollE"
    assert key("_RNvMs0_NtCsjrHSEGnQ3l9_3std6threadNtB5_6Thread3new") == "_RNvMs0_NtC3std6threadNtB5_6Thread3new"
    defined = [("_ZN4core3fmt5write17h0000000000000001E", 40), ("_ZN4core3fmt5write17h0000000000000002E", 90),
               ("_ZN5serde2de4read17h00000000000000a1E", 12), ("_ZN5serde2de4read17h00000000000000a2E", 13),
               ("_ZN3app4main17h00000000000000ffE", 8)]
    order = ["# comment", "_ZN5serde2de4readE 99", "_ZN4core3fmt5writeE 90", "mi_free 173",
             "_ZN3old4goneE 5", "_ZN3app4mainE 8", "_ZN4core3fmt5writeE 90"]
    assert list(placement(order, defined)) == [
        "_ZN5serde2de4read17h00000000000000a1E", "_ZN5serde2de4read17h00000000000000a2E",  # no size matches: both
        "_ZN4core3fmt5write17h0000000000000002E",  # the size picks the instance that ran
        "mi_free",  # C: the linker finds it in its library
        "_ZN3app4main17h00000000000000ffE"], list(placement(order, defined))
    sizes = {"_ZN4sha26sha25611compress25617h0000000000000003E": 10298,
             "_ZN4sha26sha2567x86_sha8compress17h0000000000000004E": 947,
             "aws_lc_0_47_0_sha256_block_data_order_hw": 830, "aws_lc_0_47_0_sha512_block_data_order_avx": 900}
    assert list(twins("_ZN4sha26sha25611compress25617h0000000000000003E", sizes)) == [
        "_ZN4sha26sha2567x86_sha8compress17h0000000000000004E"]
    assert list(twins("aws_lc_0_47_0_sha256_block_data_order_avx", sizes)) == ["aws_lc_0_47_0_sha256_block_data_order_hw"]
    assert list(twins("_ZN4core3fmt5write17h0000000000000001E", sizes)) == []
    print(f"{path}: {len(lines)} functions; names matched as the link needs")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "generate":
        generate(*sys.argv[2:])
    elif len(sys.argv) >= 4 and sys.argv[1] == "map":
        map_order(sys.argv[2], sys.argv[3:])
    elif sys.argv[1:] == ["check"]:
        check()
    else:
        sys.exit(__doc__)
