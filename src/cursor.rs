//! List cursors (spec READ-011, SKX-008, LIST-018): every paged list of
//! this server — `prompts/list`, `resources/list`,
//! `resources/directory/read`, `skills/list` — hands out cursors that name
//! the catalog they page (its identity, 16 hex digits) and accepts only
//! what a process serving that same catalog hands out: a cursor from any
//! replica of the same tree is honoured, one from another catalog is
//! refused with a message to list again. The tools' own cursors —
//! `skill_list`'s `cursor` and `skill_load`'s `filesCursor` (LIST-007,
//! LIST-008) — also name the listing they page (a query and limit, or a
//! skill's manifest), and are read here too.

use sha2::{Digest, Sha256};

use crate::echo::excerpt;
use crate::refusal::Refusal;

/// The refusal of a cursor handed out for another catalog (LIST-018):
/// the tree changed since, or the cursor came from a server of other
/// skills. `list` names the method to call again.
fn stale(c: &str, catalog: &str, list: &str, rules: &str) -> Refusal {
    Refusal::InvalidParams(format!(
        "cursor {} is from another version of the catalog (this server serves catalog {catalog}): the skills changed \
         since it was handed out, or it came from a server of other skills. Call {list} again without a cursor ({rules}, LIST-018)",
        excerpt(c)
    ))
}

/// Splits `CATALOG.REST` and checks the catalog, so a cursor of another
/// catalog is told apart from one that was never a cursor.
fn of_catalog<'c>(
    c: &'c str,
    catalog: &str,
    list: &str,
    rules: &str,
    bad: impl Fn() -> Refusal,
) -> Result<&'c str, Refusal> {
    let (id, rest) = c.split_once('.').ok_or_else(&bad)?;
    if id.len() != 16 || !id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return Err(bad());
    }
    if id != catalog {
        return Err(stale(c, catalog, list, rules));
    }
    Ok(rest)
}

/// Plain decimal, exactly as written: no sign, no leading zero.
fn decimal(s: &str) -> Option<usize> {
    s.parse::<usize>().ok().filter(|n| n.to_string() == s)
}

/// A list cursor of a list counted in pages of `page` items is
/// `CATALOG.OFFSET`: the catalog's identity, then the decimal offset of a
/// page's first item, exactly as the list writes it in `nextCursor` — a
/// multiple of the page size, past the first page and before the end.
/// Another catalog's cursor is refused with a message to list again
/// (LIST-018); any other string was never handed out, and is an
/// invalid-params error naming it (READ-011, SKX-008) — by an excerpt
/// when it is long (HARD-005).
pub(crate) fn parse(
    cursor: Option<&str>,
    len: usize,
    page: usize,
    catalog: impl FnOnce() -> String,
    list: &str,
) -> Result<usize, Refusal> {
    let Some(c) = cursor else { return Ok(0) };
    let catalog = catalog();
    let bad = || {
        Refusal::InvalidParams(format!(
            "invalid cursor {}: it is not one this list hands out; pass back the nextCursor of the previous page (READ-011)",
            excerpt(c)
        ))
    };
    let rest = of_catalog(c, &catalog, list, "READ-011", bad)?;
    decimal(rest)
        .filter(|&n| n > 0 && n < len && page > 0 && n % page == 0)
        .ok_or_else(bad)
}

/// The `nextCursor` of a page that ends at `end` of `len` items. The
/// catalog's identity is asked for only when there is a next page: a list
/// that fits one page never computes it.
pub(crate) fn next(end: usize, len: usize, catalog: impl FnOnce() -> String) -> Option<String> {
    (end < len).then(|| format!("{}.{end}", catalog()))
}

/// The check a sealed cursor ends with: 8 hex digits of SHA-256 over the
/// catalog, the list and the offset.
fn tag(catalog: &str, list: &str, offset: usize) -> String {
    let sum = Sha256::new()
        .chain_update(b"skill-mcp cursor 1\0")
        .chain_update(catalog.as_bytes())
        .chain_update(b"\0")
        .chain_update(list.as_bytes())
        .chain_update(b"\0")
        .chain_update(offset.to_string().as_bytes())
        .finalize();
    sum[..4].iter().map(|b| format!("{b:02x}")).collect()
}

