//! How far one toggled fault re-maps the rest of a run, under the flat encoding (before lanes)
//! and under the lane encoding.
//!
//! `cargo run --release -p acceptance --example mutation_study -- [SYSTEM] [SEEDS]`
//! (defaults: `raft-kv`, 200 seeds).
//!
//! For each seed the run is recorded once (every draw, and the same draws written as flat
//! bytes). Then, for up to two fault events that fired and two that did not, the event is
//! toggled in each encoding — in the flat bytes by rewriting the bytes the chance read, in
//! the lanes by re-encoding the draw log with that one event flipped — and the run is
//! repeated. The study reports the share of the draws after the toggled one that are
//! unchanged, compared two ways: by position in the draw sequence, and by (label, how many
//! draws of that label came before), which forgives a shift when the toggle adds or removes
//! draws. Mean and median over all toggles, per direction.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use sim_core::choice::{
    bytes_for_bound, encode, Bytes, Choices, Draw, DrawValue, FlatBytes, Seeded, Source,
};

/// A fault event of the recorded run: where it is in the draw log and in the flat bytes.
#[derive(Clone, Copy)]
struct EventSite {
    draw_index: usize,
    offset: usize,
    den: u64,
    fired: bool,
}

#[derive(Default)]
struct Log {
    draws: Vec<Draw>,
    flat: Vec<u8>,
    events: Vec<EventSite>,
}

/// Wraps a source, logs its draws and writes them as flat bytes.
struct Study<S> {
    inner: S,
    log: Rc<RefCell<Log>>,
}

fn push_be(out: &mut Vec<u8>, value: u64, width: usize) {
    out.extend_from_slice(&value.to_be_bytes()[8 - width..]);
}

impl<S: Source> Source for Study<S> {
    fn draw(&mut self, label: &'static str, bound: u64) -> u64 {
        let value = self.inner.draw(label, bound);
        if bound > 1 {
            let mut log = self.log.borrow_mut();
            log.draws.push(Draw {
                label: label.to_string(),
                value: DrawValue::Int { bound, value },
            });
            push_be(&mut log.flat, value, bytes_for_bound(bound));
        }
        value
    }

    fn fill(&mut self, label: &'static str, buf: &mut [u8]) {
        self.inner.fill(label, buf);
        let mut log = self.log.borrow_mut();
        log.draws.push(Draw {
            label: label.to_string(),
            value: DrawValue::Raw(buf.to_vec()),
        });
        log.flat.extend_from_slice(buf);
    }

    fn draw_event(&mut self, label: &'static str, num: u64, den: u64) -> bool {
        let fired = self.inner.draw_event(label, num, den);
        let mut log = self.log.borrow_mut();
        let site = EventSite {
            draw_index: log.draws.len(),
            offset: log.flat.len(),
            den,
            fired,
        };
        log.events.push(site);
        log.draws.push(Draw {
            label: label.to_string(),
            value: DrawValue::Event { fired },
        });
        // A flat chance fires on the top `num` values below `den`.
        push_be(
            &mut log.flat,
            if fired { den - 1 } else { 0 },
            bytes_for_bound(den),
        );
        fired
    }

    fn is_exhausted(&self) -> bool {
        self.inner.is_exhausted()
    }

    fn mark_op(&mut self) {
        self.inner.mark_op()
    }
}

fn run(spec: &sim_core::system::SystemSpec, source: impl Source + 'static) -> Log {
    let log = Rc::new(RefCell::new(Log::default()));
    let opts = spec.options(None).expect("the correct variant");
    (spec.build)(&opts).run(Box::new(Study {
        inner: source,
        log: log.clone(),
    }));
    log.take()
}

/// Shares of `before[from..]` unchanged in `after`: by position, and by (label, ordinal).
fn unchanged(before: &[Draw], after: &[Draw], from: usize) -> (f64, f64) {
    let later = before.len().saturating_sub(from);
    if later == 0 {
        return (1.0, 1.0);
    }
    let positional = (from..before.len())
        .filter(|&j| after.get(j) == Some(&before[j]))
        .count();
    let (kb, ka) = (by_label_ordinal(before), by_label_ordinal(after));
    let same_keyed = kb
        .iter()
        .filter(|(_, (j, _))| *j >= from)
        .filter(|(key, (_, value))| ka.get(*key).is_some_and(|(_, v)| v == value))
        .count();
    (
        positional as f64 / later as f64,
        same_keyed as f64 / later as f64,
    )
}

