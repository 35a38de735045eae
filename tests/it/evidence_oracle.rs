//! The "evidence" figures of `GET /api/analysis/%5EGSPC` against an
//! independent, deliberately naive oracle written from their definitions
//! (not from the engine's code): the shipped ^GSPC closes are read from
//! `data/prices/IDX_GSPC.csv` (exactly the rows the demo universe loads)
//! and every figure is recomputed by plain scans, O(n²) where that is the
//! simplest way to say it.
//!
//! Checked per bucket: `outcome_quantiles`, `evidence.episodes`,
//! `fell_further`, `recovered`, `unrecovered`, `recovery_days_median`;
//! for the series: `current_state.evidence.unconditional_median_return`
//! and `thin`. The bootstrap interval `median_return_ci` is not
//! reimplemented, only checked for shape, for bracketing the bucket's
//! median, and for being reproducible bit for bit.

use crate::common::Server;

use forecast_api::analysis::{
    AnalysisResponse, Quantiles, SegmentBody, SegmentEvidenceBody, StateEvidenceBody,
};

/// `num_segments` of the default analysis.
const K: usize = 20;
/// Depth of one floor step of the drawdown grid.
const STEP: f64 = 0.05;
/// Relative tolerance of the quantiles, absolute one of the shares.
const TOL: f64 = 1e-12;

/// The shipped ^GSPC history: calendar days and closes, in date order.
struct Series {
    days: Vec<i64>,
    close: Vec<f64>,
}

/// Reads `data/prices/IDX_GSPC.csv` by its header's `date` and `close`.
fn load_gspc() -> Series {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../data/prices/IDX_GSPC.csv");
    let text = std::fs::read_to_string(path).expect("read IDX_GSPC.csv");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h.trim() == name)
            .unwrap_or_else(|| panic!("no {name} column in {header:?}"))
    };
    let (date_col, close_col) = (col("date"), col("close"));
    let (mut days, mut close) = (Vec::new(), Vec::new());
    for line in lines.filter(|l| !l.trim().is_empty()) {
        let fields: Vec<&str> = line.split(',').collect();
        let date = chrono::NaiveDate::parse_from_str(fields[date_col].trim(), "%Y-%m-%d")
            .unwrap_or_else(|e| panic!("bad date in {line:?}: {e}"));
        let price: f64 = fields[close_col].trim().parse().expect("a close");
        assert!(price > 0.0, "{line}");
        days.push(i64::from(chrono::Datelike::num_days_from_ce(&date)));
        close.push(price);
    }
    assert!(
        days.windows(2).all(|w| w[0] < w[1]),
        "dates strictly increasing"
    );
    Series { days, close }
}

/// Median of a non-empty slice, `(a + b) / 2` for an even count.
fn median(values: &[f64]) -> f64 {
    quantile(values, 0.5)
}

/// numpy's default (linear) quantile of a non-empty slice: position
/// `q·(m−1)` in the sorted values, interpolated between neighbours.
fn quantile(values: &[f64], q: f64) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let pos = q * (v.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    if lo == hi {
        v[lo]
    } else {
        v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
    }
}

/// What the oracle expects of one bucket.
#[derive(Debug, Default)]
struct BucketOracle {
    /// Rows whose drawdown falls in the bucket.
    rows: usize,
    /// Outcomes of those rows that have an exit.
    outcomes: Vec<f64>,
    /// Confirmed episodes.
    episodes: usize,
    /// Confirmed episodes that went below the bucket's lower bound by
    /// their exit.
    fell_further: usize,
    /// Calendar days to recovery of each recovered episode.
    recovery_days: Vec<f64>,
}

/// Every figure the oracle derives for one horizon.
struct Oracle {
    /// Bucket width.
    width: f64,
    buckets: Vec<BucketOracle>,
    /// Median of every confirmed outcome of the series.
    unconditional_median: f64,
}

