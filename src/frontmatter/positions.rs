//! Where each node of the frontmatter starts in SKILL.md, by its path
//! (`mcp-host.run[0].timeout`), so a note or a refusal can point at the
//! line and column to edit (FM-007, DECL-001).

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_yaml_ng::Value;

/// One step of a path into the frontmatter, for positions.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Seg {
    Key(String),
    Index(usize),
    /// A key that is not a string (`1:`, `true:`, `? [a, b]`), by its
    /// compact YAML text: named so its value can be placed (FM-007).
    OtherKey(String),
}

/// A mapping key that is not a string, as its compact YAML text
/// (`1`, `true`, `null`, `[a, b]`), for positions and messages.
pub(crate) fn key_text(key: &Value) -> String {
    match serde_yaml_ng::to_string(key) {
        Ok(t) => {
            let t = t.trim();
            // A collection renders on several lines; one line names it.
            t.lines().map(str::trim).collect::<Vec<_>>().join(" ")
        }
        Err(_) => "?".to_owned(),
    }
}

/// Renders a path as `mcp-host.run[0].timeout`.
pub(crate) fn path_label(path: &[Seg]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
            Seg::OtherKey(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&format!("[{k}]"));
            }
        }
    }
    out
}

/// Where each node of the frontmatter starts in SKILL.md (line, column),
/// found by its path. Held as a tree while parsing, one node a YAML node,
/// each naming its parent and its own step: a node costs one entry (and
/// its key's text), not a copy of its whole path. Hashing every node's
/// path as it was met cost more than the YAML parser itself at boot, and
/// most frontmatter is never asked: the map by path is built on the first
/// lookup (only a note makes one), once, so a skill with many notes pays
/// for it once and no more.
#[derive(Debug, Default, Clone)]
pub(crate) struct Positions {
    nodes: Vec<PosNode>,
    by_path: OnceLock<HashMap<Vec<Seg>, (usize, usize)>>,
}

#[derive(Debug, Clone)]
struct PosNode {
    /// The enclosing node, or [`NO_PARENT`] for the root.
    parent: u32,
    /// The step from the parent, or `None` where the path does not grow (the
    /// root, a key that is a collection, a non-string key's value).
    seg: Option<Seg>,
    /// `None` for a collection used as a mapping key: it only carries the
    /// path on to what it holds.
    pos: Option<(usize, usize)>,
}

pub(super) const NO_PARENT: u32 = u32::MAX;

impl Positions {
    /// The position of the node at `path`, if it exists; when two nodes
    /// share a path (a non-string key's value names its mapping's), the
    /// later one.
    pub(crate) fn get(&self, path: &[Seg]) -> Option<(usize, usize)> {
        self.by_path.get_or_init(|| self.index()).get(path).copied()
    }

    /// Every positioned node by its path, later nodes over earlier ones.
    fn index(&self) -> HashMap<Vec<Seg>, (usize, usize)> {
        let mut map = HashMap::with_capacity(self.nodes.len());
        for (i, node) in self.nodes.iter().enumerate() {
            if let Some(pos) = node.pos {
                map.insert(self.path_of(i), pos);
            }
        }
        map
    }

    /// Node `i`'s path, from the root.
    fn path_of(&self, mut i: usize) -> Vec<Seg> {
        let mut path = Vec::new();
        loop {
            let node = &self.nodes[i];
            if let Some(seg) = &node.seg {
                path.push(seg.clone());
            }
            if node.parent == NO_PARENT {
                path.reverse();
                return path;
            }
            i = node.parent as usize;
        }
    }

    /// Adds a node; its index is what its children name as their parent.
    pub(super) fn push(
        &mut self,
        (parent, seg): (u32, Option<Seg>),
        pos: Option<(usize, usize)>,
    ) -> u32 {
        // Fewer nodes than bytes (64 KiB cap), so the index fits.
        let i = u32::try_from(self.nodes.len()).unwrap_or(NO_PARENT - 1);
        self.nodes.push(PosNode { parent, seg, pos });
        i
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontmatter::parse;

    #[test]
    fn positions_name_each_node() {
        let fm = parse(
            "name: x\nmcp-host:\n  run:\n    - script: a.js\n      timeout: 5\n",
            2,
        )
        .unwrap();
        let path = [
            Seg::Key("mcp-host".into()),
            Seg::Key("run".into()),
            Seg::Index(0),
            Seg::Key("timeout".into()),
        ];
        assert_eq!(fm.positions.get(&path), Some((6, 16)));
        assert_eq!(path_label(&path), "mcp-host.run[0].timeout");
    }
}
