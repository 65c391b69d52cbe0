//! rmcp's `SkillCatalog` served over stdio: the peer the benchmark measures
//! the Skills extension against. Built from the handler shape rmcp's own
//! `skill_catalog` module documents — the catalog answers `skills/list`,
//! `skills/get`, `resources/directory/read` and `resources/read` — and
//! nothing else, so its figures are rmcp's.
//!
//! Usage: `SKILLS_DIR=/path/to/skills skill-mcp-rmcp-peer`. The catalog is
//! loaded (every byte read and hashed) before the server answers
//! `initialize`, as `SkillCatalog::from_dir` does.

use std::process::ExitCode;
use std::sync::Arc;

use rmcp::handler::server::skill_catalog::SkillCatalog;
use rmcp::model::{
    GetSkillRequestParams, GetSkillResult, Implementation, ListResourcesResult, ListSkillsResult,
    PaginatedRequestParams, ReadResourceDirectoryRequestParams, ReadResourceDirectoryResult,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
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

#[tokio::main]
async fn main() -> ExitCode {
    let Some(root) = std::env::var_os("SKILLS_DIR") else {
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
    let service = match (Peer { skills }).serve(rmcp::transport::stdio()).await {
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