/// The naive computation of every evidence figure for horizon `h`
/// (calendar days), metric `return`, `K` buckets.
fn oracle(s: &Series, h: i64) -> Oracle {
    let n = s.close.len();
    // Drawdown: the close over the running peak (recomputed from scratch
    // for each row, on purpose), minus one.
    let peak_upto = |t: usize| s.close[..=t].iter().copied().fold(f64::MIN, f64::max);
    let dd: Vec<f64> = (0..n).map(|t| s.close[t] / peak_upto(t) - 1.0).collect();

    // The grid of the last row: whole 5 % floor steps below the deepest
    // drawdown, between 1 and 20, split into K buckets.
    let deepest = dd.iter().copied().fold(f64::MAX, f64::min);
    let steps = ((-deepest / STEP - 1e-9).ceil() as i64).clamp(1, 20);
    let width = steps as f64 * STEP / K as f64;
    let bucket_of = |d: f64| {
        let x = -d / width;
        if x >= 1.0 {
            (x.floor() as usize).min(K - 1)
        } else {
            0
        }
    };

    // Exit of each row: the first later row at least `h` calendar days on.
    let exit: Vec<Option<usize>> = (0..n)
        .map(|t| (t + 1..n).find(|&j| s.days[j] >= s.days[t] + h))
        .collect();
    let outcome = |t: usize| exit[t].map(|j| s.close[j] / s.close[t] - 1.0);

    let mut buckets: Vec<BucketOracle> = (0..K).map(|_| BucketOracle::default()).collect();
    for (i, b) in buckets.iter_mut().enumerate() {
        let lower = -((i + 1) as f64) * width;
        let members: Vec<usize> = (0..n).filter(|&t| bucket_of(dd[t]) == i).collect();
        b.rows = members.len();
        b.outcomes = members.iter().filter_map(|&t| outcome(t)).collect();
        // Episode starts: the first member, and each member at least `h`
        // calendar days after the previous member.
        let starts = members
            .iter()
            .enumerate()
            .filter(|&(k, &t)| k == 0 || s.days[t] - s.days[members[k - 1]] >= h)
            .map(|(_, &t)| t);
        for e in starts {
            // Only episodes whose first row has an exit are confirmed.
            let Some(j) = exit[e] else { continue };
            b.episodes += 1;
            if (e + 1..=j).any(|v| dd[v] < lower) {
                b.fell_further += 1;
            }
            let peak = peak_upto(e);
            if let Some(v) = (e..n).find(|&v| s.close[v] >= peak) {
                b.recovery_days.push((s.days[v] - s.days[e]) as f64);
            }
        }
    }

    let all: Vec<f64> = (0..n).filter_map(outcome).collect();
    Oracle {
        width,
        buckets,
        unconditional_median: median(&all),
    }
}

/// `|got − want|` within `TOL`, relative to `want` when it exceeds one.
fn close_enough(got: f64, want: f64) -> bool {
    (got - want).abs() <= TOL * want.abs().max(1.0)
}

/// Compares one response's evidence with the oracle; every mismatch is
/// collected (bucket, field, expected, got) so one run reports them all.
fn compare(label: &str, body: &AnalysisResponse, o: &Oracle, mismatches: &mut Vec<String>) {
    let mut miss = |what: String| mismatches.push(format!("{label}: {what}"));
    let segments = &body.segments;
    assert_eq!(segments.len(), K, "{label}: one segment per bucket");

    // The grid: segment 0 spans (−w, 0].
    let lower0 = segments[0].lower_bound;
    if !close_enough(lower0, -o.width) {
        miss(format!(
            "segment 0 lower_bound: expected {}, got {lower0}",
            -o.width
        ));
    }

    for (i, (seg, b)) in segments.iter().zip(&o.buckets).enumerate() {
        assert_eq!(seg.segment_idx as usize, i, "{label}: segments in order");
        // Not defined by the brief, so informative only: a mismatch here
        // would point at a different bucket assignment.
        if seg.count as usize != b.rows {
            println!(
                "{label} bucket {i}: count {} vs {} rows in the oracle's bucket (informative)",
                seg.count, b.rows
            );
        }
        compare_quantiles(i, seg.outcome_quantiles.as_ref(), b, &mut miss);
        compare_bucket_evidence(label, i, seg, b, &mut miss);
    }
    compare_current_state(label, body, o, &mut miss);
}

