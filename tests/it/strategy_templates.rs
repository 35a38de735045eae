//! The Python and TypeScript templates as an author uses them (sdk/README.md):
//! `make plugin NAME=… LANG=…` at the repository root, then the plugin's own
//! `make test`, whose backtest runs on a running server named by
//! `FORECAST_URL` and `FORECAST_API_KEY` (no `forecast` binary needed: the
//! fresh-clone path), or else on the `forecast` binary it starts itself.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{test_key, Server};

/// A plugin folder made from a template, removed when dropped.
struct Plugin {
    dir: PathBuf,
}

impl Drop for Plugin {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .expect("the repository root")
}

/// `make args…` in `dir` with `env`; whether it succeeded, and its output.
fn make(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (bool, String) {
    let out = Command::new("make")
        .args(["--no-print-directory"])
        .args(args)
        .current_dir(dir)
        .env_remove("FORECAST_URL")
        .env_remove("FORECAST_API_KEY")
        .env_remove("FORECAST_BIN")
        .envs(env.iter().copied())
        .output()
        .expect("run make");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// `make plugin NAME=name LANG=lang` at the root: the plugin's folder.
fn new_plugin(name: &str, lang: &str) -> Plugin {
    let dir = root().join("plugins").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    let plugin = Plugin { dir };
    let (ok, out) = make(
        &root(),
        &["plugin", &format!("NAME={name}"), &format!("LANG={lang}")],
        &[],
    );
    assert!(ok, "make plugin NAME={name} LANG={lang}:\n{out}");
    plugin
}

/// Replaces `from` by `to` in the plugin's source file `file`.
fn edit(plugin: &Plugin, file: &str, from: &str, to: &str) {
    let path = plugin.dir.join(file);
    let text = std::fs::read_to_string(&path).expect("the template's source");
    assert!(text.contains(from), "{file} has no {from:?}");
    std::fs::write(&path, text.replacen(from, to, 1)).expect("write the source");
}

/// The template's whole path for `lang`, against a running server and then
/// against the binary: the first upload runs; changed code under the same
/// version is refused with the way out; a raised version runs.
async fn template_tests_pass_on_a_running_server(lang: &str, source: &str) {
    let name = format!("it-template-{lang}");
    let plugin = new_plugin(&name, lang);
    let s = Server::start();
    let remote = [
        ("FORECAST_URL", s.base.as_str()),
        ("FORECAST_API_KEY", test_key()),
        // Never used on a running server: the path needs no Rust build.
        ("FORECAST_BIN", "/nonexistent/forecast"),
    ];
    let (ok, out) = make(&plugin.dir, &["test"], &remote);
    assert!(ok, "make test against {}:\n{out}", s.base);
    let (status, list) = s.get("/api/strategies").await;
    assert_eq!(status, 200);
    assert!(
        list.to_string().contains(&format!("/{name}")),
        "the test's upload is listed on the server: {list}"
    );

    edit(
        &plugin,
        source,
        "in the top_n assets",
        "in the top_n assets (edited)",
    );
    let (ok, out) = make(&plugin.dir, &["test"], &remote);
    assert!(!ok, "changed code under a stored version must fail:\n{out}");
    assert!(
        out.contains("409") && out.contains("raise VERSION"),
        "the failure names the way out:\n{out}"
    );

    edit(&plugin, source, "\"0.1.0\"", "\"0.1.1-dev.1\"");
    let (ok, out) = make(&plugin.dir, &["test"], &remote);
    assert!(ok, "make test with a raised version:\n{out}");
    // The stopped server's address (a port the OS chose): nothing answers.
    let gone = s.base.clone();
    drop(s);

    let bin = root().join("target/release/forecast");
    let (ok, out) = make(
        &plugin.dir,
        &["test"],
        &[("FORECAST_BIN", bin.to_str().unwrap())],
    );
    assert!(ok, "make test on the forecast binary:\n{out}");
    // A URL without a key: refused before any request is sent.
    let (ok, out) = make(&plugin.dir, &["test"], &[("FORECAST_URL", gone.as_str())]);
    assert!(!ok, "a URL without a key must fail");
    assert!(
        out.contains("FORECAST_API_KEY"),
        "names the missing key:\n{out}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_template_tests_on_a_running_server_and_on_the_binary() {
    template_tests_pass_on_a_running_server("python", "src/app.py").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_ts_template_tests_on_a_running_server_and_on_the_binary() {
    template_tests_pass_on_a_running_server("ts", "src/app.ts").await;
}
