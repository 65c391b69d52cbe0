//! The door phase (issue 40): what the HTTP door costs a client that does
//! nothing wrong, and what clients that do everything wrong cost the
//! server. Each figure is taken against a floor measured in the same run,
//! never an absolute time:
//!
//! - a request in a 2025-11-25 session on one kept connection, against
//!   the same request sent stateless to the same server (median of
//!   sequential requests, one client): at most 2× (issue 40 §1; before
//!   TCP_NODELAY a session request waited out the client's delayed ACK);
//! - peak RSS with 100 and 1,000 clients that never read a ~11 MiB batch
//!   answer, against the answer budget plus the same server's idle
//!   footprint (§4);
//! - how long a fresh client waits behind 200 stalled bodies and behind
//!   2,100 connections that send nothing (§3), beside its unloaded time.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::http::{HttpServer, path_of, start};
use crate::report::{Table, Target};
use crate::settings::Settings;
use crate::stats::{median, mib, ms};

/// The answer budget of the server (`MAX_HTTP_ANSWER_BYTES`), in MiB.
const ANSWER_BUDGET_MIB: f64 = 128.0;

/// A tree of one skill bundling four 1 MiB files: one `skill_file` batch
/// of them answers about 11 MiB.
fn big_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temp dir");
    let big = dir.path().join("big");
    std::fs::create_dir_all(&big).expect("mkdir");
    std::fs::write(
        big.join("SKILL.md"),
        "---\nname: big\ndescription: Four large files.\n---\nRead them.\n",
    )
    .expect("SKILL.md");
    let mut x: u32 = 7;
    for i in 0..4 {
        // Text of varied letters: an answer of real size, not one a
        // compressor or a page-cache trick would shrink.
        let text: String = (0..1024 * 1024)
            .map(|_| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                char::from(b'a' + ((x >> 16) % 26) as u8)
            })
            .collect();
        std::fs::write(big.join(format!("f{i}.txt")), text).expect("a file");
    }
    dir
}

fn meta(params: Value) -> Value {
    let mut p = params;
    p["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    p
}

/// One request on a kept connection, its answer read whole: its status,
/// head and body.
fn exchange(r: &mut BufReader<TcpStream>, req: &str) -> Result<(u16, String, String), String> {
    r.get_mut()
        .write_all(req.as_bytes())
        .map_err(|e| e.to_string())?;
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).map_err(|e| e.to_string())? == 0 {
            return Err("the connection closed".into());
        }
        if line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let field = |name: &str| {
        head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
        })
    };
    let mut body = Vec::new();
    if let Some(n) = field("content-length").and_then(|v| v.parse::<usize>().ok()) {
        body.resize(n, 0);
        r.read_exact(&mut body).map_err(|e| e.to_string())?;
    } else if field("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        loop {
            let mut size = String::new();
            r.read_line(&mut size).map_err(|e| e.to_string())?;
            let n = usize::from_str_radix(size.trim(), 16).map_err(|e| e.to_string())?;
            let mut chunk = vec![0; n + 2];
            r.read_exact(&mut chunk).map_err(|e| e.to_string())?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    }
    Ok((status, head, String::from_utf8_lossy(&body).into_owned()))
}

fn request(host: &str, path: &str, body: &str, headers: &[(&str, String)]) -> String {
    let mut req = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    req
}

