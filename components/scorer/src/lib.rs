//! The default scorer (DESIGN.md §5), version 2.1.0.
//!
//! Two interfaces:
//!
//! * `scoring` (`score`, [`grade`]): a grade letter and a score in [0, 100]
//!   from an analysis state, today's formula unchanged.
//!   `z = median_return / max(best_error, 1e-6)`; `win` = the current
//!   segment's win rate (0.5 when it has none);
//!   `score = 100 · (0.6 · (0.5 + 0.5 · tanh z) + 0.4 · win)`, capped at 50
//!   with insufficient data. Letters: A >= 80, B >= 65, C >= 50, D >= 35, F.
//! * `forecasting` (`forecast`, [`forecast`]): a calibrated forecast of the
//!   forward return at each month-end of one asset's history and the grade
//!   it earns, each point answered from the points before it whose
//!   realised return was known by its date (docs/METHODOLOGY.md,
//!   "Calibrated forecasts"; the steps are on [`forecast`]).
//!
//! Everything is plain Rust, unit-tested natively; the wasm export only
//! converts types. Two test fixtures are built from this crate by feature:
//! `classic` (exports `scoring` alone, version 1.0.0, as a scorer built
//! before WIT 1.9.0) and `worse` (the raw bucket median as the forecast,
//! version 2.1.0-worse, for a promotion gate to refuse).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

#[cfg(all(feature = "classic", feature = "worse"))]
compile_error!("`classic` and `worse` are two different fixtures: enable one at a time");

/// What `scorer-version` answers: the crate's version (2.1.0), "1.0.0" for
/// the `classic` fixture, "2.1.0-worse" for the `worse` one.
pub const VERSION: &str = if cfg!(feature = "classic") {
    "1.0.0"
} else if cfg!(feature = "worse") {
    "2.1.0-worse"
} else {
    env!("CARGO_PKG_VERSION")
};

/// How the `forecasting` export of this build forecasts.
pub const VARIANT: Variant = if cfg!(feature = "worse") {
    Variant::RawMedian
} else {
    Variant::Shrunk
};

#[cfg(target_arch = "wasm32")]
mod component {
    #[cfg(not(feature = "classic"))]
    wit_bindgen::generate!({
        path: "../../wit",
        world: "scorer",
    });

    // The `classic` fixture: `scoring` alone, as a scorer built before WIT
    // 1.9.0 added `forecasting`.
    #[cfg(feature = "classic")]
    wit_bindgen::generate!({
        inline: "
            package fixture:scorer;
            world classic {
                import forecast:plugins/host-log@1.11.0;
                export forecast:plugins/scoring@1.11.0;
            }
        ",
        path: "../../wit",
        world: "fixture:scorer/classic",
        generate_all,
    });

    #[cfg(not(feature = "classic"))]
    use exports::forecast::plugins::forecasting as wit;
    use exports::forecast::plugins::scoring::{Grade, Guest, ScoreInput};

    struct Component;

    impl Guest for Component {
        fn scorer_version() -> String {
            super::VERSION.to_string()
        }

        fn score(inputs: Vec<ScoreInput>) -> Vec<Grade> {
            inputs
                .into_iter()
                .map(|i| {
                    let (letter, score) = super::grade(
                        i.median_return,
                        i.best_error,
                        i.win_rate,
                        i.insufficient_data,
                    );
                    Grade {
                        letter: letter.to_string(),
                        score,
                    }
                })
                .collect()
        }
    }

    #[cfg(not(feature = "classic"))]
    fn point(p: wit::Point) -> super::Point {
        super::Point {
            date: p.date,
            median_return: p.median_return,
            episodes: p.episodes,
            climatology: p.climatology.map(|c| super::Climatology {
                count: c.count,
                horizons: c.horizons,
                mean: c.mean,
                sd: c.sd,
                p10: c.p10,
                p90: c.p90,
            }),
            pooled: p.pooled.map(|q| super::Pooled {
                rows: q.rows,
                assets: q.assets,
                sum_x: q.sum_x,
                sum_y: q.sum_y,
                sum_xx: q.sum_xx,
                sum_xy: q.sum_xy,
                sum_yy: q.sum_yy,
            }),
            realised: p.realised,
            known: p.known,
        }
    }

    #[cfg(not(feature = "classic"))]
    fn graded(g: super::GradedForecast) -> wit::GradedForecast {
        wit::GradedForecast {
            forecast: g.forecast.map(|f| wit::Estimate {
                central: f.central,
                p10: f.p10,
                p90: f.p90,
                central_se: f.central_se,
                reference: f.reference,
                method: f.method.as_str().to_string(),
            }),
            letter: g.letter.to_string(),
            score: g.score,
            thin: g.thin,
        }
    }

    #[cfg(not(feature = "classic"))]
    impl wit::Guest for Component {
        fn forecast(return_period: u32, points: Vec<wit::Point>) -> Vec<wit::GradedForecast> {
            let points: Vec<super::Point> = points.into_iter().map(point).collect();
            super::forecast(return_period, &points, super::VARIANT)
                .into_iter()
                .map(graded)
                .collect()
        }
    }

    export!(Component);
}

/// The letter and score of one state.
pub fn grade(
    median_return: f64,
    best_error: f64,
    win_rate: Option<f64>,
    insufficient_data: bool,
) -> (&'static str, f64) {
    let z = median_return / best_error.max(1e-6);
    let win = win_rate.unwrap_or(0.5);
    let mut score = 100.0 * (0.6 * (0.5 + 0.5 * z.tanh()) + 0.4 * win);
    if !score.is_finite() {
        score = 0.0;
    }
    if insufficient_data {
        score = score.min(50.0);
    }
    let letter = match score {
        s if s >= 80.0 => "A",
        s if s >= 65.0 => "B",
        s if s >= 50.0 => "C",
        s if s >= 35.0 => "D",
        _ => "F",
    };
    (letter, score)
}

// ---------------------------------------------------------------------------
// Calibrated forecasts (the `forecasting` interface).
// ---------------------------------------------------------------------------

