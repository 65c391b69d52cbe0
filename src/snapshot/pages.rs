//! Answers that fit a model's context (spec LIST-005..LIST-008): every
//! `skill_list` answer, and every `skill_load` manifest, stays within the
//! answer budget. A catalog whose whole list fits gets it whole, exactly
//! as before; a larger one is paged, and searched with `query` (ranked
//! by `crate::search`, LIST-010..LIST-012). Each skill
//! entry is serialized once per snapshot to learn its size, so a page is
//! cut from sizes, not by trial.

use super::Snapshot;
use super::identity;
use crate::cursor::{self, Paged, SKILL_LIST, SKILL_LOAD};
use crate::echo::excerpt;
use crate::limits::{
    MAX_QUERY_BYTES, MAX_SKILL_NAME_BYTES, MAX_THEMES, MIN_THEME_SKILLS, QUERY_PAGE_SKILLS,
};
use crate::search::{Index, is_stop_word};
use crate::shapes::{FileSummary, ListArgs, SkillList};

/// Bytes a page may spend on what is not an entry: the top-level fields,
/// the counts, the cursor and the note (measured, then this much again).
const PAGE_SLACK: usize = 1024;

/// The sizes of one snapshot's `skill_list` entries, and what `query`
/// searches, built on first use. The entries themselves are not kept: a
/// page builds its own few from the catalog, so the snapshot holds no
/// second copy of every skill's text.
#[derive(Debug)]
pub(crate) struct Entries {
    /// The JSON size of each skill's entry, and of each problem.
    skill_sizes: Vec<usize>,
    problem_sizes: Vec<usize>,
    /// The whole unpaged answer's JSON size.
    full_size: usize,
    /// The catalog's identity (LIST-018), taken in the same pass.
    pub(super) identity: identity::Identity,
}

/// What query answers need of every skill (LIST-019), computed on the
/// first query of a snapshot: which problems are about it, and the size
/// of its lean entry, by which query pages are cut.
#[derive(Debug)]
pub(crate) struct Lean {
    /// Per skill (in name order), the indices of the snapshot's problems
    /// about its folder or anything in it (the deepest skill's, when
    /// skills nest).
    problems: Vec<Vec<usize>>,
    /// Per skill, the JSON size of its lean entry.
    sizes: Vec<usize>,
}

/// The size of `v`'s compact JSON, counted as it is written rather than
/// kept: this runs for every skill of the catalog once per snapshot.
fn json_len<T: serde::Serialize>(v: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut n = Count(0);
    serde_json::to_writer(&mut n, v).map_or(0, |()| n.0)
}

/// The words of a query: its maximal runs of letters and digits, folded
/// (a query without any is refused).
fn words(s: &str) -> Vec<String> {
    crate::search::words(s).collect()
}

/// An answer as it goes out: its JSON text and the same JSON as a value
/// (a tool's `structuredContent`), made together once.
#[derive(Debug)]
pub(crate) struct Serialized {
    pub(crate) text: String,
    pub(crate) value: serde_json::Value,
}

impl Serialized {
    pub(crate) fn of<T: serde::Serialize>(answer: &T) -> Result<Serialized, String> {
        let value = serde_json::to_value(answer)
            .map_err(|e| format!("the answer could not be serialized: {e}"))?;
        Ok(Serialized {
            text: value.to_string(),
            value,
        })
    }
}

impl Snapshot {
    /// `skill_list` with no arguments — the answer every host asks for
    /// first, and again in each new conversation — serialized once per
    /// snapshot, on first use, and handed out as those bytes from then on
    /// (issue 20 §4). A reload's snapshot makes its own. Pages asked for
    /// with a cursor, a query or a limit are made per call: keeping every
    /// one of them would hold a second copy of the whole catalog's text.
    pub(crate) fn first_list(&self) -> Result<&Serialized, String> {
        self.first_list
            .get_or_init(|| {
                self.list_page(&ListArgs::default())
                    .and_then(|list| Serialized::of(&list))
            })
            .as_ref()
            .map_err(String::clone)
    }

