//! `forecast plugin …`: the registry from the command line, against the
//! same database a running server uses (servers follow within
//! `FORECAST_PLUGIN_POLL_MS`).

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use clap::Subcommand;

use crate::config::Config;
use forecast_domain::PluginKind;
use forecast_plugins::PluginRuntime;
use forecast_services::registry::{self, Error as RegistryError};
use forecast_store::{self as store, Database};

use forecast_bundle as bundle;

/// The registry's operations.
#[derive(Debug, Subcommand)]
pub enum PluginCommand {
    /// Every registered version: kind, name, version, sha256, active.
    List {
        /// JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Register a component or a signed bundle (type-checked against its
    /// kind's world; its reported version must match). A bundle's signer
    /// must be trusted (FORECAST_PLUGIN_TRUST); a bare component is refused
    /// when FORECAST_PLUGIN_UNSIGNED=refuse.
    Add {
        /// The `.wasm` component or a bundle from `forecast plugin sign`.
        file: PathBuf,
        /// segmentation, scorer, strategy or matcher (a bundle: strategy,
        /// the default).
        #[arg(long, value_parser = kind_arg)]
        kind: Option<PluginKind>,
        /// Name within the kind (a strategy's own name); a bundle's
        /// manifest names it.
        #[arg(long)]
        name: Option<String>,
        /// Semantic version; a bundle's manifest names it.
        #[arg(long)]
        version: Option<String>,
    },
    /// The bundle tools: keygen, sign, verify, publish (also the
    /// standalone `forecast-plugin` of forecast-bundle, feature `cli`).
    #[command(flatten)]
    Tools(bundle::cli::Tool),
    /// Activate a registered version after its self-tests pass; running
    /// servers swap to it without a failed request.
    ///
    /// A scorer or engine version is compared first with the active one on
    /// real prices (as `plugin compare` does) and refused when its
    /// forecasts are significantly worse, unless --force with --reason.
    Activate {
        /// Kind.
        #[arg(value_parser = kind_arg)]
        kind: PluginKind,
        /// Name.
        name: String,
        /// Version.
        version: String,
        /// Activate even if the evidence gate refuses it (needs --reason;
        /// the activation history records who and why).
        #[arg(long, requires = "reason")]
        force: bool,
        /// Why the gate is overridden.
        #[arg(long)]
        reason: Option<String>,
    },
    /// Compare two registered scorer (or engine) versions on the same
    /// walk-forward rows of real prices: proper scores of each against
    /// climatology and a Diebold-Mariano test between them.
    Compare {
        /// scorer or segmentation.
        #[arg(value_parser = kind_arg)]
        kind: PluginKind,
        /// Name (`default` for the built-ins).
        name: String,
        /// The first version.
        a: String,
        /// The second version.
        b: String,
        /// Horizon in calendar days (7, 30, 90, 180 or 365).
        #[arg(long, default_value_t = 90)]
        return_period: u32,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Also write the second version's scored rows (and the HAC lag) as
        /// JSON to this file, for `make bench-peer`'s reference check.
        #[arg(long)]
        rows: Option<PathBuf>,
    },
    /// Return to the version active before the current one.
    Rollback {
        /// Kind.
        #[arg(value_parser = kind_arg)]
        kind: PluginKind,
        /// Name of the active version (for strategies: the strategy).
        name: String,
    },
    /// Run a candidate beside the active version on a sampled share of live
    /// requests (its answers are compared, never returned).
    Shadow {
        /// Kind (segmentation).
        #[arg(value_parser = kind_arg)]
        kind: PluginKind,
        /// Candidate name.
        name: String,
        /// Candidate version.
        version: String,
        /// Share of requests to sample, in (0, 1].
        #[arg(long)]
        sample: f64,
    },
    /// The agreement report of a kind's shadow run.
    ShadowReport {
        /// Kind.
        #[arg(value_parser = kind_arg)]
        kind: PluginKind,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Stop a kind's shadow run.
    ShadowStop {
        /// Kind.
        #[arg(value_parser = kind_arg)]
        kind: PluginKind,
    },
}

/// Parses a kind argument: an unknown one fails with the registry's
/// message naming the allowed kinds, as the admin API answers.
fn kind_arg(kind: &str) -> Result<PluginKind, String> {
    registry::parse_kind(kind).map_err(|e| e.to_string())
}

/// Who the CLI acts as, for the activation history.
fn operator() -> String {
    format!(
        "cli:{}",
        std::env::var("USER")
            .or_else(|_| std::env::var("LOGNAME"))
            .unwrap_or_else(|_| "unknown".into())
    )
}

fn refused(e: RegistryError) -> anyhow::Error {
    anyhow::anyhow!("{e}")
}

/// What `plugin add` registers once the trust policy admitted it.
struct Admitted {
    kind: PluginKind,
    name: String,
    version: String,
    component: Vec<u8>,
    /// The bundle's signer; `None` for a bare component.
    signer: Option<String>,
}

/// Applies the trust policy to the file given to `plugin add`: a bundle
/// must verify and be signed by a trusted key (its manifest names the
/// strategy; flags given must agree with it), a bare component must be
/// allowed unsigned and needs its kind, name and version as flags.
fn admit(
    policy: &bundle::TrustPolicy,
    bytes: Vec<u8>,
    kind: Option<PluginKind>,
    name: Option<String>,
    version: Option<String>,
) -> anyhow::Result<Admitted> {
    if !bundle::is_bundle(&bytes) {
        policy.check_unsigned().map_err(anyhow::Error::msg)?;
        let missing = |flag: &str| anyhow::anyhow!("{flag} is required for a bare component");
        return Ok(Admitted {
            kind: kind.ok_or_else(|| missing("--kind"))?,
            name: name.ok_or_else(|| missing("--name"))?,
            version: version.ok_or_else(|| missing("--version"))?,
            component: bytes,
            signer: None,
        });
    }
    let opened = bundle::open(&bytes).map_err(|e| anyhow::anyhow!("bundle refused: {e}"))?;
    policy
        .check_signed(&opened.signer)
        .map_err(|e| anyhow::anyhow!("bundle refused: {e}"))?;
    if let Some(kind) = kind.filter(|k| *k != PluginKind::Strategy) {
        anyhow::bail!(
            "a bundle holds a strategy (world {}), not a {kind}",
            opened.manifest.world
        );
    }
    for (flag, given, manifest) in [
        ("--name", &name, &opened.manifest.name),
        ("--version", &version, &opened.manifest.version),
    ] {
        if let Some(given) = given.as_ref().filter(|g| *g != manifest) {
            anyhow::bail!("{flag} {given} differs from the bundle's manifest ({manifest})");
        }
    }
    Ok(Admitted {
        kind: PluginKind::Strategy,
        name: opened.manifest.name,
        version: opened.manifest.version,
        component: opened.component,
        signer: Some(opened.signer),
    })
}

/// Runs one `forecast plugin` command.
pub async fn run(command: PluginCommand) -> anyhow::Result<()> {
    // The bundle tools need neither the settings nor the database.
    if let PluginCommand::Tools(tool) = command {
        return bundle::cli::run(tool).await;
    }
    let config = Config::from_env()?;
    let db = store::connect(&config.database_url)
        .await
        .with_context(|| format!("open database {}", store::redact(&config.database_url)))?;
    let result = dispatch(command, &config, db.as_ref()).await;
    db.close().await;
    result
}

async fn dispatch(
    command: PluginCommand,
    config: &Config,
    db: &dyn Database,
) -> anyhow::Result<()> {
    let runtime = Arc::new(PluginRuntime::new(config.runtime)?);
    let clock = config.clock();
    let clock = clock.as_ref();
    registry::ensure_builtins(db, &runtime, clock)
        .await
        .map_err(refused)?;
    match command {
        PluginCommand::List { json } => print_list(db, json).await?,
        PluginCommand::Add {
            file,
            kind,
            name,
            version,
        } => add(config, db, &runtime, &file, (kind, name, version)).await?,
        PluginCommand::Activate {
            kind,
            name,
            version,
            force,
            reason,
        } => {
            let why = force.then_some(reason.as_deref().unwrap_or_default());
            let a =
                registry::activate(db, &runtime, kind, &name, &version, &operator(), why, clock)
                    .await
                    .map_err(refused)?;
            println!(
                "active: {}/{}@{} (self-tests passed); servers switch within {} ms",
                a.kind,
                a.name,
                a.version,
                config.plugin_poll.as_millis()
            );
        }
        PluginCommand::Compare {
            kind,
            name,
            a,
            b,
            return_period,
            json,
            rows,
        } => {
            let versions = (a, b);
            compare(
                db,
                &runtime,
                (kind, name),
                versions,
                return_period,
                json,
                rows,
            )
            .await?
        }
        PluginCommand::Rollback { kind, name } => {
            let a = registry::rollback(db, kind, &name, clock)
                .await
                .map_err(refused)?;
            println!(
                "rolled back: {}/{}@{} is active again",
                a.kind, a.name, a.version
            );
        }
        PluginCommand::Shadow {
            kind,
            name,
            version,
            sample,
        } => shadow(db, &runtime, (kind, &name, &version), sample, clock).await?,
        PluginCommand::ShadowReport { kind, json } => {
            let r = registry::shadow_report(db, kind).await.map_err(refused)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&r)?);
            } else {
                print_report(&r);
            }
        }
        PluginCommand::ShadowStop { kind } => {
            registry::stop_shadow(db, kind).await.map_err(refused)?;
            println!("stopped the {kind} shadow run");
        }
        PluginCommand::Tools(_) => unreachable!("run by `run`"),
    }
    Ok(())
}

