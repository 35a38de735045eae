//! The self-tests a candidate must pass before it is activated or
//! shadowed, one function per kind, on fixed fixtures.

use std::sync::Arc;

use forecast_domain::defaults;
use forecast_domain::series::PriceSeries;
use forecast_plugins::matcher::{Catalog, CatalogEntry};
use forecast_plugins::segmentation::{AnalysisParams, EngineError, Metric};
use forecast_plugins::{
    MatcherPlugin, Permit, PluginError, ScorerPlugin, SegmentationPlugin, StrategyPlugin,
};

use super::{Error, Loaded};

/// Runs `kind`'s self-test vectors against a loaded candidate: the engine
/// on a fixture series must satisfy the engine's invariants (drawdown
/// definition, one value per row, walk-forward = analyse, analyse-state =
/// analyse = analyse-states, no look-ahead under a cut, short input
/// refused); the scorer must grade in [0, 100], one grade per input,
/// deterministically; a strategy
/// must complete a weekly backtest over fixture data inside its contract.
/// Blocking; the calls run one after another under `permit`.
pub fn self_test(plugin: &Loaded, permit: &Permit) -> Result<(), Error> {
    let result = match plugin {
        Loaded::Segmentation(p) => segmentation(p, permit),
        Loaded::Scorer(p) => scorer(p, permit),
        Loaded::Strategy(p) => strategy(p, permit),
        Loaded::Matcher(p) => matcher(p, permit),
    };
    result.map_err(|m| Error::Refused(format!("self-test failed: {m}")))
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

fn segmentation(p: &Arc<SegmentationPlugin>, permit: &Permit) -> Result<(), String> {
    let series = fixture_series(900, 0x5eed);
    let n = series.len();
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    for metric in [Metric::TotalReturn, Metric::Sharpe, Metric::Sortino] {
        let params = AnalysisParams {
            return_period: 30,
            num_segments: defaults::NUM_SEGMENTS,
            decay_factor: defaults::DECAY_FACTOR,
            metric,
            periods_per_year: Some(252),
        };
        let full = call(p.analyse(permit, &series, params), "analyse")?;
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
        let state = call(p.analyse_state(permit, &series, params), "analyse-state")?;
        if format!("{:?}", state.current) != format!("{:?}", full.current) {
            return Err("analyse-state's current state differs from analyse's".into());
        }
        // analyse-states answers each set as analyse-state does, in order.
        let other = AnalysisParams {
            return_period: 90,
            ..params
        };
        let states = p
            .analyse_states(permit, &series, &[other, params])
            .map_err(|e| format!("analyse-states failed: {e}"))?;
        let same = match states.as_slice() {
            [Ok(_), Ok(second)] => format!("{second:?}") == format!("{state:?}"),
            _ => false,
        };
        if !same {
            return Err("analyse-states differs from analyse-state".into());
        }
        let mut session = p.session();
        let wf = call(
            session.walk_forward(permit, &series, params, None),
            "walk-forward",
        )?;
        if bits(&wf.median_returns) != bits(&s.median_returns)
            || bits(&wf.drawdowns) != bits(&s.drawdowns)
        {
            return Err("walk-forward differs from analyse's series".into());
        }
        let cut = series.window(
            None,
            Some(forecast_domain::series::from_days(series.dates[700])),
        );
        let part = call(p.analyse(permit, &cut, params), "analyse")?;
        if bits(&part.series.median_returns) != bits(&s.median_returns[..cut.len()]) {
            return Err("look-ahead: cutting the history changed earlier predictions".into());
        }
    }
    let short = fixture_series(100, 7);
    match p.analyse(
        permit,
        &short,
        AnalysisParams {
            return_period: 30,
            num_segments: defaults::NUM_SEGMENTS,
            decay_factor: defaults::DECAY_FACTOR,
            metric: Metric::TotalReturn,
            periods_per_year: None,
        },
    ) {
        Ok(Err(EngineError::InsufficientData(_))) => Ok(()),
        _ => Err("100 rows are not refused as insufficient data".into()),
    }
}

fn scorer(p: &ScorerPlugin, permit: &Permit) -> Result<(), String> {
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
    let grades = p
        .score(permit, &inputs)
        .map_err(|e| format!("score failed: {e}"))?;
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
    let again = p
        .score(permit, &inputs)
        .map_err(|e| format!("score failed: {e}"))?;
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

/// The strategy self-test's market: four fixture assets with plausible
/// point-in-time signals made without an engine.
pub(super) struct StrategyFixture {
    series: Vec<PriceSeries>,
    metas: Vec<forecast_backtest::AssetMeta>,
    signals: Vec<forecast_backtest::Signals>,
}

impl StrategyFixture {
    pub(super) fn new() -> Self {
        use forecast_backtest as bt;
        let series: Vec<PriceSeries> = (0..4).map(|i| fixture_series(700, 11 + i)).collect();
        let metas = (0..4)
            .map(|i| bt::AssetMeta {
                ticker: format!("T{i}"),
                name: format!("Fixture {i}"),
                category: "US Stocks".into(),
            })
            .collect();
        // Drawdowns and predictions that move with them.
        let signals = series
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
        StrategyFixture {
            series,
            metas,
            signals,
        }
    }

    /// A weekly `top_n = 2` backtest of `run` over the whole fixture.
    pub(super) fn run<S: forecast_backtest::Strategy>(
        &self,
        run: &mut S,
    ) -> Result<forecast_backtest::Report, forecast_backtest::RunError<S::Error>> {
        use forecast_backtest as bt;
        let inputs: Vec<bt::AssetInput<'_>> = (0..self.series.len())
            .map(|i| bt::AssetInput {
                meta: &self.metas[i],
                cost_bps: 6.0,
                dates: &self.series[i].dates,
                closes: &self.series[i].closes,
                signals: &self.signals[i],
            })
            .collect();
        let window = bt::Window {
            start: self.series[0].dates[0],
            end: *self.series[0].dates.last().expect("rows"),
        };
        let params = bt::RunParams {
            top_n: 2,
            rebalance: bt::Rebalance::Weekly,
            ..bt::RunParams::default()
        };
        bt::run(&inputs, window, &params, run, &mut || false)
    }
}

fn strategy(p: &Arc<StrategyPlugin>, permit: &Permit) -> Result<(), String> {
    use forecast_backtest as bt;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let run = p
        .instance(permit, deadline)
        .map_err(|e| format!("instantiate failed: {e}"))?;
    let fixture = StrategyFixture::new();
    // A strategy that takes weights gets an equal share of each asset.
    let weights: Vec<(String, f64)> = fixture
        .metas
        .iter()
        .map(|m| (m.ticker.clone(), 1.0 / fixture.metas.len() as f64))
        .collect();
    let mut run = match run.takes_weights() {
        true => run.with_weights(Some(&weights)),
        false => run,
    };
    match fixture.run(&mut run) {
        Ok(_) => Ok(()),
        Err(bt::RunError::Param(e)) => Err(format!("refused the default parameters: {e}")),
        Err(bt::RunError::Contract(m)) => Err(format!("broke the strategy contract: {m}")),
        Err(bt::RunError::Strategy(e)) => Err(format!("failed: {e:?}")),
        Err(e) => Err(format!("did not complete: {e:?}")),
    }
}

fn matcher(p: &MatcherPlugin, permit: &Permit) -> Result<(), String> {
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
        priors: Vec::new(),
        semantic: None,
    };
    let find = |text: &str| {
        p.find(permit, &catalog, text, 3)
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
