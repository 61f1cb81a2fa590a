//! The memory's rules: adding with dedupe and merge, confidence and signals, rewrites,
//! approach reliability, consolidation, retrieval, and [`Memory::apply`], the one place
//! a change happens (the convenience methods build a [`MemoryChange`] and apply it).

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::fmt::Write as _;

use super::similarity::{content_hash, jaccard, keywords, normalize, overlap, topic_words};
use super::{
    AddOutcome, Applied, Category, ConsolidateReport, Entry, EntryId, Evidence, ImportReport, Memory, MemoryChange,
    MemoryError, MemoryParams, PastVersion,
};

/// Longest approach name, in characters.
pub const MAX_APPROACH_CHARS: usize = 64;

/// Confidences and reliabilities are kept to nine decimals, so that 0.5 − 0.1 − 0.1 is
/// exactly 0.3 and thresholds compare as a person reads them.
fn settle(x: f64) -> f64 {
    ((x * 1e9).round() / 1e9).clamp(0.0, 1.0)
}

/// An approach name as a key: trimmed, lower case, inner whitespace collapsed.
fn approach_key(approach: &str) -> Result<String, MemoryError> {
    let key = approach.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
    if key.is_empty() {
        return Err(MemoryError::Empty { what: "the approach" });
    }
    let len = key.chars().count();
    if len > MAX_APPROACH_CHARS {
        return Err(MemoryError::TooLong { what: "the approach", len, max: MAX_APPROACH_CHARS });
    }
    Ok(key)
}

impl Memory {
    /// An empty memory with these rules (checked: an out-of-range field is an error).
    pub fn new(params: MemoryParams) -> Result<Memory, MemoryError> {
        params.validate()?;
        Ok(Memory::empty(params))
    }

    pub(super) fn empty(params: MemoryParams) -> Memory {
        Memory { params, entries: Vec::new(), reliability: BTreeMap::new(), next_id: 1, clock: 0, journal: Vec::new() }
    }

    pub fn params(&self) -> &MemoryParams {
        &self.params
    }

    /// The entries in id order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub fn entry(&self, id: EntryId) -> Option<&Entry> {
        self.index(id).ok().map(|i| &self.entries[i])
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every approach seen, with its reliability.
    pub fn reliabilities(&self) -> &BTreeMap<String, f64> {
        &self.reliability
    }

    /// The logical clock: how many changes this memory has had applied.
    pub fn clock(&self) -> u64 {
        self.clock
    }

    /// Changes applied since the last call, oldest first (the session records them).
    pub fn take_changes(&mut self) -> Vec<MemoryChange> {
        std::mem::take(&mut self.journal)
    }

    fn index(&self, id: EntryId) -> Result<usize, MemoryError> {
        self.entries.binary_search_by_key(&id, |e| e.id).map_err(|_| MemoryError::UnknownEntry(id))
    }

