//! The declaration of the settings against its documentation, the rules
//! it must keep, and the repository's use of `FORECAST_*` names.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::docs;
use super::*;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn err(pairs: &[(&str, &str)]) -> String {
    Config::from_pairs(pairs)
        .expect_err("a configuration error")
        .to_string()
}

#[test]
fn docs_config_md_is_current() {
    let path = repo().join("docs/CONFIG.md");
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == docs::markdown(),
        "docs/CONFIG.md differs from `forecast config --markdown` (the settings of \
         host/src/config.rs): run `make config-docs` and commit docs/CONFIG.md"
    );
}

#[test]
fn every_setting_has_a_variable_a_matching_flag_and_help() {
    let cmd = command();
    let mut names = Vec::new();
    for a in cmd.get_arguments() {
        let name = a
            .get_env()
            .and_then(|e| e.to_str())
            .unwrap_or_else(|| panic!("--{:?} has no variable", a.get_long()));
        let expected = name
            .strip_prefix("FORECAST_")
            .unwrap_or(name)
            .to_ascii_lowercase()
            .replace('_', "-");
        assert_eq!(a.get_long(), Some(expected.as_str()), "the flag of {name}");
        assert!(
            name.starts_with("FORECAST_") || name == "DATABASE_URL",
            "{name}"
        );
        assert!(a.get_help().is_some(), "{name} has no help");
        assert!(a.get_help_heading().is_some(), "{name} has no group");
        names.push(name.to_string());
    }
    let count = names.len();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), count, "a variable declared twice");
    assert_eq!(docs::entries().len(), count);
}

#[test]
fn the_defaults_are_those_of_the_layers() {
    let c = Config::from_pairs(&[]).unwrap();
    assert_eq!(c.addr, DEFAULT_ADDR);
    assert_eq!(c.database_url, DEFAULT_DATABASE_URL);
    let runtime = RuntimeConfig::default();
    assert_eq!(c.runtime.call_timeout, runtime.call_timeout);
    assert_eq!(c.runtime.memory_limit, runtime.memory_limit);
    assert_eq!(c.runtime.max_concurrency, runtime.max_concurrency);
    assert_eq!(c.quota, QuotaConfig::default());
    let limits = crate::server::Limits::default();
    assert_eq!(c.limits.header_timeout, limits.header_timeout);
    assert_eq!(c.limits.idle_timeout, limits.idle_timeout);
    assert_eq!(c.limits.body_timeout, limits.body_timeout);
    // The server's 60 s, raised to an upload's longest (10 s for a heavy-work
    // turn, 60 s to compile) plus 5 s.
    assert_eq!(limits.request_timeout, Duration::from_secs(60));
    assert_eq!(c.limits.request_timeout, Duration::from_secs(75));
    // The setting's default is the uploads' service's own.
    assert_eq!(
        c.upload_compile_timeout,
        forecast_research::authored::COMPILE_DEADLINE
    );
    assert_eq!(c.limits.max_connections, limits.max_connections);
    assert_eq!(c.limits.shutdown_grace, limits.shutdown_grace);
    assert_eq!(c.backtest_timeout, DEFAULT_BACKTEST_TIMEOUT);
    assert_eq!(c.backtest_queue_wait, DEFAULT_BACKTEST_QUEUE_WAIT);
    assert_eq!(c.backtests_per_user, DEFAULT_BACKTESTS_PER_USER);
    assert_eq!(
        c.grading_lease,
        Duration::from_secs(forecast_jobs::grading::LEASE_SECONDS as u64)
    );
    assert_eq!(c.yahoo_url, yahoo::DEFAULT_BASE_URL);
    assert_eq!(c.stooq_url, stooq::DEFAULT_BASE_URL);
    assert_eq!(
        c.model,
        ModelSetting::Default(PathBuf::from(forecast_embed::DEFAULT_DIR))
    );
    assert!(c.grading && !c.runtime.perf_map && !c.demo_account);
    assert_eq!(c.grade_at.to_string(), "02:00:00");
    assert_eq!(c.signal_cache_bytes, 1024 << 20);
    assert_eq!(c.plugin_poll, Duration::from_secs(1));
    assert_eq!(
        (c.match_per_minute, c.client_per_minute),
        (30, 600),
        "per-minute limits"
    );
    assert_eq!(
        c.login_concurrency,
        std::thread::available_parallelism().map_or(2, |n| n.get())
    );
    assert!(c.origin.is_none() && c.cookie_secure.is_none() && c.admin_token.is_none());
    assert!(c.refresh.is_none() && c.llm.is_none() && c.metrics_addr.is_none());
    assert!(c.plugin_dir.is_none() && c.segmentation_wasm.is_none());
    assert!(c.upgrade_url.is_none());
}

