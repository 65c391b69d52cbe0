//! The core profile's checks (FORMAT.md, *Core expectations*): the core
//! view of a reply — what any implementation of the design of record must
//! have, whatever shape it chose — and the hand-written patterns applied
//! to it.

use serde_json::{Map, Value};

use crate::json::{Diff, PathElem, format_path, json_eq, num_eq, type_name};
use crate::normalize::replace_paths;

/// The core view of one reply to `method` (None: a raw line's reply, read
/// as a tool result when it has the shape of one).
pub fn core_view(mut reply: Value, method: Option<&str>, work_paths: &[String]) -> Value {
    if let Value::Object(m) = &mut reply {
        m.remove("jsonrpc");
        m.remove("id");
        if let Some(Value::Object(r)) = m.get_mut("result") {
            let tool = match method {
                Some(meth) => meth == "tools/call",
                None => r.get("content").is_some_and(Value::is_array),
            };
            if tool {
                *r = tool_view(r);
            }
        }
    }
    let paths: Vec<&str> = work_paths.iter().map(String::as_str).collect();
    replace_paths(&mut reply, &paths);
    reply
}

/// `{isError, structuredContent, text}` of a tool result: the structured
/// value when the server sent one, else the JSON of its first text block.
fn tool_view(r: &Map<String, Value>) -> Map<String, Value> {
    let texts: Vec<&str> = r
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    let structured = r.get("structuredContent").cloned().or_else(|| {
        texts
            .first()
            .and_then(|t| serde_json::from_str::<Value>(t).ok())
    });
    let mut out = Map::new();
    out.insert(
        "isError".into(),
        Value::Bool(r.get("isError").and_then(Value::as_bool).unwrap_or(false)),
    );
    if let Some(v) = structured {
        out.insert("structuredContent".into(), v);
    }
    out.insert("text".into(), Value::String(texts.join("\n")));
    out
}

/// Checks `actual` (None: not there) against `pattern`; the first
/// mismatch, in the pattern's order.
pub fn check(pattern: &Value, actual: &Value) -> Option<Diff> {
    walk(pattern, Some(actual), &mut Vec::new())
}

/// Whether `pattern` is a matcher: an object with one `$`-key.
fn matcher(pattern: &Value) -> Option<(&str, &Value)> {
    let m = pattern.as_object()?;
    if m.len() != 1 {
        return None;
    }
    let (k, v) = m.iter().next()?;
    k.starts_with('$').then_some((k.as_str(), v))
}

/// The names of every matcher, for validating a case's patterns.
pub const MATCHERS: [&str; 19] = [
    "$any",
    "$absent",
    "$type",
    "$contains",
    "$mentions",
    "$lacks",
    "$no_string",
    "$range",
    "$len",
    "$one_of",
    "$all",
    "$each",
    "$includes",
    "$unordered",
    "$refused",
    "$not",
    "$eq",
    "$only_keys",
    "$values",
];

