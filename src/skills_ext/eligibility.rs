//! Which skills the Skills extension's door serves, by SEP-2640's own
//! rules (SKX-006): a name of lowercase letters, digits and single
//! hyphens equal to its URI segment, and a description; and why each
//! other one is left out, said as its cause with its fix (issue 41 §3).

use percent_encoding::percent_decode_str;
use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_normalization::UnicodeNormalization;

use super::uris::{skill_uri, uri_segment};
use crate::catalog::{self, Skill};
use crate::frontmatter;
use crate::problem::{Problem, Reason};

/// Why a catalog skill cannot be on this surface, by SEP-2640's own rules:
/// a name of lowercase letters, digits and single hyphens equal to its URI
/// segment, which is our directory name — so the frontmatter `name` must
/// be present and agree — and a description. **Decision** (SKX-006): the
/// checks, their order and their words are those of rmcp's validator
/// (`Skill::validate`), written here so the rule needs no protocol type;
/// a test at the door (`server::skills`) holds the two to one verdict.
/// `dir_name` is the skill's (catalog) name, `fm_name` and `description`
/// its frontmatter's.
pub(crate) fn eligibility(
    dir_name: &str,
    fm_name: Option<&str>,
    description: Option<&str>,
) -> Result<(), String> {
    let Some(name) = fm_name else {
        return Err("its frontmatter has no \"name\", and SEP-2640 requires one equal to the skill's URI segment".into());
    };
    if description.is_none_or(|d| d.trim().is_empty()) {
        return Err("its frontmatter has no \"description\", which SEP-2640 requires".to_owned());
    }
    let refused = |why: String| Err(format!("SEP-2640 refuses it: {why}"));
    let uri = skill_uri(dir_name);
    let Some(segment) = uri_segment(&uri) else {
        return refused(format!("skill uri {uri} does not end in /SKILL.md"));
    };
    if !valid_name(name) {
        return refused(format!(
            "invalid skill name {name:?}: after NFKC normalization, use 1–64 characters with lowercase letters, \
             numbers, and single internal hyphens"
        ));
    }
    if !percent_decode_str(segment)
        .decode_utf8()
        .is_ok_and(|s| s.nfkc().eq(name.nfkc()))
    {
        return refused(format!(
            "skill uri {uri} does not end in the frontmatter name {name}"
        ));
    }
    Ok(())
}

/// SEP-2640's name, counted after NFKC: 1–64 letters of lowercase or
/// caseless scripts, digits and single internal hyphens.
fn valid_name(name: &str) -> bool {
    let mut needs_alphanumeric = true;
    for (index, ch) in name.nfkc().enumerate() {
        if index >= 64 {
            return false;
        }
        match get_general_category(ch) {
            GeneralCategory::LowercaseLetter
            | GeneralCategory::ModifierLetter
            | GeneralCategory::OtherLetter
            | GeneralCategory::DecimalNumber
            | GeneralCategory::LetterNumber
            | GeneralCategory::OtherNumber => needs_alphanumeric = false,
            _ if ch == '-' && !needs_alphanumeric => needs_alphanumeric = true,
            _ => return false,
        }
    }
    !needs_alphanumeric
}

/// What leaving a skill out of this door means, said once per report.
const LEFT_OUT: &str =
    "the MCP Skills extension (SEP-2640) leaves it out of skills/list and skills/get";

/// SEP-2640's name rule, in words.
const NAME_RULE: &str = "1-64 lowercase letters, digits and single hyphens";

