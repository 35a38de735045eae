//! A fake price provider for `forecast ingest fetch`: a plain HTTP/1.1
//! server on 127.0.0.1:0 in its own threads (the CLI under test blocks the
//! test's runtime), answering both Yahoo's chart path and Stooq's download
//! path from per-symbol scripts of replies, and recording every request.

#![allow(dead_code)]

use std::collections::{HashMap, VecDeque};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// One answer of the fake server.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Declare this Content-Length but send only `body`, then close.
    pub declared_length: Option<usize>,
}

impl Reply {
    /// 200 with `body`.
    pub fn ok(body: impl Into<Vec<u8>>) -> Reply {
        Reply {
            status: 200,
            headers: Vec::new(),
            body: body.into(),
            declared_length: None,
        }
    }

    /// 200 with a fixture file of `tests/fixtures/providers/`.
    pub fn fixture(path: &str) -> Reply {
        Reply::ok(read_fixture(path))
    }

    /// `status` with an empty body.
    pub fn status(status: u16) -> Reply {
        Reply {
            status,
            ..Reply::ok(Vec::new())
        }
    }

    /// The same reply with another status.
    pub fn with_status(mut self, status: u16) -> Reply {
        self.status = status;
        self
    }

    /// The same reply with a header.
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The same reply announcing `declared` bytes and sending fewer.
    pub fn cut(mut self, declared: usize) -> Reply {
        self.declared_length = Some(declared);
        self
    }
}

/// A fixture's bytes.
pub fn read_fixture(path: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/providers")
        .join(path);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct Request {
    pub at: Instant,
    /// Path and query as sent.
    pub target: String,
    /// The symbol it asked for, decoded.
    pub symbol: String,
    pub user_agent: String,
}

#[derive(Default)]
struct State {
    scripts: HashMap<String, VecDeque<Reply>>,
    requests: Vec<Request>,
}

/// The fake provider; `base` is what FORECAST_YAHOO_URL and
/// FORECAST_STOOQ_URL are set to.
pub struct FakeProvider {
    pub base: String,
    state: Arc<Mutex<State>>,
}

impl FakeProvider {
    pub fn start() -> FakeProvider {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the fake provider");
        let base = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(Mutex::new(State::default()));
        let s = state.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let s = s.clone();
                std::thread::spawn(move || serve(conn, &s));
            }
        });
        FakeProvider { base, state }
    }

    /// Replies for `symbol`, one per request in order; the last repeats.
    pub fn script(&self, symbol: &str, replies: Vec<Reply>) -> &Self {
        assert!(!replies.is_empty());
        self.state
            .lock()
            .unwrap()
            .scripts
            .insert(symbol.to_string(), replies.into());
        self
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Request> {
        self.state.lock().unwrap().requests.clone()
    }

    /// The requests for one symbol.
    pub fn requests_for(&self, symbol: &str) -> Vec<Request> {
        self.requests()
            .into_iter()
            .filter(|r| r.symbol == symbol)
            .collect()
    }
}

fn serve(mut conn: TcpStream, state: &Mutex<State>) {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match conn.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    let at = Instant::now();
    let head = String::from_utf8_lossy(&head).into_owned();
    let target = head
        .lines()
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .unwrap_or("")
        .to_string();
    let user_agent = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("user-agent")
                .then(|| v.trim().to_string())
        })
        .unwrap_or_default();
    let symbol = symbol_of(&target);
    let reply = {
        let mut st = state.lock().unwrap();
        st.requests.push(Request {
            at,
            target: target.clone(),
            symbol: symbol.clone(),
            user_agent,
        });
        match st.scripts.get_mut(&symbol) {
            Some(q) if q.len() > 1 => q.pop_front().unwrap(),
            Some(q) => q.front().unwrap().clone(),
            None => Reply::ok(format!("not scripted: {symbol}")).with_status(404),
        }
    };
    let mut out = format!(
        "HTTP/1.1 {} {}\r\nContent-Length: {}\r\nConnection: close\r\n",
        reply.status,
        reason(reply.status),
        reply.declared_length.unwrap_or(reply.body.len())
    );
    for (k, v) in &reply.headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    let _ = conn.write_all(out.as_bytes());
    let _ = conn.write_all(&reply.body);
    let _ = conn.flush();
}

/// `/v8/finance/chart/%5EGSPC?…` → `^GSPC`; `/q/d/l/?s=aapl.us&i=d` → `aapl.us`.
fn symbol_of(target: &str) -> String {
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let raw = if let Some(s) = path.strip_prefix("/v8/finance/chart/") {
        s
    } else {
        query
            .split('&')
            .find_map(|kv| kv.strip_prefix("s="))
            .unwrap_or("")
    };
    decode(raw)
}

fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    }
}
