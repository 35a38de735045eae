//! Strategies uploaded by their authors.

use super::*;
use crate::{
    AuthoredStrategy, PluginRun, UpdateOutcome, UploadLimits, UploadOutcome, UploadRecord,
};

const ANN: &str = "u-ann";
const BOB: &str = "u-bob";

/// Two strategies per owner, three versions per strategy.
const LIMITS: UploadLimits = UploadLimits {
    strategies_per_owner: 2,
    versions_per_strategy: 3,
};

fn upload(owner: &str, name: &str, version: &str, sha256: &str, at: i64) -> UploadRecord {
    UploadRecord {
        owner_id: owner.into(),
        name: name.into(),
        version: version.into(),
        sha256: sha256.into(),
        size: 5,
        signer: None,
        manifest: None,
        uploaded_at: at,
        imports: vec![format!("forecast:plugins/types@{version}")],
    }
}

/// `@handle/name@current` and each version, for compact assertions.
fn label(s: &AuthoredStrategy) -> String {
    let versions: Vec<&str> = s.versions.iter().map(|v| v.version.as_str()).collect();
    format!(
        "@{}/{}@{}{} [{}]",
        s.handle,
        s.name,
        s.current_version,
        if s.shared { " shared" } else { "" },
        versions.join(" ")
    )
}

async fn visible(db: &dyn Database, viewer: &str) -> Vec<String> {
    db.visible_strategies(viewer)
        .await
        .unwrap()
        .iter()
        .map(label)
        .collect()
}

async fn authored(db: &dyn Database, handle: &str, name: &str) -> Option<String> {
    db.authored_strategy(handle, name)
        .await
        .unwrap()
        .as_ref()
        .map(label)
}

async fn update(
    db: &dyn Database,
    owner_id: &str,
    name: &str,
    shared: Option<bool>,
    current_version: Option<&str>,
) -> UpdateOutcome {
    db.update_strategy(owner_id, name, shared, current_version)
        .await
        .unwrap()
}

async fn add(
    db: &dyn Database,
    handle: &str,
    r: &UploadRecord,
    wasm: &[u8],
    limits: UploadLimits,
) -> UploadOutcome {
    db.add_upload(handle, r, wasm, limits).await.unwrap()
}

/// Uploads, listing and visibility, immutability (also after a delete),
/// the per-owner limits, updates, delete and revival.
pub(crate) async fn strategies_conformance(db: Arc<dyn Database>) {
    let db = &*db;
    assert!(db.visible_strategies(ANN).await.unwrap().is_empty());
    assert_eq!(authored(db, "ann", "alpha").await, None);

    let alpha = the_first_version_is_private_and_immutable(db).await;
    let g1 = versions_and_strategies_are_limited_per_owner(db, &alpha).await;
    updates_share_and_pick_the_current_version(db).await;
    a_deleted_strategy_is_hidden_and_keeps_its_records(db, &alpha, &g1).await;
    re_adding_revives_it_private_with_its_records(db, &alpha).await;

    // Reviving with a version it already had (same bytes): that version
    // current, private, no new record.
    assert!(db.delete_strategy(ANN, "alpha").await.unwrap());
    let a11 = upload(ANN, "alpha", "1.1.0", "a11", 300);
    assert_eq!(
        add(db, "ann", &a11, b"a11", LIMITS).await,
        UploadOutcome::Added
    );
    assert_eq!(
        authored(db, "ann", "alpha").await.unwrap(),
        "@ann/alpha@1.1.0 [2.0.0 1.1.0 1.2.0 1.0.0]"
    );
    assert_eq!(
        db.upload_wasm(ANN, "alpha", "1.1.0").await.unwrap(),
        Some(b"a11".to_vec())
    );
    assert_eq!(db.upload_wasm(ANN, "alpha", "2.0.0").await.unwrap(), None);
    assert_eq!(
        db.authored_strategy("ann", "alpha")
            .await
            .unwrap()
            .unwrap()
            .versions[1]
            .uploaded_at,
        105,
        "the record is the first upload's"
    );

    let held = db.authored_strategy("ann", "alpha").await.unwrap().unwrap();
    let v = held.versions.iter().find(|v| v.version == "1.1.0").unwrap();
    assert_eq!(v.imports, ["forecast:plugins/types@1.1.0"], "imports kept");

    plugin_runs_keep_the_newest(db).await;
}

