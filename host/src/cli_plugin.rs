//! `forecast plugin …`: the registry from the command line, against the
//! same database a running server uses (servers follow within
//! `FORECAST_PLUGIN_POLL_MS`).

use std::path::{Path, PathBuf};
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
    /// Create an ed25519 signing key (file mode 0600; never overwrites)
    /// and print its key id, the form FORECAST_PLUGIN_TRUST lists.
    Keygen {
        /// Where to write the private key.
        #[arg(long)]
        out: PathBuf,
    },
    /// Bundle a strategy component with its manifest, signed.
    Sign {
        /// The `.wasm` strategy component.
        component: PathBuf,
        /// The signing key (from `forecast plugin keygen`).
        #[arg(long)]
        key: PathBuf,
        /// The strategy's name.
        #[arg(long)]
        name: String,
        /// Its version.
        #[arg(long)]
        version: String,
        /// What it does.
        #[arg(long, default_value = "")]
        description: String,
        /// Its licence (e.g. an SPDX id).
        #[arg(long, default_value = "")]
        licence: String,
        /// Who wrote it.
        #[arg(long, default_value = "")]
        author: String,
        /// Where to write the bundle (not overwritten if it exists).
        #[arg(long)]
        out: PathBuf,
    },
    /// Check a bundle's signature and manifest, and whether its signer is
    /// trusted; exits non-zero with the reason when not.
    Verify {
        /// The bundle.
        bundle: PathBuf,
        /// Trusted key ids, comma-separated (`ed25519:<base64>`); empty:
        /// any valid signature.
        #[arg(
            long,
            env = "FORECAST_PLUGIN_TRUST",
            default_value = "",
            hide_default_value = true
        )]
        trust: String,
    },
    /// Upload a bundle or a bare component to a server's POST
    /// /api/strategies, with the API key from FORECAST_API_KEY.
    Publish {
        /// The bundle or `.wasm` component.
        file: PathBuf,
        /// The server's base URL, e.g. https://forecast.example.com.
        #[arg(long)]
        url: String,
    },
    /// Activate a registered version after its self-tests pass; running
    /// servers swap to it without a failed request.
    Activate {
        /// Kind.
        #[arg(value_parser = kind_arg)]
        kind: PluginKind,
        /// Name.
        name: String,
        /// Version.
        version: String,
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

/// Reads a file the bundle tools take, naming it in the error.
fn read(path: &Path) -> anyhow::Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("read {}", path.display()))
}

