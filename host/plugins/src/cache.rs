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
//! Loading compiled code runs it natively: the folder must be the server's
//! alone. It is created `0700`; an existing one owned by another user is
//! refused, and one that others could write is made `0700` and emptied,
//! with a warning (a file planted there would have run as another
//! strategy's native code). A file is read only when it is the server's
//! own, writable by no one else, and its header's SHA-256 of the code
//! matches. The server never reads a file it did not name from bytes it
//! hashed itself. Temporary files a crash left are removed at start, and
//! files unused for [`MAX_AGE`] or past [`MAX_BYTES`] in all (the least
//! recently used first) are pruned then too; [`ModuleCache::forget`]
//! removes a deleted upload's file.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};

use wasmtime::component::Component;
use wasmtime::Engine;

/// What starts a cache file: then the SHA-256 of the code that follows.
const MAGIC: &[u8; 8] = b"FECWASM1";
/// A file not read or written for this long is pruned at start.
pub const MAX_AGE: Duration = Duration::from_secs(30 * 86_400);
/// The most the folder's files may hold together; the least recently used
/// are pruned at start beyond it.
pub const MAX_BYTES: u64 = 2 << 30;

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
        secure_dir(dir)?;
        tidy(dir);
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
        if let Some(code) = read_own(&path) {
            // SAFETY: the file is the server's own in its own folder (mode
            // 0700, writable by no one else), written by `keep` of this
            // cache under the digest of the bytes being loaded, its code
            // unchanged since (the header's SHA-256), and wasmtime refuses
            // code made by an incompatible engine.
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
            .and_then(|code| write_atomically(&path, &framed(&code)))
        {
            tracing::warn!(
                path = %path.display(), error = %e,
                "could not keep a compiled component on disk; it will be compiled again next start"
            );
        }
    }

    /// Removes the file of `sha256` (a deleted upload's), if any.
    pub fn forget(&self, sha256: &str) {
        let _ = std::fs::remove_file(self.path(sha256));
    }
}

/// `code` behind its header: [`MAGIC`] and its SHA-256.
fn framed(code: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(MAGIC.len() + 32 + code.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&Sha256::digest(code));
    out.extend_from_slice(code);
    out
}

/// The code of the cache file at `path` when the file is the server's own
/// and writable by no one else, and its header's digest matches; else
/// none (a file that fails is removed, so it is compiled and written
/// again).
fn read_own(path: &Path) -> Option<Vec<u8>> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    let refuse = |why: &str| {
        tracing::warn!(path = %path.display(), "a cached compiled component is not loaded: {why}");
        let _ = std::fs::remove_file(path);
        None
    };
    if !meta.is_file() {
        return refuse("not a plain file");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.mode() & 0o022 != 0 {
            return refuse("others may write it");
        }
        if own_uid().is_some_and(|me| meta.uid() != me) {
            return refuse("another user owns it");
        }
    }
    let bytes = std::fs::read(path).ok()?;
    let header = MAGIC.len() + 32;
    if bytes.len() < header
        || &bytes[..MAGIC.len()] != MAGIC
        || Sha256::digest(&bytes[header..])[..] != bytes[MAGIC.len()..header]
    {
        return refuse("its digest does not match its code");
    }
    // Used now: pruning goes by the last use.
    let _ = std::fs::File::options()
        .append(true)
        .open(path)
        .and_then(|f| f.set_modified(SystemTime::now()));
    Some(bytes[header..].to_vec())
}

/// This process's user id (the owner of `/proc/self`), where known.
#[cfg(unix)]
fn own_uid() -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").ok().map(|m| m.uid())
}

/// Refuses a folder another user owns; one that others could write is
/// made `0700` and emptied, with a warning.
fn secure_dir(dir: &Path) -> std::io::Result<()> {
    let meta = std::fs::symlink_metadata(dir)?;
    if !meta.is_dir() {
        return Err(std::io::Error::other(format!(
            "{} is not a folder (a link or a file)",
            dir.display()
        )));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        if let Some(me) = own_uid().filter(|&me| meta.uid() != me) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!(
                    "{} belongs to user {}, not to this server's user {me}",
                    dir.display(),
                    meta.uid()
                ),
            ));
        }
        if meta.mode() & 0o077 != 0 {
            tracing::warn!(
                dir = %dir.display(),
                mode = format!("{:o}", meta.mode() & 0o777),
                "the module cache folder was open to other users: made 0700 and emptied \
                 (a file planted there could have run as native code)"
            );
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
            for entry in std::fs::read_dir(dir)?.flatten() {
                if entry.file_type().is_ok_and(|t| !t.is_dir()) {
                    let _ = std::fs::remove_file(entry.path());
                }
            }
        }
    }
    Ok(())
}

/// Removes temporary files a crash left, files unused for [`MAX_AGE`], and
/// the least recently used files past [`MAX_BYTES`] in all.
fn tidy(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let now = SystemTime::now();
    let mut kept: Vec<(SystemTime, u64, PathBuf)> = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = entry.metadata() else { continue };
        if !meta.is_file() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let used = meta.modified().unwrap_or(now);
        let old = now.duration_since(used).unwrap_or_default() > MAX_AGE;
        if name.contains(".tmp") || (name.ends_with(".cwasm") && old) {
            let _ = std::fs::remove_file(&path);
        } else if name.ends_with(".cwasm") {
            kept.push((used, meta.len(), path));
        }
    }
    // Newest first; past the byte cap the rest go.
    kept.sort_by_key(|k| std::cmp::Reverse(k.0));
    let mut total = 0u64;
    for (_, len, path) in kept {
        total = total.saturating_add(len);
        if total > MAX_BYTES {
            let _ = std::fs::remove_file(&path);
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
    let mut options = std::fs::File::options();
    options.write(true).create_new(true);
    // The server's alone, whatever the umask.
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    std::io::Write::write_all(&mut options.open(&tmp)?, data)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}
