//! The MCP surface: rmcp handlers that translate between MCP and one
//! snapshot. The rules live in `catalog`, `fence`, `grant` and `run`, the
//! answers in `snapshot`; this layer holds none of its own. Each request
//! takes the current snapshot once and answers from it alone, so a reload
//! swapping in the next one mid-request changes nothing it says. Tool
//! arguments decode through `echo::Args`, so even a refusal worded by
//! serde quotes no argument whole (HARD-005).

mod lists;
mod skills;

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{
    GetPromptRequestParams, GetPromptResponse, GetSkillRequestParams, GetSkillResult,
    Implementation, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListSkillsResult, PaginatedRequestParams, ReadResourceDirectoryRequestParams,
    ReadResourceDirectoryResult, ReadResourceRequestParams, ReadResourceResponse, ResourceTemplate,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, tool, tool_handler, tool_router};

use crate::echo::Args;
use crate::reload::Live;
use crate::run::RunLock;
use crate::shapes::*;
use crate::snapshot::Snapshot;

/// The rmcp server: the tool router over the live snapshot.
#[derive(Clone)]
pub struct SkillServer {
    live: Arc<Live>,
    run_lock: Arc<RunLock>,
    tool_router: ToolRouter<SkillServer>,
}

impl SkillServer {
    /// The live snapshot holder, for reloading.
    pub fn live(&self) -> Arc<Live> {
        Arc::clone(&self.live)
    }

    /// A server whose runs end when `hangup` turns true (the client left).
    pub fn with_hangup(
        snapshot: Snapshot,
        hangup: tokio::sync::watch::Receiver<bool>,
    ) -> SkillServer {
        let mut s = SkillServer::new(snapshot);
        s.run_lock = Arc::new(RunLock::new(Some(hangup)));
        s
    }

    pub fn new(snapshot: Snapshot) -> SkillServer {
        SkillServer {
            live: Arc::new(Live::new(snapshot)),
            run_lock: Arc::new(RunLock::new(None)),
            tool_router: Self::tool_router(),
        }
    }
}

#[tool_router]
impl SkillServer {
    /// List every Agent Skill this server found: name, description, when to use it, how many files it
    /// bundles, and exactly which scripts (if any) may be run with skill_run here. Also reports, under
    /// "problems", everything that could not be served and why, so an empty list is never a mystery.
    #[tool(
        name = "skill_list",
        annotations(
            title = "List skills",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn skill_list(&self) -> Json<SkillList> {
        let served = self.live.current();
        let mut list = served.list();
        list.reload_refused = self.live.refused();
        Json(list)
    }

    /// Load one skill's SKILL.md instructions verbatim, plus a manifest of the files it bundles. Referenced
    /// files are not inlined: read them with skill_file.
    #[tool(
        name = "skill_load",
        annotations(
            title = "Load a skill",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn skill_load(
        &self,
        Parameters(Args(args)): Parameters<Args<NameArgs>>,
    ) -> Result<Json<SkillLoad>, String> {
        self.live.current().load(&args.name).map(Json)
    }

    /// Read files a skill bundles: "path" for one, or "paths" for up to 8 in one call (a SKILL.md usually
    /// points at several). Paths are relative to the skill's own directory, as skill_load lists them. Text
    /// comes back as text, anything else as base64 with its media type; at most 1 MiB per file (truncated says
    /// so) and 4 MiB per call.
    #[tool(
        name = "skill_file",
        annotations(
            title = "Read skill files",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn skill_file(
        &self,
        Parameters(Args(args)): Parameters<Args<FileArgs>>,
    ) -> Result<Json<FileRead>, String> {
        let served = self.live.current();
        tokio::task::spawn_blocking(move || served.file(args))
            .await
            .map_err(|e| format!("the read could not finish: {e}"))?
            .map(Json)
    }

    /// Run a script the skill DECLARES (and this registration grants), with an argument array passed
    /// verbatim — never through a shell. Without confirm: true it starts nothing and returns a dry-run
    /// preview of exactly what would run; with it, returns the exit code and the captured output (a
    /// non-zero exit is a normal result). One run at a time; each is bounded by its timeout.
    #[tool(
        name = "skill_run",
        annotations(
            title = "Run a declared skill script",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn skill_run(
        &self,
        Parameters(Args(args)): Parameters<Args<RunArgs>>,
    ) -> Result<Json<RunAnswer>, String> {
        let served = self.live.current();
        served.run(&self.run_lock, args).await.map(Json)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for SkillServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .enable_prompts_list_changed()
                .enable_resources()
                .enable_resources_list_changed()
                .enable_skills_with_directory_read()
                .build(),
        )
            .with_server_info(Implementation::new("skill-mcp", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Serves Agent Skills. Call skill_list to see them, skill_load to read one's instructions, \
                 skill_file to read the files they refer to, and follow them.",
            )
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        lists::prompts_page(
            &self.live.current(),
            request.as_ref().and_then(|r| r.cursor.as_deref()),
        )
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        lists::prompt(&self.live.current(), &request.name).map(Into::into)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        lists::resources_page(
            &self.live.current(),
            request.as_ref().and_then(|r| r.cursor.as_deref()),
        )
    }

    async fn list_resource_templates(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new("skill://{name}/{path}", "skill-file")
                .with_title("A file bundled by a skill")
                .with_description("Any file of a served skill; path is relative to the skill's directory, percent-encoded per segment."),
        ]))
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, McpError> {
        let served = self.live.current();
        tokio::task::spawn_blocking(move || {
            skills::list(&served, request.as_ref().and_then(|r| r.cursor.as_deref()))
        })
        .await
        .map_err(|e| McpError::internal_error(format!("skills/list could not finish: {e}"), None))?
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, McpError> {
        let served = self.live.current();
        tokio::task::spawn_blocking(move || skills::get(&served, &request.uri))
            .await
            .map_err(|e| {
                McpError::internal_error(format!("skills/get could not finish: {e}"), None)
            })?
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, McpError> {
        let served = self.live.current();
        skills::directory(&served, &request.uri)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let served = self.live.current();
        tokio::task::spawn_blocking(move || lists::read_resource(&served, &request.uri))
            .await
            .map_err(|e| McpError::internal_error(format!("the read could not finish: {e}"), None))?
            .map(Into::into)
    }
}
