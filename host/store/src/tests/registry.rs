//! The plugin registry.

use super::*;

fn plugin_record(kind: &str, name: &str, version: &str, sha256: &str, at: i64) -> PluginRecord {
    PluginRecord {
        kind: kind.parse().unwrap(),
        name: name.into(),
        version: version.into(),
        sha256: sha256.into(),
        size: 3,
        builtin: false,
        added_by: "cli:ann".into(),
        added_at: at,
    }
}

fn shadow_sample(candidate: &str, at: i64, error: Option<&str>) -> ShadowSample {
    ShadowSample {
        kind: PluginKind::Segmentation,
        active: "segmentation/default@1.0.0".into(),
        candidate: candidate.into(),
        identical: error.is_none(),
        active_ms: 1.5,
        candidate_ms: 2.25,
        error: error.map(str::to_string),
        diffs: "{\"score\":0.5}".into(),
        at,
    }
}

/// The label of an activation, for compact assertions.
fn activation_label(a: &ActivationRecord) -> String {
    format!("{}/{}@{}", a.kind, a.name, a.version)
}

/// The active activation of `slot`, as a label.
async fn active_in(db: &dyn Database, slot: &str) -> Option<String> {
    db.active_plugins()
        .await
        .unwrap()
        .iter()
        .find(|a| a.slot == slot)
        .map(activation_label)
}

/// The plugin registry: versions (idempotent, conflicts), bytes, activation
/// history and rollback per slot, the generation, shadows and samples.
pub(crate) async fn registry_conformance(db: Arc<dyn Database>) {
    versions_are_added_once_and_listed_in_order(db.as_ref()).await;
    let (history, topn) = activations_return_their_rows_and_bump(db.as_ref()).await;
    rollbacks_walk_back_then_are_refused(db.as_ref(), &history).await;
    slots_activate_and_roll_back_independently(db.as_ref(), &topn).await;
    shadows_are_set_replaced_and_cleared(db.as_ref()).await;
    shadow_samples_are_read_back_per_candidate(db.as_ref()).await;

    // Concurrency: 10 rollbacks against 5 live activations undo exactly 4.
    concurrent_rollbacks(std::slice::from_ref(&db), "matcher").await;
}

/// Versions: added once; same bytes again is a no-op; other bytes
/// conflict; bytes round-trip; adding changes nothing that runs. Listed by
/// kind, name, then added_at (not by version string).
async fn versions_are_added_once_and_listed_in_order(db: &dyn Database) {
    assert!(db.list_plugins().await.unwrap().is_empty());
    assert_eq!(db.plugins_generation().await.unwrap(), 0, "never bumped");
    let wasm: Vec<u8> = (0..=255u8).cycle().take(70_000).collect();
    let mut seg1 = plugin_record("segmentation", "default", "1.0.0", "aa11", 100);
    seg1.size = wasm.len() as i64;
    seg1.builtin = true;
    seg1.added_by = "builtin".into();
    assert_eq!(
        db.add_plugin(&seg1, &wasm).await.unwrap(),
        AddOutcome::Added
    );
    assert_eq!(
        db.add_plugin(&seg1, &wasm).await.unwrap(),
        AddOutcome::AlreadyPresent
    );
    let other = plugin_record("segmentation", "default", "1.0.0", "bb22", 101);
    assert_eq!(
        db.add_plugin(&other, b"xyz").await.unwrap(),
        AddOutcome::Conflict("aa11".into())
    );
    assert_eq!(
        db.plugin(PluginKind::Segmentation, "default", "1.0.0")
            .await
            .unwrap(),
        Some(seg1.clone()),
        "the first bytes stay"
    );
    assert_eq!(
        db.plugin_wasm(PluginKind::Segmentation, "default", "1.0.0")
            .await
            .unwrap(),
        Some(wasm.clone()),
        "bytes round-trip"
    );
    assert!(db
        .plugin(PluginKind::Segmentation, "default", "9.9.9")
        .await
        .unwrap()
        .is_none());
    assert!(db
        .plugin_wasm(PluginKind::Segmentation, "default", "9.9.9")
        .await
        .unwrap()
        .is_none());
    assert_eq!(
        db.plugins_generation().await.unwrap(),
        0,
        "adding is not a change of what runs"
    );

    for r in [
        plugin_record("strategy", "topn", "1.0.0", "s1", 300),
        plugin_record("segmentation", "default", "1.10.0", "d2", 250),
        plugin_record("segmentation", "default", "1.2.0", "d3", 200),
        plugin_record("scorer", "default", "1.0.0", "c1", 400),
        plugin_record("segmentation", "alt", "0.1.0", "e1", 500),
    ] {
        assert_eq!(db.add_plugin(&r, b"abc").await.unwrap(), AddOutcome::Added);
    }
    let listed: Vec<String> = db
        .list_plugins()
        .await
        .unwrap()
        .iter()
        .map(|p| format!("{}/{}@{}", p.kind, p.name, p.version))
        .collect();
    assert_eq!(
        listed,
        [
            "scorer/default@1.0.0",
            "segmentation/alt@0.1.0",
            "segmentation/default@1.0.0",
            "segmentation/default@1.2.0",
            "segmentation/default@1.10.0",
            "strategy/topn@1.0.0",
        ]
    );
}