    /// The size of `skill_list`'s top-level fields as pages are cut by
    /// it: with the longest `generation` there is, so where a page ends
    /// does not depend on how many rescans this process has made, and
    /// every process serving the catalog cuts the same pages (LIST-018).
    fn header_len(&self) -> usize {
        let mut header = self.list_header();
        header.generation = Some(u64::MAX);
        json_len(&header)
    }

    /// The entries and their sizes, and the catalog's identity, computed
    /// once per snapshot in one pass (LIST-018).
    pub(crate) fn entries(&self) -> &Entries {
        self.entries.get_or_init(|| {
            let mut digest = identity::Digest::start(self);
            let skill_sizes: Vec<usize> = (0..self.catalog.skills.len())
                .map(|i| digest.skill(&self.catalog.skills[i], &self.summary(i)))
                .collect();
            let problem_sizes: Vec<usize> =
                self.problems.iter().map(|p| digest.problem(p)).collect();
            // The whole answer: its header, `"skills":[…]` and
            // `"problems":[…]` with a comma between entries.
            let full_size = self.header_len()
                + skill_sizes.iter().sum::<usize>()
                + skill_sizes.len()
                + problem_sizes.iter().sum::<usize>()
                + problem_sizes.len();
            Entries {
                skill_sizes,
                problem_sizes,
                full_size,
                identity: digest.finish(self),
            }
        })
    }

    /// What `query` searches, built on the first query (LIST-010).
    pub(crate) fn index(&self) -> &Index {
        self.index
            .get_or_init(|| Index::build(&self.catalog.skills, self.settings.model.clone()))
    }

    /// The catalog as the `initialize` instructions show it (LIST-014):
    /// every skill as `- name: first sentence of its description` when
    /// those lines fit the instructions budget, else the words most of
    /// its names share (when they fit), else nothing.
    pub(crate) fn catalog_index(&self) -> CatalogIndex {
        let budget = self.settings.instructions_budget;
        let mut index = String::new();
        let mut chars = 0;
        for s in &self.catalog.skills {
            let line = match s.description.as_deref().map(first_sentence) {
                Some(d) if !d.is_empty() => format!("\n- {}: {d}", s.name),
                _ => format!("\n- {}", s.name),
            };
            chars += line.chars().count();
            if chars > budget {
                let themes = themes(&self.catalog.skills);
                let cost: usize = themes
                    .iter()
                    .map(|(w, n)| w.len() + n.to_string().len() + 4)
                    .sum();
                return if themes.is_empty() || cost > budget {
                    CatalogIndex::Counted
                } else {
                    CatalogIndex::Themes(themes)
                };
            }
            index.push_str(&line);
        }
        if index.is_empty() {
            CatalogIndex::Counted
        } else {
            CatalogIndex::Listed(index)
        }
    }

    /// The lean entries' sizes and each skill's problems (LIST-019), on
    /// first use.
    pub(crate) fn lean(&self) -> &Lean {
        self.lean.get_or_init(|| {
            let skills = &self.catalog.skills;
            let by_dir: std::collections::HashMap<&std::path::Path, usize> = skills
                .iter()
                .enumerate()
                .map(|(i, s)| (s.dir.as_path(), i))
                .collect();
            let mut problems = vec![Vec::new(); skills.len()];
            for (p, problem) in self.problems.iter().enumerate() {
                // The deepest skill folder the path is in (ancestors()
                // starts at the path itself).
                if let Some(&i) = std::path::Path::new(&problem.path)
                    .ancestors()
                    .find_map(|a| by_dir.get(a))
                {
                    problems[i].push(p);
                }
            }
            let sizes = (0..skills.len())
                .map(|i| json_len(&self.summary(i).lean()))
                .collect();
            Lean { problems, sizes }
        })
    }

    /// True when the whole, unpaged `skill_list` answer fits the budget.
    pub(crate) fn list_fits(&self) -> bool {
        self.entries().full_size <= self.settings.budget
    }

