//! A load generator for the request-path benches: keep-alive connections
//! speaking plain HTTP/1.1 (a few lines, lighter than a full client, as
//! wrk), each sending one `GET` again and again.

use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// One case's figures.
pub struct Stats {
    pub requests: usize,
    pub errors: u64,
    pub per_second: f64,
    pub p50: Duration,
    pub p99: Duration,
    /// Every answer received, the warm-up second's included (what a
    /// server's CPU time over the whole case was spent on).
    pub sent: usize,
}

/// Sends `GET path` over one kept-alive connection; the status.
async fn get(stream: &mut TcpStream, request: &[u8], buf: &mut Vec<u8>) -> std::io::Result<u16> {
    stream.write_all(request).await?;
    buf.clear();
    let mut chunk = [0u8; 16 * 1024];
    // Head.
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = std::str::from_utf8(&buf[..head_end]).map_err(std::io::Error::other)?;
    let status: u16 = head
        .get(9..12)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other("bad status line"))?;
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().ok())?
        })
        .ok_or_else(|| std::io::Error::other("no content-length"))?;
    // Body.
    while buf.len() < head_end + length {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Ok(status)
}

/// `connections` keep-alive connections sending `GET path` (with the key
/// when given) for a warm-up second and then `seconds`.
pub async fn load(
    addr: &str,
    path: &str,
    key: Option<&str>,
    connections: usize,
    seconds: u64,
) -> Stats {
    let auth = key
        .map(|k| format!("Authorization: Bearer {k}\r\n"))
        .unwrap_or_default();
    load_with(addr, path, &auth, connections, seconds).await
}

/// [`load`] with `headers` (whole lines, each ending in CRLF) instead of a
/// key: a session's cookie and CSRF header, say.
pub async fn load_with(
    addr: &str,
    path: &str,
    headers: &str,
    connections: usize,
    seconds: u64,
) -> Stats {
    load_answering(addr, path, headers, connections, seconds, 200..300).await
}

/// [`load_with`] counting the statuses in `expected` as answers (a route
/// whose case under test is a 404, say) and every other as an error.
pub async fn load_answering(
    addr: &str,
    path: &str,
    headers: &str,
    connections: usize,
    seconds: u64,
    expected: std::ops::Range<u16>,
) -> Stats {
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\n{headers}\r\n").into_bytes();
    let warm_until = Instant::now() + Duration::from_secs(1);
    let deadline = warm_until + Duration::from_secs(seconds);
    let mut tasks = Vec::new();
    for _ in 0..connections {
        let (addr, request, expected) = (addr.to_string(), request.clone(), expected.clone());
        tasks.push(tokio::spawn(async move {
            let mut stream = TcpStream::connect(&addr).await.expect("connect");
            stream.set_nodelay(true).ok();
            let mut buf = Vec::with_capacity(4096);
            let mut latencies = Vec::new();
            let mut errors = 0u64;
            let mut sent = 0usize;
            while Instant::now() < deadline {
                let t = Instant::now();
                let ok = match get(&mut stream, &request, &mut buf).await {
                    Ok(status) => expected.contains(&status),
                    Err(_) => {
                        stream = TcpStream::connect(&addr).await.expect("reconnect");
                        false
                    }
                };
                sent += usize::from(ok);
                if t >= warm_until {
                    if ok {
                        latencies.push(t.elapsed());
                    } else {
                        errors += 1;
                    }
                }
            }
            (latencies, errors, sent)
        }));
    }
    let mut all = Vec::new();
    let (mut errors, mut sent) = (0, 0);
    for t in tasks {
        let (l, e, n) = t.await.unwrap();
        all.extend(l);
        errors += e;
        sent += n;
    }
    all.sort();
    let pct = |p: f64| {
        all.get(((all.len() as f64 * p) as usize).min(all.len().saturating_sub(1)))
            .copied()
            .unwrap_or_default()
    };
    Stats {
        requests: all.len(),
        errors,
        per_second: all.len() as f64 / seconds as f64,
        p50: pct(0.50),
        p99: pct(0.99),
        sent,
    }
}
