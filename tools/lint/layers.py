#!/usr/bin/env python3
"""Lint the layer table of ARCHITECTURE.md against the host's crates (``cargo metadata``).

Checks, relative to the repository root (found from this file: tools/lint/ is two
levels below it):

- The host crates are the workspace members whose ``Cargo.toml`` lies under ``host/``
  (``host/Cargo.toml`` itself is ``forecast-host``); members elsewhere (``sdk/``...) are
  not host crates.
- ARCHITECTURE.md has a section ``## Layers and the dependency rule`` holding a table
  ``| layer | crates | depend on |``. Each row's ``layer`` is a whole number; its
  ``crates`` cell names crates in backticks, and after the first full name of a cell a
  name may be abbreviated with a leading dash (``forecast-api``, ``-store`` is
  forecast-api and forecast-store: the dash stands for the first full name up to its
  first ``-``). Names inside parentheses (``(binary `forecast`)``) are not crates. The
  ``depend on`` column is prose and is not read.
- Every host crate appears in the table exactly once, and every crate the table names
  is a host crate.
- Every normal dependency (not ``dev``, not ``build``; platform-specific ones count) of
  a host crate on another host crate points to a strictly lower layer: no arrow back up,
  no arrow sideways.
- No host crate holds more than 20 % of the host's Rust lines: the lines of the ``*.rs``
  files under the crate's folder, a file counting for the innermost crate folder that
  holds it (so ``forecast-host`` is ``host/`` without the other crates' folders:
  ``host/src``, ``host/benches``...), skipping ``target/`` and hidden folders; a share is
  the crate's lines over all host crates' lines.

Run from anywhere:

    python3 tools/lint/layers.py                    # runs cargo metadata itself
    python3 tools/lint/layers.py --metadata FILE    # or reads its JSON ('-': stdin)

It runs ``cargo metadata --no-deps --format-version 1 --offline`` (again without
``--offline`` if that fails; ``$CARGO`` names cargo if set), which compiles nothing. It prints one ``path: problem``
line per problem and exits 1 if there was any (then also every crate's share of the
lines, on stderr); otherwise it prints a one-line summary and exits 0. Tests:
``python3 -m unittest tools/lint/test_layers.py``. Standard library only (Python 3.11).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ARCHITECTURE = Path("ARCHITECTURE.md")
HOST_DIR = Path("host")
SECTION_TITLE = "Layers and the dependency rule"
MAX_SHARE = 0.20
CARGO_METADATA = ("metadata", "--no-deps", "--format-version", "1")

HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
SEPARATOR_CELL = re.compile(r"^:?-+:?$")
CELL_SPLIT = re.compile(r"(?<!\\)\|")
BACKTICKED = re.compile(r"`([^`]+)`")
CRATE_NAME = re.compile(r"^-?[A-Za-z0-9_][A-Za-z0-9_-]*$")


@dataclass
class Crate:
    """A host crate: its package name, folder, manifest and host-crate dependencies."""

    name: str
    directory: Path  # absolute
    manifest: str  # relative to the repository root, for messages
    depends_on: list[str] = field(default_factory=list)  # normal dependencies only


@dataclass
class Table:
    """The layer table: each listed name with its layer and line, in table order."""

    rows: list[tuple[str, int, int]]  # (crate name, layer, line number)
    layers: int  # number of distinct layers


@dataclass
class Result:
    problems: list[str]
    crates: int = 0
    layers: int = 0
    lines: dict[str, int] = field(default_factory=dict)  # crate name -> Rust lines

    @property
    def total_lines(self) -> int:
        return sum(self.lines.values())

    def shares(self) -> list[tuple[str, float]]:
        """(crate, share of all host lines), largest first."""
        total = self.total_lines
        if total == 0:
            return []
        return sorted(((name, n / total) for name, n in self.lines.items()),
                      key=lambda item: (-item[1], item[0]))


# ---------------------------------------------------------------------------- crates

def _inside(path: Path, directory: Path) -> bool:
    try:
        path.relative_to(directory)
        return True
    except ValueError:
        return False


def _rel(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def host_crates(root: Path, metadata: dict) -> list[Crate]:
    """The workspace members whose manifest lies under host/, with their normal
    dependencies on one another."""
    root = Path(root).resolve()
    host = root / HOST_DIR
    members = set(metadata.get("workspace_members") or ())
    crates: list[Crate] = []
    packages = []
    for package in metadata.get("packages", ()):
        if members and package.get("id") not in members:
            continue
        manifest = Path(package["manifest_path"]).resolve()
        if _inside(manifest, host):
            packages.append(package)
            crates.append(Crate(package["name"], manifest.parent, _rel(root, manifest)))
    names = {crate.name for crate in crates}
    for crate, package in zip(crates, packages):
        for dependency in package.get("dependencies", ()):
            # Path dependencies have no source; a registry crate of the same name is
            # another crate. kind: None (normal), "dev" or "build".
            if (dependency.get("kind") is None and dependency.get("source") is None
                    and dependency["name"] in names and dependency["name"] != crate.name
                    and dependency["name"] not in crate.depends_on):
                crate.depends_on.append(dependency["name"])
    return sorted(crates, key=lambda c: c.name)


def other_members(root: Path, metadata: dict) -> dict[str, str]:
    """Workspace members outside host/: name -> manifest (relative), for messages."""
    root = Path(root).resolve()
    members = set(metadata.get("workspace_members") or ())
    found = {}
    for package in metadata.get("packages", ()):
        if members and package.get("id") not in members:
            continue
        manifest = Path(package["manifest_path"]).resolve()
        if not _inside(manifest, root / HOST_DIR):
            found[package["name"]] = _rel(root, manifest)
    return found


# ----------------------------------------------------------------------------- table

def _cells(line: str) -> list[str]:
    inner = line.strip()
    inner = inner[1:-1] if inner.endswith("|") else inner[1:]
    return [cell.strip() for cell in CELL_SPLIT.split(inner)]


def _without_parentheses(text: str) -> str:
    """The text with every parenthesised part removed (nesting included)."""
    kept = []
    depth = 0
    in_code = False
    for char in text:
        if char == "`":
            in_code = not in_code
        if not in_code and char == "(":
            depth += 1
            continue
        if not in_code and char == ")" and depth:
            depth -= 1
            continue
        if depth == 0:
            kept.append(char)
    return "".join(kept)


def crate_names(cell: str) -> tuple[list[str], list[str]]:
    """The crate names of one `crates` cell, dash abbreviations expanded, and the
    problems of the cell (an abbreviation before any full name, a name that is not
    a crate name)."""
    names: list[str] = []
    problems: list[str] = []
    prefix = None
    for match in BACKTICKED.finditer(_without_parentheses(cell)):
        name = match.group(1).strip()
        if not CRATE_NAME.match(name):
            problems.append(f"`{name}` is not a crate name")
            continue
        if name.startswith("-"):
            if prefix is None:
                problems.append(f"`{name}` abbreviates a name but no full name comes before it")
                continue
            name = prefix + name
        elif prefix is None:
            prefix = name.split("-", 1)[0] if "-" in name else name
        names.append(name)
    return names, problems


def parse_table(text: str) -> tuple[Table | None, list[str]]:
    """The layer table of ARCHITECTURE.md's text, and the problems found reading it
    (each 'line N: ...', without the file name)."""
    lines = text.splitlines()
    start = end = None
    fenced = False
    for number, line in enumerate(lines, start=1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        heading = None if fenced else HEADING.match(line)
        if heading is None:
            continue
        if start is None:
            if len(heading.group(1)) == 2 and heading.group(2) == SECTION_TITLE:
                start = number
        elif len(heading.group(1)) <= 2:
            end = number
            break
    if start is None:
        return None, [f"no section '## {SECTION_TITLE}'"]
    end = end or len(lines) + 1

    header = None
    for number in range(start + 1, end):
        line = lines[number - 1]
        if not TABLE_ROW.match(line):
            continue
        cells = [cell.lower() for cell in _cells(line)]
        if len(cells) >= 2 and cells[0] == "layer" and cells[1] == "crates":
            header = number
            break
    if header is None:
        return None, [f"line {start}: section '## {SECTION_TITLE}' has no table"
                      " '| layer | crates | depend on |'"]

    problems: list[str] = []
    rows: list[tuple[str, int, int]] = []
    layers = set()
    number = header + 1
    if number < end and all(SEPARATOR_CELL.match(c) for c in _cells(lines[number - 1])):
        number += 1
    else:
        problems.append(f"line {header}: the layer table has no '|---|' line under its header")
    while number < end and TABLE_ROW.match(lines[number - 1]):
        cells = _cells(lines[number - 1])
        if len(cells) < 2:
            problems.append(f"line {number}: a layer row needs a layer and its crates")
        elif not re.fullmatch(r"\d+", cells[0]):
            problems.append(f"line {number}: layer {cells[0]!r} is not a whole number")
        else:
            layer = int(cells[0])
            layers.add(layer)
            names, cell_problems = crate_names(cells[1])
            problems.extend(f"line {number}: {p}" for p in cell_problems)
            if not names and not cell_problems:
                problems.append(f"line {number}: layer {layer} names no crate")
            rows.extend((name, layer, number) for name in names)
        number += 1
    return Table(rows, len(layers)), problems


# ----------------------------------------------------------------------------- lines

def rust_lines(path: Path) -> int:
    data = path.read_bytes()
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def lines_per_crate(crates: list[Crate]) -> dict[str, int]:
    """Rust lines per crate, each file counted for the innermost crate folder holding
    it; target/ and hidden folders skipped."""
    directories = {crate.directory: crate.name for crate in crates}
    counts = {crate.name: 0 for crate in crates}
    for crate in crates:
        for folder, subfolders, files in os.walk(crate.directory):
            here = Path(folder)
            # Another crate's folder (nested in this one) is counted for that crate.
            subfolders[:] = sorted(
                d for d in subfolders
                if d != "target" and not d.startswith(".") and here / d not in directories
            )
            for name in files:
                if name.endswith(".rs"):
                    counts[crate.name] += rust_lines(here / name)
    return counts


# ----------------------------------------------------------------------------- check

def check(root: Path, metadata: dict) -> Result:
    """Every problem of the layer table and the host crates under the repository root
    `root`, given the parsed output of `cargo metadata --no-deps --format-version 1`."""
    root = Path(root).resolve()
    doc = ARCHITECTURE.as_posix()
    crates = host_crates(root, metadata)
    by_name = {crate.name: crate for crate in crates}
    result = Result(problems=[], crates=len(crates))
    if not crates:
        result.problems.append(f"{HOST_DIR.as_posix()}/: no workspace member under it"
                               " (cargo metadata names no host crate)")

    path = root / ARCHITECTURE
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as err:
        result.problems.append(f"{doc}: cannot be read ({err})")
        text = None
    table = None
    if text is not None:
        table, table_problems = parse_table(text)
        result.problems.extend(f"{doc}: {p}" for p in table_problems)

    layer_of: dict[str, int] = {}
    if table is not None:
        result.layers = table.layers
        listed: dict[str, list[tuple[int, int]]] = {}
        for name, layer, number in table.rows:
            listed.setdefault(name, []).append((layer, number))
        outside = other_members(root, metadata)
        for name, places in listed.items():
            if name not in by_name:
                where = (f"a workspace member outside {HOST_DIR.as_posix()}/ ({outside[name]})"
                         if name in outside else
                         f"no workspace member under {HOST_DIR.as_posix()}/ has that name")
                result.problems.append(
                    f"{doc}: line {places[0][1]}: `{name}` is not a host crate ({where})")
            elif len(places) > 1:
                at = ", ".join(f"layer {layer} (line {number})" for layer, number in places)
                result.problems.append(f"{doc}: `{name}` is listed {len(places)} times: {at}")
            else:
                layer_of[name] = places[0][0]
        for crate in crates:
            if crate.name not in listed:
                result.problems.append(
                    f"{doc}: host crate `{crate.name}` ({crate.manifest}) is not in the layer table")

    for crate in crates:
        if crate.name not in layer_of:
            continue
        for dependency in crate.depends_on:
            if dependency not in layer_of:
                continue
            mine, theirs = layer_of[crate.name], layer_of[dependency]
            if theirs >= mine:
                arrow = "sideways, same layer" if theirs == mine else "upward"
                result.problems.append(
                    f"{crate.manifest}: {crate.name} (layer {mine}) depends on {dependency}"
                    f" (layer {theirs}): {arrow}; a crate depends only on lower layers")

    result.lines = lines_per_crate(crates)
    total = result.total_lines
    for name, share in result.shares():
        if share > MAX_SHARE:
            crate = by_name[name]
            result.problems.append(
                f"{_rel(root, crate.directory) or '.'}/: {name} holds {_percent(share)} of the"
                f" host's {total:,} Rust lines ({result.lines[name]:,}),"
                f" more than {_percent(MAX_SHARE)}")
    return result


def _percent(share: float) -> str:
    return f"{share * 100:.1f} %"


# ------------------------------------------------------------------------------- CLI

def cargo_metadata(root: Path) -> dict:
    """The parsed `cargo metadata --no-deps` of the workspace at `root` (offline first)."""
    errors = []
    cargo = (os.environ.get("CARGO") or "cargo",)
    for command in (cargo + CARGO_METADATA + ("--offline",), cargo + CARGO_METADATA):
        try:
            done = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)
        except OSError as err:
            raise RuntimeError(f"cannot run cargo ({err.strerror})") from err
        if done.returncode == 0:
            return json.loads(done.stdout)
        lines = done.stderr.strip().splitlines()
        errors.append(f"`{' '.join(command)}`: {lines[-1] if lines else 'exit ' + str(done.returncode)}")
    raise RuntimeError("; ".join(errors))


def summary(result: Result) -> str:
    shares = result.shares()
    largest = (f"largest crate {shares[0][0]} {_percent(shares[0][1])}"
               f" of {result.total_lines:,} lines") if shares else "no Rust lines"
    return (f"layers: {result.crates} host crates in {result.layers} layers,"
            f" every dependency downward, {largest}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--metadata", metavar="FILE",
                        help="read cargo metadata's JSON from FILE ('-': stdin)"
                             " instead of running cargo")
    args = parser.parse_args(argv)
    root = Path(__file__).resolve().parent.parent.parent
    try:
        if args.metadata == "-":
            metadata = json.load(sys.stdin)
        elif args.metadata:
            metadata = json.loads(Path(args.metadata).read_text(encoding="utf-8"))
        else:
            metadata = cargo_metadata(root)
    except (OSError, ValueError, RuntimeError) as err:
        print(f"Cargo.toml: cargo metadata failed: {err}")
        print("layers lint: 1 problem(s)", file=sys.stderr)
        return 1

    result = check(root, metadata)
    for problem in result.problems:
        print(problem)
    if result.problems:
        print(f"layers lint: {len(result.problems)} problem(s); share of the host's"
              f" {result.total_lines:,} Rust lines per crate:", file=sys.stderr)
        for name, share in result.shares():
            print(f"  {name:<24} {_percent(share):>7}  {result.lines[name]:>7,}", file=sys.stderr)
        return 1
    print(summary(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
