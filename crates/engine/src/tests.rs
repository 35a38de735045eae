//! Unit tests: hand-checked formulas on small series, a literal O(n²)
//! re-implementation of DESIGN §4 as an oracle, and the no-look-ahead
//! property over random cuts.

#![allow(clippy::needless_range_loop)] // index loops mirror the formulas

use super::*;

/// Deterministic xorshift64* so the tests need no dependency.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.unit().max(1e-12), self.unit());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// `n` consecutive calendar days starting at day `start`.
fn every_day(start: i32, n: usize) -> Vec<i32> {
    (0..n as i32).map(|i| start + i).collect()
}

/// `n` weekdays starting on Monday 1970-01-05 (day 4).
fn weekdays(n: usize) -> Vec<i32> {
    (4..).filter(|&d| !is_weekend(d)).take(n).collect()
}

fn random_walk(rng: &mut Rng, n: usize, vol: f64) -> Vec<f64> {
    let mut p = 100.0;
    (0..n)
        .map(|_| {
            p *= (vol * rng.normal()).exp();
            p
        })
        .collect()
}

fn params(return_period: u32, metric: Metric) -> Params {
    Params {
        return_period,
        metric,
        ..Params::default()
    }
}

#[test]
fn calendar_helpers() {
    assert_eq!(civil_from_days(0), (1970, 1, 1));
    assert_eq!(civil_from_days(-1), (1969, 12, 31));
    assert_eq!(civil_from_days(19_723), (2024, 1, 1));
    assert_eq!(civil_from_days(19_782), (2024, 2, 29));
    assert!(!is_weekend(0)); // Thursday
    assert!(is_weekend(2) && is_weekend(3)); // Sat, Sun
    assert!(!is_weekend(4)); // Monday
}

#[test]
fn drawdown_is_distance_from_running_peak() {
    let d = drawdowns(&[100.0, 120.0, 90.0, 120.0, 130.0, 65.0]);
    assert_eq!(d, vec![0.0, 0.0, 90.0 / 120.0 - 1.0, 0.0, 0.0, -0.5]);
}

#[test]
fn floor_steps_round_down_to_five_percent() {
    assert_eq!(Grid::steps_for(0.0), 1);
    assert_eq!(Grid::steps_for(-0.01), 1);
    assert_eq!(Grid::steps_for(-0.05), 1);
    assert_eq!(Grid::steps_for(-0.10), 2);
    assert_eq!(Grid::steps_for(-0.12), 3);
    assert_eq!(Grid::steps_for(-1.0), 20);
    let g = Grid::new(2, 20); // floor −10 %, width 0.5 %
    assert_eq!(g.segment(0.0), 0);
    assert_eq!(g.segment(-0.004), 0);
    assert_eq!(g.segment(-0.0051), 1);
    assert_eq!(g.segment(-0.0999), 19);
    assert_eq!(
        g.segment(-0.5),
        19,
        "deeper than the floor stays in the last bucket"
    );
}

#[test]
fn exits_follow_calendar_days_across_gaps_and_weekends() {
    assert_eq!(
        exits(&[0, 1, 2, 5, 10], 3),
        vec![Some(3), Some(3), Some(3), Some(4), None]
    );
    // Weekday calendar, 7-day horizon: every row exits five rows later.
    let dates = weekdays(20);
    let e = exits(&dates, 7);
    for (t, exit) in e.iter().enumerate() {
        assert_eq!(*exit, (t + 5 < 20).then_some(t + 5), "row {t}");
    }
}

#[test]
fn periods_per_year_follows_the_calendar() {
    assert_eq!(infer_periods_per_year(&weekdays(400)), 252);
    assert_eq!(infer_periods_per_year(&every_day(0, 400)), 365);
}

#[test]
fn rejects_short_or_malformed_input() {
    let dates = every_day(0, 299);
    let closes = vec![1.0; 299];
    assert_eq!(
        analyse(&dates, &closes, &Params::default()),
        Err(EngineError::InsufficientData {
            rows: 299,
            required: 300
        })
    );
    let mut dates = every_day(0, 300);
    let mut closes = vec![1.0; 300];
    closes[7] = 0.0;
    assert!(
        matches!(analyse(&dates, &closes, &Params::default()), Err(EngineError::InvalidInput(m)) if m.contains("row 7"))
    );
    closes[7] = 1.0;
    dates[10] = dates[9];
    assert!(
        matches!(analyse(&dates, &closes, &Params::default()), Err(EngineError::InvalidInput(m)) if m.contains("row 10"))
    );
    let bad = Params {
        num_segments: 9,
        ..Params::default()
    };
    assert!(analyse(&every_day(0, 300), &closes, &bad).is_err());
}

