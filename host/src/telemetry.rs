//! Optional OpenTelemetry export of the spans (issue 23).
//!
//! With `OTEL_EXPORTER_OTLP_ENDPOINT` set (e.g. `http://127.0.0.1:4318`),
//! [`otlp`] gives `main` a `tracing-opentelemetry` layer that sends every
//! span the log filter lets through (`RUST_LOG`) to that collector, as
//! OTLP over HTTP/protobuf (`<endpoint>/v1/traces`), in batches from a task
//! on the tokio runtime, with `service.name` = `forecast`. The exporter's
//! other standard variables apply (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`,
//! `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT`, and the batch
//! processor's `OTEL_BSP_*`). Unset (or empty), there is no layer, no
//! exporter and no task: the spans cost what the log output costs.
//!
//! The [`Telemetry`] guard flushes what is still queued when it is dropped,
//! at the end of `main`'s `run`, so the spans of a graceful shutdown's last
//! requests are sent.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, SpanExporter, WithExportConfig as _};
use opentelemetry_sdk::runtime;
use opentelemetry_sdk::trace::span_processor_with_async_runtime::BatchSpanProcessor;
use opentelemetry_sdk::trace::{SdkTracerProvider, Tracer};
use opentelemetry_sdk::Resource;
use tracing_opentelemetry::OpenTelemetryLayer;

/// The variable that turns the export on.
pub const ENDPOINT_VAR: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";

/// The `service.name` of every exported span.
pub const SERVICE_NAME: &str = "forecast";

/// Flushes and stops the export when dropped (nothing when it is off).
#[must_use = "dropping the guard stops the export"]
pub struct Telemetry {
    provider: Option<SdkTracerProvider>,
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Some(provider) = self.provider.take() {
            // Sends the queued spans and waits for the batch task's answer;
            // the task runs on the runtime's workers, not on this thread.
            if let Err(e) = provider.shutdown() {
                eprintln!("warning: the OpenTelemetry export did not flush: {e}");
            }
        }
    }
}

/// The export's layer for a subscriber `S` when [`ENDPOINT_VAR`] is set,
/// and its guard. Called inside the tokio runtime (the batch task is
/// spawned on it), before the subscriber is installed: a failure is told
/// on stderr and the server runs without export.
pub fn otlp<S>() -> (Option<OpenTelemetryLayer<S, Tracer>>, Telemetry)
where
    S: tracing::Subscriber + for<'span> tracing_subscriber::registry::LookupSpan<'span>,
{
    let off = Telemetry { provider: None };
    let Some(endpoint) = std::env::var(ENDPOINT_VAR).ok().filter(|e| !e.is_empty()) else {
        return (None, off);
    };
    let exporter = match SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .build()
    {
        Ok(exporter) => exporter,
        Err(e) => {
            eprintln!("warning: {ENDPOINT_VAR}={endpoint}: no OpenTelemetry export: {e}");
            return (None, off);
        }
    };
    let provider = SdkTracerProvider::builder()
        .with_span_processor(BatchSpanProcessor::builder(exporter, runtime::Tokio).build())
        .with_resource(Resource::builder().with_service_name(SERVICE_NAME).build())
        .build();
    let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer(SERVICE_NAME));
    (
        Some(layer),
        Telemetry {
            provider: Some(provider),
        },
    )
}
