//! The Skills extension's digests, through MCP (spec SKX-012..SKX-016):
//! they cost their own skill only, are never stale, are kept for the
//! snapshot's life without re-opening a file, and every `skills/list`
//! page fits the answer budget.

use crate::common;

use std::fs::{self, File, FileTimes};
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use common::{BIN, Session};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

fn sha256(bytes: &[u8]) -> String {
    let sum = Sha256::digest(bytes);
    let hex: String = sum.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

fn write_skill(root: &Path, name: &str, files: &[(&str, &[u8])]) {
    common::skill(root, name);
    for (path, bytes) in files {
        let p = root.join(name).join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, bytes).unwrap();
    }
}

fn start(root: &Path, extra: &[(&str, &str)]) -> Session {
    let dir = root.to_str().unwrap();
    let mut env = vec![("SKILLS_DIR", dir)];
    env.extend_from_slice(extra);
    Session::start(Path::new(BIN), &env)
}

/// The digest `skills/get` gives for `path` of skill `name`.
fn digest_of(s: &mut Session, name: &str, path: &str) -> String {
    let r = s.request(
        "skills/get",
        json!({"uri": format!("skill://{name}/SKILL.md")}),
    );
    let want = format!("skill://{name}/{path}");
    r["result"]["skill"]["resources"]
        .as_array()
        .unwrap_or_else(|| panic!("a manifest: {r}"))
        .iter()
        .find(|f| f["uri"] == want.as_str())
        .unwrap_or_else(|| panic!("{want} in {r}"))["digest"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// SKX-012, SKX-013: while concurrent `skills/get` calls ask for a skill
/// holding a 64 GiB file (sparse: no disk used) — one that had it at the
/// scan, one whose file grew to it after — `skill_file`, `skill_list` and
/// `resources/read` of another skill are answered promptly, and the two
/// big skills are served `dynamic` with the reason. Before SKX-012 every
/// read waited for 64 GiB to be hashed (about 140 s).
#[test]
fn reads_are_answered_promptly_while_a_64_gib_file_is_asked_for() {
    let root = tempfile::tempdir().unwrap();
    write_skill(root.path(), "other", &[("data.txt", b"hello\n")]);
    write_skill(root.path(), "sparse", &[]);
    write_skill(root.path(), "grown", &[("huge.bin", b"")]);
    const SIZE: u64 = 64 << 30;
    File::create(root.path().join("sparse/huge.bin"))
        .unwrap()
        .set_len(SIZE)
        .unwrap();
    let mut s = start(root.path(), &[]);
    // Grows after the scan, which saw 0 bytes.
    fs::OpenOptions::new()
        .write(true)
        .open(root.path().join("grown/huge.bin"))
        .unwrap()
        .set_len(SIZE)
        .unwrap();
    let gets: Vec<u64> = ["sparse", "sparse", "grown", "grown"]
        .iter()
        .map(|n| {
            s.send_request(
                "skills/get",
                json!({"uri": format!("skill://{n}/SKILL.md")}),
            )
        })
        .collect();
    let mut kept = Vec::new();
    // The stall is the behaviour under test, and the bound is generous
    // against it: each answer takes milliseconds; hashing 64 GiB takes
    // minutes, and even 16 GiB took 9.9 s.
    let took = reads_within(&mut s, &mut kept, Duration::from_secs(5));
    eprintln!(
        "reads while 64 GiB is asked for: the slowest {:?}",
        took.iter().max()
    );
    for id in gets {
        let r = s
            .reply_to(id, &mut kept, Duration::from_secs(30))
            .expect("every skills/get is answered");
        let skill = &r["result"]["skill"];
        assert_eq!(skill["resources"], "dynamic", "{r}");
        let note = skill["_meta"]["skill-mcp/dynamicNote"].as_str().unwrap();
        assert!(note.contains("16 MiB"), "{note}");
    }
}

/// The reads `skill_file`, `skill_list` and `resources/read` of `other`,
/// five rounds, each answered within `bound`; the times taken.
fn reads_within(s: &mut Session, kept: &mut Vec<Value>, bound: Duration) -> Vec<Duration> {
    let mut took = Vec::new();
    for _ in 0..5 {
        for (method, params) in [
            (
                "tools/call",
                json!({"name": "skill_file", "arguments": {"name": "other", "path": "data.txt"}}),
            ),
            ("tools/call", json!({"name": "skill_list", "arguments": {}})),
            ("resources/read", json!({"uri": "skill://other/data.txt"})),
        ] {
            let t = Instant::now();
            let id = s.send_request(method, params);
            let r = s
                .reply_to(id, kept, Duration::from_secs(30))
                .unwrap_or_else(|| panic!("{method} got no answer within 30 s"));
            let d = t.elapsed();
            assert!(r.get("result").is_some(), "{r}");
            assert_ne!(r["result"]["isError"], json!(true), "{r}");
            assert!(d < bound, "{method} took {d:?}: {took:?}");
            took.push(d);
        }
    }
    took
}

/// SKX-012: hashing runs on the digest pool, so two `skills/list` calls
/// hashing 100 skills of fifteen 1 MiB files each (sparse: 3.1 GB to hash,
/// for seconds; each file within the 1 MiB a manifest lists, SKX-007, and
/// a budget that lets a page hold all 100) leave every read of another
/// skill answered promptly. Before SKX-012 both blocking threads hashed
/// and the reads waited.
#[test]
fn reads_are_answered_promptly_while_skills_are_being_hashed() {
    let root = tempfile::tempdir().unwrap();
    write_skill(root.path(), "other", &[("data.txt", b"hello\n")]);
    for i in 0..100 {
        let name = format!("s{i:03}");
        write_skill(root.path(), &name, &[]);
        let data = root.path().join(&name).join("data");
        std::fs::create_dir(&data).unwrap();
        for f in 0..15 {
            File::create(data.join(format!("f{f:02}")))
                .unwrap()
                .set_len(1 << 20)
                .unwrap();
        }
    }
    let mut s = start(root.path(), &[("SKILL_MCP_ANSWER_BUDGET", "400000")]);
    let lists: Vec<u64> = (0..2)
        .map(|_| s.send_request("skills/list", json!({})))
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let mut kept = Vec::new();
    // Generous against the stall under test (reads waiting for seconds of
    // hashing): each read takes milliseconds.
    let took = reads_within(&mut s, &mut kept, Duration::from_secs(5));
    eprintln!(
        "reads while skills are hashed: the slowest {:?}",
        took.iter().max()
    );
    // The hashing was still going, or the test proved nothing.
    assert!(
        lists
            .iter()
            .any(|id| !kept.iter().any(|v| v["id"] == json!(id))),
        "both skills/list calls were answered before the reads: make the hashing longer"
    );
}

/// SKX-013: a skill of more than 512 files is served `dynamic`, saying
/// why, and its files stay readable; a skill of 512 keeps its manifest.
#[test]
fn a_skill_over_512_resources_is_served_dynamic() {
    let root = tempfile::tempdir().unwrap();
    for (name, n) in [("many", 512), ("fits", 511)] {
        common::skill(root.path(), name);
        for i in 0..n {
            fs::write(root.path().join(name).join(format!("f{i:03}")), b"x").unwrap();
        }
    }
    let mut s = start(root.path(), &[("SKILL_MCP_ANSWER_BUDGET", "16000000")]);
    let many = s.request("skills/get", json!({"uri": "skill://many/SKILL.md"}));
    assert_eq!(many["result"]["skill"]["resources"], "dynamic", "{many}");
    let note = many["result"]["skill"]["_meta"]["skill-mcp/dynamicNote"]
        .as_str()
        .unwrap();
    assert!(note.contains("513 files") && note.contains("512"), "{note}");
    let fits = s.request("skills/get", json!({"uri": "skill://fits/SKILL.md"}));
    assert_eq!(
        fits["result"]["skill"]["resources"]
            .as_array()
            .map(Vec::len),
        Some(512),
        "{fits}"
    );
    let read = s.request("resources/read", json!({"uri": "skill://many/f511"}));
    assert_eq!(read["result"]["contents"][0]["text"], "x", "{read}");
}

/// SKX-014: a file rewritten at the same size with its mtime put back
/// (what `cp -p`, `rsync -t` and `tar x` do) gets a new digest; the old
/// one is never handed out for the new bytes, and `resources/read`
/// between says the file changed.
#[test]
fn a_same_size_rewrite_with_its_mtime_restored_gets_a_new_digest() {
    let root = tempfile::tempdir().unwrap();
    write_skill(root.path(), "good", &[("data.txt", b"version one\n")]);
    let data = root.path().join("good/data.txt");
    let old = SystemTime::now() - Duration::from_secs(3600);
    File::options()
        .write(true)
        .open(&data)
        .unwrap()
        .set_times(FileTimes::new().set_accessed(old).set_modified(old))
        .unwrap();
    // Past the settle margin, so the first digest is kept and trusted on
    // a matching stat (SKX-017): the case a stale cache would get wrong.
    std::thread::sleep(Duration::from_millis(2_200));
    let mut s = start(root.path(), &[]);
    assert_eq!(
        digest_of(&mut s, "good", "data.txt"),
        sha256(b"version one\n")
    );
    assert_eq!(
        digest_of(&mut s, "good", "data.txt"),
        sha256(b"version one\n")
    );
    fs::write(&data, b"version two\n").unwrap();
    File::options()
        .write(true)
        .open(&data)
        .unwrap()
        .set_times(FileTimes::new().set_accessed(old).set_modified(old))
        .unwrap();
    let meta = fs::metadata(&data).unwrap();
    assert_eq!((meta.len(), meta.modified().unwrap()), (12, old));
    let read = s.request("resources/read", json!({"uri": "skill://good/data.txt"}));
    assert_eq!(read["result"]["contents"][0]["text"], "version two\n");
    assert_eq!(
        read["result"]["contents"][0]["_meta"]["skill-mcp/changed"], true,
        "{read}"
    );
    assert_eq!(
        digest_of(&mut s, "good", "data.txt"),
        sha256(b"version two\n")
    );
    // Rewritten again at once, within the settle margin of its hashing.
    fs::write(&data, b"version 3!!\n").unwrap();
    assert_eq!(
        digest_of(&mut s, "good", "data.txt"),
        sha256(b"version 3!!\n")
    );
}

/// SKX-017: a kept digest, and SKILL.md's kept frontmatter, are handed
/// out without opening their files again — the second `skills/get` opens
/// the skill's directory for lookups (`O_PATH`, no bytes) and no file of
/// the skill. Watched with strace, between two marker reads.
#[test]
fn a_kept_digest_is_handed_out_without_reopening_its_file() {
    let root = tempfile::tempdir().unwrap();
    write_skill(
        root.path(),
        "good",
        &[("a.txt", b"alpha\n"), ("sub/b.txt", b"beta\n")],
    );
    write_skill(
        root.path(),
        "marks",
        &[("mark-1.txt", b"1"), ("mark-2.txt", b"2")],
    );
    // Past the settle margin: the digests are kept trusted.
    std::thread::sleep(Duration::from_millis(2_200));
    let logs = tempfile::tempdir().unwrap();
    let trace = logs.path().join("trace");
    let wrapper = logs.path().join("strace-server.sh");
    fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nexec strace -f -qq -o '{}' -e trace=open,openat,openat2 '{BIN}'\n",
            trace.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&wrapper, fs::Permissions::from_mode(0o755)).unwrap();
    let mut s = start_with(&wrapper, root.path());
    let first = s.request("skills/get", json!({"uri": "skill://good/SKILL.md"}));
    assert!(first["result"]["skill"]["resources"].is_array(), "{first}");
    s.request("resources/read", json!({"uri": "skill://marks/mark-1.txt"}));
    let second = s.request("skills/get", json!({"uri": "skill://good/SKILL.md"}));
    assert_eq!(first["result"], second["result"]);
    s.request("resources/read", json!({"uri": "skill://marks/mark-2.txt"}));
    let trace_path = trace;
    let trace =
        fs::read_to_string(&trace_path).expect("strace wrote a trace (is strace installed?)");
    // The thread that made an open, by name, while the server still runs:
    // hashing is the digest pool's; a kept entry's stats are not (SKX-012).
    let thread = |needle: &str| {
        let line = trace
            .lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("{needle} opened: {trace}"));
        let tid = line.split_whitespace().next().unwrap_or_default();
        fs::read_to_string(format!("/proc/{tid}/comm"))
            .unwrap_or_else(|e| panic!("thread {tid} of {line:?}: {e}"))
            .trim()
            .to_owned()
    };
    assert!(
        thread("good/sub/b.txt").starts_with("skill-mcp-diges"),
        "the first skills/get hashed on the digest pool: {trace}"
    );
    let kept = trace
        .lines()
        .skip_while(|l| !l.contains("mark-1.txt"))
        .find(|l| l.contains("/good\"") && l.contains("O_PATH"))
        .unwrap_or_else(|| panic!("the second skills/get opened its directory: {trace}"));
    assert!(
        !thread(kept).starts_with("skill-mcp-diges"),
        "a kept entry is answered without the digest pool's hop: {kept}"
    );
    assert!(s.finish().success());
    let opens: Vec<&str> = trace.lines().filter(|l| l.contains("open")).collect();
    let at = |needle: &str| {
        opens
            .iter()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("{needle} opened: {trace}"))
    };
    let (m1, m2) = (at("mark-1.txt"), at("mark-2.txt"));
    // The first skills/get hashed both files: the trace sees opens.
    assert!(
        at("good/a.txt") < m1 && at("good/sub/b.txt") < m1,
        "{trace}"
    );
    assert!(at("good/SKILL.md") < m1, "{trace}");
    let between = &opens[m1..m2];
    assert!(
        between
            .iter()
            .any(|l| l.contains("/good\"") && l.contains("O_PATH")),
        "the second skills/get stats its files from the skill's directory: {between:#?}"
    );
    assert!(
        !between.iter().any(|l| l.contains("/good/")),
        "a kept digest's or frontmatter's file was opened again: {between:#?}"
    );
}

