//! `subscriptions/listen` (protocol 2026-07-28, SEP-2575; spec HTTP-012),
//! from outside: a stateless client opens a listen with one POST and reads
//! its answer, an SSE stream, as it comes; the server is reloaded with
//! SIGHUP. Every wait is for an event, bounded at 20 s.

use std::collections::HashSet;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::Raw;
use crate::common::http::{Server, initialize, parse, post, rpc, skills, spawn, start, unchunk};

/// What a 2026-07-28 request carries instead of a session.
fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

const WAIT: Duration = Duration::from_secs(20);

/// One open `subscriptions/listen`: its connection, kept open (no
/// `Connection: close`, as a real client's), and what it has read.
struct Listen {
    stream: TcpStream,
    read: Vec<u8>,
}

impl Listen {
    /// POSTs `subscriptions/listen` under `id` asking for `filter`, and reads
    /// the answer's head: a 200 SSE stream with no session.
    fn open(port: u16, id: Value, filter: Value) -> Listen {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
            "params": {"_meta": meta(), "notifications": filter}})
        .to_string();
        let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        write!(
            stream,
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
             Mcp-Method: subscriptions/listen\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .expect("send the listen");
        let mut listen = Listen {
            stream,
            read: Vec::new(),
        };
        listen.read_until("the answer's head", |l| {
            l.read.windows(4).any(|w| w == b"\r\n\r\n")
        });
        let head = parse(&listen.read);
        assert_eq!(head.status, 200, "{head:?}");
        assert!(
            head.header("content-type")
                .is_some_and(|t| t.starts_with("text/event-stream")),
            "{head:?}"
        );
        assert!(head.header("mcp-session-id").is_none(), "{head:?}");
        listen
    }

    /// Every JSON-RPC message the stream has carried so far.
    fn messages(&self) -> Vec<Value> {
        let text = String::from_utf8_lossy(&self.read);
        let Some((_, body)) = text.split_once("\r\n\r\n") else {
            return Vec::new();
        };
        unchunk(body)
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str(d.trim()).ok())
            .collect()
    }

    /// The methods of the notifications so far, in order.
    fn methods(&self) -> Vec<String> {
        self.messages()
            .iter()
            .filter_map(|m| m["method"].as_str().map(str::to_owned))
            .collect()
    }

    /// Reads until `done` holds, for at most [`WAIT`].
    fn read_until(&mut self, what: &str, done: impl Fn(&Listen) -> bool) {
        let deadline = Instant::now() + WAIT;
        let mut buf = [0u8; 4096];
        while !done(self) {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "no {what} within {WAIT:?}: {:?}",
                self.methods()
            );
            self.stream
                .set_read_timeout(Some(left))
                .expect("a read timeout");
            match self.stream.read(&mut buf) {
                Ok(0) => panic!(
                    "the listen stream closed before {what}: {:?}",
                    self.methods()
                ),
                Ok(n) => self.read.extend_from_slice(&buf[..n]),
                Err(e) => panic!("no {what}: {e}: {:?}", self.methods()),
            }
        }
    }

    /// Reads until `count` notifications named `method` have come.
    fn wait_for(&mut self, method: &str, count: usize) {
        self.read_until(&format!("{count} × {method}"), |l| {
            l.methods().iter().filter(|m| *m == method).count() >= count
        });
    }

    /// The acknowledgement, once it has come: the first message.
    fn acknowledged(&mut self) -> Value {
        self.read_until("acknowledgement", |l| !l.messages().is_empty());
        let first = self.messages().remove(0);
        assert_eq!(
            first["method"], "notifications/subscriptions/acknowledged",
            "{first}"
        );
        first
    }
}

/// The subscription id a notification is tagged with.
fn tag(message: &Value) -> &Value {
    &message["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"]
}