/// Activations: each returns its row and bumps the generation; the
/// newest live row of every slot is active. The segmentation slot's three
/// (A, B, C) and the strategy slot's one.
async fn activations_return_their_rows_and_bump(
    db: &dyn Database,
) -> (Vec<ActivationRecord>, ActivationRecord) {
    let mut generation = db.plugins_generation().await.unwrap();
    let mut history = Vec::new();
    for (i, v) in ["1.0.0", "1.2.0", "1.10.0"].into_iter().enumerate() {
        let a = db
            .activate_plugin(
                "segmentation",
                PluginKind::Segmentation,
                "default",
                v,
                "cli:ann",
                1_000 + i as i64,
            )
            .await
            .unwrap();
        assert_eq!(
            (
                a.slot.as_str(),
                a.version.as_str(),
                a.activated_by.as_str(),
                a.activated_at,
                a.rolled_back
            ),
            ("segmentation", v, "cli:ann", 1_000 + i as i64, false)
        );
        if let Some(previous) = history.last() {
            let previous: &ActivationRecord = previous;
            assert!(a.id > previous.id, "ids increase");
        }
        let g = db.plugins_generation().await.unwrap();
        assert!(g > generation, "activation bumps the generation");
        generation = g;
        history.push(a);
    }
    let topn = db
        .activate_plugin(
            "strategy/topn",
            PluginKind::Strategy,
            "topn",
            "1.0.0",
            "admin-api",
            1_100,
        )
        .await
        .unwrap();
    let active = db.active_plugins().await.unwrap();
    assert_eq!(
        active,
        vec![history[2].clone(), topn.clone()],
        "the newest live row of every slot, by slot"
    );
    (history, topn)
}

/// Rollback of the segmentation slot (`history`: A, B, C): C → B → A,
/// then refused (A stays, nothing bumps); a rolled-back activation never
/// comes back: activating again appends.
async fn rollbacks_walk_back_then_are_refused(db: &dyn Database, history: &[ActivationRecord]) {
    let mut generation = db.plugins_generation().await.unwrap();
    let back = db.rollback_plugin("segmentation", 2_000).await.unwrap();
    assert_eq!(back, Some(history[1].clone()), "B is current again");
    assert!(db.plugins_generation().await.unwrap() > generation);
    generation = db.plugins_generation().await.unwrap();
    assert_eq!(
        active_in(db, "segmentation").await.as_deref(),
        Some("segmentation/default@1.2.0")
    );
    let back = db.rollback_plugin("segmentation", 2_001).await.unwrap();
    assert_eq!(back, Some(history[0].clone()), "then A");
    assert!(db.plugins_generation().await.unwrap() > generation);
    generation = db.plugins_generation().await.unwrap();
    assert_eq!(
        db.rollback_plugin("segmentation", 2_002).await.unwrap(),
        None,
        "one live activation: nothing to roll back to"
    );
    assert_eq!(
        db.plugins_generation().await.unwrap(),
        generation,
        "a refused rollback changes nothing"
    );
    assert_eq!(
        active_in(db, "segmentation").await.as_deref(),
        Some("segmentation/default@1.0.0")
    );
    assert_eq!(
        db.rollback_plugin("scorer", 2_003).await.unwrap(),
        None,
        "a slot never activated"
    );
    assert_eq!(db.plugins_generation().await.unwrap(), generation);
    let again = db
        .activate_plugin(
            "segmentation",
            PluginKind::Segmentation,
            "default",
            "1.10.0",
            "cli:bob",
            3_000,
        )
        .await
        .unwrap();
    assert!(again.id > history[2].id);
    assert_eq!(
        db.rollback_plugin("segmentation", 3_001).await.unwrap(),
        Some(history[0].clone()),
        "B and C stay rolled back"
    );
}

