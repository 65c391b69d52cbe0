//! Every bound the server enforces, with its unit in its name and the reason
//! for the number beside it. A hosted child has a hard 256 MiB data limit
//! (README "The tools"), so each cap bounds this process's own allocation,
//! not only the size of an answer.

/// Longest skill name this server can serve, in bytes (spec DISC-009: a
/// skill name is 1–64 of `A-Z a-z 0-9 . _ -`). A name asked for that is
/// longer is refused before any lookup (HARD-005): no skill has it.
pub(crate) const MAX_SKILL_NAME_BYTES: usize = 64;

/// Largest frontmatter block read (README "The `mcp-host:` declaration
/// block": "a 64 KiB cap"). Spec FM-004.
pub(crate) const MAX_FRONTMATTER_BYTES: usize = 64 * 1024;

/// Largest SKILL.md body `skill_load` returns. Past it the body is cut at a
/// character boundary and `truncated: true` says so (spec LOAD-003). Equal to
/// the per-file read cap so the two doors onto SKILL.md agree.
pub(crate) const MAX_BODY_BYTES: usize = MAX_FILE_BYTES;

/// Largest single file `skill_file` serves (README "The tools": "At most
/// 1 MiB, `truncated: true` rather than a silent cut").
pub(crate) const MAX_FILE_BYTES: usize = 1024 * 1024;

/// Most bytes of SKILL.md read: the largest frontmatter, its delimiter
/// lines, and the largest body served (DISC-008, LOAD-003).
pub(crate) const MAX_SKILL_MD_BYTES: usize = MAX_FRONTMATTER_BYTES + 16 + MAX_BODY_BYTES;

/// Longest skill-relative path accepted, in characters (FENCE-*). Real
/// bundles use a few dozen; the bound keeps a hostile name from costing
/// more.
pub const MAX_PATH_CHARS: usize = 1024;

/// Largest file, as the scan sized it, that `resources/read` reads on the
/// async thread instead of the blocking pool. From the page cache 64 KiB is
/// a few microseconds of copying, less than the two thread hops it saves;
/// a file grown since the scan is still read for no more than
/// [`MAX_FILE_BYTES`] (READ-004).
pub(crate) const INLINE_READ_BYTES: u64 = 64 * 1024;

/// Most files one skill's manifest lists. A bundle is content from anyone;
/// 10,000 entries keep a hostile tree to about a MiB of manifest while real
/// skills hold a few dozen. Past it the walk stops and says so (DISC-013).
pub(crate) const MAX_FILES_PER_SKILL: usize = 10_000;

/// Most directories walked inside one skill, for the same reason; with the
/// 1,024-character path rule it also bounds nesting depth (DISC-013).
pub(crate) const MAX_DIRS_PER_SKILL: usize = 10_000;

/// Bytes of a run's output kept per stream (stdout, stderr); past it the
/// stream is drained and dropped, and the answer says it was cut (RUN-010).
pub const MAX_STREAM_BYTES: usize = 1024 * 1024;

/// Default `skill_run` wall-clock timeout (README "The execution fence").
pub(crate) const DEFAULT_TIMEOUT_SECS: u64 = 60;

/// Hard ceiling on any per-script timeout (README: "hard 300 s ceiling").
pub const MAX_TIMEOUT_SECS: u64 = 300;

/// Most paths one `skill_file` call may name (README "The tools": the
/// design of record's batch is "8 paths per call").
pub const MAX_BATCH_PATHS: usize = 8;

/// Most bytes one `skill_file` call may serve, across its entries (README:
/// "4 MiB per call"). Without it the per-file cap is defeated by
/// multiplication: eight 1 MiB files base64 to an ~11 MiB frame.
pub(crate) const MAX_BATCH_BYTES: usize = 4 * MAX_FILE_BYTES;

