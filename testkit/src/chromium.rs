//! A page opened in headless Chromium, watched through the DevTools
//! protocol: what its console said, what it asked the network for.
//!
//! ```text
//!  chromium --headless --remote-debugging-port=0 ... about:blank
//!     │ stderr: "DevTools listening on ws://127.0.0.1:PORT/devtools/browser/..."
//!     ├── GET /json/list ──▶ the blank page's webSocketDebuggerUrl
//!     └── WebSocket ──▶ Page/Runtime/Log/Network.enable, Page.navigate(url)
//!           events until the load event and a quiet moment:
//!             Runtime.consoleAPICalled (error), Runtime.exceptionThrown,
//!             Log.entryAdded (error: "Failed to load resource", ...) ─▶ console_errors
//!             Network.requestWillBeSent ─▶ requests (any URL but the page's own)
//! ```
//!
//! The browser's own background traffic (update checks) is not the page's
//! and does not show in its Network domain. The WebSocket is tungstenite's
//! (handshake, framing, pings); the one HTTP request before it, for the
//! page's socket URL, is written here.
//!
//! [`chromium`] finds the binary (or skips, see [`crate::ci`]).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tungstenite::protocol::WebSocketConfig;
use tungstenite::{Error as WsError, Message};

use crate::cli::TempDir;

/// The flags every run gets: headless, no sandbox (tests run as root in
/// CI), no GPU, none of the browser's own network chatter, and no name
/// lookups or proxies: every host name fails at once as not found.
///
/// Without the last two, a page's `http://example.invalid/` image is looked
/// up with the machine's resolver (seen with strace: queries to its
/// nameserver), and on a closed network whose resolver never answers the
/// page's load event waits for that lookup: the project's CI waited out the
/// 300 s deadline. The request still shows in the Network domain.
pub const FLAGS: &[&str] = &[
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--no-proxy-server",
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
];

/// The Chromium binary (`chromium` or `chromium-browser` on PATH, or
/// `$CHROMIUM`), or `None` after [`crate::ci::skip`].
pub fn chromium() -> Option<PathBuf> {
    let candidates = std::env::var("CHROMIUM")
        .ok()
        .into_iter()
        .chain(["chromium".to_string(), "chromium-browser".to_string()]);
    for c in candidates {
        let ok = Command::new(&c)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            return Some(PathBuf::from(c));
        }
    }
    crate::ci::skip("chromium is not installed (apt-get install chromium)")
}

/// What a page did while it loaded.
#[derive(Debug, Default)]
pub struct PageLoad {
    /// Console errors, uncaught exceptions and error log entries, as text.
    pub console_errors: Vec<String>,
    /// Every URL the page asked for besides itself.
    pub requests: Vec<String>,
    /// `document.title` once loaded.
    pub title: String,
    /// `document.body.innerText` once loaded.
    pub text: String,
}

/// Opens `page` (a local file) in headless Chromium and reports its
/// console errors and network requests.
pub fn load(chromium: &Path, page: &Path) -> PageLoad {
    let profile = TempDir::new(&format!(
        "chromium-{}",
        page.file_name().unwrap_or_default().to_string_lossy()
    ));
    let mut child = Browser(
        Command::new(chromium)
            .args(FLAGS)
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("--remote-debugging-port=0")
            .arg("about:blank")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", chromium.display())),
    );
    let port = devtools_port(&mut child.0);
    let ws_url = page_socket(port);
    let mut ws = WebSocket::connect(&ws_url);
    let mut id = 0u64;
    let mut send = |ws: &mut WebSocket, method: &str, params: Value| {
        id += 1;
        ws.send(&json!({"id": id, "method": method, "params": params}).to_string());
        id
    };
    for domain in ["Page", "Runtime", "Log", "Network"] {
        send(&mut ws, &format!("{domain}.enable"), json!({}));
    }
    let url = format!(
        "file://{}",
        std::fs::canonicalize(page)
            .unwrap_or_else(|e| panic!("{}: {e}", page.display()))
            .display()
    );
    send(&mut ws, "Page.navigate", json!({ "url": url }));
    let mut out = PageLoad::default();
    let mut loaded: Option<Instant> = None;
    let mut asked: Option<u64> = None;
    // Generous: a loaded CI machine (two cores, builds beside) takes a
    // minute for a page of a few MB; the limit is for a page that hangs.
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        assert!(
            Instant::now() < deadline,
            "{url} did not load within 300 s (load event {}; requests so far {:?}; console errors {:?})",
            if loaded.is_some() {
                "fired"
            } else {
                "not fired"
            },
            out.requests,
            out.console_errors
        );
        // A second of quiet after the load event: late requests show too.
        if asked.is_none() && loaded.is_some_and(|t| t.elapsed() > Duration::from_secs(1)) {
            asked = Some(send(
                &mut ws,
                "Runtime.evaluate",
                json!({"expression": "JSON.stringify([document.title, document.body.innerText])", "returnByValue": true}),
            ));
        }
        let Some(msg) = ws.recv(Duration::from_millis(200)) else {
            continue;
        };
        let v: Value = serde_json::from_str(&msg).unwrap_or_default();
        if asked.is_some() && v["id"].as_u64() == asked {
            let s = v["result"]["result"]["value"].as_str().unwrap_or("[]");
            let pair: Vec<String> = serde_json::from_str(s).unwrap_or_default();
            out.title = pair.first().cloned().unwrap_or_default();
            out.text = pair.get(1).cloned().unwrap_or_default();
            break;
        }
        let p = &v["params"];
        match v["method"].as_str().unwrap_or("") {
            "Page.loadEventFired" => loaded = Some(Instant::now()),
            "Runtime.consoleAPICalled" if p["type"] == "error" || p["type"] == "assert" => out
                .console_errors
                .push(format!("console.{}: {}", p["type"], p["args"])),
            "Runtime.exceptionThrown" => out
                .console_errors
                .push(format!("exception: {}", p["exceptionDetails"])),
            "Log.entryAdded" => {
                let e = &p["entry"];
                // A request that fails early (no such file, no such host)
                // shows only here, with its URL.
                if let Some(u) = e["url"].as_str().filter(|_| e["source"] == "network") {
                    if u != url && !out.requests.iter().any(|r| r == u) {
                        out.requests.push(u.to_string());
                    }
                }
                if e["level"] == "error" {
                    out.console_errors
                        .push(format!("{}: {} {}", e["source"], e["text"], e["url"]));
                }
            }
            "Network.requestWillBeSent" => {
                let u = p["request"]["url"].as_str().unwrap_or("").to_string();
                if u != url && !out.requests.contains(&u) {
                    out.requests.push(u);
                }
            }
            _ => {}
        }
    }
    out
}

