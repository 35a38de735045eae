//! The abusive uploads of issue 26 (item 6), made by hand: shared by
//! `make bench-uploads` (host/benches/uploads.rs) and the black-box tests
//! of tests/it/upload_abuse.rs (which include this file by path).
//!
//! Each builder starts from a real strategy component (the SDK's
//! `dip_buyer` example) so the server gets past the type check to the part
//! under test: a core memory or table declared huge, an import the
//! strategy world does not provide, a name of its own. Plus a raw HTTP/1.1
//! sender for bodies far over the upload limit, which reads the answer
//! while the body is still being written (a client library may report the
//! early close instead of the 413), and `/proc` readings of a process's
//! resident memory.

#![allow(dead_code)]

use std::convert::Infallible;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use wasm_encoder::reencode::{utils, Reencode, ReencodeComponent};

/// The strategy a builder starts from, built by `make components`.
pub fn dip_buyer_path() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../components/target/wasm32-wasip2/release/dip_buyer.wasm")
}

/// The `dip_buyer` component's bytes.
pub fn dip_buyer() -> Vec<u8> {
    std::fs::read(dip_buyer_path()).expect("make components builds dip_buyer")
}

/// Garbage that starts like a component (magic, version, layer) and then
/// is noise.
pub fn garbage() -> Vec<u8> {
    let mut bytes = b"\0asm\x0d\x00\x01\x00".to_vec();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    bytes.extend((0..64 << 10).map(|_| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x as u8
    }));
    bytes
}

/// Rewrites every core memory and/or table declaration of a component.
struct Declarations {
    memory_pages: Option<u64>,
    table_elements: Option<u64>,
}

impl Reencode for Declarations {
    type Error = Infallible;

    fn memory_type(
        &mut self,
        ty: wasmparser::MemoryType,
    ) -> Result<wasm_encoder::MemoryType, wasm_encoder::reencode::Error<Infallible>> {
        let mut m = utils::memory_type(self, ty);
        if let Some(pages) = self.memory_pages {
            m.minimum = pages;
            m.maximum = m.maximum.map(|max| max.max(pages));
        }
        Ok(m)
    }

    fn table_type(
        &mut self,
        ty: wasmparser::TableType,
    ) -> Result<wasm_encoder::TableType, wasm_encoder::reencode::Error<Infallible>> {
        let mut t = utils::table_type(self, ty)?;
        if let Some(elements) = self.table_elements {
            t.minimum = elements;
            t.maximum = t.maximum.map(|max| max.max(elements));
        }
        Ok(t)
    }
}

impl ReencodeComponent for Declarations {}

fn redeclared(component: &[u8], memory_pages: Option<u64>, table_elements: Option<u64>) -> Vec<u8> {
    let mut out = wasm_encoder::Component::new();
    Declarations {
        memory_pages,
        table_elements,
    }
    .parse_component(&mut out, wasmparser::Parser::new(0), component)
    .expect("re-encode the component");
    let bytes = out.finish();
    wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all())
        .validate_all(&bytes)
        .expect("the rewritten component is valid");
    bytes
}

/// Every core memory of `component` declared with a minimum of 65,536
/// pages: 4 GiB at instantiation, sixteen times the plugin memory cap.
pub fn huge_memory(component: &[u8]) -> Vec<u8> {
    redeclared(component, Some(65_536), None)
}

/// Every core table of `component` declared with a minimum of 10,000,000
/// elements (80 MB of references at instantiation).
pub fn huge_table(component: &[u8]) -> Vec<u8> {
    redeclared(component, None, Some(10_000_000))
}

/// `component` with one more import: an instance named `name` (e.g.
/// `wasi:filesystem/types@0.2.6`), appended after its own sections so no
/// index moves.
pub fn importing(component: &[u8], name: &str) -> Vec<u8> {
    let types = wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all())
        .validate_all(component)
        .expect("a valid component");
    let index = types.as_ref().component_type_count();
    let mut extra = wasm_encoder::Component::new();
    let mut ty = wasm_encoder::ComponentTypeSection::new();
    ty.instance(&wasm_encoder::InstanceType::new());
    extra.section(&ty);
    let mut import = wasm_encoder::ComponentImportSection::new();
    import.import(name, wasm_encoder::ComponentTypeRef::Instance(index));
    extra.section(&import);
    let extra = extra.finish();
    let mut bytes = component.to_vec();
    // Past the 8-byte preamble (magic, version, layer) of the new one.
    bytes.extend_from_slice(&extra[8..]);
    wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all())
        .validate_all(&bytes)
        .expect("the component with its extra import is valid");
    bytes
}

