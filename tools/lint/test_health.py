"""Tests of tools/lint/health.py: `python3 -m unittest tools/lint/test_health.py`."""

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import health  # noqa: E402

TRAITS = """
/// A store.
#[async_trait]
pub trait Store: Send + Sync {
    async fn one(&self) -> u32;
    fn two(&self) -> u32 {
        fn nested() {}
        nested();
        2
    }
    // fn commented_out(&self);
    pub(crate) fn three(&self);
}

trait Empty {}

pub trait Alias = Store;

impl Store for X {
    fn one(&self) -> u32 { 1 }
}
"""

TABLE = """# Architecture

## Health

| measure | now | target |
|---|---|---|
| alpha | 1 | ≤ 2 |
| by hand | 544 | ≤ 230 |

## Next
| alpha | untouched | |
"""


class TraitSizes(unittest.TestCase):
    def test_counts_the_fn_items_at_the_top_of_each_body(self):
        self.assertEqual(health.trait_sizes(TRAITS), [("Store", 3), ("Empty", 0), ("Alias", 0)])


SLEEPS = """
async fn t() {
    tokio::time::sleep(d).await;
    loop {
        if done() { break; }
        tokio::time::sleep(d).await;
    }
    tokio::spawn(async move {
        tokio::time::sleep(slow).await;
    });
    let s = "{ loop {"; // a string and a comment: loop {
    if x {
        std::thread::sleep(d);
    }
    while !done()
    {
        tokio::time::sleep(d).await;
    }
}
"""


class FixedSleeps(unittest.TestCase):
    def test_a_sleep_outside_loops_and_tasks_is_fixed(self):
        self.assertEqual(health.fixed_sleeps(SLEEPS), [3, 13])


class Update(unittest.TestCase):
    def test_a_current_table_has_no_problem(self):
        text, problems = health.update(TABLE, {"alpha": "1"})
        self.assertEqual((text, problems), (TABLE, []))

    def test_a_stale_cell_is_a_problem_and_rewritten_only_in_the_section(self):
        text, problems = health.update(TABLE, {"alpha": "3"})
        self.assertEqual(len(problems), 1)
        self.assertIn("'alpha' says '1'", problems[0])
        self.assertIn("| alpha | 3 | ≤ 2 |", text)
        self.assertIn("| by hand | 544 | ≤ 230 |", text)
        self.assertIn("| alpha | untouched | |", text)

    def test_a_missing_row_or_section_is_a_problem(self):
        _, problems = health.update(TABLE, {"beta": "1"})
        self.assertEqual(problems, ["ARCHITECTURE.md: Health table has no row 'beta'"])
        _, problems = health.update("# Architecture\n", {"alpha": "1"})
        self.assertEqual(problems, ["ARCHITECTURE.md: no `## Health` section"])

    def test_the_tree_is_measured(self):
        rows = health.measure(Path(__file__).resolve().parent.parent.parent)
        self.assertEqual(len(rows), 6)
        self.assertRegex(rows["largest trait in the host"], r"^`\w+`, \d+ methods$")


if __name__ == "__main__":
    unittest.main()