/// Ann's alpha 1.0.0: its record, its bytes, and a record of the same
/// version with other bytes (which always conflicts).
struct Alpha {
    a1: UploadRecord,
    wasm_a1: Vec<u8>,
    other: UploadRecord,
}

/// Generous limits: two strategies per owner, ten versions each.
const ROOMY: UploadLimits = UploadLimits {
    strategies_per_owner: 2,
    versions_per_strategy: 10,
};

/// The first version: current and private, seen by its owner only.
/// Immutability: the same bytes are a no-op, other bytes conflict.
async fn the_first_version_is_private_and_immutable(db: &dyn Database) -> Alpha {
    let mut a1 = upload(ANN, "alpha", "1.0.0", "a1", 100);
    a1.signer = Some("key-1".into());
    a1.manifest = Some("{\"name\":\"alpha\"}".into());
    let wasm_a1: Vec<u8> = (0..=255u8).cycle().take(70_000).collect();
    a1.size = wasm_a1.len() as i64;
    assert_eq!(
        add(db, "ann", &a1, &wasm_a1, LIMITS).await,
        UploadOutcome::Added
    );
    let alpha = db.authored_strategy("ann", "alpha").await.unwrap().unwrap();
    assert_eq!(
        alpha,
        AuthoredStrategy {
            owner_id: ANN.into(),
            handle: "ann".into(),
            name: "alpha".into(),
            current_version: "1.0.0".into(),
            shared: false,
            versions: vec![a1.clone()],
        }
    );
    assert_eq!(visible(db, ANN).await, ["@ann/alpha@1.0.0 [1.0.0]"]);
    assert!(visible(db, BOB).await.is_empty(), "private to its owner");
    assert_eq!(
        db.upload_wasm(ANN, "alpha", "1.0.0").await.unwrap(),
        Some(wasm_a1.clone())
    );
    assert_eq!(db.upload_wasm(ANN, "alpha", "9.9.9").await.unwrap(), None);
    assert_eq!(db.upload_wasm(BOB, "alpha", "1.0.0").await.unwrap(), None);
    assert_eq!(authored(db, "bob", "alpha").await, None, "another handle");

    assert_eq!(
        add(db, "ann", &a1, &wasm_a1, LIMITS).await,
        UploadOutcome::AlreadyPresent
    );
    let other = upload(ANN, "alpha", "1.0.0", "zz", 101);
    assert_eq!(
        add(db, "ann", &other, b"other", LIMITS).await,
        UploadOutcome::Conflict("a1".into())
    );
    assert_eq!(
        db.upload_wasm(ANN, "alpha", "1.0.0").await.unwrap(),
        Some(wasm_a1.clone()),
        "the first bytes stay"
    );
    Alpha { a1, wasm_a1, other }
}

/// Later versions of alpha listed newest upload first, the current one
/// staying; the version limit (three) and the strategy limit (two per
/// owner), each checked before anything is written; another owner's limits
/// and names are their own. Ann's refused gamma.
async fn versions_and_strategies_are_limited_per_owner(
    db: &dyn Database,
    alpha: &Alpha,
) -> UploadRecord {
    // The order is the upload order, not the versions' nor the clocks'.
    for (version, sha, at) in [("1.2.0", "a12", 110), ("1.1.0", "a11", 105)] {
        let r = upload(ANN, "alpha", version, sha, at);
        assert_eq!(
            add(db, "ann", &r, sha.as_bytes(), LIMITS).await,
            UploadOutcome::Added
        );
    }
    assert_eq!(
        authored(db, "ann", "alpha").await.unwrap(),
        "@ann/alpha@1.0.0 [1.1.0 1.2.0 1.0.0]"
    );
    let a13 = upload(ANN, "alpha", "1.3.0", "a13", 120);
    assert_eq!(
        add(db, "ann", &a13, b"a13", LIMITS).await,
        UploadOutcome::TooManyVersions
    );
    assert_eq!(db.upload_wasm(ANN, "alpha", "1.3.0").await.unwrap(), None);
    assert_eq!(
        add(db, "ann", &alpha.a1, &alpha.wasm_a1, LIMITS).await,
        UploadOutcome::AlreadyPresent,
        "an existing version is no new version"
    );
    assert_eq!(
        add(db, "ann", &alpha.other, b"other", LIMITS).await,
        UploadOutcome::Conflict("a1".into())
    );

    let b1 = upload(ANN, "beta", "1.0.0", "b1", 130);
    assert_eq!(
        add(db, "ann", &b1, b"b1", LIMITS).await,
        UploadOutcome::Added
    );
    let g1 = upload(ANN, "gamma", "1.0.0", "g1", 131);
    assert_eq!(
        add(db, "ann", &g1, b"g1", LIMITS).await,
        UploadOutcome::TooManyStrategies
    );
    assert_eq!(authored(db, "ann", "gamma").await, None);
    assert_eq!(db.upload_wasm(ANN, "gamma", "1.0.0").await.unwrap(), None);
    let bob_alpha = upload(BOB, "alpha", "0.1.0", "ba", 140);
    assert_eq!(
        add(db, "bob", &bob_alpha, b"ba", LIMITS).await,
        UploadOutcome::Added
    );
    assert_eq!(
        authored(db, "bob", "alpha").await.unwrap(),
        "@bob/alpha@0.1.0 [0.1.0]"
    );
    g1
}

