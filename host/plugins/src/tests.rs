//! Sandbox tests against the real components: the default engine agrees
//! with the native engine, and a misbehaving component is contained.

use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::segmentation::{AnalysisParams, EngineError, Metric};
use forecast_domain::series::PriceSeries;

fn runtime(timeout_ms: u64) -> Arc<PluginRuntime> {
    Arc::new(
        PluginRuntime::new(RuntimeConfig {
            call_timeout: Duration::from_millis(timeout_ms),
            memory_limit: 64 << 20,
            max_concurrency: 2,
            perf_map: false,
            fuel: false,
            guest_log_ceiling: tracing::Level::ERROR,
        })
        .unwrap(),
    )
}

fn misbehave_bytes() -> Vec<u8> {
    let bytes = crate::builtin::MISBEHAVE;
    assert!(
        !bytes.is_empty(),
        "misbehave.wasm is not built: run `make components`"
    );
    bytes.to_vec()
}

fn params(return_period: u32) -> AnalysisParams {
    AnalysisParams {
        return_period,
        num_segments: 20,
        decay_factor: 0.95,
        metric: Metric::TotalReturn,
        periods_per_year: None,
    }
}

fn series(n: usize) -> PriceSeries {
    PriceSeries {
        dates: (0..n as i32).collect(),
        closes: (0..n)
            .map(|i| 100.0 + (i as f64 * 0.37).sin() * 10.0 + i as f64 * 0.05)
            .collect(),
    }
}

#[test]
fn default_engine_loads_and_analyses() {
    let rt = runtime(10_000);
    let permit = rt.try_acquire().unwrap();
    let plugin = SegmentationPlugin::load(rt, "default", builtin::SEGMENTATION).unwrap();
    assert_eq!(plugin.info().kind.as_str(), "segmentation");
    assert_eq!(plugin.info().version, "1.1.0");
    assert_eq!(plugin.info().sha256.len(), 64);
    let a = plugin
        .analyse(&permit, &series(800), params(30))
        .unwrap()
        .unwrap();
    assert_eq!(a.series.expected_returns.len(), 800);
    assert_eq!(a.segments.len(), 20);
    let short = plugin.analyse(&permit, &series(120), params(30)).unwrap();
    assert!(matches!(short, Err(EngineError::InsufficientData(120))));
}

/// The built-in engine exports `evidence` (WIT 1.7.0) and answers it; an
/// engine that exports `engine` only, as one built before 1.7.0 does,
/// still loads and analyses, and says it has no evidence instead of
/// trapping.
#[test]
fn evidence_is_optional_for_an_engine() {
    use crate::segmentation::EvidenceRequest;
    let rt = runtime(10_000);
    let permit = rt.try_acquire().unwrap();
    let builtin = SegmentationPlugin::load(rt.clone(), "default", builtin::SEGMENTATION).unwrap();
    assert!(builtin.has_evidence());
    let request = EvidenceRequest {
        params: params(30),
        segments: vec![0],
    };
    let answer = builtin
        .analyse_evidence(&permit, &series(800), std::slice::from_ref(&request))
        .unwrap();
    let report = answer[0].as_ref().unwrap();
    assert_eq!(report.segments.len(), 1);
    assert_eq!(report.segments[0].segment_idx, 0);
    let states = builtin
        .states_at(
            &permit,
            &series(800),
            &[params(30), params(90)],
            &[299, 500, 799],
        )
        .unwrap();
    assert_eq!(states.len(), 2);
    assert_eq!(states[1].as_ref().unwrap().len(), 3);

    let old = SegmentationPlugin::load(rt, "misbehave", &misbehave_bytes()).unwrap();
    assert!(!old.has_evidence());
    let err = old
        .analyse_evidence(&permit, &series(800), &[request])
        .unwrap_err();
    assert!(err.to_string().contains("no `evidence`"), "{err}");
}

#[test]
fn misbehaving_plugin_is_contained_and_the_runtime_keeps_serving() {
    let rt = runtime(300);
    let permit = rt.try_acquire().unwrap();
    let plugin = SegmentationPlugin::load(rt.clone(), "misbehave", &misbehave_bytes()).unwrap();
    let label = "segmentation/misbehave@0.0.1-misbehave";
    let s = series(10);

    match plugin.analyse(&permit, &s, params(7)) {
        Err(PluginError::Timeout { plugin, millis }) => {
            assert_eq!((plugin.as_str(), millis), (label, 300))
        }
        other => panic!("endless loop: {other:?}"),
    }
    match plugin.analyse(&permit, &s, params(8)) {
        Err(PluginError::OutOfMemory { plugin, mib }) => {
            assert_eq!((plugin.as_str(), mib), (label, 64))
        }
        other => panic!("memory hog: {other:?}"),
    }
    match plugin.analyse(&permit, &s, params(9)) {
        Err(PluginError::Trap { plugin, .. }) => assert_eq!(plugin, label),
        other => panic!("panic: {other:?}"),
    }
    // The log import works and a recoverable error comes back typed.
    assert!(matches!(
        plugin.analyse(&permit, &s, params(10)).unwrap(),
        Err(EngineError::InvalidInput(m)) if m == "misbehave refuses"
    ));
    // After all of that, fresh instances still answer.
    for _ in 0..3 {
        assert!(matches!(
            plugin.analyse(&permit, &s, params(30)).unwrap(),
            Err(EngineError::InsufficientData(10))
        ));
    }
    // And other plugins on the same runtime are unaffected.
    let good = SegmentationPlugin::load(rt, "default", builtin::SEGMENTATION).unwrap();
    assert!(good
        .analyse(&permit, &series(400), params(30))
        .unwrap()
        .is_ok());
}