fn hup(pid: u32) {
    let status = Command::new("kill")
        .args(["-HUP", &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
}

fn add_skill(s: &Server, name: &str) {
    let skill = s._dir.path().join(name);
    std::fs::create_dir(&skill).expect("mkdir");
    std::fs::write(
        skill.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: Added after boot.\n---\nbody\n"),
    )
    .expect("SKILL.md");
}

/// HTTP-012: the acknowledgement comes first, names the listen by its
/// request's id, and says what the server honours of what was asked:
/// prompts and resources, never tools (fixed) or resource URIs (no
/// `resources/updated`).
#[test]
fn a_listen_is_acknowledged_with_its_id_and_the_filter_it_gets() {
    let s = start("127.0.0.1:0", &[], &[]);
    let mut all = Listen::open(
        s.port,
        json!("listen-1"),
        json!({"toolsListChanged": true, "promptsListChanged": true,
               "resourcesListChanged": true, "resourceSubscriptions": ["skill://demo/SKILL.md"]}),
    );
    let ack = all.acknowledged();
    assert_eq!(tag(&ack), "listen-1", "{ack}");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"promptsListChanged": true, "resourcesListChanged": true}),
        "{ack}"
    );

    // A numeric id is the subscription id as a number.
    let mut prompts = Listen::open(s.port, json!(7), json!({"promptsListChanged": true}));
    let ack = prompts.acknowledged();
    assert_eq!(tag(&ack), 7, "{ack}");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"promptsListChanged": true}),
        "{ack}"
    );

    // Nothing this server can send: acknowledged, with nothing accepted.
    let mut tools = Listen::open(s.port, json!("t"), json!({"toolsListChanged": true}));
    let ack = tools.acknowledged();
    assert_eq!(ack["params"]["notifications"], json!({}), "{ack}");

    // A 2025-11-25 session has no such method: its GET stream hears of
    // changes (HTTP-010).
    let session = initialize(s.port, &[]);
    let a = post(
        s.port,
        &rpc(
            9,
            "subscriptions/listen",
            json!({"notifications": {"promptsListChanged": true}}),
        ),
        &[("Mcp-Session-Id", &session)],
    );
    assert_eq!(a.json()["error"]["code"], -32601, "{a:?}");
}

/// HTTP-012: a reload reaches every open listen with the `list_changed`
/// notifications a session gets (RELOAD-005), each tagged with its own
/// listen's id, and a later request sees the new catalog.
#[test]
fn a_reload_reaches_each_listen_tagged_with_its_id() {
    let s = start("127.0.0.1:0", &[], &[]);
    let both = json!({"promptsListChanged": true, "resourcesListChanged": true});
    let mut a = Listen::open(s.port, json!("a"), both.clone());
    let mut b = Listen::open(s.port, json!(2), both);
    a.acknowledged();
    b.acknowledged();

    add_skill(&s, "added");
    hup(s.child.id());
    for (listen, id) in [(&mut a, json!("a")), (&mut b, json!(2))] {
        listen.wait_for("notifications/resources/list_changed", 1);
        let said: Vec<Value> = listen.messages();
        let methods: Vec<&str> = said.iter().filter_map(|m| m["method"].as_str()).collect();
        assert_eq!(
            methods,
            [
                "notifications/subscriptions/acknowledged",
                "notifications/prompts/list_changed",
                "notifications/resources/list_changed"
            ],
            "{said:?}"
        );
        for m in &said {
            assert_eq!(tag(m), &id, "{m}");
        }
    }

    let list = post(
        s.port,
        &rpc(
            3,
            "tools/call",
            json!({"name": "skill_list", "arguments": {}, "_meta": meta()}),
        ),
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "skill_list"),
        ],
    )
    .json();
    assert!(list.to_string().contains("\"added\""), "{list}");
}

/// HTTP-012: a change `--watch` sees reaches a listen as a SIGHUP's does.
#[test]
fn a_watched_change_reaches_a_listen() {
    let s = start("127.0.0.1:0", &["--watch"], &[]);
    let mut listen = Listen::open(s.port, json!("w"), json!({"promptsListChanged": true}));
    listen.acknowledged();
    add_skill(&s, "watched");
    listen.wait_for("notifications/prompts/list_changed", 1);
    assert!(
        listen.messages().iter().all(|m| tag(m) == "w"),
        "{:?}",
        listen.messages()
    );
}