/// A pattern's mistakes (an unknown matcher, a matcher's argument of the
/// wrong kind), so a case error is found at load time, not in a report.
pub fn validate(pattern: &Value) -> Result<(), String> {
    if let Some((k, arg)) = matcher(pattern) {
        let strings = |a: &Value| {
            a.as_array()
                .filter(|l| !l.is_empty() && l.iter().all(Value::is_string))
                .map(|_| ())
                .ok_or_else(|| format!("`{k}` takes a non-empty list of strings"))
        };
        let patterns = |a: &Value| -> Result<(), String> {
            let l = a
                .as_array()
                .filter(|l| !l.is_empty())
                .ok_or_else(|| format!("`{k}` takes a non-empty list of patterns"))?;
            l.iter().try_for_each(validate)
        };
        return match k {
            "$any" | "$absent" => (arg == &Value::Bool(true))
                .then_some(())
                .ok_or_else(|| format!("`{k}` takes true")),
            "$type" => match arg.as_str() {
                Some("string" | "number" | "integer" | "boolean" | "array" | "object" | "null") => {
                    Ok(())
                }
                _ => Err(format!("`$type` takes a JSON type name, got {arg}")),
            },
            "$contains" | "$mentions" | "$lacks" | "$no_string" => strings(arg),
            // `[]`: a refusal, whatever it names (where the README says
            // only that the request is refused).
            "$refused" => match arg.as_array() {
                Some(l) if l.iter().all(Value::is_string) => Ok(()),
                _ => Err("`$refused` takes a list of strings (empty: any refusal)".into()),
            },
            "$range" => match arg.as_array().map(Vec::as_slice) {
                Some([lo, hi]) if lo.is_number() && hi.is_number() => Ok(()),
                _ => Err(format!("`$range` takes [LO, HI], got {arg}")),
            },
            "$len" => arg
                .as_u64()
                .map(|_| ())
                .ok_or_else(|| format!("`$len` takes a whole number, got {arg}")),
            "$one_of" | "$all" | "$includes" | "$unordered" => patterns(arg),
            "$each" | "$not" | "$values" => validate(arg),
            // Any JSON value: compared whole.
            "$eq" => Ok(()),
            "$only_keys" => match arg.as_array() {
                Some(l) if l.iter().all(Value::is_string) => Ok(()),
                _ => Err("`$only_keys` takes a list of strings (empty: an empty object)".into()),
            },
            _ => Err(format!(
                "`{k}` is not a matcher (matchers: {})",
                MATCHERS.join(" ")
            )),
        };
    }
    match pattern {
        Value::Object(m) => m
            .iter()
            .try_for_each(|(k, v)| validate(v).map_err(|e| format!("{k}: {e}"))),
        Value::Array(l) => l
            .iter()
            .enumerate()
            .try_for_each(|(i, v)| validate(v).map_err(|e| format!("[{i}]: {e}"))),
        _ => Ok(()),
    }
}

fn lower(s: &str) -> String {
    s.to_ascii_lowercase()
}

/// A value's JSON text, for `$mentions` and `$lacks`: strings as they
/// are (so escapes do not hide a fact), anything else as compact JSON.
fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => {
            let mut out = String::new();
            gather(other, &mut out);
            out
        }
    }
}

/// Every string and key of `v`, and its other scalars, one per line.
fn gather(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Array(l) => l.iter().for_each(|x| gather(x, out)),
        Value::Object(m) => {
            for (k, x) in m {
                out.push_str(k);
                out.push('\n');
                gather(x, out);
            }
        }
        other => {
            out.push_str(&other.to_string());
            out.push('\n');
        }
    }
}

/// Calls `f` on every string inside `v`, `v` itself included; object keys
/// are not visited.
fn each_string(v: &Value, f: &mut impl FnMut(&str)) {
    match v {
        Value::String(s) => f(s),
        Value::Array(l) => l.iter().for_each(|x| each_string(x, f)),
        Value::Object(m) => m.values().for_each(|x| each_string(x, f)),
        _ => {}
    }
}

/// The words of a refusal: an error's message and data, or a tool
/// result's text and structured value; None when the reply is no refusal.
fn refusal_words(reply: &Value) -> Option<String> {
    if let Some(e) = reply.get("error") {
        return Some(text_of(e));
    }
    let r = reply.get("result")?;
    if r.get("isError").and_then(Value::as_bool) != Some(true) {
        return None;
    }
    let mut words = r.get("text").map(text_of).unwrap_or_default();
    if let Some(s) = r.get("structuredContent") {
        words.push('\n');
        words.push_str(&text_of(s));
    }
    Some(words)
}

/// A mismatch at `path`: what is wrong, the pattern and what was there.
fn mismatch(path: &[PathElem], what: String, p: &Value, a: Option<&Value>) -> Diff {
    Diff {
        path: format_path(path),
        what,
        expected: Some(p.clone()),
        actual: a.cloned(),
    }
}

