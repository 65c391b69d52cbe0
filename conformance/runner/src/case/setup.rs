//! Setup actions (FORMAT.md, *Setup*): what `setup` and an `act` step
//! make in `${WORK}`, read by one serde type per action.

use std::path::{Component, Path};

use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::{DecodeError, Engine};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::entry::{one_kind, read_entry};

/// Largest file a `write` with `repeat` may produce.
pub const MAX_REPEAT_BYTES: u64 = 1 << 30;
/// Most files one `files` action may create (names `f000000` … `f999999`).
pub const MAX_FILES: u64 = 1_000_000;

/// A path relative to `${WORK}`: only normal components, none of them `..`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RelPath {
    pub text: String,
    pub parts: Vec<String>,
}

impl RelPath {
    pub fn parse(s: &str, allow_root: bool) -> Result<RelPath, String> {
        if s.is_empty() {
            return Err("path is empty".to_string());
        }
        if s.contains('\0') {
            return Err(format!("path `{s}` contains a NUL byte"));
        }
        let p = Path::new(s);
        let mut parts = Vec::new();
        for c in p.components() {
            match c {
                Component::Normal(n) => parts.push(n.to_string_lossy().into_owned()),
                Component::CurDir => {}
                Component::ParentDir => {
                    return Err(format!(
                        "path `{s}` has a `..` segment; paths stay inside ${{WORK}}"
                    ));
                }
                Component::RootDir | Component::Prefix(_) => {
                    return Err(format!(
                        "path `{s}` is absolute; paths are relative to ${{WORK}}"
                    ));
                }
            }
        }
        if parts.is_empty() && !allow_root {
            return Err(format!("path `{s}` names ${{WORK}} itself"));
        }
        Ok(RelPath {
            text: s.to_string(),
            parts,
        })
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WriteContent {
    Bytes(Vec<u8>),
    Repeat { text: String, count: u64 },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SetupAction {
    Mkdir(RelPath),
    Write {
        path: RelPath,
        content: WriteContent,
    },
    Sparse {
        path: RelPath,
        size: u64,
    },
    Symlink {
        path: RelPath,
        target: String,
    },
    Fifo(RelPath),
    Chmod {
        path: RelPath,
        mode: u32,
    },
    Remove(RelPath),
    RawName {
        dir: RelPath,
        name: Vec<u8>,
        text: String,
    },
    RawDir {
        dir: RelPath,
        name: Vec<u8>,
        file: String,
        text: String,
    },
    /// N files `f000000`… in a directory, each holding the text, or
    /// each sparse of a size (`"size"` instead of `"text"`).
    Files {
        dir: RelPath,
        count: u64,
        content: FileContent,
    },
    /// N skill directories `s000000`… each holding a SKILL.md (`{name}`
    /// in the text becomes the directory's name).
    Skills {
        dir: RelPath,
        count: u64,
        text: String,
    },
}

/// What each file of a `files` action holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileContent {
    Text(String),
    /// That many bytes and no data blocks, as `sparse`.
    Sparse(u64),
}

impl SetupAction {
    /// A short description for error messages.
    pub fn describe(&self) -> String {
        match self {
            SetupAction::Mkdir(p) => format!("mkdir {}", p.text),
            SetupAction::Write { path, .. } => format!("write {}", path.text),
            SetupAction::Sparse { path, size } => format!("sparse {} ({size} bytes)", path.text),
            SetupAction::Symlink { path, target } => format!("symlink {} -> {target}", path.text),
            SetupAction::Fifo(p) => format!("fifo {}", p.text),
            SetupAction::Chmod { path, mode } => format!("chmod {:03o} {}", mode, path.text),
            SetupAction::Remove(p) => format!("remove {}", p.text),
            SetupAction::RawName { dir, name, .. } => {
                format!("rawname {}/<hex {}>", dir.text, hex_encode(name))
            }
            SetupAction::RawDir {
                dir, name, file, ..
            } => {
                format!("rawdir {}/<hex {}>/{file}", dir.text, hex_encode(name))
            }
            SetupAction::Files { dir, count, .. } => format!("files {} ({count})", dir.text),
            SetupAction::Skills { dir, count, .. } => format!("skills {} ({count})", dir.text),
        }
    }
}

impl<'de> Deserialize<'de> for SetupAction {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let obj = Map::<String, Value>::deserialize(d)?;
        from_entry(obj).map_err(serde::de::Error::custom)
    }
}

/// The action an entry names by its one kind key, read as that kind.
fn from_entry(obj: Map<String, Value>) -> Result<SetupAction, String> {
    const KINDS: [&str; 11] = [
        "mkdir", "write", "sparse", "symlink", "fifo", "chmod", "remove", "rawname", "rawdir",
        "files", "skills",
    ];
    Ok(match one_kind(&obj, &KINDS, "setup action")? {
        "mkdir" => SetupAction::Mkdir(read_entry::<Mkdir>(obj)?.mkdir.0),
        "write" => read_entry::<Write>(obj)?.action()?,
        "sparse" => {
            let e: Sparse = read_entry(obj)?;
            SetupAction::Sparse {
                path: e.sparse.0,
                size: e.size,
            }
        }
        "symlink" => {
            let e: Symlink = read_entry(obj)?;
            SetupAction::Symlink {
                path: e.symlink.0,
                target: e.target.0,
            }
        }
        "fifo" => SetupAction::Fifo(read_entry::<Fifo>(obj)?.fifo.0),
        "chmod" => {
            let e: Chmod = read_entry(obj)?;
            SetupAction::Chmod {
                path: e.chmod.0,
                mode: e.mode.0,
            }
        }
        "remove" => SetupAction::Remove(read_entry::<Remove>(obj)?.remove.0),
        "rawname" => {
            let e: RawNameEntry = read_entry(obj)?;
            SetupAction::RawName {
                dir: e.rawname.0,
                name: e.hex.0,
                text: e.text,
            }
        }
        "rawdir" => {
            let e: RawDirEntry = read_entry(obj)?;
            SetupAction::RawDir {
                dir: e.rawdir.0,
                name: e.hex.0,
                file: e.file.0,
                text: e.text,
            }
        }
        "files" => {
            let e: Files = read_entry(obj)?;
            let content = match (e.text, e.size) {
                (Some(text), None) => FileContent::Text(text),
                (None, Some(size)) => FileContent::Sparse(size),
                _ => {
                    return Err(
                        "a `files` action takes one of \"text\" (each file's text) or \"size\" (each file sparse, that long)"
                            .into(),
                    );
                }
            };
            SetupAction::Files {
                dir: e.files.0,
                count: e.count.0,
                content,
            }
        }
        _ => {
            let e: Skills = read_entry(obj)?;
            SetupAction::Skills {
                dir: e.skills.0,
                count: e.count.0,
                text: e.text,
            }
        }
    })
}

/// A path below `${WORK}`, never `${WORK}` itself.
#[derive(Deserialize)]
#[serde(try_from = "String")]
struct Below(RelPath);

impl TryFrom<String> for Below {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        RelPath::parse(&s, false).map(Below)
    }
}

