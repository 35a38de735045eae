"""Tests of tools/lint/docs.py on fake repositories built in a temporary folder.

Run from the repository root: python3 -m unittest tools/lint/test_docs.py
"""

from __future__ import annotations

import importlib.util
import tempfile
import unittest
from pathlib import Path

# Loaded by path under its own name: `import docs` would find the repository's docs/ folder.
_SPEC = importlib.util.spec_from_file_location("docs_lint", Path(__file__).with_name("docs.py"))
docs_lint = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(docs_lint)


def record(number: str, title: str = "A title", *, status: str | None = "Status: accepted.",
           sections: tuple[str, ...] = ("Context", "Decision", "Consequences"),
           body: str = "Some text.") -> str:
    parts = [f"# {number} {title}", ""]
    if status is not None:
        parts += [status, ""]
    for name in sections:
        parts += [f"## {name}", "", body, ""]
    return "\n".join(parts)


class FakeRepository:
    """A repository root with front docs, decision records and their index."""

    def __init__(self, root: Path):
        self.root = root
        self.decisions = root / "docs" / "decisions"
        self.decisions.mkdir(parents=True)
        for name in ("README.md", "ARCHITECTURE.md", "docs/BENCHMARKS.md"):
            (root / name).write_text("# Front doc\n", encoding="utf-8")

    def add(self, name: str, text: str, *, listed: bool = True) -> None:
        (self.decisions / name).write_text(text, encoding="utf-8")
        if listed:
            self.list(name)

    def list(self, name: str) -> None:
        index = self.decisions / "README.md"
        lines = index.read_text(encoding="utf-8") if index.exists() else "# Decision records\n\n"
        index.write_text(lines + f"- [{name[:4]}]({name}) {name[5:-3]}\n", encoding="utf-8")

    def problems(self) -> list[str]:
        problems, _ = docs_lint.check(self.root)
        return problems