/// `actual` (None: not there) against pattern `p`: a matcher, or a value
/// compared member by member.
fn walk(p: &Value, a: Option<&Value>, path: &mut Vec<PathElem>) -> Option<Diff> {
    let Some((k, arg)) = matcher(p) else {
        return structural(p, a, path);
    };
    if let Some(verdict) = combined(k, arg, p, a, path) {
        return verdict;
    }
    let Some(a) = a else {
        return Some(mismatch(path, "missing from the reply".into(), p, None));
    };
    matched(k, arg, p, a, path)
}

/// The matchers that combine patterns (`$absent`, `$one_of`, `$all`,
/// `$not`), where a pattern may accept absence; None for any other.
fn combined(
    k: &str,
    arg: &Value,
    p: &Value,
    a: Option<&Value>,
    path: &mut Vec<PathElem>,
) -> Option<Option<Diff>> {
    let diff = |path: &[PathElem], what: String| mismatch(path, what, p, a);
    let patterns = || arg.as_array().map(Vec::as_slice).unwrap_or(&[]);
    Some(match k {
        "$absent" => a.map(|_| diff(path, "this must be absent, and the reply has it".into())),
        "$one_of" => {
            let mut nearest: Option<Diff> = None;
            for q in patterns() {
                match walk(q, a, path) {
                    None => return Some(None),
                    // The alternative that got furthest says most about why.
                    Some(d) if nearest.as_ref().is_none_or(|n| d.path.len() > n.path.len()) => {
                        nearest = Some(d)
                    }
                    Some(_) => {}
                }
            }
            let why = match nearest {
                Some(n) => format!(
                    "no alternative of $one_of matches (the nearest fails at {}: {})",
                    n.path, n.what
                ),
                None => "no alternative of $one_of matches".to_string(),
            };
            Some(diff(path, why))
        }
        "$all" => patterns().iter().find_map(|q| walk(q, a, path)),
        "$not" => walk(arg, a, path)
            .is_none()
            .then(|| diff(path, "this matches what $not forbids".into())),
        _ => return None,
    })
}