/// Bucket `i`'s quantiles `q` against those of its confirmed outcomes.
fn compare_quantiles(
    i: usize,
    q: Option<&Quantiles>,
    b: &BucketOracle,
    miss: &mut impl FnMut(String),
) {
    match (b.outcomes.is_empty(), q) {
        (true, None) => {}
        (true, Some(q)) => miss(format!(
            "bucket {i} outcome_quantiles: expected null, got {q:?}"
        )),
        (false, None) => miss(format!(
            "bucket {i} outcome_quantiles: expected values, got null"
        )),
        (false, Some(q)) => {
            for (name, p, got) in [
                ("p10", 0.10, q.p10),
                ("p25", 0.25, q.p25),
                ("p50", 0.50, q.p50),
                ("p75", 0.75, q.p75),
                ("p90", 0.90, q.p90),
            ] {
                let want = quantile(&b.outcomes, p);
                if (got - want).abs() > TOL * want.abs().max(f64::MIN_POSITIVE) {
                    miss(format!(
                        "bucket {i} outcome_quantiles.{name}: expected {want:e}, got {got:e}"
                    ));
                }
            }
        }
    }
}

/// Segment `i`'s evidence (episodes, fell further, recoveries, the
/// bootstrap interval) against the oracle's bucket `b`.
fn compare_bucket_evidence(
    label: &str,
    i: usize,
    seg: &SegmentBody,
    b: &BucketOracle,
    miss: &mut impl FnMut(String),
) {
    let ev = seg
        .evidence
        .as_ref()
        .unwrap_or_else(|| panic!("{label} bucket {i}: no evidence"));

    if ev.episodes as usize != b.episodes {
        miss(format!(
            "bucket {i} episodes: expected {}, got {}",
            b.episodes, ev.episodes
        ));
    }

    let ff = ev.fell_further;
    let want_ff = (b.episodes > 0).then(|| b.fell_further as f64 / b.episodes as f64);
    let ff_ok = match (ff, want_ff) {
        (Some(g), Some(w)) => (g - w).abs() <= TOL,
        (None, None) => true,
        _ => false,
    };
    if !ff_ok {
        miss(format!(
            "bucket {i} fell_further: expected {want_ff:?}, got {ff:?}"
        ));
    }

    let recovered = b.recovery_days.len();
    if ev.recovered as usize != recovered {
        miss(format!(
            "bucket {i} recovered: expected {recovered}, got {}",
            ev.recovered
        ));
    }
    if ev.unrecovered as usize != b.episodes - recovered {
        miss(format!(
            "bucket {i} unrecovered: expected {}, got {}",
            b.episodes - recovered,
            ev.unrecovered
        ));
    }
    let want_days = (!b.recovery_days.is_empty()).then(|| median(&b.recovery_days));
    let got_days = ev.recovery_days_median;
    if got_days != want_days {
        miss(format!(
            "bucket {i} recovery_days_median: expected {want_days:?}, got {got_days:?}"
        ));
    }

    // The bootstrap interval: present from two episodes on, ordered,
    // and around the bucket's median.
    if b.episodes >= 2 {
        match ev.median_return_ci {
            Some([lo, hi]) => {
                let med = seg
                    .static_median_return
                    .expect("a static median with episodes");
                if !(lo <= hi && lo - TOL <= med && med <= hi + TOL) {
                    miss(format!(
                        "bucket {i} median_return_ci: [{lo}, {hi}] does not bracket \
                         static_median_return {med}"
                    ));
                }
            }
            None => miss(format!(
                "bucket {i} median_return_ci: expected an interval, got null"
            )),
        }
    }
}