#[test]
fn a_component_of_another_world_is_refused_at_load() {
    let err = SegmentationPlugin::load(runtime(1_000), "garbage", b"\0asm not really")
        .err()
        .unwrap();
    assert!(
        matches!(err, PluginError::Load { ref plugin, .. } if plugin == "segmentation/garbage"),
        "{err:?}"
    );
}

/// The component is the plain-Rust engine behind the WIT boundary: on the
/// same input it must give the same answer, bit for bit.
#[test]
fn component_agrees_with_the_native_engine() {
    let rt = runtime(10_000);
    let permit = rt.try_acquire().unwrap();
    let plugin = SegmentationPlugin::load(rt, "default", builtin::SEGMENTATION).unwrap();
    let s = series(1_500);
    for (metric, native_metric) in [
        (Metric::TotalReturn, forecast_engine::Metric::Return),
        (Metric::Sharpe, forecast_engine::Metric::Sharpe),
        (Metric::Sortino, forecast_engine::Metric::Sortino),
    ] {
        let wasm = plugin
            .analyse(
                &permit,
                &s,
                AnalysisParams {
                    metric,
                    ..params(60)
                },
            )
            .unwrap()
            .unwrap();
        let native = forecast_engine::analyse(
            &s.dates,
            &s.closes,
            &forecast_engine::Params {
                return_period: 60,
                metric: native_metric,
                ..forecast_engine::Params::default()
            },
        )
        .unwrap();
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let obits = |v: &[Option<f64>]| v.iter().map(|x| x.map(f64::to_bits)).collect::<Vec<_>>();
        assert_eq!(
            bits(&wasm.series.expected_returns),
            bits(&native.series.expected_returns)
        );
        assert_eq!(
            bits(&wasm.series.median_returns),
            bits(&native.series.median_returns)
        );
        assert_eq!(
            obits(&wasm.series.actual_returns),
            obits(&native.series.actual_returns)
        );
        assert_eq!(
            obits(&wasm.series.prediction_error_cumavg),
            obits(&native.series.prediction_error_cumavg)
        );
        assert_eq!(
            wasm.current.best_error.to_bits(),
            native.current.best_error.to_bits()
        );
        assert_eq!(wasm.current.confirmed_count, native.current.confirmed_count);
        assert_eq!(wasm.segments.len(), native.segments.len());
        for (w, n) in wasm.segments.iter().zip(&native.segments) {
            assert_eq!(
                w.median_return.map(f64::to_bits),
                n.median_return.map(f64::to_bits)
            );
            assert_eq!(w.max_loss.map(f64::to_bits), n.max_loss.map(f64::to_bits));
        }
        assert_eq!(wasm.paths.len(), native.paths.len());
        for (w, n) in wasm.paths.iter().zip(&native.paths) {
            assert_eq!(bits(&w.p50), bits(&n.p50));
            assert_eq!(w.num_paths_total, n.num_paths_total);
        }
        assert_eq!(
            wasm.typical_max_drawdown.map(f64::to_bits),
            native.typical_max_drawdown.map(f64::to_bits)
        );
    }
}

#[tokio::test]
async fn many_permits_split_into_one_per_worker_and_free_their_slots() {
    let rt = runtime(1_000);
    let permits = rt.acquire_many(5).await;
    // Capped at the concurrency bound (2), one permit per worker.
    assert_eq!(permits.len(), 2);
    assert!(rt.try_acquire().is_none());
    let mut each = permits.into_iter();
    let first = each.next().unwrap();
    drop(each);
    let second = rt.try_acquire().expect("the dropped permit's slot is free");
    assert!(rt.try_acquire().is_none());
    drop((first, second));
    assert_eq!(rt.acquire_many(2).await.len(), 2);
}