class DocsLintTest(unittest.TestCase):
    def setUp(self) -> None:
        self._tmp = tempfile.TemporaryDirectory()
        self.repo = FakeRepository(Path(self._tmp.name))
        self.repo.add("0001-first.md", record("0001"))
        self.repo.add(
            "0002-second.md",
            record("0002", status="Status: superseded by 0003.",
                   body="Replaces [0001](0001-first.md); keeps 0001's 60,000 rows and 3 s."),
        )
        self.repo.add("0003-third.md", record("0003"))

    def tearDown(self) -> None:
        self._tmp.cleanup()

    def assertOneProblem(self, fragment: str) -> str:
        problems = self.repo.problems()
        self.assertEqual(len(problems), 1, problems)
        self.assertIn(fragment, problems[0])
        return problems[0]

    def test_a_good_repository_passes(self) -> None:
        problems, records = docs_lint.check(self.repo.root)
        self.assertEqual(problems, [])
        self.assertEqual(records, 3)

    def test_missing_status(self) -> None:
        self.repo.add("0004-no-status.md", record("0004", status=None))
        problem = self.assertOneProblem("no 'Status:' line")
        self.assertTrue(problem.startswith("docs/decisions/0004-no-status.md: "), problem)

    def test_status_after_the_first_section_does_not_count(self) -> None:
        text = record("0004", status=None).replace("## Decision", "Status: accepted.\n\n## Decision")
        self.repo.add("0004-late-status.md", text)
        self.assertOneProblem("no 'Status:' line")

    def test_wrong_section_order(self) -> None:
        self.repo.add("0004-order.md",
                      record("0004", sections=("Decision", "Context", "Consequences")))
        self.assertOneProblem("sections out of order")

    def test_missing_and_unknown_sections(self) -> None:
        self.repo.add("0004-sections.md",
                      record("0004", sections=("Context", "Decision", "Rejected")))
        problems = self.repo.problems()
        self.assertEqual(len(problems), 2, problems)
        self.assertIn("'## Rejected' is not allowed", problems[0])
        self.assertIn("missing section '## Consequences'", problems[1])

    def test_an_old_style_status_section_is_refused(self) -> None:
        self.repo.add("0004-old.md", record("0004", sections=(
            "Context", "Decision", "Consequences", "Status")))
        self.assertOneProblem("'## Status' is not allowed")

    def test_too_large(self) -> None:
        self.repo.add("0004-large.md", record("0004", body="x" * 3000))
        self.assertOneProblem("more than 3072")

    def test_exactly_the_limit_passes(self) -> None:
        text = record("0004", body="")
        text += "y" * (docs_lint.RECORD_MAX_BYTES - len(text.encode()))
        self.repo.add("0004-limit.md", text)
        self.assertEqual(self.repo.problems(), [])

    def test_issue_references(self) -> None:
        for phrase in ("as issue 12 asks", "Issues 12 and 13", "see Issue #12", "fixes #12",
                       "work item 12", "item 4 of the list", "(issue 29)", "the pre-issue-17 loop"):
            with self.subTest(phrase=phrase):
                (self.repo.decisions / "0004-issue.md").unlink(missing_ok=True)
                text = record("0004").replace("Some text.", f"Text {phrase} here.", 1)
                self.repo.add("0004-issue.md", text,
                              listed=phrase == "as issue 12 asks")
                problem = self.assertOneProblem("names an issue or work item")
                self.assertIn("line ", problem)

    def test_record_numbers_and_plain_numbers_are_not_issue_references(self) -> None:
        body = ("Superseded in part by [0066](0003-third.md) and 0066; 12 items, 4 of them "
                "new; `#[derive(Debug)]`; see [the table](0001-first.md#status); 10,000 rows.")
        self.repo.add("0004-numbers.md", record("0004", body=body))
        self.assertEqual(self.repo.problems(), [])

    def test_heading_format_and_number(self) -> None:
        self.repo.add("0004-dot.md", record("0004").replace("# 0004 ", "# 0004. ", 1))
        self.assertOneProblem("first line must be '# 0004 Title'")
        (self.repo.decisions / "0004-dot.md").write_text(record("0005"), encoding="utf-8")
        self.assertOneProblem("heading number 0005 does not match the file name (0004)")

    def test_index_missing_a_record(self) -> None:
        self.repo.add("0004-unlisted.md", record("0004"), listed=False)
        problem = self.assertOneProblem("does not list 0004-unlisted.md")
        self.assertTrue(problem.startswith("docs/decisions/README.md: "), problem)

    def test_index_listing_a_record_twice_or_a_missing_file(self) -> None:
        self.repo.list("0001-first.md")
        self.assertOneProblem("lists 0001-first.md 2 times")
        self.repo.list("0009-gone.md")
        problems = self.repo.problems()
        self.assertEqual(len(problems), 2, problems)
        self.assertTrue(any("links to a missing file '0009-gone.md'" in p for p in problems),
                        problems)

    def test_a_link_inside_an_entry_does_not_list_the_record_again(self) -> None:
        index = self.repo.decisions / "README.md"
        index.write_text(index.read_text(encoding="utf-8").replace(
            "0001-first.md) first\n", "0001-first.md) first, superseded by [0003](0003-third.md)\n"),
            encoding="utf-8")
        self.assertEqual(self.repo.problems(), [])

    def test_badly_named_or_duplicate_records(self) -> None:
        (self.repo.decisions / "12-short.md").write_text(record("0012"), encoding="utf-8")
        self.assertOneProblem("not a record name")
        (self.repo.decisions / "12-short.md").unlink()
        self.repo.add("0003-again.md", record("0003"))
        self.assertOneProblem("number 0003 is used by 2 records")

    def test_front_doc_limits(self) -> None:
        (self.repo.root / "ARCHITECTURE.md").write_text("z" * 16_385, encoding="utf-8")
        self.assertOneProblem("ARCHITECTURE.md: 16385 bytes, more than 16384")
        (self.repo.root / "docs" / "BENCHMARKS.md").unlink()
        problems = self.repo.problems()
        self.assertIn("docs/BENCHMARKS.md: missing", problems)


if __name__ == "__main__":
    unittest.main()