/// A pooled fit needs at least this many rows…
pub const MIN_POOLED_ROWS: u32 = 200;
/// …from at least this many distinct assets.
pub const MIN_POOLED_ASSETS: u32 = 5;
/// The bucket term is fitted from at least this many known pairs.
pub const MIN_PAIRS: u32 = 12;
/// The episode weight's prior, `w = episodes / (episodes + 10)`: a fixed
/// prior of 10 episodes (a bucket seen in 10 independent episodes gets half
/// the weight of its fitted term), chosen, not fitted.
pub const PRIOR_EPISODES: f64 = 10.0;
/// Fewer independent episodes than this is thin evidence.
pub const MIN_EPISODES: u32 = 10;
/// The standard normal's 90th percentile: the reference inside
/// `central ± Z80 · central_se` (the 80 % interval) is thin evidence.
pub const Z80: f64 = 1.2815515655446004;
/// A thin point's score is clamped to [THIN_MIN, THIN_MAX] (never A or F).
pub const THIN_MIN: f64 = 20.0;
/// See [`THIN_MIN`].
pub const THIN_MAX: f64 = 80.0;
/// The z of a forecast with a zero standard error away from its reference
/// (a score of 0 or 100).
const Z_CERTAIN: f64 = 40.0;

/// The asset's own distribution of forward returns (WIT `climatology`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Climatology {
    /// Forward returns in the sample.
    pub count: u32,
    /// Independent horizons they span.
    pub horizons: f64,
    /// Their mean.
    pub mean: f64,
    /// Their standard deviation (population).
    pub sd: f64,
    /// Their 10th percentile.
    pub p10: f64,
    /// Their 90th percentile.
    pub p90: f64,
}

/// Sufficient statistics of the pooled history (WIT `pooled`): x = a row's
/// climatology mean, y = its realised return.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pooled {
    /// Rows.
    pub rows: u32,
    /// Distinct assets among them.
    pub assets: u32,
    /// Sum of x.
    pub sum_x: f64,
    /// Sum of y.
    pub sum_y: f64,
    /// Sum of x².
    pub sum_xx: f64,
    /// Sum of x·y.
    pub sum_xy: f64,
    /// Sum of y².
    pub sum_yy: f64,
}

/// One month-end (or today) of one asset (WIT `point`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Days since 1970-01-01.
    pub date: i32,
    /// The current bucket's median forward return.
    pub median_return: f64,
    /// Independent episodes behind the current bucket.
    pub episodes: u32,
    /// The asset's climatology, when any.
    pub climatology: Option<Climatology>,
    /// The pooled history, when any.
    pub pooled: Option<Pooled>,
    /// The return realised over the horizon after `date`, when known.
    pub realised: Option<f64>,
    /// The day `realised` became known.
    pub known: i32,
}

/// Where a forecast's base and reference come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// The pooled regression of realised returns on climatology means.
    Calibrated,
    /// The asset's own climatology (too little pooled history).
    Climatology,
}

impl Method {
    /// The WIT `forecast.method` string.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Calibrated => "calibrated",
            Method::Climatology => "climatology",
        }
    }
}

/// A forecast of the forward return (WIT `forecast`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Forecast {
    /// The central estimate (a mean).
    pub central: f64,
    /// 10th percentile of the forward return.
    pub p10: f64,
    /// 90th percentile of the forward return.
    pub p90: f64,
    /// Standard error of `central`.
    pub central_se: f64,
    /// The outcome the grade compares with.
    pub reference: f64,
    /// Calibrated or climatology.
    pub method: Method,
}

/// The answer for one point (WIT `graded-forecast`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GradedForecast {
    /// The forecast; none without a (usable) climatology.
    pub forecast: Option<Forecast>,
    /// A to F.
    pub letter: &'static str,
    /// In [0, 100].
    pub score: f64,
    /// Too thin for the extreme letters.
    pub thin: bool,
}

/// How the central estimate is formed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// The model: base plus the shrunk, episode-weighted bucket term.
    Shrunk,
    /// The `worse` fixture: the bucket's raw median return, no shrinkage.
    RawMedian,
}

/// The base of a point's forecast, before the bucket term.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Base {
    /// `a + b·u` (calibrated) or `u` (climatology).
    pub base: f64,
    /// The pooled slope `b` (1 for climatology).
    pub slope: f64,
    /// Prediction variance of the pooled fit at `u` (0 for climatology).
    pub var_fit: f64,
    /// The pooled mean `ybar`, or `u`.
    pub reference: f64,
    /// Which of the two.
    pub method: Method,
}

/// Running sums of the bucket pairs (d, e).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PairSums {
    /// Pairs.
    pub m: u32,
    /// Σ d².
    pub dd: f64,
    /// Σ d·e.
    pub de: f64,
    /// Σ e².
    pub ee: f64,
}

impl PairSums {
    /// Adds one pair.
    pub fn add(&mut self, d: f64, e: f64) {
        self.m += 1;
        self.dd += d * d;
        self.de += d * e;
        self.ee += e * e;
    }
}

/// The bucket term's fit through the origin.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BucketFit {
    /// `Σ d·e / Σ d²` (0 with fewer than [`MIN_PAIRS`] pairs or `Σ d² = 0`).
    pub beta: f64,
    /// Its squared standard error, overlap-inflated.
    pub se2: f64,
    /// `beta · max(0, 1 − se²/beta²)`, clamped to [0, 1].
    pub shrunk: f64,
}

/// The overlap inflation `max(1, h/30)`: month-end rows 30 days apart share
/// a horizon longer than a month.
pub fn overlap(return_period: u32) -> f64 {
    (f64::from(return_period) / 30.0).max(1.0)
}

/// The point's climatology when every figure of it is finite (a broken one
/// is treated as none).
fn usable(c: Option<&Climatology>) -> Option<&Climatology> {
    c.filter(|c| {
        [c.horizons, c.mean, c.sd, c.p10, c.p90]
            .iter()
            .all(|v| v.is_finite())
    })
}

