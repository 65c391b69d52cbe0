//! The `skill-mcp` binary: with no arguments it serves over stdio, so an
//! MCP client's configuration stays just `skill-mcp`; `skill-mcp check`
//! shows an author what that server would see (spec CHECK-*).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, CommandFactory, Parser, Subcommand};
use skill_mcp::check;
use skill_mcp::config::{self, Config};
use skill_mcp::offer::Offer;
use skill_mcp::settings::Settings;
use skill_mcp::{http, reload, stdio};

/// Serves a directory of Agent Skills over MCP (stdio, or HTTP with --http).
///
/// Roots come from MCP_SKILLS_PATH, else SKILLS_DIR (both ":"-separated),
/// else the bundled skills/ directory. MCP_SKILL_RUN narrows what may run.
/// With no command, serves.
#[derive(Parser)]
#[command(name = "skill-mcp", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Serving with no command takes the serve command's options, so a
    /// client's configuration can stay `skill-mcp --watch`. Not global:
    /// `check` reads once and has nothing to watch (issue 30 §4).
    #[command(flatten)]
    serve: ServeArgs,
}

#[derive(Args)]
struct ServeArgs {
    /// Watch the roots and rescan when they change, notifying the client
    /// (also SKILL_MCP_WATCH=1). Refused when a host started the server.
    #[arg(long)]
    watch: bool,
    /// Serve Streamable HTTP at http://ADDR/mcp instead of stdio: IP:PORT,
    /// or a bare port on 127.0.0.1 (port 0 picks a free one; the address is
    /// printed on stderr). Any non-loopback address needs a token.
    #[arg(long, value_name = "ADDR", value_parser = skill_mcp::http::parse_addr)]
    http: Option<std::net::SocketAddr>,
    /// Require this bearer token (the file's first line) of every HTTP
    /// request; SKILL_MCP_HTTP_TOKEN gives one too.
    #[arg(long, value_name = "PATH", requires = "http")]
    http_token_file: Option<PathBuf>,
    /// Another host name or IP address HTTP clients may reach the server
    /// by (Host and Origin headers); loopback names always pass, and the
    /// bound address unless it is a wildcard such as 0.0.0.0.
    #[arg(long, value_name = "NAME", requires = "http", value_parser = skill_mcp::http::parse_host)]
    http_allow_host: Vec<String>,
    /// A browser origin (scheme://host[:port]) whose pages may call the
    /// server: its requests pass the Origin check and get CORS answers.
    #[arg(long, value_name = "ORIGIN", requires = "http", value_parser = skill_mcp::http::parse_origin)]
    http_allow_origin: Vec<String>,
    /// Offer skill_run over HTTP (off by default: anyone who can reach the
    /// URL could run scripts).
    #[arg(long, requires = "http")]
    http_allow_run: bool,
    /// Never ask the user to approve a run through MCP elicitation, even
    /// when the client can be asked: for hosts whose own permission prompt
    /// already shows the call (stdio only; confirm: true still gates).
    #[arg(long, conflicts_with = "http")]
    no_elicit: bool,
}

impl ServeArgs {
    /// The top-level options with the `serve` command's laid over them.
    fn or(self, top: ServeArgs) -> ServeArgs {
        let mut allow_host = top.http_allow_host;
        allow_host.extend(self.http_allow_host);
        let mut allow_origin = top.http_allow_origin;
        allow_origin.extend(self.http_allow_origin);
        ServeArgs {
            watch: self.watch || top.watch,
            http: self.http.or(top.http),
            http_token_file: self.http_token_file.or(top.http_token_file),
            http_allow_host: allow_host,
            http_allow_origin: allow_origin,
            http_allow_run: self.http_allow_run || top.http_allow_run,
            no_elicit: self.no_elicit || top.no_elicit,
        }
    }

    fn given(&self) -> bool {
        self.watch
            || self.http.is_some()
            || self.http_token_file.is_some()
            || !self.http_allow_host.is_empty()
            || !self.http_allow_origin.is_empty()
            || self.http_allow_run
            || self.no_elicit
    }
}

#[derive(Subcommand)]
enum Command {
    /// Serve over stdio (what `skill-mcp` with no command does).
    Serve(ServeArgs),
    /// See what the server would see: the skills it would serve, which
    /// scripts may run, and every problem with its location.
    #[command(
        after_help = "Exit status: 0 when the server reports no error: nothing refused, and nothing \
in a served skill read and ignored (warnings — an unknown frontmatter key, a timeout clamped to \
300 s, the Agent Skills advice — fail it only with --strict); 1 when it reports one, whether it \
refused a skill or something in a skill it still serves, or when MCP_SKILL_RUN cannot be read; \
2 on a usage error."
    )]
    Check(CheckArgs),
}

