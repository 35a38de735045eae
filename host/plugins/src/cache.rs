//! Compiled components kept on disk by the SHA-256 of their bytes, so a
//! restart loads an author's upload instead of compiling it again.
//!
//! A file is named `<sha256>-<engine>.cwasm`, where `<engine>` is a digest
//! of the engine's precompile-compatibility hash (wasmtime's version, the
//! target and every setting that shapes compiled code: fuel, epochs,
//! memory layout). An engine configured otherwise looks for other names;
//! wasmtime checks the same compatibility again when it reads a file, and a
//! file that fails to load is compiled afresh and written again. Files are
//! written to a temporary name and renamed, so a reader never sees half a
//! file.
//!
//! Loading compiled code runs it natively: the folder must be writable by
//! the server alone (it is created `0700`). The server never reads a file
//! it did not name from bytes it hashed itself.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use wasmtime::component::Component;
use wasmtime::Engine;

/// The on-disk cache of one engine's compiled components.
#[derive(Debug)]
pub struct ModuleCache {
    dir: PathBuf,
    engine_tag: String,
    hits: AtomicU64,
    misses: AtomicU64,
}

/// How often the cache answered, since start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheCounts {
    /// Components loaded from a file.
    pub hits: u64,
    /// Components compiled (then written).
    pub misses: u64,
}

impl ModuleCache {
    /// A cache in `dir` (created if missing) for `engine`'s compiled code.
    pub fn open(dir: &Path, engine: &Engine) -> std::io::Result<ModuleCache> {
        create_private_dir(dir)?;
        // `DefaultHasher::new()` has fixed keys: the same engine settings
        // give the same tag in every process.
        let mut h = std::collections::hash_map::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut h);
        Ok(ModuleCache {
            dir: dir.to_path_buf(),
            engine_tag: format!("{:016x}", h.finish()),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        })
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// How often a component came from disk or was compiled.
    pub fn counts(&self) -> CacheCounts {
        CacheCounts {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
        }
    }

    fn path(&self, sha256: &str) -> PathBuf {
        self.dir.join(format!("{sha256}-{}.cwasm", self.engine_tag))
    }

    /// The component of `bytes` (whose hex SHA-256 is `sha256`): read from
    /// its file when there is one that loads, else compiled (and not
    /// written: see [`ModuleCache::keep`]).
    pub fn component(
        &self,
        engine: &Engine,
        bytes: &[u8],
        sha256: &str,
    ) -> wasmtime::Result<Component> {
        let path = self.path(sha256);
        // Read into memory rather than mapped: a file replaced or cut
        // short later cannot then pull code from under a running plugin.
        if let Ok(code) = std::fs::read(&path) {
            // SAFETY: the file was written by `keep` of this cache (the
            // folder is the server's own, mode 0700) under the digest of
            // the bytes being loaded, and wasmtime refuses code made by an
            // incompatible engine.
            match unsafe { Component::deserialize(engine, &code) } {
                Ok(c) => {
                    self.hits.fetch_add(1, Ordering::Relaxed);
                    metrics::counter!("forecast_module_cache_total", "result" => "hit")
                        .increment(1);
                    return Ok(c);
                }
                Err(e) => {
                    tracing::warn!(
                        path = %path.display(), error = %e,
                        "a cached compiled component did not load; compiling it again"
                    );
                    let _ = std::fs::remove_file(&path);
                }
            }
        }
        let component = Component::new(engine, bytes)?;
        self.misses.fetch_add(1, Ordering::Relaxed);
        metrics::counter!("forecast_module_cache_total", "result" => "miss").increment(1);
        Ok(component)
    }

    /// Writes `component` under `sha256` unless its file is there. Only
    /// what the caller keeps is written (a stored upload), so refused
    /// bytes never reach the disk and the folder holds at most one file
    /// per stored component and engine configuration.
    pub fn keep(&self, sha256: &str, component: &Component) {
        let path = self.path(sha256);
        if path.is_file() {
            return;
        }
        if let Err(e) = component
            .serialize()
            .map_err(std::io::Error::other)
            .and_then(|code| write_atomically(&path, &code))
        {
            tracing::warn!(
                path = %path.display(), error = %e,
                "could not keep a compiled component on disk; it will be compiled again next start"
            );
        }
    }
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.create(dir)
}

/// Writes `data` to `path` through a temporary file in the same folder.
fn write_atomically(path: &Path, data: &[u8]) -> std::io::Result<()> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let tmp = path.with_extension(format!("tmp{}-{n}", std::process::id()));
    std::fs::write(&tmp, data)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}
