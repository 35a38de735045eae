//! `forecast matcher …`: the matcher's sentence-embedding model from the
//! command line, against the same database a server uses.

use std::time::Instant;

use anyhow::Context;
use clap::Subcommand;

use crate::config::{database_url_from_env, ModelSetting};
use forecast_services::embeddings::CatalogEmbeddings;
use forecast_store::{self as store};

/// The matcher's operations.
#[derive(Debug, Subcommand)]
pub enum MatcherCommand {
    /// Compute and store the vectors the active catalog lacks for the model
    /// (FORECAST_MODEL_DIR, default data/models/all-minilm-l6-v2): all of
    /// them the first time, then only entries whose text changed. Servers
    /// sharing the database reuse them.
    Embed,
}

/// Runs `command`.
pub async fn run(command: MatcherCommand) -> anyhow::Result<()> {
    match command {
        MatcherCommand::Embed => embed().await,
    }
}

async fn embed() -> anyhow::Result<()> {
    let setting = match ModelSetting::from_env() {
        ModelSetting::Off => {
            anyhow::bail!("FORECAST_MODEL_DIR=off: there is no model to embed with")
        }
        ModelSetting::Default(dir) | ModelSetting::Required(dir) => ModelSetting::Required(dir),
    };
    let model = crate::app::load_model(&setting)
        .await?
        .context("the sentence-embedding model")?;
    let url = database_url_from_env();
    let db = store::connect(&url).await?;
    let assets = db.list_active_assets(None).await?;
    let embeddings = CatalogEmbeddings::new(model.clone(), db.clone());
    let started = Instant::now();
    // One bar on stderr (drawn only on a terminal); the summary line is
    // printed either way.
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "embedding the catalog {bar:30} {pos}/{len} texts, {elapsed} (eta {eta})",
        )
        .expect("valid template"),
    );
    let shown = bar.clone();
    let (_, stats) = embeddings
        .index(&assets, move |done, total| {
            shown.set_length(total as u64);
            shown.set_position(done as u64);
        })
        .await?;
    bar.finish_and_clear();
    println!(
        "catalog embeddings for {} in {}: {} entries, {} computed, {} reused, in {:.1}s",
        model.id(),
        store::redact(&url),
        stats.entries,
        stats.computed,
        stats.reused,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
