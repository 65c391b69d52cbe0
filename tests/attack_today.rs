//! Outside attack of 2026-12-07 (branch atk48) on the day's changes:
//! URIs decoded segment by segment (READ-010), a skill with a file past
//! 1 MiB served `dynamic` (SKX-007, SKX-015), and the HTTP door's direct
//! decode of `skills/get` (HTTP-006). FOUND tests fail on the code as it
//! stands; HELD tests record attacks that were answered as the rules say.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::http::{self as h};
use crate::common::{BIN, Raw, Session};

/// Three skills: `demo` (notes.md, sub/x.md), `exact` (a file of exactly
/// 1 MiB) and `big` (a file of 1 MiB + 1 byte).
fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let skill = |name: &str| {
        let d = dir.path().join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(
            d.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: The {name} skill.\n---\nbody\n"),
        )
        .unwrap();
        d
    };
    let d = skill("demo");
    std::fs::write(d.join("notes.md"), "notes\n").unwrap();
    std::fs::create_dir_all(d.join("sub")).unwrap();
    std::fs::write(d.join("sub/x.md"), "inner\n").unwrap();
    std::fs::write(skill("exact").join("mib.txt"), vec![b'a'; 1 << 20]).unwrap();
    std::fs::write(skill("big").join("huge.txt"), vec![b'a'; (1 << 20) + 1]).unwrap();
    dir
}

fn session(dir: &Path) -> Session {
    Session::start(Path::new(BIN), &[("SKILLS_DIR", dir.to_str().unwrap())])
}

fn err_msg(r: &Value) -> String {
    r["error"]["message"].as_str().unwrap_or_default().to_owned()
}

/// FOUND. `resources/directory/read` decodes the path after the name but
/// not the name: `skill://de%6Do/notes.md` is read by `resources/read`
/// (the name decodes to `demo`) and `skill://demo/s%75b` is listed by the
/// directory read (the path decodes to `sub`), yet `skill://de%6Do/sub`
/// and `skill://de%6Do` are refused as "not a directory of a served
/// skill". One URI scheme, decoded one way on one door and another way
/// on the next: a client that normalises (or over-escapes) a URI gets the
/// file and not its directory. Expected: the name decoded like the path,
/// on every door, or refused alike on every door.
#[test]
fn directory_read_decodes_the_name_as_resources_read_does() {
    let dir = tree();
    let mut s = session(dir.path());
    let read = s.request("resources/read", json!({"uri": "skill://de%6Do/notes.md"}));
    assert!(read["result"]["contents"][0]["text"] == "notes\n", "{read}");
    let path_escaped = s.request("resources/directory/read", json!({"uri": "skill://demo/s%75b"}));
    assert!(path_escaped.get("result").is_some(), "{path_escaped}");
    for uri in ["skill://de%6Do/sub", "skill://de%6Do"] {
        let r = s.request("resources/directory/read", json!({"uri": uri}));
        assert!(
            r.get("result").is_some(),
            "{uri}: resources/read serves skill://de%6Do/notes.md, the directory read refuses its directory: {r}"
        );
    }
}

/// FOUND. An escaped `/` in a directory URI is refused, but in words that
/// do not say why: `resources/read` names `%2F` and READ-010, the
/// directory read says "is not a directory of a served skill" for
/// `skill://demo/sub%2Fx` and `skill://demo%2Fsub`, which are refused for
/// the escape, not for naming no directory. Expected: the same clear
/// reason on both doors.
#[test]
fn directory_read_names_an_escaped_slash_as_the_reason() {
    let dir = tree();
    let mut s = session(dir.path());
    for uri in ["skill://demo/sub%2Fx", "skill://demo%2Fsub"] {
        let read = s.request("resources/read", json!({"uri": format!("{uri}/y.md")}));
        assert_eq!(read["error"]["code"], -32602, "{read}");
        assert!(err_msg(&read).contains("%2F"), "{read}");
        let r = s.request("resources/directory/read", json!({"uri": uri}));
        assert_eq!(r["error"]["code"], -32602, "{r}");
        assert!(
            err_msg(&r).contains("%2F") && err_msg(&r).contains("READ-010"),
            "{uri}: the directory read does not say the escaped slash is why: {r}"
        );
    }
}

/// FOUND (minor). `resources/directory/read` of `skill://demo` lists the
/// skill, of `skill://demo/sub` its subdirectory, but the same URIs with
/// the trailing slash a careless user (or a URL joiner) adds,
/// `skill://demo/` and `skill://demo/sub/`, are "not a directory of a
/// served skill". Expected: a directory URI with a trailing `/` lists the
/// same directory, or is refused in words that say to drop the `/`.
#[test]
fn a_directory_uri_with_a_trailing_slash_is_that_directory() {
    let dir = tree();
    let mut s = session(dir.path());
    for (plain, slashed) in [("skill://demo", "skill://demo/"), ("skill://demo/sub", "skill://demo/sub/")] {
        let a = s.request("resources/directory/read", json!({"uri": plain}));
        assert!(a.get("result").is_some(), "{a}");
        let b = s.request("resources/directory/read", json!({"uri": slashed}));
        assert!(
            b.get("result").is_some() || err_msg(&b).contains("trailing"),
            "{slashed}: {b}"
        );
    }
}

