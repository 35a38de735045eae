//! What the scorer's `forecasting` interface is given (WIT 1.9.0,
//! decision 0079): for each point of one asset's history at one horizon,
//! the asset's own forward-return distribution up to that date
//! (climatology) and the pooled history of every asset of the same kind of
//! data before that date's month. The host only counts and sums here; the
//! fit, the forecast and the grade are the scorer's.

use std::collections::BTreeMap;
use std::sync::Arc;

use forecast_domain::series::PriceSeries;
use forecast_domain::DataSource;
use forecast_plugins::scorer::{Climatology, Point, Pooled};

/// The kinds of data that are pooled apart: real prices are never
/// calibrated on synthetic ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Pool {
    /// Real and ingested prices.
    Observed,
    /// The demo universe's generated histories.
    Synthetic,
}

impl Pool {
    /// The pool of an asset's prices.
    pub fn of(source: DataSource) -> Pool {
        match source {
            DataSource::Synthetic => Pool::Synthetic,
            DataSource::Real | DataSource::Ingested => Pool::Observed,
        }
    }
}

/// Months since year 0 of the day `days` (since 1970-01-01).
pub fn month_index(days: i32) -> i32 {
    let (year, month) = forecast_domain::series::year_month(days);
    year * 12 + month as i32 - 1
}

/// The forward simple return over `horizon` calendar days from every row
/// of `s` that has one (the first row at least `horizon` days later), and
/// that row's index. Exit rows are non-decreasing in the start row.
pub fn forward_returns(s: &PriceSeries, horizon: u32) -> Vec<(f64, usize)> {
    let mut out = Vec::with_capacity(s.len());
    let mut j = 0;
    for i in 0..s.len() {
        let target = s.dates[i] + horizon as i32;
        j = j.max(i);
        while j < s.len() && s.dates[j] < target {
            j += 1;
        }
        if j == s.len() {
            break;
        }
        out.push((s.closes[j] / s.closes[i] - 1.0, j));
    }
    out
}

/// The climatology of each of `ends` (ascending row indices of `s`): the
/// forward returns whose exit row is at or before the end, when at least
/// two. One pass: a Fenwick tree over the returns' ranks answers each
/// percentile in a logarithm.
pub fn climatologies(s: &PriceSeries, horizon: u32, ends: &[u32]) -> Vec<Option<Climatology>> {
    climatologies_of(s, &forward_returns(s, horizon), horizon, ends)
}

/// [`climatologies`] from the series' forward returns at `horizon`.
fn climatologies_of(
    s: &PriceSeries,
    fwd: &[(f64, usize)],
    horizon: u32,
    ends: &[u32],
) -> Vec<Option<Climatology>> {
    // Ranks by (return, row), ties by row, so the order is total and the
    // same everywhere: one integer key each (the return's bits in
    // `f64::total_cmp` order above the row), sorted as integers.
    let mut keys: Vec<u128> = fwd
        .iter()
        .enumerate()
        .map(|(i, r)| (u128::from(total_order_bits(r.0)) << 64) | i as u128)
        .collect();
    keys.sort_unstable();
    let mut rank = vec![0usize; fwd.len()];
    let sorted: Vec<f64> = keys
        .iter()
        .enumerate()
        .map(|(r, &key)| {
            let i = key as u64 as usize;
            rank[i] = r;
            fwd[i].0
        })
        .collect();
    let mut tree = Fenwick::new(fwd.len());
    let mut run = Welford::default();
    ends.iter()
        .map(|&t| {
            while run.k < fwd.len() && fwd[run.k].1 <= t as usize {
                tree.add(rank[run.k]);
                run.push(fwd[run.k].0);
            }
            let (k, mean, m2) = (run.k, run.mean, run.m2);
            (k >= 2).then(|| {
                let at = |q: f64| {
                    let pos = q * (k - 1) as f64;
                    let lo = pos.floor() as usize;
                    let hi = pos.ceil() as usize;
                    let a = sorted[tree.kth(lo)];
                    let b = sorted[tree.kth(hi)];
                    a + (b - a) * (pos - lo as f64)
                };
                Climatology {
                    count: k as u32,
                    horizons: f64::from(s.dates[k - 1] - s.dates[0]) / f64::from(horizon) + 1.0,
                    mean,
                    sd: (m2 / k as f64).sqrt(),
                    p10: at(0.1),
                    p90: at(0.9),
                }
            })
        })
        .collect()
}

/// The bits of `x` as an unsigned integer ordered as [`f64::total_cmp`]
/// orders the floats: negatives with every bit flipped, the others with
/// the sign bit set.
fn total_order_bits(x: f64) -> u64 {
    let bits = x.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | 1 << 63
    }
}

