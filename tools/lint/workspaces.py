#!/usr/bin/env python3
"""Lint the Cargo workspaces' dependencies on each other (decision 0095).

The repository holds several Cargo workspaces: every tracked ``Cargo.toml`` with a
``[workspace]`` table is the root of one. Each root belongs to a *tier*, found from its
folder:

    crates/                      0  what both sides compile (engine, backtest accounting)
    sdk/                         1  the strategy SDK, a crate of its own
    components/, ./ (the host)   2  the guest components; the host
    sdk/examples/*, sdk/template 3  authors' plugin crates
    tools/**                     3  benchmark peers and other tools

A path dependency from a package of one workspace on a package of another must point
to a strictly lower tier: the arrows between workspaces go one way, so none can be built,
versioned or moved only together with another. The host and the components share tier
2, so neither may depend on the other. ``ALLOWED`` would name an edge kept for a while
(with its kind and why); it is empty, and an allowed edge that no longer exists is
reported, so the list cannot outlive its reason.

The dependencies come from ``cargo metadata --no-deps --format-version 1 --offline
--manifest-path <root>`` (``$CARGO`` names cargo if set), which compiles and fetches
nothing. A template manifest that cargo cannot read (``{{name}}`` placeholders) is read
as TOML instead. Prints one ``path: problem`` line per problem and exits 1 if there was
any; otherwise a one-line summary and exit 0. Tests:
``python3 -m unittest tools/lint/test_workspaces.py``. Standard library only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

# (tier, folder prefix) in order: the first whose prefix holds the root wins.
TIERS: tuple[tuple[int, str], ...] = (
    (0, "crates"),
    (3, "sdk/examples"),
    (3, "sdk/template"),
    (1, "sdk"),
    (2, "components"),
    (3, "tools"),
    (2, ""),
)

# (from package, to package, kind) -> why it may cross sideways for now.
ALLOWED: dict[tuple[str, str, str], str] = {}


@dataclass(frozen=True)
class Edge:
    """A path dependency between packages of two workspaces."""

    source: str  # package name
    source_root: str  # workspace root, relative
    target: str
    target_root: str
    kind: str  # "normal", "dev" or "build"


def tier_of(root: str) -> int:
    """The tier of a workspace root given relative to the repository ('' for the host)."""
    for tier, prefix in TIERS:
        if prefix == "" or root == prefix or root.startswith(prefix + "/"):
            return tier
    raise AssertionError("the last tier holds every root")


def workspace_roots(repo: Path) -> list[str]:
    """Tracked manifests with a [workspace] table, as folders relative to the repo."""
    listed = subprocess.run(
        ["git", "ls-files", "*Cargo.toml", "Cargo.toml"],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    roots = []
    for manifest in sorted(set(listed)):
        text = (repo / manifest).read_text(encoding="utf-8")
        if any(line.strip() == "[workspace]" for line in text.splitlines()):
            parent = str(Path(manifest).parent)
            roots.append("" if parent == "." else parent)
    return roots


def _rel(repo: Path, path: str) -> str:
    rel = os.path.relpath(os.path.realpath(path), os.path.realpath(repo))
    return "" if rel == "." else rel


def packages_from_toml(repo: Path, root: str) -> list[dict]:
    """The one package of a template manifest, in cargo metadata's shape."""
    manifest = repo / root / "Cargo.toml"
    data = tomllib.loads(manifest.read_text(encoding="utf-8"))
    deps = []
    for table, kind in (
        ("dependencies", None),
        ("dev-dependencies", "dev"),
        ("build-dependencies", "build"),
    ):
        for name, spec in data.get(table, {}).items():
            if isinstance(spec, dict) and "path" in spec:
                path = os.path.normpath(repo / root / spec["path"])
                deps.append({"name": name, "path": path, "kind": kind})
    name = data.get("package", {}).get("name", root)
    return [{"name": name, "manifest_path": str(manifest), "dependencies": deps}]


def packages(repo: Path, root: str) -> list[dict]:
    """The packages of one workspace with their dependencies (cargo metadata --no-deps)."""
    manifest = repo / root / "Cargo.toml"
    if "{{" in manifest.read_text(encoding="utf-8"):
        return packages_from_toml(repo, root)
    cargo = os.environ.get("CARGO", "cargo")
    args = [cargo, "metadata", "--no-deps", "--format-version", "1"]
    args += ["--manifest-path", str(manifest)]
    run = subprocess.run(args + ["--offline"], capture_output=True, text=True)
    if run.returncode != 0:
        run = subprocess.run(args, capture_output=True, text=True, check=True)
    return json.loads(run.stdout)["packages"]


def edges(repo: Path, metadata: dict[str, list[dict]]) -> list[Edge]:
    """Path dependencies that leave their workspace, given each root's packages."""
    owner: dict[str, tuple[str, str]] = {}  # package folder -> (root, name)
    for root, pkgs in metadata.items():
        for pkg in pkgs:
            owner[_rel(repo, str(Path(pkg["manifest_path"]).parent))] = (root, pkg["name"])
    found = []
    for root, pkgs in metadata.items():
        for pkg in pkgs:
            for dep in pkg["dependencies"]:
                if not dep.get("path"):
                    continue
                target = owner.get(_rel(repo, dep["path"]))
                if target is None or target[0] == root:
                    continue
                kind = dep.get("kind") or "normal"
                found.append(Edge(pkg["name"], root, target[1], target[0], kind))
    return found


def check(
    repo: Path,
    metadata: dict[str, list[dict]],
    allowed: dict[tuple[str, str, str], str] | None = None,
) -> tuple[list[str], int]:
    """Problems (one line each) and the number of cross-workspace edges checked."""
    allowed = ALLOWED if allowed is None else allowed
    problems = []
    crossing = edges(repo, metadata)
    seen = set()
    for e in crossing:
        key = (e.source, e.target, e.kind)
        seen.add(key)
        if key in allowed:
            continue
        up, down = tier_of(e.source_root), tier_of(e.target_root)
        if down >= up:
            where = f"{e.source_root or '.'}/Cargo.toml"
            problems.append(
                f"{where}: {e.source} ({e.kind}) depends on {e.target} in "
                f"{e.target_root or 'the host workspace'} (tier {down}), not below its "
                f"own tier {up}: move what both need to crates/ (decision 0095)"
            )
    for key, why in allowed.items():
        if key not in seen:
            problems.append(
                f"tools/lint/workspaces.py: the allowed edge {key[0]} -> {key[1]} "
                f"({key[2]}) no longer exists; delete it from ALLOWED ({why})"
            )
    return problems, len(crossing)


def main() -> int:
    repo = Path(__file__).resolve().parents[2]
    roots = workspace_roots(repo)
    metadata = {root: packages(repo, root) for root in roots}
    problems, crossing = check(repo, metadata)
    for line in problems:
        print(line)
    if problems:
        return 1
    print(
        f"workspaces: {len(roots)} roots, {crossing} dependencies between them, "
        "all pointing to a lower tier or allowed"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
