//! Shard results merged into one campaign's (`sim merge`): nothing is dropped silently.
//!
//! Every file must hold shard result lines ([`ShardLine`]); every shard `0..N` of every
//! variant must be there once, whole (its summary line, `complete`), and of the same run:
//! the same campaign words, seed range, shard count and commit. What is not is an error that
//! names the file and what is missing. With `partial`, what exists is merged and what is
//! missing is listed ([`Gap`]): the failures counted are every failure line seen, including
//! those of a shard killed before its summary.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;

use super::{parse_range, Shard, ShardLine};
use crate::report::{self, Class};

/// A shard results file as read: its name, for messages, and its lines.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ShardFile {
    /// The file's name as given.
    pub name: String,
    /// Its result lines, each with its line number (from 1).
    pub lines: Vec<(usize, ShardLine)>,
    /// A last line cut short (no newline and not whole JSON): the shard was killed while
    /// writing it.
    pub cut_line: Option<usize>,
}

impl ShardFile {
    /// Reads a results file's bytes. Blank lines are skipped; any other line must be a
    /// [`ShardLine`], but a last line cut short is noted in [`ShardFile::cut_line`].
    ///
    /// ```
    /// use sim_core::campaign::ShardFile;
    /// assert!(ShardFile::parse("a.jsonl", b"\n  \n").unwrap().lines.is_empty());
    /// assert!(ShardFile::parse("a.jsonl", b"{}\n").is_err());
    /// assert_eq!(ShardFile::parse("a.jsonl", br#"{"kind":"fail"#).unwrap().cut_line, Some(1));
    /// ```
    pub fn parse(name: &str, data: &[u8]) -> Result<ShardFile, MergeError> {
        let mut file = ShardFile {
            name: name.to_string(),
            ..ShardFile::default()
        };
        let pieces: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
        let last = pieces.len();
        for (i, piece) in pieces.into_iter().enumerate() {
            let n = i + 1;
            let text = String::from_utf8_lossy(piece);
            let text = text.trim_start_matches('\u{feff}').trim();
            if text.is_empty() {
                continue;
            }
            match serde_json::from_str(text) {
                Ok(line) => file.lines.push((n, line)),
                // The last piece has no newline after it: a write cut short by a kill.
                Err(e) if n == last && text.starts_with('{') && e.is_eof() => {
                    file.cut_line = Some(n)
                }
                Err(e) => {
                    return Err(MergeError::NotShardLine {
                        file: name.to_string(),
                        line: n,
                        reason: e.to_string(),
                    })
                }
            }
        }
        Ok(file)
    }
}

/// Shard results that do not add up to one whole campaign. Each names the file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    /// A file with no result line: empty, blank, or `/dev/null`.
    #[error("{file} holds no shard results (it is empty or blank); a shard killed before its first failure leaves such a file: rerun that shard (sim sweep ... --shard I/N --out FILE), or merge the others with --partial")]
    Empty {
        /// The file.
        file: String,
    },
    /// A line that is not a shard result.
    #[error("{file}:{line}: not a shard result line ({reason}); give the files `sim sweep --shard I/N --out FILE` wrote")]
    NotShardLine {
        /// The file.
        file: String,
        /// The line number, from 1.
        line: usize,
        /// What the JSON reader said.
        reason: String,
    },
    /// A last line cut short.
    #[error("{file}:{line}: the last line is cut short: the shard was killed while writing it; rerun that shard, or merge what exists with --partial")]
    CutShort {
        /// The file.
        file: String,
        /// The line number, from 1.
        line: usize,
    },
    /// The same file named twice.
    #[error("{0} is given twice: give each shard's file once")]
    FileTwice(String),
    /// Shards of different runs.
    #[error("{file} holds results of {run}, but {other_file} of {other_run}: shards of different runs; merge the shards of one sweep only (the same flags, --seeds, shard count and build)")]
    DifferentRuns {
        /// A file.
        file: String,
        /// What it is a shard of.
        run: String,
        /// Another file.
        other_file: String,
        /// What that is a shard of.
        other_run: String,
    },
    /// The same shard or seed given twice.
    #[error("{what} is in {first} and again in {again}: give each shard's file once")]
    Repeated {
        /// The shard or seed.
        what: String,
        /// Where it was first.
        first: String,
        /// Where it was again.
        again: String,
    },
    /// Shards or variants missing, killed or stopped.
    #[error("the results are not one whole sweep: {}; rerun what is missing, or merge what exists with --partial (it counts every failure line and names the missing seeds)", first_few(.0))]
    Incomplete(Vec<String>),
    /// Shards of a sweep that stopped at each shard's first failure.
    #[error("{0}: a sweep with --until-first stops each shard at its own first failure, so its shards do not add up to one sweep; sweep the shards without --until-first")]
    UntilFirst(String),
    /// Lines that contradict each other or their shard.
    #[error("{0}; the file was edited or mixes runs: give the files `sim sweep --shard I/N --out FILE` wrote, unchanged")]
    Inconsistent(String),
}

