//! The progress display of a campaign: one line for the whole sweep (seeds done, runs per
//! second, failures so far, ETA) and one per worker (its runs, runs per second, failures).
//! Drawn on stderr, and only on a terminal (indicatif hides it otherwise).

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

use crate::run_spec::Variant;

pub(super) struct Progress {
    total: ProgressBar,
    workers: Vec<ProgressBar>,
    failures: std::cell::Cell<u64>,
    worker_failures: std::cell::RefCell<Vec<u64>>,
}

impl Progress {
    pub(super) fn new(variant: &Variant, seeds: u64, jobs: usize) -> Progress {
        let multi = MultiProgress::new();
        let total = multi.add(ProgressBar::new(seeds));
        total.set_style(
            ProgressStyle::with_template(
                "{prefix:30} [{bar:30}] {pos}/{len} seeds, {per_sec}, ETA {eta}, {msg}",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
        total.set_prefix(format!(
            "{} {}",
            variant.system.name,
            variant.bug.unwrap_or("(correct)")
        ));
        total.set_message("failures=0");
        let style =
            ProgressStyle::with_template("  worker {prefix:>3}: {pos} runs, {per_sec}, {msg}")
                .expect("valid template");
        let workers = (0..jobs)
            .map(|w| {
                let bar = multi.add(ProgressBar::new_spinner());
                bar.set_style(style.clone());
                bar.set_prefix(w.to_string());
                bar.set_message("failures=0");
                bar
            })
            .collect();
        Progress {
            total,
            workers,
            failures: std::cell::Cell::new(0),
            worker_failures: std::cell::RefCell::new(vec![0; jobs]),
        }
    }

    pub(super) fn advance(&self, worker: usize, runs: u64, failures: u64) {
        self.total.inc(runs);
        if failures > 0 {
            self.failures.set(self.failures.get() + failures);
            self.total
                .set_message(format!("failures={}", self.failures.get()));
        }
        if let Some(bar) = self.workers.get(worker) {
            bar.inc(runs);
            if failures > 0 {
                let mut counts = self.worker_failures.borrow_mut();
                counts[worker] += failures;
                bar.set_message(format!("failures={}", counts[worker]));
            }
        }
    }

    pub(super) fn finish(&self) {
        for bar in &self.workers {
            bar.finish_and_clear();
        }
        self.total.finish_and_clear();
    }
}
