//! `forecast alerts …`: alerts from the command line, against the same
//! database a server uses (settings from the environment, as `serve`).

use std::sync::Arc;

use clap::Subcommand;

use crate::config::Config;
use forecast_jobs::alerts::{AlertService, EvaluationSummary};
use forecast_services::active::Plugins;
use forecast_services::budget::WorkBudget;
use forecast_services::freshness::Freshness;
use forecast_services::verdict::VerdictService;
use forecast_store::{self as store, Database};

/// The alerts' operations.
#[derive(Debug, Subcommand)]
pub enum AlertsCommand {
    /// Evaluate every enabled alert now against the grades and prices as
    /// they are (unless this state of the data was already evaluated, by
    /// this command or a server), then send the webhook calls and e-mails
    /// due. Retries scheduled for later are left to a running server.
    Check,
}

/// Runs `command`.
pub async fn run(command: AlertsCommand) -> anyhow::Result<()> {
    match command {
        AlertsCommand::Check => check().await,
    }
}

/// The alert service over `db` with the environment's settings.
pub async fn service(config: &Config, db: Arc<dyn Database>) -> anyhow::Result<AlertService> {
    let clock = config.clock();
    let plugins =
        Arc::new(Plugins::load(&config.plugins_config(), db.as_ref(), clock.as_ref()).await?);
    let verdicts = VerdictService::new(
        db.clone(),
        db.clone(),
        plugins,
        Freshness::new(db.clone()),
        WorkBudget::new(config.heavy),
        clock.clone(),
    );
    let mut settings = config.alerts.clone();
    if let Some(origin) = &config.origin {
        settings.origin = origin.clone();
    }
    Ok(AlertService::new(
        db.clone(),
        db.clone(),
        db.clone(),
        db.clone(),
        db,
        verdicts,
        settings,
        clock,
    ))
}

/// One line about an evaluation.
pub fn describe(s: &EvaluationSummary) -> String {
    if s.held_elsewhere {
        return format!(
            "evaluation {}: another process is evaluating it now (claimed less than 5 minutes ago)",
            s.key
        );
    }
    if !s.evaluated {
        return format!(
            "evaluation {}: already done (nothing changed since the last evaluation)",
            s.key
        );
    }
    format!(
        "evaluation {} (grading run {}): {} alerts, {} asset states observed, {} unknown \
         (no verdict or ranking place), {} events fired, {} webhook calls and {} e-mails queued, \
         in {:.2}s",
        s.key,
        s.run_id.as_deref().unwrap_or("none yet"),
        s.alerts,
        s.observed,
        s.unknown,
        s.events,
        s.calls,
        s.digests,
        s.seconds
    )
}

async fn check() -> anyhow::Result<()> {
    let config = Config::from_env()?;
    let db = store::connect(&config.database_url).await?;
    let alerts = service(&config, db.clone()).await?;
    let result = async {
        let evaluation = alerts.evaluate().await?;
        println!("{}", describe(&evaluation));
        let sent = alerts.deliver_due().await?;
        println!(
            "deliveries: {} delivered, {} failed and scheduled again, {} given up",
            sent.delivered, sent.retrying, sent.failed
        );
        anyhow::Ok(())
    }
    .await;
    db.close().await;
    result
}
