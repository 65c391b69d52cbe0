//! Redactions (FORMAT.md, *Redactions*): a selector picks values inside a
//! normalized reply, a matcher checks each and, when the check holds,
//! replaces it by a stable token. `absent` is the one matcher about a key
//! that is not there: it writes its token where the key would be.

use serde_json::Value;

use crate::json::{PathElem, canonical_string, type_name};

/// One segment of a selector.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Seg {
    /// A literal object key.
    Key(String),
    /// `*`: any object key.
    AnyKey,
    /// `[N]`: one array index.
    Index(usize),
    /// `[*]`: any array index.
    AnyIndex,
    /// `**`: any depth, zero or more levels (object keys and array indices).
    Deep,
}

/// A parsed selector such as `result.structuredContent.skills[*].name`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selector {
    pub text: String,
    segs: Vec<Seg>,
}

impl Selector {
    pub fn parse(text: &str) -> Result<Selector, String> {
        if text.is_empty() {
            return Err("selector is empty".to_string());
        }
        let mut segs = Vec::new();
        for (n, part) in text.split('.').enumerate() {
            if part.is_empty() {
                return Err(format!(
                    "selector `{text}`: segment {} is empty (stray `.`?)",
                    n + 1
                ));
            }
            let (head, mut rest) = match part.find('[') {
                Some(i) => (&part[..i], &part[i..]),
                None => (part, ""),
            };
            if head.is_empty() {
                return Err(format!(
                    "selector `{text}`: `{part}` has an index but no key before it; write `key[N]`"
                ));
            }
            if head.contains(']') {
                return Err(format!("selector `{text}`: stray `]` in `{part}`"));
            }
            match head {
                "**" => {
                    if !rest.is_empty() {
                        return Err(format!(
                            "selector `{text}`: `**` already matches any depth; it takes no index"
                        ));
                    }
                    segs.push(Seg::Deep);
                }
                "*" => segs.push(Seg::AnyKey),
                h if h.contains('*') => {
                    return Err(format!(
                        "selector `{text}`: `{h}`: `*` stands alone (any key); partial wildcards are not supported"
                    ));
                }
                h => segs.push(Seg::Key(h.to_string())),
            }
            while !rest.is_empty() {
                let close = rest.find(']').ok_or_else(|| {
                    format!("selector `{text}`: `[` without a closing `]` in `{part}`")
                })?;
                if !rest.starts_with('[') {
                    return Err(format!(
                        "selector `{text}`: unexpected `{rest}` in `{part}`; indices are written `[N]` or `[*]`"
                    ));
                }
                let inner = &rest[1..close];
                if inner == "*" {
                    segs.push(Seg::AnyIndex);
                } else if !inner.is_empty() && inner.bytes().all(|b| b.is_ascii_digit()) {
                    let i: usize = inner
                        .parse()
                        .map_err(|_| format!("selector `{text}`: index `{inner}` is too large"))?;
                    segs.push(Seg::Index(i));
                } else {
                    return Err(format!(
                        "selector `{text}`: `[{inner}]` is not an index; write `[N]` or `[*]`"
                    ));
                }
                rest = &rest[close + 1..];
            }
        }
        Ok(Selector {
            text: text.to_string(),
            segs,
        })
    }

    /// Every concrete path in `v` that the selector matches, deduplicated,
    /// deepest first (so a value's children are redacted before the value).
    pub fn select(&self, v: &Value) -> Vec<Vec<PathElem>> {
        let mut out = Vec::new();
        let mut cur = Vec::new();
        walk(v, &self.segs, &mut cur, &mut out);
        out.sort();
        out.dedup();
        // Stable sort by depth, deepest first; ties keep document order.
        out.sort_by_key(|p| std::cmp::Reverse(p.len()));
        out
    }

    /// For a selector ending in a key name, the selector of the objects
    /// that key belongs to, and the key (`a[*].note` → `a[*]`, `note`).
    fn parent_and_key(&self) -> Option<(Selector, String)> {
        let (last, parent) = self.segs.split_last()?;
        let Seg::Key(k) = last else { return None };
        let text = self
            .text
            .strip_suffix(k.as_str())
            .map(|t| t.trim_end_matches('.').to_string())
            .unwrap_or_default();
        Some((
            Selector {
                text,
                segs: parent.to_vec(),
            },
            k.clone(),
        ))
    }
}