/// A cursor of a list whose pages end where the answer budget does
/// (`skills/list`, SKX-015), so no process can tell a page start from the
/// offset alone: `CATALOG.OFFSET.CHECK`, the check sealing the rest. Any
/// process serving the catalog reads it back ([`unseal`]).
pub(crate) fn sealed(catalog: &str, list: &str, offset: usize) -> String {
    format!("{catalog}.{offset}.{}", tag(catalog, list, offset))
}

/// The offset of a cursor [`sealed`] for `list` of `catalog`, below
/// `len`. A cursor with another check was edited or never handed out
/// (`rules` name the rule refusing it); one of another catalog is told to
/// list again (LIST-018).
pub(crate) fn unseal(
    cursor: Option<&str>,
    len: usize,
    catalog: impl FnOnce() -> String,
    list: &str,
    rules: &str,
) -> Result<usize, Refusal> {
    let Some(c) = cursor else { return Ok(0) };
    let catalog = catalog();
    let bad = || {
        Refusal::InvalidParams(format!(
            "invalid cursor {}: it is not one {list} handed out; pass back the nextCursor of the previous page ({rules})",
            excerpt(c)
        ))
    };
    let rest = of_catalog(c, &catalog, list, rules, bad)?;
    let (o, check) = rest.split_once('.').ok_or_else(bad)?;
    decimal(o)
        .filter(|&n| n > 0 && n < len && check == tag(&catalog, list, n))
        .ok_or_else(bad)
}

/// What a paged tool answer's cursor is called, in its refusals.
pub(crate) struct Paged {
    tool: &'static str,
    /// The argument that takes the cursor.
    arg: &'static str,
    /// The field that hands it out.
    given: &'static str,
    /// What a cursor of another listing should have been called with.
    same: &'static str,
}

/// `skill_list`'s `cursor` (LIST-008).
pub(crate) const SKILL_LIST: Paged = Paged {
    tool: "skill_list",
    arg: "cursor",
    given: "nextCursor",
    same: "pass the same query and limit as the call that handed it out",
};

/// `skill_load`'s `filesCursor` (LIST-007).
pub(crate) const SKILL_LOAD: Paged = Paged {
    tool: "skill_load",
    arg: "filesCursor",
    given: "filesCursor",
    same: "pass it with the name of the skill whose manifest it pages",
};

/// The cursor of a tool's page that starts at `offset` of listing `key`
/// (a query and limit, or a skill's manifest): `CATALOG.KEY.OFFSET`, each
/// of the first two 16 hex digits.
pub(crate) fn keyed(catalog: &str, key: u64, offset: usize) -> String {
    format!("{catalog}.{key:016x}.{offset}")
}

/// The offset a [`keyed`] cursor stands for (LIST-008, LIST-018): only one
/// a process serving this same catalog handed out for this listing
/// (`key`), at one of its page starts. The catalog is named by its
/// identity, not by a process's generation, so a cursor from any replica
/// of the same tree is honoured.
pub(crate) fn read_keyed(
    c: &str,
    catalog: impl FnOnce() -> String,
    key: u64,
    starts: &[usize],
    kind: &Paged,
) -> Result<usize, String> {
    let bad = || {
        format!(
            "invalid {} {}: it is not one {} handed out; pass back the {} of the previous answer (LIST-008)",
            kind.arg,
            excerpt(c),
            kind.tool,
            kind.given
        )
    };
    let mut parts = c.splitn(3, '.');
    let (Some(id), Some(k), Some(o)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(bad());
    };
    if id.len() != 16 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(bad());
    }
    let ours = catalog();
    if id != ours {
        return Err(format!(
            "this {} is from another version of the catalog (catalog {id}; this server serves catalog {ours}): the skills changed \
             since it was handed out, or it came from a server of other skills. Call {} again without a {} (LIST-008, LIST-018)",
            kind.arg, kind.tool, kind.arg
        ));
    }
    if u64::from_str_radix(k, 16).ok() != Some(key) || k.len() != 16 {
        return Err(format!(
            "this {} belongs to another listing: {}, or start again without a {} (LIST-008)",
            kind.arg, kind.same, kind.arg
        ));
    }
    let offset: usize = o.parse().map_err(|_| bad())?;
    if offset == 0 || o != offset.to_string() || !starts.contains(&offset) {
        return Err(bad());
    }
    Ok(offset)
}

