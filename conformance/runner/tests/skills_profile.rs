//! The skills profile computes every digest and size it expects from the
//! fixture's own bytes (SUITE-011): a server that hands out one wrong
//! digest fails the manifest case, and one that serves other bytes than
//! its manifest describes fails the read case — each while the other
//! case, whose view is still right, passes. `--known-failures` then
//! holds the run to exactly the listed cases.
//!
//! The server here is this test binary itself (`harness = false`): with
//! `SEP_FAKE_SERVER` set — by the adapter, as any implementation gets its
//! settings — it serves `SKILLS_DIR` as a small SEP-2640 server over stdio,
//! honestly or with one fault.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine as _;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

const TEST: &str = "honest_passes_and_each_fault_fails_only_its_case";

/// The server when the adapter says so; else the one test, answering the
/// part of libtest's command line that `cargo test` and `cargo nextest`
/// use (`--list`, `--ignored`, a name filter).
fn main() {
    if let Ok(fault) = std::env::var("SEP_FAKE_SERVER") {
        return serve(&fault);
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let ignored = args.iter().any(|a| a == "--ignored");
    if args.iter().any(|a| a == "--list") {
        if !ignored {
            println!("{TEST}: test");
        }
        return;
    }
    let filter = args.iter().find(|a| !a.starts_with('-'));
    if ignored || filter.is_some_and(|f| !TEST.contains(f.as_str())) {
        return;
    }
    honest_passes_and_each_fault_fails_only_its_case();
    println!("test {TEST} ... ok");
}

// ---- the fake server -------------------------------------------------

/// `dir`'s files below it, `/`-separated, sorted.
fn files(dir: &Path, rel: &str, out: &mut Vec<String>) {
    let mut ents: Vec<_> = std::fs::read_dir(dir.join(rel))
        .map(|rd| rd.flatten().collect())
        .unwrap_or_default();
    ents.sort_by_key(|e| e.file_name());
    for e in ents {
        let name = e.file_name().to_string_lossy().into_owned();
        let r = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        match e.file_type() {
            Ok(t) if t.is_dir() => files(dir, &r, out),
            Ok(t) if t.is_file() => out.push(r),
            _ => {}
        }
    }
}

struct Catalog {
    /// uri → bytes of every file of every skill.
    bytes: BTreeMap<String, Vec<u8>>,
    skills: Vec<Value>,
}

fn catalog(root: &Path, fault: &str) -> Catalog {
    let mut bytes = BTreeMap::new();
    let mut skills = Vec::new();
    let mut dirs: Vec<_> = std::fs::read_dir(root)
        .map(|rd| rd.flatten().collect())
        .unwrap_or_default();
    dirs.sort_by_key(|e| e.file_name());
    for d in dirs {
        let name = d.file_name().to_string_lossy().into_owned();
        if !d.path().join("SKILL.md").is_file() {
            continue;
        }
        let mut fs = Vec::new();
        files(&d.path(), "", &mut fs);
        let mut resources = Vec::new();
        for f in fs {
            let b = std::fs::read(d.path().join(&f)).unwrap_or_default();
            let uri = format!("skill://{name}/{f}");
            let mut digest = format!("sha256:{}", hex::encode(Sha256::digest(&b)));
            if fault == "digest" && f == "references/guide.md" {
                // One hex digit off: what a stale or careless manifest says.
                let last = if digest.ends_with('0') { "1" } else { "0" };
                digest.pop();
                digest.push_str(last);
            }
            resources.push(json!({"uri": uri, "digest": digest, "size": b.len()}));
            bytes.insert(uri, b);
        }
        skills.push(json!({
            "uri": format!("skill://{name}/SKILL.md"),
            "frontmatter": {"name": name, "description": "served by the fake"},
            "resources": resources,
        }));
    }
    Catalog { bytes, skills }
}

fn serve(fault: &str) {
    let root = PathBuf::from(std::env::var("SKILLS_DIR").unwrap_or_default());
    let cat = catalog(&root, fault);
    if let Ok(port) = std::env::var("SEP_FAKE_HTTP") {
        return serve_http(&cat, fault, &port);
    }
    let stdin = std::io::stdin();
    let mut out = std::io::stdout();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { return };
        let Ok(msg) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if let Some(reply) = answer(&cat, fault, &msg) {
            let _ = writeln!(out, "{reply}");
            let _ = out.flush();
        }
    }
}