fn walk(v: &Value, segs: &[Seg], cur: &mut Vec<PathElem>, out: &mut Vec<Vec<PathElem>>) {
    let Some((first, rest)) = segs.split_first() else {
        out.push(cur.clone());
        return;
    };
    match first {
        Seg::Key(k) => {
            if let Some(child) = v.as_object().and_then(|m| m.get(k)) {
                cur.push(PathElem::Key(k.clone()));
                walk(child, rest, cur, out);
                cur.pop();
            }
        }
        Seg::AnyKey => {
            if let Some(m) = v.as_object() {
                for (k, child) in m {
                    cur.push(PathElem::Key(k.clone()));
                    walk(child, rest, cur, out);
                    cur.pop();
                }
            }
        }
        Seg::Index(i) => {
            if let Some(child) = v.as_array().and_then(|a| a.get(*i)) {
                cur.push(PathElem::Index(*i));
                walk(child, rest, cur, out);
                cur.pop();
            }
        }
        Seg::AnyIndex => {
            if let Some(a) = v.as_array() {
                for (i, child) in a.iter().enumerate() {
                    cur.push(PathElem::Index(i));
                    walk(child, rest, cur, out);
                    cur.pop();
                }
            }
        }
        Seg::Deep => {
            // Zero levels: the rest applies here.
            walk(v, rest, cur, out);
            // One or more levels: descend and keep `**` in front.
            match v {
                Value::Object(m) => {
                    for (k, child) in m {
                        cur.push(PathElem::Key(k.clone()));
                        walk(child, segs, cur, out);
                        cur.pop();
                    }
                }
                Value::Array(a) => {
                    for (i, child) in a.iter().enumerate() {
                        cur.push(PathElem::Index(i));
                        walk(child, segs, cur, out);
                        cur.pop();
                    }
                }
                _ => {}
            }
        }
    }
}

fn get<'a>(v: &'a Value, path: &[PathElem]) -> Option<&'a Value> {
    let mut cur = v;
    for e in path {
        cur = match e {
            PathElem::Key(k) => cur.as_object()?.get(k)?,
            PathElem::Index(i) => cur.as_array()?.get(*i)?,
        };
    }
    Some(cur)
}

fn get_mut<'a>(v: &'a mut Value, path: &[PathElem]) -> Option<&'a mut Value> {
    let mut cur = v;
    for e in path {
        cur = match e {
            PathElem::Key(k) => cur.as_object_mut()?.get_mut(k)?,
            PathElem::Index(i) => cur.as_array_mut()?.get_mut(*i)?,
        };
    }
    Some(cur)
}

/// What a redaction checks.
#[derive(Clone, Debug, PartialEq)]
pub enum Matcher {
    Any,
    Type(String),
    Contains(Vec<String>),
    Range(serde_json::Number, serde_json::Number),
    Sorted,
    /// A string of exactly N bytes (UTF-8) or an array of N items.
    Len(u64),
    /// The selected key is not there (see [`ABSENT`]).
    Absent,
}

/// The token `absent` writes where its key would be. A reply that has the
/// key keeps its value there, which the golden's token then shows up.
pub const ABSENT: &str = "<absent>";

const TYPES: [&str; 6] = ["string", "number", "boolean", "array", "object", "null"];