/// Updates: shared and/or current; nothing applied on NoVersion; only
/// the owner's. Shared is seen by everyone; by handle, then name.
async fn updates_share_and_pick_the_current_version(db: &dyn Database) {
    assert_eq!(
        update(db, ANN, "alpha", Some(true), Some("1.2.0")).await,
        UpdateOutcome::Updated
    );
    assert_eq!(
        update(db, ANN, "alpha", Some(false), Some("9.9.9")).await,
        UpdateOutcome::NoVersion
    );
    assert_eq!(
        update(db, ANN, "alpha", None, Some("0.1.0")).await,
        UpdateOutcome::NoVersion,
        "another owner's version"
    );
    assert_eq!(
        update(db, ANN, "alpha", None, None).await,
        UpdateOutcome::Updated
    );
    assert_eq!(
        update(db, ANN, "nothing", Some(true), None).await,
        UpdateOutcome::NoStrategy
    );
    assert_eq!(
        update(db, BOB, "beta", Some(true), None).await,
        UpdateOutcome::NoStrategy,
        "another owner's strategy"
    );
    assert_eq!(
        authored(db, "ann", "alpha").await.unwrap(),
        "@ann/alpha@1.2.0 shared [1.1.0 1.2.0 1.0.0]"
    );
    assert_eq!(
        visible(db, BOB).await,
        [
            "@ann/alpha@1.2.0 shared [1.1.0 1.2.0 1.0.0]",
            "@bob/alpha@0.1.0 [0.1.0]"
        ]
    );
    assert_eq!(
        visible(db, ANN).await,
        [
            "@ann/alpha@1.2.0 shared [1.1.0 1.2.0 1.0.0]",
            "@ann/beta@1.0.0 [1.0.0]"
        ]
    );
    assert_eq!(
        update(db, BOB, "alpha", Some(true), None).await,
        UpdateOutcome::Updated
    );
    assert_eq!(
        visible(db, ANN).await,
        [
            "@ann/alpha@1.2.0 shared [1.1.0 1.2.0 1.0.0]",
            "@ann/beta@1.0.0 [1.0.0]",
            "@bob/alpha@0.1.0 shared [0.1.0]"
        ]
    );
    assert_eq!(
        visible(db, "u-carol").await,
        [
            "@ann/alpha@1.2.0 shared [1.1.0 1.2.0 1.0.0]",
            "@bob/alpha@0.1.0 shared [0.1.0]"
        ]
    );
    assert_eq!(
        update(db, ANN, "alpha", Some(false), None).await,
        UpdateOutcome::Updated
    );
    assert_eq!(visible(db, BOB).await, ["@bob/alpha@0.1.0 shared [0.1.0]"]);
}