/// Prompts or resources per `*/list` page, so a catalog of 100,000 files
/// never becomes one giant frame (spec READ-011).
pub(crate) const LIST_PAGE_SIZE: usize = 500;

/// The most characters of JSON any one answer holds (spec LIST-005): a
/// `skill_list` page, a `skill_load` manifest. Claude Code replaces a tool
/// result over 50,000 characters with a short preview, and other hosts
/// truncate; 40,000 leaves room for the rest of the reply. Counted in
/// bytes, which are never fewer than characters. Hosts with other budgets
/// set [`ANSWER_BUDGET_VAR`].
pub const ANSWER_BUDGET_CHARS: usize = 40_000;

/// Overrides [`ANSWER_BUDGET_CHARS`]: a whole number from
/// [`MIN_ANSWER_BUDGET_CHARS`] to [`MAX_ANSWER_BUDGET_CHARS`].
pub(crate) const ANSWER_BUDGET_VAR: &str = "SKILL_MCP_ANSWER_BUDGET";

/// A budget below this could not hold one ordinary skill entry.
pub const MIN_ANSWER_BUDGET_CHARS: usize = 2_000;

/// A budget above this is no budget: 16 MiB, a frame the transport takes.
pub const MAX_ANSWER_BUDGET_CHARS: usize = 16 * 1024 * 1024;

/// The longest `skill_list` query (LIST-006): a few words, not a document;
/// longer is refused before any matching.
pub(crate) const MAX_QUERY_BYTES: usize = 1024;

/// How much of each SKILL.md body `query` reads (LIST-010): the opening of
/// a body says what the skill is for; the rest is steps and reference,
/// which would outweigh the description and cost memory at 10,000 skills.
pub(crate) const SEARCH_BODY_BYTES: usize = 4 * 1024;

/// The largest file of an embedding model read (LIST-017): a static
/// embedding of 32,000 tokens × 256 dimensions is 16 MiB in f16 and the
/// largest model2vec models a few hundred; a file past this is not one.
pub(crate) const MAX_MODEL_FILE_BYTES: u64 = 1024 * 1024 * 1024;

/// Where the owner keeps a model2vec model for ranking `query` by meaning
/// (LIST-017); unset, `query` ranks by words alone.
pub(crate) const EMBEDDINGS_VAR: &str = "SKILL_MCP_EMBEDDINGS";

/// The most characters the `initialize` instructions spend listing the
/// catalog (spec LIST-014): every skill as `name: first sentence`, so a
/// model knows what is served before its first call, as native skills do;
/// a larger catalog is only counted, and the model told to search.
pub const INSTRUCTIONS_INDEX_CHARS: usize = 8_000;

/// Overrides [`INSTRUCTIONS_INDEX_CHARS`]: a whole number from 0 (list no
/// skill, only count them) to [`MAX_INSTRUCTIONS_INDEX_CHARS`].
pub(crate) const INSTRUCTIONS_INDEX_VAR: &str = "SKILL_MCP_INSTRUCTIONS_CHARS";

/// The most an owner may let the instructions spend on the catalog: past
/// this a listing costs a model's context more than a query would.
pub const MAX_INSTRUCTIONS_INDEX_CHARS: usize = 200_000;

/// The most themes the instructions name for a catalog too large to list
/// (LIST-014), and how many skills a word of their names must be shared by
/// to be one.
pub(crate) const MAX_THEMES: usize = 12;
pub(crate) const MIN_THEME_SKILLS: usize = 3;

/// Most unreadable roots the `initialize` instructions name (spec
/// LIST-016): enough for a mistyped root or two to be told to the user;
/// a longer `MCP_SKILLS_PATH` that fails whole is counted past these.
pub(crate) const INSTRUCTIONS_UNREADABLE_ROOTS: usize = 3;

/// Most `problems` entries one scan logs to stderr, one line each (spec
/// SRV-010); past it one more line counts the rest. A person reads the
/// first fifty; a tree of 10,000 broken skills must not bury the log.
pub(crate) const MAX_LOGGED_PROBLEMS: usize = 50;

