//! Issue 40 §9: real clients over Streamable HTTP, open to close. The
//! official MCP Python SDK (PyPI `mcp`, in `.venv`) and TypeScript SDK
//! (`@modelcontextprotocol/client`, in `.npm-tools`) — both installed by
//! `.ci/test clients` — drive the built `skill-mcp --http 127.0.0.1:0
//! --http-allow-run` as a host would: a 2025-11-25 session declaring
//! `elicitation`, the tool list, skill_list and skill_file, an approved
//! skill_run (HTTP-009, RUN-028) whose real output is checked, and the SDK's
//! own close, whose DELETE the server answers 204 (HTTP-008). Each client
//! keeps every warning and error it reports (tests/clients/python_http.py,
//! tests/clients/ts_sdk_http.mjs); there must be none, the server must have
//! logged nothing at warn (rmcp's warnings included), and the session must
//! be gone: a later request naming it is 404.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use crate::common;
use crate::real_client::{client_script, python};

use common::http::*;
use serde_json::{Value, json};

/// The served tree: one skill, `demo`, with `notes.md`, `scripts/hello.js`
/// (prints its arguments) and `scripts/slow.js` (takes 20 s), both declared.
fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temp dir");
    let skill = dir.path().join("demo");
    std::fs::create_dir_all(skill.join("scripts")).expect("mkdir");
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: demo\ndescription: A demo skill for the HTTP client tests.\nmcp-host:\n  version: 1\n  run:\n    \
         - script: scripts/hello.js\n      interpreter: node\n    \
         - script: scripts/slow.js\n      interpreter: node\n---\nRead notes.md.\n",
    )
    .expect("SKILL.md");
    std::fs::write(skill.join("notes.md"), "the notes\n").expect("notes");
    std::fs::write(
        skill.join("scripts/hello.js"),
        "process.stdout.write('hello ' + JSON.stringify(process.argv.slice(2)) + '\\n');\n",
    )
    .expect("hello.js");
    std::fs::write(
        skill.join("scripts/slow.js"),
        "setTimeout(() => console.log('done'), 20000);\n",
    )
    .expect("slow.js");
    dir
}

