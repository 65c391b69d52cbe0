//! The MCP surface: rmcp handlers that translate between MCP and one
//! snapshot. The rules live in `catalog`, `fence`, `grant` and `run`, the
//! answers in `snapshot`; this layer holds none of its own. Each request
//! takes the current snapshot once and answers from it alone, so a reload
//! swapping in the next one mid-request changes nothing it says. Tool
//! arguments decode through `echo::Args`, so even a refusal worded by
//! serde quotes no argument whole (HARD-005).

mod approve;
mod listen;
mod lists;
mod refusal;
mod skills;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{
    CallToolResult, ContentBlock, GetPromptRequestParams, GetPromptResponse, GetSkillRequestParams,
    GetSkillResult, Implementation, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListSkillsResult, PaginatedRequestParams, ProgressNotificationParam,
    ReadResourceDirectoryRequestParams, ReadResourceDirectoryResult, ReadResourceRequestParams,
    ReadResourceResponse, ResourceTemplate, ServerCapabilities, ServerConfig, SubscriptionFilter,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, tool, tool_handler, tool_router};

use crate::echo::{Args, progress_token_refusal};
use crate::offer::Offer;
use crate::reload::{Live, Peers};
use crate::run::{RunLock, Watch};
use crate::shapes::*;
use crate::skills_ext::Reach;
use crate::snapshot::{CatalogIndex, Serialized, Snapshot};

/// The rmcp server: the tool router over the live snapshot.
#[derive(Clone)]
pub struct SkillServer {
    live: Arc<Live>,
    run_lock: Arc<RunLock>,
    /// Shared, not copied: rmcp clones the handler for every session and
    /// every stateless HTTP request (HTTP-002), and a copied router is a
    /// map of every tool's schemas and metadata.
    tool_router: Arc<ToolRouter<SkillServer>>,
    /// Where a session's peer is kept for reload's notifications, when
    /// sessions come and go (HTTP-010).
    peers: Option<Arc<Peers>>,
    /// What this process offers: whether `skill_run` is listed, and when
    /// a confirmed run asks a human first and for how long (RUN-028,
    /// HTTP-009).
    offer: Offer,
    /// Confirmed runs waiting for a person's approval, shared by every
    /// session (RUN-028, `MAX_PENDING_APPROVALS`).
    approvals: Arc<tokio::sync::Semaphore>,
}

impl SkillServer {
    /// The live snapshot holder, for reloading.
    pub fn live(&self) -> Arc<Live> {
        Arc::clone(&self.live)
    }

    /// A server whose runs end when `hangup` turns true (the client left).
    pub(crate) fn with_hangup(
        snapshot: Snapshot,
        offer: Offer,
        hangup: tokio::sync::watch::Receiver<bool>,
    ) -> SkillServer {
        let mut s = SkillServer::new(snapshot, offer);
        s.run_lock = Arc::new(RunLock::new(Some(hangup)));
        s
    }

    /// The router over `snapshot`, offering what `offer` offers.
    pub fn new(snapshot: Snapshot, offer: Offer) -> SkillServer {
        let mut tool_router = plain_schemas(Self::tool_router());
        if !offer.runs() {
            // No `skill_run` in `tools/list` where no run is offered
            // (HTTP-009): over HTTP, runs are the owner's to turn on.
            tool_router.map.remove("skill_run");
        }
        SkillServer {
            live: Arc::new(Live::new(snapshot, offer)),
            run_lock: Arc::new(RunLock::new(None)),
            tool_router: Arc::new(tool_router),
            peers: None,
            offer,
            approvals: Arc::new(tokio::sync::Semaphore::new(
                crate::limits::MAX_PENDING_APPROVALS,
            )),
        }
    }

    /// Each session that initializes joins `peers`, so a reload reaches it.
    pub fn with_peers(mut self, peers: Arc<Peers>) -> SkillServer {
        self.peers = Some(peers);
        self
    }
}

/// The router with every tool's `inputSchema` and `outputSchema` made
/// plain JSON Schema (spec SRV-002, [`plain_schema`]), once, at boot.
fn plain_schemas(mut router: ToolRouter<SkillServer>) -> ToolRouter<SkillServer> {
    for route in router.map.values_mut() {
        let tool = &mut route.attr;
        tool.input_schema = Arc::new(plain_schema(&tool.input_schema));
        if let Some(output) = &tool.output_schema {
            tool.output_schema = Some(Arc::new(plain_schema(output)));
        }
    }
    router
}