/// A directory under `${WORK}`, which may be `${WORK}` itself.
#[derive(Deserialize)]
#[serde(try_from = "String")]
struct Dir(RelPath);

impl TryFrom<String> for Dir {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        RelPath::parse(&s, true).map(Dir)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Mkdir {
    mkdir: Below,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Write {
    write: Below,
    #[serde(default, deserialize_with = "super::entry::present")]
    text: Option<String>,
    #[serde(default, deserialize_with = "super::entry::present")]
    base64: Option<String>,
    #[serde(default, deserialize_with = "super::entry::present")]
    repeat: Option<String>,
    #[serde(default, deserialize_with = "super::entry::present")]
    count: Option<u64>,
}

impl Write {
    /// Exactly one form of content: `text`, `base64`, or `repeat` with its `count`.
    fn action(self) -> Result<SetupAction, String> {
        let content = match (self.text, self.base64, self.repeat) {
            (Some(_), Some(_), _) => return Err(both("text", "base64")),
            (Some(_), None, Some(_)) => return Err(both("text", "repeat")),
            (None, Some(_), Some(_)) => return Err(both("base64", "repeat")),
            (Some(text), None, None) => {
                no_count(self.count, "text")?;
                WriteContent::Bytes(text.into_bytes())
            }
            (None, Some(b), None) => {
                no_count(self.count, "base64")?;
                WriteContent::Bytes(base64_decode(&b).map_err(|e| format!("write: base64: {e}"))?)
            }
            (None, None, Some(text)) => {
                let count = self.count.ok_or("write with repeat: `count` is missing")?;
                let total = (text.len() as u64).saturating_mul(count);
                if total > MAX_REPEAT_BYTES {
                    return Err(format!(
                        "write: repeat × count is {total} bytes, more than the {MAX_REPEAT_BYTES} allowed"
                    ));
                }
                WriteContent::Repeat { text, count }
            }
            (None, None, None) => {
                return Err("write needs one of `text`, `base64` or `repeat` (+ `count`)".into());
            }
        };
        Ok(SetupAction::Write {
            path: self.write.0,
            content,
        })
    }
}

fn both(a: &str, b: &str) -> String {
    format!("write has both `{a}` and `{b}`; give one")
}

fn no_count(count: Option<u64>, form: &str) -> Result<(), String> {
    match count {
        Some(_) => Err(format!("write: `count` goes with `repeat`, not `{form}`")),
        None => Ok(()),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Sparse {
    sparse: Below,
    size: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Symlink {
    symlink: Below,
    target: Target,
}

/// A symlink's target: written as given, so only emptiness and NUL are refused.
#[derive(Deserialize)]
#[serde(try_from = "String")]
struct Target(String);

impl TryFrom<String> for Target {
    type Error = &'static str;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        if s.is_empty() || s.contains('\0') {
            return Err("must be a non-empty string without NUL");
        }
        Ok(Target(s))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Fifo {
    fifo: Below,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Chmod {
    chmod: Below,
    mode: Octal,
}

/// A mode as an octal string ("000", "0755"): written as `ls` shows it.
#[derive(Deserialize)]
#[serde(try_from = "String")]
struct Octal(u32);

impl TryFrom<String> for Octal {
    type Error = String;
    fn try_from(m: String) -> Result<Self, String> {
        let ok = !m.is_empty() && m.len() <= 4 && m.bytes().all(|b| (b'0'..=b'7').contains(&b));
        ok.then(|| u32::from_str_radix(&m, 8).ok())
            .flatten()
            .map(Octal)
            .ok_or_else(|| format!("`{m}` is not an octal string like \"000\" or \"0755\""))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Remove {
    remove: Below,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNameEntry {
    rawname: Dir,
    hex: RawBytes,
    text: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDirEntry {
    rawdir: Dir,
    hex: RawBytes,
    file: FileName,
    text: String,
}

/// A name of raw bytes (given in hex): one path segment, perhaps not UTF-8.
#[derive(Deserialize)]
#[serde(try_from = "String")]
struct RawBytes(Vec<u8>);

impl TryFrom<String> for RawBytes {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        let name = hex_decode(&s)?;
        if name.is_empty()
            || name.contains(&b'/')
            || name.contains(&0)
            || name == b"."
            || name == b".."
        {
            return Err(
                "the name (hex) must be non-empty, not `.` or `..`, and hold no `/` or NUL byte"
                    .into(),
            );
        }
        Ok(RawBytes(name))
    }
}

/// A plain file name: one segment, not `.` or `..`.
#[derive(Deserialize)]
#[serde(try_from = "String")]
struct FileName(String);

impl TryFrom<String> for FileName {
    type Error = String;
    fn try_from(file: String) -> Result<Self, String> {
        if file.is_empty()
            || file.contains('/')
            || file.contains('\0')
            || file == "."
            || file == ".."
        {
            return Err(format!("`{file}` is not a plain file name"));
        }
        Ok(FileName(file))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Files {
    files: Dir,
    count: Count,
    text: Option<String>,
    size: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Skills {
    skills: Dir,
    count: Count,
    text: String,
}

/// How many files or skills one action makes: at most [`MAX_FILES`].
#[derive(Deserialize)]
#[serde(try_from = "u64")]
struct Count(u64);

impl TryFrom<u64> for Count {
    type Error = String;
    fn try_from(count: u64) -> Result<Self, String> {
        if count > MAX_FILES {
            return Err(format!("{count} is more than {MAX_FILES}"));
        }
        Ok(Count(count))
    }
}

/// `write`'s base64: the standard alphabet, padding optional and stray
/// low bits accepted, as the suite has always read it.
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

/// Decodes standard base64 (RFC 4648 alphabet; padding optional).
pub fn base64_decode(s: &str) -> Result<Vec<u8>, String> {
    BASE64.decode(s).map_err(|e| match e {
        DecodeError::InvalidByte(at, b'=') => format!("`=` padding inside the data (offset {at})"),
        DecodeError::InvalidByte(at, b) => {
            format!("invalid character {:?} at offset {at}", b as char)
        }
        DecodeError::InvalidLength(n) => format!("length {n} is not a valid base64 length"),
        DecodeError::InvalidLastSymbol(at, b) => {
            format!("invalid last character {:?} at offset {at}", b as char)
        }
        DecodeError::InvalidPadding => "invalid `=` padding".to_string(),
    })
}

/// Decodes a hex string (either case, even length).
pub fn hex_decode(s: &str) -> Result<Vec<u8>, String> {
    hex::decode(s).map_err(|e| match e {
        hex::FromHexError::OddLength => format!("`{s}` has an odd number of digits"),
        _ => format!("`{s}` is not hex"),
    })
}

pub fn hex_encode(b: &[u8]) -> String {
    hex::encode(b)
}
