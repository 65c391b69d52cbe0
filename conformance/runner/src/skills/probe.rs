//! The probes of the skills profile and the views they make
//! (conformance/sep-2640/README.md, *Probes and their views*). A view
//! is keyed by what the fixture holds — a skill by its folder, a file by
//! its path below the skill — whatever URIs, page sizes, cursors or
//! orders the server chose, so one hand-written pattern fits every
//! implementation that answers validly.

use std::collections::{BTreeMap, BTreeSet};

use base64::Engine as _;
use serde_json::{Map, Value, json};

use crate::json::json_eq;
use crate::skills::case::Probe;
use crate::skills::fixture::{Fixture, Kind, digest_bytes, join};
use crate::skills::transport::{Broken, Client};
use crate::skills::uri::{decode, encode_path, encode_segment, normalize, segments};

/// Most `skills/list` pages one walk follows.
pub const MAX_PAGES: usize = 1000;
/// Most `resources/directory/read` requests one skill's walk makes.
pub const MAX_DIRECTORY_REQUESTS: usize = 2000;

const SKILL_MD: &str = "SKILL.md";
const DIRECTORY_MIME: &str = "inode/directory";

/// One entry of the listing, read.
#[derive(Clone, Debug)]
pub struct Listed {
    /// The fixture folder it maps to (None: no folder, or more than one).
    pub dir: Option<String>,
    pub uri: String,
    /// Its `uri` without `/SKILL.md`: the skill's root directory.
    pub root: Option<String>,
    /// The entry's view.
    pub view: Value,
    /// Its manifest, path below the skill → URI, when `resources` is an array.
    pub files: Option<BTreeMap<String, String>>,
}

/// The listing, walked once per unit.
pub struct Catalog {
    pub view: Value,
    pub listed: Vec<Listed>,
}

impl Catalog {
    /// The first entry that maps to fixture folder `dir`.
    pub fn first(&self, dir: &str) -> Option<&Listed> {
        self.listed.iter().find(|l| l.dir.as_deref() == Some(dir))
    }

    /// Every folder listed, each once, in listing order.
    fn dirs(&self) -> Vec<&Listed> {
        let mut seen = BTreeSet::new();
        self.listed
            .iter()
            .filter(|l| l.dir.as_ref().is_some_and(|d| seen.insert(d.clone())))
            .collect()
    }
}

/// Runs probes against one server in one lifecycle, over one fixture.
pub struct Prober<'a> {
    pub client: &'a mut Client,
    pub fixture: &'a Fixture,
    skill_dirs: Vec<String>,
    catalog: Option<Catalog>,
}

/// Why a template of a case has no value.
enum Unresolved {
    /// It names the skill of fixture folder `dir`, which is not listed.
    Unlisted { dir: String, why: String },
    /// Anything else: a malformed template, a file no manifest lists.
    Bad(String),
}

impl Unresolved {
    fn why(self) -> String {
        match self {
            Unresolved::Unlisted { why, .. } | Unresolved::Bad(why) => why,
        }
    }
}

/// What follows `root` and a `/` in `u`, with the scheme and authority
/// compared without regard to case (RFC 3986 §6.2.2.1, reading R3): a
/// manifest may write `SKILL://alpha/x` for a skill at `skill://alpha`.
/// The path is compared as written, so a dot-segment or an escape in it
/// stays for the manifest's checks to see.
fn below<'a>(u: &'a str, root: &str) -> Option<&'a str> {
    if let Some(r) = u.strip_prefix(root) {
        return r.strip_prefix('/');
    }
    let (us, ur) = u.split_once("://")?;
    let (rs, rr) = root.split_once("://")?;
    let ua = ur.find('/').unwrap_or(ur.len());
    let ra = rr.find('/').unwrap_or(rr.len());
    if !us.eq_ignore_ascii_case(rs) || !ur[..ua].eq_ignore_ascii_case(&rr[..ra]) {
        return None;
    }
    ur[ua..].strip_prefix(&rr[ra..])?.strip_prefix('/')
}

/// The URI the Resource Mapping gives the file at `rel` (a `/`-separated
/// path) below the skill whose root directory is `root`: `<root>/<file-path>`
/// (SEP2640-MAP-05, -07), each segment escaped.
fn mapped_uri(root: &str, rel: &str) -> String {
    format!("{root}/{}", encode_path(rel))
}

/// The object `v` without member `k`: a result's framing (`resultType`,
/// `ttlMs`, `cacheScope`, `nextCursor`, `_meta`, anything else).
fn frame(v: &Value, k: &str) -> Value {
    match v {
        Value::Object(m) => {
            let mut m = m.clone();
            m.remove(k);
            Value::Object(m)
        }
        other => other.clone(),
    }
}

