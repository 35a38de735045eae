//! A local SMTP server for the e-mail tests: aiosmtpd (pinned by version
//! and SHA-256 in `tools/smtp-sink/requirements.txt`, installed into
//! `target/smtp-venv` by `make smtp-sink`, which `make test` runs) on a
//! free port of 127.0.0.1, plain SMTP without TLS or authentication, its
//! `Mailbox` handler storing every message it accepts as one file of a
//! maildir in a temporary folder. [`SmtpSink::url`] is what
//! FORECAST_SMTP_URL is set to; [`SmtpSink::messages`] reads back what
//! arrived as [`Mail`]s: headers unfolded, RFC 2047 encoded words decoded,
//! the body (the first text/plain part of a multipart message) decoded
//! from quoted-printable or base64.
//!
//! A stored file is the message as Python's `email` package parsed and
//! wrote it again: the sender's header lines as sent (folding and encoded
//! words included), LF line ends where the sender sent CRLF, and three
//! headers added after the sender's: `X-Peer`, `X-MailFrom` and
//! `X-RcptTo` (the envelope's sender and recipients).

use std::io::Read;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;

/// The repository (the test crate's manifest is `host/Cargo.toml`).
const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
/// How long aiosmtpd may take to listen.
const START_TIMEOUT: Duration = Duration::from_secs(15);
/// How often [`SmtpSink::start`] tries to connect meanwhile.
const START_POLL: Duration = Duration::from_millis(50);
/// How often [`SmtpSink::wait_for`] reads the maildir again.
const WAIT_POLL: Duration = Duration::from_millis(100);

/// A running aiosmtpd, killed on drop (its maildir removed with it).
pub struct SmtpSink {
    port: u16,
    maildir: PathBuf,
    child: Child,
    /// Holds the maildir's folder; dropped after the process is killed.
    _dir: tempfile::TempDir,
}

/// One message the sink received, decoded.
#[derive(Debug, Clone)]
pub struct Mail {
    /// The stored file, as text (invalid UTF-8 replaced).
    pub raw: String,
    /// The `From` header, encoded words decoded.
    pub from: String,
    /// The `To` header, encoded words decoded (every recipient as written;
    /// the envelope's are in `X-RcptTo`, see [`Mail::header`]).
    pub to: String,
    /// The `Subject` header, encoded words decoded.
    pub subject: String,
    /// The text of the message, or of its first text/plain part when it is
    /// multipart (empty when it has none): its transfer encoding undone,
    /// read as UTF-8, line ends as `\n`.
    pub body: String,
    /// Every header of the message in order: lower-case name, unfolded
    /// value as stored (encoded words left as they are).
    pub headers: Vec<(String, String)>,
}

impl SmtpSink {
    /// Starts aiosmtpd on a free port of 127.0.0.1 and waits until it
    /// greets. Panics when `make smtp-sink` has not installed it.
    pub fn start() -> SmtpSink {
        let python = Path::new(REPO).join("target/smtp-venv/bin/python");
        assert!(
            python.is_file(),
            "{} is missing: run `make smtp-sink` (`make test` does) to install the pinned aiosmtpd",
            python.display()
        );
        let dir = tempfile::tempdir().expect("a temporary folder for the maildir");
        // aiosmtpd creates it, with its new/, cur/ and tmp/.
        let maildir = dir.path().join("maildir");
        // The port is free when picked but not held until aiosmtpd binds
        // it: should another process take it meanwhile, aiosmtpd exits and
        // the next try picks another.
        for _ in 0..5 {
            let port = free_port();
            let mut child = Command::new(&python)
                .args(["-m", "aiosmtpd", "-n", "-l"])
                .arg(format!("127.0.0.1:{port}"))
                .args(["-c", "aiosmtpd.handlers.Mailbox"])
                .arg(&maildir)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .spawn()
                .unwrap_or_else(|e| panic!("start {}: {e}", python.display()));
            if listening(&mut child, port) {
                return SmtpSink {
                    port,
                    maildir,
                    child,
                    _dir: dir,
                };
            }
        }
        panic!("aiosmtpd could not listen on any of 5 free ports of 127.0.0.1");
    }