/// Steady growth: every return outcome is `g^7 − 1`, so the predictions and
/// the cumulative errors have closed forms.
#[test]
fn constant_growth_has_closed_form_predictions() {
    let n: usize = 320;
    let g: f64 = 1.001;
    let closes: Vec<f64> = (0..n).map(|t| 100.0 * g.powi(t as i32)).collect();
    let a = analyse(&every_day(0, n), &closes, &params(7, Metric::Return)).unwrap();
    let y = g.powi(7) - 1.0;
    let s = &a.series;
    for t in 0..n {
        assert_eq!(s.drawdowns[t], 0.0);
        // Outcomes of starts 0..=t−7 are confirmed at t.
        let expected = if t >= 7 { y } else { 0.0 };
        assert!(
            (s.expected_returns[t] - expected).abs() < 1e-12,
            "ema at {t}"
        );
        assert!(
            (s.median_returns[t] - expected).abs() < 1e-12,
            "median at {t}"
        );
        let confirmed = (t + 1).saturating_sub(7);
        match s.prediction_error_cumavg[t] {
            None => assert_eq!(confirmed, 0),
            Some(c) => {
                // Starts 0..7 were predicted 0, all later ones y.
                let wrong = confirmed.min(7) as f64;
                assert!(
                    (c - y * wrong / confirmed as f64).abs() < 1e-12,
                    "cumavg at {t}"
                );
            }
        }
        assert_eq!(s.actual_returns[t].is_some(), t + 7 < n);
        assert!(
            (s.projected_prices[t].unwrap() - closes[t] * (1.0 + s.median_returns[t])).abs() < 1e-9
        );
    }
    assert_eq!(a.current.segment, 0);
    assert_eq!(a.current.confirmed_count as usize, n - 7);
    assert!(!a.current.insufficient_data);
    assert_eq!(a.segments.len(), 20);
    assert_eq!(a.segments[0].count as usize, n);
    assert_eq!(a.segments[0].win_rate, Some(1.0));
    assert_eq!(a.segments[0].max_loss, Some(0.0));
    assert!(a.segments[1..]
        .iter()
        .all(|s| s.count == 0 && s.avg_return.is_none()));
    // Path length for a 7-day horizon on a daily calendar: 7 steps.
    assert_eq!(a.paths.len(), 1);
    assert_eq!(a.paths[0].p50.len(), 8);
    assert_eq!(a.paths[0].num_paths_total as usize, n - 7);
    assert_eq!(a.paths[0].paths.len(), MAX_SAMPLE_PATHS);
    assert_eq!(a.distribution.bins.len(), DISTRIBUTION_BINS + 1);
    assert_eq!(a.distribution.counts.iter().sum::<u32>() as usize, n - 7);
}

/// Flat prices: zero drawdown, zero returns, and no defined Sharpe ratio.
#[test]
fn flat_prices() {
    let n = 300;
    let closes = vec![50.0; n];
    let dates = weekdays(n);
    let a = analyse(&dates, &closes, &params(30, Metric::Return)).unwrap();
    assert_eq!(a.periods_per_year, 252);
    assert!(a.series.expected_returns.iter().all(|&v| v == 0.0));
    assert_eq!(a.segments[0].win_rate, Some(0.0));
    assert_eq!(a.segments[0].static_median_return, Some(0.0));
    assert_eq!(a.distribution.bins.first(), Some(&-0.5));
    assert_eq!(a.distribution.bins.last(), Some(&0.5));

    let s = analyse(&dates, &closes, &params(30, Metric::Sharpe)).unwrap();
    assert!(
        s.series.actual_returns.iter().all(Option::is_none),
        "sd 0 is skipped, never NaN"
    );
    assert!(s.series.prediction_error_cumavg.iter().all(Option::is_none));
    assert!(s.series.projected_prices.iter().all(Option::is_none));
    assert_eq!(s.current.confirmed_count, 0);
    assert!(s.current.insufficient_data);
    assert_eq!(s.current.prediction_error, 0.0);
    assert!(s.distribution.bins.is_empty());
    assert!(s.scatter.is_empty());
}

/// A new all-time low on the last day moves the grid for the final state
/// only; earlier predictions keep the grid of their own day.
#[test]
fn new_all_time_low_on_the_last_day() {
    let mut rng = Rng(7);
    let n = 400;
    // Gentle uptrend with a −12 % dip, then a −37 % crash on the last day.
    let mut closes: Vec<f64> = (0..n)
        .map(|t| 100.0 + t as f64 * 0.1 + rng.unit() * 0.01)
        .collect();
    for c in closes.iter_mut().take(220).skip(200) {
        *c *= 0.88;
    }
    let peak = closes[..n - 1].iter().cloned().fold(f64::MIN, f64::max);
    closes[n - 1] = peak * 0.63;
    let dates = every_day(1_000, n);
    let full = analyse(&dates, &closes, &params(30, Metric::Return)).unwrap();
    let cut = analyse(
        &dates[..n - 1],
        &closes[..n - 1],
        &params(30, Metric::Return),
    )
    .unwrap();

    // Floor −40 % at T: width 2 %, −37 % falls in segment 18.
    assert_eq!(full.current.segment, 18);
    assert!((full.segments[19].lower_bound + 0.40).abs() < 1e-12);
    assert!((full.current.drawdown + 0.37).abs() < 1e-12);
    // Nothing ever started in segment 18: the estimators fall back to all outcomes.
    assert_eq!(full.current.confirmed_count, 0);
    assert!(full.current.insufficient_data);
    assert!(full.current.prediction_error > 0.0);
    // The day before, the floor was −15 % (width 0.75 %).
    assert!((cut.segments[19].lower_bound + 0.15).abs() < 1e-12);
    assert_eq!(
        &full.series.expected_returns[..n - 1],
        &cut.series.expected_returns[..]
    );
    assert_eq!(
        &full.series.median_returns[..n - 1],
        &cut.series.median_returns[..]
    );
}

#[test]
fn sharpe_and_sortino_outcomes_match_their_definitions() {
    let closes = [100.0, 101.0, 99.0, 102.0, 102.0];
    let daily = Prefix::new(&daily_returns(&closes));
    let r = [0.01, 99.0 / 101.0 - 1.0, 102.0 / 99.0 - 1.0, 0.0];
    let m = r.iter().sum::<f64>() / 4.0;
    let sd = (r.iter().map(|x| (x - m).powi(2)).sum::<f64>() / 3.0).sqrt();
    let sharpe = outcome(Metric::Sharpe, &closes, &daily, 0, 4, 252).unwrap();
    assert!((sharpe - m / sd * 252f64.sqrt()).abs() < 1e-12);
    let down = (r[1] * r[1] / 4.0).sqrt();
    let sortino = outcome(Metric::Sortino, &closes, &daily, 0, 4, 365).unwrap();
    assert!((sortino - m * 365.0 / (down * 365f64.sqrt())).abs() < 1e-12);
    // One return: undefined.
    assert_eq!(outcome(Metric::Sharpe, &closes, &daily, 0, 1, 252), None);
    // No negative return: Sortino undefined.
    let up = Prefix::new(&[0.0, 1.0, 0.5]);
    assert_eq!(
        outcome(Metric::Sortino, &[1.0, 2.0, 3.0], &up, 0, 2, 252),
        None
    );
    // Constant returns: no deviation, Sharpe undefined (not a huge number).
    let steady: Vec<f64> = (0..10).map(|i| 1.01f64.powi(i)).collect();
    let p = Prefix::new(&daily_returns(&steady));
    assert_eq!(outcome(Metric::Sharpe, &steady, &p, 0, 9, 252), None);
}

