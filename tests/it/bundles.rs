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
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(dir.path().join("signing.key"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // A second keygen onto the same file is refused; the key stays.
    let before = std::fs::read(dir.path().join("signing.key")).unwrap();
    let (ok, _, err) = run(
        &db,
        &[
            "plugin",
            "keygen",
            "--out",
            s(&dir.path().join("signing.key")),
        ],
        &[],
    );
    assert!(!ok);
    assert!(err.contains("refusing to overwrite"), "{err}");
    assert_eq!(
        std::fs::read(dir.path().join("signing.key")).unwrap(),
        before
    );

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
    // Trusted explicitly, and not trusted when another key is listed.
    let (ok, out, err) = run(&db, &["plugin", "verify", s(&bundle), "--trust", &id], &[]);
    assert!(ok && out.contains("the signer is trusted"), "{out}{err}");
    let other = keygen(&db, dir.path(), "other.key");
    let (ok, _, err) = run(
        &db,
        &["plugin", "verify", s(&bundle), "--trust", &other],
        &[],
    );
    assert!(!ok);
    assert!(
        err.contains("not a trusted key") && err.contains(&id),
        "{err}"
    );
    // The trust list also comes from FORECAST_PLUGIN_TRUST.
    let (ok, _, err) = run(
        &db,
        &["plugin", "verify", s(&bundle)],
        &[("FORECAST_PLUGIN_TRUST", &other)],
    );
    assert!(!ok && err.contains("not a trusted key"), "{err}");

    // One flipped byte anywhere past the magic: it does not verify.
    let bytes = std::fs::read(&bundle).unwrap();
    for at in [20, bytes.len() / 2, bytes.len() - 1] {
        let mut t = bytes.clone();
        t[at] ^= 0x01;
        let path = dir.path().join(format!("flipped-{at}.febundle"));
        std::fs::write(&path, &t).unwrap();
        let (ok, _, err) = run(&db, &["plugin", "verify", s(&path)], &[]);
        assert!(!ok, "byte {at}");
        assert!(err.contains("does not verify"), "byte {at}: {err}");
    }
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
    let list: serde_json::Value = client
        .get(server.url("/api/strategies"))
        .bearer_auth(key)
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
        .find(|i| i["name"] == name.as_str())
        .expect("listed")
        .clone();
    assert_eq!(item["signer"], signer.as_str());
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
    let ran = client
        .post(server.url("/api/backtest"))
        .bearer_auth(key)
        .json(&serde_json::json!({ "strategy": name, "category": "Indices" }))
        .send()
        .await
        .unwrap();
    assert_eq!(ran.status(), 200);

    // Signed by a key the server does not trust: private only.
    let share = client
        .patch(server.url(&format!("/api/strategies/{name}")))
        .bearer_auth(key)
        .json(&serde_json::json!({ "shared": true }))
        .send()
        .await
        .unwrap();
    assert_eq!(share.status(), 422);
    let detail = share.json::<serde_json::Value>().await.unwrap()["detail"].to_string();
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
    let share = client
        .patch(server.url(&format!("/api/strategies/{bare_name}")))
        .bearer_auth(key)
        .json(&serde_json::json!({ "shared": true }))
        .send()
        .await
        .unwrap();
    assert_eq!(share.status(), 422);
    let detail = share.json::<serde_json::Value>().await.unwrap()["detail"].to_string();
    assert!(detail.contains("FORECAST_PLUGIN_UNSIGNED"), "{detail}");
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
    common::cli_ok(
        &server.db,
        &[
            "user",
            "add",
            "--email",
            "o@example.com",
            "--tier",
            "premium",
        ],
        "",
    );
    common::cli_ok(
        &server.db,
        &[
            "user",
            "set-limits",
            "--email",
            "o@example.com",
            "--per-minute",
            "100000",
            "--per-day",
            "100000",
        ],
        "",
    );
    let other = common::create_key(&server.db, "o@example.com", "other");
    let client = reqwest::Client::new();
    let upload = |media: &'static str, body: Vec<u8>| {
        client
            .post(server.url("/api/strategies"))
            .bearer_auth(owner)
            .header("content-type", media)
            .body(body)
            .send()
    };
    let bundle = "application/vnd.forecast.bundle";
    let v1 = upload(
        bundle,
        std::fs::read(dir.path().join("v1.febundle")).unwrap(),
    );
    let v1 = v1.await.unwrap();
    assert_eq!(v1.status(), 201);
    let name = v1.json::<serde_json::Value>().await.unwrap()["strategy"]
        .as_str()
        .unwrap()
        .to_string();
    let v2 = upload("application/wasm", dip_buyer_as("0.2.0"))
        .await
        .unwrap();
    assert_eq!(v2.status(), 201, "the owner may upload unsigned");
    let v3 = upload(
        bundle,
        std::fs::read(dir.path().join("v3.febundle")).unwrap(),
    );
    assert_eq!(v3.await.unwrap().status(), 201, "and signed by any key");

    let path = format!("/api/strategies/{name}");
    let patch = |who: &'static str, body: serde_json::Value| {
        client
            .patch(server.url(&path))
            .bearer_auth(who)
            .json(&body)
            .send()
    };
    let shared = patch(owner, serde_json::json!({ "shared": true }))
        .await
        .unwrap();
    assert_eq!(shared.status(), 200, "the trusted current version");
    let run = |who: String, strategy: String| {
        let req = client
            .post(server.url("/api/backtest"))
            .bearer_auth(who)
            .json(&serde_json::json!({ "strategy": strategy, "category": "Indices" }));
        async move {
            let r = req.send().await.unwrap();
            let status = r.status().as_u16();
            (status, r.json::<serde_json::Value>().await.unwrap())
        }
    };
    assert_eq!(run(other.clone(), name.clone()).await.0, 200);
    assert_eq!(run(other.clone(), format!("{name}@0.1.0")).await.0, 200);
    for (version, needle) in [
        ("0.2.0", "FORECAST_PLUGIN_UNSIGNED"),
        ("0.3.0", "not a trusted key"),
    ] {
        let (status, body) = run(other.clone(), format!("{name}@{version}")).await;
        assert_eq!(status, 422, "pinned {version}: {body}");
        let detail = body["detail"].as_str().unwrap();
        assert!(
            detail.contains(&format!("{name}@{version}")) && detail.contains(needle),
            "{detail}"
        );
        // Its owner runs it.
        let (status, body) = run(owner.to_string(), format!("{name}@{version}")).await;
        assert_eq!(status, 200, "the owner's own {version}: {body}");
        // Switching the shared strategy to it is refused; nothing changes.
        let switched = patch(owner, serde_json::json!({ "current_version": version }));
        let switched = switched.await.unwrap();
        assert_eq!(switched.status(), 422, "switch to {version}");
        let detail = switched.json::<serde_json::Value>().await.unwrap()["detail"].to_string();
        assert!(
            detail.contains("cannot be shared") && detail.contains(needle),
            "{detail}"
        );
    }
    // The attack repeated: twenty pinned runs of the two versions the
    // policy refuses, each refused before any work; health answers
    // throughout and resident memory does not move.
    let before = common::rss(pid);
    let (refused, health) = common::with_health(&server, async {
        let mut refused = 0;
        for i in 0..20 {
            let version = if i % 2 == 0 { "0.2.0" } else { "0.3.0" };
            let (status, _) = run(other.clone(), format!("{name}@{version}")).await;
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
    let listed = |who: String| {
        let req = client.get(server.url("/api/strategies")).bearer_auth(who);
        let name = name.clone();
        async move {
            let v: serde_json::Value = req.send().await.unwrap().json().await.unwrap();
            v["strategies"]
                .as_array()
                .unwrap()
                .iter()
                .find(|i| i["name"] == name.as_str())
                .cloned()
                .expect("listed")
        }
    };
    let seen = listed(other.clone()).await;
    assert_eq!(seen["version"], "0.1.0");
    assert_eq!(seen["versions"], serde_json::json!(["0.1.0"]), "{seen}");
    let own = listed(owner.to_string()).await;
    assert_eq!(own["versions"].as_array().unwrap().len(), 3, "{own}");
    // Unshared, the owner may pick any version; shared again, the check
    // applies to the version that runs.
    let unshared = patch(
        owner,
        serde_json::json!({ "shared": false, "current_version": "0.2.0" }),
    );
    assert_eq!(unshared.await.unwrap().status(), 200);
    let reshared = patch(owner, serde_json::json!({ "shared": true }))
        .await
        .unwrap();
    assert_eq!(reshared.status(), 422);
    let (status, _) = run(other, name.clone()).await;
    assert_eq!(status, 400, "private again: unknown to others");
}