/// SKX-017, SKX-014: SKILL.md's kept frontmatter is never handed out for
/// new text. A description rewritten at the same size with SKILL.md's
/// mtime put back (ctime still moves) is served at the next `skills/get`,
/// and an edit SEP-2640 cannot carry (another name) is refused there
/// (SKX-011) rather than answered from what was kept.
#[test]
fn a_kept_frontmatter_is_read_again_when_skill_md_changes() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("good");
    fs::create_dir_all(&dir).unwrap();
    let md = dir.join("SKILL.md");
    let text = |description: &str, name: &str| {
        format!("---\nname: {name}\ndescription: {description}\nlicense: MIT\n---\n# Good\n")
    };
    fs::write(&md, text("first words", "good")).unwrap();
    let old = SystemTime::now() - Duration::from_secs(3600);
    let put_back = || {
        File::options()
            .write(true)
            .open(&md)
            .unwrap()
            .set_times(FileTimes::new().set_accessed(old).set_modified(old))
            .unwrap();
    };
    put_back();
    // Past the settle margin: the first frontmatter is kept and trusted.
    std::thread::sleep(Duration::from_millis(2_200));
    let mut s = start(root.path(), &[]);
    let get = |s: &mut Session| s.request("skills/get", json!({"uri": "skill://good/SKILL.md"}));
    for _ in 0..2 {
        let r = get(&mut s);
        let fm = &r["result"]["skill"]["frontmatter"];
        assert_eq!(fm["description"], "first words", "{r}");
        assert_eq!(fm["license"], "MIT", "{r}");
    }
    fs::write(&md, text("other words", "good")).unwrap();
    put_back();
    let meta = fs::metadata(&md).unwrap();
    assert_eq!(meta.modified().unwrap(), old);
    let r = get(&mut s);
    assert_eq!(
        r["result"]["skill"]["frontmatter"]["description"], "other words",
        "{r}"
    );
    assert_eq!(
        r["result"]["skill"]["resources"][0]["digest"],
        sha256(text("other words", "good").as_bytes()),
        "{r}"
    );
    fs::write(&md, text("other words", "gone")).unwrap();
    put_back();
    let r = get(&mut s);
    assert_eq!(r["error"]["code"], -32603, "{r}");
    let message = r["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("SKX-011") && message.contains("\"gone\""),
        "{r}"
    );
}

