//! `forecast ingest fetch`: daily closes from a live provider, through
//! [`forecast_ingest::providers::fetch_assets`], with a progress bar and
//! a summary.

use std::time::Instant;

use anyhow::bail;
use clap::Args;

use forecast_ingest::providers::{FetchOptions, ProviderKind, Selection};
use forecast_store as store;

/// The arguments of `forecast ingest fetch`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("assets").required(true).args(["tickers", "category", "all"])))]
pub struct FetchArgs {
    /// yahoo or stooq.
    #[arg(long)]
    provider: ProviderKind,
    /// Comma-separated catalog tickers (e.g. AAPL,^GSPC,BTC-USD).
    #[arg(long, value_delimiter = ',')]
    tickers: Option<Vec<String>>,
    /// Every active asset of a category (e.g. "US Stocks").
    #[arg(long)]
    category: Option<String>,
    /// Every active asset.
    #[arg(long)]
    all: bool,
    /// Only rows from this date on (YYYY-MM-DD); all history without.
    #[arg(long, value_parser = parse_since)]
    since: Option<chrono::NaiveDate>,
    /// Assets fetched at the same time (1-16).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=16))]
    concurrency: u32,
    /// Requests per second, retries included (1-20).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=20))]
    rate: u32,
    /// Accept closes more than 10x (or less than 1/10 of) the previous
    /// one, e.g. an unadjusted split the operator has checked.
    #[arg(long)]
    allow_jumps: bool,
}

fn parse_since(s: &str) -> Result<chrono::NaiveDate, String> {
    chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .ok()
        .filter(|_| s.len() == 10)
        .ok_or_else(|| format!("'{s}' is not a YYYY-MM-DD date"))
}

/// Runs the command: exits non-zero (an error) when any asset failed.
pub async fn run(args: FetchArgs) -> anyhow::Result<()> {
    let selection = match (args.tickers, args.category) {
        (Some(t), _) => Selection::Tickers(t),
        (None, Some(c)) => Selection::Category(c),
        (None, None) => {
            debug_assert!(args.all, "clap requires one of the three");
            Selection::All
        }
    };
    let mut options = FetchOptions {
        since: args.since,
        concurrency: args.concurrency,
        allow_jumps: args.allow_jumps,
        ..Default::default()
    };
    options.http.rate_per_second = args.rate;
    fetch(args.provider, selection, options).await
}

async fn fetch(
    kind: ProviderKind,
    selection: Selection,
    options: FetchOptions,
) -> anyhow::Result<()> {
    use forecast_ingest::providers::{self, FetchOutcome};
    // The provider's address (FORECAST_YAHOO_URL, FORECAST_STOOQ_URL) and
    // the store come from the one configuration.
    let config = crate::config::Config::from_env()?;
    let provider = config.price_provider(kind);
    let db = store::connect(&config.database_url).await?;
    let result = async {
        // Unknown tickers and categories fail here, before any request.
        let assets = providers::select_assets(db.as_ref(), &selection).await?;
        if assets.is_empty() {
            bail!("no active asset to fetch");
        }
        let started = Instant::now();
        // One bar on stderr, hidden when stderr is not a terminal (as in
        // `demo load`); the summary below is printed either way.
        let bar = indicatif::ProgressBar::new(assets.len() as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "fetching from {prefix} {bar:30} {pos}/{len} assets, {per_sec}, ETA {eta} {msg}",
            )
            .expect("valid template"),
        );
        bar.set_prefix(kind.as_str());
        let progress_bar = bar.clone();
        let progress: providers::fetch::ProgressFn = std::sync::Arc::new(move |p: providers::FetchProgress| {
            progress_bar.set_position(p.done as u64);
            if p.failed > 0 {
                progress_bar.set_message(format!("({} failed)", p.failed));
            }
        });
        let asset_store: std::sync::Arc<dyn store::AssetStore> = db.clone();
        let reports =
            providers::fetch_assets(asset_store, provider.into(), &assets, &options, progress)
                .await;
        bar.finish_and_clear();
        let (mut loaded, mut unchanged, mut failures) = (0, 0, Vec::new());
        for r in &reports {
            let extra = match (r.skipped_null, r.duplicates, r.splits_adjusted) {
                (0, 0, 0) => String::new(),
                (n, d, s) => format!(" ({n} null closes skipped, {d} repeated dates, {s} splits adjusted)"),
            };
            match &r.outcome {
                FetchOutcome::Loaded => {
                    loaded += 1;
                    println!(
                        "loaded    {}: {} rows fetched, {} -> {} rows stored{extra}",
                        r.ticker, r.rows_fetched, r.rows_before, r.rows_after
                    );
                }
                FetchOutcome::Unchanged => {
                    unchanged += 1;
                    println!(
                        "unchanged {}: {} rows fetched, all already stored{extra}",
                        r.ticker, r.rows_fetched
                    );
                }
                FetchOutcome::Failed(reason) => failures.push((&r.ticker, reason)),
            }
        }
        for (ticker, reason) in &failures {
            println!("FAILED    {ticker}: {reason}");
        }
        println!(
            "fetched {} assets from {kind} in {:.1}s: {loaded} loaded, {unchanged} unchanged, {} failed",
            reports.len(),
            started.elapsed().as_secs_f64(),
            failures.len()
        );
        if !failures.is_empty() {
            bail!(
                "{} of {} assets failed; their stored prices are unchanged",
                failures.len(),
                reports.len()
            );
        }
        anyhow::Ok(())
    }
    .await;
    db.close().await;
    result
}
