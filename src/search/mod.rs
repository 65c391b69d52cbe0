//! Ranked search for `skill_list`'s `query` (spec LIST-006, LIST-010..LIST-013):
//! BM25F over four fields of each skill — its name split at `-`/`_`, its
//! description, its when-to-use and the first [`SEARCH_BODY_BYTES`] of its
//! SKILL.md body — after case and Unicode folding, English stop words and
//! Snowball stemming. An author cannot game it (issue 44 §2): a word's
//! count saturates per field and per skill (SEARCH-001), and a query that
//! is a skill's name ranks that skill first (SEARCH-002). A query word of
//! four letters or more also finds the longer words it begins, at a lower
//! weight (SEARCH-004): "postgres" finds "postgresql". Scripts written
//! without spaces (Han, kana, Hangul, Thai …) are cut into character
//! bigrams (SEARCH-003), so a word typed from a description finds it.
//!
//! Why BM25F and not the substring count it replaces: measured on real
//! catalogs (issue 27), counting substrings let "the" match a third of all
//! skills and a whole sentence match nearly every one. BM25 weighs a word
//! by how rare it is, stop words never count, and stemming lets "presenting
//! slides" meet "presentation" and "slide". Scoring is a few lines over an
//! inverted index; the stemmer is `rust-stemmers` (Snowball's own English
//! algorithm), the part worth not writing by hand.
//!
//! The index is built once per snapshot, on the first query (not at boot:
//! the list every host asks for first must not wait for it), reading each
//! skill's body prefix on the scan's thread pool. It is kept small because
//! it lives as long as the snapshot (issue 27 §6: at most a quarter more
//! RSS at 10,000 skills): terms are 64-bit hashes, not strings, and the
//! postings are one array laid out term by term.

pub(crate) mod semantic;

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use rayon::prelude::*;
use rust_stemmers::{Algorithm, Stemmer};
use unicode_normalization::UnicodeNormalization;

use crate::catalog::{self, Skill};
use crate::limits::SEARCH_BODY_BYTES;

/// The fields, in this order everywhere: name, description, when-to-use,
/// body.
const FIELDS: usize = 4;

/// How much a word found in each field counts (LIST-010): a word of the
/// name says most about what the skill is, the body least.
pub(crate) const FIELD_WEIGHTS: [f32; FIELDS] = [3.0, 2.0, 1.5, 1.0];

/// BM25's length normalisation per field: a name is short by nature, so
/// its length barely matters; long descriptions and bodies are damped.
const FIELD_B: [f32; FIELDS] = [0.3, 0.75, 0.75, 0.75];

/// BM25's saturation: the fifth occurrence of a word adds little.
const K1: f32 = 1.2;

/// The most occurrences of a word counted in one field of a skill
/// (SEARCH-001): name, description and when-to-use are a sentence or two,
/// where a word said twice is said; repeating it more gains nothing. The
/// body, up to [`SEARCH_BODY_BYTES`], is a page of steps that name their
/// subject more often, so it counts up to [`BODY_TF_CAP`]. Measured on the
/// evaluation sets (BENCHMARKS.md): caps of 2 and 8 keep recall@5 and
/// recall@1 on the tuning set and raise held-out recall@1 from 0.744 to
/// 0.767; a cap of 2 on the body too lost two held-out requests.
pub(crate) const FIELD_TF_CAP: u8 = 2;

/// The most occurrences of a word counted in a skill's body (SEARCH-001).
pub(crate) const BODY_TF_CAP: u8 = 8;

/// The most occurrences of a word counted in a whole skill, over its
/// fields in the order name, description, when-to-use, body (SEARCH-001):
/// spreading a word over every field gains no more than this.
pub(crate) const SKILL_TF_CAP: u8 = 8;

/// The fewest letters a query term has to match the longer terms it
/// begins (SEARCH-004): "postgres" finds "postgresql"; a shorter one
/// ("pdf", "app") would begin too many words.
pub(crate) const PREFIX_MIN_CHARS: usize = 4;