/// The series-wide median and the current bucket's verdict.
fn compare_current_state(
    label: &str,
    body: &AnalysisResponse,
    o: &Oracle,
    miss: &mut impl FnMut(String),
) {
    let state = &body.current_state;
    let sev = state
        .evidence
        .as_ref()
        .unwrap_or_else(|| panic!("{label}: no current_state.evidence"));
    let got_u = sev.unconditional_median_return;
    if !got_u.is_some_and(|g| close_enough(g, o.unconditional_median)) {
        miss(format!(
            "unconditional_median_return: expected {:e}, got {got_u:?}",
            o.unconditional_median
        ));
    }
    let cur = state.segment as usize;
    let cur_ev = body.segments[cur]
        .evidence
        .as_ref()
        .unwrap_or_else(|| panic!("{label}: no evidence for bucket {cur}"));
    if sev.episodes != cur_ev.episodes {
        miss(format!(
            "current_state.evidence.episodes {} vs bucket {cur}'s {}",
            sev.episodes, cur_ev.episodes
        ));
    }
    let ci = cur_ev.median_return_ci;
    let contains =
        ci.is_some_and(|[lo, hi]| lo <= o.unconditional_median && o.unconditional_median <= hi);
    let want_thin = o.buckets[cur].episodes < 10 || contains;
    if sev.thin != want_thin {
        miss(format!(
            "current_state.evidence.thin (bucket {cur}, {} episodes, ci {ci:?}): \
             expected {want_thin}, got {}",
            o.buckets[cur].episodes, sev.thin
        ));
    }
    if sev.reasons.is_empty() == want_thin {
        miss(format!(
            "current_state.evidence.reasons {:?} with thin = {want_thin}",
            sev.reasons
        ));
    }
}

/// Everything evidence-shaped in a response: each segment's `evidence`
/// and `current_state.evidence`.
fn evidence_of(
    body: &AnalysisResponse,
) -> (Vec<Option<SegmentEvidenceBody>>, Option<StateEvidenceBody>) {
    (
        body.segments.iter().map(|s| s.evidence.clone()).collect(),
        body.current_state.evidence.clone(),
    )
}

#[tokio::test]
async fn gspc_evidence_matches_a_naive_oracle() {
    let series = load_gspc();
    let s = Server::app().await;
    let api = s.api();
    let mut mismatches = Vec::new();

    for (h, query) in [
        (90, "return_period=90"),
        (30, "return_period=30&metric=return"),
    ] {
        let o = oracle(&series, h);
        let body = api
            .analysis("^GSPC", query)
            .await
            .unwrap_or_else(|r| panic!("{query}: {r}"));
        assert_eq!(
            body.metadata.data_points as usize,
            series.close.len(),
            "{query}: the service holds exactly the CSV's rows"
        );
        compare(query, &body, &o, &mut mismatches);

        // Not vacuous: several buckets have episodes, and episodes are far
        // fewer than the days behind them.
        let with_episodes = o.buckets.iter().filter(|b| b.episodes > 0).count();
        let episodes: usize = o.buckets.iter().map(|b| b.episodes).sum();
        let days: usize = o.buckets.iter().map(|b| b.rows).sum();
        assert!(with_episodes >= 5, "{query}: {with_episodes} buckets");
        assert!(
            episodes * 10 < days,
            "{query}: {episodes} episodes, {days} days"
        );
        println!(
            "{query}: width {:.6}, {with_episodes} buckets with episodes, \
             {episodes} episodes over {days} days, unconditional median {:.6}",
            o.width, o.unconditional_median
        );

        // Evidence does not depend on the decay; an uncached request with
        // another decay gives the same figures, and the same bootstrap
        // interval bit for bit when repeated.
        let other = format!("{query}&decay_factor=0.94");
        let first = api.analysis("^GSPC", &other).await;
        let first = first.unwrap_or_else(|r| panic!("{other}: {r}"));
        let second = api.analysis("^GSPC", &other).await;
        let second = second.unwrap_or_else(|r| panic!("{other}: {r}"));
        assert!(!first.metadata.from_cache, "{other}");
        let (a, b) = (evidence_of(&first), evidence_of(&second));
        let intervals = |(segments, _): &(Vec<Option<SegmentEvidenceBody>>, _)| {
            segments
                .iter()
                .map(|e| {
                    let ci = e.as_ref().and_then(|e| e.median_return_ci);
                    ci.map(|[lo, hi]| [lo.to_bits(), hi.to_bits()])
                })
                .collect::<Vec<_>>()
        };
        if intervals(&a) != intervals(&b) {
            mismatches.push(format!(
                "{other}: a segment's median_return_ci differs between two calls: {:?} vs {:?}",
                a.0, b.0
            ));
        }
        if a != evidence_of(&body) {
            mismatches.push(format!(
                "{query}: evidence with decay_factor=0.94 differs from the default's"
            ));
        }
    }

    assert!(
        mismatches.is_empty(),
        "{} mismatch(es):\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}