/// Every field of every asset arrives alike by `allocation-columns` and by
/// `allocation` (none, -0 and all), as the guest's `Debug` of them shows.
#[test]
fn a_strategy_sees_the_same_assets_by_columns_and_by_records() {
    use forecast_backtest as bt;
    use forecast_backtest::Strategy as _;

    let rt = runtime(10_000);
    let permit = rt.try_acquire().unwrap();
    let plugin =
        Arc::new(StrategyPlugin::load(rt, strategy::UNNAMED, builtin::MISBEHAVE_STRATEGY).unwrap());
    let asset = |asset: u32, some: bool| bt::AssetState {
        asset,
        price: 101.25 + f64::from(asset),
        drawdown: if some { -0.375 } else { -0.0 },
        segment: asset % 3,
        expected_return: 0.0125,
        median_return: -1e-300,
        prediction_error: some.then_some(0.5),
        median_error: (!some).then_some(0.0),
        zscore: some.then_some(-2.75),
        weight: if some { 0.25 } else { 0.0 },
    };
    let ctx = bt::Context {
        date: 19_000,
        equity: 1_000.0,
        cash: 250.0,
        assets: vec![asset(1, true), asset(3, false)],
    };
    let universe: Vec<bt::AssetMeta> = (0..4)
        .map(|i| bt::AssetMeta {
            ticker: format!("T{i}"),
            name: format!("Asset {i}"),
            category: "Crypto".into(),
        })
        .collect();
    let params = bt::RunParams {
        top_n: 4,
        ..bt::RunParams::default()
    };
    let seen = |records: bool| {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let mut run = plugin.instance(&permit, deadline).unwrap();
        if records {
            run = run.with_records();
        }
        assert_eq!(run.takes_columns(), !records);
        run.start(&universe, &params).unwrap().unwrap();
        // Twice: the second call refills the lists of the first.
        for _ in 0..2 {
            match run.rebalance(&ctx) {
                Err(strategy::RunFailure::Refused { message, .. }) => {
                    assert_eq!(message, format!("{:?}", ctx.assets))
                }
                other => panic!("expected the echo, got {other:?}"),
            }
        }
    };
    seen(false);
    seen(true);
}

/// The on-disk module cache: only what is kept is written; a second
/// runtime of the same configuration loads what the first kept; a runtime
/// configured otherwise (fuel) compiles its own; a damaged file is
/// compiled and written again.
#[test]
fn compiled_components_are_kept_on_disk_per_engine_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let cached = |fuel: bool| {
        let mut rt = PluginRuntime::new(RuntimeConfig {
            fuel,
            ..runtime(10_000).config()
        })
        .unwrap();
        rt.set_module_cache(dir.path()).unwrap();
        Arc::new(rt)
    };
    let counts = |rt: &PluginRuntime| {
        let c = rt.module_cache().unwrap().counts();
        (c.hits, c.misses)
    };
    let first = cached(false);
    let a = StrategyPlugin::load(first.clone(), strategy::UNNAMED, builtin::TOPN).unwrap();
    assert_eq!(counts(&first), (0, 1));
    let files = || {
        let mut v: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    };
    assert!(files().is_empty(), "a compilation alone writes nothing");
    a.keep_compiled();
    a.keep_compiled();
    assert_eq!(files().len(), 1, "one file: {:?}", files());
    assert!(files()[0].starts_with(&a.info().sha256), "{:?}", files());

    let second = cached(false);
    let b = StrategyPlugin::load(second.clone(), strategy::UNNAMED, builtin::TOPN).unwrap();
    assert_eq!(counts(&second), (1, 0), "loaded, not compiled");
    assert_eq!(a.info(), b.info(), "the same strategy");

    let metered = cached(true);
    StrategyPlugin::load(metered.clone(), strategy::UNNAMED, builtin::TOPN)
        .unwrap()
        .keep_compiled();
    assert_eq!(counts(&metered), (0, 1), "another engine compiles its own");
    assert_eq!(files().len(), 2, "{:?}", files());

    // A damaged file: compiled again and replaced.
    for f in files() {
        std::fs::write(dir.path().join(f), b"not compiled code").unwrap();
    }
    let third = cached(false);
    StrategyPlugin::load(third.clone(), strategy::UNNAMED, builtin::TOPN)
        .unwrap()
        .keep_compiled();
    assert_eq!(counts(&third), (0, 1));
    let fourth = cached(false);
    StrategyPlugin::load(fourth.clone(), strategy::UNNAMED, builtin::TOPN).unwrap();
    assert_eq!(counts(&fourth), (1, 0), "the file was written again");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let nested = dir.path().join("nested/modules");
        PluginRuntime::new(RuntimeConfig::default())
            .unwrap()
            .set_module_cache(&nested)
            .unwrap();
        let mode = std::fs::metadata(&nested).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "the folder is the server's alone");
    }
}

