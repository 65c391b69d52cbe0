//! The README's commands and code blocks, read the way a newcomer reads
//! them (spec DOC-001): the tests that run a README command take it from
//! here, so the README cannot say one thing while a test runs another.

use std::io::BufRead;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// One command of the README: a line of a ```bash block (its trailing
/// ` # comment` dropped), or a `$ ` line of a ```console block with the
/// output printed under it.
#[derive(Debug, Clone)]
pub struct Line {
    pub command: String,
    pub output: Option<String>,
}

pub fn readme() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The bodies of the fenced blocks whose info string is `lang`, in order.
pub fn blocks(doc: &str, lang: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<(bool, String)> = None;
    for line in doc.lines() {
        match &mut current {
            None => {
                if let Some(info) = line.strip_prefix("```") {
                    current = Some((info.trim() == lang, String::new()));
                }
            }
            Some((wanted, body)) => {
                if line.starts_with("```") {
                    if *wanted {
                        out.push(std::mem::take(body));
                    }
                    current = None;
                } else {
                    body.push_str(line);
                    body.push('\n');
                }
            }
        }
    }
    out
}

/// Every command of `doc`, ```bash lines and ```console `$ ` lines alike.
pub fn commands(doc: &str) -> Vec<Line> {
    let mut out = Vec::new();
    for block in blocks(doc, "bash") {
        for line in block.lines() {
            // A comment starts at ` #`; a `#` inside a word (a flake's
            // `github:…#with-python`) is part of the command.
            let command = line.split(" #").next().unwrap_or_default().trim();
            if !command.is_empty() {
                out.push(Line {
                    command: command.to_owned(),
                    output: None,
                });
            }
        }
    }
    for block in blocks(doc, "console") {
        for chunk in block.split("$ ").filter(|c| !c.is_empty()) {
            let (command, output) = chunk.split_once('\n').unwrap_or((chunk, ""));
            out.push(Line {
                command: command.trim().to_owned(),
                output: Some(output.to_owned()),
            });
        }
    }
    out
}

/// The one README command that starts with `prefix` (given once or, the
/// same command, in several places).
pub fn command(prefix: &str) -> String {
    let mut all: Vec<String> = commands(&readme())
        .into_iter()
        .map(|l| l.command)
        .filter(|c| c.starts_with(prefix))
        .collect();
    all.sort();
    all.dedup();
    assert_eq!(
        all.len(),
        1,
        "the README should hold exactly one command starting {prefix:?}: {all:?}"
    );
    all.into_iter().next().unwrap_or_default()
}

/// What the README's commands stand for, replaced by what a test has:
/// a folder of skills for `/path/to/your/skills`, the built binary for the
/// installed one and for `target/release/skill-mcp`.
pub fn substitute(word: &str, skills: &Path, bin: &Path) -> String {
    match word {
        "/path/to/your/skills" => skills.display().to_string(),
        "/path/to/skill-mcp/target/release/skill-mcp" => bin.display().to_string(),
        _ => word
            .replace(
                "SKILLS_DIR=/path/to/your/skills",
                &format!("SKILLS_DIR={}", skills.display()),
            )
            .replace(
                "/path/to/skill-mcp/target/release/skill-mcp",
                &bin.display().to_string(),
            ),
    }
}

/// A README line run by bash exactly as written, in a cleared environment
/// whose `HOME` is `home` (so `~/…` is the test's) and whose `PATH` finds
/// the built binary as `skill-mcp`, as an installed one would be.
pub fn shell(line: &str, home: &Path) -> Command {
    let bin = home.join(".bin");
    if !bin.exists() {
        std::fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink(super::BIN, bin.join("skill-mcp")).unwrap();
    }
    let mut path = std::ffi::OsString::from(bin.as_os_str());
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(line)
        .current_dir(home)
        .env_clear()
        .env("PATH", path)
        .env("HOME", home);
    cmd
}

/// Runs a README line with [`shell`] and waits for it.
pub fn run(line: &str, home: &Path) -> Output {
    shell(line, home).output().unwrap()
}

/// The first line of the README's token command, run as written in `home`
/// (the file it writes is the token its serving commands read).
pub fn make_token(home: &Path) -> String {
    let line = command("(umask 077; openssl rand");
    let o = run(&line, home);
    assert!(
        o.status.success(),
        "{line}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let path = home.join(".skill-mcp-token");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{line} wrote no {}: {e}", path.display()));
    text.lines().next().unwrap_or_default().to_owned()
}

/// A server started by one of the README's serving commands, its group
/// killed when dropped.
pub struct Served {
    pub child: Child,
    pub port: u16,
    /// What it said on stderr up to the line saying where it listens.
    pub said: Vec<String>,
    lines: Receiver<String>,
}

impl Served {
    /// A README serving command (`SKILLS_DIR=… skill-mcp --http IP:8080 …`)
    /// run by bash as written ([`shell`]), with two substitutions: the
    /// folder of skills for `/path/to/your/skills`, and port 0 for 8080, so
    /// the server takes a free port (which it prints, and the test reads)
    /// rather than one another test or program may hold. `also` replaces
    /// further words (a host name the machine is reached by).
    pub fn start(line: &str, skills: &Path, home: &Path, also: &[(&str, &str)]) -> Served {
        assert_eq!(
            line.matches(":8080 ").count(),
            1,
            "one address on port 8080: {line}"
        );
        let mut run = line
            .replace("/path/to/your/skills", &skills.display().to_string())
            .replace(":8080 ", ":0 ");
        for (from, to) in also {
            assert!(run.contains(from), "{line} has no {from:?}");
            run = run.replace(from, to);
        }
        let mut cmd = shell(&run, home);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = cmd.spawn().expect("bash runs the README's command");
        let stderr = child.stderr.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                let _ = tx.send(line);
            }
        });
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut said = Vec::new();
        let port = loop {
            let line = lines
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .unwrap_or_else(|_| panic!("{run}: never said where it listens: {said:#?}"));
            said.push(line.clone());
            if let Some((_, at)) = line.split_once("listening on http://") {
                break at
                    .split('/')
                    .next()
                    .and_then(|a| a.rsplit(':').next())
                    .and_then(|p| p.parse::<u16>().ok())
                    .unwrap_or_else(|| panic!("no port in {line:?}"));
            }
        };
        Served {
            child,
            port,
            said,
            lines,
        }
    }

    /// What it says on stderr within `within` from now.
    pub fn says_within(&self, within: Duration) -> Vec<String> {
        let deadline = Instant::now() + within;
        let mut out = Vec::new();
        while let Ok(line) = self
            .lines
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            out.push(line);
        }
        out
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = killpg(Pid::from_raw(self.child.id() as i32), Signal::SIGKILL);
        let _ = self.child.wait();
    }
}
