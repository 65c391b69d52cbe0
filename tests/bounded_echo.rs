//! HARD-005: no reply quotes more than an excerpt of what the client sent.
//! Every door is sent a 10 MiB string — a name, a path, a script, an
//! argument, a URI, a cursor, a tool name, a method name, a request id —
//! and its reply, as the server wrote it, must be under 4 KiB, quote no
//! more than a couple of hundred bytes of the string, say how many bytes
//! it left out whenever it quotes any, and leave the session serving.

use crate::common;
use common::*;
use serde_json::{Value, json};

/// What every door is sent: 10 MiB of one character, so a quote of it is
/// a run of that character.
const BIG: usize = 10 * 1024 * 1024;
/// Most bytes a reply to a 10 MiB argument may be.
const REPLY_MAX: usize = 4 * 1024;
/// Most bytes of the argument one quote may hold.
const QUOTE_MAX: usize = 200;

fn tree() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let s = root.path().join("s");
    std::fs::create_dir_all(s.join("dir")).unwrap();
    std::fs::write(
        s.join("SKILL.md"),
        "---\nname: s\ndescription: d\nmcp-host:\n  version: 1\n  run:\n    - script: run.js\n      interpreter: node\n---\nbody\n",
    )
    .unwrap();
    std::fs::write(s.join("run.js"), "console.log(process.argv.length)\n").unwrap();
    std::fs::write(s.join("dir/a.txt"), "a").unwrap();
    root
}

/// The longest run of `x` in `line`: the most of the argument it quotes
/// (a run of a few is any word with an x in it).
fn longest_quote(line: &str) -> usize {
    line.split(|c| c != 'x')
        .map(str::len)
        .filter(|&n| n > 8)
        .max()
        .unwrap_or(0)
}

/// Checks one reply line and returns its length.
fn bounded(door: &str, line: &str) -> usize {
    let head: String = line.chars().take(600).collect();
    assert!(
        line.len() < REPLY_MAX,
        "{door}: a reply of {} bytes to a 10 MiB argument: {head}",
        line.len()
    );
    let quoted = longest_quote(line);
    assert!(
        quoted <= QUOTE_MAX,
        "{door}: quotes {quoted} bytes of the argument: {head}"
    );
    if quoted > 0 {
        // Whatever quotes the argument says how much of it was left out
        // (BIG less the excerpt, give or take what surrounds it).
        let says = line
            .split(" more bytes)")
            .filter_map(|p| p.rsplit('(').next()?.parse::<usize>().ok())
            .any(|n| n > BIG - 2 * QUOTE_MAX && n <= BIG + 64);
        assert!(
            says,
            "{door}: quotes the argument without saying how long the rest was: {head}"
        );
    }
    let v: Value = serde_json::from_str(line).expect("the reply is JSON");
    let refused = v.get("error").is_some() || v["result"]["isError"] == json!(true);
    let slot_refused = v["result"]["structuredContent"]["files"]
        .as_array()
        .is_some_and(|f| f.iter().any(|e| e.get("error").is_some()));
    assert!(refused || slot_refused, "{door}: was not refused: {head}");
    line.len()
}