/// The evidence and the month-end states cross the boundary unchanged: on
/// the same input the component answers what the native engine computes,
/// bit for bit.
#[test]
fn component_evidence_agrees_with_the_native_engine() {
    use crate::segmentation::EvidenceRequest;
    let rt = runtime(10_000);
    let permit = rt.try_acquire().unwrap();
    let plugin = SegmentationPlugin::load(rt, "default", builtin::SEGMENTATION).unwrap();
    let s = series(1_500);
    let bits = |x: Option<f64>| x.map(f64::to_bits);
    let ends: Vec<u32> = (299..1_500).step_by(61).collect();
    for (metric, native_metric) in [
        (Metric::TotalReturn, forecast_engine::Metric::Return),
        (Metric::Sharpe, forecast_engine::Metric::Sharpe),
        (Metric::Sortino, forecast_engine::Metric::Sortino),
    ] {
        let wasm_params = AnalysisParams {
            metric,
            ..params(60)
        };
        let native_params = forecast_engine::Params {
            return_period: 60,
            metric: native_metric,
            ..forecast_engine::Params::default()
        };
        let wasm = plugin
            .analyse_evidence(
                &permit,
                &s,
                &[EvidenceRequest {
                    params: wasm_params,
                    segments: vec![],
                }],
            )
            .unwrap()
            .remove(0)
            .unwrap();
        let native = forecast_engine::evidence(
            &s.dates,
            &s.closes,
            &[forecast_engine::EvidenceRequest {
                params: native_params,
                segments: vec![],
            }],
        )
        .remove(0)
        .unwrap();
        assert_eq!(
            bits(wasm.unconditional_median),
            bits(native.unconditional_median)
        );
        assert_eq!(wasm.segments.len(), native.segments.len());
        for (w, n) in wasm.segments.iter().zip(&native.segments) {
            assert_eq!(
                (w.segment_idx, w.episodes, w.recovered, w.unrecovered),
                (n.segment_idx, n.episodes, n.recovered, n.unrecovered)
            );
            let q: Vec<u64> = n.quantiles.iter().flatten().map(|x| x.to_bits()).collect();
            assert_eq!(
                w.quantiles.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                q
            );
            assert_eq!(
                w.median_return_ci.map(|(a, b)| (a.to_bits(), b.to_bits())),
                n.median_return_ci.map(|(a, b)| (a.to_bits(), b.to_bits()))
            );
            assert_eq!(bits(w.fell_further), bits(n.fell_further));
            assert_eq!(bits(w.recovery_days_median), bits(n.recovery_days_median));
        }
        let wasm_states = plugin
            .states_at(&permit, &s, &[wasm_params], &ends)
            .unwrap()
            .remove(0)
            .unwrap();
        let native_states =
            forecast_engine::analyse_states_at(&s.dates, &s.closes, &native_params, &ends).unwrap();
        assert_eq!(wasm_states.len(), native_states.len());
        for (w, n) in wasm_states.iter().zip(&native_states) {
            assert_eq!(w.current.segment, n.current.segment);
            assert_eq!(
                w.current.median_return.to_bits(),
                n.current.median_return.to_bits()
            );
            assert_eq!(
                w.current.best_error.to_bits(),
                n.current.best_error.to_bits()
            );
            assert_eq!(w.current.confirmed_count, n.current.confirmed_count);
            assert_eq!(
                bits(w.active_segment.static_median_return),
                bits(n.active_segment.static_median_return)
            );
            assert_eq!(
                bits(w.active_segment.win_rate),
                bits(n.active_segment.win_rate)
            );
            assert_eq!(
                bits(w.active_segment.max_loss),
                bits(n.active_segment.max_loss)
            );
            assert_eq!(w.active_segment.count, n.active_segment.count);
            assert_eq!(bits(w.typical_max_drawdown), bits(n.typical_max_drawdown));
        }
    }
}

/// A small catalog for the matcher tests.
fn matcher_catalog() -> crate::matcher::Catalog {
    use crate::matcher::{CatalogEntry, Prior};
    let entry = |ticker: &str, name: &str, category: &str| CatalogEntry {
        ticker: ticker.into(),
        name: name.into(),
        category: category.into(),
        exchange: String::new(),
        country: String::new(),
        sector: String::new(),
        industry: String::new(),
        website: String::new(),
        summary: String::new(),
    };
    crate::matcher::Catalog {
        version: 7,
        entries: vec![
            entry("AAPL", "Apple Inc.", "US Stocks"),
            entry("BTC-USD", "Bitcoin", "Crypto"),
            entry("ETH-USD", "Ethereum", "Crypto"),
            entry("SOL-USD", "Solana", "Crypto"),
            entry("GC=F", "Gold Futures", "Commodities"),
        ],
        priors: vec![Prior {
            entry: 0,
            prominence: 1.0,
            identifiers: vec!["US0378331005".into()],
        }],
        semantic: None,
    }
}

/// The built-in matcher exports `catalog-priors` and `mentions` (WIT
/// 1.8.0): a list without commas is three mentions, and an ISIN the host
/// sent as a prior names its asset.
#[test]
fn the_builtin_matcher_answers_per_mention_and_knows_the_priors() {
    let rt = runtime(5_000);
    let permit = rt.try_acquire().unwrap();
    let plugin =
        crate::matcher::MatcherPlugin::load(rt.clone(), "default", crate::builtin::MATCHER)
            .unwrap();
    assert!(plugin.has_mentions() && plugin.has_priors());
    let catalog = matcher_catalog();
    let found = plugin
        .find_mentions(&permit, &catalog, "bitcoin ethereum solana", 3)
        .unwrap();
    let texts: Vec<&str> = found.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(texts, ["bitcoin", "ethereum", "solana"]);
    let firsts: Vec<u32> = found.iter().map(|m| m.candidates[0].entry).collect();
    assert_eq!(firsts, [1, 2, 3]);
    assert!(
        found.iter().all(|m| m.candidates[0].confidence >= 0.9),
        "{found:?}"
    );
    let isin = plugin.find(&permit, &catalog, "US0378331005", 3).unwrap();
    assert_eq!(isin.first().map(|c| c.entry), Some(0), "{isin:?}");
}