fn error_of(reply: &Value) -> Value {
    reply.get("error").cloned().unwrap_or_else(|| reply.clone())
}

/// The bytes a `resources/read` result carries for `uri`: the content
/// whose `uri` it is (else the first), its `text` as UTF-8 or its `blob`
/// decoded.
pub fn content_bytes(result: &Value, uri: &str) -> Result<(Vec<u8>, Value), String> {
    let contents = result
        .get("contents")
        .and_then(Value::as_array)
        .ok_or("the result has no `contents` array")?;
    let item = contents
        .iter()
        .find(|c| c.get("uri").and_then(Value::as_str) == Some(uri))
        .or_else(|| contents.first())
        .ok_or("`contents` is empty")?;
    let mime = item.get("mimeType").cloned().unwrap_or(Value::Null);
    if let Some(t) = item.get("text").and_then(Value::as_str) {
        return Ok((t.as_bytes().to_vec(), mime));
    }
    if let Some(b) = item.get("blob").and_then(Value::as_str) {
        return base64::engine::general_purpose::STANDARD
            .decode(b)
            .map(|bytes| (bytes, mime))
            .map_err(|e| format!("the blob is not base64: {e}"));
    }
    Err("the content has neither `text` nor `blob`".into())
}

/// Whether two entry views say the same: URI, frontmatter and manifest.
fn same_entry(a: &Value, b: &Value) -> bool {
    ["uri", "frontmatter", "resources"]
        .iter()
        .all(|k| match (a.get(*k), b.get(*k)) {
            (Some(x), Some(y)) => json_eq(x, y),
            _ => false,
        })
}

