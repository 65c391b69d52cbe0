//! The `skill-mcp` binary: with no arguments it serves over stdio, so an
//! MCP client's configuration stays just `skill-mcp`.

use std::process::ExitCode;

use clap::Parser;
use rmcp::ServiceExt;
use skill_mcp::config::{self, Config};
use skill_mcp::server::{Served, SkillServer};

/// Serves a directory of Agent Skills over MCP (stdio).
///
/// Roots come from MCP_SKILLS_PATH, else SKILLS_DIR (both ":"-separated),
/// else the bundled skills/ directory. MCP_SKILL_RUN narrows what may run.
#[derive(Parser)]
#[command(name = "skill-mcp", version, about)]
struct Cli {}

fn main() -> ExitCode {
    let _cli = Cli::parse();
    // stdout is the protocol channel; every log line goes to stderr.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("SKILL_MCP_LOG")
                .unwrap_or_else(|_| "warn".into()),
        )
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("skill-mcp: could not start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(serve())
}

async fn serve() -> ExitCode {
    let config = Config::from_process(config::default_skills_dir());
    let served = Served::boot(config);
    tracing::info!(
        skills = served.catalog.skills.len(),
        problems = served.problems.len(),
        "catalog scanned"
    );
    let service = match SkillServer::new(served)
        .serve(rmcp::transport::stdio())
        .await
    {
        Ok(s) => s,
        Err(e) => {
            // A client that hangs up before initializing is not an error
            // worth a backtrace; say what happened and leave.
            eprintln!("skill-mcp: the session did not start: {e}");
            return ExitCode::SUCCESS;
        }
    };
    match service.waiting().await {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("skill-mcp: the session ended with an error: {e}");
            ExitCode::FAILURE
        }
    }
}