/// The reply to one message (none to a notification).
fn answer(cat: &Catalog, fault: &str, msg: &Value) -> Option<Value> {
    let id = msg.get("id").cloned()?;
    let stateless = msg["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"].is_string();
    let frame = |mut v: Value| {
        if stateless {
            v["resultType"] = json!("complete");
            v["ttlMs"] = json!(0);
            v["cacheScope"] = json!("private");
        }
        v
    };
    let caps = json!({"extensions": {"io.modelcontextprotocol/skills": {}}, "resources": {}});
    let uri = msg["params"]["uri"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let reply = match msg["method"].as_str().unwrap_or_default() {
        "initialize" => Ok(
            json!({"protocolVersion": "2025-11-25", "capabilities": caps,
                                  "serverInfo": {"name": "fake-sep-server", "version": "0"}}),
        ),
        "server/discover" => Ok(frame(
            json!({"supportedVersions": ["2026-07-28"], "capabilities": caps,
                                             "serverInfo": {"name": "fake-sep-server", "version": "0"}}),
        )),
        "skills/list" if msg["params"]["cursor"].is_string() => Err(-32602),
        "skills/list" => Ok(frame(json!({"skills": cat.skills}))),
        "skills/get" => match cat.skills.iter().find(|s| s["uri"] == uri) {
            Some(s) => Ok(frame(json!({"skill": s}))),
            None => Err(-32602),
        },
        "resources/read" => match cat.bytes.get(&uri) {
            Some(b) => {
                let mut b = b.clone();
                if fault == "bytes" && uri.ends_with("references/guide.md") {
                    b.push(b'!');
                }
                let blob = base64::engine::general_purpose::STANDARD.encode(&b);
                Ok(frame(json!({"contents": [{"uri": uri, "blob": blob}]})))
            }
            None => Err(-32602),
        },
        _ => Err(-32601),
    };
    Some(match reply {
        Ok(r) => json!({"jsonrpc": "2.0", "id": id, "result": r}),
        Err(code) => {
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": "no"}})
        }
    })
}

/// The same server over Streamable HTTP, strict about what the runner
/// must send: a session's `Mcp-Session-Id` and `MCP-Protocol-Version`;
/// a 2026-07-28 request's `MCP-Protocol-Version`, `Mcp-Method` and, for
/// `resources/read`, `Mcp-Name` (SEP-2243, base64 when it must be). It
/// listens on `port` (a free one when empty) and says where on stderr;
/// answers alternate between a JSON body and a chunked SSE stream with a
/// notification before the reply.
fn serve_http(cat: &Catalog, fault: &str, port: &str) {
    use std::io::Read;
    let port = if port.is_empty() { "0" } else { port };
    let Ok(listener) = std::net::TcpListener::bind(format!("127.0.0.1:{port}")) else {
        eprintln!("fake: cannot listen on {port}");
        return;
    };
    let Ok(addr) = listener.local_addr() else {
        return;
    };
    eprintln!("fake-sep-server: listening on http://{addr}/mcp");
    const SESSION: &str = "fake-session-7";
    for conn in listener.incoming() {
        let Ok(mut c) = conn else { continue };
        let mut raw = Vec::new();
        let mut buf = [0u8; 8192];
        let head_end = loop {
            if let Some(i) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
                break Some(i);
            }
            match c.read(&mut buf) {
                Ok(0) | Err(_) => break None,
                Ok(n) => raw.extend_from_slice(&buf[..n]),
            }
        };
        let Some(head_end) = head_end else { continue };
        let head = String::from_utf8_lossy(&raw[..head_end]).into_owned();
        let mut lines = head.split("\r\n");
        let request_line = lines.next().unwrap_or_default().to_string();
        let headers: BTreeMap<String, String> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        let len: usize = headers
            .get("content-length")
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        let mut body = raw[head_end + 4..].to_vec();
        while body.len() < len {
            match c.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => body.extend_from_slice(&buf[..n]),
            }
        }
        let send = |c: &mut std::net::TcpStream, status: &str, extra: &str, body: &[u8]| {
            let _ = write!(
                c,
                "HTTP/1.1 {status}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = c.write_all(body);
        };
        if request_line.starts_with("DELETE ") {
            send(&mut c, "200 OK", "", b"");
            continue;
        }
        if !request_line.starts_with("POST /mcp ") {
            send(&mut c, "404 Not Found", "", b"");
            continue;
        }
        let Ok(msg) = serde_json::from_slice::<Value>(&body) else {
            send(&mut c, "400 Bad Request", "", b"not JSON");
            continue;
        };
        let method = msg["method"].as_str().unwrap_or_default().to_string();
        let h = |n: &str| headers.get(n).cloned().unwrap_or_default();
        let unwrap64 = |v: String| match v
            .strip_prefix("=?base64?")
            .and_then(|v| v.strip_suffix("?="))
        {
            Some(b) => base64::engine::general_purpose::STANDARD
                .decode(b)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .unwrap_or_default(),
            None => v,
        };
        let stateless =
            msg["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"].is_string();
        let refused = if method == "initialize" {
            None
        } else if stateless {
            if h("mcp-protocol-version") != "2026-07-28" {
                Some("MCP-Protocol-Version is not 2026-07-28")
            } else if h("mcp-method") != method {
                Some("Mcp-Method is not the body's method")
            } else if method == "resources/read"
                && unwrap64(h("mcp-name")) != msg["params"]["uri"].as_str().unwrap_or_default()
            {
                Some("Mcp-Name is not the body's uri")
            } else {
                None
            }
        } else if h("mcp-session-id") != SESSION {
            Some("no Mcp-Session-Id of this session")
        } else if h("mcp-protocol-version") != "2025-11-25" {
            Some("MCP-Protocol-Version is not the session's")
        } else {
            None
        };
        if let Some(why) = refused {
            let e = json!({"jsonrpc": "2.0", "id": msg.get("id"), "error": {"code": -32600, "message": why}});
            send(
                &mut c,
                "400 Bad Request",
                "Content-Type: application/json\r\n",
                e.to_string().as_bytes(),
            );
            continue;
        }
        let Some(reply) = answer(cat, fault, &msg) else {
            send(&mut c, "202 Accepted", "", b"");
            continue;
        };
        let session = if method == "initialize" {
            format!("Mcp-Session-Id: {SESSION}\r\n")
        } else {
            String::new()
        };
        if msg["id"].as_u64().unwrap_or(0) % 2 == 0 {
            send(
                &mut c,
                "200 OK",
                &format!("{session}Content-Type: application/json\r\n"),
                reply.to_string().as_bytes(),
            );
        } else {
            let events = format!(
                "event: message\r\ndata: {}\r\n\r\nevent: message\r\ndata: {}\r\n\r\n",
                json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}),
                reply
            );
            let (a, b) = events.as_bytes().split_at(events.len() / 2);
            let _ = write!(
                c,
                "HTTP/1.1 200 OK\r\n{session}Content-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n{:x}\r\n",
                a.len()
            );
            let _ = c.write_all(a);
            let _ = write!(c, "\r\n{:x}\r\n", b.len());
            let _ = c.write_all(b);
            let _ = c.write_all(b"\r\n0\r\n\r\n");
        }
    }
}

