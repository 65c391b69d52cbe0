//! A fresh-eyed attack on issues 27 and 30 from the outside: a hostile or
//! careless owner's model directory (LIST-017), what the server says on
//! stderr (SRV-010, RELOAD-003), and a hostile skill author's frontmatter
//! keys (FM-007). Each test drives the built binary through MCP and fails
//! on the finding it is named after.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc::channel;
use std::time::{Duration, Instant};

use common::model2vec;
use common::*;
use serde_json::{Value, json};

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

/// A small catalog: two skills the model's words point at.
fn catalog() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    for (name, description) in [
        (
            "pptx",
            "Create and edit PowerPoint decks, slide layouts and charts.",
        ),
        (
            "rna-seq",
            "Differential expression of bulk RNA-seq counts with DESeq2.",
        ),
        ("pdf-forms", "Fill in and flatten PDF forms."),
    ] {
        let dir = root.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: {description}\n---\nbody\n"),
        )
        .unwrap();
    }
    root
}

/// Words of the catalog and the queries, each with its 2-dimension row.
const WORDS: &[(&str, [f32; 2])] = &[
    ("powerpoint", [1.0, 0.0]),
    ("decks", [1.0, 0.05]),
    ("slide", [0.95, 0.1]),
    ("keynote", [0.9, 0.0]),
    ("expression", [0.05, 1.0]),
    ("counts", [0.0, 1.0]),
    ("transcripts", [0.0, 1.0]),
];

/// The model2vec directory of these tests: `WORDS` under `ids`.
fn model(dir: &Path, ids: &[u64], rows: usize, extra: &[model2vec::Tensor]) {
    model2vec::model(dir, WORDS, ids, rows, extra);
}

fn dense_ids() -> Vec<u64> {
    model2vec::dense_ids(WORDS)
}

/// A session on `root` with the model in `model`, its stderr kept in a
/// file the caller reads back.
fn start_with_model(root: &Path, model: &Path) -> (Session, tempfile::NamedTempFile) {
    let log = tempfile::NamedTempFile::new().unwrap();
    let s = Session::start_logging(
        Command::new(BIN),
        &[
            ("SKILLS_DIR", root.to_str().unwrap()),
            ("SKILL_MCP_EMBEDDINGS", model.to_str().unwrap()),
        ],
        Stdio::from(log.reopen().unwrap()),
    );
    (s, log)
}

