//! The frontmatter fast path against saphyr: any text the fast reader
//! accepts must read, through saphyr, to the same events at the same
//! places (the reader's contract, `frontmatter::simple::agrees`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use skill_mcp::frontmatter::simple;

fuzz_target!(|data: &[u8]| {
    let Ok(yaml) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(e) = simple::agrees(yaml) {
        panic!("{e}");
    }
});
