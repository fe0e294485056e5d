#!/usr/bin/env python3
"""Runs the examples of README.md and docs/*.md, so the documentation cannot drift.

Usage:
  scripts/doc-examples.py --check     the checks that need no server (below, 1-5)
  scripts/doc-examples.py [FILE...]   those, then every runnable block against a
                                      server (scripts/doc-examples.sh starts one)

Every fenced code block is one of:
  ```sh, ```bash   a shell example: run with `bash -euo pipefail`, from the
                   repository root, with BASE (the server's URL, e.g.
                   http://127.0.0.1:3000) and TOKEN (the demo admin with every
                   person scope) in its environment; it passes when it exits 0.
                   Examples check their answers themselves (`curl -fsS` fails on
                   an HTTP error; `| grep '"isError":false'` on a wrong answer).
  ```console       the same, for the lines that start with `$ ` (and their `\\`
                   continuations); the other lines are output, not compared.
  ```json          parsed: it must be valid JSON (client configurations).
  anything else    (```text, ```yaml, ...) shown as it is.

A shell block that cannot run in a test (it needs AWS credentials, an MCP
client, a browser, or it is `make run` itself) says so just before it, where a
reader sees it too:

  <!-- doc-examples: skip (needs AWS credentials) -->

An unmarked shell block always runs. Blocks run in file order (README.md,
then docs/*.md by name), each in a fresh shell, so a block that needs a value
from an earlier request makes that request itself.

Checks that need no server:
  1. every code block names its language (an unnamed one could be a shell
     example that nothing runs);
  2. every skip marker gives a reason and is followed by a shell block;
  3. every ```json block parses;
  4. every relative link points at a file that exists, and its #anchor at a
     heading of that file;
  5. README.md has at most 200 lines and starts (its first code block) with
     `make run` and `make test`; every page of docs/ longer than 100 lines has
     a "## Contents" section.

Exit status: 0 when everything passed, 1 otherwise (each failure is named by
file:line of its block), 2 on a wrong command line.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHELL = {"sh", "bash", "console"}
SKIP = re.compile(r"^<!--\s*doc-examples:\s*skip\s*(?:\((?P<reason>[^)]*)\))?\s*-->$")
MARKER = re.compile(r"^<!--\s*doc-examples\b")
FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
LINK = re.compile(r"(?<!!)\[(?:[^\]\[]|\[[^\]]*\])*\]\((?P<target>[^)\s]+)(?:\s+\"[^\"]*\")?\)")
README_MAX_LINES = 200
LONG_PAGE_LINES = 100
BLOCK_TIMEOUT_SECS = 90


@dataclass
class Block:
    path: Path
    line: int  # 1-based line of the opening fence
    lang: str
    body: str
    skip: str | None = None  # the reason, when marked

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


@dataclass
class Page:
    path: Path
    lines: list[str]
    blocks: list[Block] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def parse(path: Path) -> Page:
    """The page's fenced blocks, with the skip marker just before each."""
    page = Page(path, path.read_text(encoding="utf-8").splitlines())
    rel = path.relative_to(ROOT)
    open_fence = None  # (indent, fence, lang, start line, body lines, marker)
    pending = None  # (line, reason) of a skip marker waiting for its block
    for number, line in enumerate(page.lines, 1):
        if open_fence is not None:
            indent, fence, lang, start, body, marker = open_fence
            stripped = line.strip()
            if stripped.startswith(fence) and set(stripped) == {fence[0]}:
                page.blocks.append(Block(path, start, lang, "\n".join(body) + "\n", marker))
                open_fence = None
            else:
                body.append(line[indent:] if line[:indent].strip() == "" else line.lstrip())
            continue
        match = FENCE.match(line)
        if match:
            lang = match["info"].strip().split(" ")[0].lower() if match["info"].strip() else ""
            if not lang:
                page.errors.append(
                    f"{rel}:{number}: a code block without a language "
                    "(```sh runs it, ```text shows it as it is)"
                )
            marker = None
            if pending is not None:
                if lang not in SHELL:
                    page.errors.append(f"{rel}:{pending[0]}: a skip marker before a block that is not a shell example")
                marker = pending[1]
                pending = None
            open_fence = (len(match["indent"]), match["fence"], lang, number, [], marker)
            continue
        stripped = line.strip()
        if MARKER.match(stripped):
            skip = SKIP.match(stripped)
            reason = (skip["reason"] or "").strip() if skip else ""
            if not reason:
                page.errors.append(f"{rel}:{number}: write the marker as <!-- doc-examples: skip (the reason) -->")
            if pending is not None:
                page.errors.append(f"{rel}:{pending[0]}: a skip marker with no block after it")
            pending = (number, reason)
            continue
        if stripped and pending is not None:
            page.errors.append(f"{rel}:{pending[0]}: a skip marker must come just before its block")
            pending = None
    if open_fence is not None:
        page.errors.append(f"{rel}:{open_fence[3]}: a code block that is never closed")
    if pending is not None:
        page.errors.append(f"{rel}:{pending[0]}: a skip marker with no block after it")
    return page


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`([^`]*)`", r"\1", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[*_]{1,2}([^*_]+)[*_]{1,2}", r"\1", text)
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def anchors(page: Page) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    in_fence = False
    for line in page.lines:
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading:
            base = slug(heading[1])
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
        for explicit in re.finditer(r'<a\s+(?:name|id)="([^"]+)"', line):
            found.add(explicit[1])
    return found


def check_links(page: Page, pages: dict[Path, Page]) -> None:
    rel = page.path.relative_to(ROOT)
    in_fence = False
    for number, line in enumerate(page.lines, 1):
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        code_free = re.sub(r"`[^`]*`", "", line)
        for link in LINK.finditer(code_free):
            target = link["target"]
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
                continue  # https:, mailto: — not checked here
            path_part, _, anchor = target.partition("#")
            dest = (page.path.parent / path_part).resolve() if path_part else page.path
            if not dest.exists():
                page.errors.append(f"{rel}:{number}: the link {target} points at a missing file")
                continue
            if anchor and dest.suffix == ".md":
                other = pages.get(dest) or parse(dest)
                if anchor not in anchors(other):
                    page.errors.append(f"{rel}:{number}: the link {target} names no heading of {dest.relative_to(ROOT)}")


def check_shape(page: Page) -> None:
    rel = page.path.relative_to(ROOT)
    if rel == Path("README.md"):
        if len(page.lines) > README_MAX_LINES:
            page.errors.append(f"{rel}: {len(page.lines)} lines; the README keeps to {README_MAX_LINES}")
        first = page.blocks[0] if page.blocks else None
        commands = [line.split("#")[0].strip() for line in first.body.splitlines()] if first else []
        if not first or commands[:2] != ["make run", "make test"]:
            page.errors.append(f"{rel}: its first code block must be `make run` and `make test`, the two commands a newcomer needs")
    if rel.parts[0] == "docs" and len(page.lines) > LONG_PAGE_LINES:
        if not any(re.match(r"^##\s+Contents\s*$", line) for line in page.lines):
            page.errors.append(f"{rel}: {len(page.lines)} lines and no '## Contents' section")


def check_json(page: Page) -> None:
    for block in page.blocks:
        if block.lang == "json":
            try:
                json.loads(block.body)
            except json.JSONDecodeError as e:
                page.errors.append(f"{block.where}: not valid JSON: {e}")


def script_of(block: Block) -> str:
    if block.lang != "console":
        return block.body
    commands: list[str] = []
    continuing = False
    for line in block.body.splitlines():
        if continuing or line.startswith("$ "):
            commands.append(line if continuing else line[2:])
            continuing = line.rstrip().endswith("\\")
    return "\n".join(commands) + "\n"


def run(block: Block) -> tuple[bool, str, float]:
    start = time.monotonic()
    try:
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script_of(block)],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=BLOCK_TIMEOUT_SECS,
            text=True,
        )
        ok, out = done.returncode == 0, done.stdout
        if not ok:
            out += f"\n(exit status {done.returncode})"
    except subprocess.TimeoutExpired as e:
        partial = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        ok, out = False, partial + f"\n(still running after {BLOCK_TIMEOUT_SECS} s: stopped)"
    return ok, out, time.monotonic() - start