/// What a match by prefix weighs beside an exact one (SEARCH-004).
/// Measured on the evaluation sets (BENCHMARKS.md), with the family's idf
/// below: 0.3 lifts recall@5 from 0.929 to 0.935 and held-out recall@1
/// from 0.767 to 0.778, held-out recall@5 unchanged (0.844); 0.5 and 0.7
/// lose a held-out request (0.833), the prefixes of a sentence's common
/// words ("method" → "methodology") crowding its skill out.
pub(crate) const PREFIX_WEIGHT: f32 = 0.3;

/// Each field's cap, in field order.
const TF_CAPS: [u8; FIELDS] = [FIELD_TF_CAP, FIELD_TF_CAP, FIELD_TF_CAP, BODY_TF_CAP];

/// A skill is listed only when it scores at least this share of the best
/// skill's score (LIST-011): the rest share only a common word or two with
/// the query and would crowd the answer.
pub(crate) const RELATIVE_CUT: f32 = 0.55;

/// English stop words (LIST-010): the NLTK list, plus the words people put
/// around a request to an agent ("please", "want", "need"), which say
/// nothing about which skill is meant. Sorted, for a binary search.
const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "ain",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "aren",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "couldn",
    "d",
    "did",
    "didn",
    "do",
    "does",
    "doesn",
    "doing",
    "don",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "had",
    "hadn",
    "has",
    "hasn",
    "have",
    "haven",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "isn",
    "it",
    "its",
    "itself",
    "just",
    "let",
    "ll",
    "m",
    "me",
    "might",
    "mightn",
    "more",
    "most",
    "must",
    "mustn",
    "my",
    "myself",
    "need",
    "needn",
    "needs",
    "no",
    "nor",
    "not",
    "now",
    "o",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "please",
    "re",
    "s",
    "same",
    "shall",
    "shan",
    "she",
    "should",
    "shouldn",
    "so",
    "some",
    "such",
    "t",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "us",
    "ve",
    "very",
    "want",
    "wants",
    "was",
    "wasn",
    "we",
    "were",
    "weren",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "won",
    "would",
    "wouldn",
    "y",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

/// True for an English stop word (already folded).
pub fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok()
}

/// `word` case- and Unicode-folded: lowercased, compatibility-decomposed
/// and stripped of the combining diacritics (U+0300..U+036F) that
/// decomposition splits off Latin, Greek and Cyrillic letters, so "Café",
/// "CAFE" and "café" are one word; then composed again (NFC), so a Hangul
/// syllable or a kana with its voicing mark is one character, as typed.
/// Other marks (an Indic vowel sign, say) are part of their word and stay.
/// ASCII (nearly every word) takes the byte path.
pub(crate) fn fold(word: &str) -> String {
    if word.is_ascii() {
        return word.to_ascii_lowercase();
    }
    word.nfkd()
        .filter(|c| !('\u{300}'..='\u{36f}').contains(c))
        .flat_map(char::to_lowercase)
        // Greek's final sigma is the same letter (Unicode case folding):
        // "ΟΔΗΓΟΣ" lower-cased a letter at a time ends in σ, "οδηγός" in ς.
        .map(|c| if c == 'ς' { 'σ' } else { c })
        .nfc()
        .collect()
}

/// True for a letter of a script written without spaces between words
/// (SEARCH-003): Han, Hiragana, Katakana, Hangul, Thai, Lao, Myanmar and
/// Khmer. A run of them is cut into character bigrams.
pub(crate) fn unspaced(c: char) -> bool {
    matches!(u32::from(c),
        0x2E80..=0x2FDF // CJK and Kangxi radicals
        | 0x3005..=0x3007 | 0x3021..=0x3029 | 0x3038..=0x303B // 々 〆 〇, Hangzhou numerals
        | 0x3040..=0x30FF // Hiragana, Katakana
        | 0x3130..=0x318F // Hangul compatibility jamo
        | 0x31F0..=0x31FF // Katakana extensions
        | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF // Han
        | 0x20000..=0x3134F // Han, supplementary planes
        | 0x1100..=0x11FF | 0xA960..=0xA97F | 0xAC00..=0xD7FF // Hangul
        | 0xFF66..=0xFF9F // half-width Katakana
        | 0x0E00..=0x0EFF // Thai, Lao
        | 0x1000..=0x109F // Myanmar
        | 0x1780..=0x17FF // Khmer
    )
}