#[test]
fn typical_max_drawdown_restarts_the_peak_each_year() {
    // 1970: 100 → 80 (−20 %); 1971: 60 → 57 (−5 %); 1972: 10 rows only.
    let mut dates = Vec::new();
    let mut closes = Vec::new();
    for (year_start, prices) in [(0, vec![100.0, 80.0, 90.0]), (365, vec![60.0, 57.0, 60.0])] {
        for i in 0..30 {
            dates.push(year_start + i);
            closes.push(prices[(i as usize).min(2)]);
        }
    }
    for i in 0..10 {
        dates.push(730 + i);
        closes.push(1.0);
    }
    let t = typical_max_drawdown(&dates, &closes).unwrap();
    assert!((t - (-0.20 + -0.05) / 2.0).abs() < 1e-12);
}

/// A literal, slow reading of DESIGN §4: at every `t`, rebuild the grid and
/// the estimators from scratch out of the outcomes confirmed by `t`.
fn oracle_predictions(dates: &[i32], closes: &[f64], p: &Params) -> (Vec<f64>, Vec<f64>) {
    let a = p
        .periods_per_year
        .unwrap_or_else(|| infer_periods_per_year(dates));
    let dd = drawdowns(closes);
    let daily = Prefix::new(&daily_returns(closes));
    let n = closes.len();
    let exit = |t: usize| (t + 1..n).find(|&j| dates[j] >= dates[t] + p.return_period as i32);
    let (mut ema_out, mut med_out) = (Vec::new(), Vec::new());
    for t in 0..n {
        let deepest = dd[..=t].iter().cloned().fold(0.0, f64::min);
        let grid = Grid::new(Grid::steps_for(deepest), p.num_segments);
        let confirmed: Vec<(usize, f64)> = (0..t)
            .filter_map(|s| exit(s).filter(|&j| j <= t).map(|j| (s, j)))
            .filter_map(|(s, j)| outcome(p.metric, closes, &daily, s, j, a).map(|y| (s, y)))
            .collect();
        let seg = grid.segment(dd[t]);
        let mine: Vec<f64> = confirmed
            .iter()
            .filter(|(s, _)| grid.segment(dd[*s]) == seg)
            .map(|&(_, y)| y)
            .collect();
        let pool: Vec<f64> = if mine.is_empty() {
            confirmed.iter().map(|&(_, y)| y).collect()
        } else {
            mine
        };
        if pool.is_empty() {
            ema_out.push(0.0);
            med_out.push(0.0);
            continue;
        }
        let ema = pool[1..].iter().fold(pool[0], |e, &y| {
            p.decay_factor * e + (1.0 - p.decay_factor) * y
        });
        let mut last: Vec<f64> = pool[pool.len().saturating_sub(MEDIAN_WINDOW)..].to_vec();
        last.sort_unstable_by(f64::total_cmp);
        ema_out.push(ema);
        med_out.push(median_sorted(&last));
    }
    (ema_out, med_out)
}

#[test]
fn walk_forward_matches_the_literal_oracle() {
    let mut rng = Rng(42);
    for (case, metric) in [Metric::Return, Metric::Sharpe, Metric::Sortino]
        .into_iter()
        .enumerate()
    {
        let n = 700;
        let closes = random_walk(&mut rng, n, 0.03);
        let dates = if case == 1 {
            weekdays(n)
        } else {
            every_day(500, n)
        };
        let p = Params {
            return_period: 20,
            num_segments: 12,
            decay_factor: 0.9,
            metric,
            periods_per_year: None,
        };
        let a = analyse(&dates, &closes, &p).unwrap();
        let (ema, med) = oracle_predictions(&dates, &closes, &p);
        for t in 0..n {
            assert!(
                (a.series.expected_returns[t] - ema[t]).abs() < 1e-9,
                "{metric:?} ema at {t}"
            );
            assert!(
                (a.series.median_returns[t] - med[t]).abs() < 1e-12,
                "{metric:?} median at {t}"
            );
        }
    }
}