type Keyed<'a> = BTreeMap<(&'a str, usize), (usize, &'a DrawValue)>;

/// Each draw keyed by its label and how many draws of that label came before it, with its
/// position and value.
fn by_label_ordinal(draws: &[Draw]) -> Keyed<'_> {
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    draws
        .iter()
        .enumerate()
        .map(|(j, d)| {
            let n = seen.entry(d.label.as_str()).or_default();
            *n += 1;
            ((d.label.as_str(), *n), (j, &d.value))
        })
        .collect()
}

#[derive(Default)]
struct Tally {
    shares: Vec<(f64, f64)>,
}

impl Tally {
    fn line(&mut self, name: &str) -> String {
        if self.shares.is_empty() {
            return format!("{name}: no toggles");
        }
        let n = self.shares.len();
        let stat = |pick: fn(&(f64, f64)) -> f64, v: &mut Vec<(f64, f64)>| {
            let mut xs: Vec<f64> = v.iter().map(pick).collect();
            xs.sort_by(f64::total_cmp);
            let mean = xs.iter().sum::<f64>() / n as f64;
            (100.0 * mean, 100.0 * xs[(n - 1) / 2])
        };
        let (pm, pmed) = stat(|s| s.0, &mut self.shares);
        let (km, kmed) = stat(|s| s.1, &mut self.shares);
        format!(
            "{name}: toggles={n} positional_mean={pm:.1}% positional_median={pmed:.1}% \
             keyed_mean={km:.1}% keyed_median={kmed:.1}%"
        )
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let system = args.next().unwrap_or_else(|| "raft-kv".into());
    let seeds: u64 = args
        .next()
        .map(|s| s.parse().expect("SEEDS must be a number"))
        .unwrap_or(200);
    let specs = systems::all();
    let spec = sim_core::system::find(&specs, &system).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2)
    });
    // [flat off, flat on, lanes off, lanes on]
    let mut tallies: [Tally; 4] = Default::default();
    let mut events_per_run = Vec::new();
    for seed in 0..seeds {
        let base = run(spec, Seeded::new(seed));
        let lanes = encode(&base.draws);
        // Both encodings must replay the recorded run before anything is toggled.
        assert!(run(spec, FlatBytes::new(base.flat.clone())).draws == base.draws);
        assert!(run(spec, Bytes::new(lanes)).draws == base.draws);
        events_per_run.push(base.events.len());
        let mut pick = Seeded::new(seed ^ 0x5eed);
        for fired in [true, false] {
            let sites: Vec<EventSite> = base
                .events
                .iter()
                .copied()
                .filter(|e| e.fired == fired)
                .collect();
            for _ in 0..2.min(sites.len()) {
                let site = sites[pick.below("site", sites.len() as u64) as usize];
                let mut flat = base.flat.clone();
                let width = bytes_for_bound(site.den);
                let value = if fired { 0 } else { site.den - 1 };
                flat[site.offset..site.offset + width]
                    .copy_from_slice(&value.to_be_bytes()[8 - width..]);
                let after_flat = run(spec, FlatBytes::new(flat)).draws;
                let mut draws = base.draws.clone();
                draws[site.draw_index].value = DrawValue::Event { fired: !fired };
                let after_lanes = run(spec, Bytes::new(encode(&draws))).draws;
                let from = site.draw_index + 1;
                let slot = usize::from(!fired);
                tallies[slot]
                    .shares
                    .push(unchanged(&base.draws, &after_flat, from));
                tallies[2 + slot]
                    .shares
                    .push(unchanged(&base.draws, &after_lanes, from));
            }
        }
    }
    events_per_run.sort_unstable();
    println!(
        "system={system} seeds={seeds} fault_events_median={}",
        events_per_run[(events_per_run.len() - 1) / 2]
    );
    for (tally, name) in tallies.iter_mut().zip([
        "flat  fault turned off",
        "flat  fault turned on ",
        "lanes fault turned off",
        "lanes fault turned on ",
    ]) {
        println!("{}", tally.line(name));
    }
}