/// A screenshot of `page` at `width` x `height` CSS pixels into `png`.
pub fn screenshot(chromium: &Path, page: &Path, (width, height): (u32, u32), png: &Path) {
    let profile = TempDir::new("chromium-shot");
    let o = Command::new(chromium)
        .args(FLAGS)
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--window-size={width},{height}"))
        .arg("--hide-scrollbars")
        .arg(format!("--screenshot={}", png.display()))
        .arg(page)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", chromium.display()));
    assert!(
        o.status.success() && png.is_file(),
        "chromium --screenshot failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Kills the browser (a process this module started) when dropped.
struct Browser(Child);

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn devtools_port(child: &mut Child) -> u16 {
    let stderr = child.stderr.take().expect("stderr is piped");
    let (tx, rx) = std::sync::mpsc::channel();
    // Reads stderr to its end, so the browser never blocks on a full pipe.
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if let Some(rest) = line.split("DevTools listening on ws://127.0.0.1:").nth(1) {
                let port: String = rest.chars().take_while(char::is_ascii_digit).collect();
                let _ = tx.send(port.parse::<u16>().ok());
            }
        }
    });
    rx.recv_timeout(Duration::from_secs(120))
        .ok()
        .flatten()
        .expect("chromium did not say where DevTools listens")
}

/// The WebSocket URL of the browser's first page.
fn page_socket(port: u16) -> String {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Some(list) = http_get(port, "/json/list") {
            let list: Value = serde_json::from_str(&list).unwrap_or_default();
            let page = list
                .as_array()
                .into_iter()
                .flatten()
                .find(|t| t["type"] == "page")
                .and_then(|t| t["webSocketDebuggerUrl"].as_str());
            if let Some(u) = page {
                return u.to_string();
            }
        }
        assert!(Instant::now() < deadline, "no page target on port {port}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The body of `GET path` on the DevTools port (by its Content-Length: the
/// browser keeps the connection open).
fn http_get(port: u16, path: &str) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    s.write_all(format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n").as_bytes())
        .ok()?;
    let mut r = BufReader::new(s);
    let mut len = 0usize;
    loop {
        let mut line = String::new();
        r.read_line(&mut line).ok()?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                len = v.trim().parse().ok()?;
            }
        }
    }
    let mut body = vec![0u8; len];
    r.read_exact(&mut body).ok()?;
    String::from_utf8(body).ok()
}

/// The DevTools connection: a WebSocket client (tungstenite) over a plain
/// TCP stream, text messages only.
struct WebSocket(tungstenite::WebSocket<TcpStream>);

impl WebSocket {
    fn connect(url: &str) -> WebSocket {
        let rest = url.strip_prefix("ws://").expect("a ws:// URL");
        let host = rest.split_once('/').map_or(rest, |(h, _)| h);
        let s = TcpStream::connect(host).unwrap_or_else(|e| panic!("{host}: {e}"));
        // A handshake the browser never answers fails instead of hanging.
        s.set_read_timeout(Some(Duration::from_secs(30)))
            .expect("read timeout");
        // No size limits: a page's text comes back in one message.
        let config = WebSocketConfig::default()
            .max_message_size(None)
            .max_frame_size(None);
        let (ws, _) = tungstenite::client::client_with_config(url, s, Some(config))
            .unwrap_or_else(|e| panic!("no WebSocket upgrade at {url}: {e}"));
        WebSocket(ws)
    }

    fn send(&mut self, text: &str) {
        self.0
            .send(Message::text(text))
            .unwrap_or_else(|e| panic!("DevTools connection: {e}"));
    }

    /// The next whole text message, or `None` when none came within `wait`.
    /// Pings are answered by tungstenite itself.
    fn recv(&mut self, wait: Duration) -> Option<String> {
        self.0
            .get_ref()
            .set_read_timeout(Some(wait))
            .expect("read timeout");
        loop {
            match self.0.read() {
                Ok(Message::Text(t)) => return Some(t.as_str().to_string()),
                Ok(Message::Binary(b)) => return Some(String::from_utf8_lossy(&b).into_owned()),
                Ok(Message::Close(_)) | Err(WsError::ConnectionClosed | WsError::AlreadyClosed) => {
                    panic!("the browser closed the DevTools connection")
                }
                Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_)) => {}
                Err(WsError::Io(e))
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    return None;
                }
                Err(e) => panic!("DevTools connection: {e}"),
            }
        }
    }
}