/// Slots are independent: the strategy slot kept its activation (`topn`);
/// another slot's activation or rollback leaves the segmentation slot
/// alone.
async fn slots_activate_and_roll_back_independently(db: &dyn Database, topn: &ActivationRecord) {
    assert_eq!(
        active_in(db, "strategy/topn").await.as_deref(),
        Some("strategy/topn@1.0.0")
    );
    let topn2 = db
        .activate_plugin(
            "strategy/topn",
            PluginKind::Strategy,
            "topn",
            "1.1.0",
            "admin-api",
            3_100,
        )
        .await
        .unwrap();
    assert_eq!(
        active_in(db, "segmentation").await.as_deref(),
        Some("segmentation/default@1.0.0"),
        "another slot's activation leaves this one alone"
    );
    assert_eq!(
        db.rollback_plugin("strategy/topn", 3_200).await.unwrap(),
        Some(topn.clone())
    );
    assert_eq!(
        active_in(db, "segmentation").await.as_deref(),
        Some("segmentation/default@1.0.0"),
        "another slot's rollback leaves this one alone"
    );
    assert_ne!(topn2.id, topn.id);
    let slots: Vec<String> = db
        .active_plugins()
        .await
        .unwrap()
        .into_iter()
        .map(|a| a.slot)
        .collect();
    assert_eq!(slots, ["segmentation", "strategy/topn"]);
}

/// Shadows: set, replace, clear; each change bumps the generation; one
/// per kind. The scorer's is left.
async fn shadows_are_set_replaced_and_cleared(db: &dyn Database) {
    let mut generation = db.plugins_generation().await.unwrap();
    assert!(db.shadows().await.unwrap().is_empty());
    let mut shadow = ShadowConfig {
        kind: PluginKind::Segmentation,
        name: "default".into(),
        version: "1.2.0".into(),
        sample: 0.25,
        started_by: "cli:ann".into(),
        started_at: 4_000,
    };
    db.set_shadow(&shadow).await.unwrap();
    assert!(db.plugins_generation().await.unwrap() > generation);
    generation = db.plugins_generation().await.unwrap();
    assert_eq!(db.shadows().await.unwrap(), vec![shadow.clone()]);
    shadow.version = "1.10.0".into();
    shadow.sample = 1.0;
    shadow.started_at = 4_100;
    db.set_shadow(&shadow).await.unwrap();
    assert!(db.plugins_generation().await.unwrap() > generation);
    generation = db.plugins_generation().await.unwrap();
    let scorer_shadow = ShadowConfig {
        kind: PluginKind::Scorer,
        name: "default".into(),
        version: "1.0.0".into(),
        sample: 0.5,
        started_by: "admin-api".into(),
        started_at: 4_200,
    };
    db.set_shadow(&scorer_shadow).await.unwrap();
    generation = db.plugins_generation().await.unwrap().max(generation);
    assert_eq!(
        db.shadows().await.unwrap(),
        vec![scorer_shadow.clone(), shadow.clone()],
        "one per kind, the latest replacing, by kind"
    );
    assert!(db.clear_shadow(PluginKind::Segmentation).await.unwrap());
    assert!(db.plugins_generation().await.unwrap() > generation);
    generation = db.plugins_generation().await.unwrap();
    assert!(
        !db.clear_shadow(PluginKind::Segmentation).await.unwrap(),
        "already gone"
    );
    assert_eq!(
        db.plugins_generation().await.unwrap(),
        generation,
        "clearing nothing changes nothing"
    );
    assert_eq!(db.shadows().await.unwrap(), vec![scorer_shadow]);
}

/// Samples: read back per (kind, candidate), oldest first; recording
/// them is not a change.
async fn shadow_samples_are_read_back_per_candidate(db: &dyn Database) {
    let generation = db.plugins_generation().await.unwrap();
    let samples = [
        shadow_sample("segmentation/default@1.10.0", 5_000, None),
        shadow_sample("segmentation/default@1.2.0", 5_001, None),
        shadow_sample(
            "segmentation/default@1.10.0",
            5_002,
            Some("trap: out of fuel"),
        ),
        shadow_sample("segmentation/default@1.10.0", 5_002, None),
    ];
    for s in &samples {
        db.record_shadow_sample(s).await.unwrap();
    }
    assert_eq!(
        db.shadow_samples(PluginKind::Segmentation, "segmentation/default@1.10.0")
            .await
            .unwrap(),
        vec![samples[0].clone(), samples[2].clone(), samples[3].clone()]
    );
    assert_eq!(
        db.shadow_samples(PluginKind::Segmentation, "segmentation/default@1.2.0")
            .await
            .unwrap(),
        vec![samples[1].clone()]
    );
    assert!(db
        .shadow_samples(PluginKind::Scorer, "segmentation/default@1.10.0")
        .await
        .unwrap()
        .is_empty());
    assert_eq!(
        db.plugins_generation().await.unwrap(),
        generation,
        "samples are not changes"
    );
}