/// Mean and squared deviations of the values pushed, in push order.
#[derive(Default)]
struct Welford {
    k: usize,
    mean: f64,
    m2: f64,
}

impl Welford {
    fn push(&mut self, y: f64) {
        let delta = y - self.mean;
        self.mean += delta / (self.k + 1) as f64;
        self.m2 += delta * (y - self.mean);
        self.k += 1;
    }
}

/// The climatology means alone of each of `ends` (what [`climatologies`]
/// reports as `mean`, to the bit), from the forward returns `fwd`.
fn climatology_means(fwd: &[(f64, usize)], ends: &[u32]) -> Vec<Option<f64>> {
    let mut run = Welford::default();
    ends.iter()
        .map(|&t| {
            while run.k < fwd.len() && fwd[run.k].1 <= t as usize {
                run.push(fwd[run.k].0);
            }
            (run.k >= 2).then_some(run.mean)
        })
        .collect()
}

/// Counts of inserted ranks, answering "the k-th smallest inserted".
struct Fenwick {
    tree: Vec<u32>,
    top: usize,
}

impl Fenwick {
    fn new(n: usize) -> Self {
        Fenwick {
            tree: vec![0; n + 1],
            top: n.next_power_of_two(),
        }
    }

    fn add(&mut self, rank: usize) {
        let mut i = rank + 1;
        while i < self.tree.len() {
            self.tree[i] += 1;
            i += i & i.wrapping_neg();
        }
    }

    /// The rank of the `k`-th smallest inserted (from 0).
    fn kth(&self, k: usize) -> usize {
        let (mut pos, mut left) = (0usize, k as u32 + 1);
        let mut step = self.top;
        while step > 0 {
            let next = pos + step;
            if next < self.tree.len() && self.tree[next] < left {
                pos = next;
                left -= self.tree[next];
            }
            step >>= 1;
        }
        pos
    }
}

/// Sums of one month's newly known rows.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Sums {
    rows: u32,
    assets: u32,
    x: f64,
    y: f64,
    xx: f64,
    xy: f64,
    yy: f64,
}

impl Sums {
    fn add(&mut self, o: &Sums) {
        self.rows += o.rows;
        self.assets += o.assets;
        self.x += o.x;
        self.y += o.y;
        self.xx += o.xx;
        self.xy += o.xy;
        self.yy += o.yy;
    }
}

/// One asset's contribution to the pooled history at one horizon: per
/// month in which rows became known, their sums (and whether it is the
/// asset's first such month).
pub struct Contribution(Vec<(i32, Sums)>);

/// What one asset adds to the pooled history at `horizon`: each of its
/// month-end rows (the same month-ends the track record grades) with a
/// climatology and a realised return, x = the climatology's mean and y =
/// the realised return, filed under the month its realised return became
/// known.
pub fn contribution(s: &PriceSeries, horizon: u32) -> Contribution {
    let ends = crate::track_record::month_ends(s);
    let fwd = forward_returns(s, horizon);
    let means = climatology_means(&fwd, &ends);
    let mut by_month: BTreeMap<i32, Sums> = BTreeMap::new();
    for (&t, x) in ends.iter().zip(&means) {
        let (Some(x), Some(&(y, exit))) = (*x, fwd.get(t as usize)) else {
            continue;
        };
        let cell = by_month.entry(month_index(s.dates[exit])).or_default();
        cell.rows += 1;
        cell.x += x;
        cell.y += y;
        cell.xx += x * x;
        cell.xy += x * y;
        cell.yy += y * y;
    }
    if let Some(first) = by_month.values_mut().next() {
        first.assets = 1;
    }
    Contribution(by_month.into_iter().collect())
}

/// The pooled history of every asset, per (pool, horizon): cumulative sums
/// by the month rows became known. Built from price series only, so every
/// process that reads the same prices builds the same table.
#[derive(Debug, Default, Clone)]
pub struct PooledTable {
    /// Per (pool, horizon): (month, sums of every row known in that month
    /// or before), ascending by month.
    cumulative: BTreeMap<(Pool, u32), Vec<(i32, Sums)>>,
    /// Per (pool, horizon), per entry of `cumulative`: SHA-256 of the
    /// previous link, the month and the sums' bits (a chain, so a prefix
    /// of the table has one digest).
    chain: BTreeMap<(Pool, u32), Vec<[u8; 32]>>,
}

