//! Data flows one way (issue "One-way flow"): the `crate::` references of
//! `src/` form no cycle, so the modules stack in floors — each imports only
//! modules on floors below its own. The floors are printed, and
//! CONTRIBUTING.md's module table (floor and imports of each module) is
//! checked against them, so the picture there stays true.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// Every top-level module of the crate whose sources are `src` and whose
/// root file is `root` (`lib.rs`, or a binary's `main.rs`) → the modules it
/// names through `crate::` (in code, not in comments), itself left out.
fn graph_of(src: &Path, root: &str) -> BTreeMap<String, BTreeSet<String>> {
    let src = src.to_path_buf();
    let lib = fs::read_to_string(src.join(root)).expect("the crate's root file");
    let mut g: BTreeMap<String, BTreeSet<String>> = lib
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            l.strip_prefix("pub mod ")
                .or_else(|| l.strip_prefix("mod "))
        })
        .filter(|m| m.ends_with(';'))
        .map(|m| (m.trim_end_matches(';').to_owned(), BTreeSet::new()))
        .collect();
    let mut files = Vec::new();
    collect(&src, &mut files);
    for file in files {
        let rel = file.strip_prefix(&src).expect("under src");
        let first = rel.components().next().expect("a component");
        let module = first
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_owned();
        if module == "lib" || module == "main" || module == "bin" {
            continue;
        }
        let deps = g
            .get_mut(&module)
            .unwrap_or_else(|| panic!("{} belongs to no module lib.rs declares", rel.display()));
        let text = fs::read_to_string(&file).expect("readable source");
        for line in text.lines() {
            let code = line.split("//").next().unwrap_or("");
            let mut rest = code;
            while let Some(at) = rest.find("crate::") {
                rest = &rest[at + "crate::".len()..];
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() && name != module {
                    deps.insert(name);
                }
            }
            // `use crate::{a, b::c}` names several modules at once.
            if let Some(group) = code.trim().strip_prefix("use crate::{") {
                for part in group.split(',') {
                    let name: String = part
                        .trim()
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    if !name.is_empty() && name != module {
                        deps.insert(name);
                    }
                }
            }
        }
    }
    g
}

/// The server library's module graph.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    graph_of(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), "lib.rs")
}

fn collect(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in fs::read_dir(dir).expect("readable src dir") {
        let p = e.expect("dir entry").path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Each module's floor: 0 when it imports no module of the crate, else one
/// above the highest floor it imports. `Err` names a cycle.
fn floors(g: &BTreeMap<String, BTreeSet<String>>) -> Result<BTreeMap<String, usize>, Vec<String>> {
    fn visit(
        m: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        done: &mut BTreeMap<String, usize>,
        path: &mut Vec<String>,
    ) -> Result<usize, Vec<String>> {
        if let Some(&f) = done.get(m) {
            return Ok(f);
        }
        if let Some(at) = path.iter().position(|p| p == m) {
            let mut cycle = path[at..].to_vec();
            cycle.push(m.to_owned());
            return Err(cycle);
        }
        path.push(m.to_owned());
        let mut floor = 0;
        for d in g.get(m).into_iter().flatten() {
            floor = floor.max(visit(d, g, done, path)? + 1);
        }
        path.pop();
        done.insert(m.to_owned(), floor);
        Ok(floor)
    }
    let mut done = BTreeMap::new();
    for m in g.keys() {
        visit(m, g, &mut done, &mut Vec::new())?;
    }
    Ok(done)
}

#[test]
fn the_modules_stack_in_floors() {
    let g = graph();
    for (m, deps) in &g {
        for d in deps {
            assert!(
                g.contains_key(d),
                "{m} names crate::{d}, which lib.rs does not declare"
            );
        }
    }
    let floors = floors(&g).unwrap_or_else(|cycle| {
        panic!("the imports of src/ run in a circle: {}", cycle.join(" → "))
    });
    let top = floors.values().copied().max().unwrap_or(0);
    for f in 0..=top {
        let on: Vec<String> = floors
            .iter()
            .filter(|&(_, &x)| x == f)
            .map(|(m, _)| {
                let deps: Vec<&str> = g[m].iter().map(String::as_str).collect();
                format!("{m} ({})", deps.join(", "))
            })
            .collect();
        println!("floor {f}: {}", on.join("; "));
    }
    // CONTRIBUTING.md's module table gives each module's floor and
    // imports; they must be these.
    let doc = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("CONTRIBUTING.md"))
        .expect("CONTRIBUTING.md");
    for (m, f) in &floors {
        let deps: Vec<&str> = g[m].iter().map(String::as_str).collect();
        let deps = if deps.is_empty() {
            "—".to_owned()
        } else {
            deps.join(", ")
        };
        let row = format!("| `{m}` | {f} | {deps} |");
        assert!(
            doc.contains(&row),
            "CONTRIBUTING.md's module table has no row starting {row:?}: update its Architecture section"
        );
    }
}

/// The conformance runner is held to the same rule (issue 28 §6): its
/// modules stack too, so a reader can take them bottom up.
#[test]
fn the_runner_modules_stack_in_floors() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance/runner/src");
    let g = graph_of(&src, "main.rs");
    assert!(g.len() > 5, "the runner's modules were not found: {g:?}");
    for (m, deps) in &g {
        for d in deps {
            assert!(
                g.contains_key(d),
                "runner {m} names crate::{d}, which main.rs does not declare"
            );
        }
    }
    let floors = floors(&g).unwrap_or_else(|cycle| {
        panic!(
            "the imports of conformance/runner/src run in a circle: {}",
            cycle.join(" → ")
        )
    });
    let top = floors.values().copied().max().unwrap_or(0);
    for f in 0..=top {
        let on: Vec<&str> = floors
            .iter()
            .filter(|&(_, &x)| x == f)
            .map(|(m, _)| m.as_str())
            .collect();
        println!("runner floor {f}: {}", on.join(", "));
    }
}