/// A tool result made from an answer serialized beforehand: its text and
/// its structured content, exactly as `CallToolResult::structured` would
/// make them from the value, without serializing it again.
fn structured(answer: &Serialized) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(answer.text.clone())]);
    result.structured_content = Some(answer.value.clone());
    result
}

#[tool_router]
impl SkillServer {
    /// List every Agent Skill this server found: name, description, when to use it, how many files it
    /// bundles, and exactly which scripts (if any) may be run with skill_run here. Also reports, under
    /// "problems", everything that could not be served and why, so an empty list is never a mystery.
    /// A large catalog comes in pages that each fit a model's context: pass "query" (words from what
    /// you need) to find skills directly, or "cursor" (the nextCursor given) to read on.
    #[tool(
        name = "skill_list",
        meta = always_load(),
        output_schema = rmcp::handler::server::tool::schema_for_output::<SkillList>(),
        annotations(
            title = "List skills",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn skill_list(
        &self,
        Parameters(Args(args)): Parameters<Args<ListArgs>>,
    ) -> Result<CallToolResult, String> {
        let served = self.live.current();
        let refused = self.live.refused();
        let bare = args.query.is_none() && args.cursor.is_none() && args.limit.is_none();
        if bare && refused.is_none() {
            // Made once per snapshot; the same bytes every time (issue 20 §4).
            return Ok(structured(served.first_list()?));
        }
        let mut list = served.list_page(&args)?;
        list.reload_refused = refused;
        let value = serde_json::to_value(list)
            .map_err(|e| format!("the answer could not be serialized: {e}"))?;
        Ok(CallToolResult::structured(value))
    }

    /// Load one skill's SKILL.md instructions verbatim, plus a manifest of the files it bundles. Referenced
    /// files are not inlined: read them with skill_file. A manifest too large for one answer comes in
    /// pages: pass "filesCursor" (the filesCursor given) for the next.
    #[tool(
        name = "skill_load",
        meta = always_load(),
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
        self.live
            .current()
            .load_page(&args.name, args.files_cursor.as_deref())
            .map(Json)
    }

