//! The registry's unit tests: old WIT minors, versions, slots, kinds and
//! JSON differences.

use std::sync::Arc;

use forecast_domain::PluginKind;
use forecast_plugins::PluginRuntime;

use super::*;
use serde_json::json;

/// A strategy built against WIT 1.2.0 loads into this host (1.3.0 or
/// later minor) and passes its self-tests: older minor versions keep
/// working (wasmtime matches exports by semver compatibility).
#[test]
fn a_plugin_of_an_older_minor_wit_version_still_loads_and_runs() {
    let bytes = include_bytes!("../../../../tests/fixtures/topn-wit-1.2.0.wasm");
    let runtime = Arc::new(PluginRuntime::new(Default::default()).unwrap());
    let loaded = load(&runtime, PluginKind::Strategy, "topn", bytes, None).unwrap();
    assert_eq!(loaded.version(), "1.0.0");
    let permit = runtime.try_acquire().unwrap();
    self_test(&loaded, &permit).unwrap();
    // And a component of another kind is refused by type.
    assert!(matches!(
        load(&runtime, PluginKind::Scorer, "topn", bytes, None),
        Err(Error::Refused(_))
    ));
}

/// The same strategy built against 1.2.0 (records only) and today (with
/// `allocation-columns`) gives the same backtest, each over its own path,
/// and today's gives it over records too.
#[test]
fn records_and_columns_give_the_same_backtest() {
    let runtime = Arc::new(PluginRuntime::new(Default::default()).unwrap());
    let strategy = |bytes: &[u8]| match load(&runtime, PluginKind::Strategy, "topn", bytes, None) {
        Ok(Loaded::Strategy(p)) => p,
        _ => panic!("not a strategy"),
    };
    let old = strategy(include_bytes!(
        "../../../../tests/fixtures/topn-wit-1.2.0.wasm"
    ));
    let today = strategy(forecast_plugins::builtin::TOPN);
    let permit = runtime.try_acquire().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let fixture = self_test::StrategyFixture::new();

    let mut records = old.instance(&permit, deadline).unwrap();
    assert!(!records.takes_columns(), "1.2.0 has no allocation-columns");
    let by_records = fixture.run(&mut records).unwrap();

    let mut columns = today.instance(&permit, deadline).unwrap();
    assert!(columns.takes_columns());
    let by_columns = fixture.run(&mut columns).unwrap();

    let mut today_records = today.instance(&permit, deadline).unwrap().with_records();
    assert!(!today_records.takes_columns());
    let by_today_records = fixture.run(&mut today_records).unwrap();

    assert!(!by_records.trades.is_empty(), "the fixture trades");
    assert_eq!(by_columns, by_records);
    assert_eq!(by_today_records, by_records);
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
    assert_eq!(slot(PluginKind::Segmentation, "fast"), "segmentation");
    assert_eq!(slot(PluginKind::Scorer, "default"), "scorer");
    assert_eq!(slot(PluginKind::Strategy, "topn"), "strategy/topn");
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

#[test]
fn an_unknown_kind_is_a_400_naming_the_allowed_kinds() {
    assert_eq!(parse_kind("matcher").unwrap(), PluginKind::Matcher);
    match parse_kind("engine") {
        Err(Error::Invalid(m)) => assert_eq!(
            m,
            "unknown plugin kind 'engine'; expected one of: segmentation, scorer, strategy, matcher"
        ),
        other => panic!("{other:?}"),
    }
}