/// Most characters of one such line: a path and its detail fit, while a
/// 60 KiB key name quoted in a detail does not make one line a screenful.
pub(crate) const MAX_LOGGED_LINE_CHARS: usize = 1_000;

/// Skills on a page of a `query` answer unless `limit` says otherwise
/// (LIST-011): a model reads the first few; more only cost its context.
pub(crate) const QUERY_PAGE_SKILLS: u32 = 10;

/// Most skills on one `skills/list` page (spec SKX-008); a page also
/// stops where its next entry would take it past the answer budget
/// (SKX-015), so this only bounds how many entries one page builds.
pub(crate) const SKILLS_PAGE_SIZE: usize = 100;

/// Most resources SEP-2640 says a skill served with a manifest should
/// list (its "SHOULD NOT serve a skill over 512 resources"). A skill with
/// more is served with `resources: "dynamic"` (spec SKX-013).
pub(crate) const SKX_MAX_RESOURCES: usize = 512;

/// Most bytes, all its files together, of a skill served with a manifest:
/// SEP-2640's 16 MiB. It is also the per-skill cap on hashing: no request
/// hashes more than this for one skill, so a 64 GiB file costs nothing
/// (spec SKX-012, SKX-013).
pub(crate) const SKX_MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;

/// Threads of the digest pool (spec SKX-012): hashing runs there, never
/// on the two blocking threads every read shares, so a skill being
/// hashed delays only other digests. Two, for the two cores the server
/// is sized for; a request hashes at most [`SKX_MAX_SKILL_BYTES`].
pub(crate) const DIGEST_THREADS: usize = 2;

/// Most files a `skills/list` page whose digests and frontmatter are all
/// kept may `stat` on the async thread that received it (SKX-012): about a
/// millisecond of kernel time. A page past it goes to the digest pool.
pub(crate) const KEPT_INLINE_STATS: usize = 4_096;

/// A digest is trusted without hashing again only when its file's mtime
/// and ctime are at least this much older than the moment hashing began:
/// a file rewritten within one timestamp tick of its hashing (coarse
/// clocks, or a file system with 2 s times) would otherwise keep its
/// stamp with new bytes. Such a digest is served but re-hashed on next
/// use (spec SKX-014; git's "racily clean" rule).
pub(crate) const DIGEST_SETTLE_SECS: u64 = 2;

/// Deepest nesting of arrays and objects a client message may have
/// (WIRE-009), counted on its bytes before anything is decoded: MCP's
/// messages nest a few levels (params, arguments, `_meta`), and every
/// decoder builds a tree as deep.
pub(crate) const MAX_MESSAGE_DEPTH: usize = 32;

/// Most JSON values a client message may hold (WIRE-009), counted on its
/// bytes as containers and separators before anything is decoded: a tree
/// node costs tens of bytes, so a 4 MiB body of two million zeros cost
/// 403 MB; every tool's arguments are a few dozen values (64 run arguments
/// at most), and 10,000 leaves room for any client's `_meta`.
pub(crate) const MAX_MESSAGE_VALUES: usize = 10_000;

/// Largest `initialize` or `subscriptions/listen` (WIRE-010): each is
/// kept for as long as its session or stream lasts, and neither needs more
/// than a client's name and capabilities.
pub(crate) const MAX_LASTING_MESSAGE_BYTES: usize = 64 * 1024;

/// Largest `tools/call` of `skill_run` (WIRE-010), kept while a person is
/// asked to approve it: its arguments are at most 64 of 8 KiB (RUN-0xx's
/// `MAX_RUN_ARGS`, `MAX_RUN_ARG_BYTES`), and room for its `_meta` beside them.
pub(crate) const MAX_RUN_MESSAGE_BYTES: usize = 1024 * 1024;