#[derive(Args)]
struct CheckArgs {
    /// Roots to check, each read as SKILLS_DIR would read it [default: the
    /// roots the server would use]
    #[arg(value_name = "DIR")]
    dirs: Vec<PathBuf>,
    /// How to print the report
    #[arg(long, value_enum, default_value_t = check::Format::Text)]
    format: check::Format,
    /// Fail on Agent Skills spec warnings too, not only on problems
    #[arg(long)]
    strict: bool,
}

fn main() -> ExitCode {
    fixed_mmap_threshold();
    // Usage errors exit 2, --help and --version 0 (clap's conventions).
    let cli = Cli::try_parse().unwrap_or_else(|e| usage_error(e));
    // The environment is read here, once and first: serving wipes it below
    // (RUN-024), so nothing may read it later; everything downstream gets
    // it from this `Config`, the log filter included.
    let config = Config::from_process(config::default_skills_dir());
    // stdout is the protocol channel; every log line goes to stderr.
    let (filter, refused) = log_filter(config.var("SKILL_MCP_LOG"));
    {
        use tracing_subscriber::layer::SubscriberExt;
        use tracing_subscriber::util::SubscriberInitExt;
        tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_ansi(false)
            .with_env_filter(filter)
            .finish()
            .with(Departed)
            .init();
    }
    if let Some(why) = refused {
        tracing::warn!("{}", skill_mcp::snapshot::one_line(&why));
    }
    match cli.command {
        None => serve_blocking(config, cli.serve),
        Some(Command::Serve(args)) => serve_blocking(config, args.or(cli.serve)),
        // `skill-mcp --watch check`: the flag was given before the command
        // it does not apply to; a usage error, as `check --watch` is.
        Some(Command::Check(_)) if cli.serve.given() => Cli::command()
            .error(
                clap::error::ErrorKind::ArgumentConflict,
                "--watch and --http* apply to serving (`skill-mcp --watch` or `skill-mcp serve --watch`); `check` reads the roots once",
            )
            .exit(),
        // `check` runs no script, so it has nothing to keep from one
        // (spec RUN-024's Decision): it leaves its process as it was.
        Some(Command::Check(args)) => run_check(config, args),
    }
}

/// The serving options: given to `check`, they are a mistake about what
/// `check` is, not a typo.
const SERVING_FLAGS: [&str; 7] = [
    "--watch",
    "--http",
    "--http-token-file",
    "--http-allow-host",
    "--http-allow-origin",
    "--http-allow-run",
    "--no-elicit",
];

/// A usage error answered with its fix (issue 41 §4, CHECK-016), exit 2.
/// clap's own words stay for the rest, but for its tip "to pass '--x' as a
/// value, use '-- --x'", which no command of this one takes.
fn usage_error(e: clap::Error) -> ! {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let given = |k| match e.get(k) {
        Some(ContextValue::String(s)) => s.clone(),
        _ => String::new(),
    };
    let message = match e.kind() {
        ErrorKind::InvalidSubcommand => {
            let word = given(ContextKind::InvalidSubcommand);
            if word.contains('/') || word.starts_with('.') || std::path::Path::new(&word).is_dir() {
                format!(
                    "skill-mcp takes no folder as an argument. To serve {word}, set SKILLS_DIR: \
                     `SKILLS_DIR={word} skill-mcp`; to see what it would serve: `skill-mcp check {word}`"
                )
            } else {
                let like = match e.get(ContextKind::SuggestedSubcommand) {
                    Some(ContextValue::String(s)) => format!(" (did you mean {s}?)"),
                    Some(ContextValue::Strings(s)) if !s.is_empty() => {
                        format!(" (did you mean {}?)", s.join(" or "))
                    }
                    _ => String::new(),
                };
                format!(
                    "'{word}' is not a command of skill-mcp{like}: its commands are serve (the default) and check"
                )
            }
        }
        ErrorKind::UnknownArgument => {
            let arg = given(ContextKind::InvalidArg);
            let flag = arg.split('=').next().unwrap_or_default();
            let in_check = std::env::args().skip(1).any(|a| a == "check");
            if !arg.starts_with('-') {
                // `skill-mcp serve /path/to/skills`: a folder again.
                format!(
                    "skill-mcp serve takes no folder as an argument. To serve {arg}, set SKILLS_DIR: \
                     `SKILLS_DIR={arg} skill-mcp`; to see what it would serve: `skill-mcp check {arg}`"
                )
            } else if in_check && SERVING_FLAGS.contains(&flag) {
                format!(
                    "{flag} applies to serving (`skill-mcp {flag} …` or `skill-mcp serve {flag} …`); `check` \
                     reads the roots once and takes only --format and --strict"
                )
            } else {
                let like = match e.get(ContextKind::SuggestedArg) {
                    Some(ContextValue::String(s)) => format!("; did you mean {s}?"),
                    _ => String::new(),
                };
                format!("unexpected argument '{arg}'{like} (`skill-mcp --help` lists the options)")
            }
        }
        _ => e.exit(),
    };
    Cli::command().error(e.kind(), message).exit()
}

