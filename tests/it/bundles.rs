//! Signed plugin bundles through the real binary: `forecast plugin keygen`,
//! `sign`, `verify`, and `add` under the trust policy
//! (FORECAST_PLUGIN_TRUST, FORECAST_PLUGIN_UNSIGNED).

use crate::common;

use std::path::Path;
use std::process::Command;

use forecast_api::authored::{StrategyChange, UploadedStrategy};
use forecast_api::backtest::{BacktestRequest, StrategyItem};
use forecast_testkit::{Api, Auth, Refused, BUNDLE, WASM};

/// Runs `forecast` with `args` against `db` and the extra environment
/// `env` (the trust settings are cleared first, so the caller's shell
/// cannot leak into a test); (success, stdout, stderr).
fn run(db: &Path, args: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    let out = Command::new(common::BIN)
        .args(args)
        .env("DATABASE_URL", common::sqlite_url(db))
        .env_remove("FORECAST_PLUGIN_TRUST")
        .env_remove("FORECAST_PLUGIN_UNSIGNED")
        .envs(env.iter().copied())
        .output()
        .expect("run forecast");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `plugin keygen` into `dir/name`; the printed key id.
fn keygen(db: &Path, dir: &Path, name: &str) -> String {
    let path = dir.join(name);
    let (ok, out, err) = run(db, &["plugin", "keygen", "--out", s(&path)], &[]);
    assert!(ok, "{err}");
    let id = out.lines().last().unwrap().trim().to_string();
    assert!(id.starts_with("ed25519:"), "{out}");
    id
}

/// `plugin sign` of the dip-buyer strategy with the key `dir/key`, into
/// `dir/out`; stdout.
fn sign(db: &Path, dir: &Path, key: &str, out: &str) -> String {
    let component = common::component("dip_buyer");
    let (ok, stdout, err) = run(
        db,
        &[
            "plugin",
            "sign",
            s(&component),
            "--key",
            s(&dir.join(key)),
            "--name",
            "dip-buyer",
            "--version",
            "0.1.0",
            "--description",
            "Buys the dip.",
            "--licence",
            "MIT",
            "--author",
            "Tests",
            "--out",
            s(&dir.join(out)),
        ],
        &[],
    );
    assert!(ok, "{err}");
    stdout
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn keygen_sign_verify_and_tamper() {
    let db = common::empty_db();
    let dir = tempfile::tempdir().unwrap();
    let id = keygen(&db, dir.path(), "signing.key");
    a_key_is_private_and_never_overwritten(&db, dir.path());

    let out = sign(&db, dir.path(), "signing.key", "dip.febundle");
    let component = std::fs::read(common::component("dip_buyer")).unwrap();
    let sha = {
        use sha2::Digest as _;
        hex::encode(sha2::Sha256::digest(&component))
    };
    assert!(out.contains(&format!("signer: {id}")), "{out}");
    assert!(out.contains(&format!("sha256: {sha}")), "{out}");

    let bundle = dir.path().join("dip.febundle");
    let (ok, out, err) = run(&db, &["plugin", "verify", s(&bundle)], &[]);
    assert!(ok, "{err}");
    for needle in [
        "name:        dip-buyer",
        "version:     0.1.0",
        "world:       strategy",
        "licence:     MIT",
        &format!("signer: {id}"),
        &format!("sha256: {sha}"),
        "signature valid",
    ] {
        assert!(out.contains(needle), "{needle}: {out}");
    }
    verify_obeys_the_trust_list(&db, dir.path(), &bundle, &id);
    a_flipped_byte_does_not_verify(&db, dir.path(), &bundle);
    // A bare component is not a bundle.
    let (ok, _, err) = run(
        &db,
        &["plugin", "verify", s(&common::component("dip_buyer"))],
        &[],
    );
    assert!(!ok && err.contains("bare, unsigned"), "{err}");
    // Signing never overwrites a file.
    let (ok, _, err) = run(
        &db,
        &[
            "plugin",
            "sign",
            s(&common::component("dip_buyer")),
            "--key",
            s(&dir.path().join("signing.key")),
            "--name",
            "dip-buyer",
            "--version",
            "0.1.0",
            "--out",
            s(&bundle),
        ],
        &[],
    );
    assert!(!ok && err.contains("exists"), "{err}");
}

/// The key `dir/signing.key` is readable by its owner only, and a second
/// keygen onto it is refused, the key kept.
fn a_key_is_private_and_never_overwritten(db: &Path, dir: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(dir.join("signing.key"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let before = std::fs::read(dir.join("signing.key")).unwrap();
    let (ok, _, err) = run(
        db,
        &["plugin", "keygen", "--out", s(&dir.join("signing.key"))],
        &[],
    );
    assert!(!ok);
    assert!(err.contains("refusing to overwrite"), "{err}");
    assert_eq!(std::fs::read(dir.join("signing.key")).unwrap(), before);
}

/// `bundle`, signed by `id`, is trusted explicitly, and not trusted when
/// another key is listed (by `--trust` or FORECAST_PLUGIN_TRUST).
fn verify_obeys_the_trust_list(db: &Path, dir: &Path, bundle: &Path, id: &str) {
    let (ok, out, err) = run(db, &["plugin", "verify", s(bundle), "--trust", id], &[]);
    assert!(ok && out.contains("the signer is trusted"), "{out}{err}");
    let other = keygen(db, dir, "other.key");
    let (ok, _, err) = run(db, &["plugin", "verify", s(bundle), "--trust", &other], &[]);
    assert!(!ok);
    assert!(
        err.contains("not a trusted key") && err.contains(id),
        "{err}"
    );
    let (ok, _, err) = run(
        db,
        &["plugin", "verify", s(bundle)],
        &[("FORECAST_PLUGIN_TRUST", &other)],
    );
    assert!(!ok && err.contains("not a trusted key"), "{err}");
}

/// One flipped byte anywhere past the magic: the bundle does not verify.
fn a_flipped_byte_does_not_verify(db: &Path, dir: &Path, bundle: &Path) {
    let bytes = std::fs::read(bundle).unwrap();
    for at in [20, bytes.len() / 2, bytes.len() - 1] {
        let mut t = bytes.clone();
        t[at] ^= 0x01;
        let path = dir.join(format!("flipped-{at}.febundle"));
        std::fs::write(&path, &t).unwrap();
        let (ok, _, err) = run(db, &["plugin", "verify", s(&path)], &[]);
        assert!(!ok, "byte {at}");
        assert!(err.contains("does not verify"), "byte {at}: {err}");
    }
}

#[test]
fn add_obeys_the_trust_list() {
    let db = common::empty_db();
    let dir = tempfile::tempdir().unwrap();
    let id = keygen(&db, dir.path(), "signing.key");
    let other = keygen(&db, dir.path(), "other.key");
    sign(&db, dir.path(), "signing.key", "dip.febundle");
    let bundle = dir.path().join("dip.febundle");

    // Signed by a key FORECAST_PLUGIN_TRUST does not list: refused.
    let (ok, out, err) = run(
        &db,
        &["plugin", "add", s(&bundle)],
        &[("FORECAST_PLUGIN_TRUST", &other)],
    );
    assert!(!ok, "{out}");
    assert!(
        err.contains("not a trusted key")
            && err.contains(&id)
            && err.contains("FORECAST_PLUGIN_TRUST"),
        "{err}"
    );
    let (_, list, _) = run(&db, &["plugin", "list"], &[]);
    assert!(!list.contains("dip-buyer"), "{list}");

    // A flag that contradicts the manifest is refused.
    let (ok, _, err) = run(
        &db,
        &["plugin", "add", s(&bundle), "--version", "0.2.0"],
        &[("FORECAST_PLUGIN_TRUST", &id)],
    );
    assert!(
        !ok && err.contains("differs from the bundle's manifest"),
        "{err}"
    );

    // Listed (beside another key): registered under the manifest's name
    // and version, the signer recorded.
    let (ok, out, err) = run(
        &db,
        &["plugin", "add", s(&bundle)],
        &[
            ("FORECAST_PLUGIN_TRUST", &format!("{other},{id}")),
            ("FORECAST_PLUGIN_UNSIGNED", "refuse"),
        ],
    );
    assert!(ok, "{err}");
    assert!(out.contains(&format!("signed by {id}")), "{out}");
    assert!(out.contains("registered strategy/dip-buyer@0.1.0"), "{out}");
    let (_, list, _) = run(&db, &["plugin", "list", "--json"], &[]);
    assert!(list.contains("dip-buyer") && list.contains(&id), "{list}");
}

#[test]
fn add_of_an_unsigned_component_obeys_the_setting() {
    let db = common::empty_db();
    let component = common::component("dip_buyer");
    let args = [
        "plugin",
        "add",
        s(&component),
        "--kind",
        "strategy",
        "--name",
        "dip-buyer",
        "--version",
        "0.1.0",
    ];
    let (ok, out, err) = run(&db, &args, &[("FORECAST_PLUGIN_UNSIGNED", "refuse")]);
    assert!(!ok, "{out}");
    assert!(
        err.contains("unsigned components are refused") && err.contains("FORECAST_PLUGIN_UNSIGNED"),
        "{err}"
    );
    let (_, list, _) = run(&db, &["plugin", "list"], &[]);
    assert!(!list.contains("dip-buyer"), "{list}");
    // Allowed by default.
    let (ok, out, err) = run(&db, &args, &[]);
    assert!(ok, "{err}");
    assert!(out.contains("registered strategy/dip-buyer@0.1.0"), "{out}");
}

#[test]
fn publish_fails_without_a_key_or_a_server() {
    let db = common::empty_db();
    let component = common::component("dip_buyer");
    let publish = [
        "plugin",
        "publish",
        s(&component),
        "--url",
        "http://127.0.0.1:9",
    ];
    let (ok, _, err) = run(&db, &publish, &[("FORECAST_API_KEY", "")]);
    assert!(!ok && err.contains("FORECAST_API_KEY"), "{err}");
    // Nothing listens on the discard port: a connection error, non-zero.
    let (ok, _, err) = run(&db, &publish, &[("FORECAST_API_KEY", "fk_test")]);
    assert!(!ok, "{err}");
    assert!(
        err.contains("POST http://127.0.0.1:9/api/strategies"),
        "{err}"
    );
}

/// `plugin publish` of a signed bundle to a running server: stored under
/// the author's handle with its signer, listed with it, runnable; shared
/// only as the server's trust policy says (here: another key is the only
/// trusted one, and unsigned components are refused).
#[tokio::test]
async fn a_published_bundle_runs_and_is_shared_only_as_the_trust_policy_says() {
    let scratch = common::empty_db();
    let dir = tempfile::tempdir().unwrap();
    let _ours = keygen(&scratch, dir.path(), "ours.key");
    let trusted = keygen(&scratch, dir.path(), "trusted.key");
    sign(&scratch, dir.path(), "ours.key", "dip.febundle");
    let server = common::Server::start_with(
        common::fresh_db(),
        &[
            ("FORECAST_PLUGIN_TRUST", trusted.as_str()),
            ("FORECAST_PLUGIN_UNSIGNED", "refuse"),
        ],
    );
    let key = common::test_key();
    let (ok, out, err) = run(
        &scratch,
        &[
            "plugin",
            "publish",
            s(&dir.path().join("dip.febundle")),
            "--url",
            &server.base,
        ],
        &[("FORECAST_API_KEY", key)],
    );
    assert!(ok, "publish: {out} {err}");
    // The server's answer, printed as it came.
    let answer: UploadedStrategy = serde_json::from_str(out.trim()).expect("the server's JSON");
    let name = answer.strategy.clone();
    assert!(
        err.contains(&format!("published {name} 0.1.0 (private)")),
        "the name to call, on a line of its own: {err}"
    );
    let signer = answer.signer.clone().expect("signed");
    assert!(
        signer.starts_with("ed25519:") && signer != trusted,
        "{answer:?}"
    );

    let api = server.api();
    listed_with_its_signed_manifest(&api, &name, &signer).await;
    api.backtest(&on_the_indices(&name))
        .await
        .unwrap_or_else(|r| panic!("{name} runs: {r}"));

    // Signed by a key the server does not trust: private only.
    let detail = share_refused(&api, &name).await;
    assert!(
        detail.contains("cannot be shared") && detail.contains(&signer),
        "{detail}"
    );

    // Unsigned: uploaded and runnable by its owner, never shared here.
    let (status, bare) = api
        .upload_strategy(
            WASM,
            std::fs::read(common::component("misbehave_strategy")).unwrap(),
        )
        .await
        .unwrap_or_else(|r| panic!("the unsigned upload: {r}"));
    assert_eq!(status, 201);
    let detail = share_refused(&api, &bare.strategy).await;
    assert!(detail.contains("FORECAST_PLUGIN_UNSIGNED"), "{detail}");
}

/// A backtest of `strategy` on the indices.
fn on_the_indices(strategy: &str) -> BacktestRequest {
    BacktestRequest {
        strategy: Some(strategy.to_string()),
        category: Some("Indices".into()),
        ..BacktestRequest::default()
    }
}

/// A change of sharing only.
fn shared(shared: bool) -> StrategyChange {
    StrategyChange {
        shared: Some(shared),
        ..StrategyChange::default()
    }
}

/// The strategy `name` as `GET /api/strategies` lists it to `api`.
async fn listed(api: &Api, name: &str) -> StrategyItem {
    api.strategies()
        .await
        .unwrap_or_else(|r| panic!("the list: {r}"))
        .strategies
        .into_iter()
        .find(|i| i.name == name)
        .expect("listed")
}

/// The published strategy `name` is listed to the test account with its
/// signer, its description and its signed manifest.
async fn listed_with_its_signed_manifest(api: &Api, name: &str, signer: &str) {
    let item = listed(api, name).await;
    assert_eq!(item.signer.as_deref(), Some(signer));
    assert_eq!(item.description, "Buys the dip.");
    // The signed manifest, listed as signed.
    let m = item.manifest.as_ref().expect("the signed manifest");
    assert_eq!(
        (m.name.as_str(), m.version.as_str(), m.world.as_str()),
        ("dip-buyer", "0.1.0", "strategy"),
        "{item:?}"
    );
    assert_eq!(
        (m.licence.as_deref(), m.author.as_deref()),
        (Some("MIT"), Some("Tests"))
    );
    assert_eq!(m.sha256, item.sha256);
    assert!(
        item.imports
            .iter()
            .any(|i| i.starts_with("forecast:plugins/types")),
        "{item:?}"
    );
}

/// The test account asks to share its strategy `name`: refused with 422;
/// the refusal's detail.
async fn share_refused(api: &Api, name: &str) -> String {
    let refusal = api.change_strategy(name, &shared(true)).await.refused();
    refusal.assert(422, &[]);
    refusal.detail.unwrap_or_default()
}

/// `POST /api/admin/plugins` obeys the trust policy as `plugin add` does:
/// a bare component is refused under FORECAST_PLUGIN_UNSIGNED=refuse, a
/// bundle signed by an untrusted key is refused naming the key, one whose
/// manifest names another version is a 400, and a trusted bundle is
/// registered with its signer recorded.
#[tokio::test]
async fn the_admin_route_adds_only_what_the_trust_policy_allows() {
    let scratch = common::empty_db();
    let dir = tempfile::tempdir().unwrap();
    let untrusted = keygen(&scratch, dir.path(), "untrusted.key");
    let trusted = keygen(&scratch, dir.path(), "trusted.key");
    sign(&scratch, dir.path(), "untrusted.key", "bad.febundle");
    sign(&scratch, dir.path(), "trusted.key", "good.febundle");
    let server = common::Server::start_with(
        common::fresh_db(),
        &[
            ("FORECAST_PLUGIN_TRUST", trusted.as_str()),
            ("FORECAST_PLUGIN_UNSIGNED", "refuse"),
        ],
    );
    let admin = server.api_as(Auth::Bearer(common::ADMIN_TOKEN.into()));
    let add = |version: &str, body: Vec<u8>| {
        let query = format!("kind=strategy&name=dip-buyer&version={version}");
        let admin = admin.clone();
        async move { admin.add_plugin(&query, body).await }
    };
    let bare = std::fs::read(common::component("dip_buyer")).unwrap();
    add("0.1.0", bare)
        .await
        .refused()
        .assert(422, &["unsigned components are refused"]);
    let bad = std::fs::read(dir.path().join("bad.febundle")).unwrap();
    add("0.1.0", bad)
        .await
        .refused()
        .assert(422, &["not a trusted key", &untrusted]);
    let good = std::fs::read(dir.path().join("good.febundle")).unwrap();
    add("0.2.0", good.clone())
        .await
        .refused()
        .assert(400, &["dip-buyer@0.1.0", "0.2.0"]);
    let added = add("0.1.0", good)
        .await
        .unwrap_or_else(|r| panic!("the trusted bundle: {r}"));
    assert_eq!(added.name, "dip-buyer");
    let listed = server.admin_text("/api/admin/plugins").await;
    assert!(
        listed.contains(&format!("admin-api, signed by {trusted}")),
        "{listed}"
    );
}

/// `plugin sign` of `component` as dip-buyer `version` with the key
/// `dir/key`, into `dir/out`.
fn sign_version(db: &Path, dir: &Path, key: &str, component: &Path, version: &str, out: &str) {
    let (ok, _, err) = run(
        db,
        &[
            "plugin",
            "sign",
            s(component),
            "--key",
            s(&dir.join(key)),
            "--name",
            "dip-buyer",
            "--version",
            version,
            "--description",
            "Buys the dip.",
            "--out",
            s(&dir.join(out)),
        ],
        &[],
    );
    assert!(ok, "{err}");
}

/// The dip-buyer component reporting `version` (same length as 0.1.0)
/// instead: its one "0.1.0" replaced in place.
fn dip_buyer_as(version: &str) -> Vec<u8> {
    let mut bytes = std::fs::read(common::component("dip_buyer")).unwrap();
    let at: Vec<usize> = bytes
        .windows(5)
        .enumerate()
        .filter(|(_, w)| *w == b"0.1.0")
        .map(|(i, _)| i)
        .collect();
    assert_eq!(at.len(), 1, "the component names its version once");
    bytes[at[0]..at[0] + 5].copy_from_slice(version.as_bytes());
    bytes
}

/// Issue 40, finding 4: the trust policy holds for every version another
/// account may run. A shared strategy whose current version is signed by
/// the trusted key also holds an unsigned 0.2.0 and a 0.3.0 signed by an
/// untrusted key (its owner may upload and run both): another account
/// pinning either gets 422 and does not see them listed; the owner cannot
/// make either the running version of the shared strategy; the trusted
/// version keeps running for everyone.
#[tokio::test]
async fn pinned_and_switched_versions_obey_the_trust_policy() {
    let scratch = common::empty_db();
    let dir = tempfile::tempdir().unwrap();
    let trusted = keygen(&scratch, dir.path(), "trusted.key");
    let _other_key = keygen(&scratch, dir.path(), "other.key");
    sign(&scratch, dir.path(), "trusted.key", "v1.febundle");
    let v3 = dir.path().join("v3.wasm");
    std::fs::write(&v3, dip_buyer_as("0.3.0")).unwrap();
    sign_version(
        &scratch,
        dir.path(),
        "other.key",
        &v3,
        "0.3.0",
        "v3.febundle",
    );
    let mut server = common::Server::start_with(
        common::fresh_db(),
        &[
            ("FORECAST_PLUGIN_TRUST", trusted.as_str()),
            ("FORECAST_PLUGIN_UNSIGNED", "refuse"),
        ],
    );
    let pid = server.process().id();
    let owner = server.api();
    let other = server.api_as(Auth::Bearer(unlimited_premium_key(
        &server.db,
        "o@example.com",
    )));
    let name = upload_three_versions(&owner, dir.path()).await;
    owner
        .change_strategy(&name, &shared(true))
        .await
        .unwrap_or_else(|r| panic!("the trusted current version: {r}"));
    other.backtest(&on_the_indices(&name)).await.unwrap();
    other
        .backtest(&on_the_indices(&format!("{name}@0.1.0")))
        .await
        .unwrap();
    for (version, needle) in [
        ("0.2.0", "FORECAST_PLUGIN_UNSIGNED"),
        ("0.3.0", "not a trusted key"),
    ] {
        a_version_the_policy_refuses_runs_for_its_owner_only(
            &owner, &other, &name, version, needle,
        )
        .await;
    }
    refused_pinned_runs_cost_nothing(&server, &other, pid, &name).await;
    let seen = listed(&other, &name).await;
    assert_eq!(seen.version, "0.1.0");
    assert_eq!(seen.versions, ["0.1.0"], "{seen:?}");
    let own = listed(&owner, &name).await;
    assert_eq!(own.versions.len(), 3, "{own:?}");
    // Unshared, the owner may pick any version; shared again, the check
    // applies to the version that runs.
    let unshared = StrategyChange {
        shared: Some(false),
        current_version: Some("0.2.0".into()),
    };
    owner.change_strategy(&name, &unshared).await.unwrap();
    let reshared = owner.change_strategy(&name, &shared(true)).await;
    assert_eq!(reshared.refused().status, 422);
    let private = other.backtest(&on_the_indices(&name)).await;
    assert_eq!(
        private.refused().status,
        400,
        "private again: unknown to others"
    );
}

/// A Premium user added to `db` with quotas no test reaches; an API key
/// of theirs.
fn unlimited_premium_key(db: &Path, email: &str) -> String {
    common::add_user(db, email, "premium", None);
    common::set_limits(db, email, 100_000, Some(100_000));
    common::create_key(db, email, "other")
}

/// The owner uploads dip-buyer 0.1.0 signed by the trusted key, 0.2.0
/// unsigned and 0.3.0 signed by another key (each accepted: an owner may
/// upload anything); the strategy's name.
async fn upload_three_versions(owner: &Api, dir: &Path) -> String {
    let upload = |media: &'static str, body: Vec<u8>| async move {
        let (status, _) = owner
            .upload_strategy(media, body)
            .await
            .unwrap_or_else(|r| panic!("an owner may upload it: {r}"));
        status
    };
    let (status, v1) = owner
        .upload_strategy(BUNDLE, std::fs::read(dir.join("v1.febundle")).unwrap())
        .await
        .unwrap_or_else(|r| panic!("the signed 0.1.0: {r}"));
    assert_eq!(status, 201);
    let v2 = upload(WASM, dip_buyer_as("0.2.0")).await;
    assert_eq!(v2, 201, "the owner may upload unsigned");
    let v3 = upload(BUNDLE, std::fs::read(dir.join("v3.febundle")).unwrap()).await;
    assert_eq!(v3, 201, "and signed by any key");
    v1.strategy
}

/// `version` of the shared strategy `name`, which the trust policy
/// refuses (the refusal naming `needle`): another account pinning it gets
/// 422; its owner runs it; switching the shared strategy to it is
/// refused.
async fn a_version_the_policy_refuses_runs_for_its_owner_only(
    owner: &Api,
    other: &Api,
    name: &str,
    version: &str,
    needle: &str,
) {
    let pinned = on_the_indices(&format!("{name}@{version}"));
    other
        .backtest(&pinned)
        .await
        .refused()
        .assert(422, &[&format!("{name}@{version}"), needle]);
    // Its owner runs it.
    owner
        .backtest(&pinned)
        .await
        .unwrap_or_else(|r| panic!("the owner's own {version}: {r}"));
    // Switching the shared strategy to it is refused; nothing changes.
    let switch = StrategyChange {
        current_version: Some(version.into()),
        ..StrategyChange::default()
    };
    owner
        .change_strategy(name, &switch)
        .await
        .refused()
        .assert(422, &["cannot be shared", needle]);
}

/// The attack repeated: twenty pinned runs of the two versions the policy
/// refuses, each refused before any work; health answers throughout and
/// the resident memory of the server (process `pid`) does not move.
async fn refused_pinned_runs_cost_nothing(
    server: &common::Server,
    other: &Api,
    pid: u32,
    name: &str,
) {
    let before = common::rss(pid);
    let (refused, health) = common::with_health(server, async {
        let mut refused = 0;
        for i in 0..20 {
            let version = if i % 2 == 0 { "0.2.0" } else { "0.3.0" };
            let run = other
                .backtest(&on_the_indices(&format!("{name}@{version}")))
                .await;
            refused += usize::from(run.is_err_and(|r| r.status == 422));
        }
        refused
    })
    .await;
    let grew = common::rss(pid).saturating_sub(before);
    eprintln!(
        "during 20 refused pinned runs: {health}; resident +{} KB",
        grew / 1_000
    );
    assert_eq!(refused, 20);
    assert!(grew < 10_000_000, "resident memory grew by {grew} bytes");
}