#[test]
fn values_are_parsed_by_their_rules() {
    let c = Config::from_pairs(&[
        ("FORECAST_ADDR", "0.0.0.0:0"),
        ("DATABASE_URL", "sqlite://x.db"),
        ("FORECAST_ORIGIN", "https://f.example.com//"),
        ("FORECAST_COOKIE_SECURE", " Off "),
        ("FORECAST_ADMIN_TOKEN", "  0123456789abcdef  "),
        ("FORECAST_METRICS_ADDR", " 127.0.0.1:0 "),
        ("FORECAST_PLUGIN_MEMORY_MB", "16"),
        ("FORECAST_SIGNAL_CACHE_MB", "0"),
        ("FORECAST_BACKTEST_QUEUE_MS", "0"),
        ("FORECAST_SHUTDOWN_GRACE_MS", "0"),
        ("FORECAST_PLUGIN_POLL_MS", "50"),
        ("FORECAST_GRADING", "off"),
        ("FORECAST_GRADE_AT", " 23:30 "),
        ("FORECAST_REFRESH_AT", "06:15:30"),
        ("FORECAST_REFRESH_PROVIDER", " Stooq "),
        ("FORECAST_YAHOO_URL", "   "),
        ("FORECAST_STOOQ_URL", "http://127.0.0.1:0"),
        ("FORECAST_MODEL_DIR", "off"),
        ("FORECAST_LLM_URL", " http://llm/v1 "),
        ("FORECAST_LLM_MODEL", "m"),
        ("FORECAST_LLM_API_KEY", ""),
        ("FORECAST_WASM_PERFMAP", "1"),
        ("FORECAST_LOGIN_CONCURRENCY", "3"),
        ("FORECAST_REQUEST_TIMEOUT_MS", "70001"),
        ("FORECAST_BACKTEST_TIMEOUT_MS", "30000"),
        (
            "FORECAST_UPGRADE_URL",
            " https://shop.example.com/upgrade?plan=premium ",
        ),
    ])
    .unwrap();
    assert_eq!(
        c.upgrade_url.as_deref(),
        Some("https://shop.example.com/upgrade?plan=premium")
    );
    assert_eq!(c.addr, "0.0.0.0:0");
    assert_eq!(c.database_url, "sqlite://x.db");
    assert_eq!(c.origin.as_deref(), Some("https://f.example.com"));
    assert_eq!(c.cookie_secure, Some(false));
    assert_eq!(c.admin_token.as_deref(), Some("0123456789abcdef"));
    assert_eq!(c.metrics_addr.as_deref(), Some("127.0.0.1:0"));
    assert_eq!(c.runtime.memory_limit, 16 << 20);
    assert_eq!(c.signal_cache_bytes, 0);
    assert_eq!(c.backtest_queue_wait, Duration::ZERO);
    assert_eq!(c.limits.shutdown_grace, Duration::ZERO);
    assert_eq!(c.limits.request_timeout, Duration::from_millis(70_001));
    assert_eq!(c.plugin_poll, Duration::from_millis(50));
    assert!(!c.grading && c.runtime.perf_map);
    assert_eq!(c.grade_at.to_string(), "23:30:00");
    let refresh = c.refresh.unwrap();
    assert_eq!(refresh.at.to_string(), "06:15:30");
    assert_eq!(refresh.provider, ProviderKind::Stooq);
    assert_eq!(c.yahoo_url, yahoo::DEFAULT_BASE_URL);
    assert_eq!(c.stooq_url, "http://127.0.0.1:0");
    assert_eq!(c.model, ModelSetting::Off);
    let llm = c.llm.unwrap();
    assert_eq!(
        (llm.url.as_str(), llm.model.as_str()),
        ("http://llm/v1", "m")
    );
    assert_eq!(llm.api_key, None);
    assert_eq!(llm.timeout, Duration::from_secs(2));
    assert_eq!(c.login_concurrency, 3);

    // Empty values of optional settings are unset.
    let c = Config::from_pairs(&[
        ("FORECAST_ADMIN_TOKEN", ""),
        ("FORECAST_REFRESH_AT", " "),
        ("FORECAST_PLUGIN_DIR", ""),
        ("FORECAST_LLM_URL", ""),
        ("FORECAST_MODEL_DIR", ""),
        ("FORECAST_METRICS_ADDR", " "),
        ("FORECAST_UPGRADE_URL", "  "),
    ])
    .unwrap();
    assert!(c.upgrade_url.is_none());
    assert!(c.admin_token.is_none() && c.refresh.is_none() && c.plugin_dir.is_none());
    assert!(c.llm.is_none() && c.metrics_addr.is_none());
    assert!(matches!(c.model, ModelSetting::Default(_)));
    let c = Config::from_pairs(&[("FORECAST_MODEL_DIR", "/m")]).unwrap();
    assert_eq!(c.model, ModelSetting::Required("/m".into()));
}

