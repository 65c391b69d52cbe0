//! Command line of the conformance runner (see `conformance/FORMAT.md`, *Running*).

use std::path::PathBuf;

use clap::{Parser, ValueEnum};

use crate::case::Profile;

/// Drives an MCP server over stdio through the conformance cases and
/// compares its replies with each case's golden transcript.
#[derive(Parser, Debug)]
#[command(name = "skill-mcp-conformance", version, about, long_about = None)]
pub struct Cli {
    /// The server command, split like a POSIX shell would (quotes respected,
    /// no expansion); started once per case and mode.
    #[arg(long, value_name = "CMD ARGS", required_unless_present = "list")]
    pub server: Option<String>,

    /// The suite directory (default: the suite installed beside the runner,
    /// else the checkout's `conformance/`).
    #[arg(long, value_name = "DIR")]
    pub cases: Option<PathBuf>,

    /// Run only these case IDs (comma separated; may be repeated).
    #[arg(long, value_name = "ID,ID", value_delimiter = ',')]
    pub only: Vec<String>,

    /// List the selected cases and exit.
    #[arg(long, conflicts_with = "bless")]
    pub list: bool,

    /// Report format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// Number of case×mode units run at once.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = parse_jobs)]
    pub jobs: usize,

    /// Record golden.json for the selected cases instead of comparing.
    #[arg(long)]
    pub bless: bool,

    /// What to check: `core`, the design of record's rules by hand-written
    /// expectations; `full`, everything, by recorded goldens; `skills`, any
    /// MCP Skills extension (SEP-2640) server, by the extension's own
    /// sentences (spec/sep-2640.md) on fixtures whose digests the runner
    /// computes (conformance/sep-2640/).
    #[arg(long, value_enum, default_value_t = Profile::Full)]
    pub profile: Profile,

    /// The skills profile: a JSON file saying how the server is given its
    /// skills directory (an environment variable, arguments, a
    /// configuration file; conformance/sep-2640/README.md, *Adapters*).
    /// Default: SKILLS_DIR set to the fixture.
    #[arg(long, value_name = "FILE")]
    pub adapter: Option<PathBuf>,

    /// The skills profile over Streamable HTTP instead of stdio: the
    /// server is still started for each case by `--server` (and the
    /// adapter, with its `http` part), and spoken to at URL — an
    /// `http://` URL, where `${PORT}` is a free port the runner picks
    /// (also replaced in `--server` and the adapter), or `stderr`: the
    /// first http:// URL the server writes on its stderr.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,

    /// A Markdown list of the cases this server is known to fail (a table
    /// whose rows start `| ID |`): the run passes exactly when the failing
    /// cases are the listed ones.
    #[arg(long, value_name = "FILE", conflicts_with = "bless")]
    pub known_failures: Option<PathBuf>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
    Junit,
}

fn parse_jobs(s: &str) -> Result<usize, String> {
    let n: usize = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a whole number"))?;
    if n == 0 || n > 256 {
        return Err(format!("--jobs must be between 1 and 256, got {n}"));
    }
    Ok(n)
}

/// Splits the `--server` string like a POSIX shell: words separated by
/// blanks, single and double quotes and backslashes respected, no expansion
/// of variables, globs or `~`.
pub fn split_command(s: &str) -> Result<Vec<String>, String> {
    let words = shlex::split(s)
        .ok_or_else(|| format!("--server `{s}`: unbalanced quotes or a trailing backslash"))?;
    if words.is_empty() {
        return Err("--server is empty: give the command that starts the server".to_string());
    }
    Ok(words)
}

/// Parses and normalizes the `--only` list: trimmed, empty items dropped,
/// duplicates removed, order kept.
pub fn only_ids(only: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for id in only {
        let id = id.trim();
        if !id.is_empty() && !out.iter().any(|o| o == id) {
            out.push(id.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_plain_words() {
        assert_eq!(
            split_command("target/debug/skill-mcp --flag x").unwrap(),
            vec!["target/debug/skill-mcp", "--flag", "x"]
        );
    }

    #[test]
    fn split_respects_quotes_and_backslashes() {
        assert_eq!(
            split_command(r#"srv 'a b' "c \"d\" e" f\ g"#).unwrap(),
            vec!["srv", "a b", r#"c "d" e"#, "f g"]
        );
        assert_eq!(split_command("srv ''").unwrap(), vec!["srv", ""]);
    }

    #[test]
    fn split_does_not_expand() {
        assert_eq!(
            split_command("srv $HOME ~ *.json").unwrap(),
            vec!["srv", "$HOME", "~", "*.json"]
        );
        assert_eq!(split_command("srv '$HOME'").unwrap(), vec!["srv", "$HOME"]);
    }

    #[test]
    fn split_rejects_unbalanced_and_empty() {
        assert!(
            split_command("srv 'oops")
                .unwrap_err()
                .contains("unbalanced")
        );
        assert!(split_command("srv \"oops").is_err());
        assert!(split_command("   ").unwrap_err().contains("empty"));
        assert!(split_command("").is_err());
    }

    #[test]
    fn jobs_bounds() {
        assert_eq!(parse_jobs("4").unwrap(), 4);
        assert!(parse_jobs("0").is_err());
        assert!(parse_jobs("x").is_err());
        assert!(parse_jobs("257").is_err());
    }

    #[test]
    fn only_dedups_and_trims() {
        let v = vec![
            "A-001".to_string(),
            " B-002".to_string(),
            "A-001".into(),
            "".into(),
        ];
        assert_eq!(only_ids(&v), vec!["A-001", "B-002"]);
    }

    #[test]
    fn cli_parses() {
        let c = Cli::try_parse_from([
            "x",
            "--server",
            "srv a",
            "--only",
            "A-001,B-002",
            "--jobs",
            "3",
            "--format",
            "junit",
        ])
        .unwrap();
        assert_eq!(c.server.as_deref(), Some("srv a"));
        assert_eq!(c.only, vec!["A-001", "B-002"]);
        assert_eq!(c.jobs, 3);
        assert_eq!(c.format, Format::Junit);
        assert!(
            Cli::try_parse_from(["x"]).is_err(),
            "--server is required without --list"
        );
        assert!(Cli::try_parse_from(["x", "--list"]).is_ok());
    }
}