    /// `skill_list` with its arguments (LIST-005, LIST-006): the whole
    /// answer when nothing is asked and it fits, else one page.
    pub(crate) fn list_page(&self, args: &ListArgs) -> Result<SkillList, String> {
        let entries = self.entries();
        let query = match args.query.as_deref() {
            None => None,
            Some(q) if q.len() > MAX_QUERY_BYTES => {
                return Err(format!(
                    "query is {} bytes, over the {MAX_QUERY_BYTES} a query may be: give a few words from the skill's name or description ({})",
                    q.len(),
                    excerpt(q)
                ));
            }
            Some(q) => {
                if words(q).is_empty() {
                    return Err(
                        "query has no words: give words to look for in skills' names, descriptions and when-to-use"
                            .into(),
                    );
                }
                Some(q)
            }
        };
        if args.limit == Some(0) {
            return Err("limit is 0: ask for at least 1 skill per page".into());
        }
        if let Some(q) = query {
            return self.query_page(q, args);
        }
        if args.cursor.is_none() && args.limit.is_none() && self.list_fits() {
            return Ok(self.list());
        }
        // The skills this answer lists, in its order.
        let order: Vec<usize> = (0..self.catalog.skills.len()).collect();
        let key = listing_key(args);
        let starts = self.page_starts(&order, args.limit);
        let (start, end) = self.page_at(
            args.cursor.as_deref(),
            key,
            &starts,
            order.len() + entries.problem_sizes.len(),
            &SKILL_LIST,
        )?;
        let mut page = self.list_header();
        // The roots are the catalog's, said once: on the first page
        // (LIST-019).
        if start > 0 {
            page.roots = None;
            page.roots_total = None;
        }
        let n_skills = order.len();
        page.skills = (start..end.min(n_skills))
            .map(|i| self.summary(order[i]))
            .collect();
        page.problems = Some(
            (start.max(n_skills)..end)
                .map(|i| self.problems[i - n_skills].clone())
                .collect(),
        );
        page.total = Some(n_skills);
        page.problems_total = Some(self.problems.len());
        let all = n_skills + self.problems.len();
        page.next_cursor = (end < all).then(|| self.cursor_at(key, end));
        page.note = Some(self.page_note(&page, start, end, n_skills, args));
        Ok(page)
    }

    /// A query answer (LIST-006, LIST-011, LIST-019): the matching skills
    /// of this page, lean, with the problems about them; of the rest of
    /// the catalog only how many problems it has, and where to read them.
    fn query_page(&self, q: &str, args: &ListArgs) -> Result<SkillList, String> {
        let skills = &self.catalog.skills;
        let ranked = self
            .index()
            .search(q, |i| skills.get(i).map_or("", |s| s.name.as_str()));
        let order = ranked.skills;
        let lean = self.lean();
        let limit = args.limit.unwrap_or(QUERY_PAGE_SKILLS) as usize;
        // The top level but for the cursor and the note, which the slack
        // holds, at its widest.
        let header = json_len(&SkillList {
            problems: Some(Vec::new()),
            total: Some(usize::MAX),
            problems_total: Some(usize::MAX),
            ..SkillList::default()
        });
        let room = self.settings.budget.saturating_sub(header + PAGE_SLACK);
        let starts = cut(order.iter().map(|&i| lean.sizes[i]), room, |_| true, limit);
        let key = listing_key(args);
        let (start, end) = self.page_at(
            args.cursor.as_deref(),
            key,
            &starts,
            order.len(),
            &SKILL_LIST,
        )?;
        let on_page = &order[start.min(end)..end];
        // The problems about the page's skills, in the catalog's order, as
        // many as the room the skills leave holds (one skill may have
        // thousands); the rest are counted in the note.
        let mut about: Vec<usize> = on_page
            .iter()
            .flat_map(|&i| lean.problems[i].iter().copied())
            .collect();
        about.sort_unstable();
        let mut left = room.saturating_sub(on_page.iter().map(|&i| lean.sizes[i] + 1).sum());
        let mut problems = Vec::new();
        for &p in &about {
            let size = json_len(&self.problems[p]) + 1;
            if size > left {
                break;
            }
            left -= size;
            problems.push(self.problems[p].clone());
        }
        let unshown = about.len() - problems.len();
        let mut page = SkillList {
            skills: on_page.iter().map(|&i| self.summary(i).lean()).collect(),
            problems: (!problems.is_empty()).then_some(problems),
            total: Some(order.len()),
            problems_total: (!self.problems.is_empty()).then_some(self.problems.len()),
            next_cursor: (end < order.len()).then(|| self.cursor_at(key, end)),
            ..SkillList::default()
        };
        page.note = Some(self.query_note(&page, q, start, ranked.by_words, unshown));
        Ok(page)
    }

