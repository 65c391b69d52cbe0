//! Variables no script may ask for (DECL-006): the host's own, and every
//! one that makes the dynamic loader, glibc, OpenSSL, node or python3 load
//! code, read other configuration or weaken TLS; and what a variable name
//! is at all.

/// Variables no script may ask for (spec DECL-006): the host's own, and
/// every one that makes the dynamic loader, glibc, OpenSSL, node or
/// python3 load code, read other configuration or weaken TLS. Handing one
/// over would let a bundle inject code into its interpreter or reach the
/// host's configuration, whatever the fence does with the script itself.
/// Each name is refused with whose variable it is.
const RESERVED_NAMES: &[(&str, &str)] = &[
    ("MCP_SKILLS_PATH", HOST),
    ("MCP_SKILL_RUN", HOST),
    ("SKILLS_DIR", HOST),
    ("MCP_HOST_METER_FILE", HOST),
    ("MCP_BLOB_BASE_URL", HOST),
    ("MCP_BLOB_SIGNING_KEY", HOST),
    // glibc's unsecvars.h (the variables stripped for setuid programs);
    // its LD_* are the prefix below, and TMPDIR, also listed there, is one
    // the execution fence hands every script itself (RUN-012).
    ("GCONV_PATH", GLIBC),
    ("GETCONF_DIR", GLIBC),
    ("GLIBC_TUNABLES", GLIBC),
    ("HOSTALIASES", GLIBC),
    ("LOCALDOMAIN", GLIBC),
    ("LOCPATH", GLIBC),
    ("MALLOC_TRACE", GLIBC),
    ("NIS_PATH", GLIBC),
    ("NLSPATH", GLIBC),
    ("RESOLV_HOST_CONF", GLIBC),
    ("RES_OPTIONS", GLIBC),
    ("TZDIR", GLIBC),
    // openssl-env(7), beyond the OPENSSL* prefix.
    ("SSL_CERT_FILE", OPENSSL),
    ("SSL_CERT_DIR", OPENSSL),
    ("CTLOG_FILE", OPENSSL),
];

/// Whole families, by prefix, so a variable a new release adds is refused
/// before anyone lists it.
const RESERVED_PREFIXES: &[(&str, &str)] = &[
    (
        "LD_",
        "the dynamic loader reads (ld.so(8): LD_PRELOAD, LD_AUDIT, LD_LIBRARY_PATH, …)",
    ),
    ("DYLD_", "the macOS dynamic loader reads (dyld(1))"),
    // The older names of glibc's malloc tunables (MALLOC_CHECK_,
    // MALLOC_PERTURB_, MALLOC_ARENA_MAX, …), which ld.so reads as aliases
    // of GLIBC_TUNABLES' glibc.malloc.* and a setuid program ignores just
    // the same; MALLOC_TRACE keeps its own entry above.
    ("MALLOC_", GLIBC),
    ("OPENSSL", OPENSSL),
    (
        "NODE_",
        "node reads (its documented environment: NODE_OPTIONS, NODE_EXTRA_CA_CERTS, NODE_TLS_REJECT_UNAUTHORIZED, …)",
    ),
    (
        "PYTHON",
        "python3 reads (every PYTHON* variable, the ones python -E ignores)",
    ),
];

/// The one name a reserved prefix does not cover: `NODE_ENV` is an
/// application convention, not a variable node itself reads.
const NOT_RESERVED: &[&str] = &["NODE_ENV"];

const HOST: &str = "the host sets";
const GLIBC: &str =
    "glibc ignores for setuid programs because it loads code or configuration (unsecvars.h)";
const OPENSSL: &str =
    "OpenSSL reads to load configuration, modules or trusted certificates (openssl-env(7))";

/// Whose variable `name` is, when no script may be handed it (DECL-006).
pub(crate) fn reserved(name: &str) -> Option<&'static str> {
    if NOT_RESERVED.contains(&name) {
        return None;
    }
    RESERVED_NAMES
        .iter()
        .find(|(n, _)| *n == name)
        .or_else(|| RESERVED_PREFIXES.iter().find(|(p, _)| name.starts_with(p)))
        .map(|(_, why)| *why)
}

/// True for a portable environment variable name.
pub(super) fn is_env_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deny_list_covers_loader_glibc_openssl_node_and_python() {
        for name in [
            "LD_PRELOAD",
            "LD_AUDIT",
            "LD_LIBRARY_PATH",
            "DYLD_INSERT_LIBRARIES",
            "GCONV_PATH",
            "GLIBC_TUNABLES",
            "OPENSSL_CONF",
            "OPENSSL_MODULES",
            "SSL_CERT_FILE",
            "NODE_OPTIONS",
            "NODE_TLS_REJECT_UNAUTHORIZED",
            "NODE_V8_COVERAGE",
            "NODE_REDIRECT_WARNINGS",
            "NODE_EXTRA_CA_CERTS",
            "PYTHONPATH",
            "PYTHONHOME",
            "PYTHON_BASIC_REPL",
            "MCP_SKILL_RUN",
        ] {
            assert!(reserved(name).is_some(), "{name}");
        }
        for name in [
            "NODE_ENV",
            "API_KEY",
            "GOOD",
            "ld_preload",
            "NODEJS",
            "TMPDIR",
        ] {
            assert_eq!(reserved(name), None, "{name}");
        }
    }
}
