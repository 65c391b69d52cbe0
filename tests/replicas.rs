//! Replicas (spec LIST-018, issue 29 §4): a cursor handed out by one
//! server process is honoured by another serving the same tree, and
//! refused with the message to list again by one serving anything else —
//! including the same process after a rescan of a changed tree. Each
//! walk takes every next page from the other process, over stdio.

use crate::common;

use std::path::Path;

use common::{BIN, Session};
use serde_json::{Value, json};

/// Enough skills that `prompts/list` and `resources/list` (pages of 500)
/// page too.
const SKILLS: usize = 510;

/// A small answer budget, so `skills/list` and `skill_list` cut their
/// pages by size (a few entries each), not only by count.
const BUDGET: &str = "2000";

/// Writes `n` skills whose descriptions mention "widget" a varying number
/// of times, so a query for it ranks them in an order of its own.
fn tree(root: &Path, n: usize) {
    for i in 0..n {
        let name = format!("s{i:03}");
        let dir = root.join(&name);
        std::fs::create_dir_all(&dir).unwrap();
        let widgets = " widget".repeat(i % 4);
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: Handles widget {i}{widgets} and gadgets.\n---\nalpha body\n"),
        )
        .unwrap();
    }
}

fn start(root: &Path) -> Session {
    let dir = root.to_str().unwrap();
    Session::start(
        Path::new(BIN),
        &[("SKILLS_DIR", dir), ("SKILL_MCP_ANSWER_BUDGET", BUDGET)],
    )
}

/// One page of `method` with `cursor`: the reply's result (panics on an
/// error) or, for `skill_list`, its structuredContent.
fn page(s: &mut Session, method: &str, args: &Value, cursor: Option<&str>) -> Value {
    let mut args = args.clone();
    if let Some(c) = cursor {
        args["cursor"] = json!(c);
    }
    if method == "skill_list" {
        s.tool("skill_list", args)
    } else {
        let r = s.request(method, args);
        assert!(r["error"].is_null(), "{method}: {r}");
        r["result"].clone()
    }
}

/// The names a page of `method` lists, in order.
fn names_of(method: &str, page: &Value) -> Vec<String> {
    let (key, field) = match method {
        "skill_list" => ("skills", "name"),
        "skills/list" => ("skills", "uri"),
        "prompts/list" => ("prompts", "name"),
        _ => ("resources", "uri"),
    };
    page[key]
        .as_array()
        .unwrap_or_else(|| panic!("{method} has no {key}: {page}"))
        .iter()
        .map(|e| {
            let v = e[field].as_str().unwrap();
            // skill://NAME/SKILL.md → NAME.
            v.strip_prefix("skill://")
                .and_then(|r| r.split('/').next())
                .unwrap_or(v)
                .to_owned()
        })
        .collect()
}

/// Walks every page of `method`, the first from `procs[0]` and each next
/// one from the next process in turn, and returns the names in order and
/// how many pages there were.
fn walk(procs: &mut [&mut Session], method: &str, args: &Value) -> (Vec<String>, usize) {
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        assert!(pages < 2_000, "{method} never ended");
        let s = &mut *procs[pages % procs.len()];
        let p = page(s, method, args, cursor.as_deref());
        pages += 1;
        names.extend(names_of(method, &p));
        match p["nextCursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => return (names, pages),
        }
    }
}

fn all_names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("s{i:03}")).collect()
}

/// The text of a refusal: a tool's error text or a JSON-RPC error's
/// message.
fn refusal(s: &mut Session, method: &str, args: &Value, cursor: &str) -> String {
    let mut args = args.clone();
    args["cursor"] = json!(cursor);
    if method == "skill_list" {
        let r = s.request(
            "tools/call",
            json!({"name": "skill_list", "arguments": args}),
        );
        assert_eq!(r["result"]["isError"], true, "{r}");
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned()
    } else {
        let r = s.request(method, args);
        assert_eq!(r["error"]["code"], -32602, "{method}: {r}");
        r["error"]["message"].as_str().unwrap().to_owned()
    }
}

fn assert_list_again(text: &str, method: &str) {
    assert!(
        text.contains("another version of the catalog")
            && text.contains(&format!("{method} again without a cursor"))
            && text.contains("LIST-018"),
        "{method}: {text}"
    );
}

/// The listings a replica walk covers, with their arguments.
fn listings() -> Vec<(&'static str, Value)> {
    vec![
        ("skill_list", json!({"limit": 7})),
        ("skill_list", json!({})),
        ("skill_list", json!({"query": "widget", "limit": 9})),
        ("skills/list", json!({})),
        ("prompts/list", json!({})),
        ("resources/list", json!({})),
    ]
}