/// Median milliseconds of `n` sequential `resources/read` on one kept
/// connection: in a session, then stateless.
fn session_and_stateless(server: &HttpServer, n: usize) -> Result<(f64, f64), String> {
    let path = path_of(&server.url);
    let host = server.host.as_str();
    let c = TcpStream::connect(host).map_err(|e| e.to_string())?;
    c.set_read_timeout(Some(Duration::from_secs(30))).ok();
    let mut r = BufReader::new(c);
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}})
    .to_string();
    let (_, head, _) = exchange(&mut r, &request(host, &path, &init, &[]))?;
    let sid = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("mcp-session-id")
                .then(|| v.trim().to_owned())
        })
        .ok_or("no session id")?;
    let session = [
        ("Mcp-Session-Id", sid),
        ("MCP-Protocol-Version", "2025-11-25".to_owned()),
    ];
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    exchange(&mut r, &request(host, &path, &note, &session))?;
    let uri = "skill://big/SKILL.md";
    let mut timed = |stateless: bool| -> Result<f64, String> {
        let mut samples = Vec::with_capacity(n);
        for id in 0..n {
            let params = json!({"uri": uri});
            let (body, headers) = if stateless {
                let h = vec![
                    ("MCP-Protocol-Version", "2026-07-28".to_owned()),
                    ("Mcp-Method", "resources/read".to_owned()),
                    ("Mcp-Name", uri.to_owned()),
                ];
                (
                    json!({"jsonrpc": "2.0", "id": id + 1, "method": "resources/read", "params": meta(params)}),
                    h,
                )
            } else {
                (
                    json!({"jsonrpc": "2.0", "id": id + 1, "method": "resources/read", "params": params}),
                    session.to_vec(),
                )
            };
            let req = request(host, &path, &body.to_string(), &headers);
            let began = Instant::now();
            let (status, _, reply) = exchange(&mut r, &req)?;
            samples.push(ms(began.elapsed()));
            if status != 200 || !reply.contains("Read them") {
                return Err(format!("a read answered {status}: {reply:.200}"));
            }
        }
        Ok(median(&samples))
    };
    let in_session = timed(false)?;
    let alone = timed(true)?;
    Ok((in_session, alone))
}

fn status_of(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(field))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// Peak RSS (MiB) of a fresh server while `clients` send a batch request
/// each and never read, and its idle RSS before them; with how many were
/// answered (200) and refused (503).
fn slow_readers(root: &Path, clients: usize) -> Result<(f64, f64, usize, usize), String> {
    let server = start(root)?;
    let pid = server.child.id();
    let path = path_of(&server.url);
    let host = server.host.clone();
    let params = json!({"name": "skill_file", "arguments": {"name": "big", "paths": ["f0.txt", "f1.txt", "f2.txt", "f3.txt"]}});
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": meta(params)})
        .to_string();
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28".to_owned()),
        ("Mcp-Method", "tools/call".to_owned()),
        ("Mcp-Name", "skill_file".to_owned()),
        ("Connection", "close".to_owned()),
    ];
    let req = request(&host, &path, &body, &headers);
    // Warm: one read whole, so the files are in the page cache and the
    // idle figure is the server's, not its first read's.
    let mut c = TcpStream::connect(host.as_str()).map_err(|e| e.to_string())?;
    c.write_all(req.as_bytes()).map_err(|e| e.to_string())?;
    let mut all = Vec::new();
    let _ = c.read_to_end(&mut all);
    if !all.starts_with(b"HTTP/1.1 200") || all.len() < 8 << 20 {
        return Err(format!("the batch answered {} bytes", all.len()));
    }
    std::thread::sleep(Duration::from_millis(300));
    let idle = mib(status_of(pid, "VmRSS:"));
    // Each client in a thread: send, read the status line, never read more.
    let (tx, rx) = std::sync::mpsc::channel();
    let mut held = Vec::new();
    for _ in 0..clients {
        let Ok(mut c) = TcpStream::connect(host.as_str()) else {
            continue;
        };
        c.set_read_timeout(Some(Duration::from_secs(20))).ok();
        if c.write_all(req.as_bytes()).is_err() {
            continue;
        }
        let tx = tx.clone();
        let mut probe = c.try_clone().map_err(|e| e.to_string())?;
        std::thread::spawn(move || {
            let mut head = [0u8; 12];
            let ok = probe.read_exact(&mut head).is_ok();
            let _ = tx.send(if !ok {
                0
            } else if head.starts_with(b"HTTP/1.1 200") {
                200
            } else {
                503
            });
        });
        held.push(c);
    }
    drop(tx);
    let (mut answered, mut refused) = (0, 0);
    for status in rx.iter().take(held.len()) {
        match status {
            200 => answered += 1,
            503 => refused += 1,
            _ => {}
        }
    }
    let peak = mib(status_of(pid, "VmHWM:"));
    drop(held);
    drop(server);
    Ok((peak, idle, answered, refused))
}