/// A folded word's terms (SEARCH-003): itself, or, when it holds letters
/// of [`unspaced`] scripts, each run of those cut into its overlapping
/// character bigrams (a run of one letter is itself), and each run of
/// other letters whole, in order. A combining mark stays with the letter
/// before it.
fn segment(word: String) -> Segments {
    if word.is_ascii() || !word.chars().any(unspaced) {
        return Segments::One(Some(word));
    }
    let mut out: Vec<String> = Vec::new();
    // Runs of (unspaced?, characters).
    let mut runs: Vec<(bool, Vec<char>)> = Vec::new();
    for c in word.chars() {
        let class = match runs.last() {
            Some(&(u, _)) if unicode_normalization::char::is_combining_mark(c) => u,
            _ => unspaced(c),
        };
        match runs.last_mut() {
            Some((u, chars)) if *u == class => chars.push(c),
            _ => runs.push((class, vec![c])),
        }
    }
    for (u, chars) in runs {
        if !u || chars.len() == 1 {
            out.push(chars.into_iter().collect());
        } else {
            out.extend(chars.windows(2).map(|w| w.iter().collect::<String>()));
        }
    }
    Segments::Many(out.into_iter())
}

/// [`segment`]'s terms: one word (nearly always), or several.
enum Segments {
    One(Option<String>),
    Many(std::vec::IntoIter<String>),
}

impl Iterator for Segments {
    type Item = String;
    fn next(&mut self) -> Option<String> {
        match self {
            Segments::One(w) => w.take(),
            Segments::Many(it) => it.next(),
        }
    }
}

/// The words of a text: its maximal runs of letters, digits and combining
/// marks (so a name splits at `-` and `_`), folded; a run that folds to
/// nothing (only diacritics) is no word. A run in a script written without
/// spaces is cut into bigrams (SEARCH-003).
pub(crate) fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| {
        !(c.is_alphanumeric() || unicode_normalization::char::is_combining_mark(c))
    })
    .filter(|w| !w.is_empty())
    .map(fold)
    .filter(|w| !w.is_empty())
    .flat_map(segment)
}

/// Turns text into the terms the index holds: its words less stop words,
/// each stemmed by Snowball's English stemmer.
pub(crate) struct Analyzer(Stemmer);

impl Default for Analyzer {
    fn default() -> Self {
        Analyzer(Stemmer::create(Algorithm::English))
    }
}

impl Analyzer {
    /// The terms of `text`, in order, repeats kept.
    pub(crate) fn terms<'t>(&'t self, text: &'t str) -> impl Iterator<Item = String> + 't {
        words(text)
            .filter(|w| !is_stop_word(w))
            .map(|w| self.0.stem(&w).into_owned())
    }
}

/// One skill's occurrences of one term: how often it is in each field
/// (capped at 255; BM25 saturates long before).
#[derive(Debug, Clone, Copy)]
struct Posting {
    doc: u32,
    tf: [u8; FIELDS],
}

/// A term as the index keys it: a 64-bit hash of its text. The index keeps
/// no term's text (at 10,000 skills the strings would cost more than the
/// postings); two terms of one catalog sharing a hash is a chance of about
/// one in 10^10 and would only merge their postings.
fn key(term: &str) -> u64 {
    let mut h = DefaultHasher::new();
    term.hash(&mut h);
    h.finish()
}

/// The key of a name or a query as SEARCH-002 compares them: its words
/// (as [`words`] cuts and folds them), stop words kept, in order.
fn name_key(text: &str) -> u64 {
    let mut h = DefaultHasher::new();
    for w in words(text) {
        w.hash(&mut h);
    }
    h.finish()
}

/// `ranked` with `named` moved (or added) to its front, in their order.
fn first(ranked: &mut Vec<usize>, named: &[usize]) {
    if named.is_empty() {
        return;
    }
    ranked.retain(|i| !named.contains(i));
    ranked.splice(0..0, named.iter().copied());
}

