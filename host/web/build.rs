//! Rebuilds this crate when `web/dist` changes. rust-embed reads the folder
//! when the crate compiles; cargo on its own notices edits of files it
//! already embedded, not files added since (a first `npm run build`, new
//! hashed names).
fn main() {
    println!("cargo:rerun-if-changed=../../web/dist");
}
