//! What an operator reads before promoting a shadowed candidate: the
//! report of a shadow run, and the field-by-field difference of two JSON
//! answers it is built from.

use std::collections::BTreeMap;

use forecast_api::admin::{Latency, ShadowReport};
use forecast_domain::PluginKind;
use forecast_store::{PluginRegistry, ShadowSample};

use super::Error;

fn latency(mut v: Vec<f64>) -> Option<Latency> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    Some(Latency {
        mean: v.iter().sum::<f64>() / v.len() as f64,
        p50: at(0.5),
        p95: at(0.95),
    })
}

/// The report of `kind`'s running shadow.
pub async fn shadow_report(
    db: &dyn PluginRegistry,
    kind: PluginKind,
) -> Result<ShadowReport, Error> {
    let config = db
        .shadows()
        .await?
        .into_iter()
        .find(|s| s.kind == kind)
        .ok_or_else(|| Error::NotFound(format!("no shadow run for {kind}")))?;
    let candidate = format!("{}/{}@{}", config.kind, config.name, config.version);
    let samples = db.shadow_samples(kind, &candidate).await?;
    let mut max_differences: BTreeMap<String, f64> = BTreeMap::new();
    let mut compared_with: Vec<String> = Vec::new();
    for s in &samples {
        if let Ok(serde_json::Value::Object(d)) = serde_json::from_str(&s.diffs) {
            for (field, v) in d {
                let v = v.as_f64().unwrap_or(f64::INFINITY);
                let e = max_differences.entry(field).or_insert(0.0);
                *e = e.max(v);
            }
        }
        if !compared_with.contains(&s.active) {
            compared_with.push(s.active.clone());
        }
    }
    let ok: Vec<&ShadowSample> = samples.iter().filter(|s| s.error.is_none()).collect();
    let identical = samples.iter().filter(|s| s.identical).count();
    let errors: Vec<&ShadowSample> = samples.iter().filter(|s| s.error.is_some()).collect();
    Ok(ShadowReport {
        kind,
        candidate,
        sample: config.sample,
        samples: samples.len(),
        identical,
        identical_share: (!samples.is_empty()).then(|| identical as f64 / samples.len() as f64),
        max_differences,
        active_latency_ms: latency(samples.iter().map(|s| s.active_ms).collect()),
        candidate_latency_ms: latency(ok.iter().map(|s| s.candidate_ms).collect()),
        errors: errors.len(),
        error_examples: errors
            .iter()
            .rev()
            .take(5)
            .filter_map(|s| s.error.clone())
            .collect(),
        compared_with,
    })
}

/// Largest absolute difference per field between two JSON answers: numbers
/// are compared as numbers, array positions collapse to `[]` in the field
/// path, and any other change (a length, a string, a null) counts as an
/// infinite difference. Empty when the answers are identical.
pub fn json_differences(a: &serde_json::Value, b: &serde_json::Value) -> BTreeMap<String, f64> {
    fn walk(
        path: &str,
        a: &serde_json::Value,
        b: &serde_json::Value,
        out: &mut BTreeMap<String, f64>,
    ) {
        use serde_json::Value as V;
        let mut note = |d: f64| {
            let e = out
                .entry(if path.is_empty() {
                    ".".into()
                } else {
                    path.into()
                })
                .or_insert(0.0);
            *e = e.max(d);
        };
        match (a, b) {
            (V::Number(x), V::Number(y)) => {
                let (x, y) = (
                    x.as_f64().unwrap_or(f64::NAN),
                    y.as_f64().unwrap_or(f64::NAN),
                );
                if x.to_bits() != y.to_bits() {
                    note((x - y).abs());
                }
            }
            (V::Array(x), V::Array(y)) => {
                if x.len() != y.len() {
                    note(f64::INFINITY);
                }
                let p = format!("{path}[]");
                for (u, v) in x.iter().zip(y) {
                    walk(&p, u, v, out);
                }
            }
            (V::Object(x), V::Object(y)) => {
                for (k, u) in x {
                    let p = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    };
                    match y.get(k) {
                        Some(v) => walk(&p, u, v, out),
                        None => {
                            out.insert(p, f64::INFINITY);
                        }
                    }
                }
                for k in y.keys().filter(|k| !x.contains_key(*k)) {
                    let p = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    };
                    out.insert(p, f64::INFINITY);
                }
            }
            (x, y) if x == y => {}
            _ => note(f64::INFINITY),
        }
    }
    let mut out = BTreeMap::new();
    walk("", a, b, &mut out);
    out
}
