//! Signed plugin bundles through the real binary: `forecast plugin keygen`,
//! `sign`, `verify`, and `add` under the trust policy
//! (FORECAST_PLUGIN_TRUST, FORECAST_PLUGIN_UNSIGNED).

use crate::common;

use std::path::Path;
use std::process::Command;

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
    let answer: serde_json::Value = serde_json::from_str(out.trim()).expect("the server's JSON");
    let name = answer["strategy"].as_str().unwrap().to_string();
    assert!(
        err.contains(&format!("published {name} 0.1.0 (private)")),
        "the name to call, on a line of its own: {err}"
    );
    let signer = answer["signer"].as_str().expect("signed").to_string();
    assert!(
        signer.starts_with("ed25519:") && signer != trusted,
        "{answer}"
    );

    let client = reqwest::Client::new();
    listed_with_its_signed_manifest(&client, &server, &name, &signer).await;
    let ran = client
        .post(server.url("/api/backtest"))
        .bearer_auth(key)
        .json(&serde_json::json!({ "strategy": name, "category": "Indices" }))
        .send()
        .await
        .unwrap();
    assert_eq!(ran.status(), 200);

    // Signed by a key the server does not trust: private only.
    let detail = share_refused(&client, &server, &name).await;
    assert!(
        detail.contains("cannot be shared") && detail.contains(&signer),
        "{detail}"
    );

    // Unsigned: uploaded and runnable by its owner, never shared here.
    let bare = client
        .post(server.url("/api/strategies"))
        .bearer_auth(key)
        .header("content-type", "application/wasm")
        .body(std::fs::read(common::component("misbehave_strategy")).unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(bare.status(), 201);
    let bare_name = bare.json::<serde_json::Value>().await.unwrap()["strategy"]
        .as_str()
        .unwrap()
        .to_string();
    let detail = share_refused(&client, &server, &bare_name).await;
    assert!(detail.contains("FORECAST_PLUGIN_UNSIGNED"), "{detail}");
}

/// The published strategy `name` is listed to the test account with its
/// signer, its description and its signed manifest.
async fn listed_with_its_signed_manifest(
    client: &reqwest::Client,
    server: &common::Server,
    name: &str,
    signer: &str,
) {
    let list: serde_json::Value = client
        .get(server.url("/api/strategies"))
        .bearer_auth(common::test_key())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let item = list["strategies"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == name)
        .expect("listed")
        .clone();
    assert_eq!(item["signer"], signer);
    assert_eq!(item["description"], "Buys the dip.");
    // The signed manifest, listed as signed.
    let m = &item["manifest"];
    assert_eq!(
        (&m["name"], &m["version"], &m["world"]),
        (&"dip-buyer".into(), &"0.1.0".into(), &"strategy".into()),
        "{item}"
    );
    assert_eq!(
        (&m["licence"], &m["author"]),
        (&"MIT".into(), &"Tests".into())
    );
    assert_eq!(m["sha256"], item["sha256"]);
    assert!(
        item["imports"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i.as_str().unwrap().starts_with("forecast:plugins/types")),
        "{item}"
    );
}