/// `component` with `n` unused core modules appended (after its own
/// sections, so no index moves), each defining a memory of 257 pages with
/// one 16-byte data segment at 16 MiB: a few hundred bytes each that a
/// compiler would turn into a 16 MiB initial-memory image apiece.
pub fn sparse_modules(component: &[u8], n: usize) -> Vec<u8> {
    let mut extra = wasm_encoder::Component::new();
    for _ in 0..n {
        let mut module = wasm_encoder::Module::new();
        let mut memories = wasm_encoder::MemorySection::new();
        memories.memory(wasm_encoder::MemoryType {
            minimum: 257,
            maximum: None,
            memory64: false,
            shared: false,
            page_size_log2: None,
        });
        module.section(&memories);
        let mut data = wasm_encoder::DataSection::new();
        data.active(0, &wasm_encoder::ConstExpr::i32_const(16 << 20), [1u8; 16]);
        module.section(&data);
        extra.section(&wasm_encoder::ModuleSection(&module));
    }
    let extra = extra.finish();
    let mut bytes = component.to_vec();
    bytes.extend_from_slice(&extra[8..]);
    wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all())
        .validate_all(&bytes)
        .expect("the component with its extra modules is valid");
    bytes
}

/// `dip_buyer` reporting the name `dip-buy-<i>` (`i` < 10): the name is a
/// string of its data, replaced in place by one of the same length, so
/// each is a distinct strategy of the same author.
pub fn renamed(component: &[u8], i: usize) -> Vec<u8> {
    assert!(i < 10);
    let from = b"dip-buyer";
    let to = format!("dip-buy-{i}");
    let mut bytes = component.to_vec();
    let mut found = 0;
    let mut at = 0;
    while let Some(p) = bytes[at..].windows(from.len()).position(|w| w == from) {
        bytes[at + p..at + p + from.len()].copy_from_slice(to.as_bytes());
        at += p + from.len();
        found += 1;
    }
    assert!(found > 0, "dip_buyer names itself");
    bytes
}

/// What the server answered a raw request, and how much of the body the
/// client had written (into the socket) when the answer was complete.
pub struct RawAnswer {
    pub status: u16,
    pub body: String,
    pub sent: usize,
}

/// POSTs `total` bytes of zeros to `path` on `base` (`http://host:port`)
/// as `application/wasm`, declared with Content-Length (`chunked` false)
/// or sent chunked with no length, while reading the answer; stops
/// writing when the answer is complete or the server closes.
pub async fn post_large(
    base: &str,
    path: &str,
    key: &str,
    total: usize,
    chunked: bool,
) -> RawAnswer {
    let addr = base.trim_start_matches("http://").to_string();
    let stream = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connect");
    let (mut rd, mut wr) = stream.into_split();
    let length = if chunked {
        "Transfer-Encoding: chunked".to_string()
    } else {
        format!("Content-Length: {total}")
    };
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {key}\r\n\
         Content-Type: application/wasm\r\n{length}\r\nConnection: close\r\n\r\n"
    );
    let written = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let writer = tokio::spawn({
        let written = written.clone();
        async move {
            let piece = vec![0u8; 64 << 10];
            let mut sent = 0usize;
            if wr.write_all(head.as_bytes()).await.is_err() {
                return;
            }
            while sent < total {
                let n = piece.len().min(total - sent);
                let ok = if chunked {
                    let mut chunk = format!("{n:x}\r\n").into_bytes();
                    chunk.extend_from_slice(&piece[..n]);
                    chunk.extend_from_slice(b"\r\n");
                    wr.write_all(&chunk).await
                } else {
                    wr.write_all(&piece[..n]).await
                };
                if ok.is_err() {
                    return;
                }
                sent += n;
                written.store(sent, std::sync::atomic::Ordering::Relaxed);
            }
            if chunked {
                let _ = wr.write_all(b"0\r\n\r\n").await;
            }
        }
    });
    let mut answer = Vec::new();
    let mut buf = vec![0u8; 16 << 10];
    let read = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            match rd.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    answer.extend_from_slice(&buf[..n]);
                    if complete(&answer) {
                        break;
                    }
                }
            }
        }
    })
    .await;
    assert!(read.is_ok(), "no answer to a {total}-byte body within 60 s");
    let sent = written.load(std::sync::atomic::Ordering::Relaxed);
    writer.abort();
    let text = String::from_utf8_lossy(&answer).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    RawAnswer { status, body, sent }
}

/// A whole answer with a Content-Length body has arrived.
fn complete(answer: &[u8]) -> bool {
    let text = String::from_utf8_lossy(answer);
    let Some((head, body)) = text.split_once("\r\n\r\n") else {
        return false;
    };
    head.lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse::<usize>().ok())
                .flatten()
        })
        .is_some_and(|n| body.len() >= n)
}

/// A field of `/proc/<pid>/status` in kB (`VmRSS`, `VmHWM`), in bytes.
pub fn proc_status_bytes(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{field} in /proc/{pid}/status"));
    kb * 1024
}

/// The CPU time (user and system, every thread) process `pid` has used.
pub fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("proc stat");
    // The fields after the command name, which is in parentheses and may
    // hold spaces: utime and stime are the 14th and 15th of the line.
    let rest = &stat[stat.rfind(')').expect("comm") + 2..];
    let ticks: u64 = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .map(|v| v.parse::<u64>().expect("ticks"))
        .sum();
    // SAFETY: sysconf only reads a constant of the system.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    ticks as f64 / per_second as f64
}
