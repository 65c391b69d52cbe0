//! The MCP surface: rmcp handlers that translate between MCP and the
//! catalog. The rules live in `catalog`, `fence`, `grant` and `run`; this
//! layer holds none of its own.

pub mod shapes;

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};

use crate::catalog::{self, Catalog, Skill};
use crate::config::Config;
use crate::frontmatter;
use crate::grant::{self, Grant, Scripts};
use crate::interpreters::Interpreters;
use crate::limits::MAX_BODY_BYTES;
use crate::problem::Problem;
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
    /// The catalog's problems, then the grant's.
    pub problems: Vec<Problem>,
}

impl Served {
    /// Scans the catalog and applies the grant: the one boot-time pass.
    pub fn boot(config: Config) -> Served {
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
        Served {
            config,
            catalog,
            grant,
            interpreters,
            scripts,
            problems,
        }
    }

    fn skill(&self, name: &str) -> Result<(&Skill, &Scripts), String> {
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
    served: Arc<Served>,
    tool_router: ToolRouter<SkillServer>,
}

impl SkillServer {
    pub fn new(served: Served) -> SkillServer {
        SkillServer {
            served: Arc::new(served),
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
        Json(self.served.list())
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
        self.served.load(&args.name).map(Json)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for SkillServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("skill-mcp", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Serves Agent Skills. Call skill_list to see them, skill_load to read one's instructions, \
                 and follow them.",
            )
    }
}
