//! An asset's grade history (issue 27): the month-ends it is graded at,
//! the return realised after each, and the outcomes per grade letter. The
//! states come from the engine's `evidence.states-at` (one walk, each
//! state equal to a verdict's with `end_date` at that month-end); this
//! module holds only the calendar and the arithmetic around them.

use std::collections::BTreeMap;

use chrono::{Datelike, NaiveDate};
use forecast_api::assets::DataSources;
use forecast_api::track_record::{
    CalibrationBin, CoefficientBody, ForecastEvaluation, GradeOutcome, IcPoint, MeanWithInterval,
    RowForecast, SkillScore, SourceFilter, TrackRecordRow, UniverseGradeOutcome,
    UniverseTrackRecordQuery, UniverseTrackRecordResponse,
};
use forecast_domain::evaluation::{evaluate, Coefficient, EvalRow, SkillTest};
use forecast_domain::series::{from_days, to_days, year_month, PriceSeries};
use forecast_store::{GradingRun, TrackedAsset};

use crate::analysis::MIN_ROWS;

/// The grade letters of the default scorer, best first: the order of
/// `by_grade` (other letters follow in order of appearance).
pub const LETTERS: [&str; 5] = ["A", "B", "C", "D", "F"];

/// The row indices of the month-ends of `series` that have at least
/// [`MIN_ROWS`] rows up to them: each row whose next row lies in a later
/// month (the last row's month is not over, so it is none).
pub fn month_ends(series: &PriceSeries) -> Vec<u32> {
    // Dates increase, so a row starts a later month exactly when it is on
    // or after the first day of the month after its predecessor's: one
    // calendar conversion per month, not per row.
    let mut ends = Vec::new();
    let Some(&first) = series.dates.first() else {
        return ends;
    };
    let mut next = next_month_start(first);
    for (t, &d) in series.dates.iter().enumerate().skip(1) {
        if d >= next {
            if t >= MIN_ROWS {
                ends.push(t as u32 - 1);
            }
            next = next_month_start(d);
        }
    }
    ends
}

/// The day number of the first day of the month after `days`'s.
fn next_month_start(days: i32) -> i32 {
    let (year, month) = year_month(days);
    let (year, month) = if month == 12 {
        (year + 1, 1)
    } else {
        (year, month + 1)
    };
    to_days(NaiveDate::from_ymd_opt(year, month, 1).expect("a valid first of a month"))
}

/// The simple return from row `t` to the first row at least `horizon`
/// calendar days later, if the series reaches it.
pub fn realised_return(series: &PriceSeries, t: usize, horizon: u32) -> Option<f64> {
    let target = series.dates[t] + horizon as i32;
    let j = t + series.dates[t..].partition_point(|&d| d < target);
    (j < series.len()).then(|| series.closes[j] / series.closes[t] - 1.0)
}

/// The rows of a grade history: month-end `ends[i]` of `prices` graded
/// `grades[i]` from `states[i]`, with the return realised over `horizon`.
pub fn rows(
    prices: &PriceSeries,
    ends: &[u32],
    states: &[forecast_plugins::segmentation::StateAt],
    grades: &[forecast_plugins::scorer::Grade],
    horizon: u32,
) -> Vec<TrackRecordRow> {
    ends.iter()
        .zip(states)
        .zip(grades)
        .map(|((&t, state), grade)| TrackRecordRow {
            date: from_days(prices.dates[t as usize]),
            grade: grade.letter.clone(),
            score: grade.score,
            predicted_median_return: state.current.median_return,
            realised_return: realised_return(prices, t as usize, horizon),
            forecast: None,
        })
        .collect()
}

/// Replaces the grades of `rows` by the scorer's graded forecasts (one per
/// row, in order) and attaches each row's forecast and climatology.
pub fn with_forecasts(
    rows: &mut [TrackRecordRow],
    graded: &[forecast_plugins::scorer::GradedForecast],
    points: &[forecast_plugins::scorer::Point],
) {
    for ((row, g), p) in rows.iter_mut().zip(graded).zip(points) {
        row.grade = g.letter.clone();
        row.score = g.score;
        row.forecast = match (&g.forecast, &p.climatology) {
            (Some(f), Some(c)) => Some(RowForecast {
                central: f.central,
                p10: f.p10,
                p90: f.p90,
                climatology_mean: c.mean,
                climatology_p10: c.p10,
                climatology_p90: c.p90,
            }),
            _ => None,
        };
    }
}