    /// What a query answer's `note` says (LIST-011, LIST-012, LIST-017,
    /// LIST-019): how many match and which these are, how to go on, and
    /// where the catalog's problems are — short, as a model reads it with
    /// every answer.
    fn query_note(
        &self,
        page: &SkillList,
        q: &str,
        start: usize,
        by_words: usize,
        unshown: usize,
    ) -> String {
        let n = page.total.unwrap_or_default();
        let s = if n == 1 { "" } else { "s" };
        let mut note = if n == 0 {
            // LIST-012: an empty answer says why and what to try instead.
            format!(
                "No skill matches {}: no skill shares a word with it other than common words such as \"the\" or \"to\". Try fewer words, or other words for what the skill does or works on; skill_list without a query lists every skill.",
                excerpt(q)
            )
        } else if by_words == 0 {
            // LIST-017: found by meaning alone; the model is told so, as
            // these are the nearest skills, not ones that match.
            format!(
                "No skill shares a word with {}; the {n} skill{s} nearest to it in meaning follow{}, nearest first: check each description before you use one.",
                excerpt(q),
                if n == 1 { "s" } else { "" }
            )
        } else {
            format!("{n} skill{s} match, best first.")
        };
        if n > 0 && (start > 0 || page.next_cursor.is_some()) {
            note.push_str(&format!(
                " These are {} to {}.",
                start + 1,
                start + page.skills.len()
            ));
        }
        if page.next_cursor.is_some() {
            note.push_str(" For more, call skill_list again with the same query and limit and cursor set to nextCursor.");
        }
        // A query that is the name of a folder that was refused: say so,
        // as skill_load of that name does (LOAD-004), rather than leave a
        // model to think it is a matter of words.
        // Only a query that could be a name is looked for: most queries
        // are words with spaces, and the look goes through every problem.
        let typed = q.trim();
        if typed.len() <= MAX_SKILL_NAME_BYTES
            && !typed.contains(char::is_whitespace)
            && self
                .catalog
                .skills
                .binary_search_by(|s| s.name.as_str().cmp(typed))
                .is_err()
            && let Some(p) = self.refusal_of(typed)
        {
            note.push_str(&format!(
                " No skill named {} is served: {} was refused ({}): {}.",
                excerpt(typed),
                p.path,
                p.reason.code(),
                excerpt(&p.detail)
            ));
        }
        if unshown > 0 {
            note.push_str(&format!(
                " {unshown} more problem{} about these skills did not fit here.",
                if unshown == 1 { "" } else { "s" }
            ));
        }
        if let Some(p) = page.problems_total {
            note.push_str(&format!(
                " The catalog has {p} problem{}: skill_list without a query lists {}.",
                if p == 1 { "" } else { "s" },
                if p == 1 { "it" } else { "them" }
            ));
        }
        note
    }

    /// Where each page starts in the sequence `order` (the skills), then
    /// every problem: greedy, each page as full as the budget (and
    /// `limit`, for skills) allows, never empty.
    fn page_starts(&self, order: &[usize], limit: Option<u32>) -> Vec<usize> {
        let entries = self.entries();
        let room = self
            .settings
            .budget
            .saturating_sub(self.header_len() + PAGE_SLACK);
        let limit = limit.map_or(usize::MAX, |l| l as usize);
        let sizes = order
            .iter()
            .map(|&i| entries.skill_sizes[i])
            .chain(entries.problem_sizes.iter().copied());
        cut(sizes, room, |i| i < order.len(), limit)
    }

    /// The offset a cursor stands for ([`cursor::read_keyed`]).
    fn read_cursor(
        &self,
        c: &str,
        key: u64,
        starts: &[usize],
        kind: &Paged,
    ) -> Result<usize, String> {
        cursor::read_keyed(c, || self.identity().to_string(), key, starts, kind)
    }

