//! `make bench`: the full daily grade of the demo universe (every gradable
//! asset × 5 return periods × 3 metrics through the segmentation component,
//! one scorer call per asset, SQLite), the way an operator runs it:
//! `forecast demo load` into a fresh database, then `forecast grade` timed
//! from outside. Also how busy the cores were: the child's CPU time over
//! its wall time (from /proc/self/stat once it has been reaped).

mod common;

use std::process::Command;
use std::time::Instant;

use common::summary::{row, Verdict};

/// The issue-17 target: 25 s for the 3,232 assets of the catalog.
const TARGET_MS_PER_ASSET: f64 = 25_000.0 / 3_232.0;

/// CPU seconds (user + system) of this process's reaped children.
fn children_cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    // Fields after the parenthesised command name; cutime and cstime are
    // fields 16 and 17 (1-based), in clock ticks of 1/100 s on Linux.
    let rest = &stat[stat.rfind(')').expect("comm") + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    let ticks = |i: usize| fields[i - 3].parse::<f64>().expect("ticks");
    (ticks(16) + ticks(17)) / 100.0
}

fn main() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join("bench-grade.db");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    let db = format!("sqlite://{}", path.display());
    common::forecast(&db, &["demo", "load"]);
    let cpu_before = children_cpu_seconds();
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_forecast"))
        .arg("grade")
        .env("DATABASE_URL", &db)
        .env("RUST_LOG", "warn")
        .output()
        .expect("run forecast grade");
    let wall = started.elapsed().as_secs_f64();
    let cpu = children_cpu_seconds() - cpu_before;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "forecast grade failed:\n{stdout}");
    // "run … : N assets graded here and F failed in …"
    let graded: f64 = stdout
        .split_whitespace()
        .collect::<Vec<_>>()
        .windows(3)
        .find(|w| w[1] == "assets" && w[2] == "graded")
        .and_then(|w| w[0].parse().ok())
        .expect("the summary line names the assets graded");
    let per_asset_ms = wall * 1e3 / graded;
    println!("{}", stdout.lines().last().unwrap_or_default());
    row(
        &format!("full daily grade, {graded} assets × 15 (wall)"),
        &format!("{wall:.1} s ({per_asset_ms:.2} ms per asset)"),
        "≤ 25 s for 3,232 (≤ 7.7 ms per asset)",
        Verdict::of(per_asset_ms <= TARGET_MS_PER_ASSET),
    );
    row(
        "full daily grade: cores busy (CPU time / wall)",
        &format!("{:.2} of 2 ({cpu:.1} s CPU)", cpu / wall),
        "both cores busy",
        Verdict::of(cpu / wall >= 1.6),
    );
}