    /// Read files a skill bundles: "path" for one, or "paths" for up to 8 in one call (a SKILL.md usually
    /// points at several). Paths are relative to the skill's own directory, as skill_load lists them. Text
    /// comes back as text, anything else as base64 with its media type; at most 1 MiB per file (truncated says
    /// so) and 4 MiB per call.
    #[tool(
        name = "skill_file",
        meta = search_hint(SKILL_FILE_HINT),
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
        ctx: RequestContext<RoleServer>,
    ) -> Result<Json<FileRead>, String> {
        let served = self.live.current();
        blocking(ctx.ct.cancelled(), move |_| served.file(args))
            .await
            .map_err(|e| format!("the read {e}"))?
            .map(Json)
    }

    /// Run a script the skill DECLARES (and this registration grants), with an argument array passed
    /// verbatim — never through a shell. Without confirm: true it starts nothing and returns a dry-run
    /// preview of exactly what would run; with it, returns the exit code and the captured output (a
    /// non-zero exit is a normal result). One run at a time; each is bounded by its timeout.
    #[tool(
        name = "skill_run",
        meta = search_hint(SKILL_RUN_HINT),
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
        ctx: RequestContext<RoleServer>,
    ) -> Result<Json<RunAnswer>, String> {
        // A token every notification would repeat is bounded (RUN-026).
        if let Some(why) = ctx
            .meta
            .get("progressToken")
            .and_then(progress_token_refusal)
        {
            return Err(why);
        }
        let served = self.live.current();
        // Progress only when the client asked for it (RUN-022).
        let token = ctx.meta.get_progress_token();
        let (tx, rx) = match token {
            Some(_) => {
                let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
                (Some(tx), Some(rx))
            }
            None => (None, None),
        };
        let script = args.script.clone();
        let watch = Watch {
            // A cancelled call's process group is killed at once (RUN-021);
            // rmcp drops the reply of a cancelled request.
            cancelled: ctx.ct.cancelled(),
            progress: tx,
        };
        let forward = async {
            let (Some(token), Some(mut rx)) = (token, rx) else {
                return;
            };
            while let Some(tick) = rx.recv().await {
                let p = ProgressNotificationParam::new(token.clone(), tick.elapsed_ms as f64)
                    .with_total(tick.timeout_ms as f64)
                    .with_message(format!(
                        "{script}: running for {:.1} s of its {} s timeout",
                        tick.elapsed_ms as f64 / 1000.0,
                        tick.timeout_ms / 1000
                    ));
                let _ = ctx.peer.notify_progress(p).await;
            }
        };
        // The run drops its sender when it settles, so the forwarder ends
        // after the last tick is sent and before the reply is.
        let mode = self.offer.elicit;
        let wait = self.offer.elicit_timeout;
        let hangup = self.run_lock.hangup();
        let approvals = &self.approvals;
        let ask = |plan| approve::approve(mode, &ctx, wait, hangup, approvals, plan);
        let (answer, ()) = tokio::join!(served.run(&self.run_lock, args, watch, ask), forward);
        answer.map(Json)
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
        .with_instructions(self.live.current().instructions(instructions).to_owned())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if let Some(peers) = &self.peers {
            peers.add(context.peer);
        }
    }

    /// The lists a 2026-07-28 `subscriptions/listen` can hear of: prompts
    /// and resources, never tools or `resources/updated` (HTTP-012).
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(listen::accepted(requested))
    }

    /// Every swap's `list_changed`, until the client goes away (HTTP-012).
    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        listen::listen(&self.live, self.run_lock.hangup(), context).await
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
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, McpError> {
        let served = self.live.current();
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        // Kept digests and frontmatter need only stats: answered here,
        // without the pool's hop; anything to read goes to the pool.
        if let Some(answer) = skills::list_kept(&served, cursor) {
            return answer;
        }
        digesting(ctx.ct.cancelled(), move |stop| {
            let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
            skills::list_read(&served, cursor, stop)
        })
        .await
        .map_err(|e| McpError::internal_error(format!("skills/list {e}"), None))?
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, McpError> {
        let served = self.live.current();
        if let Some(answer) = skills::get(&served, &request.uri, Reach::Kept) {
            return answer;
        }
        digesting(ctx.ct.cancelled(), move |stop| {
            skills::get(&served, &request.uri, Reach::Read(stop)).unwrap_or_else(skills::unreached)
        })
        .await
        .map_err(|e| McpError::internal_error(format!("skills/get {e}"), None))?
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, McpError> {
        let served = self.live.current();
        skills::directory(&served, &request.uri, request.cursor.as_deref())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let served = self.live.current();
        // A file the scan saw small is read on this thread: from the page
        // cache that is cheaper than the hop to the blocking pool and back
        // (BENCHMARKS.md, "Over HTTP"). Bounded: a file grown since the
        // scan is still read for no more than MAX_FILE_BYTES (READ-004).
        if lists::read_inline(&served, &request.uri) {
            return lists::read_resource(&served, &request.uri).map(Into::into);
        }
        blocking(ctx.ct.cancelled(), move |_| {
            lists::read_resource(&served, &request.uri)
        })
        .await
        .map_err(|e| McpError::internal_error(format!("the read {e}"), None))?
        .map(Into::into)
    }
}

/// What the model is told at the handshake (LIST-009, LIST-014): how
/// many skills are served, which roots could not be read so the model can
/// tell its user (LIST-016), and either each skill's name and first
/// sentence or, when those do not fit their budget, to search.
fn instructions(served: &Snapshot) -> String {
    let n = served.catalog.skills.len();
    let mut s = format!("Serves {n} Agent Skill{}", if n == 1 { "" } else { "s" });
    match served.unreadable_roots() {
        Some(roots) => {
            s.push_str(": ");
            s.push_str(&roots);
            s.push_str(
                ". Tell the user, who can correct the path in this server's configuration \
                 (skill_list's problems give the details).",
            );
        }
        None => s.push('.'),
    }
    s.push_str(if n == 0 {
        // Nothing to call skill_load on: skill_list's problems say why.
        " skill_list's problems say what could not be served."
    } else {
        " Call skill_list to see them, skill_load to read one's instructions, \
         skill_file to read the files they refer to, and follow them."
    });
    let search = " call skill_list with a query (words from what you need) to find the right skill, \
                      or page through it with the cursor it gives.";
    match served.catalog_index() {
        // LIST-014: the whole catalog, when it fits its budget.
        CatalogIndex::Listed(index) => {
            s.push_str(" The skills:");
            s.push_str(&index);
        }
        CatalogIndex::Themes(themes) => {
            let named: Vec<String> = themes.iter().map(|(w, n)| format!("{w} ({n})")).collect();
            s.push_str(
                " The catalog is too large to list here. Words most of its skill names share: ",
            );
            s.push_str(&named.join(", "));
            s.push('.');
            s.push_str(&search.replacen(" call", " Call", 1));
        }
        CatalogIndex::Counted if n > 0 => {
            s.push_str(" The catalog is too large to list here:");
            s.push_str(search);
        }
        CatalogIndex::Counted => {}
    }
    s
}

/// The search hints of the two tools a host may defer (LIST-015): what a
/// model would search for when a skill's instructions send it there.
pub(crate) const SKILL_FILE_HINT: &str =
    "read a skill's bundled files: scripts, references, templates";
pub(crate) const SKILL_RUN_HINT: &str = "run a script a skill declares";

/// `_meta` of a tool a host may defer (LIST-015): Claude Code's tool
/// search matches `anthropic/searchHint` besides the tool's name and
/// description, so a model looking for "read a skill's script" finds it.
fn search_hint(hint: &str) -> rmcp::model::MetaObject {
    let mut meta = serde_json::Map::new();
    meta.insert(
        "anthropic/searchHint".into(),
        serde_json::Value::String(hint.into()),
    );
    rmcp::model::MetaObject(meta)
}

/// `_meta` of the tools a model needs first (LIST-015): Claude Code
/// offers a tool marked `anthropic/alwaysLoad` in its first request
/// instead of deferring it behind its tool search.
fn always_load() -> rmcp::model::MetaObject {
    let mut meta = serde_json::Map::new();
    meta.insert("anthropic/alwaysLoad".into(), serde_json::Value::Bool(true));
    rmcp::model::MetaObject(meta)
}

/// Why blocking work gave no answer.
#[derive(Debug)]
enum Unfinished {
    /// The client cancelled the request; rmcp sends nothing for it.
    Cancelled,
    /// The work panicked or was aborted.
    Lost(String),
}

impl std::fmt::Display for Unfinished {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unfinished::Cancelled => f.write_str("was cancelled by the client"),
            Unfinished::Lost(why) => write!(f, "could not finish: {why}"),
        }
    }
}

