"""Tests of tools/lint/layers.py on fake repositories built in a temporary folder,
with the metadata cargo would give for them (no cargo needed).

Run from the repository root: python3 -m unittest tools/lint/test_layers.py
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
import unittest
from pathlib import Path

# Loaded by path under its own name, like test_docs.py loads docs.py; registered before it
# runs, as its dataclasses look their module up in sys.modules.
_SPEC = importlib.util.spec_from_file_location("layers_lint", Path(__file__).with_name("layers.py"))
layers_lint = importlib.util.module_from_spec(_SPEC)
sys.modules[_SPEC.name] = layers_lint
_SPEC.loader.exec_module(layers_lint)

TABLE = """\
| layer | crates | depend on |
|---|---|---|
| 0 | `forecast-domain` | `forecast-engine` (calendar arithmetic) |
| 1 | `forecast-api`, `-store` | domain |
| 2 | `forecast-services` | layers 0–1 |
| 3 | `forecast-host` (binary `forecast`) | the layers below |
"""

# crate name -> (folder under the root, normal dependencies)
CRATES = {
    "forecast-host": ("host", ["forecast-services", "forecast-api", "forecast-domain"]),
    "forecast-domain": ("host/domain", []),
    "forecast-api": ("host/api", ["forecast-domain"]),
    "forecast-store": ("host/store", ["forecast-domain"]),
    "forecast-services": ("host/services", ["forecast-api", "forecast-store"]),
    "forecast-sdk": ("sdk", []),
}


def architecture(table: str = TABLE) -> str:
    return (
        "# Architecture\n\n## Bird's-eye view\n\n```\n## Layers and the dependency rule\n```\n\n"
        "## Layers and the dependency rule\n\nA crate depends only on lower layers.\n\n"
        f"{table}\nSome prose.\n\n## Code map\n\n"
        "| layer | crates | depend on |\n|---|---|---|\n| 9 | `not-counted` | x |\n"
    )


class FakeRepository:
    """A repository root with ARCHITECTURE.md, crates with Rust files, and the metadata
    `cargo metadata --no-deps --format-version 1` would print for it."""

    def __init__(self, root: Path):
        self.root = root.resolve()
        self.packages: dict[str, dict] = {}
        for name, (folder, dependencies) in CRATES.items():
            self.add_crate(name, folder, dependencies)
        self.write_architecture(architecture())

    def write_architecture(self, text: str) -> None:
        (self.root / "ARCHITECTURE.md").write_text(text, encoding="utf-8")

    def add_crate(self, name: str, folder: str, dependencies: list[str],
                  lines: int = 100) -> None:
        directory = self.root / folder
        (directory / "src").mkdir(parents=True, exist_ok=True)
        (directory / "Cargo.toml").write_text(f'[package]\nname = "{name}"\n', encoding="utf-8")
        self.write_rust(f"{folder}/src/lib.rs", lines)
        self.packages[name] = {
            "name": name,
            "id": f"path+file://{directory}#{name}@0.1.0",
            "manifest_path": str(directory / "Cargo.toml"),
            "dependencies": [],
        }
        for dependency in dependencies:
            self.depend(name, dependency)

    def depend(self, name: str, on: str, kind: str | None = None,
               source: str | None = None) -> None:
        self.packages[name]["dependencies"].append(
            {"name": on, "kind": kind, "source": source, "rename": None, "target": None})

    def write_rust(self, relative: str, lines: int) -> None:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("// line\n" * lines, encoding="utf-8")

    def metadata(self) -> dict:
        return {
            "packages": list(self.packages.values()),
            "workspace_members": [p["id"] for p in self.packages.values()],
            "workspace_root": str(self.root),
            "resolve": None,
            "version": 1,
        }

    def check(self):
        return layers_lint.check(self.root, self.metadata())

    def problems(self) -> list[str]:
        return self.check().problems


class LayersLintTest(unittest.TestCase):
    def setUp(self) -> None:
        self._tmp = tempfile.TemporaryDirectory()
        self.repo = FakeRepository(Path(self._tmp.name))

    def tearDown(self) -> None:
        self._tmp.cleanup()

    def assertOneProblem(self, fragment: str) -> str:
        problems = self.repo.problems()
        self.assertEqual(len(problems), 1, problems)
        self.assertIn(fragment, problems[0])
        return problems[0]

    def test_a_correct_tree_passes(self) -> None:
        result = self.repo.check()
        self.assertEqual(result.problems, [])
        self.assertEqual((result.crates, result.layers), (5, 4))
        self.assertEqual(result.total_lines, 500)
        self.assertEqual(
            layers_lint.summary(result),
            "layers: 5 host crates in 4 layers, every dependency downward,"
            " largest crate forecast-api 20.0 % of 500 lines")

    def test_a_crate_missing_from_the_table(self) -> None:
        self.repo.add_crate("forecast-bundle", "host/bundle", [])
        problem = self.assertOneProblem(
            "host crate `forecast-bundle` (host/bundle/Cargo.toml) is not in the layer table")
        self.assertTrue(problem.startswith("ARCHITECTURE.md: "), problem)

    def test_a_table_crate_that_does_not_exist(self) -> None:
        self.repo.write_architecture(architecture(TABLE.replace("`-store`", "`-store`, `-ghost`")))
        problem = self.assertOneProblem("`forecast-ghost` is not a host crate")
        self.assertIn("line ", problem)

    def test_a_workspace_member_outside_host_is_not_a_host_crate(self) -> None:
        self.repo.write_architecture(architecture(TABLE.replace("`-store`", "`-store`, `-sdk`")))
        self.assertOneProblem("`forecast-sdk` is not a host crate (a workspace member outside"
                              " host/ (sdk/Cargo.toml))")

    def test_a_crate_listed_twice(self) -> None:
        self.repo.write_architecture(architecture(TABLE.replace(
            "| `forecast-services` |", "| `forecast-services`, `-store` |")))
        self.assertOneProblem("`forecast-store` is listed 2 times: layer 1")

    def test_an_upward_dependency(self) -> None:
        self.repo.depend("forecast-store", "forecast-services")
        problem = self.assertOneProblem(
            "forecast-store (layer 1) depends on forecast-services (layer 2): upward")
        self.assertTrue(problem.startswith("host/store/Cargo.toml: "), problem)

    def test_a_sideways_dependency(self) -> None:
        self.repo.depend("forecast-api", "forecast-store")
        self.assertOneProblem(
            "forecast-api (layer 1) depends on forecast-store (layer 1): sideways")

    def test_dev_and_build_dependencies_are_ignored(self) -> None:
        self.repo.depend("forecast-domain", "forecast-services", kind="dev")
        self.repo.depend("forecast-api", "forecast-store", kind="dev")
        self.repo.depend("forecast-api", "forecast-host", kind="build")
        self.assertEqual(self.repo.problems(), [])

    def test_a_platform_specific_normal_dependency_counts(self) -> None:
        self.repo.depend("forecast-domain", "forecast-api")
        self.repo.packages["forecast-domain"]["dependencies"][-1]["target"] = "cfg(unix)"
        self.assertOneProblem("forecast-domain (layer 0) depends on forecast-api (layer 1): upward")

    def test_a_registry_crate_of_the_same_name_is_not_the_host_crate(self) -> None:
        self.repo.depend("forecast-domain", "forecast-api",
                         source="registry+https://github.com/rust-lang/crates.io-index")
        self.assertEqual(self.repo.problems(), [])

    def test_the_dash_abbreviation(self) -> None:
        names, problems = layers_lint.crate_names(
            "`forecast-api`, `-store`, `-plugins`, `-embed`, `-web`, `-report`")
        self.assertEqual(problems, [])
        self.assertEqual(names, ["forecast-api", "forecast-store", "forecast-plugins",
                                 "forecast-embed", "forecast-web", "forecast-report"])
        names, problems = layers_lint.crate_names("`forecast-services`, `forecast-ingest`")
        self.assertEqual((names, problems), (["forecast-services", "forecast-ingest"], []))

    def test_names_in_parentheses_are_not_crates(self) -> None:
        self.assertEqual(layers_lint.crate_names("`forecast-host` (binary `forecast`)"),
                         (["forecast-host"], []))
        self.assertEqual(layers_lint.crate_names("`a-b` (not `-c`; (nested `d`)) and `-e`"),
                         (["a-b", "a-e"], []))

    def test_an_abbreviation_without_a_full_name_before_it(self) -> None:
        self.repo.write_architecture(architecture(TABLE.replace(
            "`forecast-api`, `-store`", "`-store`, `forecast-api`")))
        problems = self.repo.problems()
        self.assertTrue(any("`-store` abbreviates a name but no full name comes before it" in p
                            for p in problems), problems)
        self.assertTrue(any("`forecast-store`" in p and "not in the layer table" in p
                            for p in problems), problems)

    def test_a_missing_section_or_table(self) -> None:
        self.repo.write_architecture("# Architecture\n\n## Code map\n\n" + TABLE)
        problems = self.repo.problems()
        self.assertIn("ARCHITECTURE.md: no section '## Layers and the dependency rule'", problems)
        self.repo.write_architecture(architecture("No table here.\n"))
        problems = self.repo.problems()
        self.assertTrue(any("has no table" in p for p in problems), problems)

    def test_a_layer_that_is_not_a_number(self) -> None:
        self.repo.write_architecture(architecture(TABLE.replace("| 2 |", "| two |")))
        problems = self.repo.problems()
        self.assertTrue(any("layer 'two' is not a whole number" in p for p in problems), problems)

    def test_a_crate_over_20_percent(self) -> None:
        self.repo.write_rust("host/store/src/big.rs", 100)  # 200 of 600 lines: 33.3 %
        problem = self.assertOneProblem(
            "forecast-store holds 33.3 % of the host's 600 Rust lines (200), more than 20.0 %")
        self.assertTrue(problem.startswith("host/store/: "), problem)

    def test_lines_count_for_the_innermost_crate_and_skip_target(self) -> None:
        self.repo.write_rust("host/benches/bench.rs", 20)
        self.repo.write_rust("host/tests/it.rs", 30)
        self.repo.write_rust("host/target/debug/build/out.rs", 5000)
        self.repo.write_rust("host/store/target/gen.rs", 5000)
        self.repo.write_rust("host/domain/tests/more.rs", 7)
        lines = self.repo.check().lines
        self.assertEqual(lines["forecast-host"], 150)
        self.assertEqual(lines["forecast-store"], 100)
        self.assertEqual(lines["forecast-domain"], 107)
        self.assertNotIn("forecast-sdk", lines)

    def test_the_real_table_parses(self) -> None:
        text = (Path(__file__).resolve().parent.parent.parent / "ARCHITECTURE.md").read_text(
            encoding="utf-8")
        table, problems = layers_lint.parse_table(text)
        self.assertEqual(problems, [])
        names = [name for name, _, _ in table.rows]
        self.assertIn("forecast-host", names)
        self.assertNotIn("forecast", names)
        self.assertEqual(len(names), len(set(names)))


if __name__ == "__main__":
    unittest.main()