/// `skill-mcp --http 127.0.0.1:0 --http-allow-run` serving [`fixture`],
/// logging at warn for every target (rmcp's own warnings too, which the
/// default filter leaves out), and what it writes on stderr after the line
/// saying where it listens.
fn serve() -> (Server, Receiver<String>) {
    let dir = fixture();
    let (child, lines) = spawn(
        dir.path(),
        &["--http", "127.0.0.1:0", "--http-allow-run"],
        &[("SKILL_MCP_LOG", "warn")],
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    let port = loop {
        let line = lines
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .expect("the server says where it listens");
        if let Some(at) = line.split("listening on http://127.0.0.1:").nth(1) {
            break at
                .split('/')
                .next()
                .and_then(|p| p.parse().ok())
                .expect("a port");
        }
    };
    (
        Server {
            child,
            port,
            _dir: dir,
        },
        lines,
    )
}

fn url(s: &Server) -> String {
    format!("http://127.0.0.1:{}/mcp", s.port)
}

/// Runs a client script to its end and reads the one JSON line it prints.
fn report(mut cmd: Command, who: &str) -> Value {
    let out = cmd.output().unwrap_or_else(|e| panic!("{who} runs: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{who} failed: {stdout}\n{stderr}");
    let line = stdout
        .lines()
        .rfind(|l| l.starts_with('{'))
        .unwrap_or_else(|| panic!("{who} printed no report: {stdout}\n{stderr}"));
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"))
}

/// The Python SDK's script, driving `s` through `flow`.
fn python_client(s: &Server, flow: &str) -> Value {
    let mut cmd = Command::new(python());
    cmd.arg(client_script("python_http.py"))
        .arg(url(s))
        .arg(flow);
    report(cmd, "the Python SDK")
}

fn npm_tools() -> PathBuf {
    let tools = Path::new(env!("CARGO_MANIFEST_DIR")).join(".npm-tools");
    assert!(
        tools
            .join("node_modules/@modelcontextprotocol/client")
            .is_dir(),
        "no TypeScript SDK in .npm-tools: run `.ci/test clients`, which installs it"
    );
    tools
}

/// The TypeScript SDK's script, driving `s` through `flow`.
fn typescript_client(s: &Server, flow: &str) -> Value {
    let mut cmd = Command::new("node");
    cmd.arg(client_script("ts_sdk_http.mjs"))
        .arg(npm_tools())
        .arg(url(s))
        .arg(flow);
    report(cmd, "the TypeScript SDK")
}

/// What a host sees, open to close: the session, the tools, both reads,
/// one approval asked and the approved run's real output, a DELETE the
/// server answered 204 as the last request, and not one warning or error
/// on the client's side. Returns the session id.
fn judge(who: &str, v: &Value) -> String {
    assert_eq!(v["protocolVersion"], "2025-11-25", "{who}: {v}");
    assert_eq!(v["serverName"], "skill-mcp", "{who}: {v}");
    assert_eq!(
        v["tools"],
        json!(["skill_file", "skill_list", "skill_load", "skill_run"]),
        "{who}: HTTP-009: --http-allow-run offers skill_run: {v}"
    );

    let list = &v["skillList"];
    assert_eq!(list["isError"], false, "{who}: {list}");
    let demo = &list["structured"]["skills"][0];
    assert_eq!(demo["name"], "demo", "{who}: {list}");
    assert_eq!(demo["executable"], true, "{who}: {list}");
    assert_eq!(
        demo["scripts"][0]["script"], "scripts/hello.js",
        "{who}: {list}"
    );
    assert_eq!(demo["unavailableScripts"], json!([]), "{who}: {list}");

    let file = &v["skillFile"];
    assert_eq!(file["isError"], false, "{who}: {file}");
    assert_eq!(
        file["structured"]["files"][0]["path"], "notes.md",
        "{who}: {file}"
    );
    assert_eq!(
        file["structured"]["files"][0]["content"], "the notes\n",
        "{who}: {file}"
    );

    // RUN-028: the approved run asked once, in a form, naming what runs.
    let asked = v["elicitations"].as_array().expect("elicitations");
    let last = asked
        .last()
        .unwrap_or_else(|| panic!("{who} was never asked: {v}"));
    assert_eq!(last["mode"], "form", "{who}: {last}");
    let message = last["message"].as_str().unwrap_or_default();
    for part in ["demo", "scripts/hello.js", "a b", "ünï"] {
        assert!(message.contains(part), "{who}: no {part:?} in {message:?}");
    }

    let run = &v["run"];
    assert_eq!(run["isError"], false, "{who}: {run}");
    let out = &run["structured"];
    assert_eq!(out["dryRun"], false, "{who}: {run}");
    assert_eq!(out["exitCode"], 0, "{who}: {run}");
    assert_eq!(out["signal"], Value::Null, "{who}: {run}");
    assert_eq!(out["timedOut"], false, "{who}: {run}");
    assert_eq!(out["stdout"], "hello [\"a b\",\"ünï\"]\n", "{who}: {run}");
    assert_eq!(out["stderr"], "", "{who}: {run}");

    // HTTP-008: the SDK's close sent one DELETE, and the server answered
    // it 204, which both SDKs take as closed.
    assert_eq!(v["closed"], true, "{who}: {v}");
    let http = v["http"].as_array().expect("requests");
    let deletes: Vec<&Value> = http.iter().filter(|r| r[0] == "DELETE").collect();
    assert_eq!(deletes.len(), 1, "{who}: {http:?}");
    assert_eq!(deletes[0][1], 204, "{who}: {http:?}");

    assert_eq!(
        v["records"],
        json!([]),
        "{who} reported warnings or errors: {}",
        v["records"]
    );
    v["session"]
        .as_str()
        .unwrap_or_else(|| panic!("{who}: no session id: {v}"))
        .to_owned()
}

/// The DELETE was the client's last request: nothing of the session
/// outlived its close.
fn delete_was_last(who: &str, v: &Value) {
    let http = v["http"].as_array().expect("requests");
    let last = http.last().expect("a request");
    assert_eq!(last[0], "DELETE", "{who}: {http:?}");
}

/// The server closed `session` on the DELETE: a request naming it is 404
/// (HTTP-002), and so is a second DELETE (HTTP-008).
fn gone(s: &Server, session: &str) {
    let h = [("Mcp-Session-Id", session)];
    let later = post(s.port, &rpc(90, "tools/list", json!({})), &h);
    assert_eq!(later.status, 404, "{later:?}");
    let again = raw(
        s.port,
        format!(
            "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nMcp-Session-Id: {session}\r\n\
             Connection: close\r\n\r\n",
            s.port
        )
        .as_bytes(),
    );
    assert_eq!(again.status, 404, "{again:?}");
}

/// The server logged nothing at warn or above (the line saying where it
/// listens is the only one it writes whatever the level). Its lines come
/// through a pipe; a request answered after the client's last one (the
/// 404s of [`gone`]) has let any of them arrive.
fn said_nothing(lines: &Receiver<String>) {
    let said: Vec<String> = lines.try_iter().collect();
    assert!(said.is_empty(), "the server logged: {said:#?}");
}

#[test]
fn the_python_sdk_runs_an_approved_script_and_closes_cleanly() {
    let (s, lines) = serve();
    let v = python_client(&s, "run");
    let session = judge("the Python SDK", &v);
    delete_was_last("the Python SDK", &v);
    gone(&s, &session);
    said_nothing(&lines);
}

#[test]
fn the_typescript_sdk_runs_an_approved_script_and_closes_cleanly() {
    let (s, lines) = serve();
    let v = typescript_client(&s, "run");
    let session = judge("the TypeScript SDK", &v);
    delete_was_last("the TypeScript SDK", &v);
    gone(&s, &session);
    said_nothing(&lines);
}

/// Found by these clients (issue 40 §9), fixed in the door (HTTP-008).
/// The Python SDK
/// cancels a call of a 2025-11-25 session by POSTing
/// `notifications/cancelled` and goes on reading the call's stream; the
/// server ends that stream with no answer (as rmcp's own session manager
/// does). The stream was primed with an event id and a retry of 3 s
/// (SEP-1699), so the SDK resumes it: a GET with `Last-Event-ID: 2/N`.
/// The server keeps no events and answers that with an empty stream that
/// ends at once (rmcp's answer to a refused resume, with a WARN "Resume
/// failed"), which the SDK takes as another disconnection and resumes
/// again, its count of attempts reset: a GET every 3 s for as long as the
/// session lives, and a session that is never idle. Answering such a GET
/// with 405 (the Streamable HTTP answer to a GET that opens no stream)
/// ends it: the SDK tries twice, then gives the call up quietly (and the
/// TypeScript SDK, which resumes such a stream once, stops at once).
#[test]
fn the_python_sdk_stops_resuming_a_call_it_cancelled() {
    let (s, lines) = serve();
    let v = python_client(&s, "cancel");
    assert_eq!(v["cancelled"], true, "{v}");
    let resumed: Vec<&Value> = v["http"]
        .as_array()
        .expect("requests")
        .iter()
        .filter(|r| r[0] == "GET" && !r[2].is_null() && r[2] != "0")
        .collect();
    assert!(
        resumed.len() <= 2,
        "the SDK kept resuming the cancelled call's stream: {resumed:?}"
    );
    let session = judge("the Python SDK", &v);
    delete_was_last("the Python SDK", &v);
    gone(&s, &session);
    said_nothing(&lines);
}

/// Found by these clients (issue 40 §9), fixed in the door (HTTP-008).
/// The TypeScript SDK's `terminateSession()` sends the DELETE and forgets the
/// session id, but leaves its GET stream to reconnect: the DELETE ended
/// that stream, and 3 s later (the server's retry) the SDK GETs again with
/// no `Mcp-Session-Id`, which the server answers 400 ("Bad Request:
/// Session ID is required"), and each try and each failure is an error
/// event ("Failed to open SSE stream: Bad Request", "Maximum reconnection
/// attempts (2) exceeded."). A host that closes the client at once never
/// sees it; one that closes it later does. Answering a GET without a
/// session with 405 (no stream is offered without one) ends it quietly.
#[test]
fn the_typescript_sdk_closed_after_its_delete_says_nothing() {
    let (s, lines) = serve();
    let v = typescript_client(&s, "late-close");
    let session = judge("the TypeScript SDK", &v);
    gone(&s, &session);
    said_nothing(&lines);
}
