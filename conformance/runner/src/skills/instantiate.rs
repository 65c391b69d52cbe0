//! The fixture matchers of the skills profile (conformance/sep-2640/README.md,
//! *Fixture matchers*): a case writes `{"$manifest": {"dir": "alpha"}}`,
//! and before the pattern is applied the runner replaces it with the plain
//! pattern the fixture's bytes call for — every file of `alpha` with the
//! SHA-256 and size computed here — so expectations are hand-written and
//! digests are never recorded from a server.

use serde_json::{Map, Value, json};

use crate::case::Mode;
use crate::skills::fixture::{Facts, Fixture, Kind, join, under};

fn one_key(p: &Value) -> Option<(&str, &Value)> {
    let m = p.as_object()?;
    if m.len() != 1 {
        return None;
    }
    let (k, v) = m.iter().next()?;
    k.starts_with('$').then_some((k.as_str(), v))
}

/// The arguments of `$manifest`, `$bytes`, `$paths` and `$dirs`.
#[derive(Debug, Default)]
struct Files {
    dir: String,
    optional: Vec<String>,
    absent: Vec<String>,
    dynamic: bool,
}

fn files_args(k: &str, arg: &Value) -> Result<Files, String> {
    let m = arg
        .as_object()
        .ok_or_else(|| format!("`{k}` takes an object {{\"dir\": …}}"))?;
    let mut f = Files {
        dynamic: true,
        ..Files::default()
    };
    for (key, v) in m {
        let strings = || -> Result<Vec<String>, String> {
            v.as_array()
                .and_then(|l| l.iter().map(|s| s.as_str().map(String::from)).collect())
                .ok_or_else(|| format!("`{k}`.{key} takes a list of paths"))
        };
        match key.as_str() {
            "dir" => {
                f.dir = v
                    .as_str()
                    .filter(|s| !s.is_empty())
                    .ok_or_else(|| format!("`{k}`.dir takes a fixture folder"))?
                    .to_string()
            }
            "optional" => f.optional = strings()?,
            "absent" => f.absent = strings()?,
            "dynamic" if k == "$manifest" || k == "$bytes" => {
                f.dynamic = v
                    .as_bool()
                    .ok_or_else(|| format!("`{k}`.dynamic takes true or false"))?
            }
            other => return Err(format!("`{k}` has no argument `{other}`")),
        }
    }
    if f.dir.is_empty() {
        return Err(format!("`{k}` needs `dir`"));
    }
    Ok(f)
}

/// A pattern's mistakes, at load time: fixture matchers' arguments, and
/// the rest as `expect` checks it.
pub fn validate(p: &Value) -> Result<(), String> {
    crate::expect::validate(&stand_in(p)?)
}

/// `p` with each fixture matcher checked and replaced by `$any`.
fn stand_in(p: &Value) -> Result<Value, String> {
    if let Some((k, arg)) = one_key(p) {
        match k {
            "$mode" => {
                let m = arg
                    .as_object()
                    .ok_or("`$mode` takes {\"initialize\": P, \"stateless\": P}")?;
                for (mode, q) in m {
                    if mode != "initialize" && mode != "stateless" {
                        return Err(format!("`$mode` has no mode `{mode}`"));
                    }
                    crate::expect::validate(&stand_in(q)?)?;
                }
                if m.len() != 2 {
                    return Err("`$mode` names both initialize and stateless".into());
                }
                return Ok(json!({"$any": true}));
            }
            "$sha256" | "$size" | "$facts" => {
                if arg.as_str().is_none_or(str::is_empty) {
                    return Err(format!("`{k}` takes a fixture path"));
                }
                return Ok(json!({"$any": true}));
            }
            "$manifest" | "$bytes" | "$paths" | "$dirs" => {
                files_args(k, arg)?;
                return Ok(json!({"$any": true}));
            }
            _ => {}
        }
    }
    Ok(match p {
        Value::Object(m) => {
            // No view has a member whose name starts with `$`: one beside
            // others is a matcher written where it is not one.
            if m.len() > 1
                && let Some(k) = m.keys().find(|k| k.starts_with('$'))
            {
                return Err(format!(
                    "`{k}` is beside other members, so it is no matcher; wrap them in {{\"$all\": [...]}}"
                ));
            }
            Value::Object(
                m.iter()
                    .map(|(k, v)| Ok((k.clone(), stand_in(v)?)))
                    .collect::<Result<Map<_, _>, String>>()?,
            )
        }
        Value::Array(l) => Value::Array(l.iter().map(stand_in).collect::<Result<_, _>>()?),
        other => other.clone(),
    })
}