/// Most confirmed runs waiting at once for a person's approval (RUN-028):
/// runs are one at a time once approved (RUN-011), and each waiting call
/// is a request in flight, so 128 of them held every HTTP slot for the
/// two minutes a prompt may wait. Past it a confirmed call is refused at
/// once, nothing started.
pub(crate) const MAX_PENDING_APPROVALS: usize = 8;

/// Largest HTTP request body read (spec HTTP-006): every tool argument is
/// capped far below it (64 run arguments of 8 KiB, 8 paths, a 1 KiB
/// query), and with [`MAX_HTTP_IN_FLIGHT`] bodies held at once it bounds
/// what bodies can cost (512 MiB at worst). rmcp's own default, too.
pub(crate) const MAX_HTTP_BODY_BYTES: usize = 4 * 1024 * 1024;

/// Bytes of request bodies being read at once, across every client (spec
/// HTTP-007). A body's bytes are counted as they arrive, so a client that
/// sends a head and one chunk and then stalls holds only that chunk, and
/// [`MAX_HTTP_CONNECTIONS`] bodies of [`MAX_HTTP_BODY_BYTES`] (8 GiB) can
/// never be held at once: past this a body waits
/// [`HTTP_BUDGET_WAIT_SECS`] for room, then is 503.
pub(crate) const MAX_HTTP_BODIES_BYTES: usize = 64 * 1024 * 1024;

/// Requests in flight over HTTP across every client (spec HTTP-007): read
/// whole and being answered, until the last byte of the answer is handed
/// to its connection. One session holds at most the stdio transport's 64
/// of them. A body still arriving holds none, and neither does an answer
/// waiting for its client to read it ([`MAX_HTTP_ANSWER_BYTES`] bounds
/// those).
pub(crate) const MAX_HTTP_IN_FLIGHT: usize = 128;

/// Bytes of answers built and not yet taken by their clients (spec
/// HTTP-015): a 4-file `skill_file` batch answers about 11 MiB, and a
/// client that never reads it must not make the server hold one for each
/// such client. Reserved before an answer is built, from an upper
/// estimate of its size; the size built replaces the estimate; released
/// as the connection's writes are flushed. Past it a request waits
/// [`HTTP_BUDGET_WAIT_SECS`] for room, then is 503 with `Retry-After`.
pub(crate) const MAX_HTTP_ANSWER_BYTES: usize = 128 * 1024 * 1024;

/// How long a request waits for room in a byte budget
/// ([`MAX_HTTP_BODIES_BYTES`], [`MAX_HTTP_ANSWER_BYTES`]) before it is
/// refused with 503: room comes back as other clients take their answers
/// or within [`HTTP_WRITE_TIMEOUT_SECS`] of the last byte they read.
pub(crate) const HTTP_BUDGET_WAIT_SECS: u64 = 5;

/// Streams held open at once over HTTP (spec HTTP-008, HTTP-012): a
/// session's GET stream and every `subscriptions/listen`. They last as
/// long as their clients listen, so they count toward neither
/// [`MAX_HTTP_IN_FLIGHT`] nor a connection that can be closed for a new
/// one; this cap keeps them, with the requests in flight, well under
/// [`MAX_HTTP_CONNECTIONS`], so a fresh client always finds a connection.
pub(crate) const MAX_HTTP_STREAMS: usize = 1_024;

/// How long an HTTP/2 client's first HEADERS frame is waited for, to
/// reset its stream with `HTTP_1_1_REQUIRED` (HTTP-019): a real client
/// sends it with its preface.
pub(crate) const HTTP2_HEADERS_WAIT_SECS: u64 = 2;

/// Most bytes of an HTTP/2 client's frames read while waiting for its
/// first HEADERS (HTTP-019): what a client sends before it is bounded by
/// the client, not by this server.
pub(crate) const MAX_HTTP2_FRAMES_BYTES: usize = 64 * 1024;

