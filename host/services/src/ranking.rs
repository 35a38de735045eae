//! The ranking (spec: `GET /api/ranking`, DESIGN §5): the active grading
//! snapshot for one period and metric, filtered (category, text, age),
//! sorted (ties by ticker) and cut to one page (`offset`, `limit`).
//!
//! The snapshot is read from the store once per change of the grading or
//! assets generation ([`crate::freshness`]) and kept in memory as compact
//! rows, each with its `forecast` parsed once; the order of each
//! (`sort_by`, `order`) is computed once per table. A request filters the
//! rows in that order and clones one page (issue 41).

use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use chrono::{DateTime, NaiveDate};
use forecast_api::assets::DataSources;
use forecast_api::ranking::{
    DateRange, RankedAsset, RankingMetadata, RankingQuery, RankingResponse, Screen, SortKey,
    SortOrder,
};
use forecast_domain::{Metric, SharedClock};
use forecast_store::{Generations, GradingRun, GradingStore, RankedRow};
use tokio::sync::OnceCell;

use crate::error::Error;
use crate::freshness::Freshness;

/// Ranks the active grading snapshot.
#[derive(Clone)]
pub struct RankingService {
    /// What "today" is for the answers' ages.
    clock: SharedClock,
    db: Arc<dyn GradingStore>,
    freshness: Freshness,
    memory: Arc<Mutex<Option<Arc<Snapshot>>>>,
}

/// The active run and its ranking tables, read under one pair of
/// (grading, assets) generations.
struct Snapshot {
    generations: (i64, i64),
    run: OnceCell<Option<Arc<GradingRun>>>,
    tables: Mutex<HashMap<(u32, Metric), TableCell>>,
}

/// A table, filled by the first request that needs it.
type TableCell = Arc<OnceCell<Arc<Table>>>;

/// Row positions in the order of one (`sort_by`, `order`).
type Orders = HashMap<(SortKey, SortOrder), Arc<[u32]>>;

/// One (return period, metric) of a run: its rows, their orders, and the
/// JSON pages served from it.
pub(crate) struct Table {
    rows: Vec<Row>,
    orders: Mutex<Orders>,
    /// Served bodies by query and day (the age filter counts from today),
    /// [`PAGE_BYTES`] of them at most.
    pages: moka::sync::Cache<(RankingQuery, NaiveDate), Bytes>,
}

/// Bytes of served pages kept per table at most (a snapshot has at most
/// one table per graded period and metric).
const PAGE_BYTES: u64 = 8 << 20;

/// A ranked asset as served (rank 0 until a page numbers it), with what
/// the text filter compares against.
struct Row {
    asset: RankedAsset,
    ticker_lower: String,
    name_lower: String,
}

impl From<RankedRow> for Row {
    fn from(r: RankedRow) -> Self {
        let (forecast, episodes) = graded_figures(&r.grade.body);
        Row {
            ticker_lower: r.ticker.to_lowercase(),
            name_lower: r.name.to_lowercase(),
            asset: RankedAsset {
                rank: 0,
                forecast,
                episodes,
                ticker: r.ticker,
                name: r.name,
                category: r.category,
                expected_return: r.grade.expected_return,
                prediction_error: r.grade.prediction_error,
                current_drawdown: r.grade.current_drawdown,
                current_price: r.grade.current_price,
                win_rate: r.grade.win_rate,
                median_return: r.grade.median_return,
                median_error: r.grade.median_error,
                score: r.grade.score,
                grade: r.grade.letter,
                data_source: r.data_source,
                last_price_date: r.last_price_date,
                currency: r.currency,
            },
        }
    }
}

/// Compares two texts case-insensitively (by their lower-case characters),
/// without allocating.
fn caseless(a: &str, b: &str) -> Ordering {
    a.chars()
        .flat_map(char::to_lowercase)
        .cmp(b.chars().flat_map(char::to_lowercase))
}

