//! Users, sessions and API keys.

use super::*;

/// Users (conflicts, tiers, limits), sessions (expiry) and keys (limits,
/// soft revocation, last use), including 20 concurrent key creations.
pub(crate) async fn accounts_conformance(db: Arc<dyn Database>) {
    let u = users_conflict_change_tiers_and_limits(&db).await;

    // Sessions expire.
    db.create_session("s1", &u, 1_000, 2_000).await.unwrap();
    assert_eq!(db.session_user("s1", 1_999).await.unwrap().unwrap().id, u);
    assert!(db.session_user("s1", 2_000).await.unwrap().is_none());
    db.delete_session("s1").await.unwrap();
    assert!(db.session_user("s1", 1_500).await.unwrap().is_none());

    let k2 = keys_are_capped_revoked_softly_and_owned(&db, &u).await;

    // last_used_at moves at most once a minute.
    db.touch_api_key(&k2, 10_000).await.unwrap();
    db.touch_api_key(&k2, 10_030).await.unwrap();
    assert_eq!(
        db.api_key_user("h2").await.unwrap().unwrap().0.last_used_at,
        Some(10_000)
    );
    db.touch_api_key(&k2, 10_060).await.unwrap();
    assert_eq!(
        db.api_key_user("h2").await.unwrap().unwrap().0.last_used_at,
        Some(10_060)
    );

    // Concurrency: 20 creations leave exactly 5 active keys.
    let carol = user(&*db, "carol@example.com", "h", Tier::Premium).await;
    let mut tasks = Vec::new();
    for i in 0..20 {
        let (db, id) = (db.clone(), carol.id.clone());
        tasks.push(tokio::spawn(async move {
            db.create_api_key(&id, "k", &format!("carol-{i}"), "svc_0000", 5, 1)
                .await
                .unwrap()
                .is_some()
        }));
    }
    assert_eq!(successes(tasks).await, 5);
    assert_eq!(db.list_api_keys(&carol.id).await.unwrap().len(), 5);
}

