#!/usr/bin/env python3
"""Measure the codebase's health and hold ARCHITECTURE.md's ``## Health`` table to it.

The table's rows are matched by their first cell. A row this script computes has its
``now`` cell written by the script; a row it does not know (a figure measured by hand,
such as duplicate pairs or the warm ``make test`` time) is left as written.

Computed, relative to the repository root:

- ``largest host crate``: the host crate with the largest share of the host's Rust
  lines, counted as ``tools/lint/layers.py`` counts them (its 20 % rule fails the lint),
  in whole percent.
- ``largest trait``: the trait declared in the host's sources (``host/``, no
  ``target/``) with the most ``fn`` items in its body.
- ``sleep(``: calls to a sleep in the integration tests (``tests/``), fixed waits and
  polls together; ``fixed waits``: those of them outside any loop (a sleep in a
  ``loop``, ``while`` or ``for`` body polls for work another thread does; one outside
  waits a fixed time for something to happen, or not to).
- ``untyped JSON lookups``: ``["field"]`` indexing in ``tests/`` (a typed client reads
  ``verdict.grade.letter`` instead).
- ``README.md; docs/BENCHMARKS.md``: their sizes in whole KiB (the docs lint holds
  the exact bounds).

Run from anywhere:

    python3 tools/lint/health.py            # prints the computed rows; exit 1 if stale
    python3 tools/lint/health.py --write    # rewrites the stale cells in ARCHITECTURE.md

Tests: ``python3 -m unittest tools/lint/test_health.py``. Standard library only.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import layers  # noqa: E402

ARCHITECTURE = Path("ARCHITECTURE.md")
SECTION = "## Health"
TRAIT = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:unsafe\s+)?trait\s+([A-Za-z_][A-Za-z0-9_]*)")
FN_ITEM = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:unsafe\s+)?fn\s+[A-Za-z_]")
SLEEP = re.compile(r"\bsleep\s*\(")
LOOKUP = re.compile(r"\[\s*\"[A-Za-z_][A-Za-z0-9_]*\"\s*\]")


def rust_files(directory: Path):
    """Every ``*.rs`` file below `directory`, without ``target/`` and hidden folders."""
    for folder, subfolders, files in os.walk(directory):
        subfolders[:] = sorted(d for d in subfolders if d != "target" and not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".rs"):
                yield Path(folder) / name


def trait_sizes(text: str) -> list[tuple[str, int]]:
    """(trait, number of ``fn`` items at the top of its body) for each trait in `text`."""
    lines = [line.split("//", 1)[0] for line in text.splitlines()]
    out = []
    for at, line in enumerate(lines):
        found = TRAIT.match(line)
        if not found:
            continue
        depth, fns, opened = 0, 0, False
        for body in lines[at:]:
            if opened and depth == 1 and FN_ITEM.match(body):
                fns += 1
            for ch in body:
                if ch == "{":
                    depth += 1
                    opened = True
                elif ch == "}":
                    depth -= 1
            if opened and depth == 0:
                break
            if not opened and body.rstrip().endswith(";"):
                break  # `trait Alias = …;` or a declaration without a body
        out.append((found.group(1), fns))
    return out


def largest_trait(root: Path) -> str:
    sizes = [size for path in rust_files(root / "host")
             for size in trait_sizes(path.read_text(encoding="utf-8"))]
    if not sizes:
        return "none"
    name, fns = max(sizes, key=lambda s: (s[1], s[0]))
    return f"`{name}`, {fns} methods"


LOOP_HEAD = re.compile(r"\b(?:loop|while|for)\b|\basync\s+(?:move\s+)?\{")


def fixed_sleeps(text: str) -> list[int]:
    """Sleeps in `text` with no enclosing ``loop``/``while``/``for`` body.

    Returns the 1-based line numbers of the fixed ones.
    A brace opened on a line whose code (comments and strings dropped) names a loop
    keyword or opens an ``async`` block is a loop's body or another task's (a fake
    peer's delay, a request in flight); a sleep is fixed when no open brace is one.
    """
    stack: list[bool] = []
    fixed = []
    pending = False
    for number, raw in enumerate(text.splitlines(), start=1):
        line = re.sub(r'"(?:[^"\\]|\\.)*"', '""', raw.split("//", 1)[0])
        if SLEEP.search(line) and not any(stack):
            fixed.append(number)
        # A loop's head may span lines: its body is the next brace opened.
        pending = pending or bool(LOOP_HEAD.search(line))
        for ch in line:
            if ch == "{":
                stack.append(pending)
                pending = False
            elif ch == "}" and stack:
                stack.pop()
            elif ch == ";":
                pending = False
    return fixed


def count_in(root: Path, directory: str, pattern: re.Pattern[str]) -> int:
    return sum(len(pattern.findall(path.read_text(encoding="utf-8")))
               for path in rust_files(root / directory))


def largest_crate(root: Path) -> str:
    crates = layers.host_crates(root, layers.cargo_metadata(root))
    lines = layers.lines_per_crate(crates)
    total = sum(lines.values())
    name, n = max(lines.items(), key=lambda item: (item[1], item[0]))
    # Whole percent: the row moves when the share does, not with every line.
    return f"`{name}` {round(n / total * 100)} %"


def size(root: Path, path: str) -> str:
    """Whole KiB (the docs lint holds the exact bound)."""
    return f"{round((root / path).stat().st_size / 1024)} KiB"


def measure(root: Path) -> dict[str, str]:
    """The computed rows: first cell → ``now`` cell."""
    return {
        "largest host crate (share of the host's Rust lines)": largest_crate(root),
        "largest trait in the host": largest_trait(root),
        "`sleep(` calls in tests/ (fixed waits and polls)": f"{count_in(root, 'tests', SLEEP):,}",
        "fixed waits in tests/ (sleeps outside a polling loop)":
            f"{sum(len(fixed_sleeps(p.read_text(encoding='utf-8'))) for p in rust_files(root / 'tests')):,}",
        "untyped JSON lookups (`[\"field\"]`) in tests/": f"{count_in(root, 'tests', LOOKUP):,}",
        "README.md; docs/BENCHMARKS.md": f"{size(root, 'README.md')}; "
                                         f"{size(root, 'docs/BENCHMARKS.md')}",
    }


def cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def update(text: str, rows: dict[str, str]) -> tuple[str, list[str]]:
    """`text` with the Health table's computed cells set from `rows`; the problems
    found (each a stale or missing row)."""
    lines = text.split("\n")
    try:
        start = lines.index(SECTION)
    except ValueError:
        return text, [f"{ARCHITECTURE}: no `{SECTION}` section"]
    problems, seen = [], set()
    for i in range(start + 1, len(lines)):
        if lines[i].startswith("## "):
            break
        if not lines[i].startswith("|"):
            continue
        row = cells(lines[i])
        if row[0] in rows and len(row) >= 2:
            seen.add(row[0])
            if row[1] != rows[row[0]]:
                problems.append(f"{ARCHITECTURE}: Health row '{row[0]}' says {row[1]!r},"
                                f" the tree {rows[row[0]]!r}")
                row[1] = rows[row[0]]
                lines[i] = "| " + " | ".join(row) + " |"
    problems += [f"{ARCHITECTURE}: Health table has no row '{name}'"
                 for name in rows if name not in seen]
    return "\n".join(lines), problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--write", action="store_true",
                        help="rewrite the stale cells of ARCHITECTURE.md's Health table")
    args = parser.parse_args(argv)
    root = Path(__file__).resolve().parent.parent.parent
    rows = measure(root)
    path = root / ARCHITECTURE
    text, problems = update(path.read_text(encoding="utf-8"), rows)
    missing = [p for p in problems if "no row" in p or "no `" in p]
    if args.write and not missing:
        path.write_text(text, encoding="utf-8")
        print(f"health: {len(problems)} cell(s) rewritten in {ARCHITECTURE}")
        return 0
    for problem in problems:
        print(problem)
    if problems:
        print("health: stale; rerun `python3 tools/lint/health.py --write`", file=sys.stderr)
        return 1
    print("health: " + "; ".join(f"{k}: {v}" for k, v in rows.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