/// Per grade letter (in the order of `letters`, then any other in order of
/// appearance), the realised outcomes of the rows that have one.
pub fn by_grade(rows: &[TrackRecordRow], letters: &[&str]) -> Vec<GradeOutcome> {
    let mut order: Vec<String> = letters.iter().map(|l| l.to_string()).collect();
    for r in rows {
        if !order.contains(&r.grade) {
            order.push(r.grade.clone());
        }
    }
    order
        .into_iter()
        .map(|letter| {
            let mut ys: Vec<f64> = rows
                .iter()
                .filter(|r| r.grade == letter)
                .filter_map(|r| r.realised_return)
                .collect();
            ys.sort_unstable_by(f64::total_cmp);
            let n = ys.len();
            let median = match n {
                0 => None,
                _ if n % 2 == 1 => Some(ys[n / 2]),
                _ => Some((ys[n / 2 - 1] + ys[n / 2]) / 2.0),
            };
            GradeOutcome {
                grade: letter,
                count: n as u32,
                mean_realised_return: (n > 0).then(|| ys.iter().sum::<f64>() / n as f64),
                median_realised_return: median,
                hit_rate: (n > 0)
                    .then(|| ys.iter().filter(|&&y| y > 0.0).count() as f64 / n as f64),
            }
        })
        .collect()
}

/// Format tag of [`encode`]'s bytes without forecasts (runs before
/// scorer 2.0.0 stored these).
const FORMAT: u8 = 1;
/// Format tag of bytes whose rows carry a forecast flag and, when set, the
/// six forecast figures.
const FORMAT_FORECAST: u8 = 2;

/// A stored grade history: a format byte, then per row the date (days,
/// i32), score, predicted median and realised return (f32; NaN: none yet)
/// and the letter (a length byte and its UTF-8 bytes), little-endian; in
/// format 2 then a byte (1: a forecast follows) and the forecast's central,
/// p10, p90 and climatology mean, p10, p90 (f32).
pub fn encode(rows: &[TrackRecordRow]) -> Vec<u8> {
    let with = rows.iter().any(|r| r.forecast.is_some());
    let mut out = Vec::with_capacity(1 + rows.len() * if with { 43 } else { 18 });
    out.push(if with { FORMAT_FORECAST } else { FORMAT });
    for r in rows {
        out.extend(to_days(r.date).to_le_bytes());
        out.extend((r.score as f32).to_le_bytes());
        out.extend((r.predicted_median_return as f32).to_le_bytes());
        out.extend((r.realised_return.unwrap_or(f64::NAN) as f32).to_le_bytes());
        let letter = &r.grade.as_bytes()[..r.grade.len().min(255)];
        out.push(letter.len() as u8);
        out.extend(letter);
        if with {
            match &r.forecast {
                None => out.push(0),
                Some(f) => {
                    out.push(1);
                    for v in [
                        f.central,
                        f.p10,
                        f.p90,
                        f.climatology_mean,
                        f.climatology_p10,
                        f.climatology_p90,
                    ] {
                        out.extend((v as f32).to_le_bytes());
                    }
                }
            }
        }
    }
    out
}

