//! rmcp's `SkillCatalog` served over stdio: the peer the benchmark measures
//! the Skills extension against. Built from the handler shape rmcp's own
//! `skill_catalog` module documents — the catalog answers `skills/list`,
//! `skills/get`, `resources/directory/read` and `resources/read` — and
//! nothing else, so its figures are rmcp's.
//!
//! Usage: `SKILLS_DIR=/path/to/skills skill-mcp-rmcp-peer` (stdio), or
//! `skill-mcp-rmcp-peer --http 127.0.0.1:PORT [ROOT]` (HTTP; ROOT, else
//! SKILLS_DIR; port 0 picks one). The catalog is loaded (every byte read and
//! hashed) before the server answers `initialize`, as
//! `SkillCatalog::from_dir` does.
//!
//! Over HTTP the same handler is served by rmcp's own
//! `StreamableHttpService` with its default session manager
//! (`LocalSessionManager`) and `json_response` on, on hyper's HTTP/1 server
//! with TCP_NODELAY on every accepted socket — the transport the server's
//! `--http` is built on (its src/http), so the benchmark compares the two
//! on equal terms. Once bound it says `listening on http://IP:PORT/mcp` on
//! stderr, the line the benchmark reads the server's address from.
//!
//! In both modes tokio's runtime has two worker threads, as the server's
//! has (`worker_threads(2)` in its src/main.rs), so the comparison does not
//! depend on how many cores the machine has (tokio's default is one worker
//! a core). The blocking pool is left at tokio's default: after the boot
//! the catalog answers from memory, and only the stdio transport's reads
//! and writes use it.

use std::ffi::OsString;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use rmcp::handler::server::skill_catalog::SkillCatalog;
use rmcp::model::{
    GetSkillRequestParams, GetSkillResult, Implementation, ListResourcesResult, ListSkillsResult,
    PaginatedRequestParams, ReadResourceDirectoryRequestParams, ReadResourceDirectoryResult,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

#[derive(Clone)]
struct Peer {
    skills: Arc<SkillCatalog>,
}

impl ServerHandler for Peer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_resources()
                .enable_skills_with_directory_read()
                .build(),
        )
        .with_server_info(Implementation::new("rmcp-skill-catalog", "3.11.0"))
    }

    async fn list_skills(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        Ok(self.skills.list_skills())
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        self.skills.get_skill(&request.uri)
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        self.skills.read_resource_directory(&request.uri)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(self.skills.resources()))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.skills
            .read_resource(&request.uri)
            .map(Into::into)
            .ok_or_else(|| ErrorData::resource_not_found(request.uri, None))
    }
}

/// What the command line asked for: stdio on SKILLS_DIR (no arguments, as
/// before), or HTTP at an address on one root.
enum Mode {
    Stdio,
    Http(SocketAddr, Option<OsString>),
}

fn mode() -> Result<Mode, String> {
    let mut args = std::env::args_os().skip(1);
    let Some(first) = args.next() else {
        return Ok(Mode::Stdio);
    };
    if first != "--http" {
        return Err(format!("unexpected argument {}", first.to_string_lossy()));
    }
    let addr = args
        .next()
        .ok_or("--http needs an address, e.g. 127.0.0.1:0")?;
    let addr = addr
        .to_str()
        .and_then(|a| a.parse::<SocketAddr>().ok())
        .ok_or_else(|| format!("--http {}: not an IP:PORT", addr.to_string_lossy()))?;
    let root = args.next();
    if args.next().is_some() {
        // `SkillCatalog::from_dir` takes one root.
        return Err("--http serves one ROOT (rmcp's SkillCatalog has one root)".into());
    }
    Ok(Mode::Http(addr, root))
}

/// Two workers in either mode, as the server (see the module's doc).
#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    let mode = match mode() {
        Ok(m) => m,
        Err(e) => {
            eprintln!("skill-mcp-rmcp-peer: error: {e}");
            eprintln!(
                "usage: SKILLS_DIR=ROOT skill-mcp-rmcp-peer | skill-mcp-rmcp-peer --http IP:PORT [ROOT]"
            );
            return ExitCode::from(2);
        }
    };
    let root = match &mode {
        Mode::Http(_, Some(root)) => Some(root.clone()),
        _ => std::env::var_os("SKILLS_DIR"),
    };
    let Some(root) = root else {
        eprintln!("skill-mcp-rmcp-peer: set SKILLS_DIR to the skills directory");
        return ExitCode::from(2);
    };
    let skills = match SkillCatalog::from_dir(root) {
        Ok(c) => Arc::new(c),
        Err(e) => {
            eprintln!("skill-mcp-rmcp-peer: {e}");
            return ExitCode::FAILURE;
        }
    };
    let addr = match mode {
        Mode::Stdio => return stdio(Peer { skills }).await,
        Mode::Http(addr, _) => addr,
    };
    match http(Peer { skills }, addr).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("skill-mcp-rmcp-peer: error: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn stdio(peer: Peer) -> ExitCode {
    let service = match peer.serve(rmcp::transport::stdio()).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("skill-mcp-rmcp-peer: the session did not start: {e}");
            return ExitCode::FAILURE;
        }
    };
    match service.waiting().await {
        Ok(_) => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}

/// rmcp's StreamableHttpService as its docs and its hyper example show it,
/// on hyper's HTTP/1 server: one task per connection, until killed. Every
/// path is answered by rmcp (the example routes none); the benchmark posts
/// to /mcp.
async fn http(peer: Peer, addr: SocketAddr) -> std::io::Result<()> {
    let rmcp = StreamableHttpService::new(
        move || Ok(peer.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default().with_json_response(true),
    );
    let service = TowerToHyperService::new(rmcp);
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    eprintln!("skill-mcp-rmcp-peer: listening on http://{bound}/mcp");
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of descriptors, most often: wait, then accept again.
                eprintln!("skill-mcp-rmcp-peer: could not accept a connection: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
        };
        // As the server does (HTTP-013): an answer goes out in several
        // writes, each waiting on the client's delayed ACK with Nagle on.
        let _ = stream.set_nodelay(true);
        let service = service.clone();
        tokio::spawn(async move {
            // hyper as the server sets it up (its header timeout and head
            // bound, HTTP-006/HTTP-008), so both pay the same per-connection
            // timer and the comparison is of what is above the transport.
            let _ = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(std::time::Duration::from_secs(30))
                .max_buf_size(64 * 1024)
                .max_header_size(64 * 1024)
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