#[test]
fn every_door_answers_a_10_mib_argument_with_a_bounded_reply() {
    let root = tree();
    let mut s = Session::start(
        std::path::Path::new(BIN),
        &[("SKILLS_DIR", root.path().to_str().unwrap())],
    );
    let big = "x".repeat(BIG);
    let tool = |name: &str, args: Value| json!({"name": name, "arguments": args});
    let doors: Vec<(&str, &str, Value)> = vec![
        (
            "skill_load name",
            "tools/call",
            tool("skill_load", json!({"name": big})),
        ),
        (
            "skill_file name",
            "tools/call",
            tool("skill_file", json!({"name": big, "path": "SKILL.md"})),
        ),
        (
            "skill_file path",
            "tools/call",
            tool("skill_file", json!({"name": "s", "path": big})),
        ),
        (
            "skill_file paths[]",
            "tools/call",
            tool(
                "skill_file",
                json!({"name": "s", "paths": [big, "missing"]}),
            ),
        ),
        (
            "skill_run name",
            "tools/call",
            tool("skill_run", json!({"name": big, "script": "run.js"})),
        ),
        (
            "skill_run script",
            "tools/call",
            tool("skill_run", json!({"name": "s", "script": big})),
        ),
        (
            "skill_run args[]",
            "tools/call",
            tool(
                "skill_run",
                json!({"name": "s", "script": "run.js", "args": [big]}),
            ),
        ),
        (
            "skill_run args as a string",
            "tools/call",
            tool(
                "skill_run",
                json!({"name": "s", "script": "run.js", "args": big}),
            ),
        ),
        (
            "skill_run confirm as a string",
            "tools/call",
            tool(
                "skill_run",
                json!({"name": "s", "script": "run.js", "confirm": big}),
            ),
        ),
        ("unknown tool name", "tools/call", tool(&big, json!({}))),
        ("prompts/get name", "prompts/get", json!({"name": big})),
        ("resources/read uri", "resources/read", json!({"uri": big})),
        (
            "resources/read skill name",
            "resources/read",
            json!({"uri": format!("skill://{big}/SKILL.md")}),
        ),
        (
            "resources/read path",
            "resources/read",
            json!({"uri": format!("skill://s/{big}")}),
        ),
        ("skills/get uri", "skills/get", json!({"uri": big})),
        (
            "skills/get SKILL.md uri",
            "skills/get",
            json!({"uri": format!("skill://{big}/SKILL.md")}),
        ),
        (
            "resources/directory/read skill",
            "resources/directory/read",
            json!({"uri": format!("skill://{big}")}),
        ),
        (
            "resources/directory/read dir",
            "resources/directory/read",
            json!({"uri": format!("skill://s/{big}")}),
        ),
        (
            "prompts/list cursor",
            "prompts/list",
            json!({"cursor": big}),
        ),
        (
            "resources/list cursor",
            "resources/list",
            json!({"cursor": big}),
        ),
        ("skills/list cursor", "skills/list", json!({"cursor": big})),
        (
            "skill_list query",
            "tools/call",
            tool("skill_list", json!({"query": big})),
        ),
        (
            "skill_list cursor",
            "tools/call",
            tool("skill_list", json!({"cursor": big})),
        ),
        (
            "skill_load filesCursor",
            "tools/call",
            tool("skill_load", json!({"name": "s", "filesCursor": big})),
        ),
        ("unknown method name", big.as_str(), json!({})),
    ];
    let mut largest = 0;
    for (door, method, params) in doors {
        let line = s.request_line(method, params);
        let n = bounded(door, &line);
        eprintln!("{door}: {n} bytes");
        largest = largest.max(n);
        // The session goes on.
        assert_eq!(
            names(&s.tool("skill_list", json!({}))),
            ["s"],
            "after {door}"
        );
    }
    // A request id is echoed whole by every answer, so a long one is
    // refused without it.
    s.send_message(json!({"jsonrpc": "2.0", "id": big, "method": "ping"}));
    let line = s.next_line();
    let n = bounded("request id", &line);
    eprintln!("request id: {n} bytes");
    largest = largest.max(n);
    let v: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(
        (v["id"].clone(), v["error"]["code"].clone()),
        (Value::Null, json!(-32600)),
        "{line}"
    );
    assert!(line.contains(&format!("an id of {BIG} bytes")), "{line}");
    assert_eq!(names(&s.tool("skill_list", json!({}))), ["s"]);
    eprintln!("the largest reply to a 10 MiB argument: {largest} bytes");
    assert_eq!(s.finish().code(), Some(0));
}

#[test]
fn a_name_longer_than_any_skill_name_is_refused_naming_the_limit() {
    let root = tree();
    let mut s = Session::start(
        std::path::Path::new(BIN),
        &[("SKILLS_DIR", root.path().to_str().unwrap())],
    );
    let text = |r: &Value| {
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    // 64 bytes could be a skill name: looked up, and the refusal lists
    // what is served.
    let r = s.request(
        "tools/call",
        json!({"name": "skill_load", "arguments": {"name": "n".repeat(64)}}),
    );
    assert_eq!(r["result"]["isError"], true);
    assert!(text(&r).contains("This server serves: s."), "{r}");
    // 65 cannot: refused before any lookup, naming the limit and the length.
    for door in ["skill_load", "skill_file", "skill_run"] {
        let r = s.request(
            "tools/call",
            json!({"name": door, "arguments": {"name": "n".repeat(65), "path": "SKILL.md", "script": "run.js"}}),
        );
        let t = text(&r);
        assert_eq!(r["result"]["isError"], true, "{door}: {r}");
        assert!(
            t.contains("at most 64 bytes") && t.contains("65 bytes long"),
            "{door}: {t}"
        );
    }
    let r = s.request("prompts/get", json!({"name": "n".repeat(65)}));
    let m = r["error"]["message"].as_str().unwrap_or_default();
    assert!(m.contains("at most 64 bytes"), "{r}");
    // A short name quotes whole, as before.
    let r = s.request(
        "tools/call",
        json!({"name": "skill_load", "arguments": {"name": "nope"}}),
    );
    assert!(text(&r).starts_with("no skill named \"nope\"."), "{r}");
}