/// `plugin shadow`: starts a shadow run of `kind/name@version` on `sample`
/// of the requests.
async fn shadow(
    db: &dyn Database,
    runtime: &Arc<PluginRuntime>,
    (kind, name, version): (PluginKind, &str, &str),
    sample: f64,
    clock: &dyn forecast_domain::Clock,
) -> anyhow::Result<()> {
    let s = registry::start_shadow(db, runtime, kind, name, version, sample, &operator(), clock)
        .await
        .map_err(refused)?;
    println!(
        "shadowing {}/{}@{} on {:.0} % of requests; report: forecast plugin shadow-report {}",
        s.kind,
        s.name,
        s.version,
        s.sample * 100.0,
        s.kind
    );
    Ok(())
}

/// `plugin list`: every registered version, as a table or JSON.
async fn print_list(db: &dyn Database, json: bool) -> anyhow::Result<()> {
    let rows = registry::list(db).await.map_err(refused)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        println!(
            "{:<13} {:<14} {:<26} {:<12} {:<7} ADDED BY",
            "KIND", "NAME", "VERSION", "SHA256", "ACTIVE"
        );
        for r in rows {
            let state = match (r.active, r.shadow) {
                (true, _) => "yes",
                (false, true) => "shadow",
                _ => "",
            };
            let activated = r
                .activated_by
                .as_deref()
                .map(|by| format!("  (activated by {by})"))
                .unwrap_or_default();
            println!(
                "{:<13} {:<14} {:<26} {:<12} {:<7} {}{activated}",
                // `as_str`: the kind's `Display` ignores padding.
                r.kind.as_str(),
                r.name,
                r.version,
                &r.sha256[..12],
                state,
                r.added_by
            );
        }
    }
    Ok(())
}

