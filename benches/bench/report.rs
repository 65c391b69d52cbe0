//! The results table: each row's figure, spread, target and PASS/MISS
//! verdict, the misses the summary lists, and the formatting the printed
//! lines share. Apart so what a target is, and how it is judged, is in one
//! place.

use std::fmt::Write as _;
use std::fs;

use crate::stats::{median, min_max};

/// What a row is judged against. No time or throughput is a target
/// (issue 43 §5: these machines are shared and differ): a time is judged
/// as a [`Target::RatioAtMost`] against a floor or a peer measured in the
/// same run, or reported without a verdict.
#[derive(Clone, Copy)]
pub enum Target {
    None,
    /// At most this many MiB.
    MibAtMost(f64),
    /// At most this ratio.
    RatioAtMost(f64),
    /// At most this count.
    CountAtMost(f64),
    /// At least this (a share, such as recall).
    AtLeast(f64),
}

pub struct Row {
    what: String,
    size: String,
    value: String,
    spread: String,
    target: String,
    pub verdict: &'static str,
}

#[derive(Default)]
pub struct Table {
    pub rows: Vec<Row>,
    pub misses: Vec<String>,
    /// Every ratio against a peer that carries a target (issue 43 §2), judged
    /// or not, for the summary.
    pub verdicts: Vec<Verdict>,
}

/// Interleaved pairs a ratio's verdict needs (issue 43 §2: "a verdict is
/// the median ratio of at least five interleaved pairs, so one noisy run
/// cannot flip it"); below that the ratio is printed without one.
pub const MIN_PAIRS: usize = 5;

/// One ratio against a peer with its target, as the summary lists it.
pub struct Verdict {
    pub what: String,
    pub size: String,
    /// The median of the per-pair ratios.
    pub ratio: f64,
    pub at_most: f64,
    pub pairs: usize,
    /// None: fewer than [`MIN_PAIRS`] pairs, no verdict.
    pub met: Option<bool>,
}

impl Table {
    pub fn add(
        &mut self,
        what: &str,
        size: &str,
        value: f64,
        spread: String,
        unit: &str,
        t: Target,
    ) {
        let (target, pass) = match t {
            Target::None => (String::new(), None),
            Target::MibAtMost(x) => (format!("≤ {x} MiB"), Some(value <= x)),
            Target::RatioAtMost(x) => (format!("≤ {x}×"), Some(value <= x)),
            Target::CountAtMost(x) => (format!("≤ {x}"), Some(value <= x)),
            Target::AtLeast(x) => (format!("≥ {x:.2}"), Some(value >= x)),
        };
        let verdict = match pass {
            None => "",
            Some(true) => "PASS",
            Some(false) => "MISS",
        };
        if pass == Some(false) {
            self.misses.push(format!("{what} ({size})"));
        }
        self.rows.push(Row {
            what: what.into(),
            size: size.into(),
            // A share (unit-less, such as recall) to three places, so a
            // 0.929 is not shown as the 0.93 it misses.
            value: if unit.is_empty() {
                format!("{value:.3}")
            } else {
                format!("{value:.2} {unit}")
            },
            spread,
            target,
            verdict,
        });
    }

    /// A ratio ours ÷ a peer's: the median of `ratios`, one per
    /// interleaved pair, shown with their spread and `detail`. With a target
    /// it is judged only from [`MIN_PAIRS`] pairs up (below that the target
    /// is shown and the spread says "no verdict: N pairs"), and kept in
    /// `verdicts` either way. Returns the median.
    pub fn pair_ratio(
        &mut self,
        what: &str,
        size: &str,
        ratios: &[f64],
        detail: &str,
        at_most: Option<f64>,
    ) -> f64 {
        self.ratio_row(what, size, ratios, detail, at_most, true)
    }