/// Runs a request's file-system work off the async threads. When the
/// client cancels the request (SRV-009) the answer is no longer awaited,
/// and `stop` tells work that can stop early (a digest streaming a large
/// file) to do so; work bounded by the read caps simply finishes unheard.
async fn blocking<T, F>(cancelled: impl Future<Output = ()>, work: F) -> Result<T, Unfinished>
where
    T: Send + 'static,
    F: FnOnce(&AtomicBool) -> T + Send + 'static,
{
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let handle = tokio::task::spawn_blocking(move || work(&flag));
    let done = async { handle.await.map_err(|e| Unfinished::Lost(e.to_string())) };
    unless_cancelled(cancelled, &stop, done).await
}

/// As [`blocking`], on the digest pool (SKX-012): hashing never takes the
/// blocking threads every read shares.
async fn digesting<T, F>(cancelled: impl Future<Output = ()>, work: F) -> Result<T, Unfinished>
where
    T: Send + 'static,
    F: FnOnce(&Arc<AtomicBool>) -> T + Send + 'static,
{
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let (tx, rx) = tokio::sync::oneshot::channel();
    crate::skills_ext::spawn(move || {
        let _ = tx.send(work(&flag));
    })
    .map_err(Unfinished::Lost)?;
    let done = async {
        rx.await
            .map_err(|_| Unfinished::Lost("the digest pool dropped the work".into()))
    };
    unless_cancelled(cancelled, &stop, done).await
}

/// The answer of off-thread work, or `Cancelled` when the client cancels
/// first — then `stop` is raised so the work can end early (SRV-009).
async fn unless_cancelled<T>(
    cancelled: impl Future<Output = ()>,
    stop: &AtomicBool,
    done: impl Future<Output = Result<T, Unfinished>>,
) -> Result<T, Unfinished> {
    tokio::select! {
        done = done => done,
        () = cancelled => {
            stop.store(true, Ordering::Relaxed);
            Err(Unfinished::Cancelled)
        }
    }
}