/// The log filter (SRV-010). Unset: `warn`, with rmcp's own warn lines —
/// each one a client's refused request or an answer a departed client did
/// not take — kept to `error`, so stderr holds the owner's problems, not
/// every client's mistakes (the transport logs its refusals at info).
/// A level name or a directive list (`skill_mcp=debug,rmcp=warn`) is taken
/// as written; anything else (`warning`, `verbose`: a bare word reads as a
/// target, and would silence every line) is refused, said, and `warn`
/// holds.
fn log_filter(value: Option<&std::ffi::OsStr>) -> (tracing_subscriber::EnvFilter, Option<String>) {
    const LEVELS: [&str; 6] = ["off", "error", "warn", "info", "debug", "trace"];
    let default = || tracing_subscriber::EnvFilter::new("warn,rmcp=error");
    let Some(raw) = value else {
        return (default(), None);
    };
    let text = raw.to_string_lossy();
    let v = text.trim();
    if v.is_empty() {
        return (default(), None);
    }
    let directive = v.contains('=') || v.contains(',') || v.contains("::");
    let level = LEVELS.contains(&v.to_ascii_lowercase().as_str());
    match tracing_subscriber::EnvFilter::try_new(v) {
        Ok(f) if level || directive => (f, None),
        Ok(_) => (
            default(),
            Some(format!(
                "SKILL_MCP_LOG is {}, which is no level ({}) and no directive like skill_mcp=debug (SRV-010); logging at warn",
                skill_mcp::echo::excerpt(v),
                LEVELS.join(", ")
            )),
        ),
        Err(e) => (
            default(),
            Some(format!(
                "SKILL_MCP_LOG is {}, which is no log filter ({e}) (SRV-010); logging at warn",
                skill_mcp::echo::excerpt(v)
            )),
        ),
    }
}

/// Drops the one line rmcp logs at ERROR when the answer to a request
/// without a session finds its client gone (the channel to its HTTP
/// answer closed): that is how every `subscriptions/listen` ends (HTTP-012),
/// since its client leaving is what ends it, so the line would report each
/// listen's normal end as an error. Any other failure to answer is kept.
struct Departed;

/// rmcp's words for an answer that found its receiver gone: while serving,
/// and while draining a service that ended.
const DEPARTED: [&str; 2] = [
    "fail to response message",
    "failed to send pending response during drain",
];

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Departed {
    fn event_enabled(
        &self,
        event: &tracing::Event<'_>,
        _: tracing_subscriber::layer::Context<'_, S>,
    ) -> bool {
        let meta = event.metadata();
        if meta.target() != "rmcp::service" || *meta.level() != tracing::Level::ERROR {
            return true;
        }
        let mut fields = Fields::default();
        event.record(&mut fields);
        !(DEPARTED.contains(&fields.message.as_str()) && fields.error == "channel closed")
    }
}

/// The `message` and `error` of an event, as written.
#[derive(Default)]
struct Fields {
    message: String,
    error: String,
}

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        match field.name() {
            "message" => self.message = format!("{value:?}"),
            "error" => self.error = format!("{value:?}"),
            _ => {}
        }
    }
}

/// Nothing of the server is reachable from a script (spec RUN-023..RUN-025):
/// done before the async runtime exists, while this is the only thread and
/// nothing holds a pointer into the environment, and before any script can
/// be spawned. A step the kernel refuses is logged, and serving goes on.
fn harden_for_serving() {
    // SAFETY: called from main before the runtime (or any other thread)
    // is started; the environment was read into `Config` as owned copies.
    let report = unsafe { skill_mcp::harden::harden() };
    for failure in report.failures {
        tracing::warn!("{failure}");
    }
}