impl Matcher {
    pub fn parse(v: &Value) -> Result<Matcher, String> {
        let m = v
            .as_object()
            .ok_or_else(|| format!("matcher must be an object like {{\"any\": true}}, got {v}"))?;
        if m.len() != 1 {
            let keys: Vec<&str> = m.keys().map(String::as_str).collect();
            return Err(format!(
                "matcher must have exactly one of any, type, contains, range, len, sorted, absent; got [{}]",
                keys.join(", ")
            ));
        }
        let Some((k, arg)) = m.iter().next() else {
            return Err("matcher is empty".to_string());
        };
        match k.as_str() {
            "any" => match arg {
                Value::Bool(true) => Ok(Matcher::Any),
                _ => Err(format!("matcher `any` takes `true`, got {arg}")),
            },
            "sorted" => match arg {
                Value::Bool(true) => Ok(Matcher::Sorted),
                _ => Err(format!("matcher `sorted` takes `true`, got {arg}")),
            },
            "absent" => match arg {
                Value::Bool(true) => Ok(Matcher::Absent),
                _ => Err(format!("matcher `absent` takes `true`, got {arg}")),
            },
            "type" => match arg.as_str() {
                Some(t) if TYPES.contains(&t) => Ok(Matcher::Type(t.to_string())),
                _ => Err(format!(
                    "matcher `type` takes one of {}, got {arg}",
                    TYPES.join(", ")
                )),
            },
            "contains" => {
                let items = arg.as_array().filter(|a| !a.is_empty()).ok_or_else(|| {
                    format!("matcher `contains` takes a non-empty array of strings, got {arg}")
                })?;
                let mut out = Vec::new();
                for it in items {
                    match it.as_str() {
                        Some(s) if !s.is_empty() => out.push(s.to_string()),
                        _ => {
                            return Err(format!(
                                "matcher `contains`: every item must be a non-empty string, got {it}"
                            ));
                        }
                    }
                }
                Ok(Matcher::Contains(out))
            }
            "range" => {
                let pair = arg.as_array().filter(|a| a.len() == 2);
                let nums = pair.and_then(|a| match (&a[0], &a[1]) {
                    (Value::Number(lo), Value::Number(hi)) => Some((lo.clone(), hi.clone())),
                    _ => None,
                });
                let (lo, hi) = nums.ok_or_else(|| {
                    format!("matcher `range` takes [LO, HI] (two numbers), got {arg}")
                })?;
                if cmp_num(&lo, &hi) == Some(std::cmp::Ordering::Greater) {
                    return Err(format!("matcher `range`: LO {lo} is greater than HI {hi}"));
                }
                Ok(Matcher::Range(lo, hi))
            }
            "len" => arg
                .as_u64()
                .map(Matcher::Len)
                .ok_or_else(|| format!("matcher `len` takes a whole number, got {arg}")),
            other => Err(format!(
                "unknown matcher `{other}` (expected any, type, contains, range, len, sorted or absent)"
            )),
        }
    }

    /// When the check holds, the value that replaces the selected one.
    /// `absent` never replaces a value that is there.
    pub fn apply(&self, v: &Value) -> Option<Value> {
        match self {
            Matcher::Absent => None,
            Matcher::Any => Some(Value::String("<any>".to_string())),
            Matcher::Type(t) => (type_name(v) == t).then(|| Value::String(format!("<type:{t}>"))),
            Matcher::Contains(parts) => {
                let s = v.as_str()?;
                parts
                    .iter()
                    .all(|p| s.contains(p.as_str()))
                    .then(|| Value::String(format!("<contains:{}>", parts.join("|"))))
            }
            Matcher::Range(lo, hi) => {
                let Value::Number(n) = v else { return None };
                let ok = matches!(
                    cmp_num(lo, n),
                    Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)
                ) && matches!(
                    cmp_num(n, hi),
                    Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)
                );
                ok.then(|| Value::String(format!("<range:{lo}..{hi}>")))
            }
            Matcher::Len(n) => {
                let len = match v {
                    Value::String(s) => s.len() as u64,
                    Value::Array(a) => a.len() as u64,
                    _ => return None,
                };
                (len == *n).then(|| Value::String(format!("<len:{n}>")))
            }
            Matcher::Sorted => {
                let a = v.as_array()?;
                let mut keyed: Vec<(String, Value)> =
                    a.iter().map(|x| (canonical_string(x), x.clone())).collect();
                keyed.sort_by(|p, q| p.0.cmp(&q.0));
                Some(Value::Array(keyed.into_iter().map(|(_, x)| x).collect()))
            }
        }
    }
}

fn cmp_num(a: &serde_json::Number, b: &serde_json::Number) -> Option<std::cmp::Ordering> {
    let int = |n: &serde_json::Number| -> Option<i128> {
        n.as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
    };
    match (int(a), int(b)) {
        (Some(x), Some(y)) => Some(x.cmp(&y)),
        _ => a.as_f64()?.partial_cmp(&b.as_f64()?),
    }
}

/// One entry of a step's `redact` map.
#[derive(Clone, Debug, PartialEq)]
pub struct Redaction {
    pub selector: Selector,
    pub matcher: Matcher,
}