// ---- the test ---------------------------------------------------------

/// One run of the runner against this binary with `fault`: its exit code
/// and its JSON report.
fn run(fault: &str, known: Option<&str>) -> (i32, Value) {
    run_over(fault, known, None)
}

/// The same, over Streamable HTTP to `url` when given.
fn run_over(fault: &str, known: Option<&str>, url: Option<&str>) -> (i32, Value) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let adapter = dir.path().join("adapter.json");
    std::fs::write(
        &adapter,
        json!({"name": "fake", "env": {"SKILLS_DIR": "${SKILLS}", "SEP_FAKE_SERVER": fault},
               "http": {"env": {"SEP_FAKE_HTTP": "${PORT}"}}})
        .to_string(),
    )
    .expect("the adapter is written");
    let me = std::env::current_exe().expect("this test's path");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_skill-mcp-conformance"));
    cmd.args([
        "--profile",
        "skills",
        "--format",
        "json",
        "--only",
        "SKL-020,SKL-022",
    ])
    .arg("--adapter")
    .arg(&adapter)
    .arg("--server")
    .arg(me.to_string_lossy().as_ref());
    if let Some(u) = url {
        cmd.arg("--url").arg(u);
    }
    if let Some(k) = known {
        let f = dir.path().join("known.md");
        std::fs::write(
            &f,
            format!("| case | sentence | observed |\n| --- | --- | --- |\n| {k} | x | y |\n"),
        )
        .expect("the list is written");
        cmd.arg("--known-failures").arg(&f);
    }
    let out = cmd.output().expect("the runner runs");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "the report is not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), report)
}