/// Activates five versions in `slot`, then runs 10 rollbacks at once spread
/// over `dbs` (pools standing in for replicas): exactly 4 succeed, each
/// returning a distinct earlier activation, and the first is active after.
pub(crate) async fn concurrent_rollbacks(dbs: &[Arc<dyn Database>], slot: &str) {
    let mut activations = Vec::new();
    for i in 0..5 {
        activations.push(
            dbs[0]
                .activate_plugin(
                    slot,
                    PluginKind::Matcher,
                    "m",
                    &format!("1.{i}.0"),
                    "t",
                    10_000 + i,
                )
                .await
                .unwrap(),
        );
    }
    let before = dbs[0].plugins_generation().await.unwrap();
    let mut tasks = Vec::new();
    for i in 0..10 {
        let (db, slot) = (dbs[i % dbs.len()].clone(), slot.to_string());
        tasks.push(tokio::spawn(async move {
            db.rollback_plugin(&slot, 20_000).await.unwrap()
        }));
    }
    let mut restored = Vec::new();
    for t in tasks {
        if let Some(a) = t.await.unwrap() {
            restored.push(a.id);
        }
    }
    restored.sort_unstable();
    assert_eq!(
        restored,
        activations[..4].iter().map(|a| a.id).collect::<Vec<_>>(),
        "exactly 4 rollbacks succeed, each restoring the next older activation"
    );
    let active = dbs[0].active_plugins().await.unwrap();
    let current = active.iter().find(|a| a.slot == slot).unwrap();
    assert_eq!(current, &activations[0], "the first activation is active");
    assert_eq!(
        dbs[0].plugins_generation().await.unwrap(),
        before + 4,
        "one bump per successful rollback"
    );
}

/// Two pools on one database stand in for two replicas: rollbacks from both
/// undo one activation each; an activation racing rollbacks is never lost
/// behind them (ids follow commit order); concurrent adds of one key agree.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_registry_across_pools() {
    let url = pg_test_database().await;
    let pools = [connect(&url).await.unwrap(), connect(&url).await.unwrap()];
    concurrent_rollbacks(&pools, "matcher").await;

    // Ten replicas registering the same built-in at once: one adds it.
    let mut adds = Vec::new();
    for i in 0..10 {
        let db = pools[i % 2].clone();
        adds.push(tokio::spawn(async move {
            let r = plugin_record("scorer", "default", "2.0.0", "same", 1);
            db.add_plugin(&r, b"bytes").await.unwrap()
        }));
    }
    let mut outcomes = Vec::new();
    for t in adds {
        outcomes.push(t.await.unwrap());
    }
    assert_eq!(
        outcomes.iter().filter(|o| **o == AddOutcome::Added).count(),
        1
    );
    assert!(outcomes
        .iter()
        .all(|o| matches!(o, AddOutcome::Added | AddOutcome::AlreadyPresent)));

    // Activations and rollbacks interleaved across pools: the generation
    // counts every change, and the slot ends on a live activation.
    let g0 = pools[0].plugins_generation().await.unwrap();
    let mut tasks = Vec::new();
    for i in 0..20 {
        let db = pools[i % 2].clone();
        tasks.push(tokio::spawn(async move {
            if i % 2 == 0 {
                db.activate_plugin(
                    "scorer",
                    PluginKind::Scorer,
                    "default",
                    &format!("3.{i}.0"),
                    "t",
                    i as i64,
                )
                .await
                .unwrap();
                true
            } else {
                db.rollback_plugin("scorer", i as i64)
                    .await
                    .unwrap()
                    .is_some()
            }
        }));
    }
    let changes = i64::try_from(successes(tasks).await).unwrap();
    assert_eq!(pools[1].plugins_generation().await.unwrap(), g0 + changes);
    let live: i64 = {
        let raw = sqlx::PgPool::connect(&url).await.unwrap();
        let n = sqlx::query_scalar(
            "SELECT COUNT(*) FROM plugin_activations WHERE slot = 'scorer' AND NOT rolled_back",
        )
        .fetch_one(&raw)
        .await
        .unwrap();
        raw.close().await;
        n
    };
    assert_eq!(
        live,
        10 - (changes - 10),
        "each rollback undid one activation"
    );
    let newest_live = pools[0]
        .active_plugins()
        .await
        .unwrap()
        .into_iter()
        .find(|a| a.slot == "scorer")
        .unwrap();
    assert!(!newest_live.rolled_back);

    for db in &pools {
        db.close().await;
    }
    pg_drop_test_database(&url).await;
}
