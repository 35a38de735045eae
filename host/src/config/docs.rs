//! The settings as a table (`forecast config`) and as Markdown (`forecast
//! config --markdown`, committed as docs/CONFIG.md), both read from the
//! declaration in [`super::Settings`], plus the variables that are not
//! settings of the server ([`OTHER`]).

use std::fmt::Write;

/// A variable that is not a setting of `forecast serve`: read by the build,
/// the test tools, a shell, or the allocator.
#[derive(Debug, Clone, Copy)]
pub struct Other {
    /// The variable.
    pub name: &'static str,
    /// Who reads it.
    pub read_by: &'static str,
    /// What it does.
    pub meaning: &'static str,
}

/// Every variable beside the settings that the repository reads or tells
/// you to set.
pub const OTHER: &[Other] = &[
    Other {
        name: "FORECAST_API_KEY",
        read_by: "`forecast plugin publish`, the strategy templates' `make test`",
        meaning:
            "The Premium API key `forecast plugin publish` sends to the server it publishes \
                  a strategy to (never a flag, so it stays out of shell history and process lists); \
                  the templates' harnesses upload with it to `FORECAST_URL`.",
    },
    Other {
        name: "FORECAST_URL",
        read_by: "the Python and TypeScript strategy templates' `make test`",
        meaning: "The running server (e.g. `http://127.0.0.1:8080`) the templates' harnesses \
                  upload to and backtest on, with `FORECAST_API_KEY`; unset, they start \
                  `target/release/forecast` (or `FORECAST_BIN`) themselves.",
    },
    Other {
        name: "FORECAST_KEY",
        read_by: "you",
        meaning: "Your API key, by convention: the banner of `forecast serve` and the README's \
                  examples send `Authorization: Bearer $FORECAST_KEY`. The server never reads it.",
    },
    Other {
        name: "RUST_LOG",
        read_by: "`forecast`",
        meaning: "What is logged to standard error (default `info,sqlx=warn`), as a \
                  tracing-subscriber filter, e.g. `debug` or `info,forecast_http=debug`.",
    },
    Other {
        name: "OTEL_EXPORTER_OTLP_ENDPOINT",
        read_by: "`forecast`",
        meaning: "Export the spans to this OpenTelemetry collector (OTLP over HTTP/protobuf, \
                  e.g. `http://127.0.0.1:4318`); the other standard `OTEL_*` variables apply. \
                  Unset or empty: no export.",
    },
    Other {
        name: "MALLOC_ARENA_MAX, MALLOC_MMAP_THRESHOLD_",
        read_by: "glibc, in `forecast`",
        meaning: "glibc's allocator, which C code such as SQLite allocates from: set, they win \
                  over the values `forecast` sets at start (2 arenas, a fixed 4 MiB threshold).",
    },
    Other {
        name: "MIMALLOC_PURGE_DELAY, MIMALLOC_ARENA_EAGER_COMMIT",
        read_by: "mimalloc, in `forecast`",
        meaning: "The allocator of the Rust code: set, they win over the values `forecast` sets \
                  at start (0 and 0: freed memory is returned at once, arenas are committed as \
                  they are used).",
    },
    Other {
        name: "FORECAST_COMPONENTS_DIR",
        read_by: "the build (host/plugins/build.rs)",
        meaning: "The folder of the built-in components embedded into the binary (default \
                  `components/target/dist`, where `make components` puts them).",
    },
    Other {
        name: "FORECAST_BIN",
        read_by: "`make web-test`, `make bench-web`, `make conformance`, the strategy templates",
        meaning: "The `forecast` binary the browser tests, the conformance run and the strategy \
                  templates' harnesses (without `FORECAST_URL`) start (default \
                  `target/release/forecast`).",
    },
    Other {
        name: "FORECAST_CONFORMANCE_BASE, FORECAST_CONFORMANCE_KEY, FORECAST_CONFORMANCE_SESSION, \
               FORECAST_CONFORMANCE_WEBHOOK_URL",
        read_by: "tools/conformance",
        meaning: "Set by tools/conformance/run.sh for its schemathesis hooks: the server's URL, \
                  an API key, a session cookie and a webhook URL on a loopback port nothing \
                  listens at.",
    },
    Other {
        name: "FORECAST_WRITE_OPENAPI",
        read_by: "the integration tests (`make web-types`)",
        meaning: "Set: the OpenAPI snapshot test rewrites web/openapi.json instead of comparing.",
    },
    Other {
        name: "TEST_DATABASE_URL",
        read_by: "the tests",
        meaning: "A PostgreSQL server whose user may create databases: the PostgreSQL tests run \
                  against it. Unset: the local server at \
                  postgres://postgres@127.0.0.1:5432/test; unreachable, they fail (never skip).",
    },
];

/// One setting, as documented.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The group it is listed under.
    pub heading: String,
    /// The variable.
    pub name: String,
    /// The flag of `forecast serve`, without `--`.
    pub flag: String,
    /// The default, or `unset`.
    pub default: String,
    /// The help text, a sentence or more.
    pub meaning: String,
}

