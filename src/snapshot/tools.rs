//! The four tools' answers, in the shapes of `shapes`: what `skill_list`,
//! `skill_load`, `skill_file` and `skill_run` say, computed from one
//! snapshot. The rules are enforced below (catalog, fence, grant, run);
//! this only assembles what they decided. The linter reports `skill_list`
//! from here too, so the two cannot disagree.

use super::{Snapshot, rfc3339};
use crate::bundle;
use crate::catalog;
use crate::echo::shorten;
use crate::fence::FenceError;
use crate::limits::MAX_BODY_BYTES;
use crate::run::{self, RunLock, Watch};
use crate::shapes::*;

/// What the preview says (RUN-013): nothing started, how to run it, and why
/// the gate is blanket.
const PREVIEW_NOTE: &str = "No process has been started. Call skill_run again with the same arguments and \
confirm: true to run exactly this. This server cannot tell what a script does — it only decides which script runs \
and what it is handed — so every run is confirmed first.";

impl Snapshot {
    /// `skill_list` (spec LIST-001..LIST-004). `reloadRefused` is the
    /// reloader's to fill in: a snapshot does not know about later scans.
    pub fn list(&self) -> SkillList {
        let mut list = self.list_header();
        list.skills = (0..self.catalog.skills.len())
            .map(|i| self.summary(i))
            .collect();
        list.problems = Some(self.problems.clone());
        list
    }

    /// `skill_list`'s top-level fields, with no entries.
    pub(super) fn list_header(&self) -> SkillList {
        let (roots, roots_total) = self.shown_roots();
        SkillList {
            roots: Some(roots),
            roots_total,
            roots_from: Some(self.catalog.roots_from),
            grant_from: Some(self.grant.from),
            grant_note: self.grant.note().map(str::to_owned),
            grant_error: self.grant.error.clone(),
            generation: Some(self.generation),
            scanned_at: Some(rfc3339(self.scanned_at)),
            reload_refused: None,
            skills: Vec::new(),
            problems: Some(Vec::new()),
            total: None,
            problems_total: None,
            next_cursor: None,
            note: None,
        }
    }

    /// The roots `skill_list` shows (LIST-005): every one, unless their
    /// JSON would take more than a quarter of the answer budget — a host
    /// that gives each skill its own slot has as many roots as skills, and
    /// every page repeats them — then the first that fit, and the count.
    fn shown_roots(&self) -> (Vec<String>, Option<usize>) {
        let roots = &self.catalog.roots;
        let room = self.settings.budget / 4;
        let mut used = 2;
        let mut shown = Vec::new();
        for r in roots {
            // A root's JSON: the string escaped, a comma.
            let cost = serde_json::to_string(r).map_or(r.len() + 2, |j| j.len()) + 1;
            if used + cost > room {
                return (shown, Some(roots.len()));
            }
            used += cost;
            shown.push(r.clone());
        }
        (shown, None)
    }

    /// The `skill_list` entry of the `i`th skill (in name order).
    pub(super) fn summary(&self, i: usize) -> SkillSummary {
        let s = &self.catalog.skills[i];
        let sc = self.scripts(s);
        SkillSummary {
            name: s.name.clone(),
            description: s.description.clone(),
            when_to_use: s.when_to_use.clone(),
            source: Some(s.source.to_string()),
            files: s.files.len(),
            bytes: s.bytes,
            executable: !sc.runnable.is_empty(),
            scripts: Some(
                sc.runnable
                    .iter()
                    .map(|r| ScriptSummary {
                        script: r.entry.script.clone(),
                        interpreter: r.entry.interpreter.clone(),
                        timeout_ms: r.entry.timeout_ms,
                        env: r.env.clone(),
                    })
                    .collect(),
            ),
            unavailable_scripts: Some(refused(&sc.unavailable)),
            ungranted_scripts: Some(refused(&sc.ungranted)),
            declared_egress: s.declaration.egress.clone(),
        }
    }

    /// `skill_load` (spec LOAD-001..LOAD-004): the body is read fresh through
    /// the fence, so what is served is what is on disk, byte for byte.
    pub fn load(&self, name: &str) -> Result<SkillLoad, String> {
        self.load_page(name, None)
    }