#[test]
fn segment_statistics_are_consistent_with_the_outcomes() {
    let mut rng = Rng(3);
    let n = 1_500;
    let closes = random_walk(&mut rng, n, 0.02);
    let a = analyse(&weekdays(n), &closes, &params(90, Metric::Return)).unwrap();
    assert_eq!(
        a.segments.iter().map(|s| s.count as usize).sum::<usize>(),
        n
    );
    let outcomes = a.series.actual_returns.iter().flatten().count() as u32;
    assert_eq!(a.distribution.counts.iter().sum::<u32>(), outcomes);
    assert_eq!(a.scatter.len() as u32, outcomes.min(1_000));
    for s in &a.segments {
        assert!(s.lower_bound < s.upper_bound);
        if let Some(l) = s.max_loss {
            assert!(l <= 0.0);
        }
        if let Some(w) = s.win_rate {
            assert!((0.0..=1.0).contains(&w));
        }
    }
    // max_loss against the definition, window by window.
    let dd = drawdowns(&closes);
    let dates = weekdays(n);
    let ex = exits(&dates, 90);
    let deepest = dd.iter().cloned().fold(0.0, f64::min);
    let grid = Grid::new(Grid::steps_for(deepest), 20);
    let mut naive = [None::<f64>; 20];
    for t in 0..n {
        if a.series.actual_returns[t].is_none() {
            continue;
        }
        let j = ex[t].unwrap();
        let worst = closes[t + 1..=j]
            .iter()
            .map(|p| p / closes[t] - 1.0)
            .fold(0.0, f64::min);
        let k = grid.segment(dd[t]);
        naive[k] = Some(naive[k].map_or(worst, |w: f64| w.min(worst)));
    }
    for (k, seg) in a.segments.iter().enumerate() {
        assert_eq!(
            seg.max_loss.map(f64::to_bits),
            naive[k].map(f64::to_bits),
            "max_loss of segment {k}"
        );
    }
    let cur = &a.segments[a.current.segment as usize];
    assert_eq!(a.current.median_return, a.series.median_returns[n - 1]);
    if a.current.confirmed_count > 0 {
        assert_eq!(Some(a.current.expected_return), cur.expected_return);
        assert_eq!(Some(a.current.median_return), cur.median_return);
    }
    assert_eq!(
        a.current.best_error,
        a.current.prediction_error.min(a.current.median_error)
    );
    for p in &a.paths {
        let steps = (90.0f64 * 252.0 / 365.0).round() as usize + 1;
        assert_eq!(p.p10.len(), steps);
        for i in 0..steps {
            assert!(
                p.p10[i] <= p.p25[i]
                    && p.p25[i] <= p.p50[i]
                    && p.p50[i] <= p.p75[i]
                    && p.p75[i] <= p.p90[i]
            );
        }
        assert!(p
            .paths
            .iter()
            .all(|path| path.len() == steps && path[0] == 0.0));
    }
}

/// The central invariant: cutting the window anywhere leaves every earlier
/// prediction bit-identical, and every outcome that had already been
/// confirmed inside the cut window identical too.
#[test]
fn no_lookahead_under_any_cut() {
    let mut rng = Rng(2026);
    for round in 0..12 {
        let n = 600 + (rng.unit() * 600.0) as usize;
        let vol = 0.01 + rng.unit() * 0.04;
        let closes = random_walk(&mut rng, n, vol);
        let dates = if round % 2 == 0 {
            weekdays(n)
        } else {
            every_day(10_000, n)
        };
        let metric = [Metric::Return, Metric::Sharpe, Metric::Sortino][round % 3];
        let p = Params {
            return_period: 7 + (rng.unit() * 358.0) as u32,
            num_segments: 10 + (rng.unit() * 40.0) as u32,
            decay_factor: 0.80 + rng.unit() * 0.19,
            metric,
            periods_per_year: Some(infer_periods_per_year(&dates)),
        };
        let full = analyse(&dates, &closes, &p).unwrap();
        for _ in 0..4 {
            let m = MIN_ROWS + (rng.unit() * (n - MIN_ROWS) as f64) as usize;
            let cut = analyse(&dates[..m], &closes[..m], &p).unwrap();
            let (f, c) = (&full.series, &cut.series);
            let same_bits =
                |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
            let same_opt = |a: &[Option<f64>], b: &[Option<f64>]| {
                a.iter()
                    .zip(b)
                    .all(|(x, y)| x.map(f64::to_bits) == y.map(f64::to_bits))
            };
            assert!(
                same_bits(&f.drawdowns[..m], &c.drawdowns),
                "drawdowns, round {round} cut {m}"
            );
            assert!(
                same_bits(&f.expected_returns[..m], &c.expected_returns),
                "ema, round {round} cut {m}"
            );
            assert!(
                same_bits(&f.median_returns[..m], &c.median_returns),
                "median, round {round} cut {m}"
            );
            assert!(same_opt(
                &f.prediction_error_cumavg[..m],
                &c.prediction_error_cumavg
            ));
            assert!(same_opt(
                &f.median_error_cumavg[..m],
                &c.median_error_cumavg
            ));
            assert!(same_opt(&f.projected_prices[..m], &c.projected_prices));
            // An outcome known inside the cut is the same outcome.
            for t in 0..m {
                if let Some(y) = c.actual_returns[t] {
                    assert_eq!(Some(y.to_bits()), f.actual_returns[t].map(f64::to_bits));
                    assert_eq!(
                        c.prediction_errors[t].map(f64::to_bits),
                        f.prediction_errors[t].map(f64::to_bits)
                    );
                }
            }
        }
    }
}

#[test]
fn state_only_analysis_equals_the_full_one() {
    let mut rng = Rng(99);
    let n = 900;
    let closes = random_walk(&mut rng, n, 0.02);
    for metric in [Metric::Return, Metric::Sharpe, Metric::Sortino] {
        let p = params(30, metric);
        let full = analyse(&weekdays(n), &closes, &p).unwrap();
        let state = analyse_state(&weekdays(n), &closes, &p).unwrap();
        assert_eq!(state.current, full.current);
        assert_eq!(state.segments, full.segments);
        assert_eq!(state.typical_max_drawdown, full.typical_max_drawdown);
        assert_eq!(state.periods_per_year, full.periods_per_year);
    }
    assert!(analyse_state(&weekdays(10), &closes[..10], &Params::default()).is_err());
}

/// One `analyse_states` call answers every parameter set exactly as its own
/// `analyse_state` call does (shared drawdowns, exits and typical drawdown
/// change nothing), in order, with a bad set refused alone and a bad series
/// refused for every set.
#[test]
fn many_states_in_one_call_equal_one_call_each() {
    let mut rng = Rng(2024);
    let n = 1_500;
    let closes = random_walk(&mut rng, n, 0.025);
    let dates = weekdays(n);
    let mut sets = Vec::new();
    for period in [7, 30, 90, 180, 365] {
        for metric in [Metric::Return, Metric::Sharpe, Metric::Sortino] {
            sets.push(params(period, metric));
        }
    }
    sets.push(Params {
        num_segments: 35,
        decay_factor: 0.9,
        ..params(30, Metric::Sharpe)
    });
    sets.insert(4, params(400, Metric::Return));
    let many = analyse_states(&dates, &closes, &sets);
    assert_eq!(many.len(), sets.len());
    for (p, got) in sets.iter().zip(&many) {
        assert_eq!(got, &analyse_state(&dates, &closes, p), "{p:?}");
    }
    assert!(matches!(many[4], Err(EngineError::InvalidInput(_))));
    assert!(many.iter().filter(|r| r.is_err()).count() == 1);
    let short = analyse_states(&dates[..10], &closes[..10], &sets[..3]);
    assert_eq!(short.len(), 3);
    assert!(short
        .iter()
        .all(|r| matches!(r, Err(EngineError::InsufficientData { rows: 10, .. }))));
}

