//! Raw HTTP/1.1 over a TCP socket, for the tests where a client library
//! would hide what is tested (early answers, deadlines, connection caps).

use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

/// One HTTP/1.1 response read from `conn`: status, lower-cased head, body
/// (by Content-Length). `None` if the connection closed (or failed) first.
pub async fn read_response(conn: &mut TcpStream) -> Option<(u16, String, String)> {
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        match conn.read(&mut buf).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
        }
    };
    let head = String::from_utf8_lossy(&raw[..head_end]).to_ascii_lowercase();
    let status = head.split(' ').nth(1)?.parse().ok()?;
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map_or(0, |v| v.trim().parse().unwrap());
    while raw.len() < head_end + length {
        match conn.read(&mut buf).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
        }
    }
    let body = String::from_utf8_lossy(&raw[head_end..head_end + length]).into_owned();
    Some((status, head, body))
}

/// What `conn` sends until it closes, or until `limit` has passed, as text.
pub async fn read_until_closed(conn: &mut TcpStream, limit: Duration) -> String {
    let mut raw = Vec::new();
    let _ = tokio::time::timeout(limit, conn.read_to_end(&mut raw)).await;
    String::from_utf8_lossy(&raw).into_owned()
}
