//! Comparing a normalized reply with its golden (FORMAT.md, *Comparing*).

use serde_json::Value;

use crate::case::Checks;
use crate::json::{Diff, PathElem, format_path, json_eq, num_eq, type_name};
use crate::redact::ABSENT;

/// Compares `actual` with `expected`; `None` when they match.
pub fn compare(expected: &Value, actual: &Value, checks: Checks) -> Option<Diff> {
    let mut path = Vec::new();
    walk(expected, actual, checks, &mut path)
}

fn walk(e: &Value, a: &Value, checks: Checks, path: &mut Vec<PathElem>) -> Option<Diff> {
    let diff = |path: &[PathElem], what: String| Diff {
        path: format_path(path),
        what,
        expected: Some(e.clone()),
        actual: Some(a.clone()),
    };
    match (e, a) {
        (Value::Object(em), Value::Object(am)) => {
            for (k, ev) in em {
                path.push(PathElem::Key(k.clone()));
                let r = match am.get(k) {
                    None => Some(Diff {
                        path: format_path(path),
                        what: format!("key `{k}` is missing from the reply"),
                        expected: Some(ev.clone()),
                        actual: None,
                    }),
                    Some(av) => walk(ev, av, checks, path),
                };
                path.pop();
                if r.is_some() {
                    return r;
                }
            }
            if checks == Checks::Exact
                && let Some((k, av)) = am.iter().find(|(k, _)| !em.contains_key(*k))
            {
                {
                    path.push(PathElem::Key(k.clone()));
                    let d = Diff {
                        path: format_path(path),
                        what: format!(
                            "the reply has key `{k}`, which the golden does not (exact check)"
                        ),
                        expected: None,
                        actual: Some(av.clone()),
                    };
                    path.pop();
                    return Some(d);
                }
            }
            None
        }
        (Value::Array(ea), Value::Array(aa)) => {
            if ea.len() != aa.len() {
                return Some(diff(
                    path,
                    format!(
                        "array length differs: expected {}, got {}",
                        ea.len(),
                        aa.len()
                    ),
                ));
            }
            for (i, (ev, av)) in ea.iter().zip(aa).enumerate() {
                path.push(PathElem::Index(i));
                let r = walk(ev, av, checks, path);
                path.pop();
                if r.is_some() {
                    return r;
                }
            }
            None
        }
        // The `absent` matcher's token: the reply has the key (in `subset`
        // cases too), and shows what it holds.
        (Value::String(t), _) if t == ABSENT && a.as_str() != Some(ABSENT) => Some(diff(
            path,
            "the reply has this key, which must be absent".to_string(),
        )),
        (Value::Number(x), Value::Number(y)) => {
            (!num_eq(x, y)).then(|| diff(path, "value differs".to_string()))
        }
        _ if type_name(e) != type_name(a) => Some(diff(
            path,
            format!("expected {}, got {}", a_type(e), a_type(a)),
        )),
        _ => (!json_eq(e, a)).then(|| diff(path, "value differs".to_string())),
    }
}

fn a_type(v: &Value) -> &'static str {
    match type_name(v) {
        "null" => "null",
        "boolean" => "a boolean",
        "number" => "a number",
        "string" => "a string",
        "array" => "an array",
        _ => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn equal_values_match_in_both_modes() {
        let v = json!({"result": {"a": [1, {"b": "x"}], "n": null}});
        assert_eq!(compare(&v, &v, Checks::Exact), None);
        assert_eq!(compare(&v, &v, Checks::Subset), None);
        assert_eq!(
            compare(&json!({"n": 1}), &json!({"n": 1.0}), Checks::Exact),
            None
        );
    }

    #[test]
    fn subset_allows_extra_keys_exact_does_not() {
        let g = json!({"result": {"a": 1}});
        let r = json!({"result": {"a": 1, "extra": true}});
        assert_eq!(compare(&g, &r, Checks::Subset), None);
        let d = compare(&g, &r, Checks::Exact).unwrap();
        assert_eq!(d.path, "result.extra");
        assert_eq!(d.expected, None);
        assert_eq!(d.actual, Some(json!(true)));
    }

    #[test]
    fn missing_key_is_reported_with_path() {
        let g = json!({"result": {"skills": [{"name": "a", "dir": "x"}]}});
        let r = json!({"result": {"skills": [{"name": "a"}]}});
        for c in [Checks::Exact, Checks::Subset] {
            let d = compare(&g, &r, c).unwrap();
            assert_eq!(d.path, "result.skills[0].dir");
            assert!(d.what.contains("missing"));
            assert_eq!(d.expected, Some(json!("x")));
            assert_eq!(d.actual, None);
        }
    }

    #[test]
    fn arrays_must_match_in_length_and_order_even_in_subset() {
        let g = json!({"l": [1, 2]});
        let d = compare(&g, &json!({"l": [1, 2, 3]}), Checks::Subset).unwrap();
        assert_eq!(d.path, "l");
        assert!(d.what.contains("length"));
        let d = compare(&g, &json!({"l": [2, 1]}), Checks::Subset).unwrap();
        assert_eq!(d.path, "l[0]");
        assert_eq!((d.expected, d.actual), (Some(json!(1)), Some(json!(2))));
        // Subset applies inside array elements too.
        let g = json!({"l": [{"a": 1}]});
        assert_eq!(
            compare(&g, &json!({"l": [{"a": 1, "b": 2}]}), Checks::Subset),
            None
        );
    }

    #[test]
    fn type_and_value_differences() {
        let d = compare(&json!({"a": "1"}), &json!({"a": 1}), Checks::Subset).unwrap();
        assert_eq!(d.path, "a");
        assert_eq!(d.what, "expected a string, got a number");
        let d = compare(
            &json!({"a": "<contains:x>"}),
            &json!({"a": "no"}),
            Checks::Exact,
        )
        .unwrap();
        assert_eq!(d.what, "value differs");
        let d = compare(&json!({"a": {}}), &json!({"a": []}), Checks::Subset).unwrap();
        assert_eq!(d.what, "expected an object, got an array");
        let d = compare(&json!({"e": null}), &json!({}), Checks::Subset).unwrap();
        assert_eq!(d.path, "e");
    }

    #[test]
    fn a_key_that_must_be_absent_fails_both_checks_when_present() {
        let g = json!({"result": {"exitCode": 0, "note": "<absent>"}});
        for c in [Checks::Exact, Checks::Subset] {
            assert_eq!(compare(&g, &g, c), None);
            let r = json!({"result": {"exitCode": 0, "note": "egress is fenced"}});
            let d = compare(&g, &r, c).unwrap();
            assert_eq!(d.path, "result.note");
            assert!(d.what.contains("must be absent"), "{}", d.what);
            assert_eq!(d.actual, Some(json!("egress is fenced")));
            // Any value, of any type, is a presence.
            let r = json!({"result": {"exitCode": 0, "note": null}});
            assert!(compare(&g, &r, c).unwrap().what.contains("must be absent"));
        }
    }

    #[test]
    fn first_difference_in_golden_key_order() {
        let g = json!({"a": 1, "b": 2, "c": 3});
        let r = json!({"a": 1, "b": 9, "c": 9});
        assert_eq!(compare(&g, &r, Checks::Exact).unwrap().path, "b");
    }
}