fn start_with(bin: &Path, root: &Path) -> Session {
    Session::start(bin, &[("SKILLS_DIR", root.to_str().unwrap())])
}

/// SKX-015: with a small answer budget every `skills/list` page fits it,
/// the pages together list every skill once, in order, and only a cursor
/// a page handed out is accepted.
#[test]
fn every_skills_list_page_fits_the_answer_budget() {
    let root = tempfile::tempdir().unwrap();
    let names: Vec<String> = (0..40).map(|i| format!("skill-{i:02}")).collect();
    for n in &names {
        write_skill(
            root.path(),
            n,
            &[("notes/readme.txt", b"some notes\n"), ("x.json", b"{}")],
        );
    }
    const BUDGET: usize = 2_000;
    let mut s = start(root.path(), &[("SKILL_MCP_ANSWER_BUDGET", "2000")]);
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let line = s.request_line("skills/list", params);
        assert!(line.len() <= BUDGET, "{} bytes: {line}", line.len());
        let r: Value = serde_json::from_str(&line).unwrap();
        let skills = r["result"]["skills"].as_array().unwrap();
        assert!(!skills.is_empty(), "{line}");
        for sk in skills {
            seen.push(sk["frontmatter"]["name"].as_str().unwrap().to_owned());
        }
        pages += 1;
        match r["result"]["nextCursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    assert_eq!(seen, names);
    assert!(pages > 5, "{pages} pages");
    for bad in ["1", "100", "-3", "bogus"] {
        let r = s.request("skills/list", json!({"cursor": bad}));
        assert_eq!(r["error"]["code"], -32602, "{bad}: {r}");
        assert!(r["error"]["message"].as_str().unwrap().contains(bad), "{r}");
    }
}

/// Every file of a `skills/get` or `skills/list` entry has the size and
/// digest of its bytes on disk under `root`.
fn assert_manifest_is_the_files(root: &Path, entry: &Value) {
    let name = entry["frontmatter"]["name"].as_str().unwrap();
    let files = entry["resources"]
        .as_array()
        .unwrap_or_else(|| panic!("a manifest: {entry}"));
    assert!(files.len() >= 3, "{entry}");
    for f in files {
        let uri = f["uri"].as_str().unwrap();
        let path = uri
            .strip_prefix(&format!("skill://{name}/"))
            .unwrap_or_else(|| panic!("{uri} of {name}"));
        let bytes = fs::read(root.join(name).join(path)).unwrap();
        assert_eq!(f["digest"], sha256(&bytes).as_str(), "{uri}");
        assert_eq!(f["size"], bytes.len(), "{uri}");
    }
}

/// SKX-012, SKX-015: a page's skills are hashed by every digest thread
/// at once, the job that asked for the page helping its own helpers
/// rather than waiting for them. Three first walks of a many-page
/// catalog at once (more pages in flight than the pool has threads,
/// each page job waiting for skills others hash) and sixty `skills/get`
/// sent among them all finish: each walk lists every skill once, in
/// name order, and every digest is its file's. A page job that waited
/// for a helper queued behind another page job would hang here.
#[test]
fn concurrent_first_walks_and_gets_all_finish_with_every_digest() {
    let root = tempfile::tempdir().unwrap();
    let names: Vec<String> = (0..300).map(|i| format!("w{i:04}")).collect();
    for n in &names {
        let more = format!("{n} has more\n").repeat(200);
        write_skill(
            root.path(),
            n,
            &[
                ("data.txt", n.as_bytes()),
                ("sub/more.txt", more.as_bytes()),
            ],
        );
    }
    // A few entries a page: many pages, each hashed by the whole pool.
    let mut s = start(root.path(), &[("SKILL_MCP_ANSWER_BUDGET", "6000")]);
    const WALKS: usize = 3;
    let mut seen: Vec<Vec<String>> = vec![Vec::new(); WALKS];
    let mut pages = [0usize; WALKS];
    let mut in_flight: std::collections::VecDeque<(u64, usize)> = (0..WALKS)
        .map(|w| (s.send_request("skills/list", json!({})), w))
        .collect();
    let gets: Vec<(u64, &String)> = names
        .iter()
        .step_by(5)
        .map(|n| {
            let id = s.send_request(
                "skills/get",
                json!({"uri": format!("skill://{n}/SKILL.md")}),
            );
            (id, n)
        })
        .collect();
    let mut kept = Vec::new();
    // Round robin: each walk has one page in flight until it is done.
    while let Some((id, w)) = in_flight.pop_front() {
        let r = s
            .reply_to(id, &mut kept, Duration::from_secs(60))
            .unwrap_or_else(|| panic!("walk {w}: page {} got no answer", pages[w] + 1));
        let page = r["result"]["skills"]
            .as_array()
            .unwrap_or_else(|| panic!("walk {w}: {r}"));
        assert!(!page.is_empty(), "{r}");
        for entry in page {
            assert_manifest_is_the_files(root.path(), entry);
            seen[w].push(entry["frontmatter"]["name"].as_str().unwrap().to_owned());
        }
        pages[w] += 1;
        if let Some(c) = r["result"]["nextCursor"].as_str() {
            in_flight.push_back((s.send_request("skills/list", json!({"cursor": c})), w));
        }
    }
    for w in 0..WALKS {
        assert_eq!(seen[w], names, "walk {w}");
        assert!(pages[w] > 10, "walk {w}: {} pages", pages[w]);
    }
    for (id, n) in gets {
        let r = s
            .reply_to(id, &mut kept, Duration::from_secs(60))
            .unwrap_or_else(|| panic!("skills/get of {n} got no answer"));
        assert_eq!(
            r["result"]["skill"]["frontmatter"]["name"],
            n.as_str(),
            "{r}"
        );
        assert_manifest_is_the_files(root.path(), &r["result"]["skill"]);
    }
    assert!(s.finish().success());
}

/// SKX-016: `skills/get` finds each of 300 skills by its SKILL.md URI,
/// exactly as `skills/list` writes it, and refuses every near miss.
#[test]
fn skills_get_finds_every_skill_by_its_uri_and_nothing_else() {
    let root = tempfile::tempdir().unwrap();
    let names: Vec<String> = (0..300).map(|i| format!("s{i:06}")).collect();
    for n in &names {
        write_skill(root.path(), n, &[("data.txt", n.as_bytes())]);
    }
    let mut s = start(root.path(), &[]);
    for n in &names {
        assert_eq!(
            digest_of(&mut s, n, "data.txt"),
            sha256(n.as_bytes()),
            "{n}"
        );
    }
    for miss in [
        "skill://s000001/SKILL.md/",
        "skill://s000001/SKILL.mdx",
        "skill://s000001/./SKILL.md",
        "skill://S000001/SKILL.md",
        "skill://s000001/data.txt",
        "skill://s000001",
        "skill://s00000/SKILL.md",
        "skill://s0000010/SKILL.md",
        "skill://s%30000001/SKILL.md",
        "skill://s000300/SKILL.md",
        "skills://s000001/SKILL.md",
    ] {
        let r = s.request("skills/get", json!({"uri": miss}));
        assert_eq!(r["error"]["code"], -32602, "{miss}: {r}");
    }
}

/// SKX-018: a directory of a `dynamic` skill is listed in pages of 500
/// that, followed through their cursors, name every file once.
#[test]
fn a_large_directory_is_read_in_pages_that_name_every_file() {
    let root = tempfile::tempdir().unwrap();
    common::skill(root.path(), "many");
    fs::create_dir_all(root.path().join("many/data")).unwrap();
    for i in 0..1_234 {
        fs::write(root.path().join(format!("many/data/f{i:04}")), b"x").unwrap();
    }
    let mut s = start(root.path(), &[]);
    let get = s.request("skills/get", json!({"uri": "skill://many/SKILL.md"}));
    assert_eq!(get["result"]["skill"]["resources"], "dynamic", "{get}");
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut params = json!({"uri": "skill://many/data"});
        if let Some(c) = &cursor {
            params["cursor"] = json!(c);
        }
        let r = s.request("resources/directory/read", params);
        let page = r["result"]["resources"]
            .as_array()
            .unwrap_or_else(|| panic!("{r}"));
        assert!(page.len() <= 500, "{} children on one page", page.len());
        seen.extend(page.iter().map(|c| c["uri"].as_str().unwrap().to_owned()));
        match r["result"]["nextCursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    let want: Vec<String> = (0..1_234)
        .map(|i| format!("skill://many/data/f{i:04}"))
        .collect();
    assert_eq!(seen, want);
}