/// Delete: hidden everywhere, bytes dropped, version records kept (a
/// conflict revives nothing); a deleted strategy does not count against
/// the owner's limit (`g1` fits), but reviving one does, and its kept
/// records count against the version limit.
async fn a_deleted_strategy_is_hidden_and_keeps_its_records(
    db: &dyn Database,
    alpha: &Alpha,
    g1: &UploadRecord,
) {
    assert!(db.delete_strategy(ANN, "alpha").await.unwrap());
    assert!(!db.delete_strategy(ANN, "alpha").await.unwrap(), "once");
    assert!(!db.delete_strategy(ANN, "nothing").await.unwrap());
    assert!(!db.delete_strategy(BOB, "beta").await.unwrap());
    assert_eq!(authored(db, "ann", "alpha").await, None);
    assert_eq!(visible(db, ANN).await[0], "@ann/beta@1.0.0 [1.0.0]");
    for version in ["1.0.0", "1.1.0", "1.2.0"] {
        assert_eq!(db.upload_wasm(ANN, "alpha", version).await.unwrap(), None);
    }
    assert_eq!(
        update(db, ANN, "alpha", Some(true), None).await,
        UpdateOutcome::NoStrategy
    );
    // Its (name, version) → sha256 stay taken, and a conflict revives
    // nothing.
    assert_eq!(
        add(db, "ann", &alpha.other, b"other", LIMITS).await,
        UploadOutcome::Conflict("a1".into())
    );
    assert_eq!(authored(db, "ann", "alpha").await, None);
    assert_eq!(
        add(db, "ann", g1, b"g1", LIMITS).await,
        UploadOutcome::Added
    );
    let a2 = upload(ANN, "alpha", "2.0.0", "a2", 200);
    assert_eq!(
        add(db, "ann", &a2, b"a2", ROOMY).await,
        UploadOutcome::TooManyStrategies
    );
    assert!(db.delete_strategy(ANN, "gamma").await.unwrap());
    assert_eq!(
        add(db, "ann", &a2, b"a2", LIMITS).await,
        UploadOutcome::TooManyVersions
    );
    assert_eq!(authored(db, "ann", "alpha").await, None);
}

/// Re-adding revives it: the new version current, private (it was
/// shared before), the earlier records kept without their bytes; the
/// same bytes again bring a version's bytes back.
async fn re_adding_revives_it_private_with_its_records(db: &dyn Database, alpha: &Alpha) {
    assert_eq!(
        update(db, ANN, "beta", Some(true), None).await,
        UpdateOutcome::Updated
    );
    let a2 = upload(ANN, "alpha", "2.0.0", "a2", 200);
    assert_eq!(
        add(db, "ann", &a2, b"a2", ROOMY).await,
        UploadOutcome::Added
    );
    assert_eq!(
        authored(db, "ann", "alpha").await.unwrap(),
        "@ann/alpha@2.0.0 [2.0.0 1.1.0 1.2.0 1.0.0]"
    );
    let revived = db.authored_strategy("ann", "alpha").await.unwrap().unwrap();
    assert_eq!(revived.versions[0], a2);
    assert_eq!(revived.versions[3], alpha.a1, "records are immutable");
    assert_eq!(
        db.upload_wasm(ANN, "alpha", "2.0.0").await.unwrap(),
        Some(b"a2".to_vec())
    );
    assert_eq!(db.upload_wasm(ANN, "alpha", "1.0.0").await.unwrap(), None);
    assert_eq!(
        update(db, ANN, "alpha", None, Some("1.0.0")).await,
        UpdateOutcome::NoVersion,
        "its bytes are gone"
    );
    assert_eq!(
        visible(db, BOB).await,
        [
            "@ann/beta@1.0.0 shared [1.0.0]",
            "@bob/alpha@0.1.0 shared [0.1.0]"
        ],
        "the revived strategy is private"
    );
    assert_eq!(
        add(db, "ann", &alpha.a1, &alpha.wasm_a1, ROOMY).await,
        UploadOutcome::AlreadyPresent
    );
    assert_eq!(
        db.upload_wasm(ANN, "alpha", "1.0.0").await.unwrap(),
        Some(alpha.wasm_a1.clone())
    );
    assert_eq!(
        update(db, ANN, "alpha", None, Some("1.0.0")).await,
        UpdateOutcome::Updated
    );
}

/// An account's runs of a component beyond its newest `keep` are dropped;
/// other components' and other accounts' runs are untouched; each account
/// reads its own runs only; unmetered runs keep a null fuel.
async fn plugin_runs_keep_the_newest(db: &dyn Database) {
    let run = |sha: &str, at: i64, fuel: Option<u64>, user: &str| PluginRun {
        sha256: sha.into(),
        ran_at: at,
        calls: 10 + at as u64,
        fuel,
        guest_ms: at as f64 / 4.0,
        peak_memory_bytes: 1 << 20,
        user_id: user.into(),
    };
    for at in 0..7 {
        db.record_plugin_run(&run("aa", at, Some(1_000 * at as u64), "u1"), 5)
            .await
            .unwrap();
    }
    db.record_plugin_run(&run("bb", 100, None, "u1"), 5)
        .await
        .unwrap();
    db.record_plugin_run(&run("aa", 200, Some(7), "u2"), 5)
        .await
        .unwrap();
    let runs = db.plugin_runs("u1", 1_000).await.unwrap();
    let of = |sha: &str| -> Vec<i64> {
        runs.iter()
            .filter(|r| r.sha256 == sha)
            .map(|r| r.ran_at)
            .collect()
    };
    assert_eq!(
        of("aa"),
        vec![6, 5, 4, 3, 2],
        "the newest five, newest first, of u1's own"
    );
    assert_eq!(of("bb"), vec![100]);
    assert_eq!(runs.iter().find(|r| r.sha256 == "bb").unwrap().fuel, None);
    assert!(runs.iter().all(|r| r.user_id == "u1"));
    let theirs = db.plugin_runs("u2", 1_000).await.unwrap();
    assert_eq!(
        theirs.iter().map(|r| r.ran_at).collect::<Vec<_>>(),
        vec![200],
        "u2 reads its own run only"
    );
    assert_eq!(
        db.plugin_runs("u1", 2).await.unwrap().len(),
        2,
        "the limit holds"
    );
}

