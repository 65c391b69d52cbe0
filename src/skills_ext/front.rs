//! SKILL.md's frontmatter as SEP-2640 carries it (SKX-001, SKX-011):
//! read through the fence when it is not kept, as compact JSON, or why it
//! can no longer be carried under its scanned name.

use serde_json::{Map, Value};

use crate::catalog::{self, Skill};

/// SKILL.md's frontmatter as SEP-2640 writes it: `name`, `description`,
/// then every other field (the shape the door reads back into rmcp's
/// `SkillFrontmatter`).
#[derive(serde::Serialize)]
struct Front {
    name: String,
    description: String,
    #[serde(flatten)]
    extra: Map<String, Value>,
}

/// SKILL.md's frontmatter as SEP-2640 carries it (`name`, `description`,
/// every other field), read and parsed through the fence now, as compact
/// JSON; or why SEP-2640 cannot carry it under its scanned name (SKX-011).
pub(super) fn read_front(skill: &Skill) -> Result<String, String> {
    let loaded = catalog::load_skill_md(&skill.dir).map_err(|e| match e {
        catalog::LoadError::Read(_, d, _) => d,
        catalog::LoadError::Split(e) => e.to_string(),
    })?;
    let fm = loaded.parse().map_err(|e| e.to_string())?;
    let mut extra = Map::new();
    let mut name = None;
    let mut description = None;
    for (k, v) in &fm.map {
        let (Some(k), Ok(v)) = (k.as_str(), serde_json::to_value(v)) else {
            continue;
        };
        match (k, v) {
            ("name", serde_json::Value::String(s)) => name = Some(s),
            ("description", serde_json::Value::String(s)) => description = Some(s),
            (k, v) => {
                extra.insert(k.to_owned(), v);
            }
        }
    }
    let (Some(name), Some(description)) = (name, description) else {
        return Err("its name or description is gone".into());
    };
    if name != skill.name {
        return Err(format!(
            "its frontmatter name is now {name:?}, not the directory name it was served under"
        ));
    }
    if description.trim().is_empty() {
        return Err("its description is now empty".into());
    }
    let front = Front {
        name,
        description,
        extra,
    };
    serde_json::to_string(&front)
        .map_err(|e| format!("its frontmatter cannot be written as JSON: {e}"))
}