/// Keeps glibc's malloc from moving its mmap threshold. By default, each
/// large buffer freed raises the threshold to that buffer's size, so the
/// scan's later large buffers (the candidate and step lists, the outcome
/// list that becomes the catalog's) come from the main heap instead of
/// their own mappings; once freed they leave megabytes of holes that the
/// catalog, allocated above them, keeps resident. Pinned at glibc's own
/// default (128 KiB), every large buffer is mapped and unmapped on its own:
/// 2.2 MiB less peak RSS at 10,000 skills (BENCHMARKS.md), no boot cost
/// measured. Other targets keep their allocator's behaviour.
fn fixed_mmap_threshold() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use nix::libc;
        // SAFETY: mallopt only sets an allocator parameter; it is called
        // first thing in main, before any other thread exists, and a
        // refusal (a 0 return) leaves glibc's default behaviour.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
        }
    }
}

/// `skill-mcp check` (spec CHECK-001): the server's own configuration,
/// with the DIR arguments as its roots when given.
fn run_check(config: Config, args: CheckArgs) -> ExitCode {
    let cwd = std::env::current_dir().ok();
    let config = match check::with_dirs(config, &args.dirs, cwd.as_deref()) {
        Ok(c) => c,
        // A usage error, said and exited (status 2) the way clap does.
        Err(e) => Cli::command()
            .error(clap::error::ErrorKind::InvalidValue, e)
            .exit(),
    };
    let stdout = std::io::stdout();
    let options = check::Options {
        format: args.format,
        strict: args.strict,
        color: check::use_color(
            stdout.is_terminal(),
            config.var("NO_COLOR"),
            config.var("TERM"),
        ),
        // Paths are shown as a compiler shows them: relative to where the
        // command was run — its real path (the catalog reports real paths)
        // and as given (roots are reported as configured).
        bases: cwd
            .iter()
            .flat_map(|d| [std::fs::canonicalize(d).ok(), Some(d.clone())])
            .flatten()
            .collect(),
    };
    match check::run(config, &options, &mut stdout.lock()) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("skill-mcp check: {e}");
            ExitCode::from(1)
        }
    }
}

/// Serving (spec SRV-001, HTTP-001): the command line and the environment
/// resolved into settings and an offer, once, then one of the two doors.
fn serve_blocking(mut config: Config, args: ServeArgs) -> ExitCode {
    let http = match args.http {
        None => None,
        Some(addr) => match http_options(addr, &args, &mut config) {
            Ok(options) => Some(options),
            Err(e) => {
                eprintln!("skill-mcp: {e}");
                return ExitCode::from(2);
            }
        },
    };
    harden_for_serving();
    let runtime = match runtime() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("skill-mcp: could not start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(serve(config, args, http))
}

/// The serving runtime. File work (reads, digests, a rescan) runs on the
/// blocking pool. It is bounded by the read caps and page-cache bound, so
/// threads beyond the machine's two cores do not finish it sooner, while
/// each one glibc serves from its own arena keeps what it freed: with
/// tokio's default of up to 512, the benchmark's 10,000-call soak grew
/// 4.83 MiB; with 2, 2.71 MiB (BENCHMARKS.md).
fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(2)
        .enable_all()
        .build()
}

/// Settings, then the offer, then the door the command line picked.
async fn serve(config: Config, args: ServeArgs, http: Option<http::Options>) -> ExitCode {
    // SIGHUP is taken over before the scan, so one sent meanwhile is
    // queued rather than ending the process.
    let hangups = reload::listen_for_hangup();
    let settings = Settings::resolve(&config, args.watch);
    let wait = settings.elicit_timeout();
    let served = match http {
        None => {
            let offer = Offer::stdio(args.no_elicit, wait);
            let (stdin, stdout) = (tokio::io::stdin(), tokio::io::stdout());
            match stdio::serve(settings, offer, config, stdin, stdout, hangups).await {
                // A client that hangs up before initializing is not an
                // error worth a backtrace: said, and left.
                Err(e @ stdio::Failed::NotStarted(_)) => {
                    eprintln!("skill-mcp: {e}");
                    Ok(())
                }
                served => served.map_err(|e| e.to_string()),
            }
        }
        Some(options) => {
            let offer = Offer::http(args.http_allow_run, wait);
            http::serve(settings, offer, config, options, hangups)
                .await
                .map_err(|e| e.to_string())
        }
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("skill-mcp: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `--http`'s options. The token is read before the environment is wiped,
/// and taken out of the configuration so no script can be given it
/// (HTTP-005).
fn http_options(
    addr: std::net::SocketAddr,
    args: &ServeArgs,
    config: &mut Config,
) -> Result<http::Options, String> {
    let var = config
        .env
        .remove(std::ffi::OsStr::new(http::access::TOKEN_VAR));
    let token = http::access::token(args.http_token_file.as_deref(), var.as_deref())?;
    Ok(http::Options {
        addr,
        token,
        allow_hosts: args.http_allow_host.clone(),
        allow_origins: args.http_allow_origin.clone(),
    })
}
