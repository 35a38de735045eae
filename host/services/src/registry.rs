//! The plugin registry (issue 6): versions in the store, the checks a
//! version must pass before it is activated, activation and rollback, and
//! shadow runs. Shared by the operator CLI (`forecast plugin …`) and the
//! admin API (`/api/admin/…`), which both act on the store; running servers
//! pick changes up by polling the store's plugins generation
//! ([`crate::active::Plugins::sync`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;

use forecast_domain::series::PriceSeries;
use forecast_domain::PluginKind;
use forecast_plugins::llm::LlmClient;
use forecast_plugins::matcher::{Catalog, CatalogEntry};
use forecast_plugins::segmentation::{AnalysisParams, EngineError, Metric};
use forecast_plugins::strategy::valid_name;
use forecast_plugins::{
    builtin, sha256_hex, MatcherPlugin, PluginError, PluginRuntime, ScorerPlugin,
    SegmentationPlugin, StrategyPlugin,
};
use forecast_store::{
    ActivationRecord, AddOutcome, PluginRecord, PluginRegistry, ShadowConfig, ShadowSample,
    StoreError,
};

/// Plugin kinds the registry manages.
pub const KINDS: [&str; 4] = ["segmentation", "scorer", "strategy", "matcher"];
/// Kinds that can be shadowed (their answers are compared field by field).
pub const SHADOW_KINDS: [&str; 1] = ["segmentation"];
/// Largest component accepted.
pub const MAX_COMPONENT_BYTES: usize = 64 << 20;
/// Who registers the built-in components.
pub const BUILTIN: &str = "builtin";

