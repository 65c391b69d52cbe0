//! The command line: which phases run, on which tree sizes, and how many
//! samples each takes (`--quick` trades samples for time). Kept apart so
//! the flags, their defaults and the `--help` text are in one place.

pub struct Settings {
    pub quick: bool,
    /// Regenerate the trees even when complete ones are kept.
    pub fresh: bool,
    pub sizes: Vec<usize>,
    /// Fresh servers booted per tree size (boot, first skill_list, VmHWM).
    pub boots: usize,
    /// Samples of each round trip.
    pub trips: usize,
    /// Full walks of resources/list.
    pub walks: usize,
    /// Pairs of (bare node, skill_run).
    pub run_pairs: usize,
    /// Calls in the memory-flatness run.
    pub mixed_calls: usize,
    /// Which phases run: boot, trips, run, mixed, rescan, skills-ext, search, http, http-peer,
    /// door (all by default).
    pub only: Vec<String>,
}

const PHASES: &[&str] = &[
    "boot",
    "trips",
    "run",
    "mixed",
    "rescan",
    "skills-ext",
    "search",
    "http",
    "http-peer",
    "door",
];

impl Settings {
    pub fn runs(&self, phase: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|p| p == phase)
    }
}

impl Settings {
    pub fn from_args() -> Settings {
        let mut quick = false;
        let mut fresh = false;
        let mut sizes = None;
        let mut only = Vec::new();
        let mut args = std::env::args().skip(1);
        while let Some(a) = args.next() {
            match a.as_str() {
                "--quick" => quick = true,
                "--fresh" => fresh = true,
                "--sizes" => {
                    let v = args.next().unwrap_or_default();
                    let parsed: Result<Vec<usize>, _> = v
                        .split(',')
                        .map(|x| x.trim().replace('_', "").parse())
                        .collect();
                    match parsed {
                        Ok(list) if !list.is_empty() && list.iter().all(|&n| n > 0) => {
                            sizes = Some(list)
                        }
                        _ => {
                            eprintln!("skill-mcp bench: --sizes takes numbers like 100,1000");
                            std::process::exit(2);
                        }
                    }
                }
                "--only" => {
                    only = args
                        .next()
                        .unwrap_or_default()
                        .split(',')
                        .map(str::to_owned)
                        .collect();
                    if let Some(bad) = only.iter().find(|p| !PHASES.contains(&p.as_str())) {
                        eprintln!("skill-mcp bench: unknown phase {bad:?} (phases: {PHASES:?})");
                        std::process::exit(2);
                    }
                }
                // cargo bench passes --bench to a harness = false target.
                "--bench" => {}
                "-h" | "--help" => {
                    println!(
                        "usage: cargo bench --bench skill-mcp [-- [--quick] [--fresh] [--sizes N,..] [--only PHASE,..]]\n\n\
                         --quick         fewer runs and 1,000 mixed calls (about 1.5 minutes once built)\n\
                         --fresh         regenerate the skill trees kept in the target directory,\n\
                         \x20               and rebuild the original TypeScript server kept there\n\
                         --sizes N,..    tree sizes (default 100,1000,10000); skill_run and the mixed\n\
                         \x20               calls run on the largest; targets are judged at 10,000 (boot ÷\n\
                         \x20               floor and query also at 1,000; skill_run on the largest)\n\
                         --only PHASE,.. boot, trips, run, mixed, rescan, skills-ext, search, http,\n\
                         \x20               http-peer, door (default: all)\n\n\
                         No time or throughput is a target (issue 43): each is judged as a ratio\n\
                         to a floor or a peer measured in the same run, or only reported. boot →\n\
                         first skill_list page ÷ the floor (find + reading every SKILL.md, right\n\
                         before each boot) ≤ 1.0×; the first skill_list page ÷ the same server's\n\
                         ping right before it ≤ 20×; query ÷ that ping ≤ 10× at 1,000 skills and\n\
                         ≤ 50× at 10,000; skill_run ÷ bare node in the same pair ≤ 1.2×. Every\n\
                         other time is reported, the http phase's too (no floor in it).\n\
                         The http phase serves 1,000 skills with `skill-mcp --http` and loads it\n\
                         with wrk (Debian's package; skipped without it) at 1, 16 and 64 clients;\n\
                         it judges only RSS with 1,000 sessions (≤ 64 MiB).\n\
                         The http-peer phase serves the same tree with this server and with rmcp's\n\
                         SkillCatalog over HTTP (benches/rmcp-peer --http), a fresh process per run,\n\
                         interleaved, five pairs (three with --quick), for resources/read, skills/get\n\
                         and skills/list (first page), stateless and in sessions, at 1, 16 and 64\n\
                         connections (wrk needed), then RSS with 1,000 sessions open, and judges\n\
                         ours ÷ rmcp (issue 43): server CPU per request ≤ 1.2× and p99 at 64\n\
                         connections ≤ 1.2× for read and get, RSS ≤ 0.5×; skills/list is reported\n\
                         per entry listed (entries/s, CPU per entry), pages differing in size.\n\
                         The skills-ext phase boots rmcp's own SEP-2640 SkillCatalog\n\
                         (benches/rmcp-peer, built with cargo into the target directory)\n\
                         beside this server over stdio on every tree size, interleaved rounds\n\
                         (at least five in a full run), and from 1,000 skills up judges ours ÷\n\
                         rmcp (issue 43): skills/get ≤ 1.0×, resources/read ≤ 1.0×, ping ≤ 1.3×,\n\
                         boot → first complete skills/list walk ≤ 0.5×, peak RSS ≤ 0.25×.\n\
                         A verdict is the median of per-pair ratios over at least five pairs;\n\
                         with fewer (--quick) the ratio is printed with \"no verdict\". The\n\
                         summary at the end lists every issue-43 verdict, met or missed.\n\
                         At 100 and 1,000 skills the boot phase also boots the original TypeScript\n\
                         server side by side, when ../shared/peers/skill-mcp-ts is beside the\n\
                         checkout (built once into the target directory; node on PATH);\n\
                         SKILL_MCP_BENCH_PEER=DIR looks for its sources in DIR instead.\n\
                         SKILL_MCP_BENCH_BASELINE=PATH also boots another build of the server\n\
                         (e.g. one from before a change) interleaved with this one, for a\n\
                         boot-time comparison on the same trees, and in the trips phase sends it\n\
                         each query too, interleaved: ours ÷ it ≤ 1.2× at 1,000 and 10,000 skills\n\
                         (issue 44); unset, that row and the summary say \"no baseline\".\n\
                         SKILL_MCP_BENCH_WRAP=\"cmd args\" runs the server under a wrapper (e.g.\n\
                         \"env MALLOC_ARENA_MAX=2\" or \"heaptrack -o FILE\"; RSS is read from\n\
                         the server process under it, timings include the wrapper's overhead)"
                    );
                    std::process::exit(0);
                }
                other => {
                    eprintln!("skill-mcp bench: unknown argument {other:?} (try --help)");
                    std::process::exit(2);
                }
            }
        }
        let sizes = sizes.unwrap_or_else(|| vec![100, 1_000, 10_000]);
        if quick {
            Settings {
                quick,
                fresh,
                only,
                sizes,
                boots: 3,
                trips: 5,
                walks: 1,
                run_pairs: 7,
                mixed_calls: 1_000,
            }
        } else {
            Settings {
                quick,
                fresh,
                only,
                sizes,
                boots: 11,
                trips: 31,
                walks: 3,
                run_pairs: 31,
                mixed_calls: 10_000,
            }
        }
    }
}
