//! The skill's own top-level fields read from the frontmatter — `name`,
//! `description`, `when-to-use` — each that is no string reported with its
//! fix (FM-007), and the note every such finding is, placed at its node.

use serde_yaml_ng::Value;

use super::positions::{Positions, Seg, key_text};
use super::{Frontmatter, fixes};

/// A reported, non-fatal finding in the frontmatter (an unknown key, a
/// field of the wrong type, a declaration entry ignored), with its position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub message: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
}

impl Note {
    /// A note placed at the node `path`, when the frontmatter has it.
    pub(crate) fn at(positions: &Positions, path: &[Seg], message: String) -> Note {
        let pos = positions.get(path);
        Note {
            message,
            line: pos.map(|p| p.0),
            column: pos.map(|p| p.1),
        }
    }
}

/// The skill's own top-level fields.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fields {
    pub(crate) name: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) when_to_use: Option<String>,
}

impl Fields {
    /// Reads `name`, `description` and `when-to-use` (or `when_to_use`),
    /// reporting those that are not strings (spec FM-007). Unknown keys
    /// are [`keys::unknown`]'s.
    pub fn read(fm: &Frontmatter) -> (Fields, Vec<Note>) {
        let mut notes = Vec::new();
        let mut string = |key: &str| match fm.map.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(v) => {
                // YAML read a number, a boolean or a collection where text
                // was meant: the fix is the value written as text.
                let fix = match v {
                    Value::Sequence(_) | Value::Mapping(_) | Value::Tagged(_) => {
                        format!("write it as one line of text, {key}: \"…\"")
                    }
                    other => format!("quote it: {key}: {}", fixes::quote(&key_text(other))),
                };
                notes.push(Note::at(
                    &fm.positions,
                    &[Seg::Key(key.into())],
                    format!("frontmatter {key:?} is not a string (ignored); {fix}"),
                ));
                None
            }
        };
        let name = string("name");
        let description = string("description");
        let when_to_use = string("when-to-use").or_else(|| string("when_to_use"));
        (
            Fields {
                name,
                description,
                when_to_use,
            },
            notes,
        )
    }
}