/// The rows of [`encode`]d bytes, or why they are not such bytes.
pub fn decode(bytes: &[u8]) -> Result<Vec<TrackRecordRow>, String> {
    let (with, mut rest) = match bytes.split_first() {
        Some((&FORMAT, rest)) => (false, rest),
        Some((&FORMAT_FORECAST, rest)) => (true, rest),
        _ => return Err("not a grade history (unknown format)".into()),
    };
    let mut rows = Vec::new();
    let take = |rest: &mut &[u8], n: usize| -> Result<Vec<u8>, String> {
        if rest.len() < n {
            return Err("grade history truncated".into());
        }
        let (head, tail) = rest.split_at(n);
        *rest = tail;
        Ok(head.to_vec())
    };
    let f32_at = |b: &[u8]| f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    while !rest.is_empty() {
        let fixed = take(&mut rest, 17)?;
        let date = i32::from_le_bytes([fixed[0], fixed[1], fixed[2], fixed[3]]);
        let letter = take(&mut rest, usize::from(fixed[16]))?;
        let realised = f32_at(&fixed[12..16]);
        let forecast = match with && take(&mut rest, 1)?[0] == 1 {
            false => None,
            true => {
                let b = take(&mut rest, 24)?;
                let v = |i: usize| f64::from(f32_at(&b[i * 4..i * 4 + 4]));
                Some(RowForecast {
                    central: v(0),
                    p10: v(1),
                    p90: v(2),
                    climatology_mean: v(3),
                    climatology_p10: v(4),
                    climatology_p90: v(5),
                })
            }
        };
        rows.push(TrackRecordRow {
            date: from_days(date),
            grade: String::from_utf8(letter).map_err(|_| "grade letter not UTF-8")?,
            score: f64::from(f32_at(&fixed[4..8])),
            predicted_median_return: f64::from(f32_at(&fixed[8..12])),
            realised_return: (!realised.is_nan()).then_some(f64::from(realised)),
            forecast,
        });
    }
    Ok(rows)
}

/// Resamples of every interval of the universe track record.
const RESAMPLES: usize = 1_000;
/// Fixed seed of those resamples.
const SEED: u64 = 0x7EAC_4EC0_4D00_0027;
/// Fewest assets at a month-end for its IC and quintile spread.
const MIN_CROSS_SECTION: usize = 5;
/// Bins of the calibration.
const CALIBRATION_BINS: usize = 10;

/// One (asset, month-end) with a realised return.
struct Point {
    score: f64,
    predicted: f64,
    realised: f64,
    letter: usize,
}

/// The universe track record of `q` from the stored grade histories of
/// `run`: the assets `q` covers, their month-ends with a realised return,
/// per grade, per month-end (IC and quintile spread) and in calibration
/// bins. Intervals by a moving-block bootstrap over month-ends whose
/// blocks span the horizon's overlap.
pub fn aggregate(
    run: &GradingRun,
    engine_version: &str,
    scorer_version: &str,
    q: &UniverseTrackRecordQuery,
    assets: &[TrackedAsset],
) -> Result<UniverseTrackRecordResponse, String> {
    let covered: Vec<&TrackedAsset> = assets
        .iter()
        .filter(|a| q.source.covers(a.data_source))
        .filter(|a| q.category.is_none_or(|c| a.category == c))
        .collect();
    let (letters, by_date, evaluated) = points_by_date(&covered)?;
    let dates: Vec<NaiveDate> = by_date.keys().copied().collect();
    let block = block_months(q.return_period);
    let observations = by_date.values().map(Vec::len).sum::<usize>();

    // Per month-end: its equal-weight mean, IC and quintile spread.
    let mut ic_series = Vec::new();
    let mut spreads = Vec::new();
    // Per letter and month-end: (sum of realised, sum of excess, count).
    let mut per_letter: Vec<Vec<(f64, f64, u32)>> =
        vec![vec![(0.0, 0.0, 0); dates.len()]; letters.len()];
    let mut all_by_letter: Vec<Vec<f64>> = vec![Vec::new(); letters.len()];
    for (d, (date, points)) in by_date.iter().enumerate() {
        let mean = points.iter().map(|p| p.realised).sum::<f64>() / points.len() as f64;
        for p in points {
            let cell = &mut per_letter[p.letter][d];
            cell.0 += p.realised;
            cell.1 += p.realised - mean;
            cell.2 += 1;
            all_by_letter[p.letter].push(p.realised);
        }
        if points.len() >= MIN_CROSS_SECTION {
            let scores: Vec<f64> = points.iter().map(|p| p.score).collect();
            let realised: Vec<f64> = points.iter().map(|p| p.realised).collect();
            if let Some(ic) = spearman(&scores, &realised) {
                ic_series.push(IcPoint {
                    date: *date,
                    ic,
                    assets: points.len() as u32,
                });
            }
            spreads.push(quintile_spread(points));
        }
    }
    let by_grade = grade_outcomes(&letters, &per_letter, &mut all_by_letter, block);
    let ics: Vec<f64> = ic_series.iter().map(|p| p.ic).collect();
    let mut all: Vec<&Point> = by_date.values().flatten().collect();
    all.sort_unstable_by(|a, b| a.predicted.total_cmp(&b.predicted));
    let calibration = calibration(&all);
    let notes = notes(block, q.source);
    Ok(UniverseTrackRecordResponse {
        return_period: q.return_period,
        metric: q.metric,
        category: q.category,
        source: q.source,
        run_id: run.id.clone(),
        run_day: run.day.clone(),
        engine_version: engine_version.to_string(),
        scorer_version: scorer_version.to_string(),
        assets: covered.len() as u32,
        observations: observations as u32,
        first_date: dates.first().copied(),
        last_date: dates.last().copied(),
        data_sources: DataSources::count(covered.iter().map(|a| a.data_source)),
        by_grade,
        ic: mean_with_interval(&ics, block, 101),
        ic_series,
        quintile_spread: mean_with_interval(&spreads, block, 102),
        calibration,
        block_months: block as u32,
        forecast_evaluation: forecast_evaluation(evaluated, q.return_period),
        notes,
    })
}