/// `walk_forward` carries `analyse`'s series bit for bit, its last segment
/// is the current state's, and its segments never look ahead either.
#[test]
fn walk_forward_equals_the_analysis_series_and_never_looks_ahead() {
    let mut rng = Rng(7);
    let n = 1_200;
    let closes = random_walk(&mut rng, n, 0.03);
    let dates = weekdays(n);
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let nan_bits = |v: &[Option<f64>]| {
        v.iter()
            .map(|x| x.unwrap_or(f64::NAN).to_bits())
            .collect::<Vec<_>>()
    };
    for metric in [Metric::Return, Metric::Sharpe, Metric::Sortino] {
        let p = params(45, metric);
        let full = analyse(&dates, &closes, &p).unwrap();
        let wf = walk_forward(&dates, &closes, &p).unwrap();
        assert_eq!(wf.periods_per_year, full.periods_per_year);
        assert_eq!(bits(&wf.drawdowns), bits(&full.series.drawdowns));
        assert_eq!(
            bits(&wf.expected_returns),
            bits(&full.series.expected_returns)
        );
        assert_eq!(bits(&wf.median_returns), bits(&full.series.median_returns));
        assert_eq!(
            bits(&wf.prediction_error_cumavg),
            nan_bits(&full.series.prediction_error_cumavg)
        );
        assert_eq!(
            bits(&wf.median_error_cumavg),
            nan_bits(&full.series.median_error_cumavg)
        );
        assert_eq!(u32::from(wf.segments[n - 1]), full.current.segment);
        for m in [MIN_ROWS, 555, 901] {
            let cut = walk_forward(&dates[..m], &closes[..m], &p).unwrap();
            assert_eq!(cut.segments, wf.segments[..m], "segments, cut {m}");
            let state = analyse_state(&dates[..m], &closes[..m], &p).unwrap();
            assert_eq!(u32::from(cut.segments[m - 1]), state.current.segment);
        }
    }
}

/// The overall fallback's window, caught up only when asked (by pushing
/// the outcomes since it last answered, or by a refill when many are new),
/// equals a window fed every value, bit for bit (odd, even, ties,
/// negative zero, a window that has wrapped, gaps longer than a window).
#[test]
fn a_window_caught_up_on_demand_equals_the_rolling_window() {
    let mut rng = Rng(5);
    let mut eager = rolling::RollingMedian::new(MEDIAN_WINDOW);
    let mut lazy = rolling::RollingMedian::new(MEDIAN_WINDOW);
    let (mut seen, mut synced) = (Vec::new(), 0usize);
    for i in 0..3000 {
        let y = match i % 7 {
            0 => 0.0,
            1 => -0.0,
            2 => 0.125,
            _ => rng.unit() - 0.5,
        };
        eager.push(y);
        seen.push(y);
        // Asked now and then: every row for a while, then rarely (gaps of
        // hundreds of values, so refills too), as rows with empty buckets come.
        let ask = if (i / 500) % 2 == 0 {
            rng.unit() < 0.7
        } else {
            rng.unit() < 0.004
        };
        if !ask {
            continue;
        }
        let n = seen.len();
        if n - synced >= rolling::REFILL_BACKLOG {
            lazy.refill(seen[n.saturating_sub(MEDIAN_WINDOW)..].iter().copied());
        } else {
            for &v in &seen[synced..] {
                lazy.push(v);
            }
        }
        synced = n;
        assert_eq!(
            lazy.median().to_bits(),
            eager.median().to_bits(),
            "after {i}"
        );
    }
}

/// The state of every month-end prefix from one walk equals `analyse_state`
/// of the series cut after that row, for every metric, a fixed and an
/// inferred `periods_per_year` (a series whose weekends begin halfway), so
/// a grade's history never sees a row after its date.
#[test]
fn states_at_each_end_equal_the_state_of_the_cut_series() {
    let mut rng = Rng(7);
    let n = 1_100;
    let closes = random_walk(&mut rng, n, 0.02);
    let mut mixed = weekdays(n / 2);
    let from = *mixed.last().unwrap() + 1;
    mixed.extend(every_day(from, n - n / 2));
    for (dates, fixed) in [
        (weekdays(n), true),
        (every_day(3_000, n), true),
        (mixed, false),
    ] {
        for metric in [Metric::Return, Metric::Sharpe, Metric::Sortino] {
            let p = Params {
                periods_per_year: fixed.then(|| infer_periods_per_year(&dates)),
                ..params(30, metric)
            };
            let ends: Vec<u32> = (MIN_ROWS as u32 - 1..n as u32).step_by(37).collect();
            let got = analyse_states_at(&dates, &closes, &p, &ends).unwrap();
            assert_eq!(got.len(), ends.len());
            for (&e, state) in ends.iter().zip(&got) {
                let m = e as usize + 1;
                let cut = analyse_state(&dates[..m], &closes[..m], &p).unwrap();
                let at = format!("{metric:?} fixed {fixed} end {e}");
                assert_eq!(state.current, cut.current, "{at}");
                assert_eq!(
                    state.active_segment, cut.segments[cut.current.segment as usize],
                    "{at}"
                );
                assert_eq!(state.typical_max_drawdown, cut.typical_max_drawdown, "{at}");
                assert_eq!(state.periods_per_year, cut.periods_per_year, "{at}");
            }
        }
    }
    // Many parameter sets in one call: each as its own call, a bad set
    // refused alone, bad ends refused for every set.
    let dates = weekdays(n);
    let ends: Vec<u32> = (MIN_ROWS as u32 - 1..n as u32).step_by(50).collect();
    let sets = [
        params(30, Metric::Return),
        params(400, Metric::Return),
        params(90, Metric::Sortino),
        params(30, Metric::Sharpe),
    ];
    let many = analyse_states_at_many(&dates, &closes, &sets, &ends);
    assert_eq!(many.len(), sets.len());
    for (p, got) in sets.iter().zip(&many) {
        assert_eq!(got, &analyse_states_at(&dates, &closes, p, &ends), "{p:?}");
    }
    assert!(matches!(many[1], Err(EngineError::InvalidInput(_))));
    assert!(analyse_states_at_many(&dates, &closes, &sets, &[5])
        .iter()
        .all(|r| r.is_err()));
    let p = Params::default();
    assert!(analyse_states_at(&dates, &closes, &p, &[400, 400]).is_err());
    assert!(analyse_states_at(&dates, &closes, &p, &[10]).is_err());
    assert!(analyse_states_at(&dates, &closes, &p, &[n as u32]).is_err());
    assert_eq!(analyse_states_at(&dates, &closes, &p, &[]).unwrap(), vec![]);
}

