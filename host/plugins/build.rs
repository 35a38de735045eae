//! Embeds the components that `components/manifest.txt` marks `builtin`,
//! `kept` or `fixture`, as staged by `make components` in `components/target/dist/`
//! (copied there only when their bytes change, so cargo's mtime check
//! rebuilds the host only for a changed component). A component that is not built
//! yet is embedded as empty bytes with a warning, so `cargo check`, clippy
//! and rust-analyzer work on a fresh clone; loading it at run time fails
//! with the fix (`make components`).

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let root = manifest_dir.join("../..");
    let list = root.join("components/manifest.txt");
    println!("cargo:rerun-if-changed={}", list.display());
    println!("cargo:rerun-if-env-changed=FORECAST_COMPONENTS_DIR");
    let dir = std::env::var("FORECAST_COMPONENTS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root.join("components/target/dist"));
    let text = std::fs::read_to_string(&list).expect("components/manifest.txt is readable");
    let mut code = String::from(
        "/// Every embedded component of `components/manifest.txt`.\n\
         pub const ALL: &[Component] = &[\n",
    );
    let mut consts = String::new();
    let mut missing = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [stem, world, role, _from] = fields[..] else {
            panic!("components/manifest.txt: malformed line '{line}'");
        };
        let role = match role {
            "builtin" => "Role::Builtin",
            "kept" => "Role::Kept",
            "fixture" => "Role::Fixture",
            _ => continue,
        };
        let path = dir.join(format!("{stem}.wasm"));
        println!("cargo:rerun-if-changed={}", path.display());
        let bytes = if path.exists() {
            let path = path.canonicalize().expect("exists");
            format!("include_bytes!({:?})", path.display().to_string())
        } else {
            missing.push(stem.to_string());
            "&[]".to_string()
        };
        let kind = match world {
            "segmentation" => "PluginKind::Segmentation",
            "scorer" => "PluginKind::Scorer",
            "strategy" => "PluginKind::Strategy",
            "matcher" => "PluginKind::Matcher",
            other => panic!("components/manifest.txt: unknown world '{other}'"),
        };
        let name = stem.to_uppercase();
        writeln!(
            consts,
            "/// `{stem}.wasm` ({world}).\npub const {name}: &[u8] = {bytes};"
        )
        .unwrap();
        writeln!(
            code,
            "    Component {{ stem: {stem:?}, kind: {kind}, role: {role}, bytes: {name} }},"
        )
        .unwrap();
    }
    code.push_str("];\n");
    code.push_str(&consts);
    if !missing.is_empty() {
        println!(
            "cargo:warning=components not built yet ({}): embedded empty; run `make components` before building a binary that serves",
            missing.join(", ")
        );
    }
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo")).join("builtin.rs");
    std::fs::write(out, code).expect("write builtin.rs");
}