/// The first problems of a list, and how many more: an error stays readable.
fn first_few(problems: &[String]) -> String {
    const SHOWN: usize = 4;
    let mut text = problems[..problems.len().min(SHOWN)].join("; ");
    if problems.len() > SHOWN {
        text.push_str(&format!("; and {} more", problems.len() - SHOWN));
    }
    text
}

/// Why a shard's part of a variant is not in the merge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GapReason {
    /// No line of it in any file. `file` is the shard's file if one holds other variants.
    Absent {
        /// A file of the same shard (its other variants), if any.
        file: Option<String>,
    },
    /// Failure lines but no summary: killed before it finished. Its failures are counted.
    Killed {
        /// The file.
        file: String,
        /// Failure lines it holds.
        failure_lines: u64,
    },
    /// A summary saying it was stopped early (Ctrl-C): its runs and failures are counted.
    Stopped {
        /// The file.
        file: String,
        /// Seeds it ran.
        runs: u64,
    },
}

/// A shard of a variant that is missing from a merge, or there only in part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gap {
    /// The variant's command-line words.
    pub variant: String,
    /// The shard.
    pub shard: Shard,
    /// The campaign's seed range, if any file says it.
    pub range: Option<Range<u64>>,
    /// Why.
    pub reason: GapReason,
}

impl Gap {
    /// `reason=... ` and the numbers, as `key=value` words.
    pub fn words(&self) -> String {
        let seeds = match &self.range {
            Some(r) => format!("range={}..{} seeds={}", r.start, r.end, self.shard.len(r)),
            None => "range=unknown".to_string(),
        };
        let reason = match &self.reason {
            GapReason::Absent { .. } => "reason=absent".to_string(),
            GapReason::Killed {
                file,
                failure_lines,
            } => format!("reason=killed failure_lines={failure_lines} file={file}"),
            GapReason::Stopped { file, runs } => {
                format!("reason=stopped runs={runs} file={file}")
            }
        };
        format!("shard={} {seeds} {reason}", self.shard)
    }
}

impl fmt::Display for Gap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (shard, variant) = (self.shard, &self.variant);
        let part = match &self.range {
            Some(r) => format!(
                "seeds {}, {}, ... of {}..{}",
                r.start + shard.index,
                r.start + shard.index + shard.count,
                r.start,
                r.end
            ),
            None => "seed range unknown: no summary line says it".to_string(),
        };
        write!(f, "shard {shard} of {variant} ({part}) ")?;
        match &self.reason {
            GapReason::Absent { file: None } => write!(f, "is missing: no file of shard {shard}"),
            GapReason::Absent { file: Some(file) } => write!(
                f,
                "is missing: {file} (shard {shard}) has no line of it, so that shard stopped before it"
            ),
            GapReason::Killed {
                file,
                failure_lines,
            } => write!(
                f,
                "has no summary line in {file} ({failure_lines} failure lines): the shard was killed before it finished"
            ),
            GapReason::Stopped { file, runs } => write!(
                f,
                "was stopped after {runs} of its {} seeds ({file})",
                self.range.as_ref().map_or(0, |r| shard.len(r))
            ),
        }
    }
}

