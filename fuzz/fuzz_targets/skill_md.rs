//! SKILL.md as the catalog reads it: split, the strict YAML parse that
//! spares a broken `mcp-host:` block, then the fields and the declaration.
//! Nothing here may panic, whatever the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skill_mcp::{declaration, frontmatter};

fn check(text: &str) {
    let Ok(split) = frontmatter::split(text) else {
        return;
    };
    // The body is sliced by the server and by `check` exactly like this.
    let body = &text[split.body_offset..];
    let head = &text[..split.body_offset];
    assert!(head.len() >= split.yaml.len());
    let _ = head.matches('\n').count() + body.len();
    let Ok((fm, _block_error)) =
        frontmatter::parse_sparing_block(split.yaml, split.yaml_line, "mcp-host")
    else {
        return;
    };
    let unknown = frontmatter::keys::unknown(&fm);
    let (fields, notes) = frontmatter::Fields::read(&fm);
    let (decl, decl_notes) = declaration::read(&fm);
    // A declaration's notes carry the reason each is filed under.
    let decl_notes = decl_notes.iter().map(|(_, note)| note);
    for note in unknown.iter().chain(&notes).chain(decl_notes) {
        let _ = (&note.message, note.line, note.column);
    }
    let _ = (fields, decl);
}

fuzz_target!(|data: &[u8]| {
    match std::str::from_utf8(data) {
        Ok(text) => check(text),
        // What a reader that replaces bad bytes would hand on.
        Err(_) => check(&String::from_utf8_lossy(data)),
    }
});