/// The test account asks to share its strategy `name`: refused with 422;
/// the refusal's detail.
async fn share_refused(client: &reqwest::Client, server: &common::Server, name: &str) -> String {
    let share = client
        .patch(server.url(&format!("/api/strategies/{name}")))
        .bearer_auth(common::test_key())
        .json(&serde_json::json!({ "shared": true }))
        .send()
        .await
        .unwrap();
    assert_eq!(share.status(), 422);
    share.json::<serde_json::Value>().await.unwrap()["detail"].to_string()
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
    let add = |version: &str, body: Vec<u8>| {
        server
            .client()
            .post(server.url(&format!(
                "/api/admin/plugins?kind=strategy&name=dip-buyer&version={version}"
            )))
            .bearer_auth(common::ADMIN_TOKEN)
            .header("content-type", "application/wasm")
            .body(body)
            .send()
    };
    let answer = |r: common::client::Response| async move {
        let status = r.status().as_u16();
        (status, r.json::<serde_json::Value>().await.unwrap())
    };
    let bare = std::fs::read(common::component("dip_buyer")).unwrap();
    let a = answer(add("0.1.0", bare).await.unwrap()).await;
    common::assert_error(&a, 422, &["unsigned components are refused"]);
    let bad = std::fs::read(dir.path().join("bad.febundle")).unwrap();
    let a = answer(add("0.1.0", bad).await.unwrap()).await;
    common::assert_error(&a, 422, &["not a trusted key", &untrusted]);
    let good = std::fs::read(dir.path().join("good.febundle")).unwrap();
    let a = answer(add("0.2.0", good.clone()).await.unwrap()).await;
    common::assert_error(&a, 400, &["dip-buyer@0.1.0", "0.2.0"]);
    let a = answer(add("0.1.0", good).await.unwrap()).await;
    assert_eq!(a.0, 200, "{}", a.1);
    assert_eq!(a.1["name"], "dip-buyer");
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
    let owner = common::test_key();
    let other = unlimited_premium_key(&server.db, "o@example.com");
    let api = Strategies {
        client: reqwest::Client::new(),
        server: &server,
    };
    let name = upload_three_versions(&api, owner, dir.path()).await;
    let shared = api
        .patch(owner, &name, serde_json::json!({ "shared": true }))
        .await;
    assert_eq!(shared.status(), 200, "the trusted current version");
    assert_eq!(api.run(&other, &name).await.0, 200);
    assert_eq!(api.run(&other, &format!("{name}@0.1.0")).await.0, 200);
    for (version, needle) in [
        ("0.2.0", "FORECAST_PLUGIN_UNSIGNED"),
        ("0.3.0", "not a trusted key"),
    ] {
        a_version_the_policy_refuses_runs_for_its_owner_only(
            &api, owner, &other, &name, version, needle,
        )
        .await;
    }
    refused_pinned_runs_cost_nothing(&api, pid, &other, &name).await;
    let seen = api.listed(&other, &name).await;
    assert_eq!(seen["version"], "0.1.0");
    assert_eq!(seen["versions"], serde_json::json!(["0.1.0"]), "{seen}");
    let own = api.listed(owner, &name).await;
    assert_eq!(own["versions"].as_array().unwrap().len(), 3, "{own}");
    // Unshared, the owner may pick any version; shared again, the check
    // applies to the version that runs.
    let unshared = api
        .patch(
            owner,
            &name,
            serde_json::json!({ "shared": false, "current_version": "0.2.0" }),
        )
        .await;
    assert_eq!(unshared.status(), 200);
    let reshared = api
        .patch(owner, &name, serde_json::json!({ "shared": true }))
        .await;
    assert_eq!(reshared.status(), 422);
    let (status, _) = api.run(&other, &name).await;
    assert_eq!(status, 400, "private again: unknown to others");
}

/// A Premium user added to `db` with quotas no test reaches; an API key
/// of theirs.
fn unlimited_premium_key(db: &Path, email: &str) -> String {
    common::cli_ok(
        db,
        &["user", "add", "--email", email, "--tier", "premium"],
        "",
    );
    common::cli_ok(
        db,
        &[
            "user",
            "set-limits",
            "--email",
            email,
            "--per-minute",
            "100000",
            "--per-day",
            "100000",
        ],
        "",
    );
    common::create_key(db, email, "other")
}

/// The strategy routes of a running server, through one client.
struct Strategies<'a> {
    client: reqwest::Client,
    server: &'a common::Server,
}