/// The covered assets' month-ends with a realised return, by date, with
/// the letters seen (the usual ones first, any other after them) and the
/// rows a calibrated forecast was shown for, ready for evaluation.
#[allow(clippy::type_complexity)]
fn points_by_date(
    covered: &[&TrackedAsset],
) -> Result<(Vec<String>, BTreeMap<NaiveDate, Vec<Point>>, Vec<EvalRow>), String> {
    let mut letters: Vec<String> = LETTERS.iter().map(|l| l.to_string()).collect();
    let mut by_date: BTreeMap<NaiveDate, Vec<Point>> = BTreeMap::new();
    let mut evaluated = Vec::new();
    for a in covered {
        for r in decode(&a.body)? {
            let Some(realised) = r.realised_return else {
                continue;
            };
            if let Some(f) = &r.forecast {
                evaluated.push(eval_row(r.date, f, realised));
            }
            let letter = match letters.iter().position(|l| *l == r.grade) {
                Some(i) => i,
                None => {
                    letters.push(r.grade.clone());
                    letters.len() - 1
                }
            };
            by_date.entry(r.date).or_default().push(Point {
                score: r.score,
                predicted: r.predicted_median_return,
                realised,
                letter,
            });
        }
    }
    Ok((letters, by_date, evaluated))
}

/// Per letter: its count, mean (with a block-bootstrap interval over the
/// per-month-end `cells`), median, hit rate and mean excess return; each
/// letter's realised returns in `all_by_letter` are sorted here.
fn grade_outcomes(
    letters: &[String],
    per_letter: &[Vec<(f64, f64, u32)>],
    all_by_letter: &mut [Vec<f64>],
    block: usize,
) -> Vec<UniverseGradeOutcome> {
    letters
        .iter()
        .enumerate()
        .map(|(i, letter)| {
            let ys = &mut all_by_letter[i];
            ys.sort_unstable_by(f64::total_cmp);
            let n = ys.len();
            let cells = &per_letter[i];
            let sums = cells.iter().fold((0.0, 0.0), |a, c| (a.0 + c.0, a.1 + c.1));
            UniverseGradeOutcome {
                grade: letter.clone(),
                count: n as u32,
                mean_realised_return: (n > 0).then(|| sums.0 / n as f64),
                mean_ci: ratio_interval(cells, block, i as u64),
                median_realised_return: (n > 0).then(|| median_sorted(ys)),
                hit_rate: (n > 0)
                    .then(|| ys.iter().filter(|&&y| y > 0.0).count() as f64 / n as f64),
                mean_excess_return: (n > 0).then(|| sums.1 / n as f64),
            }
        })
        .collect()
}

