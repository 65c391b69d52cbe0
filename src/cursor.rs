//! List cursors (spec READ-011, SKX-008): every paged list of this server
//! — `prompts/list`, `resources/list`, `skills/list` — hands out the same
//! kind of cursor and accepts only what it hands out.

use crate::echo::excerpt;

/// A cursor this list never handed out; the server answers it as invalid
/// params (-32602) with this message. Typed here, so the rule does not
/// depend on the protocol library (issue 28 §6).
#[derive(Debug, PartialEq)]
pub struct InvalidCursor(pub String);

impl std::fmt::Display for InvalidCursor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A list cursor is the decimal offset of a page's first item, exactly as
/// the list writes it in `nextCursor`: a multiple of the page size, past the
/// first page and before the end, in plain decimal (no sign, no leading
/// zero). Any other string was never handed out, and is an invalid-params
/// error naming it (READ-011, SKX-008) — by an excerpt when it is long
/// (HARD-005).
pub fn parse(cursor: Option<&str>, len: usize, page: usize) -> Result<usize, InvalidCursor> {
    let Some(c) = cursor else { return Ok(0) };
    c.parse::<usize>()
        .ok()
        .filter(|&n| n > 0 && n < len && page > 0 && n % page == 0 && n.to_string() == c)
        .ok_or_else(|| {
            InvalidCursor(format!(
                "invalid cursor {}: it is not one this list hands out; pass back the nextCursor of the previous page",
                excerpt(c)
            ))
        })
}

/// The `nextCursor` of a page that ends at `end` of `len` items.
pub fn next(end: usize, len: usize) -> Option<String> {
    (end < len).then(|| end.to_string())
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn only_cursors_a_list_hands_out_are_accepted() {
        assert_eq!(parse(None, 0, 500).ok(), Some(0));
        assert_eq!(parse(None, 1621, 500).ok(), Some(0));
        for (c, n) in [("500", 500), ("1000", 1000), ("1500", 1500)] {
            assert_eq!(parse(Some(c), 1621, 500).ok(), Some(n), "{c}");
        }
        for bad in [
            "0", "7", "499", "501", "2000", "0500", "+500", "-500", " 500", "500 ", "", "x",
        ] {
            let e = parse(Some(bad), 1621, 500).err();
            let e = e.unwrap_or_else(|| panic!("{bad:?} was accepted"));
            assert!(e.0.contains(&format!("{bad:?}")), "{}", e.0);
        }
        // The end of the list is not a page start, and no page size is zero.
        assert!(parse(Some("1500"), 1500, 500).is_err());
        assert!(parse(Some("500"), 1621, 0).is_err());
    }
}