/// Runs the commands that need neither settings nor database (keygen,
/// sign, verify, publish); hands the others back.
async fn local(command: PluginCommand) -> anyhow::Result<Option<PluginCommand>> {
    match command {
        PluginCommand::Keygen { out } => {
            let key = bundle::generate_key();
            bundle::write_key(&out, &key).with_context(|| format!("write {}", out.display()))?;
            println!(
                "wrote the private key to {} (mode 0600; keep it secret)",
                out.display()
            );
            println!("key id (for FORECAST_PLUGIN_TRUST):");
            println!("{}", bundle::key_id(&key.verifying_key()));
        }
        PluginCommand::Sign {
            component,
            key,
            name,
            version,
            description,
            licence,
            author,
            out,
        } => {
            let bytes = read(&component)?;
            let key = bundle::read_key(&key)?;
            let manifest = bundle::Manifest {
                name,
                version,
                world: bundle::WORLD_STRATEGY.into(),
                description,
                licence,
                author,
                sha256: bundle::sha256_hex(&bytes),
            };
            let signed = bundle::sign(&bytes, &manifest, &key)?;
            // Like the key, an existing file is never overwritten.
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&out)
                .and_then(|mut f| {
                    use std::io::Write as _;
                    f.write_all(&signed)?;
                    f.sync_all()
                })
                .with_context(|| format!("write {}", out.display()))?;
            println!(
                "wrote {} ({} bytes): {}@{}",
                out.display(),
                signed.len(),
                manifest.name,
                manifest.version
            );
            println!("signer: {}", bundle::key_id(&key.verifying_key()));
            println!("sha256: {}", manifest.sha256);
        }
        PluginCommand::Verify {
            bundle: path,
            trust,
        } => {
            let bytes = read(&path)?;
            if !bundle::is_bundle(&bytes) {
                anyhow::bail!(
                    "{} is not a bundle{}",
                    path.display(),
                    if bytes.starts_with(b"\0asm") {
                        " (it is a bare, unsigned Wasm component)"
                    } else {
                        ""
                    }
                );
            }
            let policy = bundle::TrustPolicy::parse(&trust, true).map_err(anyhow::Error::msg)?;
            let opened = bundle::open(&bytes)
                .map_err(|e| anyhow::anyhow!("{} does not verify: {e}", path.display()))?;
            let m = &opened.manifest;
            println!("manifest:");
            println!("  name:        {}", m.name);
            println!("  version:     {}", m.version);
            println!("  world:       {}", m.world);
            println!("  description: {}", m.description);
            println!("  licence:     {}", m.licence);
            println!("  author:      {}", m.author);
            println!("signer: {}", opened.signer);
            println!("sha256: {}", m.sha256);
            policy
                .check_signed(&opened.signer)
                .map_err(|e| anyhow::anyhow!("{} is not trusted: {e}", path.display()))?;
            if policy.keys().is_empty() {
                println!(
                    "signature valid (no trusted keys given: any valid signature is accepted)"
                );
            } else {
                println!("signature valid; the signer is trusted");
            }
        }
        PluginCommand::Publish { file, url } => {
            let api_key = std::env::var("FORECAST_API_KEY").unwrap_or_default();
            let api_key = api_key.trim();
            if api_key.is_empty() {
                anyhow::bail!("set FORECAST_API_KEY to the API key to publish with");
            }
            let bytes = read(&file)?;
            if bundle::is_bundle(&bytes) {
                // Refuse locally what the server would refuse anyway.
                let opened = bundle::open(&bytes)
                    .map_err(|e| anyhow::anyhow!("{} does not verify: {e}", file.display()))?;
                eprintln!(
                    "publishing bundle {}@{} signed by {}",
                    opened.manifest.name, opened.manifest.version, opened.signer
                );
            } else if bytes.starts_with(b"\0asm") {
                eprintln!("publishing an unsigned component");
            } else {
                anyhow::bail!(
                    "{} is neither a bundle nor a Wasm component",
                    file.display()
                );
            }
            let answer = bundle::publish::publish(&url, api_key, bytes)
                .await
                .map_err(anyhow::Error::msg)?;
            println!("{}", serde_json::to_string_pretty(&answer)?);
        }
        other => return Ok(Some(other)),
    }
    Ok(None)
}

/// Runs one `forecast plugin` command.
pub async fn run(command: PluginCommand) -> anyhow::Result<()> {
    // The bundle tools need neither the settings nor the database.
    let command = match local(command).await? {
        Some(command) => command,
        None => return Ok(()),
    };
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
    registry::ensure_builtins(db, &runtime)
        .await
        .map_err(refused)?;
    match command {
        PluginCommand::List { json } => {
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
                    println!(
                        "{:<13} {:<14} {:<26} {:<12} {:<7} {}",
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
        }
        PluginCommand::Add {
            file,
            kind,
            name,
            version,
        } => {
            let bytes = std::fs::read(&file).with_context(|| format!("read {}", file.display()))?;
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
                &runtime,
                added.kind,
                &added.name,
                &added.version,
                added.component,
                &by,
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
        }
        PluginCommand::Activate {
            kind,
            name,
            version,
        } => {
            let a = registry::activate(db, &runtime, kind, &name, &version, &operator())
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
        PluginCommand::Rollback { kind, name } => {
            let a = registry::rollback(db, kind, &name).await.map_err(refused)?;
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
        } => {
            let s =
                registry::start_shadow(db, &runtime, kind, &name, &version, sample, &operator())
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
        }
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
        PluginCommand::Keygen { .. }
        | PluginCommand::Sign { .. }
        | PluginCommand::Verify { .. }
        | PluginCommand::Publish { .. } => unreachable!("run by `local`"),
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