/// `a` against `b` by `sort_by`, ascending.
fn by_key(a: &RankedAsset, b: &RankedAsset, sort_by: SortKey) -> Ordering {
    let number = |f: fn(&RankedAsset) -> f64| f(a).total_cmp(&f(b));
    match sort_by {
        SortKey::MedianReturn => number(|g| g.median_return),
        SortKey::ExpectedReturn => number(|g| g.expected_return),
        SortKey::WinRate => number(|g| g.win_rate),
        SortKey::PredictionError => number(|g| g.prediction_error),
        SortKey::CurrentDrawdown => number(|g| g.current_drawdown),
        SortKey::CurrentPrice => number(|g| g.current_price),
        SortKey::Score => number(|g| g.score),
        SortKey::Ticker => caseless(&a.ticker, &b.ticker),
        SortKey::Name => caseless(&a.name, &b.name),
        SortKey::Category => caseless(a.category.as_str(), b.category.as_str()),
        SortKey::LastPriceDate => a.last_price_date.cmp(&b.last_price_date),
    }
}

/// The `forecast` of a stored verdict body (any other field is skipped
/// unparsed).
pub fn forecast_of(body: &str) -> Option<forecast_api::analysis::ForecastBody> {
    graded_figures(body).0
}

/// The `forecast` and `current_state.evidence.episodes` of a stored
/// verdict body, in one parse (any other field is skipped unparsed).
fn graded_figures(body: &str) -> (Option<forecast_api::analysis::ForecastBody>, Option<u32>) {
    #[derive(serde::Deserialize)]
    struct Only {
        forecast: Option<forecast_api::analysis::ForecastBody>,
        current_state: Option<State>,
    }
    #[derive(serde::Deserialize)]
    struct State {
        evidence: Option<Evidence>,
    }
    #[derive(serde::Deserialize)]
    struct Evidence {
        episodes: u32,
    }
    match serde_json::from_str::<Only>(body) {
        Ok(o) => (
            o.forecast,
            o.current_state.and_then(|s| s.evidence).map(|e| e.episodes),
        ),
        Err(_) => (None, None),
    }
}

/// Whether the ranked asset passes every filter of the screener.
fn screened(a: &RankedAsset, s: &Screen) -> bool {
    s.sources
        .as_ref()
        .is_none_or(|v| v.contains(&a.data_source))
        && s.grades.as_ref().is_none_or(|v| v.contains(&a.grade))
        && s.score.holds(a.score)
        && s.current_drawdown.holds(a.current_drawdown)
        && s.median_return.holds(a.median_return)
        && s.expected_return.holds(a.expected_return)
        && s.win_rate.holds(a.win_rate)
        && s.min_episodes
            .is_none_or(|m| m == 0 || a.episodes.is_some_and(|e| e >= m))
        && s.currency.as_ref().is_none_or(|c| *c == a.currency)
}

/// Whether the row's ticker or name contains `text` (lower-cased).
fn matches(row: &Row, text: &str) -> bool {
    row.ticker_lower.contains(text) || row.name_lower.contains(text)
}

/// `a` before `b` by the key in `order`, ties by ticker ascending (byte
/// order).
fn ranked(a: &RankedAsset, b: &RankedAsset, sort_by: SortKey, order: SortOrder) -> Ordering {
    let by_key = by_key(a, b, sort_by);
    let by_key = match order {
        SortOrder::Desc => by_key.reverse(),
        SortOrder::Asc => by_key,
    };
    by_key.then_with(|| a.ticker.cmp(&b.ticker))
}

impl Table {
    fn new(rows: Vec<RankedRow>) -> Self {
        Table {
            rows: rows.into_iter().map(Row::from).collect(),
            orders: Mutex::default(),
            pages: moka::sync::Cache::builder()
                .max_capacity(PAGE_BYTES)
                .weigher(|_, body: &Bytes| u32::try_from(body.len()).unwrap_or(u32::MAX))
                .build(),
        }
    }