/// Parses a step's `redact` object. Entries are kept sorted by selector
/// text, the order they are applied in, so the result never depends on how
/// the JSON object happened to be ordered.
pub fn parse_redactions(v: &Value) -> Result<Vec<Redaction>, String> {
    let m = v.as_object().ok_or_else(|| {
        format!("`redact` must be an object mapping selector to matcher, got {v}")
    })?;
    let mut out = Vec::new();
    for (sel, mat) in m {
        let selector = Selector::parse(sel)?;
        let matcher = Matcher::parse(mat).map_err(|e| format!("redact `{sel}`: {e}"))?;
        if matcher == Matcher::Absent && selector.parent_and_key().is_none() {
            return Err(format!(
                "redact `{sel}`: matcher `absent` needs a selector that ends in a key name (like `result.structuredContent.note`)"
            ));
        }
        out.push(Redaction { selector, matcher });
    }
    out.sort_by(|a, b| a.selector.text.cmp(&b.selector.text));
    Ok(out)
}

/// Applies a step's redactions.
///
/// Every selector is matched against the reply as normalized, before any
/// redaction. Each selected value is then redacted at most once, deepest
/// values first (so a value's children are redacted before the value), by
/// the most specific selector that selects it (see [`Selector::specificity`]):
/// `problems[0].detail` wins over `problems[*].detail` for element 0, and a
/// token written by one redaction is never re-checked by another. A
/// selector that matches nothing changes nothing; a failing check leaves
/// the value as it is, for the comparison to show.
///
/// `absent` is the exception: for every object its selector's parent
/// selects (in the reply as normalized) that lacks the key, it writes the
/// key with the token [`ABSENT`], after the other redactions (so none of
/// them re-checks it). Where the key is there it changes nothing, and the
/// comparison shows the value against the golden's token.
pub fn apply_redactions(v: &mut Value, redactions: &[Redaction]) {
    use std::collections::BTreeMap;
    let mut missing: Vec<(Vec<PathElem>, String)> = Vec::new();
    for r in redactions.iter().filter(|r| r.matcher == Matcher::Absent) {
        let Some((parent, key)) = r.selector.parent_and_key() else {
            continue;
        };
        for path in parent.select(v) {
            let lacks = get(v, &path)
                .and_then(Value::as_object)
                .is_some_and(|m| !m.contains_key(&key));
            if lacks {
                missing.push((path, key.clone()));
            }
        }
    }
    let mut chosen: BTreeMap<Vec<PathElem>, usize> = BTreeMap::new();
    for (ri, r) in redactions.iter().enumerate() {
        if r.matcher == Matcher::Absent {
            continue;
        }
        for path in r.selector.select(v) {
            match chosen.get(&path) {
                Some(&other)
                    if !more_specific(&redactions[ri].selector, &redactions[other].selector) => {}
                _ => {
                    chosen.insert(path, ri);
                }
            }
        }
    }
    let mut order: Vec<(Vec<PathElem>, usize)> = chosen.into_iter().collect();
    // Deepest first; the BTreeMap order (document order) breaks ties.
    order.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
    for (path, ri) in order {
        if let Some(slot) = get_mut(v, &path)
            && let Some(token) = redactions[ri].matcher.apply(slot)
        {
            *slot = token;
        }
    }
    for (path, key) in missing {
        if let Some(Value::Object(m)) = get_mut(v, &path) {
            m.entry(key)
                .or_insert_with(|| Value::String(ABSENT.to_string()));
        }
    }
}

/// Whether `a` is strictly more specific than `b` (ties go to the one whose
/// text sorts first, so the choice is always deterministic).
fn more_specific(a: &Selector, b: &Selector) -> bool {
    match a.specificity().cmp(&b.specificity()) {
        std::cmp::Ordering::Less => true,
        std::cmp::Ordering::Greater => false,
        std::cmp::Ordering::Equal => a.text < b.text,
    }
}