impl PooledTable {
    /// The table of `parts`: (pool, horizon, contribution) in any order;
    /// sums run in the order given, so callers pass assets by id.
    pub fn new(parts: impl IntoIterator<Item = (Pool, u32, Contribution)>) -> Self {
        let mut months: BTreeMap<(Pool, u32), BTreeMap<i32, Sums>> = BTreeMap::new();
        for (pool, horizon, Contribution(cells)) in parts {
            let table = months.entry((pool, horizon)).or_default();
            for (month, sums) in cells {
                table.entry(month).or_default().add(&sums);
            }
        }
        let cumulative = months
            .into_iter()
            .map(|(key, by_month)| {
                let mut running = Sums::default();
                let rows = by_month
                    .into_iter()
                    .map(|(month, sums)| {
                        running.add(&sums);
                        (month, running)
                    })
                    .collect();
                (key, rows)
            })
            .collect();
        let chain = Self::chain_of(&cumulative);
        PooledTable { cumulative, chain }
    }

    fn chain_of(
        cumulative: &BTreeMap<(Pool, u32), Vec<(i32, Sums)>>,
    ) -> BTreeMap<(Pool, u32), Vec<[u8; 32]>> {
        use sha2::{Digest, Sha256};
        cumulative
            .iter()
            .map(|(key, rows)| {
                let mut link = [0u8; 32];
                let links = rows
                    .iter()
                    .map(|(month, s)| {
                        let mut h = Sha256::new();
                        h.update(link);
                        h.update(month.to_le_bytes());
                        h.update(s.rows.to_le_bytes());
                        h.update(s.assets.to_le_bytes());
                        for v in [s.x, s.y, s.xx, s.xy, s.yy] {
                            h.update(v.to_bits().to_le_bytes());
                        }
                        link = h.finalize().into();
                        link
                    })
                    .collect();
                (*key, links)
            })
            .collect()
    }

    /// A digest of everything [`PooledTable::before`] answers for `pool`
    /// at every graded horizon and every day before the month of `date`:
    /// equal digests, equal answers.
    pub fn digest_before(&self, pool: Pool, date: i32) -> [u8; 32] {
        use sha2::{Digest, Sha256};
        let month = month_index(date);
        let mut h = Sha256::new();
        h.update([pool as u8]);
        for horizon in HORIZONS {
            h.update(horizon.to_le_bytes());
            let key = (pool, horizon);
            let (Some(rows), Some(links)) = (self.cumulative.get(&key), self.chain.get(&key))
            else {
                continue;
            };
            // Entries of months before `month`; `before` of a day in
            // `month` reads the last of them.
            let at = rows.partition_point(|(m, _)| *m < month);
            if let Some(link) = links[..at].last() {
                h.update(link);
            }
        }
        h.finalize().into()
    }

    /// The pooled history of `pool` at `horizon` before the month of the
    /// day `date`: every row whose realised return was known in an
    /// earlier month.
    pub fn before(&self, pool: Pool, horizon: u32, date: i32) -> Option<Pooled> {
        let rows = self.cumulative.get(&(pool, horizon))?;
        let month = month_index(date);
        let at = rows.partition_point(|(m, _)| *m < month);
        let s = rows[..at].last()?.1;
        Some(Pooled {
            rows: s.rows,
            assets: s.assets,
            sum_x: s.x,
            sum_y: s.y,
            sum_xx: s.xx,
            sum_xy: s.xy,
            sum_yy: s.yy,
        })
    }

    /// Approximate bytes held.
    pub fn bytes(&self) -> usize {
        self.cumulative
            .values()
            .map(|v| v.len() * (std::mem::size_of::<(i32, Sums)>() + 32))
            .sum()
    }
}

/// The points of one asset's history at `horizon` for the scorer: the row
/// indices `ends` of `s` (ascending), with the current bucket's median
/// forward return and independent episodes at each, as the engine reported
/// them.
pub fn points(
    s: &PriceSeries,
    horizon: u32,
    ends: &[u32],
    medians: &[f64],
    episodes: &[u32],
    pooled: Option<(&PooledTable, Pool)>,
) -> Vec<Point> {
    SeriesFacts::of(s, horizon, ends.to_vec()).points(medians, episodes, pooled)
}

/// What a series says at some row indices for one horizon, whatever the
/// engine's parameters: each index's date, climatology and realised
/// return with the day it became known. A live verdict keeps it per
/// asset's data and window, so changing only the segmentation asks the
/// series nothing again.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesFacts {
    horizon: u32,
    /// The row indices, ascending.
    pub ends: Vec<u32>,
    dates: Vec<i32>,
    climates: Vec<Option<Climatology>>,
    /// Realised return and the day it became known.
    realised: Vec<Option<(f64, i32)>>,
}

