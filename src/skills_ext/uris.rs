//! The SKILL.md URI a skill is served under and its name segment, the
//! part SEP-2640 holds equal to the frontmatter `name` (SKX-006).

use crate::catalog;
use crate::uri;

/// The SKILL.md URI of a skill.
pub(crate) fn skill_uri(name: &str) -> String {
    uri::for_file(name, catalog::SKILL_MD)
}

/// The name segment of a SKILL.md URI: the last path segment before
/// `/SKILL.md`, in a URI with no query or fragment.
pub(super) fn uri_segment(uri: &str) -> Option<&str> {
    if uri.contains(['?', '#']) {
        return None;
    }
    let path = uri.strip_suffix(catalog::SKILL_MD)?.strip_suffix('/')?;
    path.rsplit('/').next().filter(|n| !n.is_empty())
}