impl Selector {
    /// Sort key, smaller = more specific: fewer `**`, then fewer `*`/`[*]`,
    /// then wildcards further right (a literal earlier in the path wins).
    fn specificity(&self) -> (usize, usize, Vec<std::cmp::Reverse<usize>>) {
        let deep = self.segs.iter().filter(|s| matches!(s, Seg::Deep)).count();
        let wild_at: Vec<std::cmp::Reverse<usize>> = self
            .segs
            .iter()
            .enumerate()
            .filter(|(_, s)| matches!(s, Seg::AnyKey | Seg::AnyIndex | Seg::Deep))
            .map(|(i, _)| std::cmp::Reverse(i))
            .collect();
        (deep, wild_at.len(), wild_at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn redact(mut v: Value, r: Value) -> Value {
        let rs = parse_redactions(&r).unwrap();
        apply_redactions(&mut v, &rs);
        v
    }

    fn paths(sel: &str, v: &Value) -> Vec<String> {
        Selector::parse(sel)
            .unwrap()
            .select(v)
            .iter()
            .map(|p| crate::json::format_path(p))
            .collect()
    }

    #[test]
    fn parses_selectors() {
        let s = Selector::parse("result.structuredContent.skills[0].name").unwrap();
        assert_eq!(
            s.segs,
            vec![
                Seg::Key("result".into()),
                Seg::Key("structuredContent".into()),
                Seg::Key("skills".into()),
                Seg::Index(0),
                Seg::Key("name".into())
            ]
        );
        let s = Selector::parse("a.*.b[*][2].**.c").unwrap();
        assert_eq!(
            s.segs,
            vec![
                Seg::Key("a".into()),
                Seg::AnyKey,
                Seg::Key("b".into()),
                Seg::AnyIndex,
                Seg::Index(2),
                Seg::Deep,
                Seg::Key("c".into())
            ]
        );
    }

    #[test]
    fn rejects_bad_selectors() {
        for bad in [
            "", "a..b", ".a", "a.", "a[", "a[x]", "a[]", "[0]", "a.[0]", "**[0]", "a*b", "a]b",
            "a[0]x",
        ] {
            assert!(Selector::parse(bad).is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn selects_literal_index_and_wildcards() {
        let v =
            json!({"result": {"items": [{"n": 1}, {"n": 2}], "m": {"x": {"n": 3}, "y": {"n": 4}}}});
        assert_eq!(paths("result.items[1].n", &v), vec!["result.items[1].n"]);
        assert_eq!(
            paths("result.items[*].n", &v),
            vec!["result.items[0].n", "result.items[1].n"]
        );
        assert_eq!(
            paths("result.m.*.n", &v),
            vec!["result.m.x.n", "result.m.y.n"]
        );
        // `*` is object keys only, `[*]` array indices only.
        assert!(paths("result.items.*", &v).is_empty());
        assert!(paths("result.m[*]", &v).is_empty());
        assert!(paths("result.items[5].n", &v).is_empty());
        assert!(paths("result.nope", &v).is_empty());
    }

    #[test]
    fn deep_matches_zero_or_more_levels() {
        let v = json!({"result": {"n": 0, "a": [{"n": 1, "b": {"n": 2}}]}});
        assert_eq!(
            paths("result.**.n", &v),
            vec!["result.a[0].b.n", "result.a[0].n", "result.n"]
        );
        // `**` at the end selects the node itself and every descendant, deepest first.
        let p = paths("result.a.**", &v);
        assert_eq!(p.first().map(String::as_str), Some("result.a[0].b.n"));
        assert_eq!(p.last().map(String::as_str), Some("result.a"));
        assert_eq!(p.len(), 5);
        // Repeated `**` yields no duplicates.
        assert_eq!(paths("**.**.n", &v).len(), 3);
    }

    #[test]
    fn any_and_type() {
        let v = redact(
            json!({"result": {"pid": 42, "s": "x"}}),
            json!({"result.pid": {"any": true}}),
        );
        assert_eq!(v, json!({"result": {"pid": "<any>", "s": "x"}}));
        let v = redact(
            json!({"result": {"pid": 42, "s": "x"}}),
            json!({"result.pid": {"type": "number"}, "result.s": {"type": "number"}}),
        );
        // The check on `s` fails: the value stays for the comparison to show.
        assert_eq!(v, json!({"result": {"pid": "<type:number>", "s": "x"}}));
        let v = redact(
            json!({"a": null, "b": [], "c": {}, "d": true}),
            json!({
                "a": {"type": "null"}, "b": {"type": "array"}, "c": {"type": "object"}, "d": {"type": "boolean"}
            }),
        );
        assert_eq!(
            v,
            json!({"a": "<type:null>", "b": "<type:array>", "c": "<type:object>", "d": "<type:boolean>"})
        );
        // An absent value is not selected, so `any` does not invent it.
        let v = redact(json!({"result": {}}), json!({"result.pid": {"any": true}}));
        assert_eq!(v, json!({"result": {}}));
    }

    #[test]
    fn contains() {
        let r = json!({"error.message": {"contains": ["link", "outside"]}});
        let v = redact(
            json!({"error": {"message": "symlink points outside the root"}}),
            r.clone(),
        );
        assert_eq!(v, json!({"error": {"message": "<contains:link|outside>"}}));
        let v = redact(json!({"error": {"message": "symlink refused"}}), r.clone());
        assert_eq!(v, json!({"error": {"message": "symlink refused"}}));
        let v = redact(json!({"error": {"message": 7}}), r);
        assert_eq!(v, json!({"error": {"message": 7}}));
    }

    #[test]
    fn range() {
        let r = json!({"n": {"range": [1, 10]}});
        assert_eq!(
            redact(json!({"n": 1}), r.clone()),
            json!({"n": "<range:1..10>"})
        );
        assert_eq!(
            redact(json!({"n": 10}), r.clone()),
            json!({"n": "<range:1..10>"})
        );
        assert_eq!(
            redact(json!({"n": 5.5}), r.clone()),
            json!({"n": "<range:1..10>"})
        );
        assert_eq!(redact(json!({"n": 11}), r.clone()), json!({"n": 11}));
        assert_eq!(redact(json!({"n": 0.5}), r.clone()), json!({"n": 0.5}));
        assert_eq!(redact(json!({"n": "5"}), r), json!({"n": "5"}));
        let r = json!({"n": {"range": [0.5, 1.5]}});
        assert_eq!(redact(json!({"n": 1}), r), json!({"n": "<range:0.5..1.5>"}));
    }

    #[test]
    fn sorted() {
        let r = json!({"result.list": {"sorted": true}});
        let v = redact(json!({"result": {"list": ["b", "a", "c"]}}), r.clone());
        assert_eq!(v, json!({"result": {"list": ["a", "b", "c"]}}));
        let v = redact(
            json!({"result": {"list": [{"n": "b"}, {"n": "a"}]}}),
            r.clone(),
        );
        assert_eq!(v, json!({"result": {"list": [{"n": "a"}, {"n": "b"}]}}));
        // Sorted by canonical JSON, so key order inside elements does not matter.
        let a: Value =
            serde_json::from_str(r#"{"result":{"list":[{"z":1,"a":2},{"a":1}]}}"#).unwrap();
        let v = redact(a, r.clone());
        assert_eq!(v, json!({"result": {"list": [{"a": 1}, {"a": 2, "z": 1}]}}));
        // Not an array: left alone.
        assert_eq!(
            redact(json!({"result": {"list": "x"}}), r),
            json!({"result": {"list": "x"}})
        );
    }

    #[test]
    fn deep_redaction_applies_children_first() {
        let r = json!({"result.**": {"sorted": true}});
        let v = redact(json!({"result": {"l": [[3, 1], [2, 0]]}}), r);
        assert_eq!(v, json!({"result": {"l": [[0, 2], [1, 3]]}}));
        let r = json!({"**": {"type": "string"}});
        let v = redact(json!({"a": ["x", 1, {"b": "y"}]}), r);
        assert_eq!(
            v,
            json!({"a": ["<type:string>", 1, {"b": "<type:string>"}]})
        );
    }

    #[test]
    fn most_specific_selector_wins_and_tokens_are_not_rechecked() {
        // As in DISC-013: a general type check on every detail and a
        // specific one on the first.
        let r = json!({
            "result.problems[*].detail": {"type": "string"},
            "result.problems[0].detail": {"contains": ["10000"]}
        });
        let v = json!({"result": {"problems": [
            {"detail": "more than 10000 files"},
            {"detail": "other"}
        ]}});
        assert_eq!(
            redact(v, r.clone()),
            json!({"result": {"problems": [
                {"detail": "<contains:10000>"},
                {"detail": "<type:string>"}
            ]}})
        );
        // The specific check failing leaves the value for the diff to show;
        // the general one does not paper over it.
        let v = json!({"result": {"problems": [{"detail": "too many"}]}});
        assert_eq!(
            redact(v, r),
            json!({"result": {"problems": [{"detail": "too many"}]}})
        );
        // `**` is the least specific.
        let r = json!({"**": {"type": "string"}, "a.b": {"any": true}});
        assert_eq!(
            redact(json!({"a": {"b": "x", "c": "y"}}), r),
            json!({"a": {"b": "<any>", "c": "<type:string>"}})
        );
        // A literal earlier in the path beats one later.
        let r = json!({"a.*.c": {"any": true}, "*.b.c": {"type": "string"}});
        assert_eq!(
            redact(json!({"a": {"b": {"c": "x"}}}), r),
            json!({"a": {"b": {"c": "<any>"}}})
        );
    }

    #[test]
    fn absent_writes_its_token_where_the_key_is_missing() {
        let r = json!({"result.structuredContent.note": {"absent": true}});
        let v = redact(
            json!({"result": {"structuredContent": {"exitCode": 0}}}),
            r.clone(),
        );
        assert_eq!(
            v,
            json!({"result": {"structuredContent": {"exitCode": 0, "note": "<absent>"}}})
        );
        // The key is there: its value stays, for the comparison to show.
        let v = redact(
            json!({"result": {"structuredContent": {"note": "egress"}}}),
            r.clone(),
        );
        assert_eq!(
            v,
            json!({"result": {"structuredContent": {"note": "egress"}}})
        );
        // A `null` is a value, not an absence.
        let v = redact(
            json!({"result": {"structuredContent": {"note": null}}}),
            r.clone(),
        );
        assert_eq!(v, json!({"result": {"structuredContent": {"note": null}}}));
        // No parent object: nothing is invented (the comparison shows the shape).
        let v = redact(json!({"error": {"code": -32602}}), r.clone());
        assert_eq!(v, json!({"error": {"code": -32602}}));
        let v = redact(json!({"result": {"structuredContent": [1]}}), r);
        assert_eq!(v, json!({"result": {"structuredContent": [1]}}));
        // Wildcard parents: each one that lacks the key gets the token.
        let r = json!({"files[*].truncationNote": {"absent": true}});
        let v = redact(
            json!({"files": [{"p": 1}, {"p": 2, "truncationNote": "cut"}]}),
            r,
        );
        assert_eq!(
            v,
            json!({"files": [{"p": 1, "truncationNote": "<absent>"}, {"p": 2, "truncationNote": "cut"}]})
        );
        // A one-segment selector: the key at the top.
        assert_eq!(
            redact(json!({"a": 1}), json!({"b": {"absent": true}})),
            json!({"a": 1, "b": "<absent>"})
        );
    }

    #[test]
    fn absent_tokens_are_not_rechecked_and_present_keys_still_redact() {
        let r = json!({"**": {"type": "string"}, "a.note": {"absent": true}});
        assert_eq!(
            redact(json!({"a": {"s": "x"}}), r.clone()),
            json!({"a": {"s": "<type:string>", "note": "<absent>"}})
        );
        // Present, the key is redacted by the others as usual, never
        // into the `absent` token.
        assert_eq!(
            redact(json!({"a": {"note": "y"}}), r),
            json!({"a": {"note": "<type:string>"}})
        );
    }

    #[test]
    fn absent_needs_a_selector_ending_in_a_key() {
        for sel in ["a[0]", "a[*]", "a.*", "a.**", "**"] {
            let r = json!({ sel: {"absent": true} });
            assert!(parse_redactions(&r).is_err(), "{sel} should be rejected");
        }
        for sel in ["a", "a.b", "a[*].b", "**.b", "*.b"] {
            let r = json!({ sel: {"absent": true} });
            assert!(parse_redactions(&r).is_ok(), "{sel} should be accepted");
        }
        let rs = parse_redactions(&json!({"a[*].note": {"absent": true}})).unwrap();
        let (parent, key) = rs[0].selector.parent_and_key().unwrap();
        assert_eq!((parent.text.as_str(), key.as_str()), ("a[*]", "note"));
    }

    #[test]
    fn rejects_bad_matchers() {
        for bad in [
            json!(true),
            json!({}),
            json!({"any": false}),
            json!({"any": true, "type": "string"}),
            json!({"type": "integer"}),
            json!({"contains": []}),
            json!({"contains": ["a", 1]}),
            json!({"contains": "a"}),
            json!({"range": [1]}),
            json!({"range": [2, 1]}),
            json!({"range": ["a", "b"]}),
            json!({"sorted": 1}),
            json!({"absent": false}),
            json!({"absent": "note"}),
            json!({"regex": "x"}),
        ] {
            assert!(Matcher::parse(&bad).is_err(), "{bad} should be rejected");
        }
    }
}