impl SeriesFacts {
    /// The facts of `s` at `ends` (ascending row indices) and `horizon`.
    pub fn of(s: &PriceSeries, horizon: u32, ends: Vec<u32>) -> Self {
        let fwd = forward_returns(s, horizon);
        let climates = climatologies_of(s, &fwd, horizon, &ends);
        let at = |t: u32| fwd.get(t as usize).map(|r| (r.0, s.dates[r.1]));
        SeriesFacts {
            horizon,
            dates: ends.iter().map(|&t| s.dates[t as usize]).collect(),
            realised: ends.iter().map(|&t| at(t)).collect(),
            climates,
            ends,
        }
    }

    /// The horizon the facts are of.
    pub fn horizon(&self) -> u32 {
        self.horizon
    }

    /// Heap bytes held.
    pub fn bytes(&self) -> usize {
        self.ends.len()
            * (std::mem::size_of::<u32>()
                + std::mem::size_of::<i32>()
                + std::mem::size_of::<Option<Climatology>>()
                + std::mem::size_of::<Option<(f64, i32)>>())
    }

    /// The scorer's points at the facts' row indices: the engine's medians
    /// and episodes there (one per index) and the pooled history before
    /// each date.
    pub fn points(
        &self,
        medians: &[f64],
        episodes: &[u32],
        pooled: Option<(&PooledTable, Pool)>,
    ) -> Vec<Point> {
        let horizon = self.horizon;
        self.dates
            .iter()
            .zip(self.climates.iter().zip(&self.realised))
            .zip(medians.iter().zip(episodes))
            .map(
                |((&date, (&climatology, &realised)), (&median_return, &episodes))| Point {
                    date,
                    median_return,
                    episodes,
                    climatology,
                    pooled: pooled.and_then(|(table, pool)| table.before(pool, horizon, date)),
                    realised: realised.map(|r| r.0),
                    known: realised.map_or(i32::MAX, |r| r.1),
                },
            )
            .collect()
    }
}

/// A window of an asset's prices as [`FactsCache`] knows it: the asset,
/// its data version, the window's first and last dates, length and last
/// close (a correction inside the window moves the data version), and the
/// horizon.
pub type FactsKey = (i64, i64, i32, i32, usize, u64, u32);

/// Bytes of [`SeriesFacts`] live verdicts keep at most: about 300 of the
/// longest histories (every month-end of 65 years), a few thousand of the
/// demo universe's.
const FACTS_BYTES: u64 = 16 << 20;

/// The [`SeriesFacts`] of the windows live verdicts asked about, by
/// [`FactsKey`], least recently used first out, bounded in bytes; an
/// ingest gives the asset a new data version and so a new key.
#[derive(Clone)]
pub struct FactsCache(moka::sync::Cache<FactsKey, Arc<SeriesFacts>>);

impl Default for FactsCache {
    fn default() -> Self {
        FactsCache(
            moka::sync::Cache::builder()
                .max_capacity(FACTS_BYTES)
                .weigher(|_: &FactsKey, f: &Arc<SeriesFacts>| {
                    u32::try_from(f.bytes()).unwrap_or(u32::MAX)
                })
                .eviction_policy(moka::policy::EvictionPolicy::lru())
                .build(),
        )
    }
}

impl FactsCache {
    /// The facts of `window` (of asset `asset` at `data_version`) at its
    /// month-ends and last row for `horizon`: kept, or worked out and kept.
    pub fn month_ends(
        &self,
        asset: i64,
        data_version: i64,
        window: &PriceSeries,
        horizon: u32,
    ) -> Arc<SeriesFacts> {
        let (Some(&first), Some(&last), Some(close)) = (
            window.dates.first(),
            window.dates.last(),
            window.closes.last(),
        ) else {
            return Arc::new(SeriesFacts::of(window, horizon, Vec::new()));
        };
        let key = (
            asset,
            data_version,
            first,
            last,
            window.len(),
            close.to_bits(),
            horizon,
        );
        self.0.get_with(key, || {
            let mut ends = crate::track_record::month_ends(window);
            ends.push(window.len() as u32 - 1);
            Arc::new(SeriesFacts::of(window, horizon, ends))
        })
    }
}

/// Builds the pooled table of every active asset in `assets` (by id, so
/// the sums run in one order everywhere) at the graded horizons.
pub async fn build_table(
    assets: &dyn forecast_store::AssetStore,
) -> Result<PooledTable, crate::error::Error> {
    let mut list = assets.list_active_assets(None).await?;
    list.sort_by_key(|a| a.id);
    // Each asset's contributions on a blocking thread, one per core at a
    // time, while the next series loads; taken in id order, so the sums
    // run in the same order as one by one.
    let at_once = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut running = std::collections::VecDeque::new();
    let mut parts = Vec::new();
    for a in list {
        let Some(series) = assets.load_series(a.id).await? else {
            continue;
        };
        let pool = Pool::of(a.data_source);
        running.push_back(tokio::task::spawn_blocking(move || {
            HORIZONS
                .into_iter()
                .map(|h| (pool, h, contribution(&series, h)))
                .collect::<Vec<_>>()
        }));
        if running.len() >= at_once {
            if let Some(task) = running.pop_front() {
                parts.extend(contributed(task).await?);
            }
        }
    }
    while let Some(task) = running.pop_front() {
        parts.extend(contributed(task).await?);
    }
    Ok(PooledTable::new(parts))
}

