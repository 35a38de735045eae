//! The kinds the registry manages, the slot an activation replaces, and
//! what a valid name and version look like.

use forecast_domain::PluginKind;

use super::Error;

/// Kinds that can be shadowed (their answers are compared field by field).
pub const SHADOW_KINDS: [PluginKind; 1] = [PluginKind::Segmentation];

/// Parses a kind as the CLI and the admin API receive it; an unknown one
/// is a 400 naming the allowed values.
pub fn parse_kind(kind: &str) -> Result<PluginKind, Error> {
    kind.parse().map_err(|_| {
        let all: Vec<&str> = PluginKind::ALL.iter().map(|k| k.as_str()).collect();
        Error::Invalid(format!(
            "unknown plugin kind '{kind}'; expected one of: {}",
            all.join(", ")
        ))
    })
}

/// The slot an activation of (kind, name) replaces: one engine, one scorer
/// (and one matcher) at a time, one version per strategy name.
pub fn slot(kind: PluginKind, name: &str) -> String {
    match kind {
        PluginKind::Strategy => format!("strategy/{name}"),
        other => other.as_str().to_string(),
    }
}

/// True for `MAJOR.MINOR.PATCH` with optional `-pre` and `+build` parts.
pub fn valid_version(v: &str) -> bool {
    let core = v.split(['-', '+']).next().unwrap_or("");
    let parts: Vec<&str> = core.split('.').collect();
    v.len() <= 64
        && parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
}

/// The label of a version in messages, `kind/name@version`.
pub(crate) fn label(kind: PluginKind, name: &str, version: &str) -> String {
    format!("{kind}/{name}@{version}")
}