/// HELD. Escapes in `resources/read`: every `%2F`/`%2f` (path, name,
/// mixed with `/`, at the end) is -32602 naming `%2F`; `%252F`, `%2e%2e`,
/// `%00`, `%5C`, an empty segment and a trailing slash reach the fence
/// decoded once and are refused by it; invalid UTF-8 is -32602; nothing is
/// read from another file and nothing panics (the session keeps serving).
#[test]
fn held_escapes_in_resources_read_are_refused_never_misread() {
    let dir = tree();
    let mut s = session(dir.path());
    for uri in [
        "skill://demo/sub%2Fx.md",
        "skill://demo/sub%2fx.md",
        "skill://demo%2Fsub/x.md",
        "skill://%2Fdemo/notes.md",
        "skill://demo%2F/notes.md",
        "skill://demo/sub%2F..%2Fnotes.md",
        "skill://demo/%2Fetc/passwd",
        "skill://demo/sub%2F",
    ] {
        let r = s.request("resources/read", json!({"uri": uri}));
        assert_eq!(r["error"]["code"], -32602, "{uri}: {r}");
        assert!(err_msg(&r).contains("%2F") && err_msg(&r).contains("READ-010"), "{uri}: {r}");
    }
    for uri in ["skill://demo/%ff", "skill://demo/%C0%AF", "skill://demo/%E2%88"] {
        let r = s.request("resources/read", json!({"uri": uri}));
        assert_eq!(r["error"]["code"], -32602, "{uri}: {r}");
        assert!(err_msg(&r).contains("not UTF-8"), "{uri}: {r}");
    }
    for uri in [
        "skill://demo/sub%252Fx.md",
        "skill://demo/%2e%2e/demo/notes.md",
        "skill://demo/sub/%2e%2e/notes.md",
        "skill://demo/sub//x.md",
        "skill://demo//notes.md",
        "skill://demo/notes.md/",
        "skill://demo/notes%00.md",
        "skill://demo/sub%5Cx.md",
        "skill://demo/%",
    ] {
        let r = s.request("resources/read", json!({"uri": uri}));
        assert!(r.get("error").is_some(), "{uri}: {r}");
    }
    let long = format!("skill://demo/{}", "%2F".repeat(100_000));
    let r = s.request("resources/read", json!({"uri": long}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert!(err_msg(&r).len() < 2_000, "the refusal quotes an excerpt: {}", err_msg(&r).len());
    let ok = s.request("resources/read", json!({"uri": "skill://demo/sub/x.md"}));
    assert_eq!(ok["result"]["contents"][0]["text"], "inner\n", "{ok}");
}

/// HELD. `skills/get` takes only the URI `skills/list` gives: escaped
/// forms of it (`SKILL%2Emd`, `de%6Do`, `%2F`, `//`, `x/../`) are -32602.
#[test]
fn held_skills_get_takes_only_the_listed_uri() {
    let dir = tree();
    let mut s = session(dir.path());
    for uri in [
        "skill://demo/SKILL%2Emd",
        "skill://de%6Do/SKILL.md",
        "skill://demo%2FSKILL.md",
        "skill://demo%2F/SKILL.md",
        "skill://demo//SKILL.md",
        "skill://demo/x/../SKILL.md",
    ] {
        let r = s.request("skills/get", json!({"uri": uri}));
        assert_eq!(r["error"]["code"], -32602, "{uri}: {r}");
    }
}

/// HELD. A file of exactly 1,048,576 bytes keeps a manifest; one byte
/// more makes the skill `dynamic` with a note naming the file, in
/// `skills/list` and `skills/get` alike.
#[test]
fn held_one_mib_is_the_edge_of_a_manifest() {
    let dir = tree();
    let mut s = session(dir.path());
    let list = s.request("skills/list", json!({}));
    let entries = list["result"]["skills"].as_array().unwrap().clone();
    for e in &entries {
        let get = s.request("skills/get", json!({"uri": e["uri"]}));
        assert_eq!(&get["result"]["skill"], e, "skills/get agrees with skills/list");
    }
    let by = |n: &str| entries.iter().find(|e| e["uri"] == format!("skill://{n}/SKILL.md")).unwrap().clone();
    assert!(by("exact")["resources"].is_array(), "{}", by("exact"));
    assert_eq!(by("big")["resources"], "dynamic");
    let note = by("big")["_meta"]["skill-mcp/dynamicNote"].as_str().unwrap().to_owned();
    assert!(note.contains("huge.txt") && note.contains("1048577"), "{note}");
}

/// FOUND. SKX-015: "Only an entry whose frontmatter alone is larger than
/// the budget can make a page of one entry over it." A skill whose file
/// past 1 MiB sits at a long path of `"` characters (legal names, 954
/// characters, under the 1,024 the fence allows) gets a `dynamicNote`
/// quoting the path Debug-escaped and then JSON-escaped (4 characters a
/// `"`): with `SKILL_MCP_ANSWER_BUDGET=2000` (the smallest allowed) the
/// first `skills/list` page, one entry with a 40-byte frontmatter, is a
/// 4,410-character frame, and so is `skills/get`. Expected: every page
/// within the budget (the note's path cut to an excerpt, HARD-005).
#[test]
fn a_dynamic_note_keeps_a_page_within_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("long");
    let q = "\"".repeat(200);
    let sub = d.join(&q).join(&q).join(&q).join(&q);
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::write(d.join("SKILL.md"), "---\nname: long\ndescription: Long path skill.\n---\nbody\n").unwrap();
    std::fs::write(sub.join("\"".repeat(150)), vec![b'a'; (1 << 20) + 1]).unwrap();
    let mut s = Session::start(
        Path::new(BIN),
        &[("SKILLS_DIR", dir.path().to_str().unwrap()), ("SKILL_MCP_ANSWER_BUDGET", "2000")],
    );
    let line = s.request_line("skills/list", json!({}));
    let v: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["result"]["skills"][0]["resources"], "dynamic", "{}", &line[..300.min(line.len())]);
    assert!(
        line.chars().count() <= 2000,
        "a skills/list page of one entry with a 40-byte frontmatter is {} characters, over the 2,000 budget",
        line.chars().count()
    );
}