/// A hand-built history: three separate dips into the same bucket, each
/// recovering, and one visit in progress. Episodes, the share that fell
/// further, recovery days and the quantiles follow from the definitions.
#[test]
fn evidence_counts_visits_not_days() {
    // 1,000 calendar days. The price rises 0.1 % a day, except during
    // three 30-day dips of −12 % (with a deeper −30 % in the second) and
    // a dip at the end that is still open.
    let n = 1_000;
    let dates = every_day(0, n);
    let mut closes = Vec::with_capacity(n);
    let mut base = 100.0;
    for t in 0..n {
        base *= 1.001;
        let dip = match t {
            300..=329 => 0.88,
            500..=509 => 0.88,
            510..=519 => 0.70,
            520..=529 => 0.88,
            700..=729 => 0.88,
            980.. => 0.88,
            _ => 1.0,
        };
        closes.push(base * dip);
    }
    let p = Params {
        return_period: 60,
        num_segments: 10,
        ..Params::default()
    };
    let ev = evidence(
        &dates,
        &closes,
        &[EvidenceRequest {
            params: p,
            segments: vec![],
        }],
    )
    .remove(0)
    .unwrap();
    assert_eq!(ev.segments.len(), 10);
    // The deepest drawdown is −30 %: a floor of 30 %, buckets 3 % wide.
    // The −12 % dips sit in bucket 4 (−12 % … −15 %, just below −12 %
    // because of the day's drift), the −30 % one in the last bucket.
    let deep = ev
        .segments
        .iter()
        .find(|s| s.episodes == 3)
        .expect("the three finished −12 % dips are one bucket's three episodes");
    // The open dip at the end has no outcome yet: it is not an episode.
    assert_eq!(deep.recovered, 3);
    assert_eq!(deep.unrecovered, 0);
    // Each dip lasts 30 days and ends with a new high the next day.
    assert_eq!(deep.recovery_days_median, Some(30.0));
    // Only the second dip went deeper before its horizon.
    assert!((deep.fell_further.unwrap() - 1.0 / 3.0).abs() < 1e-12);
    let q = deep.quantiles.unwrap();
    assert!(q.windows(2).all(|w| w[0] <= w[1]));
    let (lo, hi) = deep.median_return_ci.unwrap();
    assert!(
        lo <= q[2] + 1e-12 && q[2] <= hi + 1e-12,
        "{lo} {} {hi}",
        q[2]
    );
    // Bucket 0 holds the rising days. The dips away from it last 30 days,
    // less than the 60-day horizon, so its 900-odd days are one visit.
    assert!(ev.segments[0].episodes == 1 && ev.segments[0].median_return_ci.is_none());
    assert!(ev.unconditional_median.is_some());
    // Empty buckets report no figures.
    let empty = ev.segments.iter().find(|s| s.quantiles.is_none()).unwrap();
    assert_eq!(
        (empty.episodes, empty.median_return_ci, empty.fell_further),
        (0, None, None)
    );
}

/// The interval is reproducible (fixed seed), brackets the bucket's median,
/// narrows as episodes accumulate, and is asked for per bucket.
#[test]
fn evidence_is_reproducible_and_per_bucket() {
    let mut rng = Rng(31);
    let n = 3_000;
    let closes = random_walk(&mut rng, n, 0.02);
    let dates = weekdays(n);
    let p = params(30, Metric::Return);
    let all = || {
        evidence(
            &dates,
            &closes,
            &[EvidenceRequest {
                params: p,
                segments: vec![],
            }],
        )
        .remove(0)
        .unwrap()
    };
    let (a, b) = (all(), all());
    assert_eq!(a, b);
    let state = analyse_state(&dates, &closes, &p).unwrap();
    for (e, s) in a.segments.iter().zip(&state.segments) {
        assert_eq!(e.segment_idx, s.segment_idx);
        assert_eq!(
            e.quantiles.map(|q| q[2]),
            s.static_median_return,
            "p50 is the bucket's static median"
        );
        if let Some((lo, hi)) = e.median_return_ci {
            let m = s.static_median_return.unwrap();
            assert!(lo <= hi && lo <= m + 1e-12 && m <= hi + 1e-12);
            assert!(e.episodes >= 2);
        }
        assert_eq!(e.recovered + e.unrecovered, e.episodes);
        assert!(e.episodes <= s.count);
    }
    let one = evidence(
        &dates,
        &closes,
        &[
            EvidenceRequest {
                params: p,
                segments: vec![state.current.segment, 0],
            },
            EvidenceRequest {
                params: p,
                segments: vec![99],
            },
        ],
    );
    let first = one[0].as_ref().unwrap();
    assert_eq!(
        first.segments[0],
        a.segments[state.current.segment as usize]
    );
    assert_eq!(first.segments[1], a.segments[0]);
    assert!(matches!(one[1], Err(EngineError::InvalidInput(_))));
}