/// The cells of one asset's contribution task.
async fn contributed(
    task: tokio::task::JoinHandle<Vec<(Pool, u32, Contribution)>>,
) -> Result<Vec<(Pool, u32, Contribution)>, crate::error::Error> {
    task.await
        .map_err(|e| crate::error::Error::Internal(format!("pooled history failed: {e}")))
}

/// The horizons the pooled table covers: the graded ones. A verdict at
/// another horizon gets the climatology method.
pub const HORIZONS: [u32; 5] = crate::analysis::CACHED_RETURN_PERIODS;

/// The pooled table of the store's current assets for live verdicts and
/// grade histories, built once per change of the assets' generation
/// counter (a new price or asset). The first build is waited for; after a
/// change the previous table keeps serving while one rebuild runs in the
/// background (an ingest moves the pooled sums of past months little, and
/// no request should wait seconds for them).
#[derive(Default)]
pub struct PooledCache {
    state: std::sync::Arc<tokio::sync::Mutex<CacheState>>,
}

#[derive(Default)]
struct CacheState {
    /// The table and the generation it was built under (`None`: unknown).
    table: Option<(Option<i64>, std::sync::Arc<PooledTable>)>,
    /// Whether a background rebuild is running.
    rebuilding: bool,
}

async fn timed_build(
    assets: &dyn forecast_store::AssetStore,
) -> Result<std::sync::Arc<PooledTable>, crate::error::Error> {
    let started = std::time::Instant::now();
    let table = std::sync::Arc::new(build_table(assets).await?);
    tracing::info!(
        seconds = started.elapsed().as_secs_f64(),
        bytes = table.bytes(),
        "pooled history built"
    );
    Ok(table)
}

impl PooledCache {
    /// The table for `generation` (the store's `assets` counter; `None`
    /// when it could not be read).
    pub async fn get(
        &self,
        assets: std::sync::Arc<dyn forecast_store::AssetStore>,
        generation: Option<i64>,
    ) -> Result<std::sync::Arc<PooledTable>, crate::error::Error> {
        let mut held = self.state.lock().await;
        let Some((at, table)) = held.table.clone() else {
            let table = timed_build(assets.as_ref()).await?;
            held.table = Some((generation, table.clone()));
            return Ok(table);
        };
        let stale = generation.is_some() && at != generation;
        if stale && !held.rebuilding {
            held.rebuilding = true;
            let state = self.state.clone();
            tokio::spawn(async move {
                let built = timed_build(assets.as_ref()).await;
                let mut held = state.lock().await;
                held.rebuilding = false;
                match built {
                    Ok(table) => held.table = Some((generation, table)),
                    Err(e) => tracing::warn!(error = %e, "rebuilding the pooled history failed"),
                }
            });
        }
        Ok(table)
    }
}

/// Per graded horizon, the scorer's answers and the points they answer.
pub type ByHorizon = Vec<(
    u32,
    Vec<Point>,
    Vec<forecast_plugins::scorer::GradedForecast>,
)>;

/// The forecast inputs of one return-metric set at a list of row indices:
/// the current bucket's median forward return and its independent
/// episodes at each, as the engine reported them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SetInputs {
    /// Medians, one per row index.
    pub medians: Vec<f64>,
    /// Episodes, one per row index.
    pub episodes: Vec<u32>,
}

/// Forecast inputs of earlier month-ends (a grading run's carry):
/// their row indices and, per return-metric set in query order, the inputs
/// at them.
#[derive(Debug, Clone, Copy)]
pub struct Prior<'a> {
    /// Row indices, ascending, all before the new ones.
    pub ends: &'a [u32],
    /// Per return-metric set.
    pub sets: &'a [SetInputs],
}