/// HELD. The HTTP door's direct decode of `skills/get` gives the answer
/// stdio gives: a member given twice (`uri`, `params`, `id`, `method`)
/// counts as its last on both doors; escaped keys and values, extra
/// members, a URI at exactly the 82-byte bound and one past it.
#[test]
fn held_skills_get_is_answered_alike_over_both_doors() {
    let dir = tree();
    let mut raw = Raw::in_session(dir.path());
    let server = h::start_in(tree(), "127.0.0.1:0", &[], &[]);
    let m = format!(r#","_meta":{}"#, h::meta());
    let cases = [
        r#"{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{"uri":"skill://demo/SKILL.md","uri":"skill://big/SKILL.md"XM}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{"uri":"skill://big/SKILL.md"XM},"params":{"uri":"skill://demo/SKILL.md"XM}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"skills/get","params":{"uri":"skill://demo/SKILL.md"XM}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"skills/get","method":"skills/get","params":{"uri":"skill://demo/SKILL.md"XM}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":"a\u0000b","method":"skills/\u0067et","params":{"\u0075ri":"skill://\u0064emo/SKILL.md","extra":[1,{"a":2}]XM},"zzz":1}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{"uri":null XM}}"#.to_owned(),
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{{"uri":"skill://{}/SKILL.md"XM}}}}"#, "a".repeat(64)),
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{{"uri":"skill://{}/SKILL.md"XM}}}}"#, "a".repeat(65)),
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{{"uri":"skill://{}/SKILL.md"XM}}}}"#, "\\u00e9".repeat(40)),
    ];
    for c in &cases {
        let stdio_line = c.replace("XM", "");
        let http_body = c.replace("XM", &m);
        raw.send(&stdio_line);
        let stdio: Value = serde_json::from_str(&raw.answer_line()).unwrap();
        let http = h::post(server.port, &http_body, &h::headers("skills/get")).json();
        let key = |v: &Value| {
            (
                v["id"].clone(),
                v["error"]["code"].clone(),
                v["result"]["skill"]["uri"].clone(),
            )
        };
        assert_eq!(key(&stdio), key(&http), "{c}\nstdio: {stdio}\nhttp: {http}");
    }
}