#[cfg(test)]
mod tests {
    use super::{parse, sealed, unseal};

    const CAT: &str = "0123456789abcdef";

    fn cat() -> String {
        CAT.to_owned()
    }
    const OTHER: &str = "fedcba9876543210";

    #[test]
    fn only_cursors_a_list_hands_out_are_accepted() {
        let p = |c: &str, len, page| parse(Some(c), len, page, cat, "resources/list");
        assert_eq!(parse(None, 0, 500, cat, "l").ok(), Some(0));
        assert_eq!(parse(None, 1621, 500, cat, "l").ok(), Some(0));
        for n in [500, 1000, 1500] {
            assert_eq!(p(&format!("{CAT}.{n}"), 1621, 500).ok(), Some(n), "{n}");
        }
        for rest in [
            "0", "7", "499", "501", "2000", "0500", "+500", "-500", " 500", "500 ", "", "x",
        ] {
            for bad in [rest.to_owned(), format!("{CAT}.{rest}")] {
                let e = p(&bad, 1621, 500).err();
                let e = e.unwrap_or_else(|| panic!("{bad:?} was accepted"));
                assert!(e.message().contains(&format!("{bad:?}")), "{}", e.message());
                assert!(e.message().contains("invalid cursor"), "{}", e.message());
            }
        }
        // The end of the list is not a page start, and no page size is zero.
        assert!(p(&format!("{CAT}.1500"), 1500, 500).is_err());
        assert!(p(&format!("{CAT}.500"), 1621, 0).is_err());
        // A catalog written in capitals was never handed out.
        assert!(
            p(&format!("{}.500", CAT.to_uppercase()), 1621, 500)
                .is_err_and(|e| e.message().contains("invalid"))
        );
    }

    #[test]
    fn another_catalogs_cursor_is_told_to_list_again() {
        let e = parse(
            Some(&format!("{OTHER}.500")),
            1621,
            500,
            cat,
            "resources/list",
        )
        .err();
        let e = e.map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("another version of the catalog"), "{e}");
        assert!(
            e.contains("Call resources/list again without a cursor"),
            "{e}"
        );
        assert!(e.contains("LIST-018"), "{e}");
    }

    #[test]
    fn a_sealed_cursor_opens_only_as_written() {
        let c = sealed(CAT, "skills/list", 4);
        assert_eq!(
            unseal(Some(&c), 9, cat, "skills/list", "SKX-008").ok(),
            Some(4)
        );
        assert_eq!(unseal(None, 9, cat, "skills/list", "SKX-008").ok(), Some(0));
        // Another offset with this check, another list, past the end.
        let edited = c.replacen(".4.", ".3.", 1);
        for (bad, len, list) in [
            (edited.as_str(), 9, "skills/list"),
            (c.as_str(), 9, "other/list"),
            (c.as_str(), 4, "skills/list"),
            ("4", 9, "skills/list"),
        ] {
            let e = unseal(Some(bad), len, cat, list, "SKX-008").err();
            let e = e.map(|e| e.to_string()).unwrap_or_default();
            assert!(e.starts_with("invalid cursor"), "{bad}: {e}");
        }
        let e = unseal(Some(&c), 9, || OTHER.to_owned(), "skills/list", "SKX-008").err();
        assert!(e.is_some_and(|e| {
            e.message()
                .contains("Call skills/list again without a cursor")
        }));
    }
}