/// A matcher of one value that is there.
fn matched(k: &str, arg: &Value, p: &Value, a: &Value, path: &mut Vec<PathElem>) -> Option<Diff> {
    let diff = |path: &[PathElem], what: String| mismatch(path, what, p, Some(a));
    let patterns = || arg.as_array().map(Vec::as_slice).unwrap_or(&[]);
    let strings = || -> Vec<&str> {
        arg.as_array()
            .map(|l| l.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    };
    match k {
        "$any" => None,
        "$type" => {
            let want = arg.as_str().unwrap_or("");
            let ok = match want {
                "integer" => a.as_i64().is_some() || a.as_u64().is_some(),
                t => type_name(a) == t,
            };
            (!ok).then(|| diff(path, format!("expected a value of type {want}")))
        }
        "$contains" => match a.as_str() {
            None => Some(diff(path, "expected a string".into())),
            Some(s) => {
                let s = lower(s);
                let missing: Vec<&str> = strings()
                    .into_iter()
                    .filter(|w| !s.contains(&lower(w)))
                    .collect();
                (!missing.is_empty())
                    .then(|| diff(path, format!("the string does not contain {missing:?}")))
            }
        },
        "$mentions" => {
            let s = lower(&text_of(a));
            let missing: Vec<&str> = strings()
                .into_iter()
                .filter(|w| !s.contains(&lower(w)))
                .collect();
            (!missing.is_empty()).then(|| diff(path, format!("nothing here mentions {missing:?}")))
        }
        "$lacks" => {
            let s = lower(&text_of(a));
            let found: Vec<&str> = strings()
                .into_iter()
                .filter(|w| s.contains(&lower(w)))
                .collect();
            (!found.is_empty()).then(|| diff(path, format!("this must not hold {found:?}")))
        }
        // A message that must not be there, told by the facts it would
        // state together, wherever a message can be: in one string.
        // Keys and numbers are not messages (a `durationMs` of 403, an
        // extra field `"x-impl": "shape-proxy"` say nothing).
        "$no_string" => {
            let words: Vec<String> = strings().into_iter().map(lower).collect();
            let mut found = None;
            each_string(a, &mut |s| {
                let l = lower(s);
                if found.is_none() && words.iter().all(|w| l.contains(w.as_str())) {
                    found = Some(s.to_owned());
                }
            });
            found.map(|s| {
                diff(
                    path,
                    format!("a string here holds every one of {:?}: {s:?}", strings()),
                )
            })
        }
        "$range" => {
            let (lo, hi) = match arg.as_array().map(Vec::as_slice) {
                Some([lo, hi]) => (lo.as_f64(), hi.as_f64()),
                _ => (None, None),
            };
            match (a.as_f64(), lo, hi) {
                (Some(x), Some(lo), Some(hi)) if lo <= x && x <= hi => None,
                _ => Some(diff(path, format!("expected a number in {arg}"))),
            }
        }
        "$len" => {
            let n = arg.as_u64().unwrap_or(0) as usize;
            let got = match a {
                Value::String(s) => Some(s.len()),
                Value::Array(l) => Some(l.len()),
                _ => None,
            };
            (got != Some(n)).then(|| diff(path, format!("expected length {n}, got {got:?}")))
        }
        "$each" => match a.as_array() {
            None => Some(diff(path, "expected an array".into())),
            Some(items) => items.iter().enumerate().find_map(|(i, x)| {
                path.push(PathElem::Index(i));
                let r = walk(arg, Some(x), path);
                path.pop();
                r
            }),
        },
        "$includes" | "$unordered" => match a.as_array() {
            None => Some(diff(path, "expected an array".into())),
            Some(items) => {
                let ps = patterns();
                if k == "$unordered" && ps.len() != items.len() {
                    return Some(diff(
                        path,
                        format!(
                            "array length differs: expected {}, got {}",
                            ps.len(),
                            items.len()
                        ),
                    ));
                }
                match assign(ps, items) {
                    Ok(()) => None,
                    Err(i) => Some(diff(
                        path,
                        format!("no item of the array matches pattern {i} ({})", ps[i]),
                    )),
                }
            }
        },
        // The whole value, exactly: no member more or less, at any depth
        // (numbers as numbers). For what a text fixes whole, such as a
        // frontmatter "identical in content" to its file.
        "$eq" => (!json_eq(arg, a)).then(|| {
            let mut at = path.clone();
            let what = exact_difference(arg, a, &mut at);
            diff(
                path,
                format!("not exactly this value: at {}, {what}", format_path(&at)),
            )
        }),
        "$only_keys" => match a.as_object() {
            None => Some(diff(path, "expected an object".into())),
            Some(m) => {
                let allowed = strings();
                let extra: Vec<&str> = m
                    .keys()
                    .map(String::as_str)
                    .filter(|k| !allowed.contains(k))
                    .collect();
                (!extra.is_empty())
                    .then(|| diff(path, format!("members not allowed here: {extra:?}")))
            }
        },
        "$values" => match a.as_object() {
            None => Some(diff(path, "expected an object".into())),
            Some(m) => m.iter().find_map(|(k, x)| {
                path.push(PathElem::Key(k.clone()));
                let r = walk(arg, Some(x), path);
                path.pop();
                r
            }),
        },
        "$refused" => match refusal_words(a) {
            None => Some(diff(
                path,
                "expected a refusal (a JSON-RPC error, or a tool result with isError: true)".into(),
            )),
            Some(words) => {
                let w = lower(&words);
                let missing: Vec<&str> = strings()
                    .into_iter()
                    .filter(|s| !w.contains(&lower(s)))
                    .collect();
                (!missing.is_empty())
                    .then(|| diff(path, format!("the refusal does not name {missing:?}")))
            }
        },
        _ => Some(diff(path, format!("`{k}` is not a matcher"))),
    }
}

/// Where `a` first differs from `p` compared exactly (no member more or
/// less), and how; `at` is left at that place.
fn exact_difference(p: &Value, a: &Value, at: &mut Vec<PathElem>) -> String {
    match (p, a) {
        (Value::Object(pm), Value::Object(am)) => {
            if let Some(k) = am.keys().find(|k| !pm.contains_key(*k)) {
                return format!("the member {k:?} is not expected");
            }
            for (k, pv) in pm {
                at.push(PathElem::Key(k.clone()));
                match am.get(k) {
                    None => return "missing".to_string(),
                    Some(av) if !json_eq(pv, av) => return exact_difference(pv, av, at),
                    Some(_) => {}
                }
                at.pop();
            }
            "differs".to_string()
        }
        (Value::Array(pl), Value::Array(al)) if pl.len() == al.len() => {
            for (i, (pv, av)) in pl.iter().zip(al).enumerate() {
                if !json_eq(pv, av) {
                    at.push(PathElem::Index(i));
                    return exact_difference(pv, av, at);
                }
            }
            "differs".to_string()
        }
        (Value::Array(pl), Value::Array(al)) => {
            format!("{} items expected, {} given", pl.len(), al.len())
        }
        _ => format!("expected {p}, got {a}"),
    }
}

/// A plain value: objects member by member (the pattern's members only),
/// arrays item by item, numbers by value.
fn structural(p: &Value, a: Option<&Value>, path: &mut Vec<PathElem>) -> Option<Diff> {
    let diff = |path: &[PathElem], what: String| mismatch(path, what, p, a);
    let Some(a) = a else {
        return Some(diff(path, "missing from the reply".into()));
    };
    match (p, a) {
        (Value::Object(pm), Value::Object(am)) => pm.iter().find_map(|(k, pv)| {
            path.push(PathElem::Key(k.clone()));
            let r = walk(pv, am.get(k), path);
            path.pop();
            r
        }),
        (Value::Array(pl), Value::Array(al)) => {
            if pl.len() != al.len() {
                return Some(diff(
                    path,
                    format!(
                        "array length differs: expected {}, got {}",
                        pl.len(),
                        al.len()
                    ),
                ));
            }
            pl.iter().zip(al).enumerate().find_map(|(i, (pv, av))| {
                path.push(PathElem::Index(i));
                let r = walk(pv, Some(av), path);
                path.pop();
                r
            })
        }
        (Value::Number(x), Value::Number(y)) => {
            (!num_eq(x, y)).then(|| diff(path, "value differs".into()))
        }
        _ if type_name(p) != type_name(a) => Some(diff(
            path,
            format!("expected {}, got {}", type_name(p), type_name(a)),
        )),
        _ => (!json_eq(p, a)).then(|| diff(path, "value differs".into())),
    }
}

/// Matches each pattern to a different item (bipartite matching, so an
/// early greedy choice cannot hide a valid assignment); Err names the
/// first pattern left without an item.
fn assign(patterns: &[Value], items: &[Value]) -> Result<(), usize> {
    let fits: Vec<Vec<bool>> = patterns
        .iter()
        .map(|p| {
            items
                .iter()
                .map(|x| walk(p, Some(x), &mut Vec::new()).is_none())
                .collect()
        })
        .collect();
    let mut owner: Vec<Option<usize>> = vec![None; items.len()];
    fn augment(
        p: usize,
        fits: &[Vec<bool>],
        owner: &mut [Option<usize>],
        seen: &mut [bool],
    ) -> bool {
        for j in 0..owner.len() {
            if fits[p][j] && !seen[j] {
                seen[j] = true;
                if owner[j].is_none_or(|q| augment(q, fits, owner, seen)) {
                    owner[j] = Some(p);
                    return true;
                }
            }
        }
        false
    }
    for p in 0..patterns.len() {
        let mut seen = vec![false; items.len()];
        if !augment(p, &fits, &mut owner, &mut seen) {
            return Err(p);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ok(p: Value, a: Value) -> bool {
        check(&p, &a).is_none()
    }

    #[test]
    fn a_tool_result_reads_the_same_from_structured_content_or_text() {
        let structured = json!({"jsonrpc": "2.0", "id": 3, "result": {
            "content": [{"type": "text", "text": "{\"a\":1}"}],
            "structuredContent": {"a": 1}, "isError": false}});
        let pretty = json!({"jsonrpc": "2.0", "id": 3, "result": {
            "content": [{"type": "text", "text": "{\n  \"a\": 1\n}"}]}});
        let a = core_view(structured, Some("tools/call"), &[]);
        let b = core_view(pretty, Some("tools/call"), &[]);
        assert_eq!(a["result"]["structuredContent"], json!({"a": 1}));
        assert_eq!(
            a["result"]["structuredContent"],
            b["result"]["structuredContent"]
        );
        assert_eq!(b["result"]["isError"], json!(false));
        assert!(a.get("id").is_none());
    }

    #[test]
    fn plain_text_refusals_have_words_and_no_value() {
        let r = core_view(
            json!({"result": {"content": [{"type": "text", "text": "no skill named \"x\". Serves: a, b"}], "isError": true}}),
            Some("tools/call"),
            &[],
        );
        assert!(r["result"].get("structuredContent").is_none());
        assert!(ok(json!({"$refused": ["\"x\"", "a", "B"]}), r.clone()));
        assert!(!ok(json!({"$refused": ["c"]}), r));
        let e = json!({"error": {"code": -32602, "message": "Prompt nope not found"}});
        assert!(ok(json!({"$refused": ["nope"]}), e));
        let fine = json!({"result": {"isError": false, "text": "nope"}});
        assert!(!ok(json!({"$refused": ["nope"]}), fine.clone()));
        assert!(!ok(json!({"$refused": []}), fine));
        assert!(validate(&json!({"$refused": []})).is_ok());
    }

    #[test]
    fn objects_are_subsets_and_arrays_are_exact_unless_a_matcher_says_so() {
        assert!(ok(json!({"a": 1}), json!({"a": 1, "b": 2})));
        assert!(!ok(json!({"a": 1, "c": 3}), json!({"a": 1})));
        assert!(!ok(json!([1, 2]), json!([2, 1])));
        assert!(ok(json!({"$unordered": [1, 2]}), json!([2, 1])));
        assert!(!ok(json!({"$unordered": [1, 2]}), json!([2, 1, 3])));
        assert!(ok(json!({"$includes": [1, 2]}), json!([3, 2, 1])));
        assert!(!ok(json!({"$includes": [1, 1]}), json!([1, 2])));
        assert!(ok(json!({"$each": {"$type": "integer"}}), json!([1, 2])));
        assert!(!ok(json!({"$each": {"$type": "integer"}}), json!([1, 2.5])));
        assert!(ok(json!(1.0), json!(1)));
    }

    #[test]
    fn matching_is_a_true_assignment_not_a_greedy_one() {
        // Greedy would give item 0 to the first pattern and starve the second.
        let p = json!({"$includes": [{"$type": "integer"}, 1]});
        assert!(ok(p, json!([1, 2])));
    }

    #[test]
    fn absent_any_type_range_len_one_of_not() {
        assert!(ok(json!({"k": {"$absent": true}}), json!({"j": 1})));
        assert!(!ok(json!({"k": {"$absent": true}}), json!({"k": null})));
        assert!(ok(json!({"k": {"$any": true}}), json!({"k": null})));
        assert!(!ok(json!({"k": {"$any": true}}), json!({})));
        assert!(ok(json!({"$type": "integer"}), json!(3)));
        assert!(!ok(json!({"$type": "integer"}), json!("3")));
        assert!(ok(json!({"$range": [1, 5]}), json!(5)));
        assert!(!ok(json!({"$range": [1, 5]}), json!(6)));
        assert!(ok(json!({"$len": 2}), json!("ab")));
        assert!(ok(json!({"$one_of": [1, "one"]}), json!("one")));
        assert!(!ok(json!({"$one_of": [1, "one"]}), json!(2)));
        assert!(ok(json!({"$not": {"$contains": ["x"]}}), json!("abc")));
        let maybe = json!({"t": {"$one_of": [false, {"$absent": true}]}});
        assert!(ok(maybe.clone(), json!({})));
        assert!(ok(maybe.clone(), json!({"t": false})));
        assert!(!ok(maybe, json!({"t": true})));
        assert!(ok(json!({"t": {"$not": true}}), json!({})));
        assert!(!ok(json!({"$not": {"$contains": ["b"]}}), json!("abc")));
    }

    #[test]
    fn no_string_looks_for_every_fact_in_one_string_only() {
        let note = "A host off the list appears as an HTTP 403 from the loopback proxy.";
        let p = json!({"$no_string": ["403", "proxy"]});
        // The facts apart, in a key, or in a number: no such message.
        assert!(ok(
            p.clone(),
            json!({"durationMs": 403, "x-impl": "shape-proxy", "proxy-403": true, "id": "403"})
        ));
        // Together in one string, at any depth, under any key.
        assert!(!ok(p.clone(), json!({"networkNote": note})));
        assert!(!ok(p.clone(), json!({"notes": [{"text": note}]})));
        assert!(!ok(p.clone(), json!(note)));
        assert!(ok(p, json!({})));
        assert!(validate(&json!({"$no_string": []})).is_err());
    }

    #[test]
    fn mentions_and_lacks_read_keys_strings_and_numbers_anywhere() {
        let v = json!({"willRun": {"argv": ["node", "/s/a.js", "x y"], "timeoutMs": 60000, "envNames": ["KEY"]}});
        assert!(ok(
            json!({"$mentions": ["a.js", "X Y", "60000", "key"]}),
            v.clone()
        ));
        assert!(!ok(json!({"$mentions": ["secret-value"]}), v.clone()));
        assert!(ok(json!({"$lacks": ["secret-value"]}), v.clone()));
        assert!(!ok(json!({"$lacks": ["NODE"]}), v));
        assert!(ok(
            json!({"$contains": ["Named"]}),
            json!("it is NAMED here")
        ));
    }

    #[test]
    fn bad_patterns_are_found_at_load_time() {
        assert!(validate(&json!({"a": {"$unknown": 1}})).is_err());
        assert!(validate(&json!({"$contains": "x"})).is_err());
        assert!(validate(&json!({"$range": [1]})).is_err());
        assert!(validate(&json!({"$one_of": []})).is_err());
        assert!(validate(&json!({"$each": {"$type": "float"}})).is_err());
        assert!(validate(&json!({"a": [{"$len": 2}], "$x": 1})).is_ok());
    }
    #[test]
    fn eq_only_keys_and_values() {
        let fm = json!({"name": "a", "metadata": {"v": "1.0", "n": [1, true, null]}});
        assert!(ok(json!({"$eq": fm.clone()}), fm.clone()));
        // Numbers as numbers, and no member more or less at any depth.
        assert!(ok(json!({"$eq": {"n": 1}}), json!({"n": 1.0})));
        let d = check(
            &json!({"$eq": fm.clone()}),
            &json!({"name": "a", "metadata": {"v": "1.0", "n": [1, true, null], "x": 1}}),
        )
        .unwrap();
        assert!(d.what.contains("\"x\" is not expected"), "{}", d.what);
        assert!(d.what.contains("metadata"), "{}", d.what);
        assert!(!ok(json!({"$eq": fm}), json!({"name": "a"})));
        assert!(ok(json!({"$only_keys": ["a", "b"]}), json!({"a": 1})));
        assert!(!ok(json!({"$only_keys": ["a"]}), json!({"a": 1, "c": 2})));
        assert!(!ok(json!({"$only_keys": []}), json!([])));
        assert!(ok(
            json!({"$values": {"ok": true}}),
            json!({"x": {"ok": true}, "y": {"ok": true, "more": 1}})
        ));
        assert!(!ok(
            json!({"$values": {"ok": true}}),
            json!({"x": {"ok": false}})
        ));
        assert!(ok(json!({"$values": {"ok": true}}), json!({})));
        assert!(validate(&json!({"$only_keys": "a"})).is_err());
        assert!(validate(&json!({"$values": {"$nope": 1}})).is_err());
    }
}