/// Every setting in declaration order.
pub fn entries() -> Vec<Entry> {
    super::command()
        .get_arguments()
        .filter_map(|a| {
            let name = a.get_env()?.to_str()?.to_string();
            let defaults: Vec<String> = a
                .get_default_values()
                .iter()
                .map(|v| v.to_string_lossy().into_owned())
                .filter(|v| !v.is_empty())
                .collect();
            let mut meaning = a
                .get_long_help()
                .or(a.get_help())
                .map(|h| h.to_string())
                .unwrap_or_default()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            if !meaning.ends_with('.') {
                meaning.push('.');
            }
            Some(Entry {
                heading: a.get_help_heading().unwrap_or("Settings").to_string(),
                name,
                flag: a.get_long()?.to_string(),
                default: if defaults.is_empty() {
                    "unset".into()
                } else {
                    defaults.join(",")
                },
                meaning,
            })
        })
        .collect()
}

/// The entries grouped by heading, in declaration order.
fn groups() -> Vec<(String, Vec<Entry>)> {
    let mut groups: Vec<(String, Vec<Entry>)> = Vec::new();
    for e in entries() {
        match groups.iter_mut().find(|(h, _)| *h == e.heading) {
            Some((_, list)) => list.push(e),
            None => groups.push((e.heading.clone(), vec![e])),
        }
    }
    groups
}

const INTRO: &str = "Every setting of `forecast serve` is an environment variable and a flag \
of `forecast serve` (the flag wins when both are given); an unset variable takes its default, \
and an empty value counts as unset where the default says so. The other commands read the same \
variables: every one `DATABASE_URL`, `forecast grade` and `forecast plugin` the plugin settings, \
`forecast ingest fetch` the provider URLs, `forecast matcher` `FORECAST_MODEL_DIR`. Durations \
are in milliseconds (`_MS`) or seconds (`_SECONDS`), sizes in MiB (`_MB`); switches take on or \
off (also true/false, yes/no, 1/0). A value that breaks a rule stops the command with an error \
naming the variable.";

/// Words of `text` in lines of at most `width` characters (a longer word
/// has a line of its own).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split_whitespace() {
        let line = lines.last_mut().expect("a line");
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(word.to_string());
        } else {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
    }
    lines
}

/// What `forecast config` prints: each group's variables, defaults and
/// meanings in columns, then the other variables. A default too long for
/// its column puts the meaning on the next line.
pub fn table() -> String {
    const WIDTH: usize = 110;
    const DEFAULT_MAX: usize = 25;
    let all = entries();
    let name_w = all.iter().map(|e| e.name.len()).max().unwrap_or(0);
    let default_w = all
        .iter()
        .map(|e| e.default.chars().count())
        .filter(|&n| n <= DEFAULT_MAX)
        .max()
        .unwrap_or(0);
    let meaning_w = WIDTH.saturating_sub(name_w + default_w + 6).max(30);
    let mut out = String::new();
    for line in wrap(INTRO, WIDTH) {
        let _ = writeln!(out, "{line}");
    }
    let row = |out: &mut String, name: &str, default: &str, meaning: &str| {
        let row = format!("  {name:name_w$}  {default:default_w$}  {meaning}");
        let _ = writeln!(out, "{}", row.trim_end());
    };
    for (heading, entries) in groups() {
        let _ = writeln!(out, "\n{heading}:");
        row(&mut out, "VARIABLE", "DEFAULT", "MEANING");
        for e in entries {
            let mut lines = wrap(&format!("{} (--{})", e.meaning, e.flag), meaning_w).into_iter();
            if e.default.chars().count() > default_w {
                let _ = writeln!(out, "  {:name_w$}  {}", e.name, e.default);
                row(&mut out, "", "", &lines.next().unwrap_or_default());
            } else {
                row(
                    &mut out,
                    &e.name,
                    &e.default,
                    &lines.next().unwrap_or_default(),
                );
            }
            for line in lines {
                row(&mut out, "", "", &line);
            }
        }
    }
    let _ = writeln!(out, "\nOther variables (not settings of `forecast serve`):");
    for o in OTHER {
        let _ = writeln!(out, "  {} (read by {})", o.name, o.read_by);
        for line in wrap(o.meaning, WIDTH - 6) {
            let _ = writeln!(out, "      {line}");
        }
    }
    out
}

/// A Markdown table cell: `|` escaped, on one line.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// What `forecast config --markdown` prints: docs/CONFIG.md.
pub fn markdown() -> String {
    let mut out = String::from(
        "# Configuration\n\n\
         <!-- Generated from host/src/config.rs by `make config-docs` \
         (`forecast config --markdown`); edit the help texts there, not this file. -->\n\n",
    );
    for line in wrap(INTRO, 80) {
        let _ = writeln!(out, "{line}");
    }
    out.push_str(
        "\n`forecast config` prints these tables in the terminal; `forecast serve --help` \
         lists the flags.\n",
    );
    for (heading, entries) in groups() {
        let _ = writeln!(out, "\n## {heading}\n");
        out.push_str("| Variable | Flag | Default | Meaning |\n|---|---|---|---|\n");
        for e in entries {
            let default = if e.default == "unset" {
                "unset".to_string()
            } else {
                format!("`{}`", e.default)
            };
            let _ = writeln!(
                out,
                "| `{}` | `--{}` | {} | {} |",
                e.name,
                e.flag,
                cell(&default),
                cell(&e.meaning)
            );
        }
    }
    out.push_str(
        "\n## Other variables\n\n\
         Not settings of `forecast serve`: read by the build, the test tools, the allocator, \
         or only by you.\n\n\
         | Variable | Read by | Meaning |\n|---|---|---|\n",
    );
    for o in OTHER {
        let names = o
            .name
            .split(", ")
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let _ = writeln!(
            out,
            "| {names} | {} | {} |",
            cell(o.read_by),
            cell(o.meaning)
        );
    }
    out
}