/// The stdio client the runner, the tests and the bench share (issue 28
/// §6, conformance/client) sits under all three: its modules stack, and it
/// names none of its users nor the server.
#[test]
fn the_client_crate_stacks_and_names_none_of_its_users() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance/client/src");
    let g = graph_of(&src, "lib.rs");
    floors(&g).unwrap_or_else(|cycle| {
        panic!(
            "the imports of conformance/client/src run in a circle: {}",
            cycle.join(" → ")
        )
    });
    let mut files = Vec::new();
    collect(&src, &mut files);
    assert!(!files.is_empty(), "the client's sources were not found");
    for file in files {
        let text = fs::read_to_string(&file).expect("readable source");
        for user in ["skill_mcp::", "skill_mcp_conformance", "CARGO_BIN_EXE"] {
            assert!(
                !text.contains(user),
                "{} names {user}: the client depends on none of its users",
                file.display()
            );
        }
    }
}

#[test]
fn a_cycle_is_found_and_named() {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.insert("a".into(), ["b".to_owned()].into());
    g.insert("b".into(), ["c".to_owned()].into());
    g.insert("c".into(), ["a".to_owned()].into());
    g.insert("d".into(), BTreeSet::new());
    let cycle = floors(&g).expect_err("a → b → c → a is a cycle");
    assert_eq!(cycle, ["a", "b", "c", "a"]);
    if let Some(c) = g.get_mut("c") {
        c.clear();
    }
    let f = floors(&g).expect("no cycle now");
    assert_eq!((f["a"], f["b"], f["c"], f["d"]), (2, 1, 0, 0));
}

/// Errors and answers stay the crate's own types until a door (issue 28
/// §6, SRV-011): only the doors name rmcp — `server` (the MCP handlers and
/// the one conversion of a `Refusal` into an MCP error), `http` (rmcp's
/// HTTP service), `stdio` (rmcp's service over the stdio transport),
/// `transport` (which implements rmcp's `Transport`) and `reload` (which
/// tells rmcp's peers that a list changed). A rule below
/// them that named rmcp would tie it to the protocol library.
#[test]
fn only_the_doors_name_rmcp() {
    const DOORS: [&str; 5] = ["server", "http", "stdio", "transport", "reload"];
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    collect(&src, &mut files);
    let mut named = Vec::new();
    for file in files {
        let rel = file.strip_prefix(&src).expect("under src");
        let module = rel
            .components()
            .next()
            .expect("a component")
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_owned();
        if DOORS.contains(&module.as_str()) || module == "main" {
            continue;
        }
        let text = fs::read_to_string(&file).expect("readable source");
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if code.contains("rmcp::") || code.contains("use rmcp") {
                named.push(format!("{}:{}: {}", rel.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        named.is_empty(),
        "modules below the doors name rmcp; return the crate's own types (a `Refusal`, plain data) and let the door translate:\n{}",
        named.join("\n")
    );
}