/// One snapshot's inverted index.
#[derive(Debug)]
pub(crate) struct Index {
    ids: HashMap<u64, u32>,
    /// Every term's postings, term after term (by id), each term's in
    /// skill order: one allocation, not one per term.
    postings: Vec<Posting>,
    /// Where each term's postings start in `postings`; one more entry
    /// than there are terms.
    starts: Vec<u32>,
    /// Each skill's field lengths in terms (capped at `u16::MAX`).
    lens: Vec<[u16; FIELDS]>,
    /// The average length of each field over the catalog (at least 1).
    avg: [f32; FIELDS],
    analyzer: Analyzer,
    /// Each skill's vector, when the owner gave a model (LIST-017).
    meaning: Option<semantic::Vectors>,
    /// Each skill's name as [`name_key`] keys it (SEARCH-002).
    names: Vec<u64>,
    /// The terms a query term can be a prefix of (SEARCH-004).
    prefixes: Prefixes,
}

/// The index's terms longer than [`PREFIX_MIN_CHARS`] letters, each with
/// its term id, sorted (SEARCH-004): one string of their text, in the order
/// they were met, and one array, so a prefix's terms are a binary search
/// and a walk.
#[derive(Debug, Default)]
struct Prefixes {
    text: String,
    /// Each term's start and length in `text`, and its id; sorted by term.
    terms: Vec<(u32, u32, u32)>,
}

/// [`Prefixes`] as the build collects them: each long term once, as met.
#[derive(Default)]
struct Vocabulary {
    text: String,
    spans: Vec<(u32, u32, u64)>,
}

impl Vocabulary {
    fn add(&mut self, term: &str, k: u64) {
        let (Ok(start), Ok(len)) = (u32::try_from(self.text.len()), u32::try_from(term.len()))
        else {
            return;
        };
        self.text.push_str(term);
        self.spans.push((start, len, k));
    }
}

impl Prefixes {
    fn new(v: Vocabulary, ids: &HashMap<u64, u32>) -> Prefixes {
        let Vocabulary { mut text, spans } = v;
        text.shrink_to_fit();
        let mut terms: Vec<(u32, u32, u32)> = spans
            .into_iter()
            .filter_map(|(start, len, k)| ids.get(&k).map(|&id| (start, len, id)))
            .collect();
        let at = |&(start, len, _): &(u32, u32, u32)| {
            text.get(start as usize..(start as usize + len as usize))
                .unwrap_or("")
        };
        terms.sort_unstable_by(|a, b| at(a).cmp(at(b)));
        terms.shrink_to_fit();
        Prefixes { text, terms }
    }

    fn term(&self, i: usize) -> &str {
        let (start, len, _) = self.terms[i];
        self.text
            .get(start as usize..start as usize + len as usize)
            .unwrap_or("")
    }

    /// The ids of the terms `prefix` begins and that are longer than it.
    fn longer<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = u32> + 'a {
        let mut lo = 0;
        let mut hi = self.terms.len();
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.term(mid) < prefix {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        (lo..self.terms.len())
            .map(move |i| (self.term(i), self.terms[i].2))
            .take_while(move |(t, _)| t.starts_with(prefix))
            .filter(move |(t, _)| t.len() > prefix.len())
            .map(|(_, id)| id)
    }
}

/// A query's answer: the skills, best first, and how many of them share
/// a word with it (the rest were found by meaning alone, LIST-017).
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Ranked {
    pub(crate) skills: Vec<usize>,
    pub(crate) by_words: usize,
}

impl std::fmt::Debug for Analyzer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Analyzer(English)")
    }
}

/// The first `max` bytes of `s`, cut back to a character boundary.
fn prefix(s: &str, max: usize) -> &str {
    let mut cut = max.min(s.len());
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    &s[..cut]
}