/// Why a registry operation was refused.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// Bad input (400): the message names it.
    #[error("{0}")]
    Invalid(String),
    /// No such version (404).
    #[error("{0}")]
    NotFound(String),
    /// The operation conflicts with the registry's state (409).
    #[error("{0}")]
    Conflict(String),
    /// The candidate failed a check; nothing changed (422).
    #[error("{0}")]
    Refused(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The slot an activation of (kind, name) replaces: one engine, one scorer
/// (and one matcher) at a time, one version per strategy name.
pub fn slot(kind: &str, name: &str) -> String {
    match kind {
        "strategy" => format!("strategy/{name}"),
        other => other.to_string(),
    }
}

/// A compiled, type-checked plugin of some kind.
#[derive(Clone)]
pub enum Loaded {
    /// A segmentation engine.
    Segmentation(Arc<SegmentationPlugin>),
    /// A scorer.
    Scorer(Arc<ScorerPlugin>),
    /// A strategy.
    Strategy(Arc<StrategyPlugin>),
    /// A ticker matcher.
    Matcher(Arc<MatcherPlugin>),
}

impl Loaded {
    /// The version the component reports about itself.
    pub fn version(&self) -> &str {
        match self {
            Loaded::Segmentation(p) => &p.info().version,
            Loaded::Scorer(p) => &p.info().version,
            Loaded::Strategy(p) => &p.info().version,
            Loaded::Matcher(p) => &p.info().version,
        }
    }

    /// Hex SHA-256 of its bytes.
    pub fn sha256(&self) -> &str {
        match self {
            Loaded::Segmentation(p) => &p.info().sha256,
            Loaded::Scorer(p) => &p.info().sha256,
            Loaded::Strategy(p) => &p.info().sha256,
            Loaded::Matcher(p) => &p.info().sha256,
        }
    }
}

/// The kind named `kind`, as the store takes it.
fn check_kind(kind: &str) -> Result<PluginKind, RegistryError> {
    kind.parse().map_err(|_| {
        RegistryError::Invalid(format!(
            "unknown plugin kind '{kind}'; expected one of: {}",
            KINDS.join(", ")
        ))
    })
}

/// True for `MAJOR.MINOR.PATCH` with optional `-pre` and `+build` parts.
pub fn valid_version(v: &str) -> bool {
    let core = v.split(['-', '+']).next().unwrap_or("");
    let parts: Vec<&str> = core.split('.').collect();
    v.len() <= 64
        && parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
}

/// Compiles `bytes` and type-checks them against `kind`'s world (the
/// component's own version comes with it). Blocking (compilation). A
/// matcher gets `llm`, the language model lent to it (none for checks).
pub fn load(
    runtime: &Arc<PluginRuntime>,
    kind: &str,
    name: &str,
    bytes: &[u8],
    llm: Option<Arc<LlmClient>>,
) -> Result<Loaded, RegistryError> {
    check_kind(kind)?;
    let refused = |e: PluginError| {
        RegistryError::Refused(format!(
            "the component is not a loadable {kind} plugin: {e}"
        ))
    };
    Ok(match kind {
        "segmentation" => Loaded::Segmentation(Arc::new(
            SegmentationPlugin::load(runtime.clone(), name, bytes).map_err(refused)?,
        )),
        "scorer" => Loaded::Scorer(Arc::new(
            ScorerPlugin::load(runtime.clone(), name, bytes).map_err(refused)?,
        )),
        "matcher" => Loaded::Matcher(Arc::new(
            MatcherPlugin::load(runtime.clone(), name, bytes, llm).map_err(refused)?,
        )),
        _ => {
            let plugin = StrategyPlugin::load(runtime.clone(), bytes).map_err(refused)?;
            if plugin.info().name != name {
                return Err(RegistryError::Refused(format!(
                    "the strategy calls itself '{}', not '{name}'",
                    plugin.info().name
                )));
            }
            Loaded::Strategy(Arc::new(plugin))
        }
    })
}

/// A deterministic random walk on weekdays: the self-tests' fixture.
fn fixture_series(n: usize, seed: u64) -> PriceSeries {
    let mut state = seed;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut price = 100.0;
    let mut dates = Vec::with_capacity(n);
    let mut closes = Vec::with_capacity(n);
    let mut day: i32 = 10_959; // 2000-01-03, a Monday
    while dates.len() < n {
        if (day + 3).rem_euclid(7) < 5 {
            price *= 1.0 + (next() - 0.48) * 0.05;
            dates.push(day);
            closes.push(price);
        }
        day += 1;
    }
    PriceSeries { dates, closes }
}

fn call<T>(r: Result<Result<T, EngineError>, PluginError>, what: &str) -> Result<T, String> {
    match r {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(format!("{what} refused the fixture: {e:?}")),
        Err(e) => Err(format!("{what} failed: {e}")),
    }
}

fn segmentation_self_test(p: &Arc<SegmentationPlugin>) -> Result<(), String> {
    let series = fixture_series(900, 0x5eed);
    let n = series.len();
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    for metric in [Metric::TotalReturn, Metric::Sharpe, Metric::Sortino] {
        let params = AnalysisParams {
            return_period: 30,
            num_segments: 20,
            decay_factor: 0.95,
            metric,
            periods_per_year: Some(252),
        };
        let full = call(p.analyse(&series, params), "analyse")?;
        let s = &full.series;
        if s.drawdowns.len() != n || s.median_returns.len() != n || s.expected_returns.len() != n {
            return Err(format!("series are not one value per input row ({n} rows)"));
        }
        let mut peak = f64::MIN;
        for (t, (&c, &d)) in series.closes.iter().zip(&s.drawdowns).enumerate() {
            peak = peak.max(c);
            if (d - (c / peak - 1.0)).abs() > 1e-12 || !(-1.0..=0.0).contains(&d) {
                return Err(format!("drawdown at row {t} is {d}, not P/max(P) - 1"));
            }
        }
        if full.segments.len() != 20 || full.current.segment >= 20 {
            return Err("segments are not num_segments buckets".into());
        }
        if full.current.price != *series.closes.last().expect("rows") {
            return Err("current_state.price is not the last close".into());
        }
        let state = call(p.analyse_state(&series, params), "analyse-state")?;
        if format!("{:?}", state.current) != format!("{:?}", full.current) {
            return Err("analyse-state's current state differs from analyse's".into());
        }
        let mut session = p.session();
        let wf = call(session.walk_forward(&series, params, None), "walk-forward")?;
        if bits(&wf.median_returns) != bits(&s.median_returns)
            || bits(&wf.drawdowns) != bits(&s.drawdowns)
        {
            return Err("walk-forward differs from analyse's series".into());
        }
        let cut = series.window(
            None,
            Some(forecast_domain::series::from_days(series.dates[700])),
        );
        let part = call(p.analyse(&cut, params), "analyse")?;
        if bits(&part.series.median_returns) != bits(&s.median_returns[..cut.len()]) {
            return Err("look-ahead: cutting the history changed earlier predictions".into());
        }
    }
    let short = fixture_series(100, 7);
    match p.analyse(
        &short,
        AnalysisParams {
            return_period: 30,
            num_segments: 20,
            decay_factor: 0.95,
            metric: Metric::TotalReturn,
            periods_per_year: None,
        },
    ) {
        Ok(Err(EngineError::InsufficientData(_))) => Ok(()),
        _ => Err("100 rows are not refused as insufficient data".into()),
    }
}

fn scorer_self_test(p: &ScorerPlugin) -> Result<(), String> {
    use forecast_plugins::scorer::ScoreInput;
    let inputs: Vec<ScoreInput> = (0..60)
        .map(|i| {
            let x = f64::from(i);
            ScoreInput {
                median_return: (x - 30.0) / 200.0,
                expected_return: (x - 25.0) / 250.0,
                best_error: 0.01 + x / 1_000.0,
                win_rate: (i % 7 != 0).then(|| (x / 60.0).min(1.0)),
                insufficient_data: i % 11 == 0,
                drawdown: -(x / 100.0),
            }
        })
        .collect();
    let grades = p.score(&inputs).map_err(|e| format!("score failed: {e}"))?;
    if grades.len() != inputs.len() {
        return Err(format!(
            "{} grades for {} inputs",
            grades.len(),
            inputs.len()
        ));
    }
    for (i, g) in grades.iter().enumerate() {
        if !(0.0..=100.0).contains(&g.score) {
            return Err(format!(
                "score {} of input {i} is outside [0, 100]",
                g.score
            ));
        }
        if g.letter.is_empty() || g.letter.len() > 3 {
            return Err(format!(
                "letter '{}' of input {i} is not 1-3 characters",
                g.letter
            ));
        }
    }
    let again = p.score(&inputs).map_err(|e| format!("score failed: {e}"))?;
    let key = |g: &[forecast_plugins::scorer::Grade]| {
        g.iter()
            .map(|g| (g.letter.clone(), g.score.to_bits()))
            .collect::<Vec<_>>()
    };
    if key(&again) != key(&grades) {
        return Err("the same inputs got different grades".into());
    }
    Ok(())
}

fn strategy_self_test(p: &Arc<StrategyPlugin>) -> Result<(), String> {
    use forecast_backtest as bt;
    let series: Vec<PriceSeries> = (0..4).map(|i| fixture_series(700, 11 + i)).collect();
    let metas: Vec<bt::AssetMeta> = (0..4)
        .map(|i| bt::AssetMeta {
            ticker: format!("T{i}"),
            name: format!("Fixture {i}"),
            category: "US Stocks".into(),
        })
        .collect();
    // Plausible point-in-time signals without an engine: drawdowns and
    // predictions that move with them.
    let signals: Vec<bt::Signals> = series
        .iter()
        .map(|s| {
            let mut peak = f64::MIN;
            let drawdowns: Vec<f64> = s
                .closes
                .iter()
                .map(|&c| {
                    peak = peak.max(c);
                    c / peak - 1.0
                })
                .collect();
            let n = drawdowns.len();
            bt::Signals {
                segments: drawdowns
                    .iter()
                    .map(|d| (-d * 20.0).min(19.0) as u8)
                    .collect(),
                expected_returns: drawdowns.iter().map(|d| -d / 2.0 - 0.01).collect(),
                median_returns: drawdowns.iter().map(|d| -d / 3.0 - 0.01).collect(),
                prediction_error_cumavg: vec![0.05; n],
                median_error_cumavg: vec![0.04; n],
                drawdowns,
            }
        })
        .collect();
    let inputs: Vec<bt::AssetInput<'_>> = (0..4)
        .map(|i| bt::AssetInput {
            meta: &metas[i],
            cost_bps: 6.0,
            dates: &series[i].dates,
            closes: &series[i].closes,
            signals: &signals[i],
        })
        .collect();
    let window = bt::Window {
        start: series[0].dates[0],
        end: *series[0].dates.last().expect("rows"),
    };
    let params = bt::RunParams {
        top_n: 2,
        rebalance: bt::Rebalance::Weekly,
        ..bt::RunParams::default()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let mut run = p
        .instance(deadline)
        .map_err(|e| format!("instantiate failed: {e}"))?;
    match bt::run(&inputs, window, &params, &mut run, &mut || false) {
        Ok(_) => Ok(()),
        Err(bt::RunError::Param(e)) => Err(format!("refused the default parameters: {e}")),
        Err(bt::RunError::Contract(m)) => Err(format!("broke the strategy contract: {m}")),
        Err(bt::RunError::Strategy(e)) => Err(format!("failed: {e:?}")),
        Err(e) => Err(format!("did not complete: {e:?}")),
    }
}

fn matcher_self_test(p: &MatcherPlugin) -> Result<(), String> {
    let entry = |ticker: &str, name: &str, category: &str, summary: &str| CatalogEntry {
        ticker: ticker.into(),
        name: name.into(),
        category: category.into(),
        exchange: String::new(),
        country: String::new(),
        sector: String::new(),
        industry: String::new(),
        website: String::new(),
        summary: summary.into(),
    };
    let catalog = Catalog {
        version: 1,
        entries: vec![
            entry("AAPL", "Apple Inc.", "US Stocks", "Products: iPhone Mac"),
            entry(
                "MSFT",
                "Microsoft Corporation",
                "US Stocks",
                "Products: Windows Xbox",
            ),
            entry("BTC-USD", "Bitcoin", "Crypto", ""),
            entry("7203.T", "Toyota", "Japanese Stocks", ""),
            entry("GC=F", "Gold Futures", "Commodities", ""),
        ],
    };
    let find = |text: &str| {
        p.find(&catalog, text, 3)
            .map_err(|e| format!("find('{text}') failed: {e}"))
    };
    for (text, want) in [("AAPL", 0), ("msft", 1), ("bitcoin", 2), ("7203", 3)] {
        let got = find(text)?;
        match got.first() {
            Some(c) if c.entry == want && c.confidence >= 0.8 => {}
            other => {
                return Err(format!(
                    "'{text}' should find {} first with confidence >= 0.8, got {other:?}",
                    catalog.entries[want as usize].ticker
                ))
            }
        }
    }
    if !find("xqzvkj wpfh")?.is_empty() {
        return Err("gibberish matched something".into());
    }
    Ok(())
}

/// Runs `kind`'s self-test vectors against a loaded candidate: the engine
/// on a fixture series must satisfy the engine's invariants (drawdown
/// definition, one value per row, walk-forward = analyse, analyse-state =
/// analyse, no look-ahead under a cut, short input refused); the scorer must
/// grade in [0, 100], one grade per input, deterministically; a strategy
/// must complete a weekly backtest over fixture data inside its contract.
/// Blocking.
pub fn self_test(plugin: &Loaded) -> Result<(), RegistryError> {
    let result = match plugin {
        Loaded::Segmentation(p) => segmentation_self_test(p),
        Loaded::Scorer(p) => scorer_self_test(p),
        Loaded::Strategy(p) => strategy_self_test(p),
        Loaded::Matcher(p) => matcher_self_test(p),
    };
    result.map_err(|m| RegistryError::Refused(format!("self-test failed: {m}")))
}

/// Adds a version (type-checked; its reported version must be `version`).
pub async fn add(
    db: &dyn PluginRegistry,
    runtime: &Arc<PluginRuntime>,
    kind: &str,
    name: &str,
    version: &str,
    bytes: Vec<u8>,
    by: &str,
) -> Result<PluginRecord, RegistryError> {
    let parsed_kind = check_kind(kind)?;
    if !valid_name(name) {
        return Err(RegistryError::Invalid(format!(
            "name '{name}' must be 1-64 lower-case letters, digits, '-' or '_'"
        )));
    }
    if !valid_version(version) {
        return Err(RegistryError::Invalid(format!(
            "version '{version}' is not a semantic version (MAJOR.MINOR.PATCH[-pre][+build])"
        )));
    }
    if bytes.len() > MAX_COMPONENT_BYTES {
        return Err(RegistryError::Invalid(format!(
            "the component has {} bytes; at most {MAX_COMPONENT_BYTES} are accepted",
            bytes.len()
        )));
    }
    let loaded = blocking_load(runtime, kind, name, bytes.clone()).await?;
    let reported = loaded.version().split('+').next().unwrap_or("");
    if reported != version.split('+').next().unwrap_or("") {
        return Err(RegistryError::Refused(format!(
            "the component reports version {}, not {version}",
            loaded.version()
        )));
    }
    let record = PluginRecord {
        kind: parsed_kind,
        name: name.into(),
        version: version.into(),
        sha256: sha256_hex(&bytes),
        size: bytes.len() as i64,
        builtin: by == BUILTIN,
        added_by: by.into(),
        added_at: chrono::Utc::now().timestamp(),
    };
    match db.add_plugin(&record, &bytes).await? {
        AddOutcome::Added | AddOutcome::AlreadyPresent => Ok(record),
        AddOutcome::Conflict(sha) => Err(RegistryError::Conflict(format!(
            "{kind}/{name}@{version} is already registered with other bytes (sha256 {sha}); \
             give the new build another version"
        ))),
    }
}

async fn blocking_load(
    runtime: &Arc<PluginRuntime>,
    kind: &str,
    name: &str,
    bytes: Vec<u8>,
) -> Result<Loaded, RegistryError> {
    let (runtime, kind, name) = (runtime.clone(), kind.to_string(), name.to_string());
    tokio::task::spawn_blocking(move || load(&runtime, &kind, &name, &bytes, None))
        .await
        .map_err(|e| RegistryError::Refused(format!("loading failed: {e}")))?
}

/// Loads a stored version and runs its kind's checks (blocking work off
/// the async workers).
pub async fn load_checked(
    db: &dyn PluginRegistry,
    runtime: &Arc<PluginRuntime>,
    kind: &str,
    name: &str,
    version: &str,
) -> Result<Loaded, RegistryError> {
    let parsed_kind = check_kind(kind)?;
    let bytes = db
        .plugin_wasm(parsed_kind, name, version)
        .await?
        .ok_or_else(|| not_found(kind, name, version))?;
    let loaded = blocking_load(runtime, kind, name, bytes).await?;
    let checked = loaded.clone();
    tokio::task::spawn_blocking(move || self_test(&checked))
        .await
        .map_err(|e| RegistryError::Refused(format!("self-test crashed: {e}")))??;
    Ok(loaded)
}

fn not_found(kind: &str, name: &str, version: &str) -> RegistryError {
    RegistryError::NotFound(format!(
        "{kind}/{name}@{version} is not registered (add it first)"
    ))
}

/// Activates a registered version after its checks pass. Activating the
/// version already active changes nothing.
pub async fn activate(
    db: &dyn PluginRegistry,
    runtime: &Arc<PluginRuntime>,
    kind: &str,
    name: &str,
    version: &str,
    by: &str,
) -> Result<ActivationRecord, RegistryError> {
    let parsed_kind = check_kind(kind)?;
    let slot = slot(kind, name);
    if let Some(current) = db
        .active_plugins()
        .await?
        .into_iter()
        .find(|a| a.slot == slot)
    {
        if current.name == name && current.version == version {
            return Ok(current);
        }
    }
    load_checked(db, runtime, kind, name, version).await?;
    let now = chrono::Utc::now().timestamp();
    let activation = db
        .activate_plugin(&slot, parsed_kind, name, version, by, now)
        .await?;
    // Promoting the shadowed candidate ends its shadow run.
    let promoted = db
        .shadows()
        .await?
        .into_iter()
        .any(|s| s.kind == parsed_kind && s.name == name && s.version == version);
    if promoted {
        db.clear_shadow(parsed_kind).await?;
    }
    Ok(activation)
}

/// Returns `kind`'s slot (for strategies, `name`'s) to the version active
/// before the current one.
pub async fn rollback(
    db: &dyn PluginRegistry,
    kind: &str,
    name: &str,
) -> Result<ActivationRecord, RegistryError> {
    check_kind(kind)?;
    let slot = slot(kind, name);
    let current = db
        .active_plugins()
        .await?
        .into_iter()
        .find(|a| a.slot == slot)
        .ok_or_else(|| RegistryError::NotFound(format!("nothing is active for {slot}")))?;
    if current.name != name {
        return Err(RegistryError::Invalid(format!(
            "the active {kind} is {}/{}@{}, not '{name}'",
            current.kind, current.name, current.version
        )));
    }
    // Undo activations until another version is active: replicas starting
    // together may each have recorded the same built-in activation.
    loop {
        match db
            .rollback_plugin(&slot, chrono::Utc::now().timestamp())
            .await?
        {
            Some(a) if a.name == current.name && a.version == current.version => continue,
            Some(a) => return Ok(a),
            None => {
                return Err(RegistryError::Conflict(format!(
                    "{slot} has no earlier version to roll back to ({}@{} is its only activation)",
                    current.name, current.version
                )))
            }
        }
    }
}

/// Starts a shadow run of a registered candidate on `sample` of live requests.
pub async fn start_shadow(
    db: &dyn PluginRegistry,
    runtime: &Arc<PluginRuntime>,
    kind: &str,
    name: &str,
    version: &str,
    sample: f64,
    by: &str,
) -> Result<ShadowConfig, RegistryError> {
    let parsed_kind = check_kind(kind)?;
    if !SHADOW_KINDS.contains(&kind) {
        return Err(RegistryError::Invalid(format!(
            "shadow runs are supported for: {} (not {kind})",
            SHADOW_KINDS.join(", ")
        )));
    }
    if !(sample > 0.0 && sample <= 1.0) {
        return Err(RegistryError::Invalid(format!(
            "sample must be a share in (0, 1] (got {sample})"
        )));
    }
    let active = db
        .active_plugins()
        .await?
        .into_iter()
        .find(|a| a.slot == slot(kind, name));
    if active.is_some_and(|a| a.name == name && a.version == version) {
        return Err(RegistryError::Conflict(format!(
            "{kind}/{name}@{version} is the active version; shadow a candidate"
        )));
    }
    load_checked(db, runtime, kind, name, version).await?;
    let config = ShadowConfig {
        kind: parsed_kind,
        name: name.into(),
        version: version.into(),
        sample,
        started_by: by.into(),
        started_at: chrono::Utc::now().timestamp(),
    };
    db.set_shadow(&config).await?;
    Ok(config)
}

/// Stops `kind`'s shadow run.
pub async fn stop_shadow(db: &dyn PluginRegistry, kind: &str) -> Result<(), RegistryError> {
    let parsed_kind = check_kind(kind)?;
    if db.clear_shadow(parsed_kind).await? {
        Ok(())
    } else {
        Err(RegistryError::NotFound(format!("no shadow run for {kind}")))
    }
}

/// One row of `plugin list`.
#[derive(Debug, Clone, Serialize)]
pub struct Listed {
    /// Kind.
    pub kind: String,
    /// Name.
    pub name: String,
    /// Version.
    pub version: String,
    /// Hex SHA-256.
    pub sha256: String,
    /// Bytes.
    pub size: i64,
    /// Whether it is the active version of its slot.
    pub active: bool,
    /// Whether it is being shadowed.
    pub shadow: bool,
    /// Registered from the binary.
    pub builtin: bool,
    /// Who added it.
    pub added_by: String,
    /// When (RFC 3339).
    pub added_at: String,
}

/// Every registered version with its state.
pub async fn list(db: &dyn PluginRegistry) -> Result<Vec<Listed>, RegistryError> {
    let active = db.active_plugins().await?;
    let shadows = db.shadows().await?;
    Ok(db
        .list_plugins()
        .await?
        .into_iter()
        .map(|r| Listed {
            active: active
                .iter()
                .any(|a| a.kind == r.kind && a.name == r.name && a.version == r.version),
            shadow: shadows
                .iter()
                .any(|s| s.kind == r.kind && s.name == r.name && s.version == r.version),
            added_at: chrono::DateTime::from_timestamp(r.added_at, 0)
                .map(|t| t.to_rfc3339())
                .unwrap_or_default(),
            kind: r.kind.to_string(),
            name: r.name,
            version: r.version,
            sha256: r.sha256,
            size: r.size,
            builtin: r.builtin,
            added_by: r.added_by,
        })
        .collect())
}

/// Latency summary of one side of a shadow run, milliseconds.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Latency {
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
}

fn latency(mut v: Vec<f64>) -> Option<Latency> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    Some(Latency {
        mean: v.iter().sum::<f64>() / v.len() as f64,
        p50: at(0.5),
        p95: at(0.95),
    })
}