#[test]
fn switches_take_the_same_spellings() {
    for (raw, on) in [
        ("on", true),
        ("ON", true),
        ("true", true),
        ("yes", true),
        ("1", true),
        ("off", false),
        ("false", false),
        ("No", false),
        ("0", false),
    ] {
        for name in [
            "FORECAST_GRADING",
            "FORECAST_COOKIE_SECURE",
            "FORECAST_WASM_PERFMAP",
        ] {
            let c = Config::from_pairs(&[(name, raw)]).unwrap();
            let got = match name {
                "FORECAST_GRADING" => c.grading,
                "FORECAST_COOKIE_SECURE" => c.cookie_secure.unwrap(),
                _ => c.runtime.perf_map,
            };
            assert_eq!(got, on, "{name}={raw}");
        }
    }
    let e = err(&[("FORECAST_GRADING", "maybe")]);
    assert_eq!(
        e,
        "FORECAST_GRADING (--grading): expected on or off (or true/false, yes/no, 1/0), \
         got 'maybe'"
    );
}

#[test]
fn errors_name_the_variable() {
    assert_eq!(
        err(&[("FORECAST_PLUGIN_TIMEOUT_MS", "soon")]),
        "FORECAST_PLUGIN_TIMEOUT_MS (--plugin-timeout-ms): expected an integer >= 1, got 'soon'"
    );
    assert_eq!(
        err(&[("FORECAST_PLUGIN_MEMORY_MB", "15")]),
        "FORECAST_PLUGIN_MEMORY_MB (--plugin-memory-mb): expected an integer >= 16, got '15'"
    );
    assert!(err(&[("FORECAST_PLUGIN_POLL_MS", "49")]).starts_with("FORECAST_PLUGIN_POLL_MS"));
    for name in [
        "FORECAST_PLUGIN_CONCURRENCY",
        "FORECAST_BACKTESTS_PER_USER",
        "FORECAST_QUOTA_PER_DAY",
        "FORECAST_MAX_CONNECTIONS",
        "FORECAST_LOGIN_CONCURRENCY",
        "FORECAST_REQUEST_TIMEOUT_MS",
        "FORECAST_GRADING_LEASE_SECONDS",
    ] {
        assert!(err(&[(name, "0")]).starts_with(name), "{name}=0");
    }
    assert!(err(&[("FORECAST_QUOTA_PER_MINUTE", "4294967296")])
        .starts_with("FORECAST_QUOTA_PER_MINUTE"));
    assert!(err(&[("FORECAST_GRADE_AT", "2am")]).contains("expected HH:MM (UTC), got '2am'"));
    assert!(err(&[("FORECAST_REFRESH_AT", "25:00")]).starts_with("FORECAST_REFRESH_AT"));
    assert!(err(&[("FORECAST_REFRESH_PROVIDER", "bloomberg")])
        .contains("unknown provider 'bloomberg'; expected yahoo or stooq"));
    for bad in [
        "shop.example.com/upgrade",
        "/upgrade",
        "ftp://shop.example.com/upgrade",
        "mailto:sales@example.com",
        "https://",
        "https://exa mple.com/",
    ] {
        let e = err(&[("FORECAST_UPGRADE_URL", bad)]);
        assert!(
            e.starts_with(
                "FORECAST_UPGRADE_URL (--upgrade-url): expected an absolute http:// or https:// URL"
            ),
            "{bad}: {e}"
        );
    }
    assert_eq!(
        Config::from_pairs(&[("FORECAST_UPGRADE_URL", "http://localhost/plans")])
            .unwrap()
            .upgrade_url
            .as_deref(),
        Some("http://localhost/plans")
    );
    // Spelt so that the repository scan below does not find it.
    let unknown = format!("FORECAST_{}", "NOPE");
    assert!(err(&[("DATABASE_URL", "x"), (&unknown, "1")])
        .starts_with(&format!("{unknown}: not a setting")));
}

#[test]
fn the_admin_token_is_long_and_never_echoed() {
    let e = err(&[("FORECAST_ADMIN_TOKEN", "short-secret")]);
    assert_eq!(
        e,
        "FORECAST_ADMIN_TOKEN (--admin-token): must be at least 16 characters"
    );
}