/// Milliseconds a fresh `initialize` takes on `server`.
fn fresh_client_ms(server: &HttpServer) -> Result<f64, String> {
    let path = path_of(&server.url);
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}})
    .to_string();
    let req = request(
        &server.host,
        &path,
        &init,
        &[("Connection", "close".to_owned())],
    );
    let began = Instant::now();
    let mut c = TcpStream::connect(server.host.as_str()).map_err(|e| e.to_string())?;
    c.set_read_timeout(Some(Duration::from_secs(60))).ok();
    c.write_all(req.as_bytes()).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    let _ = c.read_to_end(&mut out);
    let took = ms(began.elapsed());
    if !out.starts_with(b"HTTP/1.1 200") {
        return Err(format!(
            "a fresh client got {}",
            String::from_utf8_lossy(&out[..out.len().min(60)])
        ));
    }
    Ok(took)
}

fn raise_descriptor_limit() {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    if let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE)
        && soft < 8_192
    {
        let _ = setrlimit(Resource::RLIMIT_NOFILE, 8_192.min(hard), hard);
    }
}

/// The phase.
pub fn door(s: &Settings, t: &mut Table) {
    raise_descriptor_limit();
    let tree = big_tree();
    let size = "1 skill";
    match start(tree.path()) {
        Err(why) => println!("door phase: skipped, {why}"),
        Ok(server) => {
            let n = if s.quick { 100 } else { 500 };
            match session_and_stateless(&server, n) {
                Ok((session, alone)) => t.add(
                    "http: a read in a session ÷ stateless, one kept connection",
                    size,
                    session / alone,
                    format!("medians {session:.3} ms ÷ {alone:.3} ms, {n} reads each"),
                    "×",
                    Target::RatioAtMost(2.0),
                ),
                Err(e) => println!("door phase: session latency: {e}"),
            }
            // A fresh client: unloaded, behind stalled bodies, behind a
            // flood of connections that send nothing.
            let unloaded = fresh_client_ms(&server).unwrap_or(f64::NAN);
            let stalled: Vec<TcpStream> = (0..200)
                .filter_map(|_| {
                    let mut c = TcpStream::connect(server.host.as_str()).ok()?;
                    let head = format!(
                        "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
                         Content-Length: 1000\r\n\r\n{{\"jsonrpc\"",
                        path_of(&server.url),
                        server.host
                    );
                    c.write_all(head.as_bytes()).ok()?;
                    Some(c)
                })
                .collect();
            std::thread::sleep(Duration::from_millis(500));
            match fresh_client_ms(&server) {
                Ok(w) => t.add(
                    "http: a fresh client behind 200 stalled bodies",
                    size,
                    w,
                    format!("unloaded {unloaded:.2} ms"),
                    "ms",
                    Target::None,
                ),
                Err(e) => println!("door phase: behind stalled bodies: {e}"),
            }
            drop(stalled);
            let flood: Vec<TcpStream> = (0..2_100)
                .filter_map(|_| TcpStream::connect(server.host.as_str()).ok())
                .collect();
            std::thread::sleep(Duration::from_millis(500));
            match fresh_client_ms(&server) {
                Ok(w) => t.add(
                    &format!(
                        "http: a fresh client behind {} connections sending nothing",
                        flood.len()
                    ),
                    size,
                    w,
                    format!("unloaded {unloaded:.2} ms"),
                    "ms",
                    Target::None,
                ),
                Err(e) => println!("door phase: behind a connection flood: {e}"),
            }
            drop(flood);
        }
    }
    for clients in [100, 1_000] {
        match slow_readers(tree.path(), clients) {
            Ok((peak, idle, answered, refused)) => t.add(
                &format!("http: peak RSS, {clients} clients never reading an 11 MiB answer"),
                size,
                peak,
                format!("idle {idle:.1} MiB; {answered} answered, {refused} refused (503)"),
                "MiB",
                Target::MibAtMost(ANSWER_BUDGET_MIB + idle),
            ),
            Err(e) => println!("door phase: {clients} slow readers: {e}"),
        }
    }
}