/// The body prefix `query` reads: the SKILL.md read again through the
/// fence, as `skill_load` reads it. A SKILL.md that cannot be read or no
/// longer splits has no body here; its other fields still count.
fn body_prefix(skill: &Skill) -> String {
    match catalog::load_skill_md(&skill.dir) {
        Ok(loaded) => prefix(loaded.body(), SEARCH_BODY_BYTES).to_owned(),
        Err(_) => String::new(),
    }
}

/// What a skill's vector is made of (LIST-017): the text that says what
/// it is for. The body is left out: averaged into one vector, its steps
/// drown the description (measured: paraphrases found in the top 5 fell
/// from 0.84 to 0.81 of the fused answers with a 2 KB body prefix).
fn meaning_text(skill: &Skill) -> String {
    let name = skill.name.replace(['-', '_'], " ");
    let mut text = name;
    for field in [&skill.description, &skill.when_to_use]
        .into_iter()
        .flatten()
    {
        text.push(' ');
        text.push_str(field);
    }
    text
}

/// One skill's terms with their per-field counts, its field lengths, and
/// the terms longer than [`PREFIX_MIN_CHARS`] its worker saw first
/// (SEARCH-004: the vocabulary prefixes are matched against).
type DocTerms = (Vec<(u64, [u8; FIELDS])>, [u16; FIELDS], Vec<String>);

/// A worker's analyzer and the term key of each word it has seen: a
/// catalog repeats the same few thousand words, and stemming each
/// occurrence again was most of the build.
#[derive(Default)]
struct Worker {
    analyzer: Analyzer,
    seen: HashMap<String, Option<u64>>,
    /// Terms longer than [`PREFIX_MIN_CHARS`] met since the last skill.
    long: Vec<String>,
}

impl Worker {
    /// The key of `word`'s term, or `None` for a stop word.
    fn term(&mut self, word: String) -> Option<u64> {
        if let Some(k) = self.seen.get(&word) {
            return *k;
        }
        let k = (!is_stop_word(&word)).then(|| {
            let stem = self.analyzer.0.stem(&word);
            if stem.chars().count() > PREFIX_MIN_CHARS {
                self.long.push(stem.to_string());
            }
            key(&stem)
        });
        self.seen.insert(word, k);
        k
    }

    fn analyze(&mut self, skill: &Skill, body: &str) -> DocTerms {
        let fields = [
            skill.name.as_str(),
            skill.description.as_deref().unwrap_or(""),
            skill.when_to_use.as_deref().unwrap_or(""),
            body,
        ];
        let mut seen: Vec<(u64, usize)> = Vec::new();
        let mut lens = [0u16; FIELDS];
        for (f, text) in fields.iter().enumerate() {
            for word in words(text) {
                let Some(k) = self.term(word) else { continue };
                lens[f] = lens[f].saturating_add(1);
                seen.push((k, f));
            }
        }
        seen.sort_unstable();
        let mut counts: Vec<(u64, [u8; FIELDS])> = Vec::new();
        for (k, f) in seen {
            if counts.last().is_none_or(|(have, _)| *have != k) {
                counts.push((k, [0; FIELDS]));
            }
            if let Some((_, tf)) = counts.last_mut() {
                tf[f] = tf[f].saturating_add(1);
            }
        }
        counts.shrink_to_fit();
        // Two words of one skill can share a stem ("presenting",
        // "presentation"): its long terms are reported once each.
        let mut long = std::mem::take(&mut self.long);
        long.sort_unstable();
        long.dedup();
        (counts, lens, long)
    }
}

/// Skills analysed at once before their terms join the index: bounds the
/// memory the build holds besides the index itself.
const BUILD_CHUNK: usize = 512;

