//! Models compete by evidence (decision 0080): any two versions of the
//! scorer, or of the engine, forecast the same walk-forward rows — every
//! month-end of every asset with real or ingested prices, at one horizon —
//! and are scored with proper rules against the same climatology; a
//! Diebold–Mariano test on their CRPS says whether one is better. The
//! activation gate refuses a candidate significantly worse than the active
//! version.

use std::collections::BTreeMap;
use std::sync::Arc;

use forecast_api::models::{ModelCard, ModelComparison};
use forecast_domain::evaluation::{crps_gaussian, newey_west_mean, sigma_from_quantiles, EvalRow};
use forecast_domain::series::{from_days, PriceSeries};
use forecast_domain::{DataSource, Metric};
use forecast_plugins::{Permit, ScorerPlugin, SegmentationPlugin};
use forecast_store::AssetStore;

use crate::analysis::AnalysisQuery;
use crate::error::Error;
use crate::forecast::{contribution, points, Pool, PooledTable};

/// The horizon models are compared at unless asked otherwise.
pub const DEFAULT_HORIZON: u32 = 90;
/// The gate's significance level (two-sided Diebold–Mariano).
pub const GATE_LEVEL: f64 = 0.05;

/// One pair of components a model is made of.
#[derive(Clone)]
pub struct Model {
    /// The engine.
    pub engine: Arc<SegmentationPlugin>,
    /// The scorer.
    pub scorer: Arc<ScorerPlugin>,
}

impl Model {
    /// `kind/name@version` of the part being compared.
    fn label(&self, part: Part) -> String {
        match part {
            Part::Engine => self.engine.info().label(),
            Part::Scorer => self.scorer.info().label(),
        }
    }
}

/// Which part of a model differs between the two compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The segmentation engine.
    Engine,
    /// The scorer.
    Scorer,
}

/// The assets models are judged on: every active asset with real or
/// ingested prices, by id, with its series (at most the rows the engine is
/// given).
pub async fn observed(assets: &dyn AssetStore) -> Result<Vec<(i64, PriceSeries)>, Error> {
    let mut list = assets.list_active_assets(None).await?;
    list.retain(|a| a.data_source != DataSource::Synthetic);
    list.sort_by_key(|a| a.id);
    let mut out = Vec::with_capacity(list.len());
    for a in list {
        if let Some(s) = assets.load_series(a.id).await? {
            let s = s.first_rows(forecast_domain::defaults::MAX_HISTORY_ROWS);
            if s.len() >= crate::analysis::MIN_ROWS {
                out.push((a.id, s));
            }
        }
    }
    Ok(out)
}

/// The pooled table of `series` at `horizon` alone.
pub fn table(series: &[(i64, PriceSeries)], horizon: u32) -> PooledTable {
    PooledTable::new(
        series
            .iter()
            .map(|(_, s)| (Pool::Observed, horizon, contribution(s, horizon))),
    )
}

/// A model's walk-forward rows at `horizon`, keyed by (asset, month-end):
/// the scorer's calibrated forecast where it makes one, else the bucket's
/// raw median as the central estimate with the climatology's spread
/// around it (what a scorer without forecasts grades by). Rows without a
/// climatology or a realised return are left out.
pub fn rows(
    permit: &Permit,
    model: &Model,
    series: &[(i64, PriceSeries)],
    horizon: u32,
    table: &PooledTable,
) -> Result<BTreeMap<(i64, i32), EvalRow>, Error> {
    let query = AnalysisQuery {
        return_period: horizon,
        metric: Metric::Return,
        ..AnalysisQuery::default()
    };
    let mut out = BTreeMap::new();
    for (id, s) in series {
        let ends = crate::track_record::month_ends(s);
        if ends.is_empty() {
            continue;
        }
        let params = crate::analysis::engine_params(&query, s.periods_per_year());
        let walk = crate::evidence::only_answer(
            model.engine.states_at(permit, s, &[params], &ends)?,
            "states",
        )?;
        let medians: Vec<f64> = walk.iter().map(|st| st.current.median_return).collect();
        let episodes = match model.engine.has_episodes() {
            true => crate::evidence::only_answer(
                model.engine.episodes_at(permit, s, &[params], &ends)?,
                "episodes",
            )?,
            false => vec![0; ends.len()],
        };
        let pts = points(
            s,
            horizon,
            &ends,
            &medians,
            &episodes,
            Some((table, Pool::Observed)),
        );
        let centrals: Vec<Option<(f64, f64, f64)>> = match model.scorer.has_forecasting() {
            true => model
                .scorer
                .forecast(permit, horizon, &pts)?
                .into_iter()
                .map(|g| g.forecast.map(|f| (f.central, f.p10, f.p90)))
                .collect(),
            false => pts
                .iter()
                .map(|p| {
                    p.climatology.as_ref().map(|c| {
                        let m = p.median_return;
                        (m, m + c.p10 - c.mean, m + c.p90 - c.mean)
                    })
                })
                .collect(),
        };
        for (p, f) in pts.iter().zip(centrals) {
            let (Some(c), Some(y), Some((central, p10, p90))) = (&p.climatology, p.realised, f)
            else {
                continue;
            };
            if p90.partial_cmp(&p10) != Some(std::cmp::Ordering::Greater)
                || c.p90.partial_cmp(&c.p10) != Some(std::cmp::Ordering::Greater)
            {
                continue;
            }
            out.insert(
                (*id, p.date),
                EvalRow {
                    month: crate::forecast::month_index(p.date),
                    central,
                    p10,
                    p90,
                    clim_mean: c.mean,
                    clim_sd: c.sd,
                    clim_p10: c.p10,
                    clim_p90: c.p90,
                    realised: y,
                },
            );
        }
    }
    Ok(out)
}