    /// `smtp://127.0.0.1:<port>`: plain SMTP, no TLS, no authentication.
    pub fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    /// Every message received so far, in arrival order.
    pub fn messages(&self) -> Vec<Mail> {
        let mut files = Vec::new();
        for folder in ["new", "cur"] {
            let Ok(entries) = std::fs::read_dir(self.maildir.join(folder)) else {
                continue;
            };
            files.extend(entries.flatten().map(|entry| entry.path()));
        }
        files.sort_by_cached_key(|path| arrival(path));
        files
            .iter()
            .filter_map(|path| std::fs::read(path).ok())
            .map(|bytes| Mail::parse(&String::from_utf8_lossy(&bytes)))
            .collect()
    }

    /// The messages once there are at least `n`, or whatever there is
    /// after `timeout`.
    pub async fn wait_for(&self, n: usize, timeout: Duration) -> Vec<Mail> {
        let deadline = Instant::now() + timeout;
        loop {
            let mail = self.messages();
            if mail.len() >= n || Instant::now() >= deadline {
                return mail;
            }
            tokio::time::sleep(WAIT_POLL).await;
        }
    }
}

impl Drop for SmtpSink {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port of 127.0.0.1 that nothing listens on now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port of 127.0.0.1")
        .port()
}

/// Waits until aiosmtpd greets on `port` (its `220` line, which tells it
/// from any other server that took the port), up to [`START_TIMEOUT`].
/// False when it exited first (the port was taken); panics when it neither
/// greets nor exits in time.
fn listening(child: &mut Child, port: u16) -> bool {
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        if greets(port) {
            return true;
        }
        if let Some(status) = child.try_wait().expect("poll aiosmtpd") {
            eprintln!("aiosmtpd for port {port} exited ({status}); trying another port");
            return false;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("aiosmtpd did not listen on 127.0.0.1:{port} within {START_TIMEOUT:?}");
        }
        std::thread::sleep(START_POLL);
    }
}

/// Whether an SMTP server on `port` sends its greeting.
fn greets(port: u16) -> bool {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_secs(1)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let mut code = [0u8; 3];
    stream.read_exact(&mut code).is_ok() && code == *b"220"
}

/// Where a file of the maildir comes in arrival order. Python's `mailbox`
/// names each `<seconds>.M<microseconds>P<pid>Q<count>.<host>`, `count`
/// going up by one per message of the process (the sink's one aiosmtpd);
/// the name breaks ties.
fn arrival(path: &Path) -> (u64, String) {
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let count = name
        .split('.')
        .nth(1)
        .and_then(|unique| unique.rsplit_once('Q'))
        .and_then(|(_, count)| count.parse().ok())
        .unwrap_or(u64::MAX);
    (count, name)
}

impl Mail {
    /// Decodes one stored message (see [`Mail`]'s fields).
    pub fn parse(raw: &str) -> Mail {
        let (head, body) = split_head(raw);
        let headers = unfold(head);
        let text = |name: &str| {
            header_in(&headers, name)
                .map(decode_words)
                .unwrap_or_default()
        };
        Mail {
            raw: raw.to_string(),
            from: text("from"),
            to: text("to"),
            subject: text("subject"),
            body: plain_text(&headers, body).unwrap_or_default(),
            headers,
        }
    }

    /// The unfolded value of the first header named `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        header_in(&self.headers, name)
    }
}

/// The head and the body of a message or part: the body starts after the
/// first empty line (the head is everything when there is none).
fn split_head(text: &str) -> (&str, &str) {
    let mut start = 0;
    while start < text.len() {
        let end = text[start..]
            .find('\n')
            .map_or(text.len(), |i| start + i + 1);
        if text[start..end].trim_end_matches(['\r', '\n']).is_empty() {
            return (&text[..start], &text[end..]);
        }
        start = end;
    }
    (text, "")
}