#[test]
fn a_cursor_from_one_process_is_honoured_by_another_serving_the_same_tree() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("skills");
    tree(&root, SKILLS);
    let mut a = start(&root);
    let mut b = start(&root);
    for (method, args) in listings() {
        // One process alone is the reference order.
        let (alone, pages) = walk(&mut [&mut a], method, &args);
        assert!(pages > 1, "{method} {args} does not page");
        let (alternating, _) = walk(&mut [&mut a, &mut b], method, &args);
        assert_eq!(
            alternating, alone,
            "{method} {args}: pages taken from two processes differ from one's"
        );
        let (other_first, _) = walk(&mut [&mut b, &mut a], method, &args);
        assert_eq!(other_first, alone, "{method} {args}, starting at the other");
        let mut once = alone.clone();
        once.sort();
        once.dedup();
        assert_eq!(once.len(), alone.len(), "{method} {args}: an entry twice");
        if method != "resources/list" {
            assert_eq!(once, all_names(SKILLS), "{method} {args}: not every skill");
        }
        if args.get("query").is_none() {
            assert_eq!(
                alone,
                all_names(SKILLS),
                "{method} {args}: not in name order"
            );
        } else {
            assert_ne!(
                alone,
                all_names(SKILLS),
                "the query ranks in an order of its own"
            );
        }
        // Both processes hand out the very same first cursor.
        let ca = page(&mut a, method, &args, None)["nextCursor"].clone();
        let cb = page(&mut b, method, &args, None)["nextCursor"].clone();
        assert!(ca.is_string(), "{method}: {ca}");
        assert_eq!(ca, cb, "{method} {args}: the two processes' cursors differ");
    }
    // A cursor edited by hand is still refused, by either process, as one
    // never handed out (READ-011, SKX-008, LIST-008).
    for (method, args) in listings() {
        let c = page(&mut a, method, &args, None)["nextCursor"]
            .as_str()
            .unwrap()
            .to_owned();
        // The offset one past a page start, which is never one: pages
        // hold several entries. skill_list's and the plain lists' offset
        // is last; skills/list's is second, before its check.
        let mut parts: Vec<String> = c.split('.').map(str::to_owned).collect();
        let at = if method == "skills/list" {
            1
        } else {
            parts.len() - 1
        };
        let offset: usize = parts[at].parse().unwrap();
        parts[at] = (offset + 1).to_string();
        let edited = parts.join(".");
        let text = refusal(&mut b, method, &args, &edited);
        assert!(text.contains("invalid cursor"), "{method}: {text}");
    }
    a.finish();
    b.finish();
}

#[test]
fn a_cursor_is_refused_by_a_process_serving_a_changed_tree_and_after_a_rescan() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("skills");
    tree(&root, SKILLS);
    let mut a = start(&root);
    let old: Vec<(&str, Value, String)> = listings()
        .into_iter()
        .map(|(m, args)| {
            let c = page(&mut a, m, &args, None)["nextCursor"]
                .as_str()
                .unwrap()
                .to_owned();
            (m, args, c)
        })
        .collect();
    // One skill changed, and not in any way a size shows: one letter of
    // its body, which `query` ranks by.
    let md = root.join("s250/SKILL.md");
    let text = std::fs::read_to_string(&md).unwrap();
    std::fs::write(&md, text.replace("alpha body", "alpha bodY")).unwrap();
    let mut c = start(&root);
    for (m, args, cursor) in &old {
        assert_list_again(&refusal(&mut c, m, args, cursor), m);
        // The process that has not rescanned still serves its own scan,
        // and its cursors with it.
        page(&mut a, m, args, Some(cursor));
    }
    a.rescan_after_hangup(1);
    for (m, args, cursor) in &old {
        assert_list_again(&refusal(&mut a, m, args, cursor), m);
        // Now both serve the changed tree: a fresh process's cursors are
        // the rescanned one's, and a walk across them holds every entry.
        let fresh = page(&mut c, m, args, None)["nextCursor"].clone();
        assert_eq!(
            page(&mut a, m, args, None)["nextCursor"],
            fresh,
            "{m} {args}"
        );
        let (alone, _) = walk(&mut [&mut c], m, args);
        let (across, _) = walk(&mut [&mut a, &mut c], m, args);
        assert_eq!(across, alone, "{m} {args}");
    }
    a.finish();
    c.finish();
}