/// The model card of `rows` (sorted by month): every figure of the
/// evaluation, the dates covered.
pub fn card(label: String, horizon: u32, rows: &[EvalRow], dates: (i32, i32)) -> ModelCard {
    let mut sorted = rows.to_vec();
    sorted.sort_by_key(|r| r.month);
    ModelCard {
        model: label,
        return_period: horizon,
        source: "real".into(),
        first_date: (!rows.is_empty()).then(|| from_days(dates.0)),
        last_date: (!rows.is_empty()).then(|| from_days(dates.1)),
        evaluation: crate::track_record::evaluation_body(&sorted, horizon),
    }
}

/// Compares `a` and `b` (differing in `part`) on the same rows at
/// `horizon`: each one's card over the rows both forecast, and the
/// Diebold–Mariano test of their per-month mean CRPS (a minus b: above 0,
/// b did better); with `b`'s rows sorted by month (what its card scored).
pub fn compare(
    permit: &Permit,
    a: &Model,
    b: &Model,
    part: Part,
    series: &[(i64, PriceSeries)],
    horizon: u32,
) -> Result<(ModelComparison, Vec<EvalRow>), Error> {
    let table = table(series, horizon);
    let ra = rows(permit, a, series, horizon, &table)?;
    let rb = rows(permit, b, series, horizon, &table)?;
    let common: Vec<(&(i64, i32), &EvalRow, &EvalRow)> = ra
        .iter()
        .filter_map(|(k, x)| rb.get(k).map(|y| (k, x, y)))
        .collect();
    let dates = common.iter().fold((i32::MAX, i32::MIN), |d, (k, _, _)| {
        (d.0.min(k.1), d.1.max(k.1))
    });
    let xs: Vec<EvalRow> = common.iter().map(|c| *c.1).collect();
    let ys: Vec<EvalRow> = common.iter().map(|c| *c.2).collect();
    // Per month (ascending), the CRPS differential a − b.
    let mut by_month: BTreeMap<i32, (f64, u32)> = BTreeMap::new();
    for (x, y) in xs.iter().zip(&ys) {
        let la = crps_gaussian(x.central, sigma_from_quantiles(x.p10, x.p90), x.realised);
        let lb = crps_gaussian(y.central, sigma_from_quantiles(y.p10, y.p90), y.realised);
        let cell = by_month.entry(x.month).or_default();
        cell.0 += la - lb;
        cell.1 += 1;
    }
    // Each month's sum over the mean rows per month: their mean is the row
    // mean (as the evaluation's differentials are).
    let per_month = xs.len() as f64 / by_month.len().max(1) as f64;
    let d: Vec<f64> = by_month.values().map(|(s, _)| s / per_month).collect();
    let lag = (horizon as usize).div_ceil(30);
    let (mean, se) = match d.len() >= 2 {
        true => newey_west_mean(&d, lag),
        false => (d.first().copied().unwrap_or(0.0), f64::NAN),
    };
    let stat = mean / se;
    let p = match stat.is_finite() {
        true => 2.0 * (1.0 - forecast_domain::evaluation::normal_cdf(stat.abs())),
        false => 1.0,
    };
    let (la, lb) = (a.label(part), b.label(part));
    let verdict = match (p < GATE_LEVEL, mean > 0.0) {
        (true, true) => format!("{lb} is significantly better than {la}"),
        (true, false) => format!("{lb} is significantly worse than {la}"),
        (false, _) => format!("no significant difference between {la} and {lb} at 5 %"),
    };
    let mut rows_b = ys.clone();
    rows_b.sort_by_key(|r| r.month);
    let comparison = ModelComparison {
        return_period: horizon,
        rows: xs.len() as u32,
        months: d.len() as u32,
        a: card(la, horizon, &xs, dates),
        b: card(lb, horizon, &ys, dates),
        crps_differential: mean,
        crps_differential_se: se,
        dm_stat: stat,
        dm_p: p,
        b_significantly_worse: p < GATE_LEVEL && mean < 0.0,
        verdict,
    };
    Ok((comparison, rows_b))
}
