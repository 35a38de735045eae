//! The language-model step: when the lexical answer is unsure, a model
//! chooses among the top candidates.
//!
//! The model is a closure (`ask`), so the component passes the host's
//! `llm.complete` import and tests pass a fake. Any failure — no model, a
//! timeout, a reply without numbers — leaves the lexical answer as it was.

use crate::index::Index;

/// The model is consulted only when the best lexical confidence is below
/// this (an exact ticker or name needs no second opinion) …
pub const ASK_BELOW: f64 = 0.9;
/// … and there are at least this many candidates to choose among.
pub const ASK_MIN_CANDIDATES: usize = 2;
/// Candidates shown to the model.
pub const MAX_SHOWN: usize = 5;
/// Confidence given to the model's first choice (when its own is lower).
pub const CHOSEN_CONFIDENCE: f64 = 0.9;
/// Query characters quoted in the prompt.
const MAX_QUOTED: usize = 200;

/// The prompt for `query` over `candidates` (entry, confidence).
pub fn prompt(index: &Index, query: &str, candidates: &[(u32, f64)]) -> String {
    let quoted: String = query
        .chars()
        .map(|c| if c.is_control() || c == '"' { ' ' } else { c })
        .take(MAX_QUOTED)
        .collect();
    let mut p = format!(
        "A user searching a catalog of financial assets typed: \"{}\"\n\
         Candidates:\n",
        quoted.trim()
    );
    for (k, &(id, _)) in candidates.iter().take(MAX_SHOWN).enumerate() {
        let e = &index.entries()[id as usize];
        p.push_str(&format!(
            "{}. {} | {} | {}\n",
            k + 1,
            e.ticker,
            e.name,
            e.category
        ));
    }
    p.push_str(
        "Which candidates does the user mean? Reply with their numbers only, best first, \
         comma-separated (for example: 2, 1). Reply 0 if none of them matches.",
    );
    p
}

/// What a model's reply says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Candidate positions (0-based), best first.
    Chosen(Vec<usize>),
    /// The model says none matches.
    NoneMatches,
    /// No usable answer.
    Unusable,
}

/// Reads the numbers in `reply` (text around them is ignored): those in
/// 1..=`shown` are choices, in order, duplicates dropped; a `0` with no
/// valid choice means none matches; anything else is unusable. Digits glued
/// to letters ("CS2", "3M") are part of a word, not numbers.
pub fn parse_reply(reply: &str, shown: usize) -> Verdict {
    let mut chosen = Vec::new();
    let mut zero = false;
    for word in reply.split(|c: char| !c.is_alphanumeric()) {
        if word.is_empty() || !word.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        // Long digit runs (a code such as 7203, a year) are not choices.
        match word.parse::<usize>() {
            Ok(0) => zero = true,
            Ok(n) if n <= shown && !chosen.contains(&(n - 1)) => chosen.push(n - 1),
            _ => {}
        }
    }
    if !chosen.is_empty() {
        Verdict::Chosen(chosen)
    } else if zero {
        Verdict::NoneMatches
    } else {
        Verdict::Unusable
    }
}

impl Index {
    /// Lets a model reorder `candidates` (from [`Index::find`]) for `query`.
    ///
    /// Asked only when the best confidence is below [`ASK_BELOW`] and there
    /// are at least [`ASK_MIN_CANDIDATES`]; the prompt shows up to
    /// [`MAX_SHOWN`]. When the model names candidates they come first in its
    /// order, the first with a confidence of at least
    /// [`CHOSEN_CONFIDENCE`], the others keeping theirs but never above the
    /// one before them (so the list stays sorted); the rest follow in their
    /// lexical order. A reply of `0` empties the list; `None` or a reply
    /// without a usable number leaves it unchanged.
    pub fn rerank(
        &self,
        query: &str,
        candidates: Vec<(u32, f64)>,
        ask: impl FnOnce(&str) -> Option<String>,
    ) -> Vec<(u32, f64)> {
        let best = candidates.first().map_or(1.0, |c| c.1);
        if best >= ASK_BELOW || candidates.len() < ASK_MIN_CANDIDATES {
            return candidates;
        }
        let shown = candidates.len().min(MAX_SHOWN);
        let Some(reply) = ask(&prompt(self, query, &candidates)) else {
            return candidates;
        };
        match parse_reply(&reply, shown) {
            Verdict::Unusable => candidates,
            Verdict::NoneMatches => Vec::new(),
            Verdict::Chosen(order) => {
                let mut out: Vec<(u32, f64)> = order.iter().map(|&k| candidates[k]).collect();
                out.extend(
                    candidates
                        .iter()
                        .enumerate()
                        .filter(|(k, _)| !order.contains(k))
                        .map(|(_, c)| *c),
                );
                out[0].1 = out[0].1.max(CHOSEN_CONFIDENCE);
                for k in 1..out.len() {
                    out[k].1 = out[k].1.min(out[k - 1].1);
                }
                out
            }
        }
    }
}