    /// `text` trimmed, refused when empty or longer than the limit.
    fn checked_text(&self, what: &'static str, text: &str) -> Result<String, MemoryError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(MemoryError::Empty { what });
        }
        let len = text.chars().count();
        let max = self.params.max_content_chars;
        if len > max {
            return Err(MemoryError::TooLong { what, len, max });
        }
        Ok(text.to_string())
    }

    // ---- the convenience methods: each is one change -------------------------------

    /// Add a lesson. The same text (after [`normalize`]) already there counts a hit on
    /// that entry; else an entry of the same category whose keyword Jaccard similarity
    /// is at least [`MemoryParams::merge_similarity`] absorbs it (the most similar, the
    /// lowest id on a tie); else it becomes a new entry.
    ///
    /// A merge adds the source and a hit; the entry takes the new text only if the new
    /// text is longer and the entry has not proven itself (its confidence is not above
    /// [`MemoryParams::initial_confidence`]) and is not pinned. A replaced text goes into
    /// the history and the version goes up.
    pub fn add(
        &mut self,
        content: &str,
        category: Category,
        approach: &str,
        source: Option<&str>,
    ) -> Result<AddOutcome, MemoryError> {
        self.add_change(content, category, approach, source, None)
    }

    /// [`Memory::add`] for a lesson whose outcome was checked against `evidence` (kept on
    /// the entry when the memory's rules keep evidence, [`MemoryParams::record_evidence`]).
    pub fn add_with_evidence(
        &mut self,
        content: &str,
        category: Category,
        approach: &str,
        source: Option<&str>,
        evidence: Evidence,
    ) -> Result<AddOutcome, MemoryError> {
        let evidence = Some(evidence).filter(|_| self.params.record_evidence);
        self.add_change(content, category, approach, source, evidence)
    }

    fn add_change(
        &mut self,
        content: &str,
        category: Category,
        approach: &str,
        source: Option<&str>,
        evidence: Option<Evidence>,
    ) -> Result<AddOutcome, MemoryError> {
        let change = MemoryChange::Add {
            content: content.to_string(),
            category,
            approach: approach.to_string(),
            source: source.map(str::to_string),
            evidence,
        };
        match self.apply(&change)? {
            Applied::Added(outcome) => Ok(outcome),
            other => Err(unexpected(&other)),
        }
    }

    /// The entry was used on a problem: confidence ± [`MemoryParams::confidence_step`]
    /// (clamped to [0, 1]) and a hit or a miss. Returns the new confidence.
    pub fn record_use(&mut self, id: EntryId, success: bool) -> Result<f64, MemoryError> {
        match self.apply(&MemoryChange::RecordUse { id, success })? {
            Applied::Used { confidence, .. } => Ok(confidence),
            other => Err(unexpected(&other)),
        }
    }

    /// A critique signal about the entry; it keeps the last
    /// [`MemoryParams::max_signals`]. Returns whether the entry now needs a rewrite.
    pub fn add_signal(&mut self, id: EntryId, signal: &str) -> Result<bool, MemoryError> {
        match self.apply(&MemoryChange::AddSignal { id, signal: signal.to_string() })? {
            Applied::Signalled { needs_rewrite, .. } => Ok(needs_rewrite),
            other => Err(unexpected(&other)),
        }
    }

    /// Whether the entry holds a full set of signals (false for an unknown id).
    pub fn needs_rewrite(&self, id: EntryId) -> bool {
        self.entry(id).is_some_and(|e| e.is_full_of_signals(self.params.max_signals))
    }

    /// The text to send a model to rewrite the entry: the entry and its signals,
    /// asking for one refined strategy (the reply goes to [`Memory::apply_rewrite`]).
    pub fn rewrite_request(&self, id: EntryId) -> Result<String, MemoryError> {
        let e = self.entry(id).ok_or(MemoryError::UnknownEntry(id))?;
        let mut text = String::new();
        let _ = writeln!(
            text,
            "A memory of lessons for solving problems holds this {} entry about the {} approach \
             (confidence {:.2}, used successfully {} times, unsuccessfully {} times, version {}):",
            e.category, e.approach, e.confidence, e.hits, e.misses, e.version
        );
        let _ = writeln!(text, "\n{}\n", e.content);
        if e.signals.is_empty() {
            let _ = writeln!(text, "No critique has been recorded about it since it was written.");
        } else {
            let _ = writeln!(text, "Critique recorded about it since it was written, oldest first:");
            for (n, s) in e.signals.iter().enumerate() {
                let _ = writeln!(text, "{}. {}", n + 1, s);
            }
        }
        let _ = write!(
            text,
            "\nRewrite the entry as one refined, general strategy that keeps what is right, fixes what the \
             critique shows is wrong, and applies to future problems. Reply with the strategy only: \
             at most a short paragraph, no preamble."
        );
        Ok(text)
    }

    /// Replace the entry's text with a rewrite: the version goes up, the old text goes
    /// into the history, the signals are cleared. Returns the new version.
    pub fn apply_rewrite(&mut self, id: EntryId, new_text: &str) -> Result<u32, MemoryError> {
        match self.apply(&MemoryChange::Rewrite { id, content: new_text.to_string() })? {
            Applied::Rewritten { version, .. } => Ok(version),
            other => Err(unexpected(&other)),
        }
    }

    /// How reliable the approach has been (None if it was never seen): the input of
    /// ReTreVal's skepticism penalty.
    pub fn reliability(&self, approach: &str) -> Option<f64> {
        approach_key(approach).ok().and_then(|k| self.reliability.get(&k).copied())
    }

    /// A problem solved (or not) with this approach: reliability becomes
    /// `decay·old + (1−decay)·outcome`, from [`MemoryParams::reliability_initial`].
    /// Returns the new reliability.
    pub fn record_outcome(&mut self, approach: &str, success: bool) -> Result<f64, MemoryError> {
        match self.apply(&MemoryChange::RecordOutcome { approach: approach.to_string(), success })? {
            Applied::Outcome { reliability, .. } => Ok(reliability),
            other => Err(unexpected(&other)),
        }
    }

    /// Retire (remove) unpinned entries below [`MemoryParams::retire_below`], then merge
    /// pairs of the same category at keyword Jaccard ≥
    /// [`MemoryParams::consolidate_similarity`]. Of a pair, a pinned entry is kept (two
    /// pinned entries are never merged), else the more confident (the lower id on a
    /// tie); the kept entry keeps its text, adds the other's hits, misses, sources and
    /// signals (the latest kept) and takes the higher confidence.
    pub fn consolidate(&mut self) -> Result<ConsolidateReport, MemoryError> {
        match self.apply(&MemoryChange::Consolidate)? {
            Applied::Consolidated(report) => Ok(report),
            other => Err(unexpected(&other)),
        }
    }

    /// A person's edit: new text (a new version, the old text in the history), a
    /// confidence in [0, 1], pinned or not. At least one must be given.
    pub fn edit(
        &mut self,
        id: EntryId,
        content: Option<&str>,
        confidence: Option<f64>,
        pinned: Option<bool>,
    ) -> Result<(), MemoryError> {
        let change = MemoryChange::Edit { id, content: content.map(str::to_string), confidence, pinned };
        self.apply(&change).map(|_| ())
    }

    /// Remove an entry (its id is never reused).
    pub fn remove(&mut self, id: EntryId) -> Result<(), MemoryError> {
        self.apply(&MemoryChange::Remove { id }).map(|_| ())
    }

    /// Remove every entry and every reliability (the rules stay; ids are not reused).
    /// Returns how many entries there were.
    pub fn clear(&mut self) -> usize {
        match self.apply(&MemoryChange::Clear) {
            Ok(Applied::Cleared { entries }) => entries,
            _ => 0,
        }
    }

    /// Take in another memory's entries (new ids, their evidence kept; one whose text
    /// is here already is left out) and the reliabilities of approaches not known here.
    pub fn merge_from(&mut self, other: &Memory) -> Result<ImportReport, MemoryError> {
        let change = MemoryChange::Import { entries: other.entries.clone(), reliability: other.reliability.clone() };
        match self.apply(&change)? {
            Applied::Imported(report) => Ok(report),
            other => Err(unexpected(&other)),
        }
    }

    /// Entries above [`MemoryParams::retrieve_above`] confidence that share a keyword
    /// with the query, best first by (share of the query's keywords they have) ×
    /// confidence, ties in id order; at most `k`.
    pub fn retrieve(&self, query: &str, k: usize) -> Vec<&Entry> {
        self.retrieve_scored(query, k).into_iter().map(|(_, e)| e).collect()
    }

    /// [`Memory::retrieve`] with each entry's score.
    pub fn retrieve_scored(&self, query: &str, k: usize) -> Vec<(f64, &Entry)> {
        let q = keywords(query);
        let mut scored: Vec<(f64, &Entry)> = self
            .entries
            .iter()
            .filter(|e| e.confidence > self.params.retrieve_above)
            .filter_map(|e| {
                let o = overlap(&q, &keywords(&e.content));
                (o > 0.0).then_some((o * e.confidence, e))
            })
            .collect();
        // A stable sort of entries already in id order keeps ties in id order.
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        scored.truncate(k);
        scored
    }

    /// The lessons for solving `problem` with `approach`: entries above
    /// [`MemoryParams::retrieve_above`] confidence whose text and source problems share at
    /// least [`MemoryParams::relevant_share`] of the problem's topic words, and two of them
    /// at least ([`topic_words`]: not the words every problem uses, nor the approach's own
    /// name, which every lesson of an approach names), best first by that
    /// share × confidence, ties in id order; at most `k`, each with its score.
    pub fn retrieve_for(&self, problem: &str, approach: &str, k: usize) -> Vec<(f64, &Entry)> {
        if self.params.relevant_share == 0.0 {
            // A memory recorded before the rule: retrieved as it was then, so it replays exactly.
            return self.retrieve_scored(&format!("{problem} {approach}"), k);
        }
        let named = keywords(approach);
        let q: std::collections::BTreeSet<String> = topic_words(problem).difference(&named).cloned().collect();
        // At least two shared topic words (one, for a problem that has only one).
        let enough = q.len().min(2);
        let mut scored: Vec<(f64, &Entry)> = self
            .entries
            .iter()
            .filter(|e| e.confidence > self.params.retrieve_above)
            .filter_map(|e| {
                let mut about = topic_words(&e.content);
                for source in &e.sources {
                    about.extend(topic_words(source));
                }
                let shared = q.intersection(&about).count();
                let share = overlap(&q, &about);
                (shared >= enough && share > 0.0 && share >= self.params.relevant_share)
                    .then_some((share * e.confidence, e))
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        scored.truncate(k);
        scored
    }

    /// All entries ranked by confidence × hits, ties in id order; at most `k`.
    pub fn summary(&self, k: usize) -> Vec<&Entry> {
        let mut ranked: Vec<&Entry> = self.entries.iter().collect();
        ranked.sort_by(|a, b| (b.confidence * f64::from(b.hits)).total_cmp(&(a.confidence * f64::from(a.hits))));
        ranked.truncate(k);
        ranked
    }

    // ---- apply ---------------------------------------------------------------------

    /// Perform one change. On an error nothing changed and nothing is journaled.
    pub fn apply(&mut self, change: &MemoryChange) -> Result<Applied, MemoryError> {
        let now = counted(self.clock, 1, "clock")?;
        let applied = match change {
            MemoryChange::Add { content, category, approach, source, evidence } => {
                Applied::Added(self.do_add(content, *category, approach, source.as_deref(), *evidence, now)?)
            }
            MemoryChange::RecordUse { id, success } => {
                let step = self.params.confidence_step;
                let i = self.index(*id)?;
                let e = &mut self.entries[i];
                if *success {
                    e.confidence = settle(e.confidence + step);
                    e.hits = e.hits.saturating_add(1);
                } else {
                    e.confidence = settle(e.confidence - step);
                    e.misses = e.misses.saturating_add(1);
                }
                e.updated = now;
                Applied::Used { id: *id, confidence: e.confidence }
            }
            MemoryChange::AddSignal { id, signal } => {
                let signal = self.checked_text("the signal", signal)?;
                let i = self.index(*id)?;
                let max = self.params.max_signals;
                let e = &mut self.entries[i];
                e.signals.push_back(signal);
                while e.signals.len() > max {
                    e.signals.pop_front();
                }
                e.updated = now;
                Applied::Signalled { id: *id, needs_rewrite: e.is_full_of_signals(max) }
            }
            MemoryChange::Rewrite { id, content } => {
                let content = self.checked_content(content)?;
                let i = self.index(*id)?;
                let max_history = self.params.max_history;
                let e = &mut self.entries[i];
                replace_text(e, content, now, max_history);
                e.signals.clear();
                Applied::Rewritten { id: *id, version: e.version }
            }
            MemoryChange::RecordOutcome { approach, success } => {
                let key = approach_key(approach)?;
                let (initial, decay) = (self.params.reliability_initial, self.params.reliability_decay);
                let old = self.reliability.get(&key).copied().unwrap_or(initial);
                let outcome = if *success { 1.0 } else { 0.0 };
                let new = settle(decay * old + (1.0 - decay) * outcome);
                self.reliability.insert(key.clone(), new);
                Applied::Outcome { approach: key, reliability: new }
            }
            MemoryChange::Consolidate => Applied::Consolidated(self.do_consolidate(now)),
            MemoryChange::Edit { id, content, confidence, pinned } => {
                if content.is_none() && confidence.is_none() && pinned.is_none() {
                    return Err(MemoryError::Invalid(
                        "an edit must change the content, the confidence or the pin".into(),
                    ));
                }
                let content = content.as_deref().map(|c| self.checked_content(c)).transpose()?;
                if let Some(c) = confidence {
                    if !(0.0..=1.0).contains(c) {
                        return Err(MemoryError::Confidence(*c));
                    }
                }
                let i = self.index(*id)?;
                let max_history = self.params.max_history;
                let e = &mut self.entries[i];
                if let Some(content) = content {
                    if content != e.content {
                        replace_text(e, content, now, max_history);
                    }
                }
                if let Some(c) = confidence {
                    e.confidence = settle(*c);
                }
                if let Some(p) = pinned {
                    e.pinned = *p;
                }
                e.updated = now;
                Applied::Edited { id: *id }
            }
            MemoryChange::Remove { id } => {
                let i = self.index(*id)?;
                self.entries.remove(i);
                Applied::Removed { id: *id }
            }
            MemoryChange::Clear => {
                let entries = self.entries.len();
                self.entries.clear();
                self.reliability.clear();
                Applied::Cleared { entries }
            }
            MemoryChange::Import { entries, reliability } => {
                Applied::Imported(self.do_import(entries, reliability, now)?)
            }
        };
        self.clock = now;
        self.journal.push(change.clone());
        Ok(applied)
    }

    /// Content checked, and with at least one letter or digit (else it has no key).
    fn checked_content(&self, content: &str) -> Result<String, MemoryError> {
        let content = self.checked_text("the memory content", content)?;
        if normalize(&content).is_empty() {
            return Err(MemoryError::Empty { what: "the memory content (it has no letters or digits)" });
        }
        Ok(content)
    }

    fn do_add(
        &mut self,
        content: &str,
        category: Category,
        approach: &str,
        source: Option<&str>,
        evidence: Option<Evidence>,
        now: u64,
    ) -> Result<AddOutcome, MemoryError> {
        let content = self.checked_content(content)?;
        let approach = approach_key(approach)?;
        let source = match source.map(str::trim).filter(|s| !s.is_empty()) {
            Some(s) => Some(self.checked_text("the source", s)?),
            None => None,
        };
        let (max_sources, max_history) = (self.params.max_sources, self.params.max_history);
        let key = normalize(&content);
        let hash = content_hash(&content);
        if let Some(e) =
            self.entries.iter_mut().find(|e| content_hash(&e.content) == hash && normalize(&e.content) == key)
        {
            e.hits = e.hits.saturating_add(1);
            add_source(e, source, max_sources);
            e.evidence = Evidence::combine(e.evidence, evidence);
            e.updated = now;
            return Ok(AddOutcome::Duplicate(e.id));
        }
        let words = keywords(&content);
        let mut best: Option<(f64, usize)> = None;
        let across = self.params.merge_across_approaches;
        let same_kind = |e: &Entry| e.category == category && (across || e.approach == approach);
        for (i, e) in self.entries.iter().enumerate().filter(|(_, e)| same_kind(e)) {
            let sim = jaccard(&words, &keywords(&e.content));
            if sim >= self.params.merge_similarity && best.is_none_or(|(b, _)| sim > b) {
                best = Some((sim, i));
            }
        }
        if let Some((_, i)) = best {
            let initial = self.params.initial_confidence;
            let e = &mut self.entries[i];
            e.hits = e.hits.saturating_add(1);
            add_source(e, source, max_sources);
            e.evidence = Evidence::combine(e.evidence, evidence);
            let proven = e.confidence > initial;
            if !e.pinned && !proven && content.chars().count() > e.content.chars().count() {
                replace_text(e, content, now, max_history);
            }
            e.updated = now;
            return Ok(AddOutcome::Merged(e.id));
        }
        if self.entries.len() >= self.params.max_entries {
            return Err(MemoryError::Full(self.params.max_entries));
        }
        let id = self.next_id;
        let next = counted(id, 1, "next_id")?;
        self.entries.push(Entry {
            id,
            content,
            category,
            approach,
            confidence: self.params.initial_confidence,
            hits: 0,
            misses: 0,
            signals: VecDeque::new(),
            sources: source.into_iter().collect(),
            version: 1,
            history: Vec::new(),
            pinned: false,
            created: now,
            updated: now,
            evidence,
        });
        self.next_id = next;
        Ok(AddOutcome::Inserted(id))
    }

    fn do_consolidate(&mut self, now: u64) -> ConsolidateReport {
        let mut report = ConsolidateReport::default();
        let retire_below = self.params.retire_below;
        self.entries.retain(|e| {
            let retire = !e.pinned && e.confidence < retire_below;
            if retire {
                report.retired.push(e.id);
            }
            !retire
        });
        // Keywords as sorted ids, so each of the O(n²) pair tests is a merge of two short
        // integer lists rather than a comparison of string sets.
        let mut ids: HashMap<String, u32> = HashMap::new();
        let words: Vec<Vec<u32>> = self
            .entries
            .iter()
            .map(|e| {
                let mut w: Vec<u32> = keywords(&e.content)
                    .into_iter()
                    .map(|k| {
                        let next = ids.len() as u32;
                        *ids.entry(k).or_insert(next)
                    })
                    .collect();
                w.sort_unstable();
                w
            })
            .collect();
        let threshold = self.params.consolidate_similarity;
        let n = self.entries.len();
        let mut alive = vec![true; n];
        for i in 0..n {
            for j in i + 1..n {
                if !alive[i] {
                    break;
                }
                let (a, b) = (&self.entries[i], &self.entries[j]);
                let other_approach = !self.params.merge_across_approaches && a.approach != b.approach;
                if !alive[j] || a.category != b.category || other_approach || (a.pinned && b.pinned) {
                    continue;
                }
                // |a ∩ b| / |a ∪ b| ≤ min / max: skip pairs whose sizes alone rule a merge out.
                let (small, large) = (words[i].len().min(words[j].len()), words[i].len().max(words[j].len()));
                if large == 0 || (small as f64) < threshold * large as f64 {
                    continue;
                }
                if sorted_jaccard(&words[i], &words[j]) < threshold {
                    continue;
                }
                let keep_j = b.pinned || (!a.pinned && b.confidence.total_cmp(&a.confidence) == Ordering::Greater);
                let (keep, gone) = if keep_j { (j, i) } else { (i, j) };
                alive[gone] = false;
                let absorbed = self.entries[gone].clone();
                let (max_signals, max_sources) = (self.params.max_signals, self.params.max_sources);
                let e = &mut self.entries[keep];
                e.hits = e.hits.saturating_add(absorbed.hits);
                e.misses = e.misses.saturating_add(absorbed.misses);
                for s in absorbed.sources {
                    add_source(e, Some(s), max_sources);
                }
                e.signals.extend(absorbed.signals);
                while e.signals.len() > max_signals {
                    e.signals.pop_front();
                }
                e.confidence = e.confidence.max(absorbed.confidence);
                e.updated = now;
                report.merged.push((e.id, absorbed.id));
            }
        }
        let mut flags = alive.into_iter();
        self.entries.retain(|_| flags.next().unwrap_or(true));
        report
    }

    fn do_import(
        &mut self,
        entries: &[Entry],
        reliability: &BTreeMap<String, f64>,
        now: u64,
    ) -> Result<ImportReport, MemoryError> {
        let mut report = ImportReport::default();
        let mut seen: HashSet<String> = self.entries.iter().map(|e| normalize(&e.content)).collect();
        let mut taken = Vec::new();
        for incoming in entries {
            self.check_entry(incoming)?;
            if !seen.insert(normalize(&incoming.content)) {
                report.duplicates += 1;
                continue;
            }
            taken.push(incoming);
        }
        let mut approaches = Vec::new();
        for (approach, value) in reliability {
            let key = approach_key(approach)?;
            if !(0.0..=1.0).contains(value) {
                return Err(MemoryError::Invalid(format!("reliability of {key:?} is {value}, not between 0 and 1")));
            }
            if !self.reliability.contains_key(&key) {
                approaches.push((key, *value));
            }
        }
        if self.entries.len() + taken.len() > self.params.max_entries {
            return Err(MemoryError::Full(self.params.max_entries));
        }
        // Every id the entries take is checked before any is taken: nothing changes on an error.
        counted(self.next_id, taken.len() as u64, "next_id")?;
        let p = self.params.clone();
        for incoming in taken {
            let mut e = incoming.clone();
            e.id = self.next_id;
            self.next_id += 1; // checked above: within MAX_COUNTER
            e.created = now;
            e.updated = now;
            while e.signals.len() > p.max_signals {
                e.signals.pop_front();
            }
            let excess = e.sources.len().saturating_sub(p.max_sources);
            e.sources.drain(..excess);
            let excess = e.history.len().saturating_sub(p.max_history);
            e.history.drain(..excess);
            report.inserted.push(e.id);
            self.entries.push(e);
        }
        report.approaches = approaches.len();
        self.reliability.extend(approaches);
        Ok(report)
    }

    /// One entry's fields within this memory's limits; the error names the entry.
    fn check_entry(&self, e: &Entry) -> Result<(), MemoryError> {
        let bad = |what: String| MemoryError::Invalid(format!("entry {}: {what}", e.id));
        self.checked_content(&e.content).map_err(|err| bad(err.to_string()))?;
        approach_key(&e.approach).map_err(|err| bad(err.to_string()))?;
        if !(0.0..=1.0).contains(&e.confidence) {
            return Err(bad(format!("confidence {} is not between 0 and 1", e.confidence)));
        }
        if e.version == 0 {
            return Err(bad("version must be at least 1".into()));
        }
        let max = self.params.max_content_chars;
        let texts = e.signals.iter().chain(&e.sources).chain(e.history.iter().map(|h| &h.content));
        for t in texts {
            let len = t.chars().count();
            if len > max {
                return Err(bad(format!("a signal, source or past version is {len} characters long (at most {max})")));
            }
        }
        Ok(())
    }

    /// The whole memory consistent and within its limits (run on every loaded file):
    /// the error names the entry and field.
    pub fn validate(&self) -> Result<(), MemoryError> {
        self.params.validate()?;
        for (field, value) in [("next_id", self.next_id), ("clock", self.clock)] {
            if value > MAX_COUNTER {
                return Err(MemoryError::Invalid(format!(
                    "{field} is {value}, more than {MAX_COUNTER} (2^53): not a count a memory reaches"
                )));
            }
        }
        if self.next_id == 0 {
            return Err(MemoryError::Invalid("next_id must be at least 1".into()));
        }
        let p = &self.params;
        if self.entries.len() > p.max_entries {
            return Err(MemoryError::Invalid(format!(
                "{} entries, more than max_entries ({})",
                self.entries.len(),
                p.max_entries
            )));
        }
        let mut last = 0;
        for e in &self.entries {
            if e.id == 0 || e.id <= last || e.id >= self.next_id {
                return Err(MemoryError::Invalid(format!(
                    "entry {}: ids must be increasing, at least 1 and below next_id ({})",
                    e.id, self.next_id
                )));
            }
            last = e.id;
            self.check_entry(e)?;
            let caps = [
                ("signals", e.signals.len(), p.max_signals),
                ("sources", e.sources.len(), p.max_sources),
                ("history", e.history.len(), p.max_history),
            ];
            for (field, len, max) in caps {
                if len > max {
                    return Err(MemoryError::Invalid(format!("entry {}: {len} {field} (at most {max})", e.id)));
                }
            }
            if e.created > self.clock || e.updated > self.clock {
                return Err(MemoryError::Invalid(format!(
                    "entry {}: created/updated after the memory's clock ({})",
                    e.id, self.clock
                )));
            }
        }
        for (approach, value) in &self.reliability {
            if approach_key(approach).ok().as_deref() != Some(approach.as_str()) {
                return Err(MemoryError::Invalid(format!("bad approach name {approach:?} in reliability")));
            }
            if !(0.0..=1.0).contains(value) {
                return Err(MemoryError::Invalid(format!(
                    "reliability of {approach:?} is {value}, not between 0 and 1"
                )));
            }
        }
        Ok(())
    }
}

/// The largest `next_id` and `clock` a memory may have: 2^53, exact as a JSON number in
/// every reader, and more changes than a memory gets in any lifetime. Loading refuses
/// more; counting up to it fails with [`MemoryError::Exhausted`] instead of wrapping.
pub const MAX_COUNTER: u64 = 1 << 53;

/// `value + step` if it stays within [`MAX_COUNTER`].
fn counted(value: u64, step: u64, what: &'static str) -> Result<u64, MemoryError> {
    value.checked_add(step).filter(|&n| n <= MAX_COUNTER).ok_or(MemoryError::Exhausted(what))
}

/// Jaccard similarity of two sorted, duplicate-free id lists (0 when both are empty),
/// computed exactly as [`jaccard`] does on the keyword sets.
fn sorted_jaccard(a: &[u32], b: &[u32]) -> f64 {
    let (mut i, mut j, mut shared) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            Ordering::Less => i += 1,
            Ordering::Greater => j += 1,
            Ordering::Equal => {
                shared += 1;
                i += 1;
                j += 1;
            }
        }
    }
    let union = a.len() + b.len() - shared;
    if union == 0 {
        0.0
    } else {
        shared as f64 / union as f64
    }
}

/// The text becomes `content`: the old one into the history (the oldest dropped past
/// the cap) and the version up.
fn replace_text(e: &mut Entry, content: String, now: u64, max_history: usize) {
    let old = std::mem::replace(&mut e.content, content);
    e.history.push(PastVersion { version: e.version, content: old, replaced_at: now });
    let excess = e.history.len().saturating_sub(max_history);
    e.history.drain(..excess);
    e.version = e.version.saturating_add(1);
    e.updated = now;
}

fn add_source(e: &mut Entry, source: Option<String>, max_sources: usize) {
    let Some(source) = source else { return };
    if e.sources.contains(&source) {
        return;
    }
    e.sources.push(source);
    let excess = e.sources.len().saturating_sub(max_sources);
    e.sources.drain(..excess);
}

/// A change answered with another change's outcome: a bug in this file, reported as an error.
fn unexpected(applied: &Applied) -> MemoryError {
    MemoryError::Invalid(format!("internal: unexpected outcome {applied:?}"))
}
