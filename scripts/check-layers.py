#!/usr/bin/env python3
"""Keeps the crate's structure one-way (run by `make lint`).

Reads every `crate::…` and `super::…` path in `src/` (use lines and inline
paths), resolves each to the file that defines it, and fails when

- a module imports a layer above its own (see LAYERS), or
- the files import each other in a circle.

A parent declaring `mod child;` and using it (`child::Item`) is containment,
not an import; a child reaching back up (`super::…`, `crate::…`) is. Unit
test modules (`#[cfg(test)]`, last in a file) are not checked. `main.rs` and
`src/bin/` are composition roots outside the library and are not checked.
"""
import re
import sys
from pathlib import Path

# Lower number = lower layer. A file may import only its own top-level module
# or modules of a strictly lower layer.
LAYERS = {
    "domain": 0,
    "sys": 1, "expiring": 1, "gate": 1, "keyfile": 1, "telemetry": 1, "json": 1, "tls": 1,
    "store": 2, "auth": 2, "outbound": 2, "secrets": 2, "secret_store": 2,
    "api": 3, "worker": 3, "seed": 3, "dev": 3,
    "mcp": 4, "config": 4,
    "edge": 5, "conformance": 5,
    "app": 6, "cli": 6,
}

SRC = Path(__file__).resolve().parent.parent / "src"
PATH = re.compile(r"\b(crate|super)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
GROUP = re.compile(r"\b(crate|super)((?:::[A-Za-z_][A-Za-z0-9_]*)*)::\{([^;]*?)\}", re.S)


def module_of(path: Path) -> list[str]:
    """`src/api/mod.rs` → ["api"], `src/api/page.rs` → ["api", "page"]."""
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return parts


def file_of(parts: list[str]) -> Path | None:
    """The longest prefix of `parts` that is a file of the crate."""
    for n in range(len(parts), 0, -1):
        base = SRC.joinpath(*parts[:n])
        for candidate in (base.with_suffix(".rs"), base / "mod.rs"):
            if candidate.exists():
                return candidate
    return None


# A char literal (`'"'`, `'\\''`, `'\\u{2028}'`); any other `'` starts a lifetime or a label.
CHAR = re.compile(r"'(?:\\(?:x[0-9A-Fa-f]{2}|u\{[0-9A-Fa-f_]{1,8}\}|.)|[^\\'\n])'")
# A raw string's opening: `r"`, `r#"`, `br##"` …, not inside an identifier.
RAW = re.compile(r'b?r(#*)"')


def strip_comments(text: str) -> str:
    """The code of a file without its comments and with every string and
    char literal emptied, read token by token: a `//` inside a string is
    not a comment, and a `"` inside a comment or a char literal opens no
    string (a regex pass for one kind before the other gets one of those
    wrong and hides the rest of the file)."""
    # Unit tests (a `#[cfg(test)]` module, last in its file) may reach anywhere.
    text = text.split("#[cfg(test)]")[0]
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
            out.append(" ")
        elif c in "br" and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")) and (m := RAW.match(text, i)):
            close = '"' + m.group(1)
            end = text.find(close, m.end())
            i = n if end < 0 else end + len(close)
            out.append('""')
        elif c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            out.append('""')
        elif c == "'" and (m := CHAR.match(text, i)):
            i = m.end()
            out.append("' '")
        else:
            out.append(c)
            i += 1
    return "".join(out)


def targets(path: Path, text: str) -> set[Path]:
    here = module_of(path)
    found: set[Path] = set()

    def resolve(root: str, rest: list[str]):
        # `super` is the parent module: of `api/page.rs` (module api::page)
        # it is `api`; of `api/mod.rs` (module api) it is the crate.
        base = [] if root == "crate" else here[:-1]
        target = file_of(base + rest)
        if target is not None and target != path:
            found.add(target)

    body = strip_comments(text)
    for m in GROUP.finditer(body):
        prefix = [p for p in m.group(2).split("::") if p]
        for item in re.split(r",", m.group(3)):
            item = item.strip().split(" as ")[0].strip()
            names = [p for p in re.split(r"::", item) if p and p not in ("self", "*") and not p.startswith("{")]
            resolve(m.group(1), prefix + names)
    for m in PATH.finditer(GROUP.sub("", body)):
        resolve(m.group(1), [p for p in m.group(2).split("::") if p])
    return found


def layer(path: Path) -> str | None:
    parts = module_of(path)
    return parts[0] if parts else None


def main() -> int:
    files = [p for p in SRC.rglob("*.rs") if p.name not in ("main.rs", "lib.rs") and "bin" not in p.relative_to(SRC).parts]
    graph = {f: targets(f, f.read_text()) for f in files}
    problems = []
    for f, deps in sorted(graph.items()):
        mine = layer(f)
        for d in sorted(deps):
            theirs = layer(d)
            if mine == theirs or theirs is None:
                continue
            if mine not in LAYERS or theirs not in LAYERS:
                problems.append(f"{f.relative_to(SRC)}: module {mine if mine not in LAYERS else theirs} has no layer in scripts/check-layers.py")
            elif LAYERS[theirs] >= LAYERS[mine]:
                problems.append(f"{f.relative_to(SRC)} imports {d.relative_to(SRC)}: {mine} (layer {LAYERS[mine]}) may not use {theirs} (layer {LAYERS[theirs]})")
    # Circles between files (Tarjan's strongly connected components).
    index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc = []
            while True:
                w = stack.pop()
                on.discard(w)
                scc.append(w)
                if w == v:
                    break
            if len(scc) > 1:
                sccs.append(scc)

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    for scc in sccs:
        names = sorted(str(p.relative_to(SRC)) for p in scc)
        ties = [f"{a.relative_to(SRC)} -> {b.relative_to(SRC)}" for a in sorted(scc) for b in sorted(graph[a]) if b in scc]
        problems.append(f"circle of {len(scc)} files: {', '.join(names)}\n    " + "\n    ".join(ties))
    for p in problems:
        print(f"layers: {p}", file=sys.stderr)
    if problems:
        print(f"layers: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print(f"layers: {len(files)} files, one-way, no circles")
    return 0


if __name__ == "__main__":
    sys.exit(main())