impl<'a> Prober<'a> {
    pub fn new(client: &'a mut Client, fixture: &'a Fixture) -> Result<Prober<'a>, String> {
        Ok(Prober {
            skill_dirs: fixture.skill_dirs()?,
            client,
            fixture,
            catalog: None,
        })
    }

    /// The view `probe` makes.
    pub fn run(&mut self, probe: &Probe) -> Result<Value, Broken> {
        match probe {
            Probe::Capabilities => self.client.capabilities(),
            Probe::Catalog => Ok(self.catalog()?.view.clone()),
            Probe::Get => self.get(),
            Probe::Read => self.read(),
            Probe::Directory => self.directory(),
            Probe::Skill { dir, names } => self.skill(dir, names),
            Probe::Uris {
                method,
                uris,
                secrets,
            } => self.uris(method, uris, secrets),
            Probe::Request { method, params } => match self.resolve_all(params) {
                Err(why) => Ok(json!({"unresolved": why})),
                Ok(p) => self.client.call(method, p),
            },
        }
    }

    /// True when an entry's URI's last segment, or its frontmatter's
    /// name, is the last segment of a fixture folder that holds a
    /// SKILL.md.
    fn fixture_name(&self, view: &Value) -> bool {
        let names = [
            view.get("last_segment").and_then(Value::as_str),
            view.get("frontmatter")
                .and_then(|f| f.get("name"))
                .and_then(Value::as_str),
        ];
        self.skill_dirs.iter().any(|d| {
            let last = d.rsplit('/').next();
            names.iter().any(|n| n.is_some() && *n == last)
        })
    }

    /// The fixture folder a skill root URI names: the folder whose path
    /// is the longest tail of the URI's segments (a prefix is the
    /// server's to choose, SEP2640-MAP-11); among equals, the one whose
    /// SKILL.md has the digest the manifest gives it. When no folder's
    /// whole path is a tail — a skill below a plain folder published
    /// under a prefix of the server's own (`group/sub-skill` as
    /// `skill://sub-skill`, MAP-11; NEST-02 binds only a skill nested in
    /// a skill) — the folders whose last segment is the URI's, told apart
    /// by that digest the same way.
    fn map_dir(&self, root: &str, skill_md_digest: Option<&str>) -> Option<String> {
        let segs = segments(root)?;
        self.map_by_tail(&segs, skill_md_digest).or_else(|| {
            let last = segs.last()?;
            let named: Vec<&String> = self
                .skill_dirs
                .iter()
                .filter(|d| d.rsplit('/').next() == Some(last.as_str()))
                .collect();
            self.one_by_digest(named, skill_md_digest)
        })
    }

    /// The folder whose whole path is the longest tail of `segs`.
    fn map_by_tail(&self, segs: &[String], skill_md_digest: Option<&str>) -> Option<String> {
        let mut best: Vec<&String> = Vec::new();
        let mut best_len = 0;
        for d in &self.skill_dirs {
            let ds: Vec<&str> = d.split('/').collect();
            if ds.len() > segs.len() {
                continue;
            }
            let tail = &segs[segs.len() - ds.len()..];
            if tail.iter().zip(&ds).all(|(a, b)| a == b) {
                if ds.len() > best_len {
                    best = vec![d];
                    best_len = ds.len();
                } else if ds.len() == best_len {
                    best.push(d);
                }
            }
        }
        self.one_by_digest(best, skill_md_digest)
    }

    /// The one folder of `dirs`, or among several the one whose SKILL.md
    /// has `skill_md_digest`.
    fn one_by_digest(
        &self,
        mut dirs: Vec<&String>,
        skill_md_digest: Option<&str>,
    ) -> Option<String> {
        if dirs.len() > 1 {
            dirs.retain(|d| {
                skill_md_digest.is_some_and(|want| {
                    self.fixture
                        .facts(&join(d, SKILL_MD))
                        .is_ok_and(|f| f.digest == want)
                })
            });
        }
        match dirs.as_slice() {
            [one] => Some((*one).clone()),
            _ => None,
        }
    }

    /// A `Skill` as the views show it (README, *The entry view*).
    fn entry(&self, v: &Value) -> Listed {
        let mut problems: Vec<String> = Vec::new();
        let mut out = Map::new();
        let uri = v
            .get("uri")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        out.insert("uri".into(), v.get("uri").cloned().unwrap_or(Value::Null));
        let root = uri.strip_suffix("/SKILL.md").map(String::from);
        let scheme = uri.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
        out.insert("scheme".into(), json!(scheme));
        if root.is_none() {
            problems.push(format!("the entry's uri {uri:?} does not end in /SKILL.md"));
        }
        let last = root
            .as_deref()
            .and_then(segments)
            .and_then(|s| s.last().cloned());
        out.insert("last_segment".into(), json!(last));
        if let Some(fm) = v.get("frontmatter") {
            out.insert("frontmatter".into(), fm.clone());
        }
        let name = v.get("frontmatter").and_then(|f| f.get("name"));
        out.insert(
            "last_segment_is_name".into(),
            json!(last.is_some() && name.and_then(Value::as_str) == last.as_deref()),
        );
        let mut files = None;
        let mut skill_md_digest = None;
        match v.get("resources") {
            None => problems.push("the entry has no `resources`".into()),
            Some(Value::Array(items)) => {
                let mut map = Map::new();
                let mut by_rel = BTreeMap::new();
                let own = normalize(&uri);
                if !items.iter().any(|i| {
                    i.get("uri")
                        .and_then(Value::as_str)
                        .is_some_and(|u| normalize(u) == own)
                }) {
                    problems.push(format!(
                        "no manifest entry has the skill's own uri {uri:?} (SEP2640-RES-04)"
                    ));
                }
                for item in items {
                    let Some(u) = item.get("uri").and_then(Value::as_str) else {
                        problems.push(format!("a manifest entry without a uri: {item}"));
                        continue;
                    };
                    let rel = root
                        .as_deref()
                        .and_then(|r| below(u, r))
                        .filter(|r| !r.is_empty());
                    let Some(rel) = rel else {
                        problems.push(format!("{u} is not below the skill's root"));
                        continue;
                    };
                    let parts: Vec<String> = rel.split('/').map(decode).collect();
                    if parts
                        .iter()
                        .any(|p| p.is_empty() || p == "." || p == ".." || p.contains('/'))
                    {
                        problems.push(format!("{u} is not a plain file path below the skill"));
                        continue;
                    }
                    let key = parts.join("/");
                    if map.contains_key(&key) {
                        problems.push(format!("{key} is listed twice ({u})"));
                        continue;
                    }
                    let mut f = Map::new();
                    for k in ["digest", "size"] {
                        if let Some(x) = item.get(k) {
                            f.insert(k.into(), x.clone());
                        }
                    }
                    f.insert("uri".into(), json!(u));
                    if normalize(u) == own {
                        skill_md_digest =
                            item.get("digest").and_then(Value::as_str).map(String::from);
                    }
                    map.insert(key.clone(), Value::Object(f));
                    by_rel.insert(key, u.to_string());
                }
                out.insert("resources".into(), Value::Object(map));
                files = Some(by_rel);
            }
            Some(other) => {
                if other != "dynamic" {
                    problems.push(
                        "`resources` is neither an array nor \"dynamic\" (SEP2640-RES-01)".into(),
                    );
                }
                out.insert("resources".into(), other.clone());
            }
        }
        out.insert("manifest_problems".into(), json!(problems));
        let dir = root
            .as_deref()
            .and_then(|r| self.map_dir(r, skill_md_digest.as_deref()));
        Listed {
            dir,
            uri,
            root,
            view: Value::Object(out),
            files,
        }
    }

    /// `skills/list` from no cursor to the last page, once per unit.
    pub fn catalog(&mut self) -> Result<&Catalog, Broken> {
        if self.catalog.is_none() {
            let c = self.walk_listing()?;
            self.catalog = Some(c);
        }
        self.catalog
            .as_ref()
            .ok_or_else(|| Broken("internal error: the catalog was not kept".into()))
    }

    fn walk_listing(&mut self) -> Result<Catalog, Broken> {
        let mut pages = Vec::new();
        let mut problems: Vec<String> = Vec::new();
        let mut listed: Vec<Listed> = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = BTreeSet::new();
        for _ in 0..MAX_PAGES {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let reply = self.client.call("skills/list", params)?;
            let Some(result) = reply.get("result") else {
                pages.push(json!({"error": error_of(&reply)}));
                break;
            };
            let Some(skills) = result.get("skills").and_then(Value::as_array) else {
                problems.push("a page's `skills` is not an array".into());
                pages.push(frame(result, "skills"));
                break;
            };
            pages.push(json!({"count": skills.len(), "frame": frame(result, "skills")}));
            listed.extend(skills.iter().map(|s| self.entry(s)));
            match result.get("nextCursor") {
                None | Some(Value::Null) => {
                    cursor = None;
                    break;
                }
                Some(Value::String(c)) => {
                    if !seen.insert(c.clone()) {
                        problems.push(format!("the cursor {c:?} came back a second time"));
                        cursor = None;
                        break;
                    }
                    cursor = Some(c.clone());
                }
                Some(other) => {
                    problems.push(format!("nextCursor is not a string: {other}"));
                    cursor = None;
                    break;
                }
            }
        }
        if cursor.is_some() {
            problems.push(format!("still a nextCursor after {MAX_PAGES} pages"));
        }
        let mut skills = Map::new();
        let mut repeated: Vec<String> = Vec::new();
        let mut unmapped = Vec::new();
        let mut own = Vec::new();
        for l in &listed {
            match &l.dir {
                Some(d) if skills.contains_key(d) => {
                    if !repeated.contains(d) {
                        repeated.push(d.clone());
                    }
                }
                Some(d) => {
                    skills.insert(d.clone(), l.view.clone());
                }
                // An entry no fixture folder can be: not one of the
                // fixture's names, by its URI or its frontmatter — a
                // skill of the server's own, which SEP2640-LIST-01 lets
                // it serve ("the skills it serves"). Any other entry
                // that maps to no folder is a fixture skill served
                // wrong (a digest no folder's SKILL.md has, say).
                None if !self.fixture_name(&l.view) => own.push(l.view.clone()),
                None => unmapped.push(l.view.clone()),
            }
        }
        let view = json!({
            "pages": pages,
            // The fixture's entries; the server's own are `own`.
            "count": listed.len() - own.len(),
            "own": own,
            "skills": skills,
            "repeated": repeated,
            "unmapped": unmapped,
            "problems": problems,
        });
        Ok(Catalog { view, listed })
    }

    /// `skills/get` of each listed skill.
    fn get(&mut self) -> Result<Value, Broken> {
        let listed: Vec<Listed> = self.catalog()?.dirs().into_iter().cloned().collect();
        let mut out = Map::new();
        for l in listed {
            let reply = self.client.call("skills/get", json!({"uri": l.uri}))?;
            let v = match reply.get("result") {
                Some(r) => {
                    let got = self.entry(r.get("skill").unwrap_or(&Value::Null));
                    json!({
                        "frame": frame(r, "skill"),
                        "entry": got.view,
                        "same_as_listed": same_entry(&l.view, &got.view),
                    })
                }
                None => json!({"error": error_of(&reply)}),
            };
            out.insert(l.dir.clone().unwrap_or_default(), v);
        }
        Ok(Value::Object(out))
    }

    /// One `resources/read`: the digest and size of the bytes it served.
    fn read_one(&mut self, uri: &str) -> Result<Value, Broken> {
        let reply = self.client.call("resources/read", json!({"uri": uri}))?;
        let Some(result) = reply.get("result") else {
            return Ok(json!({"error": error_of(&reply)}));
        };
        Ok(match content_bytes(result, uri) {
            Ok((bytes, mime)) => {
                let f = digest_bytes(&bytes);
                json!({"digest": f.digest, "size": f.size, "mimeType": mime, "frame": frame(result, "contents")})
            }
            Err(why) => json!({"problem": why, "frame": frame(result, "contents")}),
        })
    }

    /// `resources/read` of every file of every listed manifest.
    fn read(&mut self) -> Result<Value, Broken> {
        let listed: Vec<Listed> = self.catalog()?.dirs().into_iter().cloned().collect();
        let mut out = Map::new();
        for l in listed {
            let v = match &l.files {
                // A "dynamic" skill lists no files, but its SKILL.md is
                // always readable at its uri (SEP2640-URI-01): read, so
                // its bytes and media type are judged too (R7).
                None if l.view.get("resources") == Some(&json!("dynamic")) => {
                    json!({"dynamic": {SKILL_MD: self.read_one(&l.uri)?}})
                }
                None => l.view.get("resources").cloned().unwrap_or(Value::Null),
                Some(files) => {
                    let mut m = Map::new();
                    for (rel, u) in files {
                        m.insert(rel.clone(), self.read_one(u)?);
                    }
                    Value::Object(m)
                }
            };
            out.insert(l.dir.clone().unwrap_or_default(), v);
        }
        Ok(Value::Object(out))
    }

    /// Each listed skill's directories, read from its root down.
    fn directory(&mut self) -> Result<Value, Broken> {
        let listed: Vec<Listed> = self.catalog()?.dirs().into_iter().cloned().collect();
        let mut out = Map::new();
        for l in listed {
            let Some(root) = &l.root else { continue };
            let v = self.walk_directory(root, l.files.as_ref())?;
            out.insert(l.dir.clone().unwrap_or_default(), v);
        }
        Ok(Value::Object(out))
    }

    fn walk_directory(
        &mut self,
        root: &str,
        manifest: Option<&BTreeMap<String, String>>,
    ) -> Result<Value, Broken> {
        let mut queue = std::collections::VecDeque::from([(root.to_string(), String::new())]);
        let mut files = Map::new();
        let mut dirs: Vec<String> = Vec::new();
        let mut pages = Vec::new();
        let mut errors = Vec::new();
        let mut problems: Vec<String> = Vec::new();
        let mut requests = 0;
        while let Some((u, rel)) = queue.pop_front() {
            let mut cursor: Option<String> = None;
            let mut seen = BTreeSet::new();
            loop {
                requests += 1;
                if requests > MAX_DIRECTORY_REQUESTS {
                    problems.push(format!("more than {MAX_DIRECTORY_REQUESTS} requests"));
                    queue.clear();
                    break;
                }
                let mut params = json!({"uri": u});
                if let Some(c) = &cursor {
                    params["cursor"] = json!(c);
                }
                let reply = self.client.call("resources/directory/read", params)?;
                let Some(result) = reply.get("result") else {
                    errors.push(json!({"uri": u, "error": error_of(&reply)}));
                    break;
                };
                pages.push(frame(result, "resources"));
                let Some(children) = result.get("resources").and_then(Value::as_array) else {
                    problems.push(format!("{u}: `resources` is not an array"));
                    break;
                };
                for c in children {
                    let cu = c.get("uri").and_then(Value::as_str).unwrap_or_default();
                    let seg = cu
                        .strip_prefix(u.as_str())
                        .and_then(|r| r.strip_prefix('/'))
                        .filter(|s| !s.is_empty() && !s.contains('/'));
                    let Some(seg) = seg else {
                        problems.push(format!("{cu:?} is not a direct child of {u}"));
                        continue;
                    };
                    let name = decode(seg);
                    if name == "." || name == ".." || name.contains('/') {
                        problems.push(format!("{cu:?} is not a plain name below {u}"));
                        continue;
                    }
                    let crel = join(&rel, &name);
                    if c.get("mimeType").and_then(Value::as_str) == Some(DIRECTORY_MIME) {
                        if dirs.contains(&crel) {
                            problems.push(format!("{crel} is listed twice"));
                        } else {
                            dirs.push(crel.clone());
                            queue.push_back((cu.to_string(), crel));
                        }
                    } else if files.contains_key(&crel) {
                        problems.push(format!("{crel} is listed twice"));
                    } else {
                        files.insert(crel, frame(c, "uri"));
                    }
                }
                match result.get("nextCursor").and_then(Value::as_str) {
                    Some(c) if seen.insert(c.to_string()) => cursor = Some(c.to_string()),
                    Some(c) => {
                        problems.push(format!("{u}: the cursor {c:?} came back a second time"));
                        break;
                    }
                    None => break,
                }
            }
        }
        let mut v = json!({
            "files": files,
            "dirs": dirs,
            "pages": pages,
            "errors": errors,
            "problems": problems,
        });
        if let Some(m) = manifest {
            let only_dir: Vec<&String> = files.keys().filter(|k| !m.contains_key(*k)).collect();
            let only_man: Vec<&String> = m.keys().filter(|k| !files.contains_key(*k)).collect();
            v["only_in_directory"] = json!(only_dir);
            v["only_in_manifest"] = json!(only_man);
        }
        Ok(v)
    }

    /// The URIs a skill left out of the listing could be asked under:
    /// `skill://<folder>/SKILL.md`, `skill://<name>/SKILL.md`, and both
    /// under every prefix the listed skills show.
    fn candidates(&mut self, dir: &str, names: &[String]) -> Result<Vec<String>, Broken> {
        let mut prefixes: Vec<String> = vec!["skill://".into()];
        for l in &self.catalog()?.listed {
            let (Some(d), Some(root)) = (&l.dir, &l.root) else {
                continue;
            };
            let Some((scheme, rest)) = root.split_once("://") else {
                continue;
            };
            let parts: Vec<&str> = rest.split('/').collect();
            let k = d.split('/').count();
            if parts.len() < k {
                continue;
            }
            let kept = &parts[..parts.len() - k];
            let p = if kept.is_empty() {
                format!("{scheme}://")
            } else {
                format!("{scheme}://{}/", kept.join("/"))
            };
            if !prefixes.contains(&p) {
                prefixes.push(p);
            }
        }
        let parent = dir.rsplit_once('/').map(|(p, _)| p).unwrap_or("");
        let last = dir.rsplit('/').next().unwrap_or(dir);
        let mut all_names = vec![last.to_string()];
        all_names.extend(names.iter().cloned());
        let mut out: Vec<String> = Vec::new();
        let mut add = |u: String| {
            if !out.contains(&u) {
                out.push(u);
            }
        };
        for p in &prefixes {
            add(format!("{p}{}/{SKILL_MD}", encode_path(dir)));
            for n in &all_names {
                add(format!("{p}{}/{SKILL_MD}", encode_segment(n)));
                if !parent.is_empty() {
                    add(format!(
                        "{p}{}/{}/{SKILL_MD}",
                        encode_path(parent),
                        encode_segment(n)
                    ));
                }
            }
        }
        Ok(out)
    }

    /// One fixture folder: its entry when listed (and whether its root is
    /// below the listed skill enclosing it, SEP2640-NEST-11), and when it
    /// is not, whether `skills/get` refuses every URI it could have
    /// (SEP2640-GET-08, R2) — or answers with another listed skill.
    fn skill(&mut self, dir: &str, names: &[String]) -> Result<Value, Broken> {
        let (first, times, enclosing) = {
            let c = self.catalog()?;
            let enclosing = c
                .dirs()
                .into_iter()
                .filter_map(|l| Some((l.dir.as_deref()?, l.root.as_deref()?)))
                .filter(|(d, _)| dir.starts_with(&format!("{d}/")))
                .max_by_key(|(d, _)| d.len())
                .map(|(_, r)| r.to_string());
            (
                c.first(dir).cloned(),
                c.listed
                    .iter()
                    .filter(|l| l.dir.as_deref() == Some(dir))
                    .count(),
                enclosing,
            )
        };
        if let Some(l) = first {
            let reply = self.client.call("skills/get", json!({"uri": l.uri}))?;
            let get = match reply.get("result") {
                Some(r) => {
                    let got = self.entry(r.get("skill").unwrap_or(&Value::Null));
                    json!({"uri": l.uri, "refused": false, "same_as_listed": same_entry(&l.view, &got.view)})
                }
                None => json!({"uri": l.uri, "refused": true, "code": reply["error"]["code"]}),
            };
            let under = match (&enclosing, &l.root) {
                (Some(e), Some(r)) => json!(r.starts_with(&format!("{e}/"))),
                _ => Value::Null,
            };
            return Ok(json!({
                "listed": true,
                "times_listed": times,
                "entry": l.view,
                "root": l.root,
                "under_enclosing": under,
                "get": [get],
            }));
        }
        let listed: Vec<Value> = self
            .catalog()?
            .dirs()
            .into_iter()
            .map(|l| l.view.clone())
            .collect();
        let mut get = Vec::new();
        for u in self.candidates(dir, names)? {
            let reply = self.client.call("skills/get", json!({"uri": u}))?;
            let other = reply.get("result").is_some_and(|r| {
                let got = self.entry(r.get("skill").unwrap_or(&Value::Null));
                listed.iter().any(|l| same_entry(l, &got.view))
            });
            get.push(json!({
                "uri": u,
                "refused": reply.get("error").is_some(),
                "code": reply["error"]["code"],
                "is_listed_skill": other,
            }));
        }
        Ok(json!({"listed": false, "times_listed": 0, "get": get}))
    }

    /// The listed file a URI names, as RFC 3986 compares URIs (R3): by
    /// the skill's manifest, or — for a skill served `"dynamic"`, which
    /// lists none (R7) — by the Resource Mapping, the skill's root and
    /// the file's path below it (SEP2640-MAP-05, -07), over the fixture's
    /// regular files and its symlinks to files inside the skill (R6).
    fn named_file(&mut self, uri: &str) -> Result<Option<(String, String)>, Broken> {
        let n = normalize(uri);
        let fixture = self.fixture;
        for l in self.catalog()?.dirs() {
            let Some(d) = &l.dir else { continue };
            match (&l.files, &l.root) {
                (Some(files), _) => {
                    if let Some((rel, _)) = files.iter().find(|(_, u)| normalize(u) == n) {
                        return Ok(Some((d.clone(), rel.clone())));
                    }
                }
                (None, Some(root)) if l.view.get("resources") == Some(&json!("dynamic")) => {
                    let files = fixture.walk(d).unwrap_or_default();
                    if let Some((rel, _)) = files
                        .iter()
                        .filter(|(rel, k)| {
                            *k == Kind::File
                                || (matches!(k, Kind::Symlink { to_dir: false })
                                    && fixture.file_within(d, rel))
                        })
                        .find(|(rel, _)| normalize(&mapped_uri(root, rel)) == n)
                    {
                        return Ok(Some((d.clone(), rel.clone())));
                    }
                }
                _ => {}
            }
        }
        Ok(None)
    }

    /// Each URI asked of `method`: refused, or served — and then whether
    /// what was served is what the URI names.
    fn uris(&mut self, method: &str, uris: &[String], secrets: &[String]) -> Result<Value, Broken> {
        let mut items = Vec::new();
        // Each template resolved; one naming a skill that is not listed
        // is asked at every root that skill could have had (as the `skill`
        // probe's candidates), since leaving a skill out is no licence to
        // serve what its folder holds as something else (R2, R6).
        type Asked = Result<(String, Option<(String, String)>), (String, String)>;
        let mut asked: Vec<Asked> = Vec::new();
        for t in uris {
            match self.resolve_as(t, None) {
                Ok(u) => asked.push(Ok((u, None))),
                Err(Unresolved::Unlisted { dir, .. }) => {
                    for c in self.candidates(&dir, &[])? {
                        let Some(root) = c.strip_suffix(&format!("/{SKILL_MD}")) else {
                            continue;
                        };
                        if let Ok(u) = self.resolve_as(t, Some((&dir, root))) {
                            asked.push(Ok((u, Some((dir.clone(), root.to_string())))));
                        }
                    }
                }
                Err(Unresolved::Bad(why)) => asked.push(Err((t.clone(), why))),
            }
        }
        for a in asked {
            let (u, as_) = match a {
                Ok(x) => x,
                Err((t, why)) => {
                    items.push(json!({"uri": t, "unresolved": why}));
                    continue;
                }
            };
            let reply = self.client.call(method, json!({"uri": u}))?;
            let refused = reply.get("error").is_some();
            let mut text = reply.to_string();
            let mut names = Value::Null;
            let mut served_as_named = Value::Null;
            match method {
                "resources/read" => {
                    let bytes = reply.get("result").map(|r| content_bytes(r, &u));
                    if let Some(Ok((b, _))) = &bytes {
                        text.push_str(&String::from_utf8_lossy(b));
                    }
                    let named = match &as_ {
                        // At a root the skill could have had: the fixture
                        // file the rest of the URI names.
                        Some((d, root)) => u
                            .strip_prefix(root.as_str())
                            .and_then(|r| r.strip_prefix('/'))
                            .map(|r| {
                                (
                                    d.clone(),
                                    r.split('/').map(decode).collect::<Vec<_>>().join("/"),
                                )
                            }),
                        None => self.named_file(&u)?,
                    };
                    if let Some((d, rel)) = named {
                        names = json!(join(&d, &rel));
                        if let Some(Ok((b, _))) = &bytes {
                            let want = self.fixture.facts(&join(&d, &rel)).map(|f| f.digest);
                            served_as_named = json!(want.ok() == Some(digest_bytes(b).digest));
                        }
                    }
                }
                "skills/get" => {
                    let n = normalize(&u);
                    let named = self
                        .catalog()?
                        .dirs()
                        .into_iter()
                        .find(|l| normalize(&l.uri) == n)
                        .cloned();
                    if let Some(l) = named {
                        names = json!(l.dir);
                        if let Some(r) = reply.get("result") {
                            let got = self.entry(r.get("skill").unwrap_or(&Value::Null));
                            served_as_named = json!(same_entry(&l.view, &got.view));
                        }
                    }
                }
                _ => {}
            }
            let leak = secrets.iter().any(|s| text.contains(s.as_str()));
            items.push(json!({
                "uri": u,
                "refused": refused,
                "code": reply["error"]["code"],
                "names": names,
                "served_as_named": served_as_named,
                "leak": leak,
            }));
        }
        Ok(Value::Array(items))
    }

    /// A string with its `${uri:DIR}`, `${root:DIR}` and
    /// `${file:DIR:PATH}` replaced from the listing.
    pub fn resolve(&mut self, t: &str) -> Result<String, String> {
        self.resolve_as(t, None).map_err(Unresolved::why)
    }

    /// [`Prober::resolve`], with the skill of fixture folder `as_.0`
    /// taken to have the root `as_.1` (a URI it could have, when it is
    /// not listed).
    fn resolve_as(&mut self, t: &str, as_: Option<(&str, &str)>) -> Result<String, Unresolved> {
        let mut out = String::new();
        let mut rest = t;
        while let Some(at) = rest.find("${") {
            out.push_str(&rest[..at]);
            let after = &rest[at + 2..];
            let end = after
                .find('}')
                .ok_or_else(|| Unresolved::Bad(format!("{t:?}: a template is not closed")))?;
            let inner = &after[..end];
            out.push_str(&self.template(inner, as_)?);
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }

    fn template(&mut self, inner: &str, as_: Option<(&str, &str)>) -> Result<String, Unresolved> {
        let bad = Unresolved::Bad;
        let (kind, arg) = inner
            .split_once(':')
            .ok_or_else(|| bad(format!("${{{inner}}} is not a template")))?;
        let cat = self
            .catalog()
            .map_err(|b| bad(format!("the listing could not be read: {}", b.0)))?;
        let (dir, file) = match kind {
            "file" => {
                let (d, f) = arg
                    .split_once(':')
                    .ok_or_else(|| bad(format!("${{{inner}}}: write ${{file:DIR:PATH}}")))?;
                (d, Some(f))
            }
            "uri" | "root" => (arg, None),
            _ => {
                return Err(bad(format!(
                    "${{{inner}}}: no template `{kind}` (uri, root, file)"
                )));
            }
        };
        if let Some((d, root)) = as_
            && d == dir
        {
            return Ok(match (kind, file) {
                ("uri", _) => format!("{root}/{SKILL_MD}"),
                (_, Some(f)) => mapped_uri(root, f),
                _ => root.to_string(),
            });
        }
        let l = cat.first(dir).ok_or_else(|| Unresolved::Unlisted {
            dir: dir.to_string(),
            why: format!("the skill {dir} is not listed, so ${{{inner}}} has no value"),
        })?;
        match (kind, file) {
            ("uri", _) => Ok(l.uri.clone()),
            ("root", _) => l
                .root
                .clone()
                .ok_or_else(|| bad(format!("{}'s uri has no root", l.uri))),
            // A skill served "dynamic" lists no files (R7): its file's
            // URI is the Resource Mapping's (SEP2640-MAP-05, -07).
            (_, Some(f))
                if l.files.is_none() && l.view.get("resources") == Some(&json!("dynamic")) =>
            {
                l.root
                    .as_deref()
                    .map(|root| mapped_uri(root, f))
                    .ok_or_else(|| bad(format!("{}'s uri has no root", l.uri)))
            }
            (_, Some(f)) => l
                .files
                .as_ref()
                .and_then(|m| m.get(f))
                .cloned()
                .ok_or_else(|| {
                    bad(format!(
                        "{dir}'s manifest lists no {f}, so ${{{inner}}} has no value"
                    ))
                }),
            _ => Err(bad(format!("${{{inner}}} is not a template"))),
        }
    }

    /// Every string of `v` resolved.
    fn resolve_all(&mut self, v: &Value) -> Result<Value, String> {
        Ok(match v {
            Value::String(s) => Value::String(self.resolve(s)?),
            Value::Array(l) => Value::Array(
                l.iter()
                    .map(|x| self.resolve_all(x))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Object(m) => {
                let mut o = Map::new();
                for (k, x) in m {
                    o.insert(k.clone(), self.resolve_all(x)?);
                }
                Value::Object(o)
            }
            other => other.clone(),
        })
    }
}