impl Index {
    /// The index of `skills`, each body read on the scan's thread pool,
    /// [`BUILD_CHUNK`] skills at a time; with `model`, each skill's vector
    /// of its name, description and when-to-use too (LIST-017).
    pub(crate) fn build(skills: &[Skill], model: Option<Arc<semantic::Model>>) -> Index {
        let mut ids: HashMap<u64, u32> = HashMap::new();
        // Each posting with its term id, in skill order; laid out term by
        // term below.
        let mut flat: Vec<(u32, Posting)> = Vec::new();
        let mut lens = Vec::with_capacity(skills.len());
        let mut sums = [0f64; FIELDS];
        let mut vocabulary = Vocabulary::default();
        for chunk in skills.chunks(BUILD_CHUNK) {
            let docs: Vec<DocTerms> = chunk
                .par_iter()
                .map_init(Worker::default, |w, s| w.analyze(s, &body_prefix(s)))
                .collect();
            for (terms, len, long) in docs {
                // A long term not yet in the index is met for the first
                // time: its text joins the vocabulary, once.
                for term in long {
                    let k = key(&term);
                    if !ids.contains_key(&k) {
                        vocabulary.add(&term, k);
                    }
                }
                let doc = lens.len() as u32;
                for (k, tf) in terms {
                    let next = ids.len() as u32;
                    let id = *ids.entry(k).or_insert(next);
                    flat.push((id, Posting { doc, tf }));
                }
                for f in 0..FIELDS {
                    sums[f] += f64::from(len[f]);
                }
                lens.push(len);
            }
        }
        // A counting sort by term, stable, so each term's postings stay in
        // skill order.
        let mut starts = vec![0u32; ids.len() + 1];
        for (id, _) in &flat {
            starts[*id as usize + 1] += 1;
        }
        for i in 1..starts.len() {
            starts[i] += starts[i - 1];
        }
        let mut fill: Vec<u32> = starts.clone();
        let mut postings = vec![
            Posting {
                doc: 0,
                tf: [0; FIELDS]
            };
            flat.len()
        ];
        for (id, p) in flat {
            let at = &mut fill[id as usize];
            postings[*at as usize] = p;
            *at += 1;
        }
        ids.shrink_to_fit();
        let prefixes = Prefixes::new(vocabulary, &ids);
        let n = lens.len().max(1) as f64;
        let avg = sums.map(|s| ((s / n) as f32).max(1.0));
        let meaning = model.map(|m| {
            let texts: Vec<String> = skills.iter().map(meaning_text).collect();
            semantic::Vectors::build(m, &texts)
        });
        Index {
            ids,
            postings,
            starts,
            lens,
            avg,
            analyzer: Analyzer::default(),
            meaning,
            names: skills.iter().map(|s| name_key(&s.name)).collect(),
            prefixes,
        }
    }

    /// The distinct terms of a query that are not stop words, in order.
    pub(crate) fn query_terms(&self, query: &str) -> Vec<String> {
        let mut terms: Vec<String> = Vec::new();
        for t in self.analyzer.terms(query) {
            if !terms.contains(&t) {
                terms.push(t);
            }
        }
        terms
    }