def indented(text: str, limit: int = 60) -> str:
    lines = text.rstrip("\n").splitlines()
    if len(lines) > limit:
        lines = [f"... ({len(lines) - limit} lines before)"] + lines[-limit:]
    return "\n".join("    | " + line for line in lines)


def main(argv: list[str]) -> int:
    check_only = "--check" in argv
    names = [a for a in argv if a != "--check"]
    if any(a.startswith("-") for a in names):
        print(__doc__, file=sys.stderr)
        return 2
    files = [ROOT / n for n in names] or [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    pages = {f.resolve(): parse(f.resolve()) for f in files}
    for page in pages.values():
        check_shape(page)
        check_json(page)
        check_links(page, pages)
    errors = [e for page in pages.values() for e in page.errors]
    for error in errors:
        print(f"FAIL {error}")
    blocks = [b for page in pages.values() for b in page.blocks if b.lang in SHELL]
    skipped = [b for b in blocks if b.skip is not None]
    runnable = [b for b in blocks if b.skip is None]
    checked_json = sum(1 for page in pages.values() for b in page.blocks if b.lang == "json")
    if check_only:
        print(
            f"doc-examples: {len(pages)} pages checked ({checked_json} JSON blocks parsed, links, shape); "
            f"{len(runnable)} shell blocks to run, {len(skipped)} marked skipped; "
            f"{len(errors)} problems"
        )
        return 1 if errors else 0

    missing = [v for v in ("BASE", "TOKEN") if not os.environ.get(v)]
    if missing:
        print(f"doc-examples: set {' and '.join(missing)} (scripts/doc-examples.sh starts a server and does)", file=sys.stderr)
        return 2
    failed: list[str] = []
    for block in blocks:
        if block.skip is not None:
            print(f"skip {block.where} ({block.skip})")
            continue
        ok, out, secs = run(block)
        if ok:
            print(f"ok   {block.where} ({secs:.1f} s)")
        else:
            failed.append(block.where)
            print(f"FAIL {block.where} ({secs:.1f} s)")
            print("  the block:")
            print(indented(script_of(block)))
            print("  what it printed:")
            print(indented(out))
    print(
        f"doc-examples: {len(runnable)} blocks ran, {len(runnable) - len(failed)} passed, {len(failed)} failed; "
        f"{len(skipped)} marked skipped; {checked_json} JSON blocks parsed; {len(errors)} other problems"
    )
    for where in failed:
        print(f"failed: {where}")
    return 1 if failed or errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