/// What an operator reads before promoting a candidate.
#[derive(Debug, Clone, Serialize)]
pub struct ShadowReport {
    /// The shadow run (none when stopped).
    pub kind: String,
    /// Candidate label, `kind/name@version`.
    pub candidate: String,
    /// Share of requests sampled.
    pub sample: f64,
    /// Comparisons made.
    pub samples: usize,
    /// Comparisons whose answers were identical.
    pub identical: usize,
    /// `identical / samples` (none before the first sample).
    pub identical_share: Option<f64>,
    /// Largest absolute difference seen per field (fields that differed).
    pub max_differences: BTreeMap<String, f64>,
    /// Latency of the active version on the sampled requests.
    pub active_latency_ms: Option<Latency>,
    /// Latency of the candidate on the same requests.
    pub candidate_latency_ms: Option<Latency>,
    /// Candidate failures.
    pub errors: usize,
    /// Up to five of their messages.
    pub error_examples: Vec<String>,
    /// Active versions it was compared with.
    pub compared_with: Vec<String>,
}

/// The report of `kind`'s running shadow.
pub async fn shadow_report(
    db: &dyn PluginRegistry,
    kind: &str,
) -> Result<ShadowReport, RegistryError> {
    let parsed_kind = check_kind(kind)?;
    let config = db
        .shadows()
        .await?
        .into_iter()
        .find(|s| s.kind == parsed_kind)
        .ok_or_else(|| RegistryError::NotFound(format!("no shadow run for {kind}")))?;
    let candidate = format!("{}/{}@{}", config.kind, config.name, config.version);
    let samples = db.shadow_samples(parsed_kind, &candidate).await?;
    let mut max_differences: BTreeMap<String, f64> = BTreeMap::new();
    let mut compared_with: Vec<String> = Vec::new();
    for s in &samples {
        if let Ok(serde_json::Value::Object(d)) = serde_json::from_str(&s.diffs) {
            for (field, v) in d {
                let v = v.as_f64().unwrap_or(f64::INFINITY);
                let e = max_differences.entry(field).or_insert(0.0);
                *e = e.max(v);
            }
        }
        if !compared_with.contains(&s.active) {
            compared_with.push(s.active.clone());
        }
    }
    let ok: Vec<&ShadowSample> = samples.iter().filter(|s| s.error.is_none()).collect();
    let identical = samples.iter().filter(|s| s.identical).count();
    let errors: Vec<&ShadowSample> = samples.iter().filter(|s| s.error.is_some()).collect();
    Ok(ShadowReport {
        kind: kind.into(),
        candidate,
        sample: config.sample,
        samples: samples.len(),
        identical,
        identical_share: (!samples.is_empty()).then(|| identical as f64 / samples.len() as f64),
        max_differences,
        active_latency_ms: latency(samples.iter().map(|s| s.active_ms).collect()),
        candidate_latency_ms: latency(ok.iter().map(|s| s.candidate_ms).collect()),
        errors: errors.len(),
        error_examples: errors
            .iter()
            .rev()
            .take(5)
            .filter_map(|s| s.error.clone())
            .collect(),
        compared_with,
    })
}