/// The notes every universe track record carries: what a row is, why
/// neighbouring figures are not independent (blocks of `block`
/// month-ends), what the past cannot promise, and for `source`s that
/// include generated histories, what those say.
fn notes(block: usize, source: SourceFilter) -> Vec<String> {
    let mut notes = vec![
        "Each grade uses the prices up to its month-end only; the realised return is the simple return over the following return_period calendar days.".to_string(),
        format!(
            "Month-ends fewer than {block} apart share part of their horizon, so consecutive figures are not independent: every interval resamples blocks of {block} consecutive month-ends."
        ),
        "Past grades and returns do not promise future ones; the catalog holds today's assets, so assets that disappeared are missing.".to_string(),
    ];
    if source != SourceFilter::Real {
        notes.push("Synthetic histories are generated, not observed: whatever the grades find in them is a property of the generator, not of any market, and says nothing about real assets.".to_string());
    }
    notes
}

fn eval_row(date: NaiveDate, f: &RowForecast, realised: f64) -> EvalRow {
    EvalRow {
        month: date.year() * 12 + date.month0() as i32,
        central: f.central,
        p10: f.p10,
        p90: f.p90,
        clim_mean: f.climatology_mean,
        clim_sd: (f.climatology_p90 - f.climatology_p10) / (2.0 * 1.281_551_565_544_600_4),
        clim_p10: f.climatology_p10,
        clim_p90: f.climatology_p90,
        realised,
    }
}

/// The proper scores of the rows that carry a forecast (sorted by month,
/// then as read), with a HAC lag of the horizon's overlap in months.
fn forecast_evaluation(mut rows: Vec<EvalRow>, return_period: u32) -> Option<ForecastEvaluation> {
    rows.sort_by_key(|r| r.month);
    evaluation_body(&rows, return_period)
}

/// Every figure of the evaluation of `rows` (sorted by month) on the wire;
/// none when they cannot be evaluated (fewer than two months, three rows).
pub fn evaluation_body(rows: &[EvalRow], return_period: u32) -> Option<ForecastEvaluation> {
    let lag = (return_period as usize).div_ceil(30);
    let e = evaluate(rows, lag).ok()?;
    let skill = |t: &SkillTest| SkillScore {
        forecast: t.forecast,
        climatology: t.climatology,
        skill: t.skill,
        skill_ci: [t.skill_lo, t.skill_hi],
        dm_stat: t.dm_stat,
        dm_p: t.dm_p,
    };
    let coef = |c: &Coefficient| CoefficientBody {
        estimate: c.estimate,
        ci: [c.lo, c.hi],
    };
    Some(ForecastEvaluation {
        rows: e.rows as u32,
        months: e.months as u32,
        lag: e.lag as u32,
        crps: skill(&e.crps),
        quantile_loss: skill(&e.pinball),
        squared_error: skill(&e.mse),
        calibration_intercept: coef(&e.calibration.intercept),
        calibration_slope: coef(&e.calibration.slope),
        coverage: e.coverage,
        climatology_coverage: e.climatology_coverage,
        pit_histogram: e.pit_histogram.iter().map(|&c| c as u32).collect(),
        reliability: e
            .reliability
            .iter()
            .map(|b| CalibrationBin {
                mean_predicted: b.mean_predicted,
                mean_realised: b.mean_realised,
                count: b.count as u32,
            })
            .collect(),
    })
}

/// Month-ends a horizon's window spans (its overlap with the next
/// month-ends) plus one: the bootstrap's block length.
pub fn block_months(return_period: u32) -> usize {
    (return_period as usize).div_ceil(30) + 1
}

fn median_sorted(v: &[f64]) -> f64 {
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Ranks from 1, ties given their mean rank.
fn ranks(v: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..v.len()).collect();
    order.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
    let mut out = vec![0.0; v.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && v[order[j + 1]] == v[order[i]] {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            out[k] = rank;
        }
        i = j + 1;
    }
    out
}

