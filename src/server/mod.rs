//! The MCP surface: rmcp handlers that translate between MCP and the
//! catalog. The rules live in `catalog`, `fence`, `grant` and `run`; this
//! layer holds none of its own.

pub mod shapes;
pub mod uri;

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{
    GetPromptRequestParams, GetPromptResponse, GetPromptResult, GetSkillRequestParams,
    GetSkillResult, Implementation, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListSkillsResult, MetaObject, PaginatedRequestParams, Prompt,
    PromptMessage, ReadResourceDirectoryRequestParams, ReadResourceDirectoryResult,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate, Role, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, tool, tool_handler, tool_router};

use crate::bundle;
use crate::catalog::{self, Catalog, Skill};
use crate::config::Config;
use crate::frontmatter;
use crate::grant::{self, Grant, Scripts};
use crate::interpreters::Interpreters;
use crate::limits::{LIST_PAGE_SIZE, MAX_BODY_BYTES};
use crate::problem::Problem;
use crate::reload::{self, Live};
use crate::run::{self, RunLock};
use crate::skills_ext::SkillsDoor;
use shapes::*;

/// Everything the handlers read, built once at boot and never changed.
#[derive(Debug)]
pub struct Served {
    pub config: Config,
    pub catalog: Catalog,
    pub grant: Grant,
    pub interpreters: Interpreters,
    /// What of each skill may run, parallel to `catalog.skills`.
    pub scripts: Vec<Scripts>,
    /// The catalog's problems, then the grant's, then the Skills extension's.
    pub problems: Vec<Problem>,
    /// The MCP Skills extension's view of the catalog (SEP-2640).
    pub skills_door: SkillsDoor,
    /// 1 for the boot scan, one more for each rescan swapped in.
    pub generation: u64,
    /// When this snapshot's scan started.
    pub scanned_at: std::time::SystemTime,
    /// Where each skill's files start in the one list `resources/list`
    /// pages through (skills by name, files by path).
    file_offsets: Vec<usize>,
}

impl Served {
    /// Scans the catalog and applies the grant: the one boot-time pass.
    pub fn boot(config: Config) -> Served {
        Served::boot_generation(config, 1)
    }

    /// A scan numbered `generation` (reload's rescans are 2, 3, …).
    pub fn boot_generation(config: Config, generation: u64) -> Served {
        let scanned_at = std::time::SystemTime::now();
        let catalog = catalog::scan(&config);
        let grant = Grant::from_config(&config);
        let interpreters = Interpreters::resolve(config.var("PATH"));
        let scripts = catalog
            .skills
            .iter()
            .map(|s| grant::scripts(s, &grant, &interpreters))
            .collect();
        let mut problems = catalog.problems.clone();
        problems.extend(grant.problems(&catalog));
        let (skills_door, door_problems) = SkillsDoor::boot(&catalog);
        problems.extend(door_problems);
        let mut file_offsets = Vec::with_capacity(catalog.skills.len());
        let mut total = 0;
        for s in &catalog.skills {
            file_offsets.push(total);
            total += s.files.len();
        }
        Served {
            config,
            catalog,
            grant,
            interpreters,
            scripts,
            problems,
            skills_door,
            generation,
            scanned_at,
            file_offsets,
        }
    }