/// Largest absolute difference per field between two JSON answers: numbers
/// are compared as numbers, array positions collapse to `[]` in the field
/// path, and any other change (a length, a string, a null) counts as an
/// infinite difference. Empty when the answers are identical.
pub fn json_differences(a: &serde_json::Value, b: &serde_json::Value) -> BTreeMap<String, f64> {
    fn walk(
        path: &str,
        a: &serde_json::Value,
        b: &serde_json::Value,
        out: &mut BTreeMap<String, f64>,
    ) {
        use serde_json::Value as V;
        let mut note = |d: f64| {
            let e = out
                .entry(if path.is_empty() {
                    ".".into()
                } else {
                    path.into()
                })
                .or_insert(0.0);
            *e = e.max(d);
        };
        match (a, b) {
            (V::Number(x), V::Number(y)) => {
                let (x, y) = (
                    x.as_f64().unwrap_or(f64::NAN),
                    y.as_f64().unwrap_or(f64::NAN),
                );
                if x.to_bits() != y.to_bits() {
                    note((x - y).abs());
                }
            }
            (V::Array(x), V::Array(y)) => {
                if x.len() != y.len() {
                    note(f64::INFINITY);
                }
                let p = format!("{path}[]");
                for (u, v) in x.iter().zip(y) {
                    walk(&p, u, v, out);
                }
            }
            (V::Object(x), V::Object(y)) => {
                for (k, u) in x {
                    let p = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    };
                    match y.get(k) {
                        Some(v) => walk(&p, u, v, out),
                        None => {
                            out.insert(p, f64::INFINITY);
                        }
                    }
                }
                for k in y.keys().filter(|k| !x.contains_key(*k)) {
                    let p = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    };
                    out.insert(p, f64::INFINITY);
                }
            }
            (x, y) if x == y => {}
            _ => note(f64::INFINITY),
        }
    }
    let mut out = BTreeMap::new();
    walk("", a, b, &mut out);
    out
}