/// Users: an e-mail once, found by it, tier and limits changed; ann
/// (Premium, 7 a minute) and bob (Free) are left. Ann's id.
async fn users_conflict_change_tiers_and_limits(db: &Arc<dyn Database>) -> String {
    use forecast_domain::Tier;
    let u = db
        .create_user("ann@example.com", "hash-a", Tier::Premium, 1_000)
        .await
        .unwrap();
    assert!(matches!(
        db.create_user("ann@example.com", "x", Tier::Free, 1_001)
            .await,
        Err(StoreError::Conflict(_))
    ));
    let (found, hash) = db.user_by_email("ann@example.com").await.unwrap().unwrap();
    assert_eq!(
        (found.id.as_str(), hash.as_str(), found.tier),
        (u.id.as_str(), "hash-a", Tier::Premium)
    );
    assert!(db
        .user_by_email("nobody@example.com")
        .await
        .unwrap()
        .is_none());
    let down = db
        .set_user_tier("ann@example.com", Tier::Pro)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(down.tier, Tier::Pro);
    assert!(db
        .set_user_tier("nobody@example.com", Tier::Pro)
        .await
        .unwrap()
        .is_none());
    db.set_user_tier("ann@example.com", Tier::Premium)
        .await
        .unwrap();
    let limited = db
        .set_user_limits("ann@example.com", Some(7), None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((limited.per_minute, limited.per_day), (Some(7), None));
    db.create_user("bob@example.com", "hash-b", Tier::Free, 1_002)
        .await
        .unwrap();
    let emails: Vec<String> = db
        .list_users()
        .await
        .unwrap()
        .into_iter()
        .map(|u| u.email)
        .collect();
    assert_eq!(emails, ["ann@example.com", "bob@example.com"]);
    u.id
}

/// Keys of ann (`user`): at most N active; soft revoke; another user's
/// key is not found. The id of her key "two" (hash `h2`).
async fn keys_are_capped_revoked_softly_and_owned(db: &Arc<dyn Database>, user: &str) -> String {
    let k1 = db
        .create_api_key(user, "one", "h1", "svc_aaaa", 2, 5_000)
        .await
        .unwrap()
        .unwrap();
    let k2 = db
        .create_api_key(user, "two", "h2", "svc_bbbb", 2, 5_001)
        .await
        .unwrap()
        .unwrap();
    assert!(db
        .create_api_key(user, "three", "h3", "svc_cccc", 2, 5_002)
        .await
        .unwrap()
        .is_none());
    let listed = db.list_api_keys(user).await.unwrap();
    assert_eq!(
        listed.iter().map(|k| k.name.as_str()).collect::<Vec<_>>(),
        ["two", "one"]
    );
    let (key, owner) = db.api_key_user("h1").await.unwrap().unwrap();
    assert_eq!(
        (key.id.as_str(), key.created_at, owner.email.as_str()),
        (k1.id.as_str(), 5_000, "ann@example.com")
    );
    assert_eq!(owner.created_at, 1_000);
    assert_eq!(owner.per_minute, Some(7));
    let bob = db
        .user_by_email("bob@example.com")
        .await
        .unwrap()
        .unwrap()
        .0;
    assert!(
        !db.revoke_api_key(&bob.id, &k1.id, 6_000).await.unwrap(),
        "not bob's key"
    );
    assert!(db.revoke_api_key(user, &k1.id, 6_000).await.unwrap());
    assert!(
        !db.revoke_api_key(user, &k1.id, 6_001).await.unwrap(),
        "already revoked"
    );
    assert!(
        db.api_key_user("h1").await.unwrap().is_none(),
        "revoked keys do not authenticate"
    );
    assert_eq!(db.list_api_keys(user).await.unwrap().len(), 1);
    assert!(db
        .create_api_key(user, "three", "h3", "svc_cccc", 2, 6_002)
        .await
        .unwrap()
        .is_some());
    k2.id
}

/// Watchlists: order kept, replaced atomically, per user, inactive assets
/// left out.
pub(crate) async fn watchlist_conformance(db: Arc<dyn Database>) {
    catalog(
        &*db,
        &[
            entry(1, "AAA", Category::UsStocks, true),
            entry(2, "BBB", Category::Crypto, true),
            entry(3, "CCC", Category::Etfs, true),
            entry(4, "OLD", Category::UsStocks, false),
        ],
    )
    .await;
    let ann = user(&*db, "ann@example.com", "h", Tier::Premium).await;
    let bob = user(&*db, "bob@example.com", "h", Tier::Free).await;
    let tickers = |assets: Vec<forecast_domain::Asset>| {
        assets.into_iter().map(|a| a.ticker).collect::<Vec<_>>()
    };
    assert!(db.watchlist(&ann.id).await.unwrap().is_empty());
    db.set_watchlist(&ann.id, &[3, 1, 4], 10).await.unwrap();
    db.set_watchlist(&bob.id, &[2], 10).await.unwrap();
    assert_eq!(
        tickers(db.watchlist(&ann.id).await.unwrap()),
        ["CCC", "AAA"]
    );
    assert_eq!(tickers(db.watchlist(&bob.id).await.unwrap()), ["BBB"]);
    // Replaced, not appended.
    db.set_watchlist(&ann.id, &[2, 3], 11).await.unwrap();
    assert_eq!(
        tickers(db.watchlist(&ann.id).await.unwrap()),
        ["BBB", "CCC"]
    );
    // A failing replacement (a duplicate) leaves the old list whole.
    assert!(db.set_watchlist(&ann.id, &[1, 1], 12).await.is_err());
    assert_eq!(
        tickers(db.watchlist(&ann.id).await.unwrap()),
        ["BBB", "CCC"]
    );
    db.set_watchlist(&ann.id, &[], 13).await.unwrap();
    assert!(db.watchlist(&ann.id).await.unwrap().is_empty());
}

/// A password change replaces the hash and ends every session of that
/// user, and only theirs.
pub(crate) async fn password_change_conformance(db: Arc<dyn Database>) {
    let ann = user(&*db, "ann@example.com", "old", Tier::Premium).await;
    let bob = user(&*db, "bob@example.com", "bob", Tier::Free).await;
    db.create_session("s-ann-1", &ann.id, 1, 1_000)
        .await
        .unwrap();
    db.create_session("s-ann-2", &ann.id, 1, 1_000)
        .await
        .unwrap();
    db.create_session("s-bob", &bob.id, 1, 1_000).await.unwrap();
    assert!(db
        .set_user_password("ann@example.com", "new")
        .await
        .unwrap());
    assert_eq!(
        db.user_by_email("ann@example.com")
            .await
            .unwrap()
            .unwrap()
            .1,
        "new"
    );
    assert!(db.session_user("s-ann-1", 2).await.unwrap().is_none());
    assert!(db.session_user("s-ann-2", 2).await.unwrap().is_none());
    assert!(db.session_user("s-bob", 2).await.unwrap().is_some());
    assert!(!db
        .set_user_password("nobody@example.com", "x")
        .await
        .unwrap());
}

/// Sessions slide to now + idle, never past creation + absolute, at most
/// once per granularity; expired ones are purged.
pub(crate) async fn session_expiry_conformance(db: Arc<dyn Database>) {
    let ann = user(&*db, "ann@example.com", "h", Tier::Premium).await;
    let (idle, absolute, step) = (100, 250, 10);
    db.create_session("s1", &ann.id, 0, idle).await.unwrap();
    assert!(db.session_user("s1", 99).await.unwrap().is_some());
    assert!(db.session_user("s1", 100).await.unwrap().is_none(), "idle");
    db.create_session("s2", &ann.id, 0, idle).await.unwrap();
    // Used at 95: slid to 195; at 100 (within the step) left alone.
    db.slide_session("s2", 95, idle, absolute, step)
        .await
        .unwrap();
    assert!(db.session_user("s2", 194).await.unwrap().is_some());
    db.slide_session("s2", 100, idle, absolute, step)
        .await
        .unwrap();
    assert!(db.session_user("s2", 196).await.unwrap().is_none());
    // Kept alive, it still ends at creation + absolute.
    db.create_session("s3", &ann.id, 0, idle).await.unwrap();
    for now in [90, 180, 240] {
        db.slide_session("s3", now, idle, absolute, step)
            .await
            .unwrap();
    }
    assert!(db.session_user("s3", 249).await.unwrap().is_some());
    assert!(
        db.session_user("s3", 250).await.unwrap().is_none(),
        "absolute"
    );
    // An expired session cannot be revived.
    db.slide_session("s1", 150, idle, absolute, step)
        .await
        .unwrap();
    assert!(db.session_user("s1", 150).await.unwrap().is_none());
    assert_eq!(db.purge_sessions(300).await.unwrap(), 3);
    assert_eq!(db.purge_sessions(300).await.unwrap(), 0);
}