/// Twelve `add_upload`s at once, alternating between `pools`: the `i`th
/// adds what `make(i)` gives (handle, record, bytes). Their outcomes, in
/// that order.
async fn add_at_once(
    pools: &[Arc<dyn Database>; 2],
    limits: UploadLimits,
    make: impl Fn(usize) -> (&'static str, UploadRecord, Vec<u8>),
) -> Vec<UploadOutcome> {
    let mut tasks = Vec::new();
    for i in 0..12 {
        let db = pools[i % 2].clone();
        let (handle, r, wasm) = make(i);
        tasks.push(tokio::spawn(async move {
            db.add_upload(handle, &r, &wasm, limits).await.unwrap()
        }));
    }
    let mut outcomes = Vec::new();
    for t in tasks {
        outcomes.push(t.await.unwrap());
    }
    outcomes
}

/// How many of `outcomes` are [`UploadOutcome::Added`].
fn added(outcomes: &[UploadOutcome]) -> usize {
    outcomes
        .iter()
        .filter(|o| **o == UploadOutcome::Added)
        .count()
}

/// Two pools on one database (two replicas) adding at once: the per-owner
/// limits hold and one (owner, name, version) gets one sha256.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_strategies_across_pools() {
    let url = pg_test_database().await;
    let pools = [connect(&url).await.unwrap(), connect(&url).await.unwrap()];
    let limits = UploadLimits {
        strategies_per_owner: 3,
        versions_per_strategy: 4,
    };

    // Twelve new strategies of one owner at once: three fit.
    let outcomes = add_at_once(&pools, limits, |i| {
        let r = upload(ANN, &format!("s{i:02}"), "1.0.0", &format!("sha{i}"), 1);
        ("ann", r, b"wasm".to_vec())
    })
    .await;
    assert_eq!(added(&outcomes), 3, "{outcomes:?}");
    assert!(outcomes
        .iter()
        .all(|o| matches!(o, UploadOutcome::Added | UploadOutcome::TooManyStrategies)));
    assert_eq!(pools[1].visible_strategies(ANN).await.unwrap().len(), 3);

    // Twelve versions of one strategy at once: four fit.
    let outcomes = add_at_once(&pools, limits, |i| {
        let r = upload(BOB, "many", &format!("1.{i}.0"), &format!("sha{i}"), 1);
        ("bob", r, b"wasm".to_vec())
    })
    .await;
    assert_eq!(added(&outcomes), 4, "{outcomes:?}");
    let many = pools[0]
        .authored_strategy("bob", "many")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(many.versions.len(), 4);

    // One version, twelve different bytes at once: one wins, the others
    // conflict with its sha256.
    let outcomes = add_at_once(&pools, limits, |i| {
        let r = upload("u-carol", "one", "1.0.0", &format!("sha{i}"), 1);
        ("carol", r, format!("w{i}").into_bytes())
    })
    .await;
    let one = pools[1]
        .authored_strategy("carol", "one")
        .await
        .unwrap()
        .unwrap();
    let winner = one.versions[0].sha256.clone();
    assert_eq!(added(&outcomes), 1);
    assert!(outcomes
        .iter()
        .all(|o| *o == UploadOutcome::Added || *o == UploadOutcome::Conflict(winner.clone())));
    let index: usize = winner["sha".len()..].parse().unwrap();
    assert_eq!(
        pools[0]
            .upload_wasm("u-carol", "one", "1.0.0")
            .await
            .unwrap(),
        Some(format!("w{index}").into_bytes())
    );

    for db in &pools {
        db.close().await;
    }
    pg_drop_test_database(&url).await;
}