/// A matcher built before WIT 1.8.0 (`matching` alone) still loads; asked
/// for mentions, the host answers its `find` as one mention, and it never
/// sees the priors.
#[test]
fn a_matcher_without_mentions_or_priors_still_loads_and_answers() {
    let rt = runtime(5_000);
    let permit = rt.try_acquire().unwrap();
    let bytes = crate::builtin::MATCHER_MATCHING_ONLY;
    assert!(!bytes.is_empty(), "run `make components`");
    let plugin = crate::matcher::MatcherPlugin::load(rt.clone(), "old", bytes).unwrap();
    assert!(!plugin.has_mentions() && !plugin.has_priors());
    assert!(plugin.info().version.ends_with("-matching-only"));
    let catalog = matcher_catalog();
    let found = plugin
        .find_mentions(&permit, &catalog, "  gold  ", 3)
        .unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].text, "gold");
    assert_eq!(found[0].candidates.first().map(|c| c.entry), Some(4));
    // No priors reached it: the ISIN names nothing.
    assert!(plugin
        .find(&permit, &catalog, "US0378331005", 3)
        .unwrap()
        .is_empty());
}

/// The built-in engine exports `forecast-inputs` (WIT 1.10.0): through the
/// component, one call answers what `states-at` (its medians),
/// `episodes-at` and `analyse-state` answer, bit for bit; bad ends are an
/// engine error; the `misbehave` fixture (engine only) has none, and
/// asking it is an error naming the interface.
#[test]
fn forecast_inputs_equal_the_three_calls_they_replace() {
    let rt = runtime(10_000);
    let permit = rt.try_acquire().unwrap();
    let plugin =
        Arc::new(SegmentationPlugin::load(rt.clone(), "default", builtin::SEGMENTATION).unwrap());
    assert!(plugin.has_forecast_inputs());
    let s = series(1_500);
    let ends: Vec<u32> = vec![299, 300, 640, 1_001, 1_377, 1_499];
    let mut session = plugin.session();
    for period in [7, 90, 365] {
        let p = params(period);
        let got = session
            .forecast_inputs(&permit, &s, p, &ends)
            .unwrap()
            .unwrap();
        let states = session.states_at(&permit, &s, &[p], &ends).unwrap();
        let medians: Vec<u64> = states[0]
            .as_ref()
            .unwrap()
            .iter()
            .map(|st| st.current.median_return.to_bits())
            .collect();
        let got_medians: Vec<u64> = got.medians.iter().map(|m| m.to_bits()).collect();
        assert_eq!(got_medians, medians, "{period}");
        let episodes = session.episodes_at(&permit, &s, &[p], &ends).unwrap();
        assert_eq!(&got.episodes, episodes[0].as_ref().unwrap(), "{period}");
        let state = session.analyse_state(&permit, &s, p).unwrap().unwrap();
        assert_eq!(format!("{:?}", got.state), format!("{state:?}"), "{period}");
    }
    let bad = session
        .forecast_inputs(&permit, &s, params(30), &[10])
        .unwrap();
    assert!(matches!(bad, Err(EngineError::InvalidInput(_))), "{bad:?}");

    let old = Arc::new(SegmentationPlugin::load(rt, "misbehave", &misbehave_bytes()).unwrap());
    assert!(!old.has_forecast_inputs());
    let err = old
        .session()
        .forecast_inputs(&permit, &s, params(30), &ends)
        .unwrap_err();
    assert!(err.to_string().contains("no `forecast-inputs`"), "{err}");
}

/// The built-in engine exports `episodes` (WIT 1.9.0): per parameter set
/// and end, the episodes of the current bucket that the native evidence of
/// the series cut after that row reports, on a fresh instance and on a
/// session alike. The `misbehave` fixture (engine only) loads, has none,
/// and asking it is an error naming the interface.
#[test]
fn episodes_are_optional_and_equal_the_evidence_of_the_cut_series() {
    let rt = runtime(10_000);
    let permit = rt.try_acquire().unwrap();
    let plugin =
        Arc::new(SegmentationPlugin::load(rt.clone(), "default", builtin::SEGMENTATION).unwrap());
    assert!(plugin.has_episodes());
    let s = series(1_500);
    let ends: Vec<u32> = vec![299, 300, 640, 1_001, 1_377, 1_499];
    let periods = [7, 30, 90, 365];
    let wit_params: Vec<AnalysisParams> = periods.iter().map(|&p| params(p)).collect();
    let all_ok = |answers: Vec<Result<Vec<u32>, EngineError>>| -> Vec<Vec<u32>> {
        answers.into_iter().map(|r| r.unwrap()).collect()
    };
    let answers = all_ok(plugin.episodes_at(&permit, &s, &wit_params, &ends).unwrap());
    let mut session = plugin.session();
    let on_session = session.episodes_at(&permit, &s, &wit_params, &ends);
    assert_eq!(all_ok(on_session.unwrap()), answers);
    assert_eq!(answers.len(), periods.len());
    // A weekly horizon on an oscillating series: many visits per bucket.
    assert!(answers[0].iter().any(|&c| c > 10), "{answers:?}");
    for (&period, got) in periods.iter().zip(&answers) {
        assert_eq!(got.len(), ends.len());
        let native = forecast_engine::Params {
            return_period: period,
            num_segments: 20,
            ..forecast_engine::Params::default()
        };
        let states =
            forecast_engine::analyse_states_at(&s.dates, &s.closes, &native, &ends).unwrap();
        for ((&end, &count), state) in ends.iter().zip(got).zip(&states) {
            let m = end as usize + 1;
            let evidence = forecast_engine::evidence(
                &s.dates[..m],
                &s.closes[..m],
                &[forecast_engine::EvidenceRequest {
                    params: native,
                    segments: vec![state.current.segment],
                }],
            )
            .remove(0)
            .unwrap();
            assert_eq!(count, evidence.segments[0].episodes, "{period} {end}");
        }
    }
    // Bad ends are an engine error for every set, not a trap.
    let bad = plugin.episodes_at(&permit, &s, &wit_params, &[10]).unwrap();
    assert!(bad
        .iter()
        .all(|r| matches!(r, Err(EngineError::InvalidInput(_)))));

    let old = SegmentationPlugin::load(rt, "misbehave", &misbehave_bytes()).unwrap();
    assert!(!old.has_episodes());
    let err = old
        .episodes_at(&permit, &s, &wit_params, &ends)
        .unwrap_err();
    assert!(err.to_string().contains("no `episodes`"), "{err}");
}

