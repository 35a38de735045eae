#!/usr/bin/env python3
"""Lint the decision records and the size of the front docs.

Checks, relative to the repository root (found from this file: tools/lint/ is two
levels below it):

- Every decision record ``docs/decisions/NNNN-*.md`` (``README.md`` there is the index,
  not a record):
  - starts with a ``# NNNN Title`` heading whose number matches the file name;
  - has a ``Status:`` line (``Status: accepted.``, ``Status: superseded by 0066.``)
    before its first ``##`` heading;
  - has the sections ``## Context``, ``## Decision`` and ``## Consequences``, once each
    and in that order, and no other ``##`` section;
  - is at most 3,072 bytes;
  - names no issue or work item (``issue 12``, ``Issue #12``, ``#12``, ``work item 12``,
    ``item 4 of``...); record numbers such as ``0066`` and other numbers are fine.
  No two records share a number, and any other ``.md`` file in ``docs/decisions/`` is
  reported as a badly named record.
- The index ``docs/decisions/README.md`` lists every record exactly once (a list item
  that starts with a link to the record's file name), links to no file that does not
  exist, and names no issue or work item either.
- Front docs stay small: README.md <= 12,288 bytes, ARCHITECTURE.md <= 16,384 bytes,
  docs/BENCHMARKS.md <= 20,480 bytes.

Run from anywhere:

    python3 tools/lint/docs.py

It prints one ``path: problem`` line per problem and exits 1 if there was any;
otherwise it prints a one-line summary and exits 0. Tests: ``python3 -m unittest
tools/lint/test_docs.py``. Standard library only (Python 3.11).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

RECORD_DIR = Path("docs") / "decisions"
INDEX_NAME = "README.md"
RECORD_MAX_BYTES = 3072
REQUIRED_SECTIONS = ("Context", "Decision", "Consequences")
FRONT_DOC_LIMITS = (
    (Path("README.md"), 12_288),
    (Path("ARCHITECTURE.md"), 16_384),
    (Path("docs") / "BENCHMARKS.md", 20_480),
)

RECORD_NAME = re.compile(r"^(\d{4})-[^/]+\.md$")
TITLE = re.compile(r"^# (\d{4}) (\S.*)$")
STATUS = re.compile(r"^Status:\s*\S")
SECTION = re.compile(r"^##(?!#)\s*(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
# References to issues or work items. Record numbers ("0066", "[0066](...)") and
# plain numbers are not matched.
WORK_ITEM = re.compile(
    r"""
      \b(?:issues?|tickets?|work[\s-]*items?)   # issue 12, issues 12, work item 12,
        [\s-]*(?:no\.?\s*)?\#?\d+               # Issue #12, pre-issue-17
    | (?<![\w&\#/])\#\d+\b                      # #12 (not &#12; or a URL fragment)
    | \bitems?\s+\d+\s+of\b                     # item 4 of
    """,
    re.IGNORECASE | re.VERBOSE,
)
ENTRY = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def _rel(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


def _read_text(path: Path, rel: str, problems: list[str]) -> str | None:
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        problems.append(f"{rel}: not valid UTF-8 ({err.reason} at byte {err.start})")
    except OSError as err:
        problems.append(f"{rel}: cannot be read ({err.strerror})")
    return None


def _outside_fences(lines: list[str]) -> list[tuple[int, str]]:
    """(line number, line) for each line that is not inside a fenced code block."""
    kept = []
    fenced = False
    for number, line in enumerate(lines, start=1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            kept.append((number, line))
    return kept


def _work_items(text: str, rel: str) -> list[str]:
    problems = []
    for number, line in enumerate(text.splitlines(), start=1):
        for match in WORK_ITEM.finditer(line):
            problems.append(
                f"{rel}: line {number}: names an issue or work item ({match.group(0).strip()!r})"
            )
    return problems


def check_record(root: Path, path: Path) -> list[str]:
    """Problems of one decision record."""
    rel = _rel(root, path)
    problems: list[str] = []
    size = path.stat().st_size
    if size > RECORD_MAX_BYTES:
        problems.append(f"{rel}: {size} bytes, more than {RECORD_MAX_BYTES}")
    text = _read_text(path, rel, problems)
    if text is None:
        return problems
    lines = text.splitlines()
    file_number = RECORD_NAME.match(path.name).group(1)

    title = TITLE.match(lines[0]) if lines else None
    if title is None:
        first = lines[0] if lines else ""
        problems.append(f"{rel}: first line must be '# {file_number} Title', found {first!r}")
    elif title.group(1) != file_number:
        problems.append(
            f"{rel}: heading number {title.group(1)} does not match the file name ({file_number})"
        )

    body = _outside_fences(lines)
    sections = [(n, SECTION.match(line).group(1)) for n, line in body if SECTION.match(line)]
    first_section = sections[0][0] if sections else len(lines) + 1
    statuses = [n for n, line in body if n < first_section and STATUS.match(line)]
    if not statuses:
        problems.append(f"{rel}: no 'Status:' line before the first '##' heading")
    elif len(statuses) > 1:
        problems.append(f"{rel}: {len(statuses)} 'Status:' lines, expected one")

    names = [name for _, name in sections]
    for number, name in sections:
        if name not in REQUIRED_SECTIONS:
            problems.append(
                f"{rel}: line {number}: section '## {name}' is not allowed"
                f" (only {', '.join(REQUIRED_SECTIONS)})"
            )
    for name in REQUIRED_SECTIONS:
        count = names.count(name)
        if count == 0:
            problems.append(f"{rel}: missing section '## {name}'")
        elif count > 1:
            problems.append(f"{rel}: section '## {name}' appears {count} times")
    known = [name for name in names if name in REQUIRED_SECTIONS]
    if len(known) == len(set(known)) and known != [n for n in REQUIRED_SECTIONS if n in known]:
        problems.append(
            f"{rel}: sections out of order ({', '.join(known)});"
            f" expected {', '.join(REQUIRED_SECTIONS)}"
        )

    problems.extend(_work_items(text, rel))
    return problems


def check_index(root: Path, records: list[Path]) -> list[str]:
    """Problems of the index docs/decisions/README.md."""
    directory = root / RECORD_DIR
    index = directory / INDEX_NAME
    rel = _rel(root, index)
    if not index.is_file():
        return [f"{rel}: missing (the index of the decision records)"]
    problems: list[str] = []
    text = _read_text(index, rel, problems)
    if text is None:
        return problems

    # A record is listed by an entry: a list item whose first link is to the record.
    # Other links (an entry's "superseded by [0066](...)") must exist but do not count.
    counts: dict[str, int] = {}
    for number, line in _outside_fences(text.splitlines()):
        entry = ENTRY.match(line)
        for match in LINK.finditer(line):
            target = match.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE) or target.startswith("#"):
                continue  # a URL or an anchor in this page
            file_part = target.split("#", 1)[0]
            if not (directory / file_part).exists():
                problems.append(f"{rel}: line {number}: links to a missing file '{target}'")
            if entry and match.start() == entry.end():
                counts[file_part] = counts.get(file_part, 0) + 1

    for record in records:
        count = counts.get(record.name, 0)
        if count == 0:
            problems.append(f"{rel}: does not list {record.name}")
        elif count > 1:
            problems.append(f"{rel}: lists {record.name} {count} times")

    problems.extend(_work_items(text, rel))
    return problems


def check_front_docs(root: Path) -> list[str]:
    problems = []
    for rel_path, limit in FRONT_DOC_LIMITS:
        path = root / rel_path
        rel = rel_path.as_posix()
        if not path.is_file():
            problems.append(f"{rel}: missing")
            continue
        size = path.stat().st_size
        if size > limit:
            problems.append(f"{rel}: {size} bytes, more than {limit}")
    return problems


def record_paths(root: Path) -> list[Path]:
    directory = root / RECORD_DIR
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.glob("*.md") if RECORD_NAME.match(p.name))


def check(root: Path) -> tuple[list[str], int]:
    """Every problem under the repository root `root`, and the number of records checked."""
    root = Path(root)
    problems: list[str] = []
    directory = root / RECORD_DIR
    if not directory.is_dir():
        problems.append(f"{RECORD_DIR.as_posix()}: missing")
    records = record_paths(root)
    for path in sorted(directory.glob("*.md")) if directory.is_dir() else []:
        if path.name != INDEX_NAME and not RECORD_NAME.match(path.name):
            problems.append(f"{_rel(root, path)}: not a record name (NNNN-title.md) nor the index")
    numbers: dict[str, list[str]] = {}
    for path in records:
        numbers.setdefault(RECORD_NAME.match(path.name).group(1), []).append(path.name)
    for number, names in sorted(numbers.items()):
        if len(names) > 1:
            problems.append(
                f"{RECORD_DIR.as_posix()}: number {number} is used by {len(names)} records"
                f" ({', '.join(names)})"
            )
    for path in records:
        problems.extend(check_record(root, path))
    if directory.is_dir():
        problems.extend(check_index(root, records))
    problems.extend(check_front_docs(root))
    return problems, len(records)


def main() -> int:
    root = Path(__file__).resolve().parent.parent.parent
    problems, records = check(root)
    for problem in problems:
        print(problem)
    if problems:
        print(f"docs lint: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print(
        f"docs lint: {records} decision records, their index and "
        f"{len(FRONT_DOC_LIMITS)} front docs are in order"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