/// The merged result of one variant over every shard.
#[derive(Clone, Debug, PartialEq)]
pub struct Merged {
    /// The variant's command-line words.
    pub variant: String,
    /// The system.
    pub system: String,
    /// The bug, or `none`.
    pub bug: String,
    /// Part of a `--all` campaign.
    pub all: bool,
    /// Seeds run, by the shards' summary lines.
    pub runs: u64,
    /// Seeds that failed: every failure line.
    pub failures: u64,
    /// The lowest failing seed and its replay command.
    pub first_failure: Option<(u64, String)>,
    /// Every failing seed with its [`crate::report::Outcome::failure_class`], in seed order.
    pub failing: Vec<(u64, String)>,
    /// Failures per class, as in [`super::Tally::classes`].
    pub classes: BTreeMap<String, u64>,
    /// Runs per wall second, as if the shards ran side by side.
    pub runs_per_sec: f64,
    /// What is missing (only in a partial merge; otherwise it is an error).
    pub missing: Vec<Gap>,
}

/// A merge: one result per variant, in the order they first appear.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MergeReport {
    /// Per variant.
    pub merged: Vec<Merged>,
    /// Variants of the campaign that no file has a line of (partial merges only).
    pub missing_variants: u64,
    /// What a partial merge left out: empty files and lines cut short.
    pub skipped: Vec<String>,
}

impl MergeReport {
    /// True if anything is missing.
    pub fn is_partial(&self) -> bool {
        self.missing_variants > 0 || self.merged.iter().any(|m| !m.missing.is_empty())
    }
}

/// What makes shards parts of one run.
#[derive(Clone, Debug, PartialEq, Eq)]
struct RunKey {
    campaign: String,
    seeds: Option<String>,
    count: u64,
    commit: Option<String>,
}

impl RunKey {
    fn same(&self, other: &RunKey) -> bool {
        let commits = match (&self.commit, &other.commit) {
            (Some(a), Some(b)) => a == b || a == "unknown" || b == "unknown",
            _ => true,
        };
        self.campaign == other.campaign
            && self.count == other.count
            && (self.seeds.is_none() || other.seeds.is_none() || self.seeds == other.seeds)
            && commits
    }
}

impl fmt::Display for RunKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`sim sweep {}", self.campaign)?;
        if let Some(seeds) = &self.seeds {
            write!(f, " --seeds {seeds}")?;
        }
        write!(f, " --shard I/{}`", self.count)?;
        if let Some(commit) = &self.commit {
            write!(f, " (commit {commit})")?;
        }
        Ok(())
    }
}

/// The campaign words an older summary (without `campaign`) stands for: its variant's, or
/// for `--all` the flags after `--system S [--bug B]`.
fn campaign_of_old(variant: &str, all: bool) -> String {
    if !all {
        return variant.to_string();
    }
    let mut words = variant.split_whitespace().peekable();
    let mut rest = vec!["--all"];
    while let Some(w) = words.next() {
        if w == "--system" || w == "--bug" {
            words.next();
        } else {
            rest.push(w);
        }
    }
    rest.join(" ")
}

/// A failure line, where it was read.
struct FailureSeen<'a> {
    at: String,
    shard: u64,
    class: String,
    replay: &'a str,
}

/// A summary line, where it was read.
struct SummarySeen<'a> {
    file: &'a str,
    at: String,
    runs: u64,
    failures: u64,
    complete: bool,
    elapsed_s: f64,
}

/// One variant's lines from every file.
struct VariantLines<'a> {
    variant: &'a str,
    system: &'a str,
    bug: &'a str,
    all: bool,
    summaries: BTreeMap<u64, SummarySeen<'a>>,
    failures: BTreeMap<u64, FailureSeen<'a>>,
    /// The file of each shard's failure lines.
    failure_files: BTreeMap<u64, (&'a str, u64)>,
}

fn parse_shard(text: &str, at: &str) -> Result<Shard, MergeError> {
    Shard::parse(text).map_err(|e| MergeError::Inconsistent(format!("{at}: {e}")))
}