/// A hand-made month-end history at horizon 30 for the scorer's
/// `forecasting` (WIT 1.9.0): point 0 without a climatology; then a
/// climatology mean u = 0.01 (sd 0.05 over 4 horizons), pooled history with
/// slope 0.5 (base 0.02, reference 0.02), and realised returns that exceed
/// the base by exactly the bucket's edge `median − u`, each known at the
/// next point's date. The last point's edge is +0.05 with 30 episodes.
fn scorer_history() -> Vec<crate::scorer::Point> {
    use crate::scorer::{Climatology, Point, Pooled};
    let u = 0.01;
    let pooled = Pooled {
        rows: 200,
        assets: 5,
        sum_x: 2.0,
        sum_y: 4.0,
        sum_xx: 0.5 + 0.02,
        sum_xy: 0.25 + 0.04,
        sum_yy: 1.0 + 0.08,
    };
    let n: i32 = 30;
    (0..n)
        .map(|k| {
            let edge = if k == n - 1 {
                0.05
            } else {
                0.03 * (f64::from(k) * 0.9).sin()
            };
            Point {
                date: 30 * k,
                median_return: u + edge,
                episodes: 30,
                climatology: (k > 0).then_some(Climatology {
                    count: 100,
                    horizons: 4.0,
                    mean: u,
                    sd: 0.05,
                    p10: u - 0.06,
                    p90: u + 0.07,
                }),
                pooled: Some(pooled),
                realised: (k < n - 1).then_some(0.02 + edge),
                known: 30 * k + 30,
            }
        })
        .collect()
}

/// The built-in scorer (2.1.0) exports `forecasting` and answers the
/// hand-made history: no forecast without a climatology, the pooled base
/// while fewer than 12 pairs are known, then the base plus the
/// episode-weighted edge (the bucket predicts perfectly, so beta* = 1).
#[test]
fn the_builtin_scorer_forecasts_a_hand_made_history() {
    let rt = runtime(5_000);
    let permit = rt.try_acquire().unwrap();
    let plugin = ScorerPlugin::load(rt, "default", builtin::SCORER).unwrap();
    assert_eq!(plugin.info().version, "2.1.0");
    assert!(plugin.has_forecasting());
    let points = scorer_history();
    let graded = plugin.forecast(&permit, 30, &points).unwrap();
    assert_eq!(graded.len(), points.len());
    let first = &graded[0];
    assert!(first.forecast.is_none());
    assert_eq!(
        (first.letter.as_str(), first.score, first.thin),
        ("C", 50.0, true)
    );
    for g in &graded[1..13] {
        let f = g.forecast.as_ref().unwrap();
        assert_eq!(f.method, "calibrated");
        assert!((f.central - 0.02).abs() < 1e-12, "{g:?}");
        assert!((f.reference - 0.02).abs() < 1e-12, "{g:?}");
    }
    // The last point: central = 0.02 + 30/40 · 0.05; se² = the fit's
    // 0.875/198 · 1/200 plus the climatology's 0.5² · 0.05² / 4; z ≈ 2.8.
    let last = graded.last().unwrap();
    let f = last.forecast.as_ref().unwrap();
    assert!((f.central - 0.0575).abs() < 1e-9, "{last:?}");
    assert!((f.p10 - (0.0575 - 0.06)).abs() < 1e-9 && (f.p90 - (0.0575 + 0.07)).abs() < 1e-9);
    let se = (0.875f64 / 198.0 / 200.0 + 0.25 * 0.0025 / 4.0).sqrt();
    assert!((f.central_se - se).abs() < 1e-9, "{last:?}");
    assert_eq!(last.letter, "A", "{last:?}");
    assert!(!last.thin && last.score > 99.0, "{last:?}");
    // An empty history is an empty answer.
    assert!(plugin.forecast(&permit, 30, &[]).unwrap().is_empty());
}