/// The pooled fit at `u`: `None` with too little pooled history (fewer
/// than [`MIN_POOLED_ROWS`] rows or [`MIN_POOLED_ASSETS`] assets, no spread
/// of x, or figures that are not finite).
pub fn pooled_fit(p: &Pooled, u: f64, return_period: u32) -> Option<Base> {
    if p.rows < MIN_POOLED_ROWS || p.assets < MIN_POOLED_ASSETS {
        return None;
    }
    let n = f64::from(p.rows);
    let sxx = p.sum_xx - p.sum_x * p.sum_x / n;
    if !(sxx > 0.0 && sxx.is_finite()) {
        return None;
    }
    let sxy = p.sum_xy - p.sum_x * p.sum_y / n;
    let syy = p.sum_yy - p.sum_y * p.sum_y / n;
    let (xbar, ybar) = (p.sum_x / n, p.sum_y / n);
    let b = (sxy / sxx).clamp(0.0, 1.0);
    let a = ybar - b * xbar;
    let s2 = (syy - 2.0 * b * sxy + b * b * sxx).max(0.0) / (n - 2.0);
    let var_fit = s2 * (1.0 / n + (u - xbar) * (u - xbar) / sxx) * overlap(return_period);
    let base = Base {
        base: a + b * u,
        slope: b,
        var_fit,
        reference: ybar,
        method: Method::Calibrated,
    };
    [base.base, base.slope, base.var_fit, base.reference]
        .iter()
        .all(|v| v.is_finite())
        .then_some(base)
}

/// The base at `u` by the pooled fit, or the climatology's own mean; a
/// negative `u` counts as 0 (the drift floor: an asset's negative past mean
/// is no evidence of a negative expected return; on the real histories it
/// halved the worst decile gap at 30 and 90 days, docs/METHODOLOGY.md).
pub fn base(u: f64, pooled: Option<&Pooled>, return_period: u32) -> Base {
    let u = u.max(0.0);
    pooled
        .and_then(|p| pooled_fit(p, u, return_period))
        .unwrap_or(Base {
            base: u,
            slope: 1.0,
            var_fit: 0.0,
            reference: u,
            method: Method::Climatology,
        })
}

/// The bucket term's slope through the origin with its positive-part
/// shrinkage.
pub fn bucket_fit(s: &PairSums, return_period: u32) -> BucketFit {
    if s.m < MIN_PAIRS || s.dd.is_nan() || s.dd <= 0.0 {
        return BucketFit {
            beta: 0.0,
            se2: 0.0,
            shrunk: 0.0,
        };
    }
    let beta = s.de / s.dd;
    let rss = (s.ee - 2.0 * beta * s.de + beta * beta * s.dd).max(0.0);
    let se2 = rss / f64::from(s.m - 1) / s.dd * overlap(return_period);
    let shrunk = if beta == 0.0 {
        0.0
    } else {
        (beta * (1.0 - se2 / (beta * beta)).max(0.0)).clamp(0.0, 1.0)
    };
    BucketFit {
        beta,
        se2,
        // A NaN (from sums that overflowed) is no bucket term.
        shrunk: if shrunk.is_nan() { 0.0 } else { shrunk },
    }
}

/// The standard normal CDF, `Φ(z) = erfc(−z/√2) / 2` (libm's erfc,
/// accurate to about 1e-16 relative, also far in the tails).
pub fn normal_cdf(z: f64) -> f64 {
    0.5 * libm::erfc(-z / std::f64::consts::SQRT_2)
}

/// The letter of a forecast score: A above 80, B from 60, C from 40, D
/// from 20, F below.
pub fn forecast_letter(score: f64) -> &'static str {
    if score > 80.0 {
        "A"
    } else if score >= 60.0 {
        "B"
    } else if score >= 40.0 {
        "C"
    } else if score >= 20.0 {
        "D"
    } else {
        "F"
    }
}

/// The letter, score and thinness a forecast earns: `score = 100·Φ(z)`
/// with `z = (central − reference) / central_se`; thin (score clamped to
/// [20, 80]) with fewer than [`MIN_EPISODES`] episodes, the reference
/// inside the central 80 % interval of the estimate, or the climatology
/// method.
pub fn grade_forecast(f: &Forecast, episodes: u32) -> (&'static str, f64, bool) {
    let gap = f.central - f.reference;
    let z = if f.central_se > 0.0 {
        gap / f.central_se
    } else if gap == 0.0 {
        0.0
    } else {
        Z_CERTAIN.copysign(gap)
    };
    let mut score = 100.0 * normal_cdf(z);
    let band = Z80 * f.central_se;
    let inside = f.central - band <= f.reference && f.reference <= f.central + band;
    let thin = episodes < MIN_EPISODES || inside || f.method == Method::Climatology;
    if thin {
        score = score.clamp(THIN_MIN, THIN_MAX);
    }
    (forecast_letter(score), score, thin)
}

/// The answer without a forecast: C, 50, thin.
fn no_forecast() -> GradedForecast {
    GradedForecast {
        forecast: None,
        letter: "C",
        score: 50.0,
        thin: true,
    }
}

/// The bucket pair (d, e) a point contributes once its realised return is
/// known: `d = median_return − u`, `e = realised − base`.
fn pair(p: &Point, base: Option<&Base>) -> Option<(f64, f64)> {
    let c = usable(p.climatology.as_ref())?;
    let d = p.median_return - c.mean;
    let e = p.realised? - base?.base;
    (d.is_finite() && e.is_finite()).then_some((d, e))
}