#[test]
fn rules_between_settings_hold() {
    let e = err(&[("FORECAST_REQUEST_TIMEOUT_MS", "30000")]);
    assert!(
        e.starts_with("FORECAST_REQUEST_TIMEOUT_MS")
            && e.contains(
                "FORECAST_BACKTEST_QUEUE_MS + the larger of FORECAST_BACKTEST_TIMEOUT_MS and \
                 FORECAST_RESEARCH_TIMEOUT_MS (55000 ms)"
            ),
        "{e}"
    );
    // Nor may it cut a strategy upload short: its heavy-work turn and compile.
    let e = err(&[("FORECAST_REQUEST_TIMEOUT_MS", "70000")]);
    assert!(
        e.contains("FORECAST_HEAVY_WAIT_MS + FORECAST_UPLOAD_COMPILE_TIMEOUT_MS (70000 ms)"),
        "{e}"
    );
    let c = Config::from_pairs(&[
        ("FORECAST_HEAVY_WAIT_MS", "0"),
        ("FORECAST_REQUEST_TIMEOUT_MS", "60001"),
    ])
    .unwrap();
    assert_eq!(c.limits.request_timeout, Duration::from_millis(60_001));
    let c = Config::from_pairs(&[("FORECAST_UPLOAD_COMPILE_TIMEOUT_MS", "120000")]).unwrap();
    assert_eq!(c.upload_compile_timeout, Duration::from_secs(120));
    assert_eq!(c.limits.request_timeout, Duration::from_secs(135));
    // Unset, the deadline follows the backtest limits, the longer of the two.
    let c = Config::from_pairs(&[("FORECAST_BACKTEST_TIMEOUT_MS", "600000")]).unwrap();
    assert_eq!(c.limits.request_timeout, Duration::from_millis(625_000));
    let c = Config::from_pairs(&[("FORECAST_RESEARCH_TIMEOUT_MS", "300000")]).unwrap();
    assert_eq!(c.limits.request_timeout, Duration::from_millis(325_000));
    assert_eq!(
        err(&[("FORECAST_LLM_URL", "http://llm")]),
        "FORECAST_LLM_MODEL (--llm-model): must be set when FORECAST_LLM_URL is"
    );
}

#[test]
fn a_name_given_twice_takes_its_last_value() {
    let c = Config::from_pairs(&[
        ("FORECAST_GRADING", "off"),
        ("FORECAST_CLIENT_PER_MINUTE", "5"),
        ("FORECAST_GRADING", "on"),
    ])
    .unwrap();
    assert!(c.grading);
    assert_eq!(c.client_per_minute, 5);
}

/// Every `FORECAST_*` name the code, the tests, the tools, the Makefile,
/// the README and the guides moved out of it (docs/OPERATIONS.md,
/// docs/API-GUIDE.md, docs/DEVELOPING.md) use is documented: a setting or
/// one of the other variables.
#[test]
fn every_forecast_variable_in_the_repository_is_listed() {
    let mut known: Vec<String> = docs::entries().into_iter().map(|e| e.name).collect();
    for o in docs::OTHER {
        known.extend(o.name.split(", ").map(str::to_string));
    }
    let root = repo();
    let mut files = Vec::new();
    for top in [
        "host",
        "tests",
        "web/test",
        "tools",
        "Makefile",
        "README.md",
        "docs/OPERATIONS.md",
        "docs/API-GUIDE.md",
        "docs/DEVELOPING.md",
    ] {
        collect(&root.join(top), &mut files);
    }
    let mut missing = std::collections::BTreeSet::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let mut rest = text.as_str();
        while let Some(at) = rest.find("FORECAST_") {
            let tail = &rest[at..];
            let end = tail
                .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
                .unwrap_or(tail.len());
            let name = tail[..end].trim_end_matches('_');
            let preceded = rest[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
            if !preceded && name.len() > "FORECAST_".len() && !known.iter().any(|k| k == name) {
                missing.insert(format!("{name} ({})", file.display()));
            }
            rest = &tail[end.max(1)..];
        }
    }
    assert!(
        missing.is_empty(),
        "variables neither declared in host/src/config.rs (Settings) nor listed in \
         config::docs::OTHER: {missing:?}"
    );
}

fn collect(path: &Path, files: &mut Vec<PathBuf>) {
    if path.is_file() {
        files.push(path.to_path_buf());
        return;
    }
    let Ok(dir) = std::fs::read_dir(path) else {
        return;
    };
    for entry in dir.flatten() {
        let p = entry.path();
        let name = entry.file_name();
        if matches!(
            name.to_str(),
            Some("target" | "node_modules" | "dist" | ".git")
        ) {
            continue;
        }
        if p.is_dir() {
            collect(&p, files);
        } else if p.extension().is_some_and(|e| {
            ["rs", "sh", "py", "mjs", "js", "ts", "toml", "md"].contains(&e.to_str().unwrap_or(""))
        }) {
            files.push(p);
        }
    }
}