/// The kept `scorer_classic` (today's scorer before WIT 1.9.0: `scoring`
/// alone, version 1.0.0) still loads, has no `forecasting`, and grades as
/// the built-in does; asked for forecasts it is an error naming the
/// interface.
#[test]
fn the_classic_scorer_loads_without_forecasting_and_grades_as_before() {
    use crate::scorer::ScoreInput;
    let rt = runtime(5_000);
    let permit = rt.try_acquire().unwrap();
    let bytes = builtin::SCORER_CLASSIC;
    assert!(!bytes.is_empty(), "run `make components`");
    assert!(builtin::kept().any(|c| c.stem == "scorer_classic"));
    let classic = ScorerPlugin::load(rt.clone(), "default", bytes).unwrap();
    assert_eq!(classic.info().version, "1.0.0");
    assert!(!classic.has_forecasting());
    let today = ScorerPlugin::load(rt, "default", builtin::SCORER).unwrap();
    let inputs: Vec<ScoreInput> = (0..20)
        .map(|i| ScoreInput {
            median_return: -0.1 + 0.01 * i as f64,
            expected_return: 0.0,
            best_error: 0.05,
            win_rate: (i % 3 != 0).then_some(0.05 * i as f64),
            insufficient_data: i % 5 == 0,
            drawdown: -0.2,
        })
        .collect();
    let grades = classic.score(&permit, &inputs).unwrap();
    assert_eq!(grades, today.score(&permit, &inputs).unwrap());
    // z = 0 and no win rate: 100 · (0.6 · 0.5 + 0.4 · 0.5) = 50, C.
    assert_eq!((grades[10].letter.as_str(), grades[10].score), ("C", 50.0));
    let err = classic
        .forecast(&permit, 30, &scorer_history())
        .unwrap_err();
    assert!(err.to_string().contains("no `forecasting`"), "{err}");
}

/// The `scorer_worse` fixture (2.1.0-worse) forecasts the bucket's raw
/// median: the same history gets other answers.
#[test]
fn the_worse_scorer_answers_differently() {
    let rt = runtime(5_000);
    let permit = rt.try_acquire().unwrap();
    let bytes = builtin::SCORER_WORSE;
    assert!(!bytes.is_empty(), "run `make components`");
    let worse = ScorerPlugin::load(rt.clone(), "default", bytes).unwrap();
    assert_eq!(worse.info().version, "2.1.0-worse");
    assert!(worse.has_forecasting());
    let today = ScorerPlugin::load(rt, "default", builtin::SCORER).unwrap();
    let points = scorer_history();
    let a = today.forecast(&permit, 30, &points).unwrap();
    let b = worse.forecast(&permit, 30, &points).unwrap();
    assert_eq!(b.len(), points.len());
    assert_ne!(a, b);
    for (p, g) in points.iter().zip(&b).skip(1) {
        assert_eq!(g.forecast.as_ref().unwrap().central, p.median_return);
    }
}

/// A writer that keeps what the log subscriber writes, for the log budget's
/// test.
#[derive(Clone, Default)]
struct Captured(Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A guest that floods `host-log` (5,000 lines of 3,000 characters, 15 MB)
/// writes at most the instance's budget: [`crate::GUEST_LOG_LINES`] lines
/// and [`crate::GUEST_LOG_BYTES`] of messages, plus one warning that the
/// rest was dropped; its newlines and ESC arrive escaped, so it forges no
/// line. The call itself still answers.
#[test]
fn a_flooding_guest_writes_at_most_its_log_budget() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::DEBUG)
        .finish();
    let rt = runtime(10_000);
    let permit = rt.try_acquire().unwrap();
    let plugin = SegmentationPlugin::load(rt, "misbehave", &misbehave_bytes()).unwrap();
    let answer = tracing::subscriber::with_default(subscriber, || {
        plugin.analyse(&permit, &series(10), params(13)).unwrap()
    });
    assert!(matches!(answer, Err(EngineError::InvalidInput(m)) if m == "misbehave flooded"));
    let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let guest = lines.iter().filter(|l| l.contains("xxxx")).count();
    let dropped = lines
        .iter()
        .filter(|l| l.contains("further lines dropped"))
        .count();
    // 64 KiB of 2,000-character lines: 32 of them; never more than 200.
    assert_eq!(
        guest,
        crate::GUEST_LOG_BYTES / 2_000,
        "{} lines written",
        lines.len()
    );
    assert_eq!(dropped, 1);
    assert!(
        !lines.iter().any(|l| l.starts_with("2026-01-01")),
        "a forged line"
    );
    assert!(!text.contains('\u{1b}'), "an unescaped ESC");
    assert!(text.contains("\\n2026-01-01T00:00:00Z  INFO forged\\u{1b}[31m"));
    assert!(
        text.len() < crate::GUEST_LOG_BYTES + 40 * 200,
        "{} bytes",
        text.len()
    );
}