    /// The page a call asks for: from the offset its cursor stands for
    /// (the first page without one) to the next page start, or to `len`,
    /// the end of the sequence `starts` cuts.
    fn page_at(
        &self,
        cursor: Option<&str>,
        key: u64,
        starts: &[usize],
        len: usize,
        kind: &Paged,
    ) -> Result<(usize, usize), String> {
        let start = match cursor {
            None => 0,
            Some(c) => self.read_cursor(c, key, starts, kind)?,
        };
        let end = starts.iter().copied().find(|&s| s > start).unwrap_or(len);
        Ok((start, end))
    }

    /// The cursor of the page that starts at `offset` of listing `key`.
    fn cursor_at(&self, key: u64, offset: usize) -> String {
        cursor::keyed(&self.identity().to_string(), key, offset)
    }

    /// A plain listing's page note (LIST-005): what the page holds and
    /// how to get the rest.
    fn page_note(
        &self,
        page: &SkillList,
        start: usize,
        end: usize,
        n_skills: usize,
        args: &ListArgs,
    ) -> String {
        let what = format!(
            "This catalog serves {n_skills} skill{}",
            if n_skills == 1 { "" } else { "s" }
        );
        let shown = if page.skills.is_empty() {
            "this page holds no skills".to_string()
        } else {
            format!(
                "this page holds skills {} to {}",
                start + 1,
                start + page.skills.len()
            )
        };
        let on_page = page.problems.as_ref().map_or(0, Vec::len);
        let problems = if on_page == 0 {
            String::new()
        } else {
            let first = start.max(n_skills) - n_skills;
            format!(
                ", and problems {} to {} of {}",
                first + 1,
                first + on_page,
                self.problems.len()
            )
        };
        let next = match &page.next_cursor {
            Some(c) => format!(
                " More follow: call skill_list again with cursor {c:?}{}, or with a query (words from the name or description of the skill you need) to find it directly.",
                if args.limit.is_some() {
                    " and the same limit"
                } else {
                    ""
                }
            ),
            None => format!(" This is the last page ({end} entries in all)."),
        };
        format!("{what}; {shown}{problems}.{next}")
    }

    /// A manifest page for `skill_load` (LIST-007): the files from the
    /// cursor's offset that fit the budget, the total, and the next
    /// cursor; the whole manifest, with nothing added, when it fits.
    pub(crate) fn files_page(
        &self,
        name: &str,
        files: Vec<FileSummary>,
        cursor: Option<&str>,
    ) -> Result<FilesPage, String> {
        let sizes: Vec<usize> = files.iter().map(json_len).collect();
        let whole: usize = sizes.iter().map(|s| s + 1).sum();
        if cursor.is_none() && whole + PAGE_SLACK <= self.settings.budget {
            return Ok(FilesPage {
                files,
                total: None,
                cursor: None,
                note: None,
            });
        }
        let starts = cut(
            sizes.into_iter(),
            self.settings.budget.saturating_sub(PAGE_SLACK),
            |_| false,
            usize::MAX,
        );
        // A filesCursor belongs to its skill's manifest.
        let key = identity::key(&[b"files", name.as_bytes()]);
        let (start, end) = self.page_at(cursor, key, &starts, files.len(), &SKILL_LOAD)?;
        let total = files.len();
        let next = (end < total).then(|| self.cursor_at(key, end));
        let note = format!(
            "The manifest of {name:?} lists {total} files, too many for one answer; these are files {} to {end}.{}",
            start + 1,
            match &next {
                Some(c) =>
                    format!(" Call skill_load again with filesCursor {c:?} for the next ones."),
                None => " This is the last page.".into(),
            }
        );
        Ok(FilesPage {
            files: files.into_iter().skip(start).take(end - start).collect(),
            total: Some(total),
            cursor: next,
            note: Some(note),
        })
    }
}

/// One page of a `skill_load` manifest: the files, and — when it is a
/// page of a larger manifest — the total, the next cursor and a note.
pub(crate) struct FilesPage {
    pub(crate) files: Vec<FileSummary>,
    pub(crate) total: Option<usize>,
    pub(crate) cursor: Option<String>,
    pub(crate) note: Option<String>,
}