/// Why `skill` is left out of this door, said as its author needs it
/// (SKX-006, issue 41 §3): each cause once, where it is and what to write.
/// A cause the catalog already reported — a `name` unlike the folder's
/// (`name-mismatch`), a `name` or `description` that is not a string
/// (`declaration`) — gets this door's consequence added to that one
/// report; every other cause (no `name`, no or an empty `description`, a
/// name SEP-2640 does not take) goes into one `skills-extension` problem
/// at the first cause's line, each with its fix. `validator` (rmcp's
/// words for the same verdict) is said only when no cause is found, which
/// the unit tests hold never happens.
pub(super) fn left_out(skill: &Skill, validator: String, problems: &mut Vec<Problem>) {
    let path = skill
        .dir
        .join(catalog::SKILL_MD)
        .to_string_lossy()
        .into_owned();
    let mut found = Found {
        problems,
        path,
        causes: Vec::new(),
        place: None,
        folded: false,
    };
    found.name(skill, &validator);
    found.description(skill);
    found.say(validator);
}

/// This door's consequence, added to the catalog's own report of a cause.
fn also() -> String {
    format!("; this is also why {LEFT_OUT}")
}

/// What [`left_out`] has found so far: the causes to say, where the first
/// one is, and whether a cause was folded into the catalog's own report.
struct Found<'p> {
    problems: &'p mut Vec<Problem>,
    /// SKILL.md's path, as the catalog's problems name it.
    path: String,
    causes: Vec<String>,
    place: Option<(u32, u32)>,
    folded: bool,
}

impl Found<'_> {
    /// The catalog's own report of a cause, amended; false when it has none.
    fn fold(&mut self, reason: Reason, at: Option<(u32, u32)>, more: &str) -> bool {
        let at = at.map(|(l, c)| (Some(l as usize), Some(c as usize)));
        match self
            .problems
            .iter_mut()
            .find(|p| p.reason == reason && p.path == self.path && Some((p.line, p.column)) == at)
        {
            Some(p) => {
                p.amend(more);
                true
            }
            None => false,
        }
    }

    /// A cause of this door's own, placed at `at` unless one came first.
    fn cause(&mut self, words: String, at: Option<(u32, u32)>) {
        self.causes.push(words);
        self.place = self.place.or(at);
    }

    /// The frontmatter `name`: missing or empty, unlike the folder's, or
    /// not a name SEP-2640 takes; `validator`'s words only for a mismatch
    /// the catalog did not report.
    fn name(&mut self, skill: &Skill, validator: &str) {
        let dir = skill.name.as_str();
        let spots = skill.spots;
        let close = Some((spots.close, 1));
        match skill.frontmatter_name() {
            // A `name:` that is there but no string is the catalog's report.
            None if spots.name.is_some() && self.fold(Reason::Declaration, spots.name, &also()) => {
                self.folded = true
            }
            // No `name:`, or one left empty (null, which the catalog does not
            // report): the line to write, where.
            None => {
                let (wrong, write) = match spots.name {
                    Some(_) => ("\"name\" is empty", "write it as"),
                    None => (
                        "no \"name\" in the frontmatter",
                        "add the line before the closing \"---\":",
                    ),
                };
                let words = match sep_name_like(dir) {
                    _ if valid_name(dir) => format!(
                        "{wrong}: {write} name: {} (the folder's name)",
                        frontmatter::scalar(dir)
                    ),
                    Some(like) => format!(
                        "{wrong}, and the folder's name {dir:?} is not one SEP-2640 takes ({NAME_RULE}): rename the \
                         folder to {like:?} and {write} name: {like}"
                    ),
                    None => format!(
                        "{wrong}, and the folder's name {dir:?} is not one SEP-2640 takes ({NAME_RULE}): rename the \
                         folder to such a name and {write} name: <that name>"
                    ),
                };
                self.cause(words, spots.name.or(close));
            }
            Some(n) if !n.nfkc().eq(dir.nfkc()) => {
                let more = mismatch_more(n, dir);
                if self.fold(Reason::NameMismatch, spots.name, &more) {
                    self.folded = true;
                } else {
                    self.cause(format!("SEP-2640 refuses it: {validator}"), spots.name);
                }
            }
            Some(n) if !valid_name(n) => {
                let words = match sep_name_like(n) {
                    Some(like) => format!(
                        "the name {n:?} (the folder's, and its name:) is not one SEP-2640 takes ({NAME_RULE}): \
                         rename the folder and its name: to {like:?}"
                    ),
                    None => format!(
                        "the name {n:?} (the folder's, and its name:) is not one SEP-2640 takes ({NAME_RULE}): \
                         rename the folder and its name: to such a name"
                    ),
                };
                self.cause(words, spots.name);
            }
            Some(_) => {}
        }
    }

    /// The frontmatter `description`: missing, empty, or no string.
    fn description(&mut self, skill: &Skill) {
        let spots = skill.spots;
        let close = Some((spots.close, 1));
        match skill.description.as_deref() {
            Some(d) if !d.trim().is_empty() => {}
            Some(_) => self.cause(
                "\"description\" is empty: write what the skill does, and when to use it".to_owned(),
                spots.description,
            ),
            // A `description:` that is there but no string is the catalog's
            // report; one left empty (null) is not, and is said here.
            None if spots.description.is_some()
                && self.fold(Reason::Declaration, spots.description, &also()) =>
            {
                self.folded = true
            }
            None if spots.description.is_some() => self.cause(
                "\"description\" is empty: write what the skill does, and when to use it".to_owned(),
                spots.description,
            ),
            None => self.cause(
                "no \"description\" in the frontmatter: add a line description: <what the skill does, and when to use it> \
                 before the closing \"---\""
                    .to_owned(),
                close,
            ),
        }
    }

    /// The one `skills-extension` problem, when a cause was not folded.
    fn say(mut self, validator: String) {
        if self.causes.is_empty() && !self.folded {
            self.causes
                .push(format!("SEP-2640 refuses it: {validator}"));
        }
        if self.causes.is_empty() {
            return;
        }
        let (line, column) = self
            .place
            .map_or((None, None), |(l, c)| (Some(l as usize), Some(c as usize)));
        self.problems.push(
            Problem::new(
                self.path,
                Reason::SkillsExtension,
                format!(
                    "{}; until then {LEFT_OUT} (the tools, prompts and resources still serve it)",
                    self.causes.join("; ")
                ),
            )
            .at(line, column),
        );
    }
}