/// The forecasts of every horizon of `queries` at the row indices `ends`
/// of `s`, from the return-metric walks among `walks` (one per query, one
/// state per end): one `episodes-at` call for those sets, one scorer call
/// per horizon (its points from `facts` when they are of that horizon and
/// these ends). Empty when the scorer makes no forecasts or the engine
/// reports no episodes.
#[allow(clippy::too_many_arguments)]
pub fn by_horizon(
    permit: &forecast_plugins::Permit,
    session: &mut forecast_plugins::SegmentationSession,
    scorer: &forecast_plugins::ScorerPlugin,
    s: &PriceSeries,
    queries: &[crate::analysis::AnalysisQuery],
    params: &[forecast_plugins::segmentation::AnalysisParams],
    walks: &[Vec<forecast_plugins::segmentation::StateAt>],
    ends: &[u32],
    pooled: Option<(&PooledTable, Pool)>,
    facts: Option<&SeriesFacts>,
) -> Result<ByHorizon, String> {
    let none = Prior {
        ends: &[],
        sets: &[],
    };
    let at = Known {
        prior: none,
        last: None,
        facts,
    };
    by_horizon_after(
        permit, session, scorer, s, queries, params, walks, ends, at, pooled,
    )
    .map(|(by, _)| by)
}

/// What is known before the engine is asked for episodes: the carried
/// inputs of earlier month-ends, and the episodes at the last of the new
/// row indices per return set (today's evidence reports them), if known.
#[derive(Debug, Clone, Copy)]
pub struct Known<'a> {
    /// Earlier month-ends' inputs.
    pub prior: Prior<'a>,
    /// Per return-metric set, the episodes at the last row index.
    pub last: Option<&'a [u32]>,
    /// The series' facts at every row index (earlier and new) for one
    /// horizon, when already known; a set of another horizon, or facts at
    /// other indices, are worked out from the series.
    pub facts: Option<&'a SeriesFacts>,
}

/// [`by_horizon`] at `known.prior.ends` followed by `ends`, the engine
/// asked only about `ends` (the walks hold states at `ends` only; its
/// episodes only where `known.last` does not give them): the scorer
/// forecasts every point, the earlier ones from the carried inputs. Also
/// each return set's inputs at all those row indices.
#[allow(clippy::too_many_arguments)]
pub fn by_horizon_after(
    permit: &forecast_plugins::Permit,
    session: &mut forecast_plugins::SegmentationSession,
    scorer: &forecast_plugins::ScorerPlugin,
    s: &PriceSeries,
    queries: &[crate::analysis::AnalysisQuery],
    params: &[forecast_plugins::segmentation::AnalysisParams],
    walks: &[Vec<forecast_plugins::segmentation::StateAt>],
    ends: &[u32],
    known: Known<'_>,
    pooled: Option<(&PooledTable, Pool)>,
) -> Result<(ByHorizon, Vec<SetInputs>), String> {
    let prior = known.prior;
    if !scorer.has_forecasting() || !session.plugin().has_episodes() || ends.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let sets: Vec<usize> = (0..queries.len())
        .filter(|&i| queries[i].metric == forecast_domain::Metric::Return)
        .collect();
    let set_params: Vec<_> = sets.iter().map(|&i| params[i]).collect();
    let episodes = episodes_at(permit, session, s, &set_params, ends, known.last)?;
    if episodes.len() != sets.len() || !(prior.sets.is_empty() || prior.sets.len() == sets.len()) {
        return Err(format!(
            "{} episode lists and {} carried for {} sets",
            episodes.len(),
            prior.sets.len(),
            sets.len()
        ));
    }
    let all_ends: Vec<u32> = prior.ends.iter().chain(ends).copied().collect();
    let mut out = Vec::with_capacity(sets.len());
    let mut inputs = Vec::with_capacity(sets.len());
    for (n, (&i, eps)) in sets.iter().zip(episodes).enumerate() {
        let walk = &walks[i];
        if eps.len() != ends.len() || walk.len() != ends.len() {
            return Err(format!(
                "{} episodes, {} states for {} ends",
                eps.len(),
                walk.len(),
                ends.len()
            ));
        }
        let mut set = prior.sets.get(n).cloned().unwrap_or_default();
        set.medians
            .extend(walk.iter().map(|st| st.current.median_return));
        set.episodes.extend(eps);
        if set.medians.len() != all_ends.len() || set.episodes.len() != all_ends.len() {
            return Err(format!(
                "{} carried inputs for {} earlier ends",
                set.medians.len() - ends.len(),
                prior.ends.len()
            ));
        }
        let horizon = queries[i].return_period;
        let pts = match known.facts {
            Some(f) if f.horizon() == horizon && f.ends == all_ends => {
                f.points(&set.medians, &set.episodes, pooled)
            }
            _ => points(s, horizon, &all_ends, &set.medians, &set.episodes, pooled),
        };
        let graded = scorer
            .forecast(permit, horizon, &pts)
            .map_err(|e| e.to_string())?;
        if graded.len() != pts.len() {
            return Err(format!(
                "{} forecasts for {} points",
                graded.len(),
                pts.len()
            ));
        }
        out.push((horizon, pts, graded));
        inputs.push(set);
    }
    Ok((out, inputs))
}

