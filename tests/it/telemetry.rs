//! Spans below HTTP (issue 23): the real `forecast serve` exporting its
//! spans over OTLP (HTTP/protobuf) to a receiver of the test's own, and its
//! log lines carrying the request id down to a guest's own.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::header;
use axum::routing::post;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message as _;
use serde_json::json;

use crate::common::{self, plain, Server};

/// A universe large enough for `top_n` 5 (the misbehaving strategy's
/// logging mode).
const TEN: [&str; 10] = [
    "^GSPC", "^IXIC", "^DJI", "^NDX", "^RUT", "^FTSE", "^GDAXI", "^FCHI", "^N225", "^HSI",
];

/// What the receiver got: the spans, and the `service.name` of each batch.
#[derive(Default)]
struct Received {
    spans: Vec<Span>,
    services: Vec<String>,
}

/// An OTLP/HTTP receiver on 127.0.0.1: `POST /v1/traces` with a protobuf
/// `ExportTraceServiceRequest`. Answers 200 with an empty (protobuf)
/// `ExportTraceServiceResponse`.
async fn receiver() -> (String, Arc<Mutex<Received>>) {
    let got = Arc::new(Mutex::new(Received::default()));
    let app = axum::Router::new().route(
        "/v1/traces",
        post({
            let got = got.clone();
            move |body: Bytes| async move {
                let request = ExportTraceServiceRequest::decode(body).expect("an OTLP request");
                let mut got = got.lock().unwrap();
                for resource in request.resource_spans {
                    let attributes = resource.resource.map(|r| r.attributes).unwrap_or_default();
                    if let Some(name) = text(&attributes, "service.name") {
                        got.services.push(name.to_string());
                    }
                    for scope in resource.scope_spans {
                        got.spans.extend(scope.spans);
                    }
                }
                (
                    [(header::CONTENT_TYPE, "application/x-protobuf")],
                    Vec::new(),
                )
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{address}"), got)
}

/// The string attribute `key` of a span or resource.
fn text<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a str> {
    attributes.iter().find(|kv| kv.key == key).and_then(|kv| {
        match kv.value.as_ref()?.value.as_ref()? {
            AnyValue::StringValue(s) => Some(s.as_str()),
            _ => None,
        }
    })
}

/// `span` and its ancestors among `by_id`, nearest first, by name.
fn ancestry<'a>(span: &'a Span, by_id: &HashMap<&[u8], &'a Span>) -> Vec<&'a str> {
    let mut chain = vec![span.name.as_str()];
    let mut at = span;
    while let Some(parent) = by_id.get(at.parent_span_id.as_slice()) {
        chain.push(parent.name.as_str());
        at = parent;
    }
    chain
}

/// One backtest's trace: the HTTP request's span, the backtest service's
/// under it, and the guest calls under that, all of one trace, exported to
/// the collector named by OTEL_EXPORTER_OTLP_ENDPOINT. And a guest's own
/// log line, written while it served a request, names that request's id
/// (the `x-request-id` the client got).
#[tokio::test]
async fn a_backtest_is_one_trace_from_the_request_to_the_guest_calls() {
    let (endpoint, got) = receiver().await;
    let dir = common::plugin_dir_with("misbehave_strategy");
    let log = dir.path().join("server.log");
    let s = Server::start_logging_with(
        common::fresh_db(),
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint),
            // Batches every 200 ms instead of 5 s.
            ("OTEL_BSP_SCHEDULE_DELAY", "200"),
            ("FORECAST_PLUGIN_DIR", dir.path().to_str().unwrap()),
        ],
        &log,
    );

    let r = s
        .client()
        .post(s.url("/api/backtest"))
        .bearer_auth(common::test_key())
        .json(&json!({"strategy": "topn", "category": "Crypto", "top_n": 3}))
        .send()
        .await
        .unwrap();
    let request_id = r.headers()["x-request-id"].to_str().unwrap().to_string();
    let status = r.status();
    assert_eq!(status, 200, "{:.300}", r.text().await.unwrap());

    let (spans, services) = the_requests_trace(&got, &request_id).await;
    assert!(services.iter().all(|s| s == "forecast"), "{services:?}");
    assert_request_backtest_and_guest_calls_nest(&spans);

    // A guest's own log line during a request names the request.
    let r = s
        .client()
        .post(s.url("/api/backtest"))
        .bearer_auth(common::test_key())
        .json(&json!({"strategy": "misbehave", "tickers": TEN, "top_n": 5,
                      "start_date": "2015-01-01", "end_date": "2015-12-31"}))
        .send()
        .await
        .unwrap();
    let request_id = r.headers()["x-request-id"].to_str().unwrap().to_string();
    let status = r.status();
    assert_eq!(status, 500, "{:.300}", r.text().await.unwrap());
    let started = Instant::now();
    loop {
        let logged = plain(&std::fs::read_to_string(&log).unwrap());
        let line = logged
            .lines()
            .find(|l| l.contains("misbehave: about to refuse"));
        if let Some(line) = line {
            assert!(
                line.contains(&format!("request_id={request_id}")),
                "the guest's line does not name request {request_id}: {line}"
            );
            assert!(line.contains("strategy/misbehave@"), "{line}");
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the guest's warning was not logged:\n{logged}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The spans arrive in batches: waits (bounded) for the span of request
/// `request_id`; the spans of its trace, and the service names of every
/// batch received.
async fn the_requests_trace(got: &Mutex<Received>, request_id: &str) -> (Vec<Span>, Vec<String>) {
    let started = Instant::now();
    loop {
        {
            let got = got.lock().unwrap();
            let request_span = got.spans.iter().find(|sp| {
                sp.name == "request" && text(&sp.attributes, "request_id") == Some(request_id)
            });
            if let Some(request_span) = request_span {
                // The request's span ends last: once it is here, so is the
                // rest of its trace (or it never comes).
                let trace = request_span.trace_id.clone();
                let spans: Vec<Span> = got
                    .spans
                    .iter()
                    .filter(|sp| sp.trace_id == trace)
                    .cloned()
                    .collect();
                return (spans, got.services.clone());
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "no span of request {request_id} reached the collector in 20 s ({} spans did)",
            got.lock().unwrap().spans.len()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// One trace of a topn backtest: the request's span at the root, the
/// backtest service's under it, and every guest call under that.
fn assert_request_backtest_and_guest_calls_nest(spans: &[Span]) {
    let by_id: HashMap<&[u8], &Span> = spans.iter().map(|s| (s.span_id.as_slice(), s)).collect();
    let request = spans.iter().find(|s| s.name == "request").unwrap();
    assert!(
        request.parent_span_id.is_empty(),
        "the request's span is the trace's root"
    );
    assert_eq!(text(&request.attributes, "uri"), Some("/api/backtest"));
    assert!(
        text(&request.attributes, "user_id").is_some_and(|u| !u.is_empty()),
        "the guard records the user on the request's span: {:?}",
        request.attributes
    );
    let service = spans
        .iter()
        .find(|s| s.name == "backtest")
        .unwrap_or_else(|| panic!("no backtest span in {:?}", names(spans)));
    assert_eq!(text(&service.attributes, "strategy"), Some("topn"));
    assert!(
        ancestry(service, &by_id).ends_with(&["request"]),
        "{:?}",
        ancestry(service, &by_id)
    );
    // The guest calls: the engine's walk-forward per asset on the signal
    // workers' threads, the strategy's start on the run's.
    let guest_calls: Vec<&Span> = spans
        .iter()
        .filter(|s| text(&s.attributes, "plugin").is_some())
        .collect();
    assert!(
        !guest_calls.is_empty(),
        "no guest call in {:?}",
        names(spans)
    );
    for call in &guest_calls {
        let chain = ancestry(call, &by_id);
        assert!(
            chain.contains(&"backtest") && chain.last() == Some(&"request"),
            "a guest call outside request → backtest: {chain:?}"
        );
        assert_eq!(text(&call.attributes, "outcome"), Some("ok"), "{chain:?}");
    }
    let strategy = guest_calls
        .iter()
        .find(|s| s.name == "start")
        .unwrap_or_else(|| panic!("no strategy call in {:?}", names(spans)));
    assert!(text(&strategy.attributes, "plugin")
        .unwrap()
        .starts_with("strategy/topn@"));
}

/// The spans' names, for failure messages.
fn names(spans: &[Span]) -> Vec<&str> {
    spans.iter().map(|s| s.name.as_str()).collect()
}