/// What a pattern is resolved against: the unit's fixture and mode.
pub struct Ctx<'a> {
    pub fixture: &'a Fixture,
    pub mode: Mode,
}

/// `p` with every fixture matcher replaced by the plain pattern the
/// fixture calls for.
pub fn instantiate(p: &Value, ctx: &Ctx) -> Result<Value, String> {
    if let Some((k, arg)) = one_key(p) {
        match k {
            "$mode" => {
                let key = match ctx.mode {
                    Mode::Stateless => "stateless",
                    _ => "initialize",
                };
                let q = arg
                    .get(key)
                    .ok_or_else(|| format!("`$mode` has no `{key}`"))?;
                return instantiate(q, ctx);
            }
            "$sha256" => return Ok(json!(ctx.fixture.facts(path_arg(arg)?)?.digest)),
            "$size" => return Ok(json!(ctx.fixture.facts(path_arg(arg)?)?.size)),
            "$facts" => return Ok(file(&ctx.fixture.facts(path_arg(arg)?)?)),
            "$manifest" | "$bytes" | "$paths" | "$dirs" => {
                let f = files_args(k, arg)?;
                let want = expected(ctx.fixture, &f)?;
                return Ok(match k {
                    "$manifest" => {
                        let map = by_file(&want, true);
                        let resources = if f.dynamic {
                            json!({"$one_of": ["dynamic", map]})
                        } else {
                            map
                        };
                        json!({"resources": resources, "manifest_problems": []})
                    }
                    "$bytes" => {
                        let map = by_file(&want, true);
                        if f.dynamic {
                            // A "dynamic" skill's read view is its
                            // SKILL.md's, read at its uri (R7).
                            let md = ctx.fixture.facts(&format!("{}/SKILL.md", f.dir))?;
                            json!({"$one_of": [{"dynamic": {"SKILL.md": file(&md)}}, map]})
                        } else {
                            map
                        }
                    }
                    "$paths" => by_file(&want, false),
                    _ => dirs(&want),
                });
            }
            _ => {}
        }
    }
    Ok(match p {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| Ok((k.clone(), instantiate(v, ctx)?)))
                .collect::<Result<Map<_, _>, String>>()?,
        ),
        Value::Array(l) => Value::Array(
            l.iter()
                .map(|v| instantiate(v, ctx))
                .collect::<Result<_, _>>()?,
        ),
        other => other.clone(),
    })
}

fn path_arg(arg: &Value) -> Result<&str, String> {
    arg.as_str()
        .ok_or_else(|| format!("a fixture path is a string, got {arg}"))
}

fn file(f: &Facts) -> Value {
    json!({"digest": f.digest, "size": f.size})
}

/// The files (and folders) a skill folder must, may and must not show.
struct Expected {
    required: Vec<(String, Facts)>,
    optional: Vec<(String, Facts)>,
    required_dirs: Vec<String>,
    optional_dirs: Vec<String>,
}

