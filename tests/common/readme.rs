//! The README's commands and code blocks, read the way a newcomer reads
//! them (spec DOC-001): the tests that run a README command take it from
//! here, so the README cannot say one thing while a test runs another.

use std::path::Path;

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

/// The one README command that starts with `prefix`.
pub fn command(prefix: &str) -> String {
    let all: Vec<String> = commands(&readme())
        .into_iter()
        .map(|l| l.command)
        .filter(|c| c.starts_with(prefix))
        .collect();
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