/// What a `name` unlike the folder's adds to the catalog's `name-mismatch`
/// report: this door's consequence, and which of the two fixes SEP-2640
/// also takes when it takes only one.
fn mismatch_more(n: &str, dir: &str) -> String {
    let also = also();
    match (valid_name(n), valid_name(dir)) {
        (true, true) => also,
        // The catalog offers renaming the folder only to a name a
        // folder can have (DISC-009).
        (false, true) if catalog::is_skill_name(n) => format!(
            "{also}, which takes only name: {}: {n:?} is not a SEP-2640 name ({NAME_RULE})",
            frontmatter::scalar(dir)
        ),
        (false, true) => also,
        (true, false) => format!(
            "{also}, which takes only the folder renamed to {n:?}: {dir:?} is not a SEP-2640 name ({NAME_RULE})"
        ),
        (false, false) => match sep_name_like(dir) {
            Some(like) => format!(
                "{also}, which takes neither name: call both the folder and name: {like:?} ({NAME_RULE})"
            ),
            None => {
                format!("{also}, which takes neither name: it needs {NAME_RULE} for both")
            }
        },
    }
}

/// A SEP-2640 name made from `s`, to suggest: lowercase, each run of other
/// characters one hyphen, none at either end, at most 64; `None` when
/// nothing is left.
fn sep_name_like(s: &str) -> Option<String> {
    let mut out = String::new();
    for c in s.chars().map(|c| c.to_ascii_lowercase()) {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    out.truncate(64);
    let out = out.trim_end_matches('-').to_owned();
    valid_name(&out).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills_ext::SkillsView;

    /// The problems of a tree whose skills are `skills` (folder, SKILL.md
    /// text): the catalog's, then this door's.
    fn problems_of(skills: &[(&str, &str)]) -> Vec<Problem> {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap().join("r");
        for (dir, text) in skills {
            std::fs::create_dir_all(root.join(dir)).unwrap();
            std::fs::write(root.join(dir).join("SKILL.md"), text).unwrap();
        }
        let catalog = catalog::scan_root(&root);
        let mut problems = catalog.problems.clone();
        SkillsView::boot(&catalog, &mut problems);
        problems
    }

    /// Each problem as `reason line:column detail`, the temporary root cut.
    fn said(problems: &[Problem]) -> Vec<String> {
        problems
            .iter()
            .map(|p| {
                let file = p.path.rsplit('/').nth(1).unwrap_or_default();
                format!(
                    "{} {file}:{}:{} {}",
                    p.reason.code(),
                    p.line.unwrap_or(0),
                    p.column.unwrap_or(0),
                    p.detail
                )
            })
            .collect()
    }

    /// A folder named unlike its skill is one report, at the `name:`
    /// value, with both fixes and this door's consequence (issue 41 §3).
    #[test]
    fn a_name_mismatch_is_one_report_with_its_fix_and_the_door_s_consequence() {
        let got = said(&problems_of(&[(
            "other",
            "---\nname: weather\ndescription: d\n---\n",
        )]));
        assert_eq!(
            got,
            [
                "name-mismatch other:2:7 the frontmatter says name \"weather\", but the folder is \"other\", and a skill is \
                 served under its folder's name: it is served as \"other\" (the name skill_load and a grant use); make the \
                 two agree: change this line to name: other, or rename the folder to \"weather\"; this is also why the MCP \
                 Skills extension (SEP-2640) leaves it out of skills/list and skills/get (line 2, column 7)"
            ]
        );
    }

    /// Which of the two fixes SEP-2640 also takes, when it takes only one.
    #[test]
    fn a_mismatch_says_which_fix_the_door_takes() {
        let got = said(&problems_of(&[
            ("lower", "---\nname: Lower_Case\ndescription: d\n---\n"),
            ("My_Dir", "---\nname: my-dir\ndescription: d\n---\n"),
            ("Both_Bad", "---\nname: Other_Bad\ndescription: d\n---\n"),
        ]));
        assert_eq!(got.len(), 3, "{got:#?}");
        assert!(
            got[0].contains("Both_Bad:2:7 ")
                && got[0].contains(
                    "which takes neither name: call both the folder and name: \"both-bad\""
                ),
            "{got:#?}"
        );
        assert!(got[1].contains("My_Dir:2:7 ") && got[1].contains("which takes only the folder renamed to \"my-dir\": \"My_Dir\" is not a SEP-2640 name"), "{got:#?}");
        assert!(
            got[2].contains("lower:2:7 ")
                && got[2].contains(
                    "which takes only name: lower: \"Lower_Case\" is not a SEP-2640 name"
                ),
            "{got:#?}"
        );
        assert!(
            got.iter().all(|p| p.starts_with("name-mismatch ")),
            "{got:#?}"
        );
    }

    /// No description, no name, an empty description and a name SEP-2640
    /// does not take: each said once, with the line to write and where.
    #[test]
    fn what_the_door_needs_is_said_with_the_line_to_write() {
        let got = said(&problems_of(&[
            ("nodesc", "---\nname: nodesc\n---\n"),
            ("noname", "---\ndescription: d\nlicense: MIT\n---\n"),
            ("blank", "---\nname: blank\ndescription: \"  \"\n---\n"),
            ("Loud_Name", "---\nname: Loud_Name\ndescription: d\n---\n"),
            ("neither", "---\nlicense: MIT\n---\n"),
            ("nullname", "---\nname:\ndescription: d\n---\n"),
        ]));
        let tail = "; until then the MCP Skills extension (SEP-2640) leaves it out of skills/list and skills/get \
                    (the tools, prompts and resources still serve it)";
        assert_eq!(
            got,
            [
                format!(
                    "skills-extension Loud_Name:2:7 the name \"Loud_Name\" (the folder's, and its name:) is not one SEP-2640 \
                     takes (1-64 lowercase letters, digits and single hyphens): rename the folder and its name: to \
                     \"loud-name\"{tail} (line 2, column 7)"
                ),
                format!(
                    "skills-extension blank:3:14 \"description\" is empty: write what the skill does, and when to use it{tail} \
                     (line 3, column 14)"
                ),
                format!(
                    "skills-extension neither:3:1 no \"name\" in the frontmatter: add the line before the closing \"---\": \
                     name: neither (the folder's name); no \"description\" in the frontmatter: add a line description: <what \
                     the skill does, and when to use it> before the closing \"---\"{tail} (line 3, column 1)"
                ),
                format!(
                    "skills-extension nodesc:3:1 no \"description\" in the frontmatter: add a line description: <what the \
                     skill does, and when to use it> before the closing \"---\"{tail} (line 3, column 1)"
                ),
                format!(
                    "skills-extension noname:4:1 no \"name\" in the frontmatter: add the line before the closing \"---\": \
                     name: noname (the folder's name){tail} (line 4, column 1)"
                ),
                format!(
                    "skills-extension nullname:2:5 \"name\" is empty: write it as name: nullname (the folder's \
                     name){tail} (line 2, column 5)"
                ),
            ]
        );
    }

    /// A `name` or `description` that is no string is the catalog's
    /// `declaration` report, which says to quote it; this door's
    /// consequence joins it rather than being a second report.
    #[test]
    fn a_field_that_is_no_string_is_one_report() {
        let got = said(&problems_of(&[
            ("numname", "---\nname: 1.0\ndescription: d\n---\n"),
            ("numdesc", "---\nname: numdesc\ndescription: 12\n---\n"),
        ]));
        assert_eq!(
            got,
            [
                "declaration numdesc:3:14 frontmatter \"description\" is not a string (ignored); quote it: description: \
                 \"12\"; this is also why the MCP Skills extension (SEP-2640) leaves it out of skills/list and skills/get \
                 (line 3, column 14)",
                "declaration numname:2:7 frontmatter \"name\" is not a string (ignored); quote it: name: \"1.0\"; this is \
                 also why the MCP Skills extension (SEP-2640) leaves it out of skills/list and skills/get (line 2, column 7)",
            ]
        );
    }

    /// Every folder name and frontmatter name the verdict test tries: a
    /// refusal is always said as its cause, never in the validator's words
    /// alone, and a skill the door carries gets no word at all.
    #[test]
    fn every_refusal_is_said_as_its_cause() {
        let names = [
            "good",
            "a-b",
            "a--b",
            "-a",
            "a-",
            "Loud_Name",
            "x1",
            "template",
            "v1.2",
            "ünï",
            "ｆｕｌｌ",
            "Ⅻ",
            "a b",
            "1.0",
        ];
        let dirs: Vec<&str> = names
            .iter()
            .copied()
            .filter(|n| catalog::is_skill_name(n))
            .collect();
        for dir in &dirs {
            for fm in names {
                let text = format!("---\nname: \"{fm}\"\ndescription: d\n---\n");
                let problems = problems_of(&[(dir, &text)]);
                let carried = eligibility(dir, Some(fm), Some("d")).is_ok();
                assert!(
                    problems
                        .iter()
                        .all(|p| !p.detail.contains("SEP-2640 refuses it")),
                    "{dir} / {fm}: {problems:#?}"
                );
                assert_eq!(
                    problems.iter().any(|p| p.detail.contains("skills/list")),
                    !carried,
                    "{dir} / {fm}: {problems:#?}"
                );
                assert!(problems.len() <= 1, "{dir} / {fm}: {problems:#?}");
            }
        }
    }
}