/// The header fields of a head, unfolded (RFC 5322: a line starting with
/// a space or a tab continues the previous field; only its line break is
/// removed): lower-case name, value without surrounding whitespace.
fn unfold(head: &str) -> Vec<(String, String)> {
    let mut headers: Vec<(String, String)> = Vec::new();
    for line in head.lines() {
        if line.starts_with([' ', '\t']) {
            if let Some((_, value)) = headers.last_mut() {
                value.push_str(line);
            }
        } else if let Some((name, value)) = line.split_once(':') {
            headers.push((
                name.trim().to_ascii_lowercase(),
                value.trim_start().to_string(),
            ));
        }
    }
    for (_, value) in &mut headers {
        let len = value.trim_end().len();
        value.truncate(len);
    }
    headers
}

/// The value of the first field named `name` (any case).
fn header_in<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, value)| value.as_str())
}

/// The value of the parameter `name` of a structured header such as
/// `multipart/alternative; boundary="b1"`, quotes removed.
fn param(value: &str, name: &str) -> Option<String> {
    value.split(';').skip(1).find_map(|p| {
        let (key, v) = p.split_once('=')?;
        key.trim()
            .eq_ignore_ascii_case(name)
            .then(|| v.trim().trim_matches('"').to_string())
    })
}

/// The decoded text of the first text/plain entity, depth first: the
/// entity itself when it is text/plain (the default without a
/// Content-Type), else the first of its parts that has one when it is
/// multipart; None when there is none.
fn plain_text(headers: &[(String, String)], body: &str) -> Option<String> {
    let content_type = header_in(headers, "content-type").unwrap_or("text/plain");
    let media = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if media.starts_with("multipart/") {
        let boundary = param(content_type, "boundary")?;
        return parts(body, &boundary).into_iter().find_map(|part| {
            let (head, body) = split_head(part);
            plain_text(&unfold(head), body)
        });
    }
    (media == "text/plain").then(|| decode_body(headers, body))
}

/// The parts of a multipart body (RFC 2046): what lies between the lines
/// `--<boundary>`, up to `--<boundary>--`, without the line break before
/// each delimiter (which belongs to it).
fn parts<'a>(body: &'a str, boundary: &str) -> Vec<&'a str> {
    let delimiter = format!("--{boundary}");
    let mut parts = Vec::new();
    // Where the current part's text starts, once the first delimiter is seen.
    let mut part_start: Option<usize> = None;
    let mut start = 0;
    while start < body.len() {
        let end = body[start..]
            .find('\n')
            .map_or(body.len(), |i| start + i + 1);
        let line = body[start..end].trim_end();
        let closing = line.strip_suffix("--") == Some(delimiter.as_str());
        if line == delimiter || closing {
            if let Some(from) = part_start {
                parts.push(without_line_break(&body[from..start]));
            }
            if closing {
                return parts;
            }
            part_start = Some(end);
        }
        start = end;
    }
    // No closing delimiter: the last part runs to the end.
    if let Some(from) = part_start {
        parts.push(&body[from..]);
    }
    parts
}

/// `text` without one final `\n` or `\r\n`.
fn without_line_break(text: &str) -> &str {
    let text = text.strip_suffix('\n').unwrap_or(text);
    text.strip_suffix('\r').unwrap_or(text)
}

/// An entity's body with its Content-Transfer-Encoding undone
/// (quoted-printable, base64; anything else as it is), read as UTF-8, line
/// ends as `\n`. A base64 body that does not decode is kept as it is.
fn decode_body(headers: &[(String, String)], body: &str) -> String {
    let encoding = header_in(headers, "content-transfer-encoding")
        .unwrap_or("7bit")
        .trim()
        .to_ascii_lowercase();
    let bytes = match encoding.as_str() {
        "quoted-printable" => quoted_printable(body),
        "base64" => {
            let compact: String = body.split_ascii_whitespace().collect();
            STANDARD
                .decode(compact)
                .unwrap_or_else(|_| body.as_bytes().to_vec())
        }
        _ => body.as_bytes().to_vec(),
    };
    String::from_utf8_lossy(&bytes).replace("\r\n", "\n")
}