/// Spearman's rank correlation (Pearson's of the tie-averaged ranks);
/// `None` when either side is constant.
pub fn spearman(x: &[f64], y: &[f64]) -> Option<f64> {
    let (rx, ry) = (ranks(x), ranks(y));
    let n = rx.len() as f64;
    let (mx, my) = (rx.iter().sum::<f64>() / n, ry.iter().sum::<f64>() / n);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in rx.iter().zip(&ry) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx) * (a - mx);
        syy += (b - my) * (b - my);
    }
    (sxx > 0.0 && syy > 0.0).then(|| sxy / (sxx * syy).sqrt())
}

/// Mean realised return of the top score quintile minus the bottom one
/// (each `max(1, n / 5)` points; ties in order of arrival).
fn quintile_spread(points: &[Point]) -> f64 {
    let mut order: Vec<&Point> = points.iter().collect();
    order.sort_by(|a, b| a.score.total_cmp(&b.score));
    let k = (order.len() / 5).max(1);
    let mean = |ps: &[&Point]| ps.iter().map(|p| p.realised).sum::<f64>() / ps.len() as f64;
    mean(&order[order.len() - k..]) - mean(&order[..k])
}

/// Equal-count bins of `points` (ascending by prediction).
fn calibration(points: &[&Point]) -> Vec<CalibrationBin> {
    let n = points.len();
    let bins = CALIBRATION_BINS.min(n);
    (0..bins)
        .map(|b| {
            let part = &points[b * n / bins..(b + 1) * n / bins];
            let m = part.len() as f64;
            CalibrationBin {
                mean_predicted: part.iter().map(|p| p.predicted).sum::<f64>() / m,
                mean_realised: part.iter().map(|p| p.realised).sum::<f64>() / m,
                count: part.len() as u32,
            }
        })
        .collect()
}

/// SplitMix64 with a fixed seed: the same record, the same intervals.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next()) * n as u128) >> 64) as usize
    }
}

/// The month-end indices of one moving-block resample of `m` month-ends
/// in blocks of `block`.
fn resample(rng: &mut Rng, m: usize, block: usize) -> impl Iterator<Item = usize> + '_ {
    let block = block.clamp(1, m);
    let starts = m - block + 1;
    (0..m.div_ceil(block))
        .flat_map(move |_| {
            let s = rng.below(starts);
            s..s + block
        })
        .take(m)
}

/// The 5th and 95th percentiles of `stats` (sorted here).
fn percentile_interval(mut stats: Vec<f64>) -> Option<[f64; 2]> {
    if stats.is_empty() {
        return None;
    }
    stats.sort_unstable_by(f64::total_cmp);
    let at = |q: f64| {
        let pos = q * (stats.len() - 1) as f64;
        let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
        stats[lo] + (stats[hi] - stats[lo]) * (pos - lo as f64)
    };
    Some([at(0.05), at(0.95)])
}

/// The mean of `xs` (one per month-end) with its moving-block bootstrap
/// 90 % interval.
fn mean_with_interval(xs: &[f64], block: usize, salt: u64) -> MeanWithInterval {
    let m = xs.len();
    let mean = (m > 0).then(|| xs.iter().sum::<f64>() / m as f64);
    let ci = (m >= 2)
        .then(|| {
            let mut rng = Rng(SEED ^ salt);
            let stats = (0..RESAMPLES)
                .map(|_| resample(&mut rng, m, block).map(|i| xs[i]).sum::<f64>() / m as f64)
                .collect();
            percentile_interval(stats)
        })
        .flatten();
    MeanWithInterval {
        mean,
        ci,
        dates: m as u32,
    }
}