/// What `f.dir` holds, by the case's word on what is optional or absent:
/// every regular file below it is required (nested skills' files too,
/// SEP2640-RES-09), unless a path of `optional` or `absent` covers it; a
/// symlink or special file must be covered by one of them (R6), so a case
/// never leaves the choice to the runner.
fn expected(fx: &Fixture, f: &Files) -> Result<Expected, String> {
    for p in f.optional.iter().chain(&f.absent) {
        let full = join(&f.dir, p);
        if std::fs::symlink_metadata(fx.root.join(&full)).is_err() {
            return Err(format!(
                "the case names {full} as optional or absent, and the fixture has no such path"
            ));
        }
    }
    let covered = |rel: &str, list: &[String]| list.iter().any(|c| under(rel, c));
    let mut e = Expected {
        required: Vec::new(),
        optional: Vec::new(),
        required_dirs: Vec::new(),
        optional_dirs: Vec::new(),
    };
    let walk = fx.walk(&f.dir)?;
    for (rel, kind) in &walk {
        if covered(rel, &f.absent) {
            continue;
        }
        let opt = covered(rel, &f.optional);
        match kind {
            Kind::Dir => {}
            Kind::File => {
                let facts = fx.facts(&join(&f.dir, rel))?;
                if opt {
                    e.optional.push((rel.clone(), facts));
                } else {
                    e.required.push((rel.clone(), facts));
                }
            }
            Kind::Symlink { to_dir } => {
                if !opt {
                    return Err(format!(
                        "the fixture has a symlink at {}: the case must call it optional or absent (spec/sep-2640.md, R6)",
                        join(&f.dir, rel)
                    ));
                }
                if *to_dir {
                    e.optional_dirs.push(rel.clone());
                    for inner in fx.files_through(&f.dir, rel)? {
                        let facts = fx.facts(&join(&f.dir, &inner))?;
                        e.optional.push((inner, facts));
                    }
                } else if fx.exists(&join(&f.dir, rel)) {
                    e.optional
                        .push((rel.clone(), fx.facts(&join(&f.dir, rel))?));
                }
            }
            Kind::Other => {
                return Err(format!(
                    "the fixture has a special file at {}: the case must call it absent",
                    join(&f.dir, rel)
                ));
            }
        }
    }
    // A folder is required when a required file is below it; any other
    // (empty, or only optional files) may or may not be shown (R8).
    for (rel, kind) in &walk {
        if *kind != Kind::Dir || covered(rel, &f.absent) {
            continue;
        }
        if e.required.iter().any(|(r, _)| under(r, rel)) {
            e.required_dirs.push(rel.clone());
        } else {
            e.optional_dirs.push(rel.clone());
        }
    }
    Ok(e)
}

/// A map of files by path below the skill: exactly the expected ones,
/// each with its digest and size (`with_facts`) or anything.
fn by_file(e: &Expected, with_facts: bool) -> Value {
    let value = |facts: &Facts| {
        if with_facts {
            file(facts)
        } else {
            json!({"$any": true})
        }
    };
    let mut keys: Vec<Value> = Vec::new();
    let mut members = Map::new();
    for (rel, facts) in &e.required {
        keys.push(json!(rel));
        members.insert(rel.clone(), value(facts));
    }
    for (rel, facts) in &e.optional {
        keys.push(json!(rel));
        members.insert(
            rel.clone(),
            json!({"$one_of": [{"$absent": true}, value(facts)]}),
        );
    }
    if members.is_empty() {
        json!({"$only_keys": keys})
    } else {
        json!({"$all": [{"$only_keys": keys}, Value::Object(members)]})
    }
}