/// A quoted-printable body decoded (RFC 2045): whitespace at the end of a
/// line dropped, a line ending in `=` joined to the next (a soft line
/// break, `=\r\n` or `=\n`), `=XX` escapes replaced by their byte.
fn quoted_printable(body: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len());
    let mut lines = body.split('\n').peekable();
    while let Some(line) = lines.next() {
        let line = line.trim_end_matches(['\r', ' ', '\t']);
        if let Some(joined) = line.strip_suffix('=') {
            out.extend(unescape(joined, false));
        } else {
            out.extend(unescape(line, false));
            if lines.peek().is_some() {
                out.push(b'\n');
            }
        }
    }
    out
}

/// The bytes of `text` with each `=XX` (two hex digits) replaced by the
/// byte it names, and `_` by a space when `underscore_is_space` (RFC
/// 2047's Q encoding); a `=` without two hex digits after it stays.
fn unescape(text: &str, underscore_is_space: bool) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'=' => {
                if let Some(byte) = bytes.get(i + 1..i + 3).and_then(hex_byte) {
                    out.push(byte);
                    i += 3;
                    continue;
                }
                out.push(b'=');
            }
            b'_' if underscore_is_space => out.push(b' '),
            other => out.push(other),
        }
        i += 1;
    }
    out
}

/// The byte two hex digits name (either case).
fn hex_byte(pair: &[u8]) -> Option<u8> {
    let digit = |c: u8| char::from(c).to_digit(16);
    let value = digit(pair[0])? * 16 + digit(pair[1])?;
    u8::try_from(value).ok()
}

/// A header value with its RFC 2047 encoded words
/// (`=?charset?B|Q?text?=`) decoded. Whitespace between two encoded words
/// is dropped, and adjacent words of one charset are decoded together (an
/// encoder may split a character between them).
fn decode_words(value: &str) -> String {
    let mut out = String::new();
    // The bytes of the encoded words met since the last plain text, and
    // their charset.
    let mut run: Option<(&str, Vec<u8>)> = None;
    let mut rest = value;
    while let Some(at) = rest.find("=?") {
        let (before, candidate) = rest.split_at(at);
        let Some((charset, bytes, after)) = encoded_word(candidate) else {
            // Not an encoded word: plain text.
            flush(&mut out, run.take());
            out.push_str(before);
            out.push_str("=?");
            rest = &candidate[2..];
            continue;
        };
        let between_words = run.is_some() && before.trim().is_empty();
        let same_charset = matches!(&run, Some((c, _)) if c.eq_ignore_ascii_case(charset));
        if between_words && same_charset {
            if let Some((_, run_bytes)) = run.as_mut() {
                run_bytes.extend_from_slice(&bytes);
            }
        } else {
            flush(&mut out, run.take());
            if !between_words {
                out.push_str(before);
            }
            run = Some((charset, bytes));
        }
        rest = after;
    }
    flush(&mut out, run.take());
    out.push_str(rest);
    out
}

/// The encoded word at the start of `s`: its charset, its bytes and what
/// follows it; None when `s` does not start with one.
fn encoded_word(s: &str) -> Option<(&str, Vec<u8>, &str)> {
    let (charset, rest) = s.strip_prefix("=?")?.split_once('?')?;
    let (encoding, rest) = rest.split_once('?')?;
    let (text, after) = rest.split_once("?=")?;
    if charset.is_empty()
        || charset.contains(char::is_whitespace)
        || text.contains(|c: char| c.is_whitespace() || c == '?')
    {
        return None;
    }
    let bytes = match encoding {
        "B" | "b" => STANDARD.decode(text).ok()?,
        "Q" | "q" => unescape(text, true),
        _ => return None,
    };
    Some((charset, bytes, after))
}

/// Appends the text of a run of encoded words: ISO-8859-1 byte by byte,
/// anything else (UTF-8, US-ASCII) as UTF-8.
fn flush(out: &mut String, run: Option<(&str, Vec<u8>)>) {
    let Some((charset, bytes)) = run else {
        return;
    };
    // RFC 2231 lets a language follow the charset: `utf-8*en`.
    let charset = charset.split('*').next().unwrap_or(charset);
    if charset.eq_ignore_ascii_case("iso-8859-1") || charset.eq_ignore_ascii_case("latin1") {
        out.extend(bytes.iter().map(|&b| char::from(b)));
    } else {
        out.push_str(&String::from_utf8_lossy(&bytes));
    }
}