    /// The skills that match `query` (LIST-010, LIST-011): best first,
    /// ties in catalog (name) order, each scoring at least
    /// [`RELATIVE_CUT`] of the best; none when the query shares no term
    /// but stop words with any skill. With a model, fused with the skills
    /// nearest in meaning (LIST-017).
    /// A skill whose name is the query (SEARCH-002) comes first, however
    /// others score.
    ///
    /// Among several such skills, `name_of` (each skill's served name)
    /// orders them: the name exactly as typed, then the name in lower
    /// case as typed, then names in Agent Skills' own form (lower case,
    /// no trailing separator), then the rest, each in name order — so
    /// `GIT`, `Git-` and `git_` cannot push `git` off the first page of
    /// "git", nor `PDF` rank before `pdf` for "pdf".
    pub(crate) fn search<'a>(&self, query: &str, name_of: impl Fn(usize) -> &'a str) -> Ranked {
        let mut named = self.named(query);
        let typed = query.trim();
        let lower = typed.to_lowercase();
        named.sort_by_key(|&i| {
            let n = name_of(i);
            let plain = n.chars().all(|c| !c.is_uppercase()) && !n.ends_with(['-', '_', '.']);
            (n != typed, n != lower, !plain, i)
        });
        let mut words: Vec<usize> = self.scored(query).into_iter().map(|(i, _)| i).collect();
        first(&mut words, &named);
        let by_words = words.len();
        let mut skills = match &self.meaning {
            None => words,
            Some(v) => semantic::fuse(&words, &v.nearest(query)),
        };
        first(&mut skills, &named);
        Ranked { skills, by_words }
    }

    /// The skills, in catalog order, whose name is `query` once both are
    /// cut into words and folded (SEARCH-002): "PDF", "pdf" for `pdf`,
    /// "pdf pro" for `pdf-pro`.
    fn named(&self, query: &str) -> Vec<usize> {
        if words(query).next().is_none() {
            return Vec::new();
        }
        let q = name_key(query);
        self.names
            .iter()
            .enumerate()
            .filter(|&(_, &n)| n == q)
            .map(|(i, _)| i)
            .collect()
    }

    /// The postings of term `id`.
    fn list(&self, id: u32) -> &[Posting] {
        let from = self.starts.get(id as usize).copied().unwrap_or(0) as usize;
        let to = self.starts.get(id as usize + 1).copied().unwrap_or(0) as usize;
        self.postings.get(from..to).unwrap_or(&[])
    }

    /// BM25's idf of a term `df` skills hold (LIST-006).
    fn idf(&self, df: usize) -> f32 {
        let (n, df) = (self.lens.len() as f32, df as f32);
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    /// A term's BM25F weight in skill `doc`, counted `tf` times per field:
    /// w/(k1 + w) (LIST-006), each count capped (SEARCH-001: each field's
    /// count saturates, and so does the skill's, name first).
    fn saturated(&self, doc: u32, tf: &[u8; FIELDS]) -> f32 {
        let Some(len) = self.lens.get(doc as usize) else {
            return 0.0;
        };
        let mut w = 0.0;
        let mut left = SKILL_TF_CAP;
        for f in 0..FIELDS {
            let count = tf[f].min(TF_CAPS[f]).min(left);
            left -= count;
            if count > 0 {
                let norm = 1.0 - FIELD_B[f] + FIELD_B[f] * f32::from(len[f]) / self.avg[f];
                w += FIELD_WEIGHTS[f] * f32::from(count) / norm;
            }
        }
        w / (K1 + w)
    }

    /// [`Index::search`] with each skill's score.
    pub(crate) fn scored(&self, query: &str) -> Vec<(usize, f32)> {
        // Each skill's score, and the score LIST-011's cut judges: the
        // same with its prefix matches at full weight (SEARCH-004).
        let mut scores: HashMap<u32, (f32, f32)> = HashMap::new();
        for term in self.query_terms(query) {
            let mut exact: HashMap<u32, (f32, f32)> = HashMap::new();
            if let Some(&id) = self.ids.get(&key(&term)) {
                let list = self.list(id);
                let idf = self.idf(list.len());
                for p in list {
                    let s = idf * self.saturated(p.doc, &p.tf);
                    exact.insert(p.doc, (s, s));
                }
            }
            // SEARCH-004: the longer words it begins, at a lower weight;
            // a skill holding both counts the better of the two.
            if term.chars().count() >= PREFIX_MIN_CHARS {
                let mut tfs: HashMap<u32, [u8; FIELDS]> = HashMap::new();
                for id in self.prefixes.longer(&term) {
                    for p in self.list(id) {
                        let tf = tfs.entry(p.doc).or_default();
                        for (sum, n) in tf.iter_mut().zip(p.tf) {
                            *sum = sum.saturating_add(n);
                        }
                    }
                }
                // The idf of the whole family (the term and the words it
                // begins): a common word's longer forms weigh as little
                // as it does (measured: the longer forms' own idf made
                // "method" rank skills saying "methodology" first, and
                // lost held-out requests at every weight).
                let family = tfs.len() + exact.keys().filter(|d| !tfs.contains_key(d)).count();
                let idf = self.idf(family);
                for (doc, tf) in tfs {
                    let full = idf * self.saturated(doc, &tf);
                    let e = exact.entry(doc).or_default();
                    *e = (e.0.max(PREFIX_WEIGHT * full), e.1.max(full));
                }
            }
            for (doc, (rank, cut)) in exact {
                let e = scores.entry(doc).or_default();
                *e = (e.0 + rank, e.1 + cut);
            }
        }
        let best = scores.values().map(|s| s.0).fold(0.0f32, f32::max);
        let mut hits: Vec<(usize, f32)> = scores
            .into_iter()
            .filter(|&(_, (s, cut))| s > 0.0 && cut >= best * RELATIVE_CUT)
            .map(|(d, (s, _))| (d as usize, s))
            .collect();
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_sorted_and_folded() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(STOP_WORDS.iter().all(|w| fold(w) == *w));
    }

    #[test]
    fn words_fold_case_and_marks_and_split_names() {
        let w: Vec<String> = words("PDF-tools_v2 Café ÉCOLE ﬁle").collect();
        assert_eq!(w, ["pdf", "tools", "v2", "cafe", "ecole", "file"]);
        // An Indic vowel sign is part of its word; a lone one is a word.
        let w: Vec<String> = words("ಕಾ ಾ").collect();
        assert_eq!(w, ["ಕಾ", "ಾ"]);
    }

    #[test]
    fn terms_drop_stop_words_and_stem() {
        let a = Analyzer::default();
        let t: Vec<String> = a
            .terms("I want the Presentations of slides, please")
            .collect();
        assert_eq!(t, ["present", "slide"]);
        let t: Vec<String> = a.terms("presenting a slide").collect();
        assert_eq!(t, ["present", "slide"]);
    }

    #[test]
    fn a_prefix_finds_only_the_longer_terms_it_begins() {
        let terms = ["poster", "postgresql", "pos", "post", "postgr", "apostl"];
        let ids: HashMap<u64, u32> = terms
            .iter()
            .enumerate()
            .map(|(i, t)| (key(t), i as u32))
            .collect();
        let mut v = Vocabulary::default();
        for t in terms
            .iter()
            .filter(|t| t.chars().count() > PREFIX_MIN_CHARS)
        {
            v.add(t, key(t));
        }
        let p = Prefixes::new(v, &ids);
        let mut found: Vec<u32> = p.longer("post").collect();
        found.sort_unstable();
        assert_eq!(found, [0, 1, 4]);
        assert_eq!(p.longer("postgr").collect::<Vec<_>>(), [1]);
        assert_eq!(p.longer("postgresql").count(), 0);
        assert_eq!(p.longer("zzzz").count(), 0);
    }

    #[test]
    fn unspaced_scripts_are_cut_into_bigrams_and_latin_is_not() {
        let w: Vec<String> = words("PDFから表格を抽出 摘要").collect();
        assert_eq!(
            w,
            [
                "pdf", "から", "ら表", "表格", "格を", "を抽", "抽出", "摘要"
            ]
        );
        // One letter alone is itself; Hangul composes back to syllables;
        // half-width katakana folds to full width.
        let w: Vec<String> = words("表 데이터추출 ﾃｰﾌﾞﾙ").collect();
        assert_eq!(
            w,
            ["表", "데이", "이터", "터추", "추출", "テー", "ーブ", "ブル"]
        );
        // Thai keeps its marks on their letters.
        let w: Vec<String> = words("ไม่").collect();
        assert_eq!(w, ["ไม", "ม่"]);
        // Latin, decomposed or not, is as before.
        let w: Vec<String> = words("Cafe\u{301} café naïve").collect();
        assert_eq!(w, ["cafe", "cafe", "naive"]);
    }

    proptest::proptest! {
        /// Any text — a query or a skill's field — folds, splits and stems
        /// without a panic, and no term is empty or a stop word's stem.
        #[test]
        fn any_text_analyzes_without_a_panic(text in "\\PC{0,64}") {
            let a = Analyzer::default();
            for t in a.terms(&text) {
                proptest::prop_assert!(!t.is_empty());
            }
        }

        #[test]
        fn any_letters_stem_without_a_panic(word in "[a-zA-Zà-ÿ'’ʼ\\u{300}-\\u{36f}]{1,24}") {
            let a = Analyzer::default();
            let _ = a.terms(&word).count();
        }
    }
}