/// The built-in components of `components/manifest.txt`, as (kind, name,
/// bytes): strategies are named by the component itself.
pub fn builtins() -> Vec<(&'static str, Option<&'static str>, &'static [u8])> {
    builtin::builtins()
        .map(|c| {
            let name = (c.kind != PluginKind::Strategy).then_some("default");
            (c.kind.as_str(), name, c.bytes)
        })
        .collect()
}

/// Registers the binary's built-in components as versions (a rebuilt
/// component whose version did not change gets `+<sha256 prefix>` build
/// metadata) and activates them where nothing is active, or where the
/// active version is an older built-in. An operator's own activation is
/// never overridden. Returns the loaded built-ins.
pub async fn ensure_builtins(
    db: &dyn PluginRegistry,
    runtime: &Arc<PluginRuntime>,
) -> Result<Vec<(String, String, Loaded)>, RegistryError> {
    let active = db.active_plugins().await?;
    let mut out = Vec::new();
    for (kind, name, bytes) in builtins() {
        if bytes.is_empty() {
            return Err(RegistryError::Refused(format!(
                "this binary was built without its {kind} component: run `make components`, then rebuild"
            )));
        }
        let parsed_kind = check_kind(kind)?;
        let runtime2 = runtime.clone();
        let loaded = tokio::task::spawn_blocking(move || match name {
            Some(name) => load(&runtime2, kind, name, bytes, None),
            // Strategies are named by the component itself.
            None => StrategyPlugin::load(runtime2, bytes)
                .map(|p| Loaded::Strategy(Arc::new(p)))
                .map_err(|e| RegistryError::Refused(format!("built-in strategy: {e}"))),
        })
        .await
        .map_err(|e| RegistryError::Refused(format!("loading built-ins failed: {e}")))??;
        let name = match (&loaded, name) {
            (Loaded::Strategy(p), _) => p.info().name.clone(),
            (_, Some(n)) => n.to_string(),
            (_, None) => unreachable!("segmentation and scorer built-ins are named"),
        };
        let mut version = loaded.version().to_string();
        let record = |version: &str| PluginRecord {
            kind: parsed_kind,
            name: name.clone(),
            version: version.into(),
            sha256: loaded.sha256().into(),
            size: bytes.len() as i64,
            builtin: true,
            added_by: BUILTIN.into(),
            added_at: chrono::Utc::now().timestamp(),
        };
        if let AddOutcome::Conflict(_) = db.add_plugin(&record(&version), bytes).await? {
            version = format!("{version}+{}", &loaded.sha256()[..12]);
            db.add_plugin(&record(&version), bytes).await?;
        }
        let slot = slot(kind, &name);
        let replace = match active.iter().find(|a| a.slot == slot) {
            None => true,
            Some(a) => a.activated_by == BUILTIN && !(a.name == name && a.version == version),
        };
        if replace {
            db.activate_plugin(
                &slot,
                parsed_kind,
                &name,
                &version,
                BUILTIN,
                chrono::Utc::now().timestamp(),
            )
            .await?;
        }
        out.push((name, version, loaded));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A strategy built against WIT 1.2.0 loads into this host (1.3.0 or
    /// later minor) and passes its self-tests: older minor versions keep
    /// working (wasmtime matches exports by semver compatibility).
    #[test]
    fn a_plugin_of_an_older_minor_wit_version_still_loads_and_runs() {
        let bytes = include_bytes!("../../../tests/fixtures/topn-wit-1.2.0.wasm");
        let runtime = Arc::new(PluginRuntime::new(Default::default()).unwrap());
        let loaded = load(&runtime, "strategy", "topn", bytes, None).unwrap();
        assert_eq!(loaded.version(), "1.0.0");
        self_test(&loaded).unwrap();
        // And a component of another kind is refused by type.
        assert!(matches!(
            load(&runtime, "scorer", "topn", bytes, None),
            Err(RegistryError::Refused(_))
        ));
    }

    #[test]
    fn versions_are_semantic() {
        for ok in [
            "1.0.0",
            "0.1.12",
            "1.0.1-altered",
            "2.0.0+abc123",
            "1.2.3-rc.1+b.7",
        ] {
            assert!(valid_version(ok), "{ok}");
        }
        for bad in [
            "1.0",
            "v1.0.0",
            "1.0.0.0",
            "",
            "1..0",
            "1.0.0 beta",
            "a.b.c",
        ] {
            assert!(!valid_version(bad), "{bad}");
        }
    }

    #[test]
    fn slots_replace_one_engine_and_one_strategy_name() {
        assert_eq!(slot("segmentation", "fast"), "segmentation");
        assert_eq!(slot("scorer", "default"), "scorer");
        assert_eq!(slot("strategy", "topn"), "strategy/topn");
    }

    #[test]
    fn json_differences_name_fields_and_sizes() {
        let a = json!({"current_state": {"median_return": 0.1, "segment": 3},
                       "time_series": {"median_returns": [0.1, 0.2]}, "name": "x"});
        assert!(json_differences(&a, &a).is_empty());
        let b = json!({"current_state": {"median_return": 0.15, "segment": 3},
                       "time_series": {"median_returns": [0.1, 0.25]}, "name": "y"});
        let d = json_differences(&a, &b);
        assert!((d["current_state.median_return"] - 0.05).abs() < 1e-12);
        assert!((d["time_series.median_returns[]"] - 0.05).abs() < 1e-12);
        assert_eq!(d["name"], f64::INFINITY);
        assert!(!d.contains_key("current_state.segment"));
    }
}
