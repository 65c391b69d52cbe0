//! `skill://` URIs on every door (READ-010, SKX-002, SKX-004): each is
//! decoded once, segment by segment, by the same rules for
//! `resources/read`, `skills/get` and `resources/directory/read`, and the
//! same message gets the same answer over stdio and over HTTP (HTTP-006).
//! Outside attack of 2026-12-07 on the day's changes: FOUND tests failed
//! on the code as it stood and were fixed; HELD ones were answered as the
//! rules say.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::http::{self as h};
use crate::common::{BIN, Raw, Session, skill};

/// Three skills: `demo` (notes.md, sub/x.md), `exact` (a file of exactly
/// 1 MiB) and `big` (a file of 1 MiB + 1 byte).
fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for name in ["demo", "exact", "big"] {
        skill(dir.path(), name);
    }
    let d = dir.path().join("demo");
    std::fs::write(d.join("notes.md"), "notes\n").unwrap();
    std::fs::create_dir_all(d.join("sub")).unwrap();
    std::fs::write(d.join("sub/x.md"), "inner\n").unwrap();
    std::fs::write(dir.path().join("exact/mib.txt"), vec![b'a'; 1 << 20]).unwrap();
    std::fs::write(dir.path().join("big/huge.txt"), vec![b'a'; (1 << 20) + 1]).unwrap();
    dir
}

fn session(dir: &Path) -> Session {
    Session::start(Path::new(BIN), &[("SKILLS_DIR", dir.to_str().unwrap())])
}

fn err_msg(r: &Value) -> String {
    r["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
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
    let path_escaped = s.request(
        "resources/directory/read",
        json!({"uri": "skill://demo/s%75b"}),
    );
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
    for (plain, slashed) in [
        ("skill://demo", "skill://demo/"),
        ("skill://demo/sub", "skill://demo/sub/"),
    ] {
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
        assert!(
            err_msg(&r).contains("%2F") && err_msg(&r).contains("READ-010"),
            "{uri}: {r}"
        );
    }
    for uri in [
        "skill://demo/%ff",
        "skill://demo/%C0%AF",
        "skill://demo/%E2%88",
    ] {
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
    assert!(
        err_msg(&r).len() < 2_000,
        "the refusal quotes an excerpt: {}",
        err_msg(&r).len()
    );
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