#[test]
fn a_copy_of_the_tree_at_another_path_is_another_catalog() {
    // `skill_list` shows each skill's root, so a copy elsewhere lists
    // other text and may cut its pages elsewhere: its cursors are not
    // taken for the original's (LIST-018's Decision).
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("skills");
    let copy = tmp.path().join("copy-of-skills");
    tree(&root, 40);
    tree(&copy, 40);
    let mut a = start(&root);
    let mut b = start(&copy);
    let args = json!({"limit": 5});
    let c = page(&mut a, "skill_list", &args, None)["nextCursor"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_list_again(&refusal(&mut b, "skill_list", &args, &c), "skill_list");
    a.finish();
    b.finish();
}

/// Issue 29 §4, through a real load balancer: nginx round-robin over three
/// `skill-mcp --http` replicas of one tree, each request a stateless
/// 2026-07-28 POST, so every page may come from another replica. A full
/// `skill_list` walk and a full `skills/list` walk hold every skill
/// exactly once, and more than one replica served them. nginx is Debian's
/// package (`.ci/run` installs it); without it this test fails, saying so.
#[test]
fn a_walk_through_nginx_over_three_replicas_holds_every_skill_once() {
    use std::io::{BufRead, BufReader};
    use std::net::{TcpListener, TcpStream};
    use std::process::{Child, Command, Stdio};
    use std::time::Duration;

    struct Kill(Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let nginx = crate::common::nginx();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("skills");
    tree(&root, SKILLS);
    // Three replicas, each telling the port it bound.
    let mut replicas = Vec::new();
    let mut ports = Vec::new();
    for _ in 0..3 {
        let mut child = Command::new(BIN)
            .args(["--http", "127.0.0.1:0"])
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("SKILLS_DIR", &root)
            .env("SKILL_MCP_ANSWER_BUDGET", BUDGET)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        replicas.push(Kill(child));
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(at) = line.find("listening on http://127.0.0.1:") {
                    let rest = &line[at + "listening on http://127.0.0.1:".len()..];
                    let port: String = rest.chars().take_while(char::is_ascii_digit).collect();
                    let _ = tx.send(port.parse::<u16>().unwrap_or(0));
                }
            }
        });
        ports.push(
            rx.recv_timeout(Duration::from_secs(30))
                .expect("a replica says where it listens"),
        );
    }
    // nginx in the foreground, one process, everything under the tempdir.
    let front = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let d = dir.path().display();
    let upstream: String = ports
        .iter()
        .map(|p| format!("server 127.0.0.1:{p};\n"))
        .collect();
    let conf = dir.path().join("nginx.conf");
    std::fs::write(
        &conf,
        format!(
            "daemon off;\nmaster_process off;\nerror_log {d}/error.log;\npid {d}/nginx.pid;\n\
             events {{ worker_connections 64; }}\n\
             http {{\n access_log off;\n client_body_temp_path {d}/body;\n proxy_temp_path {d}/proxy;\n\
             fastcgi_temp_path {d}/fcgi;\n uwsgi_temp_path {d}/uwsgi;\n scgi_temp_path {d}/scgi;\n\
             upstream replicas {{\n{upstream}}}\n\
             server {{\n listen 127.0.0.1:{front};\n location / {{\n proxy_pass http://replicas;\n\
             proxy_http_version 1.1;\n proxy_set_header Connection \"\";\n proxy_set_header Host 127.0.0.1;\n\
             proxy_buffering off;\n add_header X-Replica $upstream_addr always;\n }}\n }}\n}}\n"
        ),
    )
    .unwrap();
    let _nginx = Kill(
        Command::new(nginx)
            .arg("-c")
            .arg(&conf)
            .arg("-p")
            .arg(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    // nginx is up once it accepts a connection.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", front)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "nginx does not listen"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let post = |rpc_method: &str, body: &str| -> (String, Value) {
        let mut headers = vec![
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", rpc_method),
        ];
        // rmcp wants the tool's name in a header of its own for tools/call.
        if rpc_method == "tools/call" {
            headers.push(("Mcp-Name", "skill_list"));
        }
        let a = common::http::post(front, body, &headers);
        assert_eq!(a.status, 200, "{a:?}");
        let replica = a.header("x-replica").unwrap_or_default().to_owned();
        (replica, a.json())
    };
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let mut served_by = std::collections::BTreeSet::new();
    for method in ["skill_list", "skills/list"] {
        let mut names = Vec::new();
        let mut cursor: Option<String> = None;
        for id in 1.. {
            assert!(id < 2_000, "{method}: the walk does not end");
            let body = if method == "skill_list" {
                let mut args = json!({"limit": 7});
                if let Some(c) = &cursor {
                    args["cursor"] = json!(c);
                }
                json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                       "params": {"name": "skill_list", "arguments": args, "_meta": meta}})
            } else {
                let mut params = json!({"_meta": meta});
                if let Some(c) = &cursor {
                    params["cursor"] = json!(c);
                }
                json!({"jsonrpc": "2.0", "id": id, "method": "skills/list", "params": params})
            };
            let rpc_method = if method == "skill_list" {
                "tools/call"
            } else {
                method
            };
            let (replica, v) = post(rpc_method, &body.to_string());
            served_by.insert(replica);
            let result = if method == "skill_list" {
                v["result"]["structuredContent"].clone()
            } else {
                v["result"].clone()
            };
            assert!(v["error"].is_null() && !result.is_null(), "{method}: {v}");
            names.extend(names_of(method, &result));
            cursor = result["nextCursor"].as_str().map(str::to_owned);
            if cursor.is_none() {
                break;
            }
        }
        assert_eq!(names, all_names(SKILLS), "{method} through nginx");
    }
    assert!(
        served_by.len() >= 2,
        "nginx sent every page to one replica: {served_by:?}"
    );
}
