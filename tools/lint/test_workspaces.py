"""Tests of tools/lint/workspaces.py over made-up workspaces (no cargo needed)."""

from __future__ import annotations

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import workspaces  # noqa: E402

REPO = Path("/repo")


def pkg(root: str, name: str, *deps: tuple[str, str | None]) -> dict:
    """A package at REPO/root/name depending on (folder, kind) pairs."""
    folder = REPO / root / name
    return {
        "name": name,
        "manifest_path": str(folder / "Cargo.toml"),
        "dependencies": [
            {"name": Path(d).name, "path": str(REPO / d), "kind": kind}
            for d, kind in deps
        ],
    }


def repo_of(**extra: list[dict]) -> dict[str, list[dict]]:
    """The four workspaces as decision 0095 has them, plus `extra` packages."""
    metadata = {
        "crates": [pkg("crates", "engine"), pkg("crates", "forecast-matcher")],
        "sdk": [{**pkg("", "sdk", ("crates/engine", None)), "name": "forecast-sdk"}],
        "components": [
            pkg("components", "matcher", ("sdk", None), ("crates/forecast-matcher", None))
        ],
        "": [
            {
                **pkg("host", "embed", ("crates/engine", None)),
                "name": "forecast-embed",
            }
        ],
    }
    for root, pkgs in extra.items():
        metadata.setdefault(root.replace("_", "/"), []).extend(pkgs)
    return metadata


class TiersTest(unittest.TestCase):
    def test_each_root_finds_its_tier(self):
        self.assertEqual(workspaces.tier_of("crates"), 0)
        self.assertEqual(workspaces.tier_of("sdk"), 1)
        self.assertEqual(workspaces.tier_of("sdk/examples/dip-buyer"), 3)
        self.assertEqual(workspaces.tier_of("sdk/template"), 3)
        self.assertEqual(workspaces.tier_of("components"), 2)
        self.assertEqual(workspaces.tier_of(""), 2)
        self.assertEqual(workspaces.tier_of("tools/bench/peer/orders"), 3)
        # A prefix is a folder, not the start of a name.
        self.assertEqual(workspaces.tier_of("cratesx"), 2)


class CheckTest(unittest.TestCase):
    def test_the_decided_layout_passes(self):
        problems, crossing = workspaces.check(REPO, repo_of())
        self.assertEqual(problems, [])
        self.assertEqual(crossing, 4)

    def test_an_arrow_back_up_is_named(self):
        metadata = repo_of()
        metadata["crates"].append(pkg("crates", "backtest", ("sdk", None)))
        problems, _ = workspaces.check(REPO, metadata)
        self.assertEqual(len(problems), 1)
        self.assertIn("backtest (normal) depends on forecast-sdk in sdk", problems[0])
        self.assertTrue(problems[0].startswith("crates/Cargo.toml: "))

    def test_host_and_components_may_not_depend_on_each_other(self):
        metadata = repo_of()
        metadata["components"].append(pkg("components", "scorer", ("host/embed", None)))
        metadata[""].append(pkg("host", "services", ("components/matcher", "dev")))
        problems, _ = workspaces.check(REPO, metadata)
        self.assertEqual(len(problems), 2, problems)
        self.assertTrue(any("scorer (normal) depends on forecast-embed" in p for p in problems))
        self.assertTrue(any("services (dev) depends on matcher" in p for p in problems))

    def test_an_allowed_edge_holds_for_its_kind_only_and_not_once_gone(self):
        allowed = {("forecast-embed", "matcher", "dev"): "a while"}
        metadata = repo_of()
        embed = metadata[""][0]["dependencies"]
        embed.append({"name": "matcher", "path": str(REPO / "components/matcher"), "kind": "dev"})
        self.assertEqual(workspaces.check(REPO, metadata, allowed)[0], [])
        embed[-1]["kind"] = None
        problems, _ = workspaces.check(REPO, metadata, allowed)
        self.assertEqual(len(problems), 2, problems)
        self.assertIn("forecast-embed (normal) depends on matcher", problems[0])
        # ... and the allowed dev edge, gone, is reported as stale.
        self.assertIn("no longer exists", problems[1])
        self.assertEqual(workspaces.ALLOWED, {}, "decision 0095 keeps no edge sideways")

    def test_authors_and_tools_may_depend_on_anything_below(self):
        metadata = repo_of(
            sdk_examples_dip=[pkg("sdk/examples", "dip", ("sdk", None))],
            tools_peer=[pkg("tools/peer", "orders", ("components/matcher", None))],
        )
        problems, crossing = workspaces.check(REPO, metadata)
        self.assertEqual(problems, [])
        self.assertEqual(crossing, 6)

    def test_nothing_may_depend_on_an_author_crate(self):
        metadata = repo_of(sdk_examples_dip=[pkg("sdk/examples", "dip")])
        metadata["sdk"][0]["dependencies"].append(
            {"name": "dip", "path": str(REPO / "sdk/examples/dip"), "kind": "dev"}
        )
        problems, _ = workspaces.check(REPO, metadata)
        self.assertEqual(len(problems), 1)
        self.assertIn("forecast-sdk (dev) depends on dip", problems[0])

    def test_dependencies_inside_a_workspace_are_not_checked(self):
        metadata = repo_of()
        metadata["crates"].append(pkg("crates", "backtest", ("crates/engine", None)))
        problems, crossing = workspaces.check(REPO, metadata)
        self.assertEqual(problems, [])
        self.assertEqual(crossing, 4)


class TemplateTest(unittest.TestCase):
    def test_a_template_manifest_is_read_as_toml(self):
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            repo = Path(tmp)
            (repo / "sdk/template").mkdir(parents=True)
            (repo / "sdk/template/Cargo.toml").write_text(
                '[package]\nname = "{{name}}"\n[dependencies]\n'
                'forecast-sdk = { path = "../../sdk" }\nserde = "1"\n[workspace]\n'
            )
            [found] = workspaces.packages(repo, "sdk/template")
            self.assertEqual(found["name"], "{{name}}")
            self.assertEqual(
                found["dependencies"],
                [{"name": "forecast-sdk", "path": str(repo / "sdk"), "kind": None}],
            )


if __name__ == "__main__":
    unittest.main()
