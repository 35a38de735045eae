//! The web application (issue 13): the files `npm run build` writes to
//! `web/dist`, embedded in the binary when it compiles, so `forecast serve`
//! needs nothing beside itself and works offline.
//!
//! The HTTP layer asks two things: which file answers a `/static/…` path
//! (Vite's hashed JavaScript and CSS), and whether a path is one of the
//! application's pages, which all answer `index.html` (the browser-side
//! router then draws the page). Every other path stays the API's.

use std::borrow::Cow;

/// The built application. A missing folder (the front end not built, e.g.
/// `cargo build` without `make`) embeds nothing: [`index`] is then `None`
/// and the pages answer that the web app is not built.
#[derive(rust_embed::RustEmbed)]
#[folder = "../../web/dist"]
#[allow_missing = true]
struct Dist;

/// Where the hashed assets of a build are served from (`build.assetsDir`
/// in `web/vite.config.ts`; not `/assets`, which is a page).
pub const STATIC_PREFIX: &str = "/static/";

/// One embedded file.
pub struct WebFile {
    /// Its bytes.
    pub bytes: Cow<'static, [u8]>,
    /// Its media type, from its extension.
    pub mime: String,
    /// A strong validator: the SHA-256 of the bytes, quoted.
    pub etag: String,
    /// Whether its name carries its content hash, so it may be cached
    /// for ever.
    pub immutable: bool,
}

fn get(name: &str, immutable: bool) -> Option<WebFile> {
    let file = Dist::get(name)?;
    Some(WebFile {
        mime: file.metadata.mimetype().to_string(),
        etag: format!("\"{}\"", hex::encode(file.metadata.sha256_hash())),
        bytes: file.data,
        immutable,
    })
}

/// The page shell every page path answers; `None` when the front end was
/// not built into this binary.
pub fn index() -> Option<WebFile> {
    get("index.html", false)
}

/// The built file a `/static/…` path names, if any.
pub fn static_file(path: &str) -> Option<WebFile> {
    let name = path.strip_prefix('/')?;
    if !path.starts_with(STATIC_PREFIX) || name.split('/').any(|part| part == "..") {
        return None;
    }
    get(name, true)
}

/// Top-level files of the build served by name (the icon).
pub fn root_file(path: &str) -> Option<WebFile> {
    match path {
        "/favicon.svg" => get("favicon.svg", false),
        _ => None,
    }
}

/// The application's pages (each answers `index.html`): `/`, `/login`,
/// `/onboarding`, `/keys`, `/explore`, `/ranking`, `/backtest`,
/// `/strategies`, `/plans`, `/glossary`, `/track-record`, `/methodology`,
/// `/alerts`, `/compare` and `/assets/{ticker}`.
pub fn is_page(path: &str) -> bool {
    const PAGES: [&str; 14] = [
        "/",
        "/login",
        "/onboarding",
        "/keys",
        "/explore",
        "/ranking",
        "/backtest",
        "/strategies",
        "/plans",
        "/glossary",
        "/track-record",
        "/methodology",
        "/alerts",
        "/compare",
    ];
    let trimmed = path.trim_end_matches('/');
    PAGES.contains(&if trimmed.is_empty() { "/" } else { trimmed })
        || path
            .strip_prefix("/assets/")
            .is_some_and(|ticker| !ticker.is_empty() && !ticker.contains('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_the_app_routes_only() {
        for page in [
            "/",
            "/login",
            "/login/",
            "/keys",
            "/assets/AAPL",
            "/assets/%5EGSPC",
            "/backtest",
            "/strategies",
            "/plans",
            "/glossary",
            "/track-record",
            "/methodology",
            "/alerts",
            "/compare",
        ] {
            assert!(is_page(page), "{page}");
        }
        for other in [
            "/api/health",
            "/assets",
            "/assets/",
            "/assets/a/b",
            "/static/x.js",
            "/loginx",
            "/web/watchlist",
        ] {
            assert!(!is_page(other), "{other}");
        }
    }

    #[test]
    fn static_paths_cannot_leave_the_folder() {
        assert!(static_file("/static/../index.html").is_none());
        assert!(static_file("/index.html").is_none());
    }
}