/// Open HTTP sessions at once (spec HTTP-008): an `initialize` past it is
/// refused, so a flood of them costs a bounded amount of memory.
pub(crate) const MAX_HTTP_SESSIONS: usize = 1_024;

/// A session no request has touched for this long is closed (HTTP-008).
pub(crate) const HTTP_SESSION_IDLE_SECS: usize = 300;

/// The variable that sets another idle time than
/// [`HTTP_SESSION_IDLE_SECS`] (HTTP-008): a team whose clients sit quiet
/// for long may keep their sessions longer, and a test need not wait 300 s.
pub(crate) const HTTP_SESSION_IDLE_VAR: &str = "SKILL_MCP_HTTP_SESSION_IDLE_SECS";

/// The longest idle time [`HTTP_SESSION_IDLE_VAR`] may set: a day. Past
/// it sessions nobody ends would hold their slots (of 1,024) for good.
pub(crate) const MAX_HTTP_SESSION_IDLE_SECS: usize = 86_400;

/// Open HTTP connections at once (HTTP-008). A new connection past it
/// closes one that holds nothing a client waits on — idle between
/// requests, never started, still sending its head or its body, or
/// holding an answer its client does not read — the longest quiet first;
/// requests in flight and streams are never closed for it, and at most
/// [`MAX_HTTP_IN_FLIGHT`] + [`MAX_HTTP_STREAMS`] of them exist, so there
/// is always one to close.
pub(crate) const MAX_HTTP_CONNECTIONS: usize = 2_048;

/// How long a client may take to send a request's headers, and then its
/// body (HTTP-008): a client that trickles bytes holds no slot for longer.
pub(crate) const HTTP_READ_TIMEOUT_SECS: u64 = 30;

/// How long an answer may wait for a client that reads none of it
/// (HTTP-008): past it the connection is closed, so an answer nobody reads
/// does not hold its memory for as long as the client keeps the socket.
pub(crate) const HTTP_WRITE_TIMEOUT_SECS: u64 = 30;

/// Largest buffer a connection reads into (HTTP-006), which bounds a
/// request's headers: past it hyper answers 431.
pub(crate) const MAX_HTTP_HEAD_BYTES: usize = 64 * 1024;

/// Shortest bearer token accepted (HTTP-005): 16 bytes of a random token
/// is past guessing; a shorter one is a password.
pub(crate) const MIN_HTTP_TOKEN_BYTES: usize = 16;

/// Longest bearer token accepted (HTTP-005): `openssl rand -hex 32` makes
/// 64 bytes; a first line of 8 MiB is no token a client could send.
pub(crate) const MAX_HTTP_TOKEN_BYTES: usize = 1_024;

/// Most bytes read of a token file (HTTP-005): its first line and what an
/// editor adds after it. The file is opened non-blocking and must be a
/// regular file, so a FIFO cannot hang the start and `/dev/zero` is not
/// read until memory runs out.
pub(crate) const MAX_HTTP_TOKEN_FILE_BYTES: u64 = 4 * 1024;

/// How long a confirmed `skill_run` waits for the human's answer to its
/// elicitation (RUN-028): long enough to read a plan and decide, short
/// enough that an unanswered prompt does not hold the call for ever. Past
/// it nothing runs and the call says so.
pub(crate) const ELICIT_TIMEOUT_SECS: usize = 120;

/// The variable that sets another wait than [`ELICIT_TIMEOUT_SECS`]
/// (RUN-028): a team's host may give people longer to look.
pub(crate) const ELICIT_TIMEOUT_VAR: &str = "SKILL_MCP_ELICIT_TIMEOUT_SECS";

/// The longest wait [`ELICIT_TIMEOUT_VAR`] may set: an hour. Past it a
/// prompt nobody answers holds the call, and its run lock, for good.
pub(crate) const MAX_ELICIT_TIMEOUT_SECS: usize = 3600;