fn embedding_problems(list: &Value) -> Vec<String> {
    list["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["path"] == "SKILL_MCP_EMBEDDINGS")
        .map(|p| p["detail"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Finding 1 (LIST-017). The load check counts the tokenizer's tokens, not
/// its ids: a vocabulary whose ids are sparse (nine tokens, nine rows, but
/// "counts" is id 100) passes it. The library then panics on every skill
/// and query holding "counts": caught, so the server answers, but each
/// panic is printed raw to stderr (unbounded, outside SRV-010), those
/// skills silently have no vector, and `problems` says nothing — the owner
/// is never told the model is broken.
#[test]
fn a_tokenizer_whose_ids_run_past_the_table_is_refused_at_load() {
    let root = catalog();
    let dir = tempfile::tempdir().unwrap();
    let mut ids = dense_ids();
    ids[5] = 100; // "counts"
    model(dir.path(), &ids, WORDS.len() + 1, &[]);
    let (mut s, log) = start_with_model(root.path(), dir.path());
    let all = s.tool("skill_list", json!({}));
    let page = s.tool("skill_list", json!({"query": "expression counts"}));
    assert_eq!(
        names(&page).first().map(String::as_str),
        Some("rna-seq"),
        "{page}"
    );
    let stderr = std::fs::read_to_string(log.path()).unwrap();
    let said = embedding_problems(&all);
    assert!(
        said.iter().any(|d| d.contains("LIST-017")) && !stderr.contains("panicked"),
        "a tokenizer id (100) past the table's 8 rows is accepted: problems {said:?}; stderr:\n{stderr}"
    );
}

/// Finding 2 (LIST-017). A `mapping` tensor switches the load check off
/// ("the library bounds it"), but the library does not: a mapping that
/// sends a token to a row past the table, or one shorter than the
/// vocabulary (a token past its end is used as a row number itself), makes
/// it panic on every text holding that token. The model is accepted
/// without a problem, the skills lose their vectors silently, and stderr
/// fills with panics.
#[test]
fn a_mapping_past_the_table_is_refused_at_load() {
    let root = catalog();
    let past: Vec<u8> = [0i64, 1, 2, 3, 4, 5, 999, 7]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let short: Vec<u8> = [0i64, 1].iter().flat_map(|x| x.to_le_bytes()).collect();
    let cases = [
        (
            "a row past the table",
            WORDS.len() + 1,
            ("mapping", "I64", vec![8], past),
        ),
        (
            "a mapping shorter than the vocabulary",
            4,
            ("mapping", "I64", vec![2], short),
        ),
    ];
    for (what, rows, mapping) in cases {
        let dir = tempfile::tempdir().unwrap();
        model(dir.path(), &dense_ids(), rows, &[mapping]);
        let (mut s, log) = start_with_model(root.path(), dir.path());
        let all = s.tool("skill_list", json!({}));
        s.tool("skill_list", json!({"query": "expression counts"}));
        s.tool("skill_list", json!({"query": "keynote"}));
        let stderr = std::fs::read_to_string(log.path()).unwrap();
        let said = embedding_problems(&all);
        assert!(
            said.iter().any(|d| d.contains("LIST-017")) && !stderr.contains("panicked"),
            "{what}: accepted without a problem ({said:?}); stderr:\n{stderr}"
        );
    }
}

/// Finding 3 (LIST-017). The model's files are opened with a plain
/// `open(2)`, not the fence's `O_NONBLOCK`: a FIFO in place of
/// `tokenizer.json` (or `config.json`) blocks the boot scan forever, so
/// the server never answers `initialize` — a hang instead of a problem.
/// The fence was hardened against exactly this for skills' files.
#[test]
fn a_fifo_in_the_model_directory_does_not_hang_the_handshake() {
    let root = catalog();
    for file in ["tokenizer.json", "config.json"] {
        let dir = tempfile::tempdir().unwrap();
        model(dir.path(), &dense_ids(), WORDS.len() + 1, &[]);
        std::fs::remove_file(dir.path().join(file)).unwrap();
        nix::unistd::mkfifo(&dir.path().join(file), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let mut child = Command::new(BIN)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("SKILLS_DIR", root.path())
            .env("SKILL_MCP_EMBEDDINGS", dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, "{INIT}").unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            if let Some(Ok(line)) = BufReader::new(stdout).lines().next() {
                let _ = tx.send(line);
            }
        });
        // The hang this catches is forever; the answer takes milliseconds,
        // so the deadline only has to end the test (spec README, "Timing in
        // tests").
        let asked = Instant::now();
        let reply = rx.recv_timeout(Duration::from_secs(60));
        let _ = child.kill();
        let _ = child.wait();
        let reply = reply.unwrap_or_else(|_| {
            panic!(
                "{file} as a FIFO: no answer to initialize within 60 s (the boot blocks opening it)"
            )
        });
        eprintln!(
            "{file} as a FIFO: initialize answered in {} ms",
            asked.elapsed().as_millis()
        );
        assert!(reply.contains("\"result\""), "{reply}");
    }
}

/// Finding 4 (LIST-017, low). A model file that is no regular file — here
/// `tokenizer.json` a symlink to `/dev/zero` — is read up to the 1 GiB
/// bound before it is refused: a gigabyte of memory at boot (and again on
/// each reload, which retries a failed model) for a mistake a stat tells.
#[test]
fn a_model_file_that_is_a_device_is_refused_without_reading_a_gigabyte() {
    let root = catalog();
    let dir = tempfile::tempdir().unwrap();
    model(dir.path(), &dense_ids(), WORDS.len() + 1, &[]);
    std::fs::remove_file(dir.path().join("tokenizer.json")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("tokenizer.json")).unwrap();
    let (mut s, _log) = start_with_model(root.path(), dir.path());
    let all = s.tool("skill_list", json!({}));
    assert_eq!(embedding_problems(&all).len(), 1, "{all}");
    let peak = proc_kib(s.pid(), "VmHWM");
    assert!(
        peak < 256 * 1024,
        "a /dev/zero tokenizer.json costs {} MiB at boot",
        peak / 1024
    );
}

/// Finding 5 (FM-007, the did-you-mean of an unknown key). A key is
/// compared with each known key by edit distance over its whole length,
/// although a key more than 3 characters longer than every known key can
/// never be within the distance that is kept. YAML's explicit `? KEY` form
/// lets a key take the whole 64 KiB frontmatter: each such SKILL.md costs
/// about 40 times the scan of one of the same size, at every boot and
/// reload — a hostile author slows the catalog's start.
#[test]
fn a_long_unknown_key_costs_the_scan_no_more_than_its_bytes() {
    let hostile = tempfile::tempdir().unwrap();
    let plain = tempfile::tempdir().unwrap();
    let long = format!("descriptio{}", "n".repeat(64_000));
    for i in 0..24 {
        let name = format!("s{i}");
        for (root, fm) in [
            (hostile.path(), format!("? {long}\n: x")),
            (plain.path(), format!("metadata:\n  k: {long}")),
        ] {
            std::fs::create_dir_all(root.join(&name)).unwrap();
            std::fs::write(
                root.join(&name).join("SKILL.md"),
                format!("---\nname: {name}\ndescription: d\n{fm}\n---\nbody\n"),
            )
            .unwrap();
        }
    }
    let served = |root: &Path| {
        let t = Instant::now();
        let mut s = Session::start(Path::new(BIN), &[("SKILLS_DIR", root.to_str().unwrap())]);
        let list = s.tool("skill_list", json!({"limit": 1}));
        assert_eq!(list["total"], json!(24), "{list}");
        t.elapsed()
    };
    let (p, h) = (served(plain.path()), served(hostile.path()));
    eprintln!("24 SKILL.md of 64 KB: served in {p:?} as metadata, {h:?} as an unknown key");
    // The cost is the behaviour under test, so it is bounded, generously
    // (spec README, "Timing in tests"): the unknown keys are served in
    // about 0.45 s (five times the metadata's 0.08 s), and the quadratic
    // did-you-mean took 13–15 s. The bound, 3.4 s here, is over seven
    // times the one and a quarter of the other, and grows with the
    // machine's pace as the plain tree measures it.
    assert!(
        h < p * 5 + Duration::from_secs(3),
        "24 SKILL.md with a 64 KB unknown key took {h:?} to serve, the same bytes as metadata {p:?}"
    );
}

/// Finding 6 (SRV-010, RELOAD-003). Problems are logged through the one
/// escaping rule (`\n`, `\u{1b}` escaped, one line), but a refused
/// rescan's line is logged raw (`tracing::warn!("{why}")` in
/// src/reload.rs): a root whose name holds a newline, once unreadable,
/// writes a forged second log line ("  INFO … all skills served") to
/// whoever reads stderr. (The escape itself is neutralized by the log
/// formatter; the newline is not.)
#[test]
fn a_refused_rescan_is_one_escaped_line_whatever_the_root_is_called() {
    let base = tempfile::tempdir().unwrap();
    let root = base
        .path()
        .join("r\n  INFO skill_mcp forged \u{1b}[32mall skills served");
    std::fs::create_dir_all(&root).unwrap();
    skill(&root, "a");
    let log = tempfile::NamedTempFile::new().unwrap();
    let mut s = Session::start_logging(
        Command::new(BIN),
        &[("SKILLS_DIR", root.to_str().unwrap())],
        Stdio::from(log.reopen().unwrap()),
    );
    s.tool("skill_list", json!({}));
    std::fs::rename(&root, base.path().join("gone")).unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(s.pid() as i32),
        nix::sys::signal::Signal::SIGHUP,
    )
    .unwrap();
    let t = Instant::now();
    let stderr = loop {
        let text = std::fs::read_to_string(log.path()).unwrap();
        if text.contains("was not swapped in") || t.elapsed() > Duration::from_secs(10) {
            break text;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        stderr.contains("was not swapped in"),
        "no refusal logged:\n{stderr}"
    );
    assert!(
        !stderr.contains('\u{1b}') && !stderr.contains("\n  INFO skill_mcp forged"),
        "the refusal line is logged raw:\n{stderr}"
    );
}

/// Finding 7 (SRV-010, low). The log's escaping takes only `Cc` controls:
/// a bidirectional override (U+202E) in a directory's name reaches the
/// terminal as it is, and reorders the rest of the line it is shown on
/// ("Trojan Source"). `skill-mcp check` neutralizes the same characters
/// (CHECK-006); the serving log does not.
#[test]
fn a_bidirectional_override_in_a_path_is_not_logged_raw() {
    let root = tempfile::tempdir().unwrap();
    skill(root.path(), "a");
    std::fs::create_dir_all(root.path().join("notes\u{202e}dm.LLIKS")).unwrap();
    let log = tempfile::NamedTempFile::new().unwrap();
    let mut s = Session::start_logging(
        Command::new(BIN),
        &[("SKILLS_DIR", root.path().to_str().unwrap())],
        Stdio::from(log.reopen().unwrap()),
    );
    let all = s.tool("skill_list", json!({}));
    assert_eq!(all["problems"].as_array().unwrap().len(), 1, "{all}");
    drop(s);
    let stderr = std::fs::read_to_string(log.path()).unwrap();
    assert!(stderr.contains("no-skill-md"), "{stderr}");
    assert!(
        !stderr.contains('\u{202e}'),
        "a right-to-left override is logged raw:\n{stderr:?}"
    );
}

/// Finding 8 (LIST-017 beside CONF-009, low). `SKILL_MCP_EMBEDDINGS` set to
/// `~/models/potion` (the owner's model is right there, under `HOME`):
/// `~` is not expanded, the directory does not exist, and the problem says
/// "~/models/potion has no tokenizer.json" — as if the directory were
/// there with a file missing. Roots written with `~` say that `~` is not
/// expanded (CONF-009); the model's directory, written the same way in the
/// same client configuration, neither says so nor that it does not exist.
#[test]
fn a_model_directory_written_with_a_tilde_says_it_does_not_exist() {
    let root = catalog();
    let home = tempfile::tempdir().unwrap();
    model(
        &home.path().join("models/potion"),
        &dense_ids(),
        WORDS.len() + 1,
        &[],
    );
    let mut s = Session::start_command(
        {
            let mut c = Command::new(BIN);
            c.current_dir(home.path());
            c
        },
        &[
            ("SKILLS_DIR", root.path().to_str().unwrap()),
            ("HOME", home.path().to_str().unwrap()),
            ("SKILL_MCP_EMBEDDINGS", "~/models/potion"),
        ],
    );
    let all = s.tool("skill_list", json!({}));
    let said = embedding_problems(&all);
    assert_eq!(said.len(), 1, "{all}");
    assert!(
        said[0].contains("not expanded")
            || said[0].contains("does not exist")
            || said[0].contains("No such file"),
        "a model directory that does not exist is said to lack a file: {}",
        said[0]
    );
}