/// HTTP-012: a listen hears only what its filter names. Three reloads
/// change both lists, then only the prompts (a description edited to the
/// same length), then only the resources (a file added); each listen's
/// stream is ordered, so a notification its filter excludes would show
/// between the ones it waits for.
#[test]
fn a_listen_hears_only_what_its_filter_names() {
    let s = start("127.0.0.1:0", &[], &[]);
    let mut resources = Listen::open(s.port, json!("r"), json!({"resourcesListChanged": true}));
    let mut prompts = Listen::open(s.port, json!("p"), json!({"promptsListChanged": true}));
    resources.acknowledged();
    prompts.acknowledged();

    add_skill(&s, "added");
    hup(s.child.id());
    resources.wait_for("notifications/resources/list_changed", 1);
    prompts.wait_for("notifications/prompts/list_changed", 1);

    let md = s._dir.path().join("demo/SKILL.md");
    let text = std::fs::read_to_string(&md).expect("SKILL.md");
    let edited = text.replace("for the HTTP tests.", "for the HTTP jests.");
    assert_eq!(edited.len(), text.len());
    assert_ne!(edited, text);
    std::fs::write(&md, edited).expect("edit SKILL.md");
    hup(s.child.id());
    prompts.wait_for("notifications/prompts/list_changed", 2);

    std::fs::write(s._dir.path().join("demo/more.md"), "more\n").expect("a new file");
    hup(s.child.id());
    resources.wait_for("notifications/resources/list_changed", 2);

    // The second reload's prompts change would sit between the resources
    // listen's two; the first reload's resources change between the
    // prompts listen's two.
    assert!(
        !resources
            .methods()
            .contains(&"notifications/prompts/list_changed".to_owned()),
        "{:?}",
        resources.methods()
    );
    assert!(
        !prompts
            .methods()
            .contains(&"notifications/resources/list_changed".to_owned()),
        "{:?}",
        prompts.methods()
    );
}

/// HTTP-012: a client that closes its connection ends its listen, and
/// the listen holds nothing after: more listens come and go than the
/// server holds streams at once (HTTP-008's 1,024), each one's end is
/// logged, and the server still acknowledges a listen and answers a
/// request.
#[test]
fn closing_a_listen_ends_it_and_frees_what_it_held() {
    const LISTENS: usize = 1_024 + 100;
    let dir = skills();
    let (child, lines) = spawn(
        dir.path(),
        &["--http", "127.0.0.1:0"],
        &[("SKILL_MCP_LOG", "warn,skill_mcp::server::listen=debug")],
    );
    let port = loop {
        let line = lines
            .recv_timeout(WAIT)
            .expect("the server says where it listens");
        if let Some(at) = line.split("listening on http://127.0.0.1:").nth(1) {
            break at
                .split('/')
                .next()
                .and_then(|p| p.parse::<u16>().ok())
                .expect("a port");
        }
    };
    let s = Server {
        child,
        port,
        _dir: dir,
    };

    // Each listen is dropped once the server has logged it open (its
    // handler running past the acknowledgement), so every one of them is
    // a listen whose end must follow.
    let mut log = Log {
        lines,
        opened: HashSet::new(),
        ended: HashSet::new(),
    };
    for i in 0..LISTENS {
        let mut listen = Listen::open(s.port, json!(i), json!({"promptsListChanged": true}));
        listen.acknowledged();
        log.until(|l| l.opened.contains(&i.to_string()));
        // Dropped: its connection closes.
    }
    log.until(|l| l.ended.len() == LISTENS);
    assert_eq!(log.ended, log.opened);

    let mut last = Listen::open(s.port, json!("last"), json!({"promptsListChanged": true}));
    assert_eq!(tag(&last.acknowledged()), "last");
    let a = post(
        s.port,
        &rpc(1, "tools/list", json!({"_meta": meta()})),
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/list"),
        ],
    );
    assert_eq!(a.status, 200, "{a:?}");
}