/// Episodes split where the bucket was left for at least the horizon, and
/// only there.
#[test]
fn episodes_split_on_gaps_of_the_horizon() {
    let dates: Vec<i32> = (0..100).collect();
    let rows = [1, 2, 3, 12, 13, 40, 49, 59];
    let got = evidence::episodes(&rows, &dates, 10);
    // 3 → 12 is 9 days (same episode), 13 → 40 is 27 (new), 40 → 49 is 9,
    // 49 → 59 is exactly 10 (new).
    assert_eq!(got, vec![(0, 5), (5, 7), (7, 8)]);
}

/// `episodes` of the bucket of the last row, as `evidence` of the series
/// cut after row `end` reports it (the bucket read off the cut series'
/// own grid).
fn episodes_of_cut(dates: &[i32], closes: &[f64], p: &Params, end: usize) -> u32 {
    let m = end + 1;
    let d = drawdowns(&closes[..m]);
    let steps = d.iter().map(|&x| Grid::steps_for(x)).max().unwrap();
    let segment = Grid::new(steps, p.num_segments).segment(d[end]) as u32;
    let ev = evidence(
        &dates[..m],
        &closes[..m],
        &[EvidenceRequest {
            params: *p,
            segments: vec![segment],
        }],
    )
    .remove(0)
    .unwrap();
    assert_eq!(ev.segments[0].segment_idx, segment);
    ev.segments[0].episodes
}

/// Series whose grid moves several times: a calm walk with crashes of
/// −10 %, −20 %, −30 % and −45 % along the way.
fn walk_with_crashes(rng: &mut Rng, n: usize) -> Vec<f64> {
    let mut p = 100.0;
    (0..n)
        .map(|t| {
            p *= (0.008 * rng.normal()).exp();
            p *= match t * 5 / n {
                1 if t % (n / 5) == 0 => 0.90,
                2 if t % (n / 5) == 0 => 0.80,
                3 if t % (n / 5) == 0 => 0.70,
                4 if t % (n / 5) == 0 => 0.55,
                _ => 1.0,
            };
            p
        })
        .collect()
}

/// Flat stretches at a few levels (whole runs of rows on one drawdown),
/// with calendar gaps of 40 and 120 days inside some of them.
fn flat_stretches(n: usize) -> (Vec<i32>, Vec<f64>) {
    let levels = [
        100.0, 100.0, 85.0, 100.0, 85.0, 60.0, 85.0, 60.0, 101.0, 70.0,
    ];
    let closes = (0..n).map(|t| levels[t * levels.len() / n]).collect();
    let mut date = 0;
    let dates = (0..n)
        .map(|t| {
            date += match t % 97 {
                0 if t > 0 => 120,
                50 => 40,
                _ => 1,
            };
            date
        })
        .collect();
    (dates, closes)
}

fn episode_params() -> Vec<Params> {
    let mut sets = Vec::new();
    for (i, rp) in [7, 30, 90, 365].into_iter().enumerate() {
        for (j, k) in [10, 20, 50].into_iter().enumerate() {
            let metric = if (i + j) % 2 == 0 {
                Metric::Return
            } else {
                Metric::Sharpe
            };
            sets.push(Params {
                num_segments: k,
                ..params(rp, metric)
            });
        }
    }
    sets
}

/// The episodes of the current bucket at every end from one walk equal
/// `evidence` of the series cut after that row, on series whose grid
/// moves several times, flat stretches with calendar gaps and a steady
/// climb, for horizons of a week to a year and 10 to 50 buckets.
#[test]
fn episodes_at_each_end_equal_the_evidence_of_the_cut_series() {
    let mut rng = Rng(41);
    let n = 1_200;
    let (flat_dates, flat) = flat_stretches(n);
    let climb: Vec<f64> = (0..n).map(|t| 100.0 * 1.001f64.powi(t as i32)).collect();
    let cases = [
        ("walk", weekdays(n), random_walk(&mut rng, n, 0.02)),
        ("crashes", every_day(0, n), walk_with_crashes(&mut rng, n)),
        ("flat", flat_dates, flat),
        ("climb", weekdays(n), climb),
    ];
    let sets = episode_params();
    let ends: Vec<u32> = (MIN_ROWS as u32 - 1..n as u32).collect();
    for (name, dates, closes) in &cases {
        let steps = Prepared::new(dates, closes, false).unwrap().floor_steps;
        let moves = steps.windows(2).filter(|w| w[0] != w[1]).count();
        if *name == "crashes" {
            assert!(moves >= 4, "the grid moves {moves} times");
        }
        let many = episodes_at_many(dates, closes, &sets, &ends);
        for (p, got) in sets.iter().zip(many) {
            let got = got.unwrap();
            assert_eq!(got, episodes_at(dates, closes, p, &ends).unwrap());
            for (&e, &count) in ends.iter().zip(&got) {
                let want = episodes_of_cut(dates, closes, p, e as usize);
                assert_eq!(count, want, "{name} {p:?} end {e}");
            }
        }
    }
}

