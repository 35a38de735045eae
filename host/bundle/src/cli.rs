//! The bundle tools (feature `cli`): `keygen`, `sign`, `verify` and
//! `publish`, as the `forecast-plugin` binary and the server's
//! `forecast plugin …` run them. They need neither settings nor a database.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Subcommand;

use crate as bundle;

/// The bundle tools.
#[derive(Debug, Subcommand)]
pub enum Tool {
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
}

/// Reads a file the bundle tools take, naming it in the error.
fn read(path: &Path) -> anyhow::Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("read {}", path.display()))
}

/// Runs one bundle tool.
pub async fn run(tool: Tool) -> anyhow::Result<()> {
    match tool {
        Tool::Keygen { out } => {
            let key = bundle::generate_key();
            bundle::write_key(&out, &key).with_context(|| format!("write {}", out.display()))?;
            println!(
                "wrote the private key to {} (mode 0600; keep it secret)",
                out.display()
            );
            println!("key id (for FORECAST_PLUGIN_TRUST):");
            println!("{}", bundle::key_id(&key.verifying_key()));
        }
        Tool::Sign {
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
        Tool::Verify {
            bundle: path,
            trust,
        } => verify(&path, &trust)?,
        Tool::Publish { file, url } => publish(&file, &url).await?,
    }
    Ok(())
}

/// `verify`: the bundle's manifest and signer, and whether `trust` trusts it.
fn verify(path: &Path, trust: &str) -> anyhow::Result<()> {
    let bytes = read(path)?;
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
    let policy = bundle::TrustPolicy::parse(trust, true).map_err(anyhow::Error::msg)?;
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
        println!("signature valid (no trusted keys given: any valid signature is accepted)");
    } else {
        println!("signature valid; the signer is trusted");
    }
    Ok(())
}

/// `publish`: a bundle or bare component to the service at `url`.
async fn publish(file: &Path, url: &str) -> anyhow::Result<()> {
    let api_key = std::env::var("FORECAST_API_KEY").unwrap_or_default();
    let api_key = api_key.trim();
    if api_key.is_empty() {
        anyhow::bail!("set FORECAST_API_KEY to the API key to publish with");
    }
    let bytes = read(file)?;
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
    let answer = bundle::publish::publish(url, api_key, bytes)
        .await
        .map_err(anyhow::Error::msg)?;
    println!("{}", serde_json::to_string_pretty(&answer)?);
    // The name to call, where a reader finds it (the JSON is long).
    if let (Some(name), Some(version)) = (answer["strategy"].as_str(), answer["version"].as_str()) {
        let shared = answer["shared"].as_bool().unwrap_or(false);
        eprintln!(
            "published {name} {version} ({}); call it as \"strategy\": \"{name}\"",
            if shared { "shared" } else { "private" }
        );
    }
    Ok(())
}