/// FOUND (the rule's words allow "at the scan"; the note's claim does
/// not). A skill whose file was past 1 MiB at the scan stays `dynamic`
/// after the file shrinks to 10 bytes, and its `dynamicNote` still says
/// the file "holds 1048577 bytes", which it no longer does; a skill whose
/// file grew past 1 MiB after the scan and shrank back is given its
/// manifest again. Expected: the same stat that makes a grown file
/// `dynamic` lets a shrunk one have its manifest, or at least a note that
/// does not state a size the file does not have ("held … at the scan").
#[test]
fn a_file_shrunk_below_one_mib_is_not_said_to_hold_what_it_held() {
    let dir = tempfile::tempdir().unwrap();
    for n in ["a", "b"] {
        let d = dir.path().join(n);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("SKILL.md"), format!("---\nname: {n}\ndescription: S {n}.\n---\nbody\n")).unwrap();
    }
    std::fs::write(dir.path().join("a/f.bin"), vec![0u8; (1 << 20) + 1]).unwrap();
    std::fs::write(dir.path().join("b/f.bin"), b"small\n").unwrap();
    let mut s = session(dir.path());
    let get = |s: &mut Session, n: &str| s.request("skills/get", json!({"uri": format!("skill://{n}/SKILL.md")}))["result"]["skill"].clone();
    assert_eq!(get(&mut s, "a")["resources"], "dynamic");
    // b grows past 1 MiB after the scan, then shrinks back: manifest again.
    std::fs::write(dir.path().join("b/f.bin"), vec![0u8; (1 << 20) + 5]).unwrap();
    assert_eq!(get(&mut s, "b")["resources"], "dynamic");
    std::fs::write(dir.path().join("b/f.bin"), b"xyz").unwrap();
    assert!(get(&mut s, "b")["resources"].is_array(), "HELD: b has its manifest again");
    // a shrinks: still dynamic, still said to hold 1048577 bytes.
    std::fs::write(dir.path().join("a/f.bin"), b"0123456789").unwrap();
    let a = get(&mut s, "a");
    let note = a["_meta"]["skill-mcp/dynamicNote"].as_str().unwrap_or_default();
    assert!(
        a["resources"].is_array() || !note.contains("holds 1048577 bytes"),
        "a's file holds 10 bytes now; skills/get says: {a}"
    );
}

/// A `subscriptions/listen` from the loopback address `source`, held once
/// acknowledged.
fn listen_from(source: [u8; 4], port: u16, id: u64) -> std::net::TcpStream {
    use socket2::{Domain, SockAddr, Socket, Type};
    use std::io::Write;
    let s = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    s.bind(&SockAddr::from(std::net::SocketAddr::from((source, 0))))
        .unwrap();
    s.connect(&SockAddr::from(std::net::SocketAddr::from(([127, 0, 0, 1], port))))
        .unwrap();
    let mut c: std::net::TcpStream = s.into();
    c.write_all(h::listen_request(port, id).as_bytes()).unwrap();
    let head = h::head_of(&mut c);
    assert!(head.starts_with("HTTP/1.1 200"), "listen {id} from {source:?}: {head}");
    c
}

/// Whether the server has closed `c`, without waiting.
fn gone(c: &mut std::net::TcpStream) -> bool {
    use std::io::Read;
    c.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 65536];
    let g = loop {
        match c.read(&mut buf) {
            Ok(0) => break true,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break false,
            Err(_) => break true,
        }
    };
    c.set_nonblocking(false).unwrap();
    g
}

/// HELD. HTTP-008: at 1,024 streams a newcomer closes "the oldest stream
/// of the address holding the most" (today: oldest by nanoseconds, then
/// registration order). Suspected from reading `close_a_stream`: the
/// address is picked by `max_by_key` over a fresh `HashMap` of counts, so
/// at a tie between two addresses the pick might be the map's order.
/// Repro: 512 listens from 127.0.0.3, then 512 from 127.0.0.2 (the cap),
/// then 20 newcomers from 127.0.0.4, one at a time: every other newcomer
/// finds the two addresses tied. Seen in 4 runs: 127.0.0.3's 10 oldest and
/// 127.0.0.2's 10 oldest closed, alternating, no newcomer closed: the tie
/// went to the older address every time (a random pick would pass this
/// once in 1,024).
#[test]
fn at_a_tie_between_addresses_the_oldest_stream_goes() {
    crate::common::http::room_for_descriptors(8_192);
    let s = h::start("127.0.0.1:0", &[], &[]);
    let port = s.port;
    let mut older: Vec<_> = (0..512).map(|i| listen_from([127, 0, 0, 3], port, 10_000 + i)).collect();
    let mut younger: Vec<_> = (0..512).map(|i| listen_from([127, 0, 0, 2], port, 20_000 + i)).collect();
    let mut newcomers = Vec::new();
    for i in 0..20 {
        newcomers.push(listen_from([127, 0, 0, 4], port, 30_000 + i));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    let closed = |v: &mut Vec<std::net::TcpStream>| -> Vec<usize> {
        v.iter_mut().enumerate().filter_map(|(i, c)| gone(c).then_some(i)).collect()
    };
    let (o, y) = (closed(&mut older), closed(&mut younger));
    assert_eq!(
        (o.clone(), y.clone()),
        ((0..10).collect::<Vec<_>>(), (0..10).collect::<Vec<_>>()),
        "closed of 127.0.0.3 (opened first): {o:?}; of 127.0.0.2: {y:?}"
    );
    assert_eq!(closed(&mut newcomers), Vec::<usize>::new());
}