    /// `skill_load` with a manifest page (LIST-007): `files_cursor` from
    /// the previous answer continues a manifest too large for one.
    pub(crate) fn load_page(
        &self,
        name: &str,
        files_cursor: Option<&str>,
    ) -> Result<SkillLoad, String> {
        let (skill, scripts) = self.skill(name)?;
        let loaded = catalog::load_skill_md(&skill.dir).map_err(|e| match e {
            catalog::LoadError::Read(_, detail, _) => detail,
            catalog::LoadError::Split(e) => {
                format!("SKILL.md of {name:?} changed since boot and no longer splits: {e}")
            }
        })?;
        let body = loaded.body();
        let cut = floor_char_boundary(body, MAX_BODY_BYTES);
        let truncated = loaded.md.cut || cut < body.len();
        let manifest = skill
            .files
            .iter()
            .map(|f| FileSummary {
                path: f.path.to_string(),
                size: f.size,
            })
            .collect();
        let page = self.files_page(&skill.name, manifest, files_cursor)?;
        Ok(SkillLoad {
            name: skill.name.clone(),
            description: skill.description.clone(),
            when_to_use: skill.when_to_use.clone(),
            source: skill.source.to_string(),
            body: body[..cut].to_owned(),
            truncated,
            truncation_note: truncated.then(|| {
                format!("The SKILL.md body is over {MAX_BODY_BYTES} bytes; the first {cut} bytes are returned (cut at a character boundary).")
            }),
            files: page.files,
            files_total: page.total,
            files_cursor: page.cursor,
            files_note: page.note,
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

    /// `skill_file` (spec READ-001..READ-008): `path` or `paths`, through
    /// the fence, within the caps.
    pub(crate) fn file(&self, args: FileArgs) -> Result<FileRead, String> {
        let skill = self.skill_named(&args.name)?;
        let slot = |path: String, r: Result<bundle::Served, FenceError>| match r {
            Ok(f) => FileSlot::Served(file_entry(f)),
            Err(e) => FileSlot::Refused(FileRefused {
                path: shorten(&path).into_owned(),
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

    /// `skill_run` (spec RUN-*): the plan is made, and every refusal met,
    /// before the confirm gate; only `confirm: true` starts a process, and
    /// `watch` can end it early or hear how long it has run.
    /// `approve` sees the exact plan of a confirmed call before anything
    /// starts (RUN-028): `Ok(None)` lets it run, `Ok(Some(note))` answers
    /// with the plan and that note and starts nothing, `Err` is the call's
    /// error and starts nothing.
    pub(crate) async fn run<C, A, F>(
        &self,
        lock: &RunLock,
        args: RunArgs,
        watch: Watch<C>,
        approve: A,
    ) -> Result<RunAnswer, String>
    where
        C: std::future::Future<Output = ()>,
        A: FnOnce(WillRun) -> F,
        F: std::future::Future<Output = Result<Option<String>, String>>,
    {
        let (skill, scripts) = self.skill(&args.name)?;
        let plan = run::plan(
            skill,
            &scripts,
            &self.interpreters,
            &self.config,
            self.grant.from.as_str(),
            &args.script,
            &args.args,
        )
        .map_err(|e| e.to_string())?;
        let will_run = || WillRun {
            skill: plan.skill.clone(),
            script: plan.script.clone(),
            interpreter: plan.interpreter.clone(),
            argv: plan.argv.clone(),
            cwd: plan.cwd.to_string_lossy().into_owned(),
            timeout_ms: plan.timeout_ms,
            env_names: plan.env_names.clone(),
            env_not_set: plan.env_not_set.clone(),
        };
        if args.confirm != Some(true) {
            return Ok(RunAnswer {
                dry_run: true,
                will_run: Some(will_run()),
                note: Some(PREVIEW_NOTE.to_owned()),
                result: None,
            });
        }
        if let Some(note) = approve(will_run()).await? {
            return Ok(RunAnswer {
                dry_run: true,
                will_run: Some(will_run()),
                note: Some(note),
                result: None,
            });
        }
        let o = lock.run(&plan, watch).await.map_err(|e| e.to_string())?;
        let note =
            (self.config.looks_fenced() && run::failed(&o)).then(|| run::FENCED_NOTE.to_owned());
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