/// Where each page of items of these JSON `sizes` starts: greedy, each
/// page as full as `room` allows (an item costs its size and a comma) and
/// holding at most `limit` of the items `limited` picks, never empty — an
/// item larger than `room` is a page of its own.
fn cut(
    sizes: impl Iterator<Item = usize>,
    room: usize,
    limited: impl Fn(usize) -> bool,
    limit: usize,
) -> Vec<usize> {
    let mut starts = vec![0];
    let (mut used, mut count, mut in_limit) = (0usize, 0usize, 0usize);
    for (i, size) in sizes.enumerate() {
        let counts = limited(i);
        if count > 0 && (used + size + 1 > room || (counts && in_limit >= limit)) {
            starts.push(i);
            (used, count, in_limit) = (0, 0, 0);
        }
        used += size + 1;
        count += 1;
        in_limit += usize::from(counts);
    }
    starts
}

/// A description's first sentence, on one line: up to the first `.`, `!`
/// or `?` followed by a space or the end, whitespace runs made one space.
fn first_sentence(d: &str) -> String {
    let flat = d.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut end = flat.len();
    for (i, c) in flat.char_indices() {
        if matches!(c, '.' | '!' | '?') && flat[i + 1..].starts_with(' ') {
            end = i + 1;
            break;
        }
    }
    flat[..end].to_owned()
}

/// What the instructions say of the catalog (LIST-014).
#[derive(Debug, PartialEq)]
pub(crate) enum CatalogIndex {
    /// Every skill, a line each.
    Listed(String),
    /// Too many to list: the words most names share, with how many names
    /// share each, commonest first.
    Themes(Vec<(String, usize)>),
    /// Only the count (no skill, nothing shared, or no room).
    Counted,
}

/// The themes of a catalog too large to list (LIST-014): the words of its
/// skills' names (split at `-` and `_`, folded, stop words out) that at
/// least [`MIN_THEME_SKILLS`] names share, at most [`MAX_THEMES`] of them,
/// commonest first, ties in word order. Names, not descriptions: a name is
/// a few words its author chose to say what the skill is, and counting
/// them costs one pass over a few bytes a skill.
fn themes(skills: &[crate::catalog::Skill]) -> Vec<(String, usize)> {
    let mut count: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for s in skills {
        let mut seen: Vec<String> = crate::search::words(&s.name)
            .filter(|w| {
                w.chars().count() > 1 && !w.chars().all(|c| c.is_ascii_digit()) && !is_stop_word(w)
            })
            .collect();
        seen.sort_unstable();
        seen.dedup();
        for w in seen {
            *count.entry(w).or_default() += 1;
        }
    }
    let mut themes: Vec<(String, usize)> = count
        .into_iter()
        .filter(|&(_, n)| n >= MIN_THEME_SKILLS)
        .collect();
    themes.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    themes.truncate(MAX_THEMES);
    themes
}

/// What a cursor is bound to: the query (its text as sent: ranking by
/// meaning reads the text, so "Keynote" and "keynote" may order skills
/// differently) and the limit, keyed the same in every process and build
/// (LIST-008, LIST-018).
fn listing_key(args: &ListArgs) -> u64 {
    let limit = args.limit.map(|l| l.to_string());
    let mut parts: Vec<&[u8]> = vec![b"list"];
    match args.query.as_deref() {
        None => parts.push(b"no query"),
        Some(q) => {
            parts.push(b"query");
            parts.push(b"text");
            parts.push(q.as_bytes());
        }
    }
    // The limit is told apart by a marker of its own.
    match &limit {
        None => parts.push(b"-no limit-"),
        Some(l) => {
            parts.push(b"-limit-");
            parts.push(l.as_bytes());
        }
    }
    identity::key(&parts)
}

#[cfg(test)]
mod tests {
    use super::first_sentence;

    #[test]
    fn a_first_sentence_ends_at_its_stop_and_keeps_one_line() {
        assert_eq!(
            first_sentence("Fill PDF forms. Use when asked."),
            "Fill PDF forms."
        );
        assert_eq!(
            first_sentence("Builds\n  decks  v1.2 well"),
            "Builds decks v1.2 well"
        );
        assert_eq!(first_sentence("Why? Because."), "Why?");
        assert_eq!(first_sentence(""), "");
    }
}