/// A long history whose grid moves at every crash: a dense subset of ends
/// (every seventh row and every row where the grid moves, with the rows
/// either side) agrees with the cut series' evidence.
#[test]
fn episodes_at_on_a_long_history_with_a_moving_grid() {
    let mut rng = Rng(5);
    let n = 6_000;
    let dates = weekdays(n);
    let closes = walk_with_crashes(&mut rng, n);
    let steps = Prepared::new(&dates, &closes, false).unwrap().floor_steps;
    let mut ends: Vec<u32> = (MIN_ROWS as u32 - 1..n as u32).step_by(7).collect();
    for t in 1..n {
        if steps[t] != steps[t - 1] && t + 1 < n {
            ends.extend([t as u32 - 1, t as u32, t as u32 + 1]);
        }
    }
    ends.retain(|&e| e as usize + 1 >= MIN_ROWS);
    ends.sort_unstable();
    ends.dedup();
    for p in [
        params(7, Metric::Return),
        params(90, Metric::Sharpe),
        Params {
            num_segments: 10,
            ..params(365, Metric::Return)
        },
    ] {
        let got = episodes_at(&dates, &closes, &p, &ends).unwrap();
        for (&e, &count) in ends.iter().zip(&got) {
            let want = episodes_of_cut(&dates, &closes, &p, e as usize);
            assert_eq!(count, want, "{p:?} end {e}");
        }
    }
}

/// Bad ends are every set's error, a bad set its own, a short series
/// everyone's: the errors of `analyse_states_at_many`, one for one.
#[test]
fn episodes_at_refuses_what_states_at_refuses() {
    let mut rng = Rng(3);
    let n = 800;
    let dates = weekdays(n);
    let closes = random_walk(&mut rng, n, 0.02);
    let sets = [
        params(30, Metric::Return),
        Params {
            num_segments: 5,
            ..params(30, Metric::Return)
        },
        params(400, Metric::Return),
        params(90, Metric::Sortino),
    ];
    let same = |ends: &[u32], dates: &[i32], closes: &[f64]| {
        let got = episodes_at_many(dates, closes, &sets, ends);
        let states = analyse_states_at_many(dates, closes, &sets, ends);
        assert_eq!(got.len(), sets.len());
        for (g, s) in got.iter().zip(&states) {
            assert_eq!(g.as_ref().err(), s.as_ref().err(), "{ends:?}");
            if let Ok(g) = g {
                assert_eq!(g.len(), ends.len());
            }
        }
        got
    };
    let ok = same(&[299, 450, 799], &dates, &closes);
    assert!(ok[0].is_ok() && ok[3].is_ok());
    assert!(matches!(ok[1], Err(EngineError::InvalidInput(_))));
    assert!(matches!(ok[2], Err(EngineError::InvalidInput(_))));
    for bad in [
        &[400, 400][..],
        &[500, 400],
        &[298],
        &[10, 500],
        &[n as u32],
        &[299, n as u32 + 5],
    ] {
        let got = same(bad, &dates, &closes);
        assert!(
            got.iter()
                .all(|r| matches!(r, Err(EngineError::InvalidInput(_)))),
            "{bad:?}"
        );
    }
    let short = same(&[299], &dates[..200], &closes[..200]);
    assert!(short
        .iter()
        .all(|r| matches!(r, Err(EngineError::InsufficientData { rows: 200, .. }))));
    let p = params(30, Metric::Return);
    assert_eq!(episodes_at(&dates, &closes, &p, &[]).unwrap(), vec![]);
    assert!(episodes_at_many(&dates, &closes, &[], &[299]).is_empty());
}

/// One walk's forecast inputs equal what three calls answer: the median
/// predictions of `analyse_states_at`, the episodes of `episodes_at` and
/// the state of `analyse_state`, bit for bit, for every metric, fixed or
/// inferred periods (a calendar that gains weekends half-way), grids that
/// move and horizons of a week to a year.
#[test]
fn forecast_inputs_equal_the_states_episodes_and_state_they_replace() {
    let mut rng = Rng(59);
    let n = 1_100;
    let mut mixed = weekdays(n / 2);
    let from = *mixed.last().unwrap() + 1;
    mixed.extend(every_day(from, n - n / 2));
    let cases = [
        ("walk", weekdays(n), random_walk(&mut rng, n, 0.02), true),
        (
            "crashes",
            every_day(0, n),
            walk_with_crashes(&mut rng, n),
            true,
        ),
        (
            "mixed",
            mixed.clone(),
            walk_with_crashes(&mut rng, n),
            false,
        ),
        ("mixed fixed", mixed, random_walk(&mut rng, n, 0.03), true),
    ];
    for (name, dates, closes, fixed) in &cases {
        for p in episode_params() {
            let p = Params {
                periods_per_year: fixed.then(|| infer_periods_per_year(dates)),
                ..p
            };
            let ends: Vec<u32> = (MIN_ROWS as u32 - 1..n as u32).step_by(13).collect();
            let got = forecast_inputs(dates, closes, &p, &ends).unwrap();
            let states = analyse_states_at(dates, closes, &p, &ends).unwrap();
            let medians: Vec<u64> = states
                .iter()
                .map(|s| s.current.median_return.to_bits())
                .collect();
            let at = format!("{name} {p:?}");
            assert_eq!(
                got.medians.iter().map(|m| m.to_bits()).collect::<Vec<_>>(),
                medians,
                "{at}"
            );
            assert_eq!(
                got.episodes,
                episodes_at(dates, closes, &p, &ends).unwrap(),
                "{at}"
            );
            assert_eq!(got.state, analyse_state(dates, closes, &p).unwrap(), "{at}");
        }
    }
    // The checks of `states-at`: ends out of order, too early or past the
    // series, and a bad parameter set, refused; no ends, no marks.
    let (dates, closes) = (weekdays(n), random_walk(&mut rng, n, 0.02));
    let p = Params::default();
    for ends in [&[400, 400][..], &[10], &[n as u32]] {
        assert!(
            forecast_inputs(&dates, &closes, &p, ends).is_err(),
            "{ends:?}"
        );
    }
    assert!(forecast_inputs(&dates, &closes, &params(400, Metric::Return), &[500]).is_err());
    let none = forecast_inputs(&dates, &closes, &p, &[]).unwrap();
    assert!(none.medians.is_empty() && none.episodes.is_empty());
    assert_eq!(none.state, analyse_state(&dates, &closes, &p).unwrap());
}