/// Merges shard results files into one result per variant, in the order they first appear.
///
/// Every shard `0..N` of every variant must be there once and whole (its summary line says
/// `complete`), and every summary of the same run: the same campaign words, seed range, shard
/// count and commit. A file, shard or variant missing, killed (failure lines, no summary) or
/// stopped is an error naming it, unless `partial`, which merges what exists and lists the
/// rest as [`Gap`]s; then the failures counted are every failure line seen, a killed shard's
/// too. Shards of different runs, a shard, seed or file given twice, and lines that
/// contradict their shard are errors either way.
pub fn merge(files: &[ShardFile], partial: bool) -> Result<MergeReport, MergeError> {
    let mut report = MergeReport::default();
    for (i, file) in files.iter().enumerate() {
        if files[..i].iter().any(|f| f.name == file.name) {
            return Err(MergeError::FileTwice(file.name.clone()));
        }
        if let Some(line) = file.cut_line {
            if !partial {
                return Err(MergeError::CutShort {
                    file: file.name.clone(),
                    line,
                });
            }
            report
                .skipped
                .push(format!("{}:{line} (cut short)", file.name));
        }
        if file.lines.is_empty() {
            if !partial {
                return Err(MergeError::Empty {
                    file: file.name.clone(),
                });
            }
            report.skipped.push(format!("{} (empty)", file.name));
        }
    }
    let (key, variants_total) = run_key(files)?;
    let groups = group(files, key.count)?;
    let range = match &key.seeds {
        Some(text) => Some(parse_range(text).ok_or_else(|| {
            MergeError::Inconsistent(format!("seeds {text:?} is not a range START..END"))
        })?),
        None => None,
    };
    // Which file holds each shard (by its other variants), for naming where a variant stopped.
    let mut shard_files: BTreeMap<u64, &str> = BTreeMap::new();
    for g in &groups {
        for (i, s) in &g.summaries {
            shard_files.entry(*i).or_insert(s.file);
        }
        for (i, (file, _)) in &g.failure_files {
            shard_files.entry(*i).or_insert(file);
        }
    }
    let mut gaps_text = Vec::new();
    let all = groups.iter().any(|g| g.all);
    for g in &groups {
        let mut m = merge_variant(g, key.count, range.as_ref(), &shard_files)?;
        // A variant only a killed shard reached has no summary to say it is part of --all.
        m.all |= all;
        gaps_text.extend(m.missing.iter().map(Gap::to_string));
        report.merged.push(m);
    }
    let seen = groups.len() as u64;
    report.missing_variants = variants_total.map_or(0, |n| n.saturating_sub(seen));
    if report.missing_variants > 0 {
        gaps_text.push(format!(
            "the sweep has {} variants but the files hold lines of only {seen}: every shard stopped before the others",
            variants_total.unwrap_or(seen)
        ));
    }
    if !partial && !gaps_text.is_empty() {
        return Err(MergeError::Incomplete(gaps_text));
    }
    Ok(report)
}

/// The run every line must belong to, and how many variants it sweeps (if said).
fn run_key(files: &[ShardFile]) -> Result<(RunKey, Option<u64>), MergeError> {
    let mut first: Option<(RunKey, String)> = None;
    let mut variants = None;
    let mut check = |key: RunKey, at: String| -> Result<(), MergeError> {
        match &first {
            None => first = Some((key, at)),
            Some((k, where_)) if !k.same(&key) => {
                return Err(MergeError::DifferentRuns {
                    file: at,
                    run: key.to_string(),
                    other_file: where_.clone(),
                    other_run: k.to_string(),
                })
            }
            Some((k, where_)) if k.seeds.is_none() && key.seeds.is_some() => {
                first = Some((key, where_.clone()))
            }
            Some(_) => {}
        }
        Ok(())
    };
    // Summaries first: they say the range, so a failure line is checked against it.
    for file in files {
        for (n, line) in &file.lines {
            if let ShardLine::Summary {
                variant,
                seeds,
                shard,
                all,
                campaign,
                variants: v,
                commit,
                ..
            } = line
            {
                let at = format!("{}:{n}", file.name);
                let key = RunKey {
                    campaign: campaign
                        .clone()
                        .unwrap_or_else(|| campaign_of_old(variant, *all)),
                    seeds: Some(seeds.clone()),
                    count: parse_shard(shard, &at)?.count,
                    commit: commit.clone(),
                };
                if key.campaign.ends_with("--until-first") {
                    return Err(MergeError::UntilFirst(at));
                }
                check(key, at)?;
                variants = variants.or(*v);
            }
        }
    }
    for file in files {
        for (n, line) in &file.lines {
            if let ShardLine::Failure { shard, variant, .. } = line {
                let at = format!("{}:{n}", file.name);
                let count = parse_shard(shard, &at)?.count;
                match &first {
                    // A sweep of one variant has failures of that variant only.
                    Some((k, where_))
                        if k.seeds.is_some()
                            && !k.campaign.starts_with("--all")
                            && k.campaign.trim_end_matches(" --until-first") != variant =>
                    {
                        return Err(MergeError::DifferentRuns {
                            file: at,
                            run: format!("`sim sweep {variant}`"),
                            other_file: where_.clone(),
                            other_run: k.to_string(),
                        })
                    }
                    Some((k, where_)) if k.count != count => {
                        return Err(MergeError::DifferentRuns {
                            file: at,
                            run: format!("a sweep in {count} shards"),
                            other_file: where_.clone(),
                            other_run: k.to_string(),
                        })
                    }
                    Some(_) => {}
                    None => {
                        first = Some((
                            RunKey {
                                campaign: "(no summary line)".to_string(),
                                seeds: None,
                                count,
                                commit: None,
                            },
                            at,
                        ))
                    }
                }
            }
        }
    }
    let (key, _) = first
        .ok_or_else(|| MergeError::Incomplete(vec!["no file holds a result line".to_string()]))?;
    Ok((key, variants))
}