/// The interval of a pooled mean (Σ realised / Σ count over month-ends)
/// when month-ends are resampled in blocks.
fn ratio_interval(cells: &[(f64, f64, u32)], block: usize, salt: u64) -> Option<[f64; 2]> {
    let m = cells.len();
    let months_with = cells.iter().filter(|c| c.2 > 0).count();
    if months_with < 2 {
        return None;
    }
    let mut rng = Rng(SEED ^ (salt + 1).wrapping_mul(0x9E37_79B9));
    let stats = (0..RESAMPLES)
        .filter_map(|_| {
            let (mut sum, mut n) = (0.0, 0u64);
            for i in resample(&mut rng, m, block) {
                sum += cells[i].0;
                n += u64::from(cells[i].2);
            }
            (n > 0).then(|| sum / n as f64)
        })
        .collect();
    percentile_interval(stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(dates: &[&str], closes: &[f64]) -> PriceSeries {
        PriceSeries {
            dates: dates.iter().map(|d| to_days(d.parse().unwrap())).collect(),
            closes: closes.to_vec(),
        }
    }

    #[test]
    fn month_ends_are_last_trading_days_after_enough_rows() {
        // 400 calendar days from 2020-01-01: month-ends from row 299 on.
        let start = to_days("2020-01-01".parse().unwrap());
        let s = PriceSeries {
            dates: (0..400).map(|i| start + i).collect(),
            closes: vec![1.0; 400],
        };
        let ends: Vec<String> = month_ends(&s)
            .iter()
            .map(|&t| from_days(s.dates[t as usize]).to_string())
            .collect();
        // Row 299 is 2020-10-26: the first month-end with 300 rows is
        // October's; the last row (2021-02-03) closes no month.
        assert_eq!(
            ends,
            ["2020-10-31", "2020-11-30", "2020-12-31", "2021-01-31"]
        );
    }

    /// Month-ends found one conversion per month are the rows whose next
    /// row falls in another calendar month, over weekday histories with
    /// gaps of up to two months, across years and leap days.
    #[test]
    fn month_ends_agree_with_the_calendar_row_by_row() {
        let start = to_days("1995-12-29".parse().unwrap());
        let mut dates = vec![start];
        for i in 0..6_000 {
            let gap = [1, 1, 3, 1, 2, 1, 40, 1, 1, 61][i % 10];
            dates.push(dates.last().unwrap() + gap);
        }
        let s = PriceSeries {
            closes: vec![1.0; dates.len()],
            dates,
        };
        let by_calendar: Vec<u32> = (0..s.len() - 1)
            .filter(|&t| {
                let (a, b) = (from_days(s.dates[t]), from_days(s.dates[t + 1]));
                t + 1 >= MIN_ROWS && (a.year(), a.month()) != (b.year(), b.month())
            })
            .map(|t| t as u32)
            .collect();
        assert!(by_calendar.len() > 100);
        assert_eq!(month_ends(&s), by_calendar);
    }

    #[test]
    fn realised_return_waits_for_the_horizon() {
        let s = series(
            &["2024-01-31", "2024-02-01", "2024-03-01", "2024-03-04"],
            &[100.0, 101.0, 110.0, 120.0],
        );
        // 30 days after Jan 31 is Mar 1.
        assert!((realised_return(&s, 0, 30).unwrap() - 0.10).abs() < 1e-12);
        // 33 days after Jan 31 is Mar 4, the last row.
        assert!((realised_return(&s, 0, 33).unwrap() - 0.20).abs() < 1e-12);
        assert_eq!(realised_return(&s, 0, 34), None);
        assert_eq!(realised_return(&s, 3, 7), None);
    }

    #[test]
    fn outcomes_per_letter_skip_rows_without_a_realised_return() {
        let row = |grade: &str, y: Option<f64>| TrackRecordRow {
            date: "2024-01-31".parse().unwrap(),
            grade: grade.into(),
            score: 50.0,
            predicted_median_return: 0.0,
            realised_return: y,
            forecast: None,
        };
        let rows = [
            row("A", Some(0.1)),
            row("A", Some(-0.2)),
            row("A", Some(0.3)),
            row("C", None),
            row("Z", Some(0.0)),
        ];
        let got = by_grade(&rows, &["A", "B", "C"]);
        assert_eq!(got.len(), 4);
        assert_eq!(got[0].count, 3);
        assert_eq!(got[0].median_realised_return, Some(0.1));
        assert!((got[0].mean_realised_return.unwrap() - 0.2 / 3.0).abs() < 1e-12);
        assert!((got[0].hit_rate.unwrap() - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!((got[1].count, got[1].hit_rate), (0, None));
        assert_eq!((got[2].count, got[2].mean_realised_return), (0, None));
        assert_eq!((got[3].grade.as_str(), got[3].hit_rate), ("Z", Some(0.0)));
    }
}
