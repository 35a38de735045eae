//! `forecast-plugin`: the bundle tools (keygen, sign, verify, publish)
//! without the server, for strategy authors. `forecast plugin …` on a
//! server build runs the same code.

use clap::Parser;

/// Sign and publish Forecast Engine strategy plugins.
#[derive(Debug, Parser)]
#[command(name = "forecast-plugin", version)]
struct Cli {
    #[command(subcommand)]
    tool: forecast_bundle::cli::Tool,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    match forecast_bundle::cli::run(cli.tool).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
