//! Safe defaults (issue 14), in process: `X-RateLimit-*` on every API
//! response, counted per client address when no user's quota meters the
//! request (anonymous, wrong keys, other tiers, health, session routes),
//! and wrong admin tokens throttled.

use crate::common;

use common::{create_key, Server, ADMIN_TOKEN};

fn limit_headers(h: &reqwest::header::HeaderMap) -> (u64, u64) {
    let n = |name: &str| -> u64 {
        h.get(name)
            .unwrap_or_else(|| panic!("missing {name} in {h:?}"))
            .to_str()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert!(n("x-ratelimit-reset") > 1_700_000_000);
    (n("x-ratelimit-limit"), n("x-ratelimit-remaining"))
}

#[tokio::test]
async fn every_api_response_reports_the_limit_it_is_counted_against() {
    let s = Server::app_with(common::fresh_db(), &[("FORECAST_CLIENT_PER_MINUTE", "8")]).await;
    common::add_user(&s.db, "free@example.com", "free", Some("free password"));
    let free_key = create_key(&s.db, "free@example.com", "k");
    let unknown_key = format!("svc_{}", "ab".repeat(32));
    let c = s.client();
    let requests = [
        ("GET /api/health", c.get(s.url("/api/health"))),
        ("GET /api/openapi.json", c.get(s.url("/api/openapi.json"))),
        ("GET /auth/me (401)", c.get(s.url("/auth/me"))),
        (
            "GET /api/assets without a key (401)",
            c.get(s.url("/api/assets")),
        ),
        (
            "GET /api/assets with an unknown key (401)",
            c.get(s.url("/api/assets")).bearer_auth(&unknown_key),
        ),
        (
            "GET /api/assets with a Free key (402)",
            c.get(s.url("/api/assets")).bearer_auth(&free_key),
        ),
        ("GET /nowhere/api (404)", c.get(s.url("/api/nowhere"))),
    ];
    let mut last_remaining = u64::MAX;
    for (what, req) in requests {
        let r = req.send().await.unwrap();
        assert_ne!(r.status(), 429, "{what}");
        let (limit, remaining) = limit_headers(r.headers());
        assert_eq!(limit, 8, "{what}: the per-client limit");
        assert!(remaining < last_remaining, "{what}: each one counts");
        last_remaining = remaining;
    }
    // The allowance is spent: the next anonymous request waits.
    let _ = c.get(s.url("/api/health")).send().await.unwrap();
    let r = c.get(s.url("/api/health")).send().await.unwrap();
    assert_eq!(r.status(), 429);
    assert!(r.headers().contains_key("retry-after"));
    assert_eq!(limit_headers(r.headers()), (8, 0));
    // A valid Premium key is metered by its user's quota, not the address.
    let r = c
        .get(s.url("/api/assets?category=Indices"))
        .bearer_auth(common::test_key())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(
        limit_headers(r.headers()).0,
        1_000_000,
        "the user's own quota"
    );
}

#[tokio::test]
async fn wrong_admin_tokens_are_throttled() {
    let s = Server::app().await;
    let admin = |token: &str| {
        s.client()
            .get(s.url("/api/admin/plugins"))
            .bearer_auth(token)
            .send()
    };
    for i in 0..10 {
        let r = admin(&format!("guess-number-{i:06}")).await.unwrap();
        assert_eq!(r.status(), 401, "guess {i}");
    }
    let r = admin("guess-number-000010").await.unwrap();
    assert_eq!(r.status(), 429);
    assert!(r.headers().contains_key("retry-after"));
    // Even the right token waits now, so a guess cannot be confirmed.
    assert_eq!(admin(ADMIN_TOKEN).await.unwrap().status(), 429);
}