/// Every line, by variant in order of first appearance; a shard or seed twice is an error.
fn group(files: &[ShardFile], count: u64) -> Result<Vec<VariantLines<'_>>, MergeError> {
    let mut groups: Vec<VariantLines> = Vec::new();
    for file in files {
        for (n, line) in &file.lines {
            let at = format!("{}:{n}", file.name);
            match line {
                ShardLine::Summary {
                    variant,
                    system,
                    bug,
                    shard,
                    runs,
                    failures,
                    complete,
                    all,
                    elapsed_s,
                    ..
                } => {
                    let g = group_of(&mut groups, variant);
                    let s = parse_shard(shard, &at)?;
                    if g.system.is_empty() {
                        (g.system, g.bug, g.all) = (system, bug, *all);
                    }
                    if let Some(before) = g.summaries.get(&s.index) {
                        return Err(MergeError::Repeated {
                            what: format!("the summary of shard {s} of {variant}"),
                            first: before.at.clone(),
                            again: at,
                        });
                    }
                    g.summaries.insert(
                        s.index,
                        SummarySeen {
                            file: &file.name,
                            at,
                            runs: *runs,
                            failures: *failures,
                            complete: *complete,
                            elapsed_s: *elapsed_s,
                        },
                    );
                }
                ShardLine::Failure {
                    variant,
                    shard,
                    seed,
                    class,
                    invariant,
                    replay,
                    ..
                } => {
                    let g = group_of(&mut groups, variant);
                    let s = parse_shard(shard, &at)?;
                    debug_assert_eq!(s.count, count, "checked by run_key");
                    let class = Class::parse(class).ok_or_else(|| {
                        MergeError::Inconsistent(format!(
                            "{at}: class {class:?} is not an outcome class"
                        ))
                    })?;
                    if let Some(before) = g.failures.get(seed) {
                        return Err(MergeError::Repeated {
                            what: format!("the failure of seed {seed} of {variant}"),
                            first: before.at.clone(),
                            again: at,
                        });
                    }
                    g.failures.insert(
                        *seed,
                        FailureSeen {
                            at,
                            shard: s.index,
                            class: report::failure_class(class, invariant.as_deref()),
                            replay,
                        },
                    );
                    g.failure_files.entry(s.index).or_insert((&file.name, 0)).1 += 1;
                }
            }
        }
    }
    Ok(groups)
}

/// The lines of `variant` so far, new and empty if none. A variant first seen in a failure
/// line is named by its summary when one comes; a killed shard has none.
fn group_of<'a, 'g>(
    groups: &'g mut Vec<VariantLines<'a>>,
    variant: &'a str,
) -> &'g mut VariantLines<'a> {
    let i = match groups.iter().position(|g| g.variant == variant) {
        Some(i) => i,
        None => {
            groups.push(VariantLines {
                variant,
                system: "",
                bug: "",
                all: false,
                summaries: BTreeMap::new(),
                failures: BTreeMap::new(),
                failure_files: BTreeMap::new(),
            });
            groups.len() - 1
        }
    };
    &mut groups[i]
}