/// `plugin add`: checks the file against the trust policy and registers it.
async fn add(
    config: &Config,
    db: &dyn Database,
    runtime: &Arc<PluginRuntime>,
    file: &std::path::Path,
    (kind, name, version): (Option<PluginKind>, Option<String>, Option<String>),
) -> anyhow::Result<()> {
    let bytes = std::fs::read(file).with_context(|| format!("read {}", file.display()))?;
    let (trust, unsigned_allowed) = &config.plugin_trust;
    let policy =
        bundle::TrustPolicy::parse(trust, *unsigned_allowed).map_err(anyhow::Error::msg)?;
    let added = admit(&policy, bytes, kind, name, version)?;
    let by = match &added.signer {
        Some(signer) => format!("{}, signed by {signer}", operator()),
        None => operator(),
    };
    let r = registry::add(
        db,
        runtime,
        added.kind,
        &added.name,
        &added.version,
        added.component,
        &by,
        &*config.clock(),
    )
    .await
    .map_err(refused)?;
    if let Some(signer) = &added.signer {
        println!("signature verified: signed by {signer}");
    }
    println!(
        "registered {}/{}@{} ({} bytes, sha256 {}); activate it with: forecast plugin activate {} {} {}",
        r.kind, r.name, r.version, r.size, r.sha256, r.kind, r.name, r.version
    );
    Ok(())
}