/// Per set of `params`, its episodes at each of `ends`: from the engine,
/// but at the last row index from `last` when given (one per set), so the
/// engine is asked only about the others (not at all for one row index).
fn episodes_at(
    permit: &forecast_plugins::Permit,
    session: &mut forecast_plugins::SegmentationSession,
    s: &PriceSeries,
    params: &[forecast_plugins::segmentation::AnalysisParams],
    ends: &[u32],
    last: Option<&[u32]>,
) -> Result<Vec<Vec<u32>>, String> {
    let asked = match last {
        Some(last) if last.len() == params.len() => &ends[..ends.len() - 1],
        _ => ends,
    };
    let mut out: Vec<Vec<u32>> = match asked.is_empty() {
        true => vec![Vec::new(); params.len()],
        false => session
            .episodes_at(permit, s, params, asked)
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|r| r.map_err(|e| format!("episodes: {e:?}")))
            .collect::<Result<_, _>>()?,
    };
    if asked.len() < ends.len() {
        for (set, &n) in out.iter_mut().zip(last.unwrap_or_default()) {
            set.push(n);
        }
    }
    Ok(out)
}

/// The wire form of a graded point's forecast.
pub fn body(
    horizon: u32,
    g: &forecast_plugins::scorer::GradedForecast,
) -> Option<forecast_api::analysis::ForecastBody> {
    g.forecast
        .as_ref()
        .map(|f| forecast_api::analysis::ForecastBody {
            return_period: horizon,
            central: f.central,
            p10: f.p10,
            p90: f.p90,
            central_se: f.central_se,
            reference: f.reference,
            method: f.method.clone(),
            thin: g.thin,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use forecast_domain::series::to_days;

    fn series(n: usize) -> PriceSeries {
        let start = to_days("2001-01-01".parse().unwrap());
        PriceSeries {
            dates: (0..n as i32).map(|i| start + i).collect(),
            closes: (0..n)
                .map(|i| 100.0 * (1.0 + 0.3 * ((i as f64) * 0.05).sin()) * 1.0003f64.powi(i as i32))
                .collect(),
        }
    }

    /// numpy's default percentile (linear interpolation).
    fn percentile(v: &mut [f64], q: f64) -> f64 {
        v.sort_by(f64::total_cmp);
        let pos = q * (v.len() - 1) as f64;
        let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
        v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
    }

    #[test]
    fn total_order_bits_order_as_total_cmp() {
        let xs = [
            f64::NEG_INFINITY,
            -1e300,
            -2.5,
            -f64::MIN_POSITIVE,
            -0.0,
            0.0,
            f64::MIN_POSITIVE,
            1e-300,
            0.1,
            2.5,
            f64::INFINITY,
            f64::NAN,
            -f64::NAN,
        ];
        for a in xs {
            for b in xs {
                assert_eq!(
                    total_order_bits(a).cmp(&total_order_bits(b)),
                    a.total_cmp(&b),
                    "{a} {b}"
                );
            }
        }
    }

    #[test]
    fn climatology_is_the_forward_returns_known_by_the_end() {
        let s = series(900);
        let ends: Vec<u32> = vec![5, 30, 31, 400, 899];
        let got = climatologies(&s, 30, &ends);
        assert!(
            got[0].is_none() && got[1].is_none(),
            "nothing ended before day 31"
        );
        for (&t, c) in ends.iter().zip(&got).skip(2) {
            let mut ys: Vec<f64> = (0..t as usize)
                .filter(|&i| i + 30 <= t as usize)
                .map(|i| s.closes[i + 30] / s.closes[i] - 1.0)
                .collect();
            let c = c.as_ref().unwrap();
            assert_eq!(c.count as usize, ys.len());
            let mean = ys.iter().sum::<f64>() / ys.len() as f64;
            assert!((c.mean - mean).abs() < 1e-12);
            let var = ys.iter().map(|y| (y - mean).powi(2)).sum::<f64>() / ys.len() as f64;
            assert!((c.sd - var.sqrt()).abs() < 1e-12);
            assert_eq!(c.p10, percentile(&mut ys, 0.1));
            assert_eq!(c.p90, percentile(&mut ys, 0.9));
            assert_eq!(c.horizons, (ys.len() - 1) as f64 / 30.0 + 1.0);
        }
    }

    #[test]
    fn the_pooled_means_are_the_climatologies_means_to_the_bit() {
        let s = series(1500);
        let ends = crate::track_record::month_ends(&s);
        for h in [7, 90, 365] {
            let full = climatologies(&s, h, &ends);
            let means = climatology_means(&forward_returns(&s, h), &ends);
            for (c, m) in full.iter().zip(&means) {
                assert_eq!(c.as_ref().map(|c| c.mean.to_bits()), m.map(f64::to_bits));
            }
        }
    }

    #[test]
    fn pooled_history_counts_only_rows_known_in_earlier_months() {
        let (a, b) = (series(1200), series(800));
        let table = PooledTable::new([
            (Pool::Observed, 90, contribution(&a, 90)),
            (Pool::Observed, 90, contribution(&b, 90)),
            (Pool::Synthetic, 90, contribution(&a, 90)),
        ]);
        let at = |date: &str| table.before(Pool::Observed, 90, to_days(date.parse().unwrap()));
        // The first month-end with 300 rows is in late October 2001; its
        // 90-day outcome is known in late January 2002.
        assert!(at("2002-01-31").is_none());
        let feb = at("2002-02-01").unwrap();
        assert_eq!((feb.rows, feb.assets), (2, 2));
        let later = at("2004-06-15").unwrap();
        assert!(later.rows > feb.rows && later.assets == 2);
        // Within one month the answer does not move.
        assert_eq!(at("2004-06-01"), at("2004-06-30"));
        assert!(table
            .before(Pool::Synthetic, 30, to_days("2004-06-15".parse().unwrap()))
            .is_none());
        let syn = table
            .before(Pool::Synthetic, 90, to_days("2004-06-15".parse().unwrap()))
            .unwrap();
        assert_eq!(syn.assets, 1);
    }

    #[test]
    fn a_window_s_facts_are_kept_per_data_version_and_window() {
        let s = series(700);
        let cache = FactsCache::default();
        let a = cache.month_ends(1, 1, &s, 30);
        let mut ends = crate::track_record::month_ends(&s);
        ends.push(699);
        assert_eq!(*a, SeriesFacts::of(&s, 30, ends.clone()));
        assert_eq!(a.ends, ends);
        assert!(Arc::ptr_eq(&a, &cache.month_ends(1, 1, &s, 30)), "kept");
        // A new data version, another horizon or another window is asked of
        // the series again.
        let b = cache.month_ends(1, 2, &s, 30);
        assert!(!Arc::ptr_eq(&a, &b));
        assert_eq!(*a, *b);
        assert_eq!(cache.month_ends(1, 1, &s, 90).horizon(), 90);
        let cut = s.clone().first_rows(650);
        assert_eq!(cache.month_ends(1, 1, &cut, 30).ends.last(), Some(&649));
        let mut moved = s.clone();
        *moved.closes.last_mut().unwrap() *= 1.01;
        let c = cache.month_ends(1, 1, &moved, 30);
        assert_ne!(
            c.points(&[0.0; 64], &[0; 64], None),
            a.points(&[0.0; 64], &[0; 64], None)
        );
    }

    #[test]
    fn facts_give_the_points_worked_out_from_the_series() {
        let s = series(900);
        let ends = [400u32, 500, 899];
        let facts = SeriesFacts::of(&s, 90, ends.to_vec());
        let direct: Vec<Point> = ends
            .iter()
            .zip(climatologies(&s, 90, &ends))
            .map(|(&t, climatology)| Point {
                date: s.dates[t as usize],
                median_return: 0.01,
                episodes: 3,
                climatology,
                pooled: None,
                realised: realised_at(&s, t, 90).map(|r| r.0),
                known: realised_at(&s, t, 90).map_or(i32::MAX, |r| r.1),
            })
            .collect();
        assert_eq!(facts.points(&[0.01; 3], &[3; 3], None), direct);
        assert!(facts.bytes() >= 3 * std::mem::size_of::<Option<Climatology>>());
    }

    /// The realised return at row `t` and the date it became known, by a
    /// direct search.
    fn realised_at(s: &PriceSeries, t: u32, horizon: u32) -> Option<(f64, i32)> {
        let t = t as usize;
        let j = (t..s.len()).find(|&j| s.dates[j] >= s.dates[t] + horizon as i32)?;
        Some((s.closes[j] / s.closes[t] - 1.0, s.dates[j]))
    }

    #[test]
    fn points_carry_realised_returns_and_the_day_they_became_known() {
        let s = series(700);
        let ends = [400u32, 699];
        let p = points(&s, 30, &ends, &[0.01, 0.02], &[3, 4], None);
        assert_eq!(p[0].realised, Some(s.closes[430] / s.closes[400] - 1.0));
        assert_eq!(p[0].known, s.dates[430]);
        assert_eq!((p[1].realised, p[1].known), (None, i32::MAX));
        assert_eq!((p[1].median_return, p[1].episodes), (0.02, 4));
    }
}