#[test]
fn guest_lines_are_escaped_and_cut_and_the_budget_counts_lines_and_bytes() {
    use crate::{escape_guest_line, LogBudget};
    assert_eq!(
        escape_guest_line("a\nb\r\tc\u{1b}[0m é"),
        "a\\nb\\r\\tc\\u{1b}[0m é"
    );
    assert_eq!(escape_guest_line(&"y".repeat(5_000)).len(), 2_000);
    // An escape at the cut is cut too: exactly 2,000 characters.
    let cut = escape_guest_line(&format!("{}\n", "z".repeat(1_999)));
    assert_eq!(cut.chars().count(), 2_000);
    assert!(cut.ends_with('\\'));
    let mut b = LogBudget::default();
    assert!(b.take(crate::GUEST_LOG_BYTES));
    assert!(!b.take(1));
    assert_eq!(
        (b.lines, b.bytes, b.dropped),
        (crate::GUEST_LOG_LINES - 1, 0, 1)
    );
    let mut b = LogBudget::default();
    for _ in 0..crate::GUEST_LOG_LINES {
        assert!(b.take(1));
    }
    assert!(!b.take(1));
    assert_eq!(b.dropped, 1);
}

/// Every component the project builds keeps the upload limits with room
/// to spare (one memory, a few core modules, under a megabyte of data),
/// and a guest's line is written no louder than the runtime's ceiling.
#[test]
fn built_components_keep_the_upload_shape_limits() {
    use crate::shape::{shape, LIMITS};
    for c in crate::builtin::ALL.iter().filter(|c| !c.bytes.is_empty()) {
        let s = shape(c.bytes).unwrap_or_else(|e| panic!("{}: {e}", c.stem));
        eprintln!("{}: {s:?}", c.stem);
        s.check(&LIMITS)
            .unwrap_or_else(|e| panic!("{}: {e} ({s:?})", c.stem));
        assert!(s.core_modules >= 1 && s.memories >= 1, "{}: {s:?}", c.stem);
        assert!(s.data_extent < 4 << 20, "{}: {s:?}", c.stem);
    }
    assert!(shape(b"not wasm").is_err());
    // Quieter is greater: a guest's WARN under a DEBUG ceiling is DEBUG.
    assert_eq!(
        tracing::Level::WARN.max(tracing::Level::DEBUG),
        tracing::Level::DEBUG
    );
    assert_eq!(
        tracing::Level::DEBUG.max(tracing::Level::ERROR),
        tracing::Level::DEBUG
    );
}

/// Issue 40, finding 8: a module cache folder others could write is made
/// 0700 and emptied (a planted file never loads), a crash's temporary
/// files are removed at start, a file others may write or whose digest
/// does not match is compiled again, and `forget` removes a deleted
/// upload's file.
#[cfg(unix)]
#[test]
fn the_module_cache_trusts_only_its_own_files() {
    use std::os::unix::fs::PermissionsExt;
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("modules");
    let open = || {
        let mut rt = PluginRuntime::new(runtime(10_000).config()).unwrap();
        rt.set_module_cache(&dir).unwrap();
        Arc::new(rt)
    };
    let files = || -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    };
    let rt = open();
    let p = StrategyPlugin::load(rt.clone(), strategy::UNNAMED, builtin::TOPN).unwrap();
    p.keep_compiled();
    let kept = files();
    assert_eq!(kept.len(), 1);
    let file = dir.join(&kept[0]);
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&file), 0o600, "written for the server alone");

    // A file others may write is not loaded, and is replaced.
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
    let again = open();
    StrategyPlugin::load(again.clone(), strategy::UNNAMED, builtin::TOPN)
        .unwrap()
        .keep_compiled();
    let c = again.module_cache().unwrap().counts();
    assert_eq!((c.hits, c.misses), (0, 1), "compiled again");
    assert_eq!(mode(&file), 0o600);

    // A folder opened to everyone: made 0700 and emptied at start, a
    // crash's temporary file too.
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::write(dir.join("planted.tmp1-2"), b"x").unwrap();
    let reopened = open();
    assert_eq!(mode(&dir), 0o700);
    assert!(files().is_empty(), "{:?}", files());
    StrategyPlugin::load(reopened.clone(), strategy::UNNAMED, builtin::TOPN)
        .unwrap()
        .keep_compiled();
    std::fs::write(dir.join("left.tmp99-0"), b"half a file").unwrap();
    open();
    assert_eq!(
        files(),
        kept,
        "the temporary file went, the kept one stayed"
    );
    reopened.module_cache().unwrap().forget(&p.info().sha256);
    assert!(files().is_empty());
}

/// What a compiled strategy holds in memory: the project's own compile to
/// well under a megabyte, far under the uploads' 32 MiB cap.
#[test]
fn compiled_strategies_are_small() {
    for (stem, bytes) in [("topn", builtin::TOPN), ("zscore", builtin::ZSCORE)] {
        let p = StrategyPlugin::load(runtime(10_000), strategy::UNNAMED, bytes).unwrap();
        eprintln!("{stem}: {} bytes compiled", p.compiled_bytes());
        assert!(p.compiled_bytes() > 10_000 && p.compiled_bytes() < 8 << 20);
    }
}
