//! HTTP-017 in a real browser: headless Chromium (Debian's `chromium`,
//! which `.ci/run` installs) opens a page served by this test from an
//! origin the owner named — `app.test`, mapped to loopback with
//! Chromium's `--host-resolver-rules` — whose script calls `initialize`
//! and `tools/list` on the server with `fetch`, the bearer token on. Pages
//! of another origin, and of a loopback origin the owner did not name, are
//! refused by the browser itself. Each page posts what it saw back to this
//! test's page server.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::common;

use common::http::*;
use serde_json::Value;

struct Kill(Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The page's script: a session opened and its tools listed, with the
/// token; what it saw (or the error `fetch` threw) posted to `/report`.
fn page(mcp: &str) -> String {
    format!(
        r#"<!doctype html><html><body><script>
const MCP = "{mcp}";
async function run() {{
  const out = {{}};
  try {{
    const h = {{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "Authorization": "Bearer {TOKEN}"}};
    let r = await fetch(MCP, {{method: "POST", headers: h, body: JSON.stringify({{jsonrpc: "2.0", id: 1,
      method: "initialize", params: {{protocolVersion: "2025-11-25", capabilities: {{}},
      clientInfo: {{name: "browser", version: "0"}}}}}})}});
    out.initStatus = r.status;
    const sid = r.headers.get("mcp-session-id");
    out.sessionExposed = sid !== null;
    out.init = await r.text();
    h["Mcp-Session-Id"] = sid;
    h["MCP-Protocol-Version"] = "2025-11-25";
    r = await fetch(MCP, {{method: "POST", headers: h,
      body: JSON.stringify({{jsonrpc: "2.0", method: "notifications/initialized"}})}});
    out.initializedStatus = r.status;
    r = await fetch(MCP, {{method: "POST", headers: h,
      body: JSON.stringify({{jsonrpc: "2.0", id: 2, method: "tools/list"}})}});
    out.toolsStatus = r.status;
    out.tools = await r.text();
  }} catch (e) {{
    out.error = String(e);
  }}
  await fetch("/report", {{method: "POST", body: JSON.stringify(out)}});
}}
run();
</script></body></html>"#
    )
}

fn serve_one(stream: TcpStream, html: &str, tx: &mpsc::Sender<String>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let mut r = BufReader::new(stream);
    let mut first = String::new();
    if r.read_line(&mut first).is_err() {
        return;
    }
    let mut length = 0;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).is_err() || line == "\r\n" || line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            length = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    let _ = r.read_exact(&mut body);
    let (status, kind, answer) = if first.starts_with("GET / ") {
        ("200 OK", "text/html", html.to_owned())
    } else if first.starts_with("POST /report ") {
        let _ = tx.send(String::from_utf8_lossy(&body).into_owned());
        ("200 OK", "text/plain", String::new())
    } else {
        ("404 Not Found", "text/plain", String::new())
    };
    let _ = r.get_mut().write_all(
        format!(
            "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
            answer.len()
        )
        .as_bytes(),
    );
}

/// Headless Chromium on `url`, names of the test resolved to loopback.
fn chromium(url: &str, profile: &std::path::Path) -> Kill {
    let bin = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .find(|p| std::path::Path::new(p).is_file())
        .expect("chromium is not installed: apt-get install chromium (.ci/run does)");
    let child = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--host-resolver-rules=MAP app.test 127.0.0.1, MAP evil.test 127.0.0.1",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    Kill(child)
}

/// What the page at `url` reported, within a generous wait.
fn report(url: &str, rx: &mpsc::Receiver<String>) -> Value {
    let profile = tempfile::tempdir().expect("a profile dir");
    let _browser = chromium(url, profile.path());
    let text = rx
        .recv_timeout(Duration::from_secs(90))
        .unwrap_or_else(|_| panic!("the page at {url} reported nothing"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn a_page_of_a_named_origin_calls_the_server_and_others_are_refused() {
    // The page server first: the origin the owner names includes its port.
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    let page_port = listener.local_addr().expect("address").port();
    drop(listener);
    let origin = format!("http://app.test:{page_port}");
    let s = start(
        "127.0.0.1:0",
        &["--http-allow-origin", &origin],
        &[("SKILL_MCP_HTTP_TOKEN", TOKEN)],
    );
    let mcp = format!("http://127.0.0.1:{}/mcp", s.port);
    let (port, rx) = page_server_on(page_port, page(&mcp));
    assert_eq!(port, page_port);

    let named = report(&format!("http://app.test:{port}/"), &rx);
    assert!(named.get("error").is_none(), "{named}");
    assert_eq!(named["initStatus"], 200, "{named}");
    assert_eq!(named["sessionExposed"], true, "{named}");
    assert!(
        named["init"]
            .as_str()
            .is_some_and(|t| t.contains("skill-mcp")),
        "{named}"
    );
    assert_eq!(named["initializedStatus"], 202, "{named}");
    assert_eq!(named["toolsStatus"], 200, "{named}");
    assert!(
        named["tools"]
            .as_str()
            .is_some_and(|t| t.contains("skill_list")),
        "{named}"
    );

    // Another site, and a loopback origin the owner did not name: the
    // browser refuses to hand the page any answer.
    for other in [
        format!("http://evil.test:{port}/"),
        format!("http://localhost:{port}/"),
    ] {
        let seen = report(&other, &rx);
        assert!(
            seen["error"].as_str().is_some_and(|e| e.contains("fetch")),
            "{other}: {seen}"
        );
        assert!(seen.get("initStatus").is_none(), "{other}: {seen}");
    }
}

/// Serves `html` at `/` on `port` (the one the origin names) and passes
/// each body posted to `/report` on.
fn page_server_on(port: u16, html: String) -> (u16, mpsc::Receiver<String>) {
    let listener = TcpListener::bind(("127.0.0.1", port)).expect("bind the page server");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming().map_while(Result::ok) {
            let html = html.clone();
            let tx = tx.clone();
            std::thread::spawn(move || serve_one(stream, &html, &tx));
        }
    });
    (port, rx)
}