impl Strategies<'_> {
    /// `POST /api/strategies` of `body` as `media`.
    async fn upload(&self, key: &str, media: &str, body: Vec<u8>) -> reqwest::Response {
        self.client
            .post(self.server.url("/api/strategies"))
            .bearer_auth(key)
            .header("content-type", media)
            .body(body)
            .send()
            .await
            .unwrap()
    }

    /// `PATCH /api/strategies/{name}` with `body`.
    async fn patch(&self, key: &str, name: &str, body: serde_json::Value) -> reqwest::Response {
        self.client
            .patch(self.server.url(&format!("/api/strategies/{name}")))
            .bearer_auth(key)
            .json(&body)
            .send()
            .await
            .unwrap()
    }

    /// A backtest of `strategy` on the indices: status and JSON body.
    async fn run(&self, key: &str, strategy: &str) -> (u16, serde_json::Value) {
        let r = self
            .client
            .post(self.server.url("/api/backtest"))
            .bearer_auth(key)
            .json(&serde_json::json!({ "strategy": strategy, "category": "Indices" }))
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        (status, r.json::<serde_json::Value>().await.unwrap())
    }

    /// The strategy `name` as `GET /api/strategies` lists it to `key`.
    async fn listed(&self, key: &str, name: &str) -> serde_json::Value {
        let req = self.client.get(self.server.url("/api/strategies"));
        let v: serde_json::Value = req
            .bearer_auth(key)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        v["strategies"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["name"] == name)
            .cloned()
            .expect("listed")
    }
}

/// The owner uploads dip-buyer 0.1.0 signed by the trusted key, 0.2.0
/// unsigned and 0.3.0 signed by another key (each accepted: an owner may
/// upload anything); the strategy's name.
async fn upload_three_versions(api: &Strategies<'_>, owner: &str, dir: &Path) -> String {
    let bundle = "application/vnd.forecast.bundle";
    let v1 = api
        .upload(
            owner,
            bundle,
            std::fs::read(dir.join("v1.febundle")).unwrap(),
        )
        .await;
    assert_eq!(v1.status(), 201);
    let name = v1.json::<serde_json::Value>().await.unwrap()["strategy"]
        .as_str()
        .unwrap()
        .to_string();
    let v2 = api
        .upload(owner, "application/wasm", dip_buyer_as("0.2.0"))
        .await;
    assert_eq!(v2.status(), 201, "the owner may upload unsigned");
    let v3 = api
        .upload(
            owner,
            bundle,
            std::fs::read(dir.join("v3.febundle")).unwrap(),
        )
        .await;
    assert_eq!(v3.status(), 201, "and signed by any key");
    name
}

/// `version` of the shared strategy `name`, which the trust policy
/// refuses (the refusal naming `needle`): another account pinning it gets
/// 422; its owner runs it; switching the shared strategy to it is
/// refused.
async fn a_version_the_policy_refuses_runs_for_its_owner_only(
    api: &Strategies<'_>,
    owner: &str,
    other: &str,
    name: &str,
    version: &str,
    needle: &str,
) {
    let (status, body) = api.run(other, &format!("{name}@{version}")).await;
    assert_eq!(status, 422, "pinned {version}: {body}");
    let detail = body["detail"].as_str().unwrap();
    assert!(
        detail.contains(&format!("{name}@{version}")) && detail.contains(needle),
        "{detail}"
    );
    // Its owner runs it.
    let (status, body) = api.run(owner, &format!("{name}@{version}")).await;
    assert_eq!(status, 200, "the owner's own {version}: {body}");
    // Switching the shared strategy to it is refused; nothing changes.
    let switched = api
        .patch(
            owner,
            name,
            serde_json::json!({ "current_version": version }),
        )
        .await;
    assert_eq!(switched.status(), 422, "switch to {version}");
    let detail = switched.json::<serde_json::Value>().await.unwrap()["detail"].to_string();
    assert!(
        detail.contains("cannot be shared") && detail.contains(needle),
        "{detail}"
    );
}

/// The attack repeated: twenty pinned runs of the two versions the policy
/// refuses, each refused before any work; health answers throughout and
/// the resident memory of the server (process `pid`) does not move.
async fn refused_pinned_runs_cost_nothing(api: &Strategies<'_>, pid: u32, other: &str, name: &str) {
    let before = common::rss(pid);
    let (refused, health) = common::with_health(api.server, async {
        let mut refused = 0;
        for i in 0..20 {
            let version = if i % 2 == 0 { "0.2.0" } else { "0.3.0" };
            let (status, _) = api.run(other, &format!("{name}@{version}")).await;
            refused += usize::from(status == 422);
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
