//! The path of the node being read (`mcp-host.run[0].timeout`), kept on
//! the stack as the reader descends, so a note can name and place it
//! (DECL-004, DECL-005).

use crate::frontmatter::Seg;

/// The path of the node being read, kept on the stack as the reader
/// descends: nothing is allocated for it unless a note names it, and most
/// blocks earn no note (building every path and label up front was a tenth
/// of the boot scan).
#[derive(Clone, Copy)]
pub(super) struct At<'a> {
    up: Option<&'a At<'a>>,
    step: Step<'a>,
}

#[derive(Clone, Copy)]
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

impl<'a> At<'a> {
    pub(super) fn top(k: &'a str) -> At<'a> {
        At {
            up: None,
            step: Step::Key(k),
        }
    }

    pub(super) fn key<'b>(&'b self, k: &'b str) -> At<'b> {
        At {
            up: Some(self),
            step: Step::Key(k),
        }
    }

    pub(super) fn index(&self, i: usize) -> At<'_> {
        At {
            up: Some(self),
            step: Step::Index(i),
        }
    }

    /// The path as [`Positions`] keys it.
    pub(super) fn segs(&self) -> Vec<Seg> {
        let mut out = Vec::new();
        let mut at = Some(self);
        while let Some(a) = at {
            out.push(match a.step {
                Step::Key(k) => Seg::Key(k.to_owned()),
                Step::Index(i) => Seg::Index(i),
            });
            at = a.up;
        }
        out.reverse();
        out
    }
}

/// Renders as `mcp-host.run[0].timeout`, the way notes name a node.
impl std::fmt::Display for At<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&crate::frontmatter::path_label(&self.segs()))
    }
}