/// The listens the server's debug log says opened and ended, by id.
struct Log {
    lines: std::sync::mpsc::Receiver<String>,
    opened: HashSet<String>,
    ended: HashSet<String>,
}

impl Log {
    /// Reads the log until `done` holds, for at most [`WAIT`].
    fn until(&mut self, done: impl Fn(&Log) -> bool) {
        let deadline = Instant::now() + WAIT;
        while !done(self) {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.lines.recv_timeout(left).unwrap_or_else(|e| {
                panic!(
                    "{e} within {WAIT:?}: {} listens opened, {} ended",
                    self.opened.len(),
                    self.ended.len()
                )
            });
            let id = |word: &str| {
                line.split(word)
                    .nth(1)
                    .and_then(|rest| rest.split_whitespace().next())
                    .map(str::to_owned)
            };
            if let Some(i) = id("a subscriptions/listen opened id=") {
                self.opened.insert(i);
            } else if let Some(i) = id("a subscriptions/listen ended id=") {
                self.ended.insert(i);
            }
        }
    }
}

/// HTTP-012 over stdio: rmcp serves a listen in the 2026-07-28 lifecycle
/// there too. Its notifications name it by the id its client wrote (`1.0`
/// stays `1.0`, WIRE-006); the connection gets no untagged list
/// notification; a cancelled listen hears no more; and when input ends
/// an open listen gets its final result before the server exits.
#[test]
fn a_listen_over_stdio_is_named_by_the_id_its_client_wrote() {
    let dir = skills();
    let mut raw = Raw::start(dir.path());
    let listen = |id: &str, filter: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"subscriptions/listen","params":{{"_meta":{},"notifications":{filter}}}}}"#,
            meta()
        )
    };
    raw.send(&listen(
        "1.0",
        r#"{"promptsListChanged":true,"resourcesListChanged":true}"#,
    ));
    let ack = raw.next_line();
    assert!(
        ack.contains(r#""method":"notifications/subscriptions/acknowledged""#)
            && ack.contains(r#""io.modelcontextprotocol/subscriptionId":1.0}"#),
        "{ack}"
    );
    raw.send(&listen(r#""gone""#, r#"{"resourcesListChanged":true}"#));
    let ack = raw.next_line();
    assert!(
        ack.contains(r#""io.modelcontextprotocol/subscriptionId":"gone""#),
        "{ack}"
    );
    raw.send(
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"gone"}}"#,
    );

    let skill = dir.path().join("added");
    std::fs::create_dir(&skill).expect("mkdir");
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: added\ndescription: Added after boot.\n---\nbody\n",
    )
    .expect("SKILL.md");
    hup(raw.process.pid());
    // Wait for the swap's last notification, then end the input: every line
    // written until the server exits is read, so anything it should not
    // have sent would be among them.
    let mut heard = Vec::new();
    while !heard
        .iter()
        .any(|l: &String| l.contains("notifications/resources/list_changed"))
    {
        heard.push(raw.next_line());
    }
    raw.process.close_stdin();
    while let Some(line) = raw.line_within(WAIT) {
        heard.push(line);
    }
    let deadline = Instant::now() + WAIT;
    while raw.process.try_wait().expect("wait").is_none() {
        assert!(
            Instant::now() < deadline,
            "still running after its input ended"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let parsed: Vec<Value> = heard
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let methods: Vec<&str> = parsed
        .iter()
        .map(|m| m["method"].as_str().unwrap_or("(answer)"))
        .collect();
    assert_eq!(
        methods,
        [
            "notifications/prompts/list_changed",
            "notifications/resources/list_changed",
            "(answer)"
        ],
        "{heard:?}"
    );
    for l in &heard[..2] {
        assert!(
            l.contains(r#""io.modelcontextprotocol/subscriptionId":1.0}"#),
            "{l}"
        );
    }
    // The final result the revision defines, under the id as written.
    assert!(
        heard[2].starts_with(r#"{"jsonrpc":"2.0","id":1.0,"result":"#)
            && heard[2].contains(r#""io.modelcontextprotocol/subscriptionId":1.0"#),
        "{}",
        heard[2]
    );
}