    /// The rows' positions sorted by `sort_by` in `order`, computed once.
    fn order(&self, sort_by: SortKey, order: SortOrder) -> Arc<[u32]> {
        let key = (sort_by, order);
        if let Some(o) = lock(&self.orders).get(&key) {
            return o.clone();
        }
        let mut positions: Vec<u32> = (0..self.rows.len() as u32).collect();
        positions.sort_by(|&a, &b| {
            ranked(
                &self.rows[a as usize].asset,
                &self.rows[b as usize].asset,
                sort_by,
                order,
            )
        });
        let positions: Arc<[u32]> = positions.into();
        lock(&self.orders).insert(key, positions.clone());
        positions
    }

    /// The page `q` asks for, and the metadata of the filtered rows.
    fn answer(&self, run: &GradingRun, q: &RankingQuery, today: NaiveDate) -> RankingResponse {
        let oldest = q
            .max_age_days
            .map(|days| today - chrono::Days::new(u64::from(days)));
        let mut stale_excluded = 0;
        let mut sources = Vec::new();
        let mut dates: Option<(NaiveDate, NaiveDate)> = None;
        let mut page = Vec::with_capacity(q.limit.min(self.rows.len()));
        let mut filtered = 0usize;
        for &i in self.order(q.sort_by, q.order).iter() {
            let row = &self.rows[i as usize];
            let a = &row.asset;
            if q.categories
                .as_ref()
                .is_some_and(|c| !c.contains(&a.category))
                || q.text.as_ref().is_some_and(|t| !matches(row, t))
                || !screened(a, &q.screen)
            {
                continue;
            }
            if oldest.is_some_and(|o| a.last_price_date < o) {
                stale_excluded += 1;
                continue;
            }
            sources.push(a.data_source);
            let d = a.last_price_date;
            dates = Some(dates.map_or((d, d), |(lo, hi)| (lo.min(d), hi.max(d))));
            if filtered >= q.offset && page.len() < q.limit {
                page.push(RankedAsset {
                    rank: filtered + 1,
                    ..a.clone()
                });
            }
            filtered += 1;
        }
        let label_version = |label: &str| label.rsplit('@').next().unwrap_or(label).to_string();
        RankingResponse {
            ranked_assets: page,
            metadata: RankingMetadata {
                total_assets: self.rows.len(),
                filtered_assets: filtered,
                offset: q.offset,
                data_sources: DataSources::count(sources),
                stale_excluded,
                last_price_dates: dates.map(|(oldest, newest)| DateRange { oldest, newest }),
                calculated_at: DateTime::from_timestamp(
                    run.finished_at.unwrap_or(run.started_at),
                    0,
                )
                .unwrap_or_default(),
                return_period: q.return_period,
                metric: q.metric,
                sort_by: q.sort_by,
                sort: q.order,
                engine_version: label_version(&run.engine),
                scorer_version: label_version(&run.scorer),
            },
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl RankingService {
    /// A service over `db`'s grading snapshot, kept in memory while the
    /// counters `freshness` reads have not moved.
    pub fn new(db: Arc<dyn GradingStore>, freshness: Freshness, clock: SharedClock) -> Self {
        RankingService {
            clock,
            db,
            freshness,
            memory: Arc::default(),
        }
    }

    /// The ranking for `q`. `generations` are the store's counters read
    /// after the request arrived (the Bearer guard's); without them they
    /// are read here, and when they cannot be read the snapshot is read
    /// from the store for this request alone.
    pub async fn rank(
        &self,
        q: &RankingQuery,
        generations: Option<Generations>,
    ) -> Result<RankingResponse, Error> {
        let (run, table) = self.table(q, generations).await?;
        Ok(table.answer(&run, q, self.clock.today()))
    }

    /// [`Self::rank`] as the JSON body it is served as: serialised once
    /// per query and day while the snapshot lasts.
    pub async fn rank_json(
        &self,
        q: &RankingQuery,
        generations: Option<Generations>,
    ) -> Result<Bytes, Error> {
        let (run, table) = self.table(q, generations).await?;
        let today = self.clock.today();
        let key = (q.clone(), today);
        if let Some(body) = table.pages.get(&key) {
            return Ok(body);
        }
        let body = serde_json::to_vec(&table.answer(&run, q, today))
            .map_err(|e| Error::Internal(format!("the ranking does not serialise: {e}")))?;
        let body = Bytes::from(body);
        table.pages.insert(key, body.clone());
        Ok(body)
    }

    /// The graded rows of `tickers` in their order (`None` for one the
    /// run did not grade) for `q`'s period and metric: the watchlist's
    /// table, read from the same snapshot as the ranking.
    pub async fn rows_for(
        &self,
        tickers: &[String],
        q: &RankingQuery,
        generations: Option<Generations>,
    ) -> Result<Vec<Option<RankedAsset>>, Error> {
        let (_, table) = self.table(q, generations).await?;
        Ok(tickers
            .iter()
            .map(|t| {
                let row = table.rows.iter().find(|r| r.asset.ticker == *t)?;
                Some(row.asset.clone())
            })
            .collect())
    }

    /// The active run and the table of `q`'s period and metric: from the
    /// snapshot of `generations` (read now when `None`), or, when the
    /// counters cannot be read, from the store for this request alone.
    async fn table(
        &self,
        q: &RankingQuery,
        generations: Option<Generations>,
    ) -> Result<(Arc<GradingRun>, Arc<Table>), Error> {
        let generations = match generations {
            Some(g) => Some(g),
            None => self.freshness.current().await,
        };
        let Some(g) = generations else {
            let run = self.db.active_grading_run().await?.ok_or_else(no_run)?;
            let rows = self
                .db
                .ranking_rows(&run.id, q.return_period, q.metric)
                .await?;
            return Ok((Arc::new(run), Arc::new(Table::new(rows))));
        };
        let snapshot = self.snapshot((g.grading, g.assets));
        let run = snapshot
            .run
            .get_or_try_init(|| async {
                Ok::<_, Error>(self.db.active_grading_run().await?.map(Arc::new))
            })
            .await?
            .clone()
            .ok_or_else(no_run)?;
        let cell = lock(&snapshot.tables)
            .entry((q.return_period, q.metric))
            .or_default()
            .clone();
        crate::cache_lookup("ranking", cell.initialized());
        let table = cell
            .get_or_try_init(|| async {
                let rows = self
                    .db
                    .ranking_rows(&run.id, q.return_period, q.metric)
                    .await?;
                Ok::<_, Error>(Arc::new(Table::new(rows)))
            })
            .await?
            .clone();
        Ok((run, table))
    }

    /// The snapshot of `generations`, a new empty one when they moved.
    fn snapshot(&self, generations: (i64, i64)) -> Arc<Snapshot> {
        let mut memory = lock(&self.memory);
        match memory.as_ref() {
            Some(s) if s.generations == generations => s.clone(),
            _ => {
                let s = Arc::new(Snapshot {
                    generations,
                    run: OnceCell::new(),
                    tables: Mutex::default(),
                });
                *memory = Some(s.clone());
                s
            }
        }
    }
}

/// The 503 before the first run.
fn no_run() -> Error {
    Error::Unavailable("no ranking yet: the first daily grading run has not completed".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Datelike;
    use forecast_domain::{Category, DataSource};
    use forecast_store::GradeRow;

    fn row(ticker: &str, name: &str, category: Category, score: f64, day: u32) -> RankedRow {
        RankedRow {
            grade: GradeRow {
                asset_id: 1,
                return_period: 90,
                metric: Metric::Return,
                data_version: 1,
                letter: "C".into(),
                score,
                expected_return: 0.0,
                prediction_error: 0.0,
                median_return: 0.0,
                median_error: 0.0,
                current_drawdown: 0.0,
                current_price: 1.0,
                win_rate: 0.5,
                body: String::new(),
            },
            ticker: ticker.into(),
            name: name.into(),
            category,
            data_source: DataSource::Real,
            last_price_date: NaiveDate::from_ymd_opt(2020, 1, day).unwrap(),
            currency: "USD".into(),
        }
    }

    fn sample() -> Vec<RankedRow> {
        vec![
            row("msft", "Microsoft Corp", Category::UsStocks, 80.0, 3),
            row("AAPL", "apple Inc", Category::UsStocks, 99.0, 1),
            row("BTC-USD", "Bitcoin", Category::Crypto, 80.0, 2),
            row("^GSPC", "S&P 500", Category::Indices, 10.0, 2),
        ]
    }

    fn order(t: &Table, sort_by: SortKey, order: SortOrder) -> Vec<&str> {
        t.order(sort_by, order)
            .iter()
            .map(|&i| t.rows[i as usize].asset.ticker.as_str())
            .collect()
    }

    #[test]
    fn every_key_sorts_with_ties_by_ticker() {
        let t = Table::new(sample());
        assert_eq!(
            order(&t, SortKey::Score, SortOrder::Desc),
            ["AAPL", "BTC-USD", "msft", "^GSPC"]
        );
        assert_eq!(
            order(&t, SortKey::Score, SortOrder::Asc),
            ["^GSPC", "BTC-USD", "msft", "AAPL"],
            "ties stay ticker-ascending in either direction"
        );
        assert_eq!(
            order(&t, SortKey::Ticker, SortOrder::Asc),
            ["^GSPC", "AAPL", "BTC-USD", "msft"],
            "case-insensitive: msft after BTC-USD"
        );
        assert_eq!(
            order(&t, SortKey::Name, SortOrder::Asc),
            ["AAPL", "BTC-USD", "msft", "^GSPC"]
        );
        assert_eq!(
            order(&t, SortKey::Name, SortOrder::Desc),
            ["^GSPC", "msft", "BTC-USD", "AAPL"]
        );
        assert_eq!(
            order(&t, SortKey::Category, SortOrder::Asc),
            ["BTC-USD", "^GSPC", "AAPL", "msft"]
        );
        assert_eq!(
            order(&t, SortKey::LastPriceDate, SortOrder::Desc),
            ["msft", "BTC-USD", "^GSPC", "AAPL"]
        );
    }

    #[test]
    fn the_text_filter_matches_ticker_or_name_in_any_case() {
        let t = Table::new(sample());
        let hits = |text: &str| {
            t.rows
                .iter()
                .filter(|r| matches(r, text))
                .map(|r| r.asset.ticker.as_str())
                .collect::<Vec<_>>()
        };
        assert_eq!(hits("microsoft"), ["msft"]);
        assert_eq!(hits("msft"), ["msft"]);
        assert_eq!(hits("inc"), ["AAPL"]);
        assert_eq!(hits("s&p"), ["^GSPC"]);
        assert_eq!(hits("-usd"), ["BTC-USD"]);
        assert!(hits("nothing").is_empty());
    }

    fn run() -> GradingRun {
        GradingRun {
            id: "r".into(),
            day: "2020-01-03".into(),
            engine: "e@1.0.0".into(),
            scorer: "s@2.0.0".into(),
            status: forecast_domain::GradingStatus::Done,
            started_at: 0,
            finished_at: Some(60),
            total: 4,
            graded: 4,
            failures: 0,
        }
    }

    /// A page is the filtered rows in order from `offset`, numbered by
    /// their place in the whole filtered list; the metadata counts the
    /// filtered rows, the stale ones and their dates.
    #[test]
    fn a_page_numbers_filters_and_counts_the_filtered_rows() {
        let t = Table::new(sample());
        let q = |categories: Option<Vec<Category>>, max_age_days, offset, limit| RankingQuery {
            categories,
            sort_by: SortKey::Score,
            order: SortOrder::Desc,
            limit,
            offset,
            text: None,
            return_period: 90,
            metric: Metric::Return,
            max_age_days,
            screen: Screen::default(),
        };
        let today = NaiveDate::from_ymd_opt(2020, 1, 4).unwrap();
        let a = t.answer(&run(), &q(None, Some(2), 1, 1), today);
        let page: Vec<_> = a
            .ranked_assets
            .iter()
            .map(|r| (r.rank, r.ticker.as_str()))
            .collect();
        assert_eq!(page, [(2, "msft")], "AAPL (1 January) is stale");
        assert_eq!(a.metadata.total_assets, 4);
        assert_eq!(a.metadata.filtered_assets, 3);
        assert_eq!(a.metadata.stale_excluded, 1);
        assert_eq!(a.metadata.data_sources.real, 3);
        let dates = a.metadata.last_price_dates.unwrap();
        assert_eq!((dates.oldest.day(), dates.newest.day()), (2, 3));
        assert_eq!(a.metadata.engine_version, "1.0.0");
        let a = t.answer(
            &run(),
            &q(Some(vec![Category::UsStocks]), None, 0, 10),
            today,
        );
        let page: Vec<_> = a
            .ranked_assets
            .iter()
            .map(|r| (r.rank, r.ticker.as_str()))
            .collect();
        assert_eq!(page, [(1, "AAPL"), (2, "msft")]);
        assert_eq!(a.metadata.stale_excluded, 0);
        let a = t.answer(&run(), &q(None, None, 9, 10), today);
        assert!(a.ranked_assets.is_empty());
        assert_eq!(a.metadata.filtered_assets, 4);
    }

    /// What a page was before the snapshot (issue 41): the rows filtered,
    /// then sorted, then cut, computed from scratch per query.
    fn naive(rows: &[RankedRow], q: &RankingQuery, today: NaiveDate) -> Vec<(usize, String)> {
        let mut kept: Vec<RankedAsset> = rows
            .iter()
            .cloned()
            .map(|r| Row::from(r).asset)
            .filter(|a| {
                q.categories
                    .as_ref()
                    .is_none_or(|c| c.contains(&a.category))
            })
            .filter(|a| {
                q.text.as_ref().is_none_or(|t| {
                    a.ticker.to_lowercase().contains(t) || a.name.to_lowercase().contains(t)
                })
            })
            .filter(|a| {
                q.max_age_days
                    .is_none_or(|d| a.last_price_date >= today - chrono::Days::new(u64::from(d)))
            })
            .collect();
        kept.sort_by(|a, b| ranked(a, b, q.sort_by, q.order));
        kept.into_iter()
            .enumerate()
            .skip(q.offset)
            .take(q.limit)
            .map(|(i, a)| (i + 1, a.ticker))
            .collect()
    }

    /// Over 200 rows with many ties, every key, both orders, filters and
    /// pages: the snapshot's page is the page computed from scratch.
    #[test]
    fn pages_from_the_sorted_snapshot_equal_pages_computed_from_scratch() {
        let categories = [Category::UsStocks, Category::Crypto, Category::Indices];
        let rows: Vec<RankedRow> = (0..200u32)
            .map(|i| {
                let mut r = row(
                    &format!("T{:03}", (i * 37) % 200),
                    &format!("Name {}", i % 13),
                    categories[(i % 3) as usize],
                    f64::from(i % 7),
                    1 + i % 28,
                );
                r.grade.expected_return = f64::from(i % 5) - 2.0;
                r.grade.current_price = f64::from(i % 11);
                r
            })
            .collect();
        let t = Table::new(rows.clone());
        let today = NaiveDate::from_ymd_opt(2020, 1, 29).unwrap();
        let keys = [
            SortKey::Score,
            SortKey::ExpectedReturn,
            SortKey::CurrentPrice,
            SortKey::Ticker,
            SortKey::Name,
            SortKey::Category,
            SortKey::LastPriceDate,
        ];
        let mut checked = 0;
        for sort_by in keys {
            for order in [SortOrder::Asc, SortOrder::Desc] {
                for (categories, text, max_age_days) in [
                    (None, None, None),
                    (Some(vec![Category::Crypto]), None, None),
                    (None, Some("name 1".to_string()), None),
                    (
                        Some(vec![Category::UsStocks, Category::Indices]),
                        None,
                        Some(10),
                    ),
                ] {
                    for (offset, limit) in [(0, 10), (15, 20), (190, 50)] {
                        let q = RankingQuery {
                            categories: categories.clone(),
                            sort_by,
                            order,
                            limit,
                            offset,
                            text: text.clone(),
                            return_period: 90,
                            metric: Metric::Return,
                            max_age_days,
                            screen: Screen::default(),
                        };
                        let got: Vec<_> = t
                            .answer(&run(), &q, today)
                            .ranked_assets
                            .into_iter()
                            .map(|a| (a.rank, a.ticker))
                            .collect();
                        assert_eq!(got, naive(&rows, &q, today), "{q:?}");
                        checked += 1;
                    }
                }
            }
        }
        assert_eq!(checked, 7 * 2 * 4 * 3);
    }

    /// Each filter of the screener on its own and together, against the
    /// rows' figures written out by hand.
    #[test]
    fn the_screener_keeps_what_every_filter_allows() {
        use forecast_api::ranking::{Between, RawScreen};
        let mut rows = sample();
        let figures = [
            // (source, letter, score, drawdown, episodes in the body)
            (DataSource::Real, "A", 85.0, -0.40, Some(12)),
            (DataSource::Ingested, "B", 70.0, -0.05, Some(3)),
            (DataSource::Synthetic, "C", 50.0, -0.20, None),
            (DataSource::Real, "F", 10.0, -0.60, Some(40)),
        ];
        for (r, (source, letter, score, dd, episodes)) in rows.iter_mut().zip(figures) {
            r.data_source = source;
            r.grade.letter = letter.into();
            r.grade.score = score;
            r.grade.current_drawdown = dd;
            r.grade.body = match episodes {
                Some(e) => format!(r#"{{"current_state":{{"evidence":{{"episodes":{e}}}}}}}"#),
                None => "{}".into(),
            };
        }
        let t = Table::new(rows);
        let today = NaiveDate::from_ymd_opt(2020, 1, 4).unwrap();
        let kept = |screen: Screen| {
            let q = RankingQuery {
                screen,
                ..forecast_api::ranking::RawRankingQuery::default()
                    .validate()
                    .unwrap()
            };
            let mut t: Vec<String> = t
                .answer(&run(), &q, today)
                .ranked_assets
                .into_iter()
                .map(|a| a.ticker)
                .collect();
            t.sort();
            t
        };
        let tickers: Vec<String> = t.rows.iter().map(|r| r.asset.ticker.clone()).collect();
        let (a, b, c, d) = (&tickers[0], &tickers[1], &tickers[2], &tickers[3]);
        let sorted = |mut v: Vec<&String>| {
            v.sort();
            v.into_iter().cloned().collect::<Vec<_>>()
        };
        let parse = |pairs: &[(&str, &str)]| {
            let q: String = pairs
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join("&");
            serde_urlencoded::from_str::<RawScreen>(&q)
                .unwrap()
                .validate()
                .unwrap()
        };
        assert_eq!(kept(Screen::default()).len(), 4);
        assert_eq!(
            kept(parse(&[("source", "real,ingested")])),
            sorted(vec![a, b, d])
        );
        assert_eq!(kept(parse(&[("grades", "a,b")])), sorted(vec![a, b]));
        assert_eq!(kept(parse(&[("min_score", "50")])), sorted(vec![a, b, c]));
        assert_eq!(
            kept(parse(&[("min_score", "20"), ("max_score", "80")])),
            sorted(vec![b, c])
        );
        assert_eq!(
            kept(parse(&[("min_current_drawdown", "-0.3")])),
            sorted(vec![b, c])
        );
        // Episodes: a row without evidence never passes a positive minimum.
        assert_eq!(kept(parse(&[("min_episodes", "10")])), sorted(vec![a, d]));
        assert_eq!(kept(parse(&[("min_episodes", "0")])).len(), 4);
        assert_eq!(
            kept(parse(&[
                ("source", "real"),
                ("min_episodes", "10"),
                ("max_score", "50")
            ])),
            sorted(vec![d])
        );
        assert!(Between::new(Some(1.0), None).holds(1.0));
        assert!(!Between::new(None, Some(1.0)).holds(1.5));
    }

    #[test]
    fn caseless_compares_lower_case_characters() {
        assert_eq!(caseless("abc", "ABD"), Ordering::Less);
        assert_eq!(caseless("ÄB", "äb"), Ordering::Equal);
        assert_eq!(caseless("b", "A"), Ordering::Greater);
    }
}