    /// A time over a floor or a peer measured in the same run, pair by
    /// pair (the same server's `ping`, bare node, a baseline build): judged
    /// as [`Table::pair_ratio`] is, from [`MIN_PAIRS`] pairs up, but not
    /// one of issue 43's ratios against rmcp, so not in `verdicts`.
    pub fn floor_ratio(
        &mut self,
        what: &str,
        size: &str,
        ratios: &[f64],
        detail: &str,
        at_most: Option<f64>,
    ) -> f64 {
        self.ratio_row(what, size, ratios, detail, at_most, false)
    }

    fn ratio_row(
        &mut self,
        what: &str,
        size: &str,
        ratios: &[f64],
        detail: &str,
        at_most: Option<f64>,
        issue43: bool,
    ) -> f64 {
        let value = median(ratios);
        let (lo, hi) = min_max(ratios);
        let n = ratios.len();
        let mut spread = format!("{lo:.2}–{hi:.2} (n={n})");
        if !detail.is_empty() {
            spread = format!("{spread}; {detail}");
        }
        let Some(x) = at_most else {
            self.add(what, size, value, spread, "×", Target::None);
            return value;
        };
        let met = (n >= MIN_PAIRS).then_some(value <= x);
        if issue43 {
            self.verdicts.push(Verdict {
                what: what.into(),
                size: size.into(),
                ratio: value,
                at_most: x,
                pairs: n,
                met,
            });
        }
        if met.is_some() {
            self.add(what, size, value, spread, "×", Target::RatioAtMost(x));
        } else {
            self.rows.push(Row {
                what: what.into(),
                size: size.into(),
                value: format!("{value:.2} ×"),
                spread: format!("no verdict: {n} pairs; {spread}"),
                target: format!("≤ {x}×"),
                verdict: "",
            });
        }
        value
    }

    pub fn ms(&mut self, what: &str, size: &str, samples: &[f64], t: Target) {
        self.ms_noted(what, size, samples, "", t);
    }

    /// [`Table::ms`] with `note` after the spread: for a time once judged
    /// absolutely, where its verdict went (a ratio in this run) or why it
    /// has none.
    pub fn ms_noted(&mut self, what: &str, size: &str, samples: &[f64], note: &str, t: Target) {
        let (lo, hi) = min_max(samples);
        let mut spread = format!("{lo:.2}–{hi:.2} (n={})", samples.len());
        if !note.is_empty() {
            spread = format!("{spread}; {note}");
        }
        self.add(what, size, median(samples), spread, "ms", t);
    }

    pub fn note(&mut self, what: &str, size: &str, value: String, spread: String) {
        self.rows.push(Row {
            what: what.into(),
            size: size.into(),
            value,
            spread,
            target: String::new(),
            verdict: "",
        });
    }

    pub fn print(&self) {
        let head = ["measurement", "skills", "median", "min–max", "target", ""];
        let cells: Vec<[&str; 6]> = self
            .rows
            .iter()
            .map(|r| {
                [
                    r.what.as_str(),
                    r.size.as_str(),
                    r.value.as_str(),
                    r.spread.as_str(),
                    r.target.as_str(),
                    r.verdict,
                ]
            })
            .collect();
        let mut w = head.map(|h| h.chars().count());
        for c in &cells {
            for (i, s) in c.iter().enumerate() {
                w[i] = w[i].max(s.chars().count());
            }
        }
        let line = |c: &[&str; 6]| {
            let mut s = String::from("|");
            for (i, x) in c.iter().enumerate() {
                let pad = w[i] - x.chars().count();
                let _ = write!(s, " {x}{} |", " ".repeat(pad));
            }
            s
        };
        println!("{}", line(&head));
        let mut sep = String::from("|");
        for x in w {
            let _ = write!(sep, "{}|", "-".repeat(x + 2));
        }
        println!("{sep}");
        for c in &cells {
            println!("{}", line(c));
        }
    }
}

pub fn loadavg() -> String {
    fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

pub fn fmt_count(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
