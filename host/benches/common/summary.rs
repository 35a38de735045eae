//! One table for `make bench`: each bench adds its headline figures, beside
//! their targets, to the file named by `BENCH_SUMMARY` (when set);
//! `tools/bench/table.py` then writes that table into docs/BENCHMARKS.md.

use std::io::Write;

/// Whether a measured figure meets its target.
#[derive(Debug, Clone, Copy)]
pub enum Verdict {
    Met,
    Missed,
    /// Informational: no target of its own.
    #[allow(dead_code)] // each bench compiles this file and uses part of it
    None,
}

impl Verdict {
    /// `Met` when `ok`, else `Missed`.
    pub fn of(ok: bool) -> Self {
        if ok {
            Verdict::Met
        } else {
            Verdict::Missed
        }
    }

    fn word(self) -> &'static str {
        match self {
            Verdict::Met => "met",
            Verdict::Missed => "**missed**",
            Verdict::None => "—",
        }
    }
}

/// Adds `| measure | figure | target | verdict |` to the summary (and
/// prints it, so a bench run alone shows it too).
pub fn row(measure: &str, figure: &str, target: &str, verdict: Verdict) {
    let line = format!("| {measure} | {figure} | {target} | {} |", verdict.word());
    println!("summary {line}");
    let Ok(path) = std::env::var("BENCH_SUMMARY") else {
        return;
    };
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("open {path}: {e}"));
    writeln!(file, "{line}").unwrap_or_else(|e| panic!("write {path}: {e}"));
}