    pub(crate) fn skill(&self, name: &str) -> Result<(&Skill, &Scripts), String> {
        let found = self
            .catalog
            .skills
            .binary_search_by(|s| s.name.as_str().cmp(name));
        match found {
            Ok(i) => Ok((&self.catalog.skills[i], &self.scripts[i])),
            Err(_) if self.catalog.skills.is_empty() => Err(format!(
                "no skill named {name:?}: this server found no skills at all — call skill_list, whose \"problems\" say why"
            )),
            Err(_) => Err(format!(
                "no skill named {name:?}. This server serves: {}.",
                self.catalog
                    .skills
                    .iter()
                    .map(|s| s.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }

    /// `skill_list` (spec LIST-001..LIST-004).
    pub fn list(&self) -> SkillList {
        let skills = self
            .catalog
            .skills
            .iter()
            .zip(&self.scripts)
            .map(|(s, sc)| SkillSummary {
                name: s.name.clone(),
                description: s.description.clone(),
                when_to_use: s.when_to_use.clone(),
                source: s.source.clone(),
                files: s.files.len(),
                bytes: s.bytes,
                executable: !sc.runnable.is_empty(),
                scripts: sc
                    .runnable
                    .iter()
                    .map(|r| ScriptSummary {
                        script: r.entry.script.clone(),
                        interpreter: r.entry.interpreter.clone(),
                        timeout_ms: r.entry.timeout_ms,
                        env: r.env.clone(),
                    })
                    .collect(),
                unavailable_scripts: refused(&sc.unavailable),
                ungranted_scripts: refused(&sc.ungranted),
                declared_egress: s.declaration.egress.clone(),
            })
            .collect();
        SkillList {
            roots: self.catalog.roots.clone(),
            roots_from: self.catalog.roots_from,
            grant_from: self.grant.from,
            grant_note: self.grant.note().map(str::to_owned),
            grant_error: self.grant.error.clone(),
            generation: self.generation,
            scanned_at: reload::rfc3339(self.scanned_at),
            reload_refused: None,
            skills,
            problems: self.problems.clone(),
        }
    }

    /// `skill_load` (spec LOAD-001..LOAD-004): the body is read fresh through
    /// the fence, so what is served is what is on disk, byte for byte.
    pub fn load(&self, name: &str) -> Result<SkillLoad, String> {
        let (skill, scripts) = self.skill(name)?;
        let md = catalog::read_skill_md(&skill.dir).map_err(|(_, detail)| detail)?;
        let split = frontmatter::split(&md.text).map_err(|e| {
            format!("SKILL.md of {name:?} changed since boot and no longer splits: {e}")
        })?;
        let body = &md.text[split.body_offset..];
        let cut = floor_char_boundary(body, MAX_BODY_BYTES);
        let truncated = md.cut || cut < body.len();
        Ok(SkillLoad {
            name: skill.name.clone(),
            description: skill.description.clone(),
            when_to_use: skill.when_to_use.clone(),
            source: skill.source.clone(),
            body: body[..cut].to_owned(),
            truncated,
            truncation_note: truncated.then(|| {
                format!("The SKILL.md body is over {MAX_BODY_BYTES} bytes; the first {cut} bytes are returned (cut at a character boundary).")
            }),
            files: skill.files.iter().map(|f| FileSummary { path: f.path.to_string(), size: f.size }).collect(),
            scripts: skill
                .declaration
                .run
                .iter()
                .map(|e| LoadScript {
                    script: e.script.clone(),
                    interpreter: e.interpreter.clone(),
                    runnable_here: scripts.runnable.iter().any(|r| r.entry.script == e.script),
                })
                .collect(),
        })
    }
}

impl Served {
    /// `skill_file` (spec READ-001..READ-008): `path` or `paths`, through
    /// the fence, within the caps.
    pub fn file(&self, args: FileArgs) -> Result<FileRead, String> {
        let (skill, _) = self.skill(&args.name)?;
        let slot = |path: String, r: Result<bundle::Served, crate::fence::FenceError>| match r {
            Ok(f) => FileSlot::Served(file_entry(f)),
            Err(e) => FileSlot::Refused(FileRefused {
                path,
                error: e.to_string(),
            }),
        };
        let files = match (args.path, args.paths) {
            (Some(_), Some(_)) => {
                return Err(
                    "name either \"path\" (one file) or \"paths\" (up to 8), not both".into(),
                );
            }
            (None, None) => {
                return Err(
                    "name the file to read: \"path\" (one file) or \"paths\" (up to 8)".into(),
                );
            }
            (Some(path), None) => vec![FileSlot::Served(file_entry(
                bundle::read_one(&skill.dir, &path).map_err(|e| e.to_string())?,
            ))],
            (None, Some(paths)) => {
                let read = bundle::read_batch(&skill.dir, &paths).map_err(|e| e.to_string())?;
                paths
                    .into_iter()
                    .zip(read)
                    .map(|(p, r)| slot(p, r))
                    .collect()
            }
        };
        Ok(FileRead {
            skill: skill.name.clone(),
            files,
        })
    }

    /// The description a prompt and a skill share.
    fn prompt_description(skill: &Skill) -> String {
        let parts: Vec<&str> = [skill.description.as_deref(), skill.when_to_use.as_deref()]
            .into_iter()
            .flatten()
            .filter(|s| !s.is_empty())
            .collect();
        if parts.is_empty() {
            format!("The {} skill.", skill.name)
        } else {
            parts.join(" ")
        }
    }

    /// One page of prompts (READ-009, READ-011).
    pub fn prompts_page(&self, cursor: Option<&str>) -> Result<ListPromptsResult, McpError> {
        let skills = &self.catalog.skills;
        let start = parse_page_cursor(cursor, skills.len(), LIST_PAGE_SIZE)?;
        let end = (start + LIST_PAGE_SIZE).min(skills.len());
        let mut r = ListPromptsResult::with_all_items(
            skills[start..end]
                .iter()
                .map(|s| {
                    Prompt::new(&s.name, Some(Self::prompt_description(s)), None)
                        .with_title(&s.name)
                })
                .collect(),
        );
        r.next_cursor = (end < skills.len()).then(|| end.to_string());
        Ok(r)
    }

    /// `prompts/get`: the skill's body as one user message.
    pub fn prompt(&self, name: &str) -> Result<GetPromptResult, McpError> {
        let loaded = self
            .load(name)
            .map_err(|m| McpError::invalid_params(m, None))?;
        let mut r = GetPromptResult::new(vec![PromptMessage::new_text(Role::User, loaded.body)]);
        r.description = Some(match loaded.truncation_note {
            Some(note) => format!("The instructions of the {name} skill. {note}"),
            None => format!("The instructions of the {name} skill."),
        });
        Ok(r)
    }

    /// One page of resources: every bundled file (READ-010, READ-011).
    pub fn resources_page(&self, cursor: Option<&str>) -> Result<ListResourcesResult, McpError> {
        let total = self.file_offsets.last().map_or(0, |&o| {
            o + self.catalog.skills.last().map_or(0, |s| s.files.len())
        });
        let start = parse_page_cursor(cursor, total, LIST_PAGE_SIZE)?;
        let end = (start + LIST_PAGE_SIZE).min(total);
        let mut items = Vec::with_capacity(end - start);
        let mut i = self
            .file_offsets
            .partition_point(|&o| o <= start)
            .saturating_sub(1);
        let mut at = start;
        while at < end {
            let skill = &self.catalog.skills[i];
            let local = at - self.file_offsets[i];
            for f in skill.files.iter().skip(local).take(end - at) {
                items.push(
                    Resource::new(
                        uri::for_file(&skill.name, &f.path),
                        format!("{}/{}", skill.name, f.path),
                    )
                    .with_title(format!("{}: {}", skill.name, f.path))
                    .with_mime_type(bundle::media_type(&f.path))
                    .with_size(f.size),
                );
                at += 1;
            }
            i += 1;
        }
        let mut r = ListResourcesResult::with_all_items(items);
        r.next_cursor = (end < total).then(|| end.to_string());
        Ok(r)
    }

    /// `resources/read`: the same fence, cap and encoding as `skill_file`.
    /// Past 1 MiB the first 1 MiB is served and the contents' `_meta` says
    /// so (`skill-mcp/truncated`, `skill-mcp/size`, `skill-mcp/note`).
    pub fn read_resource(&self, uri_text: &str) -> Result<ReadResourceResult, McpError> {
        let (name, path) = uri::parse(uri_text).map_err(|m| McpError::invalid_params(m, None))?;
        let (skill, _) = self
            .skill(&name)
            .map_err(|m| McpError::resource_not_found(m, None))?;
        let (f, stale) = bundle::read_one_with(&skill.dir, &path, |meta| {
            self.skills_door
                .stale_note(&self.catalog, &name, &path, meta)
        })
        .map_err(|e| McpError::resource_not_found(e.to_string(), None))?;
        let mut m = serde_json::Map::new();
        if let Some(note) = f.truncation_note() {
            m.insert("skill-mcp/truncated".into(), true.into());
            m.insert("skill-mcp/size".into(), f.size.into());
            m.insert("skill-mcp/note".into(), note.into());
        }
        if let Some(note) = stale {
            m.insert("skill-mcp/changed".into(), true.into());
            m.insert("skill-mcp/changedNote".into(), note.into());
        }
        let meta = (!m.is_empty()).then_some(MetaObject(m));
        let uri = uri_text.to_owned();
        let mime = Some(f.media_type.to_owned());
        let contents = match f.encoding {
            bundle::Encoding::Utf8 => ResourceContents::TextResourceContents {
                uri,
                mime_type: mime,
                text: f.content,
                meta,
            },
            bundle::Encoding::Base64 => ResourceContents::BlobResourceContents {
                uri,
                mime_type: mime,
                blob: f.content,
                meta,
            },
        };
        Ok(ReadResourceResult::new(vec![contents]))
    }
}

fn file_entry(f: bundle::Served) -> FileEntryOut {
    FileEntryOut {
        truncation_note: f.truncation_note(),
        path: f.path,
        size: f.size,
        media_type: f.media_type.to_owned(),
        encoding: f.encoding.as_str().to_owned(),
        truncated: f.truncated,
        content: f.content,
    }
}

/// A list cursor is the decimal offset of a page's first item, exactly as
/// the list writes it in `nextCursor`: a multiple of the page size, past the
/// first page and before the end, in plain decimal (no sign, no leading
/// zero). Any other string was never handed out, and is an invalid-params
/// error naming it (READ-011, SKX-008).
pub(crate) fn parse_page_cursor(
    cursor: Option<&str>,
    len: usize,
    page: usize,
) -> Result<usize, McpError> {
    let Some(c) = cursor else { return Ok(0) };
    c.parse::<usize>()
        .ok()
        .filter(|&n| {
            n > 0 && n < len && page > 0 && n % page == 0 && n.to_string() == c
        })
        .ok_or_else(|| {
            McpError::invalid_params(
                format!(
                    "invalid cursor {c:?}: it is not one this list hands out; pass back the nextCursor of the previous page"
                ),
                None,
            )
        })
}

/// `skills/list`'s cursor (SKX-008, called from `skills_ext`): pages of
/// `SKILLS_PAGE_SIZE`. `prompts/list` and `resources/list` call
/// [`parse_page_cursor`] with `LIST_PAGE_SIZE`.
pub(crate) fn parse_cursor(cursor: Option<&str>, len: usize) -> Result<usize, McpError> {
    parse_page_cursor(cursor, len, crate::skills_ext::SKILLS_PAGE_SIZE)
}

fn refused(list: &[(String, String)]) -> Vec<Refused> {
    list.iter()
        .map(|(script, reason)| Refused {
            script: script.clone(),
            reason: reason.clone(),
        })
        .collect()
}

/// The largest index ≤ `max` that is a character boundary of `s`.
fn floor_char_boundary(s: &str, max: usize) -> usize {
    if max >= s.len() {
        return s.len();
    }
    (0..=max)
        .rev()
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(0)
}

/// The rmcp server: the tool router over the boot-time state.
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
    pub fn with_hangup(served: Served, hangup: tokio::sync::watch::Receiver<bool>) -> SkillServer {
        let mut s = SkillServer::new(served);
        s.run_lock = Arc::new(RunLock::new(Some(hangup)));
        s
    }

    pub fn new(served: Served) -> SkillServer {
        SkillServer {
            live: Arc::new(Live::new(served)),
            run_lock: Arc::new(RunLock::new(None)),
            tool_router: Self::tool_router(),
        }
    }
}

/// What the preview says (RUN-013): nothing started, how to run it, and why
/// the gate is blanket.
const PREVIEW_NOTE: &str = "No process has been started. Call skill_run again with the same arguments and \
confirm: true to run exactly this. This server cannot tell what a script does — it only decides which script runs \
and what it is handed — so every run is confirmed first.";

impl Served {
    /// `skill_run` (spec RUN-*): the plan is made, and every refusal met,
    /// before the confirm gate; only `confirm: true` starts a process.
    pub async fn run(&self, lock: &RunLock, args: RunArgs) -> Result<RunAnswer, String> {
        let (skill, scripts) = self.skill(&args.name)?;
        let plan = run::plan(
            skill,
            scripts,
            &self.interpreters,
            &self.config,
            self.grant.from.as_str(),
            &args.script,
            &args.args,
        )
        .map_err(|e| e.to_string())?;
        if args.confirm != Some(true) {
            return Ok(RunAnswer {
                dry_run: true,
                will_run: Some(WillRun {
                    skill: plan.skill.clone(),
                    script: plan.script.clone(),
                    interpreter: plan.interpreter.clone(),
                    argv: plan.argv.clone(),
                    cwd: plan.cwd.to_string_lossy().into_owned(),
                    timeout_ms: plan.timeout_ms,
                    env_names: plan.env_names.clone(),
                    env_not_set: plan.env_not_set.clone(),
                }),
                note: Some(PREVIEW_NOTE.to_owned()),
                result: None,
            });
        }
        let o = lock.run(&plan).await.map_err(|e| e.to_string())?;
        let note = (self.config.hosted() && run::failed(&o)).then(|| run::FENCED_NOTE.to_owned());
        Ok(RunAnswer {
            dry_run: false,
            will_run: None,
            note,
            result: Some(RunOutcome {
                skill: plan.skill,
                script: plan.script,
                interpreter: plan.interpreter,
                exit_code: o.exit_code,
                signal: o.signal,
                timed_out: o.timed_out,
                timeout_ms: plan.timeout_ms,
                duration_ms: o.duration_ms,
                stdout: o.stdout.text,
                stderr: o.stderr.text,
                stdout_encoding: o.stdout.encoding.to_owned(),
                stderr_encoding: o.stderr.encoding.to_owned(),
                truncated: Truncated {
                    stdout: o.stdout.truncated,
                    stderr: o.stderr.truncated,
                },
                env: plan.env_names,
            }),
        })
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
        Parameters(args): Parameters<NameArgs>,
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
        Parameters(args): Parameters<FileArgs>,
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
        Parameters(args): Parameters<RunArgs>,
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
        self.live
            .current()
            .prompts_page(request.as_ref().and_then(|r| r.cursor.as_deref()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        self.live.current().prompt(&request.name).map(Into::into)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        self.live
            .current()
            .resources_page(request.as_ref().and_then(|r| r.cursor.as_deref()))
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
            served.skills_door.list(
                &served.catalog,
                request.as_ref().and_then(|r| r.cursor.as_deref()),
            )
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
        tokio::task::spawn_blocking(move || served.skills_door.get(&served.catalog, &request.uri))
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
        served.skills_door.directory(&served.catalog, &request.uri)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let served = self.live.current();
        tokio::task::spawn_blocking(move || served.read_resource(&request.uri))
            .await
            .map_err(|e| McpError::internal_error(format!("the read could not finish: {e}"), None))?
            .map(Into::into)
    }
}

#[cfg(test)]
mod cursor_tests {
    use super::parse_page_cursor;

    #[test]
    fn only_cursors_a_list_hands_out_are_accepted() {
        assert_eq!(parse_page_cursor(None, 0, 500).ok(), Some(0));
        assert_eq!(parse_page_cursor(None, 1621, 500).ok(), Some(0));
        for (c, n) in [("500", 500), ("1000", 1000), ("1500", 1500)] {
            assert_eq!(parse_page_cursor(Some(c), 1621, 500).ok(), Some(n), "{c}");
        }
        for bad in [
            "0", "7", "499", "501", "2000", "0500", "+500", "-500", " 500", "500 ", "", "x",
        ] {
            let e = parse_page_cursor(Some(bad), 1621, 500).err();
            let e = e.unwrap_or_else(|| panic!("{bad:?} was accepted"));
            assert_eq!(e.code.0, -32602, "{bad:?}");
            assert!(e.message.contains(&format!("{bad:?}")), "{}", e.message);
        }
        // The end of the list is not a page start, and no page size is zero.
        assert!(parse_page_cursor(Some("1500"), 1500, 500).is_err());
        assert!(parse_page_cursor(Some("500"), 1621, 0).is_err());
    }
}