/// The folders below the skill, as a list in any order: every required
/// one, and nothing but required or optional ones.
fn dirs(e: &Expected) -> Value {
    let all: Vec<Value> = e
        .required_dirs
        .iter()
        .chain(&e.optional_dirs)
        .map(|d| json!(d))
        .collect();
    if all.is_empty() {
        return json!({"$len": 0});
    }
    let each = json!({"$each": {"$one_of": all}});
    if e.required_dirs.is_empty() {
        return each;
    }
    let req: Vec<Value> = e.required_dirs.iter().map(|d| json!(d)).collect();
    json!({"$all": [{"$includes": req}, each]})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expect::check;
    use crate::skills::fixture::digest_bytes;

    fn fixture() -> (tempfile::TempDir, Fixture) {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        std::fs::create_dir_all(r.join("a/refs")).unwrap();
        std::fs::create_dir_all(r.join("a/empty")).unwrap();
        std::fs::create_dir_all(r.join("a/.cfg")).unwrap();
        std::fs::write(r.join("a/SKILL.md"), "---\nname: a\n---\n").unwrap();
        std::fs::write(r.join("a/refs/g.md"), "guide").unwrap();
        std::fs::write(r.join("a/.cfg/x"), "x").unwrap();
        std::os::unix::fs::symlink("refs/g.md", r.join("a/link.md")).unwrap();
        let fx = Fixture::new(r.to_path_buf());
        (d, fx)
    }

    fn ctx(fx: &Fixture) -> Ctx<'_> {
        Ctx {
            fixture: fx,
            mode: Mode::Initialize,
        }
    }

    #[test]
    fn a_manifest_is_every_file_with_the_digest_of_its_bytes_computed_here() {
        let (_d, fx) = fixture();
        let p = json!({"$manifest": {"dir": "a", "optional": [".cfg", "link.md"]}});
        validate(&p).unwrap();
        let pat = instantiate(&p, &ctx(&fx)).unwrap();
        crate::expect::validate(&pat).unwrap();
        let f = |s: &str| {
            let d = digest_bytes(s.as_bytes());
            json!({"digest": d.digest, "size": d.size, "uri": "skill://a/…"})
        };
        let md = "---\nname: a\n---\n";
        let whole = json!({"resources": {"SKILL.md": f(md), "refs/g.md": f("guide")}, "manifest_problems": []});
        assert_eq!(check(&pat, &whole), None);
        // The optional ones may be there, with their own (target's) bytes.
        let more = json!({"resources": {"SKILL.md": f(md), "refs/g.md": f("guide"), ".cfg/x": f("x"), "link.md": f("guide")}, "manifest_problems": []});
        assert_eq!(check(&pat, &more), None);
        // A file missing, one invented, a wrong digest, a wrong size: no.
        for bad in [
            json!({"resources": {"SKILL.md": f(md)}, "manifest_problems": []}),
            json!({"resources": {"SKILL.md": f(md), "refs/g.md": f("guide"), "x": f("x")}, "manifest_problems": []}),
            json!({"resources": {"SKILL.md": f(md), "refs/g.md": f("guidE")}, "manifest_problems": []}),
            json!({"resources": {"SKILL.md": f(md), "refs/g.md": f("guide"), "link.md": f("x")}, "manifest_problems": []}),
            json!({"resources": {"SKILL.md": f(md), "refs/g.md": f("guide")}, "manifest_problems": ["twice"]}),
        ] {
            assert!(check(&pat, &bad).is_some(), "{bad}");
        }
        // "dynamic" is the server's to choose (R7), unless the case says no.
        assert_eq!(
            check(
                &pat,
                &json!({"resources": "dynamic", "manifest_problems": []})
            ),
            None
        );
        let strict = instantiate(
            &json!({"$manifest": {"dir": "a", "optional": [".cfg", "link.md"], "dynamic": false}}),
            &ctx(&fx),
        )
        .unwrap();
        assert!(
            check(
                &strict,
                &json!({"resources": "dynamic", "manifest_problems": []})
            )
            .is_some()
        );
    }

    #[test]
    fn a_symlink_the_case_says_nothing_of_is_a_case_error() {
        let (_d, fx) = fixture();
        let e = instantiate(
            &json!({"$manifest": {"dir": "a", "optional": [".cfg"]}}),
            &ctx(&fx),
        )
        .unwrap_err();
        assert!(e.contains("a/link.md") && e.contains("R6"), "{e}");
        let e = instantiate(
            &json!({"$paths": {"dir": "a", "absent": ["nope"]}}),
            &ctx(&fx),
        )
        .unwrap_err();
        assert!(e.contains("a/nope"), "{e}");
    }

    #[test]
    fn folders_empty_ones_optional_and_the_mode_picks_its_pattern() {
        let (_d, fx) = fixture();
        let pat = instantiate(
            &json!({"$dirs": {"dir": "a", "optional": [".cfg"], "absent": ["link.md"]}}),
            &ctx(&fx),
        )
        .unwrap();
        assert_eq!(check(&pat, &json!(["refs"])), None);
        assert_eq!(check(&pat, &json!(["empty", ".cfg", "refs"])), None);
        assert!(check(&pat, &json!([".cfg"])).is_some());
        assert!(check(&pat, &json!(["refs", "other"])).is_some());
        let m =
            json!({"$mode": {"initialize": {"$one_of": [-32002, -32602]}, "stateless": -32602}});
        validate(&m).unwrap();
        assert_eq!(
            check(&instantiate(&m, &ctx(&fx)).unwrap(), &json!(-32002)),
            None
        );
        let s = Ctx {
            fixture: &fx,
            mode: Mode::Stateless,
        };
        assert!(check(&instantiate(&m, &s).unwrap(), &json!(-32002)).is_some());
        assert_eq!(
            instantiate(&json!({"x": [{"$size": "a/refs/g.md"}]}), &ctx(&fx)).unwrap(),
            json!({"x": [5]})
        );
        assert!(validate(&json!({"$mode": {"initialize": 1}})).is_err());
        assert!(validate(&json!({"$manifest": {"dir": "a", "bogus": 1}})).is_err());
        assert!(validate(&json!({"$paths": {"dir": "a", "dynamic": true}})).is_err());
        let e = validate(&json!({"entry": {"$manifest": {"dir": "a"}, "uri": "x"}})).unwrap_err();
        assert!(e.contains("$all"), "{e}");
    }
}
