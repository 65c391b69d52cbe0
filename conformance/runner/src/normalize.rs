//! Reply normalization (FORMAT.md, *Normalization*, steps 1–4; step 5, the
//! redactions, is `redact::apply_redactions`).

use serde_json::{Map, Value};

use crate::json::json_eq;

/// The token that replaces a content text block mirroring `structuredContent`.
pub const STRUCTURED_TOKEN: &str = "${structuredContent}";
/// The token that replaces the work dir's path.
pub const WORK_TOKEN: &str = "${WORK}";

/// Keys dropped from `result`: framing that differs between modes.
const FRAMING_KEYS: [&str; 4] = ["resultType", "ttlMs", "cacheScope", "_meta"];

/// Normalizes one reply frame. `work_paths` are the work dir's path as
/// created and as its real path (either may be the same).
pub fn normalize(mut reply: Value, work_paths: &[String]) -> Value {
    if let Value::Object(top) = &mut reply {
        // 1. ids are the runner's.
        top.remove("jsonrpc");
        top.remove("id");
        if let Some(Value::Object(result)) = top.get_mut("result") {
            // 2. Mode framing.
            for k in FRAMING_KEYS {
                result.remove(k);
            }
            // 3. A text block that repeats structuredContent as JSON.
            fold_structured_text(result);
        }
    }
    // 4. The work dir's path, longest spelling first so that a real path that
    //    contains the created one is replaced whole.
    let mut paths: Vec<&str> = work_paths
        .iter()
        .map(String::as_str)
        .filter(|p| !p.is_empty() && *p != "/")
        .collect();
    paths.sort_by_key(|p| std::cmp::Reverse(p.len()));
    paths.dedup();
    if !paths.is_empty() {
        replace_paths(&mut reply, &paths);
    }
    reply
}

fn fold_structured_text(result: &mut Map<String, Value>) {
    let Some(structured) = result.get("structuredContent").cloned() else {
        return;
    };
    let Some(Value::Array(content)) = result.get_mut("content") else {
        return;
    };
    for block in content.iter_mut() {
        let mirrors = block.as_object().is_some_and(|b| {
            b.get("type").and_then(Value::as_str) == Some("text")
                && b.get("text")
                    .and_then(Value::as_str)
                    .and_then(|t| serde_json::from_str::<Value>(t).ok())
                    .is_some_and(|parsed| json_eq(&parsed, &structured))
        });
        if mirrors {
            *block = Value::String(STRUCTURED_TOKEN.to_string());
        }
    }
}

fn replace_in(s: &str, paths: &[&str]) -> Option<String> {
    if !paths.iter().any(|p| s.contains(p)) {
        return None;
    }
    let mut out = s.to_string();
    for p in paths {
        out = out.replace(p, WORK_TOKEN);
    }
    Some(out)
}

pub fn replace_paths(v: &mut Value, paths: &[&str]) {
    match v {
        Value::String(s) => {
            if let Some(r) = replace_in(s, paths) {
                *s = r;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| replace_paths(x, paths)),
        Value::Object(m) => {
            // Keys are strings too (e.g. a map keyed by path).
            let old = std::mem::take(m);
            for (k, mut x) in old {
                replace_paths(&mut x, paths);
                let k = replace_in(&k, paths).unwrap_or(k);
                m.insert(k, x);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn w() -> Vec<String> {
        vec!["/tmp/w1".to_string(), "/private/tmp/w1".to_string()]
    }

    #[test]
    fn drops_ids_and_framing() {
        let r = json!({"jsonrpc": "2.0", "id": 7, "result": {
            "resultType": "complete", "ttlMs": 0, "cacheScope": "private",
            "_meta": {"x": 1}, "tools": []
        }});
        assert_eq!(normalize(r, &w()), json!({"result": {"tools": []}}));
        // Framing keys are only dropped from `result`'s top.
        let r = json!({"id": 1, "result": {"structuredContent": {"ttlMs": 5, "_meta": {}}}});
        assert_eq!(
            normalize(r, &w()),
            json!({"result": {"structuredContent": {"ttlMs": 5, "_meta": {}}}})
        );
        let e = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}});
        assert_eq!(
            normalize(e, &w()),
            json!({"error": {"code": -32700, "message": "Parse error"}})
        );
    }

    #[test]
    fn folds_text_that_mirrors_structured_content() {
        let r = json!({"id": 1, "result": {
            "content": [
                {"type": "text", "text": "{\"b\":[1,2],\"a\":1.0}"},
                {"type": "text", "text": "not json"},
                {"type": "text", "text": "{\"a\":2}"},
                {"type": "image", "data": "..."}
            ],
            "structuredContent": {"a": 1, "b": [1, 2]},
            "isError": false
        }});
        assert_eq!(
            normalize(r, &w()),
            json!({"result": {
                "content": [
                    "${structuredContent}",
                    {"type": "text", "text": "not json"},
                    {"type": "text", "text": "{\"a\":2}"},
                    {"type": "image", "data": "..."}
                ],
                "structuredContent": {"a": 1, "b": [1, 2]},
                "isError": false
            }})
        );
        // Without structuredContent nothing is folded.
        let r = json!({"result": {"content": [{"type": "text", "text": "{}"}]}});
        assert_eq!(normalize(r.clone(), &w()), r);
    }

    #[test]
    fn replaces_work_dir_everywhere() {
        let r = json!({"id": 1, "result": {
            "root": "/tmp/w1/tree",
            "real": "/private/tmp/w1/tree/a",
            "msg": "cannot read /tmp/w1/x and /tmp/w1/y",
            "nested": [{"p": "/tmp/w1"}],
            "byPath": {"/tmp/w1/k": 1},
            "other": "/tmp/w10"
        }});
        let n = normalize(r, &w());
        assert_eq!(n["result"]["root"], "${WORK}/tree");
        assert_eq!(n["result"]["real"], "${WORK}/tree/a");
        assert_eq!(n["result"]["msg"], "cannot read ${WORK}/x and ${WORK}/y");
        assert_eq!(n["result"]["nested"][0]["p"], "${WORK}");
        assert_eq!(n["result"]["byPath"]["${WORK}/k"], 1);
        // Every occurrence, as the format says (the random suffix makes a
        // false hit practically impossible).
        assert_eq!(n["result"]["other"], "${WORK}0");
    }

    #[test]
    fn folding_happens_before_path_replacement() {
        let r = json!({"result": {
            "content": [{"type": "text", "text": "{\"root\":\"/tmp/w1\"}"}],
            "structuredContent": {"root": "/tmp/w1"}
        }});
        assert_eq!(
            normalize(r, &w()),
            json!({"result": {"content": ["${structuredContent}"], "structuredContent": {"root": "${WORK}"}}})
        );
    }
}