/// The forecast and grade of one point from its base and the bucket fit
/// on the pairs known by its date.
fn answer(p: &Point, base: Option<&Base>, fit: &BucketFit, variant: Variant) -> GradedForecast {
    let (Some(c), Some(base)) = (usable(p.climatology.as_ref()), base) else {
        return no_forecast();
    };
    let u = c.mean;
    let var_u = base.slope * base.slope * c.sd * c.sd / c.horizons.max(1.0);
    let episodes = f64::from(p.episodes);
    let w = episodes / (episodes + PRIOR_EPISODES);
    // A median that is not a number carries no bucket signal.
    let d = if p.median_return.is_finite() {
        p.median_return - u
    } else {
        0.0
    };
    let wd = w * d;
    let var_bucket = if fit.shrunk > 0.0 {
        wd * wd * fit.se2
    } else {
        0.0
    };
    let central = match variant {
        Variant::RawMedian if p.median_return.is_finite() => p.median_return,
        _ => base.base + fit.shrunk * wd,
    };
    let f = Forecast {
        central,
        p10: central + (c.p10 - u),
        p90: central + (c.p90 - u),
        central_se: (base.var_fit + var_u + var_bucket).sqrt(),
        reference: base.reference,
        method: base.method,
    };
    let finite = [f.central, f.p10, f.p90, f.central_se, f.reference]
        .iter()
        .all(|v| v.is_finite());
    if !finite {
        return no_forecast();
    }
    let (letter, score, thin) = grade_forecast(&f, p.episodes);
    GradedForecast {
        forecast: Some(f),
        letter,
        score,
        thin,
    }
}

/// The bucket pairs known by each point's date, walked forward: earlier
/// points wait in a min-heap by (`known`, index) and join the running sums
/// once their `known` is at most the current point's date, so each point
/// costs O(log n) amortised. Dates are non-decreasing in practice; a point
/// dated before one already walked (which the sums may have passed) is
/// summed directly instead, so no answer ever sees a later `known`.
struct Walk {
    pending: BinaryHeap<Reverse<(i32, usize)>>,
    sums: PairSums,
    /// Points pushed (all of those before the current one).
    pushed: usize,
    /// The latest date the sums were brought up to.
    reached: i32,
}

impl Walk {
    fn new() -> Self {
        Walk {
            pending: BinaryHeap::new(),
            sums: PairSums::default(),
            pushed: 0,
            reached: i32::MIN,
        }
    }

    /// The sums of the pairs of points `j < i` with `known_j <= date`.
    fn sums_before(
        &mut self,
        i: usize,
        date: i32,
        points: &[Point],
        pairs: &[Option<(f64, f64)>],
    ) -> PairSums {
        for j in self.pushed..i {
            if pairs[j].is_some() {
                self.pending.push(Reverse((points[j].known, j)));
            }
        }
        self.pushed = self.pushed.max(i);
        if date < self.reached {
            let mut sums = PairSums::default();
            for (p, pair) in points[..i].iter().zip(&pairs[..i]) {
                if let (Some((d, e)), true) = (pair, p.known <= date) {
                    sums.add(*d, *e);
                }
            }
            return sums;
        }
        self.reached = date;
        while let Some(&Reverse((known, j))) = self.pending.peek() {
            if known > date {
                break;
            }
            self.pending.pop();
            if let Some((d, e)) = pairs[j] {
                self.sums.add(d, e);
            }
        }
        self.sums
    }
}