/// Every failure line is of a seed its shard owns.
fn failures_in_their_shards(
    g: &VariantLines,
    count: u64,
    range: Option<&Range<u64>>,
) -> Result<(), MergeError> {
    let variant = g.variant;
    for (seed, f) in &g.failures {
        let shard = Shard {
            index: f.shard,
            count,
        };
        if let Some(r) = range {
            if !r.contains(seed) || (seed - r.start) % count != f.shard {
                return Err(MergeError::Inconsistent(format!(
                    "{}: shard {shard} of {variant} reports seed {seed}, which is not its own",
                    f.at
                )));
            }
        }
    }
    Ok(())
}

/// The shards of `g` that did not finish (none, or an error when a finished shard's counts
/// disagree with its part or its failure lines).
fn shard_gaps(
    g: &VariantLines,
    count: u64,
    range: Option<&Range<u64>>,
    shard_files: &BTreeMap<u64, &str>,
) -> Result<Vec<Gap>, MergeError> {
    let variant = g.variant;
    let mut missing = Vec::new();
    for index in 0..count {
        let shard = Shard { index, count };
        let lines = g.failure_files.get(&index).map_or(0, |(_, n)| *n);
        let gap = |reason| Gap {
            variant: variant.to_string(),
            shard,
            range: range.cloned(),
            reason,
        };
        match g.summaries.get(&index) {
            Some(s) if s.complete => {
                let want = range.map_or(s.runs, |r| shard.len(r));
                if s.runs != want {
                    return Err(MergeError::Inconsistent(format!(
                        "{}: shard {shard} of {variant} ran {} seeds, not the {want} of its part: it dropped or repeated seeds",
                        s.at, s.runs
                    )));
                }
                if s.failures != lines {
                    return Err(MergeError::Inconsistent(format!(
                        "{}: shard {shard} of {variant} counts {} failures, but the files hold {lines} failure lines of it",
                        s.at, s.failures
                    )));
                }
            }
            Some(s) => missing.push(gap(GapReason::Stopped {
                file: s.file.to_string(),
                runs: s.runs,
            })),
            None if lines > 0 => missing.push(gap(GapReason::Killed {
                file: g.failure_files[&index].0.to_string(),
                failure_lines: lines,
            })),
            None => missing.push(gap(GapReason::Absent {
                file: shard_files.get(&index).map(|f| f.to_string()),
            })),
        }
    }
    Ok(missing)
}

/// One variant merged: its checks, its gaps, its counts.
fn merge_variant(
    g: &VariantLines,
    count: u64,
    range: Option<&Range<u64>>,
    shard_files: &BTreeMap<u64, &str>,
) -> Result<Merged, MergeError> {
    let variant = g.variant;
    failures_in_their_shards(g, count, range)?;
    let missing = shard_gaps(g, count, range, shard_files)?;
    let mut m = Merged {
        variant: variant.to_string(),
        system: g.system.to_string(),
        bug: g.bug.to_string(),
        all: g.all,
        runs: g.summaries.values().map(|s| s.runs).sum(),
        failures: g.failures.len() as u64,
        first_failure: g
            .failures
            .iter()
            .next()
            .map(|(seed, f)| (*seed, f.replay.to_string())),
        failing: Vec::new(),
        classes: BTreeMap::new(),
        runs_per_sec: 0.0,
        missing,
    };
    if m.system.is_empty() {
        // Only failure lines: the variant's words say the system and bug.
        let mut words = variant.split_whitespace();
        while let Some(w) = words.next() {
            match w {
                "--system" => m.system = words.next().unwrap_or("").to_string(),
                "--bug" => m.bug = words.next().unwrap_or("").to_string(),
                _ => {}
            }
        }
        if m.bug.is_empty() {
            m.bug = "none".to_string();
        }
    }
    for (seed, f) in &g.failures {
        m.failing.push((*seed, f.class.clone()));
        *m.classes.entry(f.class.clone()).or_insert(0) += 1;
    }
    let slowest = g
        .summaries
        .values()
        .map(|s| s.elapsed_s)
        .fold(1e-9, f64::max);
    m.runs_per_sec = m.runs as f64 / slowest;
    Ok(m)
}