/// `plugin compare`: two versions on the same walk-forward rows, as text or
/// JSON, the second's scored rows written to `rows` when given.
async fn compare(
    db: &dyn Database,
    runtime: &Arc<PluginRuntime>,
    (kind, name): (PluginKind, String),
    (a, b): (String, String),
    return_period: u32,
    json: bool,
    rows: Option<std::path::PathBuf>,
) -> anyhow::Result<()> {
    let req = forecast_api::models::CompareRequest {
        kind: kind.to_string(),
        name: name.clone(),
        a,
        b,
        return_period: Some(return_period),
    };
    let horizon = req.horizon().map_err(|e| anyhow::anyhow!(e.0))?;
    let (c, scored) =
        registry::lifecycle::compare(db, runtime, kind, &name, (&req.a, &req.b), horizon)
            .await
            .map_err(refused)?;
    if let Some(path) = rows {
        let lag = (return_period as usize).div_ceil(30);
        let doc = serde_json::json!({ "lag": lag, "rows": scored });
        std::fs::write(&path, serde_json::to_vec(&doc)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    match json {
        true => println!("{}", serde_json::to_string_pretty(&c)?),
        false => print!("{}", comparison_text(&c)),
    }
    Ok(())
}

fn print_report(r: &registry::ShadowReport) {
    println!(
        "candidate:   {} (sampling {:.0} %)",
        r.candidate,
        r.sample * 100.0
    );
    println!("compared with: {}", r.compared_with.join(", "));
    match r.identical_share {
        Some(share) => println!(
            "samples:     {} ({} identical, {:.1} %; {} errors)",
            r.samples,
            r.identical,
            share * 100.0,
            r.errors
        ),
        None => println!("samples:     none yet"),
    }
    let lat = |l: &Option<registry::Latency>| {
        l.as_ref().map_or("-".to_string(), |l| {
            format!(
                "mean {:.2} ms, p50 {:.2} ms, p95 {:.2} ms",
                l.mean, l.p50, l.p95
            )
        })
    };
    println!("latency:     active {}", lat(&r.active_latency_ms));
    println!("             candidate {}", lat(&r.candidate_latency_ms));
    if !r.max_differences.is_empty() {
        println!("largest differences per field:");
        for (field, d) in &r.max_differences {
            println!("  {field:<45} {d:.6e}");
        }
    }
    for e in &r.error_examples {
        println!("error: {e}");
    }
}

/// A comparison as a few lines of text.
fn comparison_text(c: &forecast_api::models::ModelComparison) -> String {
    let mut out = format!(
        "{} real-price rows ({} month-ends) at {} days\n",
        c.rows, c.months, c.return_period
    );
    for card in [&c.a, &c.b] {
        let range = match (card.first_date, card.last_date) {
            (Some(f), Some(l)) => format!("{f} to {l}"),
            _ => "no rows".into(),
        };
        match &card.evaluation {
            Some(e) => out.push_str(&format!(
                "{}: CRPS {:.5} (skill {:+.3}, 90 % {:+.3} to {:+.3}, DM p {:.3}), calibration slope {:.2}, coverage {:.1} %, {range}\n",
                card.model,
                e.crps.forecast,
                e.crps.skill,
                e.crps.skill_ci[0],
                e.crps.skill_ci[1],
                e.crps.dm_p,
                e.calibration_slope.estimate,
                100.0 * e.coverage
            )),
            None => out.push_str(&format!("{}: no evaluation ({range})\n", card.model)),
        }
    }
    out.push_str(&format!(
        "CRPS a - b {:+.6} (se {:.6}), Diebold-Mariano {:.2}, p {:.4}: {}\n",
        c.crps_differential, c.crps_differential_se, c.dm_stat, c.dm_p, c.verdict
    ));
    out
}