// What the Agent Skills spec asks of an author: `skill-mcp check` warns
// past these (CHECK-*); serving does not refuse on them.

/// Agent Skills: `name` is at most 64 characters.
pub(crate) const MAX_NAME_CHARS: usize = 64;
/// Agent Skills: `description` is 1–1024 characters.
pub(crate) const MAX_DESCRIPTION_CHARS: usize = 1024;
/// Agent Skills: `compatibility` is 1–500 characters when present.
pub(crate) const MAX_COMPATIBILITY_CHARS: usize = 500;
/// Agent Skills: "Keep your main SKILL.md under 500 lines".
pub(crate) const MAX_BODY_LINES: usize = 500;

// How much work reading and explaining one frontmatter, and one run's
// arguments, may cost.

/// Deepest frontmatter the fast reader (`frontmatter::simple`) takes;
/// deeper documents go to saphyr, where [`MAX_FRONTMATTER_NESTING`]
/// speaks (FM-002).
pub(crate) const MAX_FAST_YAML_DEPTH: usize = 16;

/// Longest key the fast reader takes (YAML caps implicit keys at 1,024
/// characters; keys here stay far below); a longer one goes to saphyr.
pub(crate) const MAX_FAST_YAML_KEY_BYTES: usize = 200;

/// Longest suggested frontmatter line written out whole in a fix; past
/// it, the fix is said in words (a description may be 1,024 characters,
/// and the check shows the line itself anyway).
pub(crate) const MAX_SUGGESTED_LINE_CHARS: usize = 160;

/// Most edits tried on one refused frontmatter to find its fix: each is a
/// parse of up to 64 KiB, and a tree of 10,000 broken skills is explained
/// at boot, so a refusal costs a few parses of its own text, never more.
pub(crate) const MAX_FIX_TRIALS: u32 = 8;

/// Deepest nesting of collections accepted. Frontmatter is a few levels
/// deep; the bound keeps a `[[[[…` block from costing recursion.
pub(crate) const MAX_FRONTMATTER_NESTING: usize = 32;

/// Most arguments one run takes (RUN-*).
pub(crate) const MAX_RUN_ARGS: usize = 64;
/// Most bytes of arguments one run takes, in all: pass a path, not a
/// payload.
pub(crate) const MAX_RUN_ARG_BYTES: usize = 8 * 1024;

// The stdio transport's bounds (WIRE-*), which the HTTP door applies too.

/// Longest line accepted from the client: 16 MiB holds any legitimate
/// request (tool arguments are capped far below it) and bounds what one
/// line can cost (WIRE-009).
pub(crate) const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// Most requests in flight at once on a connection (a session, over
/// HTTP): past it the transport stops reading until an answer is written,
/// so a client that never reads costs bounded memory (WIRE-004).
pub(crate) const MAX_IN_FLIGHT: usize = 64;

/// Longest id a request may carry, as its JSON text: an excerpt's 200
/// bytes (`echo::EXCERPT_BYTES`). Every answer carries its request's id
/// whole (JSON-RPC), so an id is taken only when it is no longer than an
/// excerpt (HARD-005); real clients send numbers or UUIDs.
pub(crate) const MAX_ID_BYTES: usize = 200;

/// Longest method handed to rmcp, whose "method not found" quotes the
/// method whole: an excerpt's 200 bytes. Every MCP method is a few dozen.
pub(crate) const MAX_METHOD_BYTES: usize = 200;

/// Longest `skills/get` URI handed to rmcp: the SKILL.md URI of a skill
/// with the longest name this server can serve (`skill://`, the name,
/// `/SKILL.md`). rmcp refuses a URI that does not end in `/SKILL.md`
/// before the handler sees it, quoting it whole.
pub(crate) const MAX_SKILL_URI_BYTES: usize =
    "skill://".len() + MAX_SKILL_NAME_BYTES + "/SKILL.md".len();
