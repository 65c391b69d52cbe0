//! The path fence's string check (spec FENCE-001). It must never panic, and
//! whatever it accepts is a plain relative path of plain segments.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skill_mcp::fence;

fuzz_target!(|data: &[u8]| {
    let path = String::from_utf8_lossy(data);
    if fence::check_str(&path).is_err() {
        return;
    }
    assert!(!path.is_empty(), "accepted an empty path");
    assert!(!path.starts_with('/'), "accepted an absolute path: {path:?}");
    for bad in ['\\', '%', '\0'] {
        assert!(!path.contains(bad), "accepted {bad:?} in {path:?}");
    }
    assert!(
        path.chars().count() <= fence::MAX_PATH_CHARS,
        "accepted a path over the cap"
    );
    for segment in path.split('/') {
        assert!(
            segment != ".." && segment != ".",
            "accepted a dot segment in {path:?}"
        );
        assert!(!segment.is_empty(), "accepted an empty segment in {path:?}");
        assert!(
            fence::check_segment(segment).is_ok(),
            "check_str and check_segment disagree on {segment:?}"
        );
    }
});