/// Forecasts and grades each point of one asset's history at horizon
/// `return_period` (calendar days), in order. For point i, with
/// `u` = its climatology's mean:
///
/// 1. Without a climatology: no forecast, C, 50, thin.
/// 2. Base at `max(u, 0)` (the drift floor, [`base`]): the pooled
///    regression of realised returns on climatology means
///    ([`pooled_fit`]: slope clamped to [0, 1], `a + b·u`, its prediction
///    variance at `u` inflated by [`overlap`], reference the pooled mean,
///    "calibrated"), or with too little pooled history `u` itself
///    (reference `u`, "climatology"). The variance of `u` adds
///    `b²·sd²/max(horizons, 1)`.
/// 3. Bucket term: over the earlier points j whose realised return was
///    known by point i's date, `d_j = median_j − u_j` and
///    `e_j = realised_j − base_j`; [`bucket_fit`] gives the shrunk slope
///    `beta*` and its `se²`; with the episode weight
///    `w = episodes/(episodes + 10)` and `d_i = median_i − u`,
///    `central = base + beta*·w·d_i` and the variance adds
///    `(w·d_i)²·se²` while `beta* > 0`.
/// 4. `p10`/`p90` = `central` plus the climatology's own spread around `u`;
///    the grade is [`grade_forecast`]'s.
///
/// Nothing fitted on realised returns uses a point j >= i or one whose
/// `known` is after point i's date. The sums run in a fixed order: the same
/// input gives the same answer, bit for bit.
pub fn forecast(return_period: u32, points: &[Point], variant: Variant) -> Vec<GradedForecast> {
    let bases: Vec<Option<Base>> = points
        .iter()
        .map(|p| {
            usable(p.climatology.as_ref()).map(|c| base(c.mean, p.pooled.as_ref(), return_period))
        })
        .collect();
    let pairs: Vec<Option<(f64, f64)>> = points
        .iter()
        .zip(&bases)
        .map(|(p, b)| pair(p, b.as_ref()))
        .collect();
    let mut walk = Walk::new();
    points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let sums = walk.sums_before(i, p.date, points, &pairs);
            let fit = bucket_fit(&sums, return_period);
            answer(p, bases[i].as_ref(), &fit, variant)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formula_and_letters() {
        // z = 0, win 0.5: 100 · (0.6 · 0.5 + 0.4 · 0.5) = 50 → C.
        assert_eq!(grade(0.0, 0.1, None, false), ("C", 50.0));
        // Strong signal and high win rate.
        let (l, s) = grade(0.2, 0.05, Some(0.9), false);
        assert!((s - 100.0 * (0.6 * (0.5 + 0.5 * 4f64.tanh()) + 0.4 * 0.9)).abs() < 1e-12);
        assert_eq!(l, "A");
        // The same, capped by insufficient data.
        assert_eq!(grade(0.2, 0.05, Some(0.9), true), ("C", 50.0));
        // Strongly negative: F.
        assert_eq!(grade(-0.3, 0.05, Some(0.1), false).0, "F");
        // A zero error does not divide by zero.
        assert!(grade(0.01, 0.0, Some(0.6), false).1.is_finite());
        // Boundaries.
        assert_eq!(grade(0.0, 1.0, Some(0.75), false).0, "C"); // 30 + 30 = 60
        assert_eq!(grade(0.0, 1.0, Some(0.875), false).0, "B"); // 30 + 35 = 65
        assert_eq!(grade(0.0, 1.0, Some(0.125), false).0, "D"); // 30 + 5 = 35
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1e-300) || (a - b).abs() <= tol
    }

    /// n = 200 rows of 5 assets with xbar = 0.01, ybar = 0.02 and centered
    /// sums Sxx = 0.5, Syy = 1 and Sxy = `sxy`.
    fn pooled(sxy: f64) -> Pooled {
        Pooled {
            rows: 200,
            assets: 5,
            sum_x: 2.0,
            sum_y: 4.0,
            sum_xx: 0.5 + 2.0 * 2.0 / 200.0,
            sum_xy: sxy + 2.0 * 4.0 / 200.0,
            sum_yy: 1.0 + 4.0 * 4.0 / 200.0,
        }
    }

    fn clim(mean: f64, sd: f64) -> Climatology {
        Climatology {
            count: 100,
            horizons: 4.0,
            mean,
            sd,
            p10: mean - 0.12,
            p90: mean + 0.13,
        }
    }

    fn point(date: i32, median: f64, episodes: u32, c: Option<Climatology>) -> Point {
        Point {
            date,
            median_return: median,
            episodes,
            climatology: c,
            pooled: None,
            realised: None,
            known: date + 30,
        }
    }

    #[test]
    fn the_pooled_fit_by_hand() {
        // b = 0.25 / 0.5 = 0.5, a = 0.02 − 0.5 · 0.01 = 0.015, at u = 0.05:
        // base = 0.04; s² = (1 − 2 · 0.5 · 0.25 + 0.25 · 0.5) / 198;
        // var_fit = s² · (1/200 + 0.04² / 0.5) · 90/30.
        let fit = pooled_fit(&pooled(0.25), 0.05, 90).unwrap();
        assert!(close(fit.slope, 0.5, 1e-12), "{fit:?}");
        assert!(close(fit.base, 0.04, 1e-12), "{fit:?}");
        assert!(close(fit.reference, 0.02, 1e-12), "{fit:?}");
        let s2 = 0.875 / 198.0;
        assert!(close(fit.var_fit, s2 * (0.005 + 0.0016 / 0.5) * 3.0, 1e-10));
        assert_eq!(fit.method, Method::Calibrated);
        // A horizon of a month or less is not inflated.
        let month = pooled_fit(&pooled(0.25), 0.05, 30).unwrap();
        assert!(close(month.var_fit, s2 * (0.005 + 0.0016 / 0.5), 1e-10));
        assert_eq!(
            pooled_fit(&pooled(0.25), 0.05, 7).unwrap().var_fit,
            month.var_fit
        );

        // A negative slope is clamped to 0: base = ybar, s² = Syy / 198.
        let flat = pooled_fit(&pooled(-0.1), 0.05, 30).unwrap();
        assert_eq!(flat.slope, 0.0);
        assert!(close(flat.base, 0.02, 1e-12));
        assert!(close(
            flat.var_fit,
            (1.0 / 198.0) * (0.005 + 0.0016 / 0.5),
            1e-10
        ));
        // A slope above 1 is clamped to 1: base = 0.01 + u; the residual
        // sum 1 − 1.5 + 0.5 is zero.
        let steep = pooled_fit(&pooled(0.75), 0.05, 30).unwrap();
        assert_eq!(steep.slope, 1.0);
        assert!(close(steep.base, 0.06, 1e-12));
        assert!(steep.var_fit.abs() < 1e-15);

        // Too little pooled history, or no spread of x: none.
        let few_rows = Pooled {
            rows: 199,
            ..pooled(0.25)
        };
        let few_assets = Pooled {
            assets: 4,
            ..pooled(0.25)
        };
        let no_spread = Pooled {
            sum_xx: 2.0 * 2.0 / 200.0,
            ..pooled(0.25)
        };
        let broken = Pooled {
            sum_xy: f64::NAN,
            ..pooled(0.25)
        };
        for p in [few_rows, few_assets, no_spread, broken] {
            assert_eq!(pooled_fit(&p, 0.05, 30), None, "{p:?}");
            assert_eq!(base(0.05, Some(&p), 30).method, Method::Climatology);
        }
    }

    #[test]
    fn a_calibrated_forecast_by_hand() {
        let mut p = point(0, 0.2, 30, Some(clim(0.05, 0.1)));
        p.pooled = Some(pooled(0.25));
        let g = forecast(90, &[p], Variant::Shrunk)[0];
        let f = g.forecast.unwrap();
        assert_eq!(f.method, Method::Calibrated);
        // No earlier pair: the base alone.
        assert!(close(f.central, 0.04, 1e-12));
        assert!(close(f.p10, 0.04 - 0.12, 1e-12));
        assert!(close(f.p90, 0.04 + 0.13, 1e-12));
        assert!(close(f.reference, 0.02, 1e-12));
        let var_fit: f64 = 0.875 / 198.0 * (0.005 + 0.0016 / 0.5) * 3.0;
        let var_u = 0.5 * 0.5 * 0.1 * 0.1 / 4.0;
        let se = (var_fit + var_u).sqrt();
        assert!(close(f.central_se, se, 1e-12));
        // z = 0.02 / se ≈ 0.74 < 1.28: the reference is inside the 80 %
        // interval, so thin; 100 Φ(z) ≈ 77 stays.
        let score = 100.0 * normal_cdf(0.02 / se);
        assert!(close(g.score, score, 1e-12));
        assert!(g.thin);
        assert_eq!(g.letter, "B");
    }

    #[test]
    fn a_negative_own_mean_counts_as_zero_in_the_base() {
        let p = pooled(0.004);
        for pooled in [Some(&p), None] {
            let floor = base(0.0, pooled, 90);
            assert_eq!(base(-0.2, pooled, 90), floor);
            assert_eq!(base(-1e-9, pooled, 90), floor);
            assert!(base(0.01, pooled, 90).base > floor.base);
        }
        assert_eq!(base(-0.2, None, 90).base, 0.0);
    }

    #[test]
    fn the_climatology_fallback() {
        // No climatology: no forecast.
        let none = forecast(30, &[point(0, 0.1, 50, None)], Variant::Shrunk)[0];
        assert_eq!(none, no_forecast());
        assert_eq!((none.letter, none.score, none.thin), ("C", 50.0, true));
        // A climatology with a non-finite figure counts as none.
        let broken = Climatology {
            sd: f64::NAN,
            ..clim(0.05, 0.1)
        };
        let g = forecast(30, &[point(0, 0.1, 50, Some(broken))], Variant::Shrunk)[0];
        assert_eq!(g, no_forecast());

        // Climatology without pooled history: central = u, reference = u,
        // se = sd / sqrt(horizons), score 50, thin.
        let g = forecast(
            30,
            &[point(0, 0.2, 50, Some(clim(0.05, 0.1)))],
            Variant::Shrunk,
        )[0];
        let f = g.forecast.unwrap();
        assert_eq!(f.method, Method::Climatology);
        assert_eq!(f.method.as_str(), "climatology");
        assert_eq!(f.central, 0.05);
        assert_eq!(f.reference, 0.05);
        assert!(close(f.central_se, 0.1 / 2.0, 1e-12));
        assert_eq!((g.letter, g.score, g.thin), ("C", 50.0, true));
        // Fewer than one horizon counts as one.
        let short = Climatology {
            horizons: 0.5,
            ..clim(0.05, 0.1)
        };
        let g = forecast(30, &[point(0, 0.2, 50, Some(short))], Variant::Shrunk)[0];
        assert!(close(g.forecast.unwrap().central_se, 0.1, 1e-12));
        // Too little pooled history is the fallback too.
        let mut p = point(0, 0.2, 50, Some(clim(0.05, 0.1)));
        p.pooled = Some(Pooled {
            assets: 4,
            ..pooled(0.25)
        });
        let g = forecast(30, &[p], Variant::Shrunk)[0];
        assert_eq!(g.forecast.unwrap().method, Method::Climatology);
        assert!(g.thin);
    }

    #[test]
    fn the_bucket_fit_by_hand() {
        // beta = 1/2; residuals 1 − 1 + 0.25 · 2 = 0.5; se² = 0.5 / 11 / 2
        // = 1/44; shrunk = 0.5 · (1 − (1/44) / 0.25) = 5/11.
        let s = PairSums {
            m: 12,
            dd: 2.0,
            de: 1.0,
            ee: 1.0,
        };
        let fit = bucket_fit(&s, 30);
        assert_eq!(fit.beta, 0.5);
        assert!(close(fit.se2, 1.0 / 44.0, 1e-12));
        assert!(close(fit.shrunk, 5.0 / 11.0, 1e-12));
        // A 90-day horizon triples se²: shrunk = 0.5 · (1 − 3/11) = 4/11.
        let fit = bucket_fit(&s, 90);
        assert!(close(fit.se2, 3.0 / 44.0, 1e-12));
        assert!(close(fit.shrunk, 4.0 / 11.0, 1e-12));
        // Eleven pairs, or no spread of d: no term.
        let zero = BucketFit {
            beta: 0.0,
            se2: 0.0,
            shrunk: 0.0,
        };
        assert_eq!(bucket_fit(&PairSums { m: 11, ..s }, 30), zero);
        assert_eq!(bucket_fit(&PairSums { dd: 0.0, ..s }, 30), zero);
        // An exact slope of 3 is clamped to 1; a negative one to 0.
        let steep = PairSums {
            m: 12,
            dd: 1.0,
            de: 3.0,
            ee: 9.0,
        };
        assert_eq!(bucket_fit(&steep, 30).shrunk, 1.0);
        let negative = PairSums { de: -3.0, ..steep };
        assert_eq!(bucket_fit(&negative, 30).shrunk, 0.0);
        // A slope within its standard error shrinks to 0.
        let weak = PairSums {
            m: 12,
            dd: 1.0,
            de: 0.1,
            ee: 1.0,
        };
        let fit = bucket_fit(&weak, 30);
        assert!(fit.beta > 0.0 && fit.se2 > fit.beta * fit.beta);
        assert_eq!(fit.shrunk, 0.0);
    }

    /// Monthly points at horizon 30 (each known at the next point's date)
    /// with climatology mean `u`, the given medians and realised returns.
    fn history(u: f64, medians: &[f64], realised: &[f64]) -> Vec<Point> {
        medians
            .iter()
            .zip(realised)
            .enumerate()
            .map(|(k, (&m, &r))| Point {
                realised: Some(r),
                ..point(30 * k as i32, m, 40, Some(clim(u, 0.05)))
            })
            .collect()
    }

    #[test]
    fn a_bucket_that_predicts_perfectly_gets_beta_one_once_twelve_pairs_are_known() {
        let u = 0.01;
        let medians: Vec<f64> = (0..30).map(|k| u + 0.03 * (k as f64 * 0.9).sin()).collect();
        // e = realised − u = median − u = d, bit for bit.
        let out = forecast(30, &history(u, &medians, &medians), Variant::Shrunk);
        let w = 40.0 / 50.0;
        for (i, g) in out.iter().enumerate() {
            let f = g.forecast.unwrap();
            if i < 12 {
                // Point i knows the pairs of points 0..i: fewer than 12.
                assert_eq!(f.central, u, "point {i}");
            } else {
                let d = medians[i] - u;
                assert!(close(f.central, u + w * d, 1e-12), "point {i}: {f:?}");
                // An exact fit adds no variance.
                assert!(close(f.central_se, 0.05 / 2.0, 1e-12));
            }
        }
        // The same with noise: a slope below one, shrunk below the raw one.
        let noisy: Vec<f64> = medians
            .iter()
            .enumerate()
            .map(|(k, m)| m + 0.02 * (k as f64 * 2.3).cos())
            .collect();
        let mut sums = PairSums::default();
        for (m, r) in medians.iter().zip(&noisy) {
            sums.add(m - u, r - u);
        }
        let fit = bucket_fit(&sums, 30);
        assert!(fit.shrunk > 0.0 && fit.shrunk < fit.beta, "{fit:?}");
    }

    #[test]
    fn pure_noise_and_a_reversed_bucket_get_no_bucket_term() {
        // d and e orthogonal (signs ++-- against +-+-), exactly.
        let s1 = [1.0, 1.0, -1.0, -1.0];
        let s2 = [1.0, -1.0, 1.0, -1.0];
        let medians: Vec<f64> = (0..40).map(|k| 0.02 * s1[k % 4]).collect();
        let realised: Vec<f64> = (0..40).map(|k| 0.03 * s2[k % 4]).collect();
        let out = forecast(30, &history(0.0, &medians, &realised), Variant::Shrunk);
        assert!(out.iter().all(|g| g.forecast.unwrap().central == 0.0));
        // e = −d: the slope −1 is clamped to 0.
        let reversed: Vec<f64> = medians.iter().map(|m| -m).collect();
        let out = forecast(30, &history(0.0, &medians, &reversed), Variant::Shrunk);
        assert!(out.iter().all(|g| g.forecast.unwrap().central == 0.0));
    }

    #[test]
    fn thin_evidence_never_earns_a_or_f() {
        let strong = Forecast {
            central: 0.1,
            p10: 0.0,
            p90: 0.2,
            central_se: 0.01,
            reference: 0.0,
            method: Method::Calibrated,
        };
        // z = 10: 100 with 10 episodes, clamped to 80 (B) with 9.
        assert_eq!(grade_forecast(&strong, 10), ("A", 100.0, false));
        assert_eq!(grade_forecast(&strong, 9), ("B", 80.0, true));
        let weak = Forecast {
            central: -0.1,
            ..strong
        };
        let (letter, score, thin) = grade_forecast(&weak, 10);
        assert!(letter == "F" && score < 1e-20 && !thin);
        assert_eq!(grade_forecast(&weak, 9), ("D", 20.0, true));
        // The climatology method is thin whatever the episodes.
        let clim_only = Forecast {
            method: Method::Climatology,
            ..strong
        };
        assert_eq!(grade_forecast(&clim_only, 500), ("B", 80.0, true));
        // The reference inside central ± 1.2816 se is thin; just outside is not.
        let edge = Forecast {
            central: Z80 * 0.01,
            ..strong
        };
        assert!(grade_forecast(&edge, 50).2);
        let out = Forecast {
            central: Z80 * 0.01 * 1.000001,
            ..strong
        };
        let (letter, score, thin) = grade_forecast(&out, 50);
        assert!(!thin && score > 90.0 && letter == "A");
        // A zero standard error: z = 0 on the reference, ±certain off it.
        let exact = Forecast {
            central_se: 0.0,
            central: 0.0,
            ..strong
        };
        assert_eq!(grade_forecast(&exact, 50), ("C", 50.0, true));
        let sure = Forecast {
            central_se: 0.0,
            ..strong
        };
        assert_eq!(grade_forecast(&sure, 50), ("A", 100.0, false));

        // Through `forecast`: 9 episodes and a bucket term far from the
        // reference stay within [20, 80] and are never A or F.
        for sign in [1.0, -1.0] {
            let u = 0.01;
            let medians: Vec<f64> = (0..40)
                .map(|k| u + sign * (0.05 + 0.001 * k as f64))
                .collect();
            let mut points = history(u, &medians, &medians);
            for p in &mut points {
                p.episodes = 9;
                p.pooled = Some(pooled(0.25));
            }
            for g in forecast(30, &points, Variant::Shrunk) {
                assert!(g.thin && (20.0..=80.0).contains(&g.score), "{g:?}");
                assert!(g.letter != "A" && g.letter != "F", "{g:?}");
            }
        }
    }

    #[test]
    fn letters_at_their_boundaries() {
        let cases = [
            (100.0, "A"),
            (80.000001, "A"),
            (80.0, "B"),
            (60.0, "B"),
            (59.999999, "C"),
            (40.0, "C"),
            (39.999999, "D"),
            (20.0, "D"),
            (19.999999, "F"),
            (0.0, "F"),
        ];
        for (score, letter) in cases {
            assert_eq!(forecast_letter(score), letter, "{score}");
        }
    }

    #[test]
    fn the_normal_cdf_is_accurate() {
        assert_eq!(normal_cdf(0.0), 0.5);
        assert!((normal_cdf(Z80) - 0.9).abs() < 1e-15);
        assert!((normal_cdf(1.0) - 0.841_344_746_068_542_9).abs() < 1e-15);
        assert!(close(normal_cdf(-1.96), 0.024_997_895_148_220_435, 1e-14));
        assert!(close(normal_cdf(-8.0), 6.220_960_574_271_785e-16, 1e-12));
        assert_eq!(normal_cdf(40.0), 1.0);
        assert_eq!(normal_cdf(-40.0), 0.0);
    }

    /// SplitMix64: random histories without a dependency.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }

        fn unit(&mut self) -> f64 {
            (self.next() >> 11) as f64 / (1u64 << 53) as f64
        }

        fn range(&mut self, lo: f64, hi: f64) -> f64 {
            lo + (hi - lo) * self.unit()
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    fn random_pooled(rng: &mut Rng) -> Pooled {
        let rows = 150 + rng.below(300) as u32;
        let n = f64::from(rows);
        let (xbar, ybar) = (rng.range(-0.02, 0.05), rng.range(-0.02, 0.05));
        let sxx = rng.range(0.0, 0.5);
        let sxy = rng.range(-0.5, 1.0) * sxx;
        let syy = sxy * sxy / sxx.max(1e-12) + rng.range(0.0, 2.0);
        Pooled {
            rows,
            assets: 3 + rng.below(8) as u32,
            sum_x: xbar * n,
            sum_y: ybar * n,
            sum_xx: sxx + xbar * xbar * n,
            sum_xy: sxy + xbar * ybar * n,
            sum_yy: syy + ybar * ybar * n,
        }
    }

    /// Month-end points (dates increasing), known after the horizon with a
    /// jitter that makes `known` non-monotone; some points lack a
    /// climatology, pooled history or realised return.
    fn random_history(rng: &mut Rng, n: usize, h: i32) -> Vec<Point> {
        let mut date = 0;
        // How much of the bucket's edge is realised.
        let signal = rng.range(-0.5, 1.5);
        (0..n)
            .map(|_| {
                date += 28 + rng.below(4) as i32;
                let u = rng.range(-0.02, 0.06);
                let climatology = (rng.below(10) != 0).then(|| Climatology {
                    count: 50,
                    horizons: rng.range(0.5, 30.0),
                    mean: u,
                    sd: rng.range(0.01, 0.3),
                    p10: u - rng.range(0.0, 0.2),
                    p90: u + rng.range(0.0, 0.2),
                });
                let median_return = u + rng.range(-0.1, 0.1);
                let realised = u + signal * (median_return - u) + rng.range(-0.05, 0.05);
                Point {
                    date,
                    median_return,
                    episodes: rng.below(40) as u32,
                    climatology,
                    pooled: (rng.below(2) == 0).then(|| random_pooled(rng)),
                    realised: (rng.below(5) != 0).then_some(realised),
                    known: date + h + rng.below(60) as i32 - 10,
                }
            })
            .collect()
    }

    fn bits(g: &GradedForecast) -> Vec<u64> {
        let mut v = vec![
            g.score.to_bits(),
            g.thin as u64,
            g.letter.as_bytes()[0] as u64,
        ];
        if let Some(f) = g.forecast {
            v.extend([f.central, f.p10, f.p90, f.central_se, f.reference].map(f64::to_bits));
            v.push(f.method as u64);
        }
        v
    }

    fn same(a: &[GradedForecast], b: &[GradedForecast]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| bits(x) == bits(y))
    }

    #[test]
    fn no_look_ahead() {
        let mut rng = Rng(7);
        for round in 0..40 {
            let h = [7, 30, 90, 365][round % 4];
            let n = 40 + rng.below(60) as usize;
            let points = random_history(&mut rng, n, h);
            let full = forecast(h as u32, &points, Variant::Shrunk);
            for _ in 0..8 {
                let k = rng.below(n as u64) as usize;
                // Points after k removed.
                let cut = forecast(h as u32, &points[..=k], Variant::Shrunk);
                assert!(same(&cut, &full[..=k]), "round {round}, k {k}");
                // Their realised returns changed (or dropped).
                let mut changed = points.clone();
                for p in &mut changed[k + 1..] {
                    p.realised = p.realised.map(|r| -3.0 * r + 0.5).or(Some(9.0));
                }
                let other = forecast(h as u32, &changed, Variant::Shrunk);
                assert!(same(&other[..=k], &full[..=k]), "round {round}, k {k}");
                // Every realised return not known by point k's date changed.
                let mut unknown = points.clone();
                let date = points[k].date;
                for p in unknown.iter_mut().filter(|p| p.known > date) {
                    p.realised = Some(7.0);
                }
                let other = forecast(h as u32, &unknown, Variant::Shrunk);
                assert!(same(&other[k..=k], &full[k..=k]), "round {round}, k {k}");
            }
        }
    }

    /// The answers equal a direct O(n²) recomputation of each point's
    /// pairs, also when dates go backwards.
    #[test]
    fn the_walk_equals_direct_sums() {
        let mut rng = Rng(11);
        let mut with_term = 0;
        for round in 0..20 {
            let h = [30, 90][round % 2];
            let mut points = random_history(&mut rng, 80, h);
            if round % 4 == 1 {
                // Swap some dates: a point dated before one already walked.
                for i in (5..80).step_by(9) {
                    let (a, b) = (points[i - 3].date, points[i].date);
                    points[i - 3].date = b;
                    points[i].date = a;
                }
            }
            let out = forecast(h as u32, &points, Variant::Shrunk);
            let bases: Vec<Option<Base>> = points
                .iter()
                .map(|p| {
                    usable(p.climatology.as_ref())
                        .map(|c| base(c.mean, p.pooled.as_ref(), h as u32))
                })
                .collect();
            for (i, p) in points.iter().enumerate() {
                let mut sums = PairSums::default();
                for j in 0..i {
                    if points[j].known <= p.date {
                        if let Some((d, e)) = pair(&points[j], bases[j].as_ref()) {
                            sums.add(d, e);
                        }
                    }
                }
                let fit = bucket_fit(&sums, h as u32);
                with_term += usize::from(fit.shrunk > 0.0);
                let direct = answer(p, bases[i].as_ref(), &fit, Variant::Shrunk);
                match (direct.forecast, out[i].forecast) {
                    (Some(a), Some(b)) => {
                        assert!(close(a.central, b.central, 1e-9), "{i}: {a:?} {b:?}");
                        assert!(close(a.central_se, b.central_se, 1e-9), "{i}: {a:?} {b:?}");
                    }
                    (a, b) => assert_eq!(a, b),
                }
            }
        }
        // The bucket term was exercised.
        assert!(with_term > 200, "{with_term}");
    }

    #[test]
    fn the_same_input_gives_the_same_answer_bit_for_bit() {
        let mut rng = Rng(3);
        let points = random_history(&mut rng, 120, 90);
        let a = forecast(90, &points, Variant::Shrunk);
        let b = forecast(90, &points.clone(), Variant::Shrunk);
        assert!(same(&a, &b));
        assert!(a
            .iter()
            .all(|g| (0.0..=100.0).contains(&g.score)
                && ["A", "B", "C", "D", "F"].contains(&g.letter)));
        // The `worse` variant forecasts the raw median instead.
        let worse = forecast(90, &points, Variant::RawMedian);
        assert!(!same(&a, &worse));
        for (p, g) in points.iter().zip(&worse) {
            if let Some(f) = g.forecast {
                let c = p.climatology.unwrap();
                assert_eq!(f.central, p.median_return);
                assert_eq!(f.p10, p.median_return + (c.p10 - c.mean));
            }
        }
    }

    #[test]
    fn the_version_is_the_builds() {
        if cfg!(feature = "classic") {
            assert_eq!(VERSION, "1.0.0");
        } else if cfg!(feature = "worse") {
            assert_eq!((VERSION, VARIANT), ("2.1.0-worse", Variant::RawMedian));
        } else {
            assert_eq!((VERSION, VARIANT), ("2.1.0", Variant::Shrunk));
        }
    }
}