fn status(report: &Value, id: &str) -> String {
    report["cases"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["id"] == id))
        .and_then(|c| c["status"].as_str())
        .unwrap_or("missing")
        .to_string()
}

fn honest_passes_and_each_fault_fails_only_its_case() {
    let (code, r) = run("none", None);
    assert_eq!(
        (status(&r, "SKL-020"), status(&r, "SKL-022")),
        ("pass".into(), "pass".into()),
        "{r:#}"
    );
    assert_eq!(code, 0);
    let notes = r["notes"].to_string();
    assert!(
        notes.contains("2025-11-25 initialize session: judged"),
        "{notes}"
    );
    assert!(
        notes.contains("per-request _meta (stateless): judged"),
        "{notes}"
    );

    // A digest one hex digit off: the manifest case fails, naming the
    // digest the runner computed from the fixture's bytes.
    let (code, r) = run("digest", None);
    assert_eq!(
        (status(&r, "SKL-020"), status(&r, "SKL-022")),
        ("fail".into(), "pass".into()),
        "{r:#}"
    );
    assert_eq!(code, 1);
    let failure = r["cases"][0]["results"][0]["failures"][0].to_string();
    assert!(
        failure.contains("references/guide.md") && failure.contains("digest"),
        "{failure}"
    );
    assert_eq!(r["cases"][0]["sentences"][0], "SEP2640-RES-01", "{r:#}");

    // Bytes served unlike the manifest: the read case fails, the
    // manifest case (right about the file on disk) passes.
    let (_, r) = run("bytes", None);
    assert_eq!(
        (status(&r, "SKL-020"), status(&r, "SKL-022")),
        ("pass".into(), "fail".into()),
        "{r:#}"
    );

    // A run passes exactly when the failures are the listed ones.
    let (code, r) = run("digest", Some("SKL-020"));
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["known_failures"]["holds"], true);
    let (code, _) = run("none", Some("SKL-020"));
    assert_eq!(code, 1, "a listed case that passes fails the run");

    // Over Streamable HTTP (`--url`), both ways of finding the server:
    // the URL it writes on stderr, and a port the runner picks. The fake
    // refuses a request without the session's or 2026-07-28's headers,
    // and answers in JSON and in chunked SSE by turns.
    for url in ["stderr", "http://127.0.0.1:${PORT}/mcp"] {
        let (code, r) = run_over("none", None, Some(url));
        assert_eq!(
            (status(&r, "SKL-020"), status(&r, "SKL-022")),
            ("pass".into(), "pass".into()),
            "{url}: {r:#}"
        );
        assert_eq!(code, 0, "{url}");
        let notes = r["notes"].to_string();
        assert!(notes.contains("Streamable HTTP"), "{notes}");
        assert!(
            notes.contains("2025-11-25 initialize session: judged")
                && notes.contains("per-request _meta (stateless): judged"),
            "{notes}"
        );
    }
    let (code, r) = run_over("bytes", None, Some("stderr"));
    assert_eq!(
        (status(&r, "SKL-020"), status(&r, "SKL-022")),
        ("pass".into(), "fail".into()),
        "{r:#}"
    );
    assert_eq!(code, 1);
}
