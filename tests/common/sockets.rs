//! Reading a raw HTTP connection the way the attack tests need: until a
//! needle, for a while, to its end, just its head; and room for a flood
//! of connections. One copy each, shared by the tests/http/ modules.

use std::io::Read;
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Reads from `c` until `needle` shows (within 20 s a read), failing when
/// the connection ends first; what was read.
pub fn read_until(c: &mut TcpStream, needle: &str) -> String {
    c.set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    let mut got = Vec::new();
    let mut buf = [0u8; 8192];
    while !String::from_utf8_lossy(&got).contains(needle) {
        let n = c.read(&mut buf).unwrap_or(0);
        assert!(
            n > 0,
            "the connection ended before {needle:?}: {:?}",
            String::from_utf8_lossy(&got)
        );
        got.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&got).into_owned()
}

/// Everything `c` sends until it closes or 30 s pass.
pub fn read_to_close(c: &mut TcpStream) -> Vec<u8> {
    c.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let mut bytes = Vec::new();
    let _ = c.read_to_end(&mut bytes);
    bytes
}

/// Everything `c` sends until it closes or `secs` pass.
pub fn read_for(c: &mut TcpStream, secs: u64) -> Vec<u8> {
    read_for_closing(c, secs as f64).0
}

/// Everything `c` sends until it closes or `secs` pass, and whether it
/// closed.
pub fn read_for_closing(c: &mut TcpStream, secs: f64) -> (Vec<u8>, bool) {
    c.set_read_timeout(Some(Duration::from_millis(200)))
        .expect("timeout");
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    let mut got = Vec::new();
    let mut buf = [0u8; 65536];
    while Instant::now() < deadline {
        match c.read(&mut buf) {
            Ok(0) => return (got, true),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(_) => return (got, true),
        }
    }
    (got, false)
}

/// The head of the answer on `c` (read until the blank line, 20 s at
/// most; what came when it closed first).
pub fn head_of(c: &mut TcpStream) -> String {
    c.set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&got).contains("\r\n\r\n") {
        let n = c.read(&mut buf).unwrap_or(0);
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&got).into_owned()
}

/// Raises this process's open-file limit for a flood of connections.
pub fn room_for_descriptors(n: u64) {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    if let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE)
        && soft < n
    {
        let _ = setrlimit(Resource::RLIMIT_NOFILE, n.min(hard), hard);
    }
}
