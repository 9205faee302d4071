//! Time per history of the linearizability checker, at 100, 1,000 and 10,000 operations.
//!
//! Run with `cargo bench -p sim-core --bench check`. Each history comes from a simulated
//! concurrent key-value register: 8 clients, each with one operation in flight at a time
//! (get 40%, put 40%, compare-and-set 20%), each taking effect at a random moment between its
//! call and its return, and 5% timing out (applied or not). So every history is
//! linearizable and the checker must prove it: the full search, no early exit. The second
//! column adds one stale read at the end (the search fails, then finds the window). Keys:
//! one key (every operation in one partition, the worst case for length), and 8 keys.
//! Prints the median of several rounds.

use std::hint::black_box;
use std::time::Instant;

use sim_core::check::kv::{Kv, KvInput, KvOutput};
use sim_core::check::{self, OpLog, Pending};

const ROUNDS: usize = 7;
const CLIENTS: usize = 8;

/// xorshift64*: the bench's own fixed-seed randomness.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

enum Slot {
    Idle,
    Called(Pending, KvInput),
    Applied(Pending, KvOutput),
}

fn history(ops: usize, keys: u64, seed: u64) -> OpLog<KvInput, KvOutput> {
    let mut rng = Rng(seed | 1);
    let mut log = OpLog::new();
    let mut store = vec![None::<u64>; keys as usize];
    let mut slots: Vec<Slot> = (0..CLIENTS).map(|_| Slot::Idle).collect();
    let mut started = 0;
    let mut next_value = 0;
    while started < ops || slots.iter().any(|s| !matches!(s, Slot::Idle)) {
        let c = rng.below(CLIENTS as u64) as usize;
        let client = ["c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7"][c];
        slots[c] = match std::mem::replace(&mut slots[c], Slot::Idle) {
            Slot::Idle if started < ops => {
                started += 1;
                let key = rng.below(keys);
                next_value += 1;
                let input = match rng.below(10) {
                    0..=3 => KvInput::Get { key },
                    4..=7 => KvInput::Put {
                        key,
                        value: next_value,
                    },
                    _ => KvInput::Cas {
                        key,
                        from: store[key as usize].unwrap_or(0),
                        to: next_value,
                    },
                };
                Slot::Called(log.call(client, input), input)
            }
            Slot::Idle => Slot::Idle,
            Slot::Called(op, input) => {
                if rng.below(20) == 0 {
                    // Times out; took effect or not.
                    if rng.below(2) == 0 {
                        apply(&mut store, input);
                    }
                    log.time_out(op);
                    Slot::Idle
                } else {
                    Slot::Applied(op, apply(&mut store, input))
                }
            }
            Slot::Applied(op, output) => {
                log.ret(op, output);
                Slot::Idle
            }
        };
    }
    log
}

fn apply(store: &mut [Option<u64>], input: KvInput) -> KvOutput {
    let slot = &mut store[input.key() as usize];
    match input {
        KvInput::Get { .. } => KvOutput::Value(*slot),
        KvInput::Put { value, .. } => {
            *slot = Some(value);
            KvOutput::Done
        }
        KvInput::Cas { from, to, .. } => {
            let swapped = *slot == Some(from);
            if swapped {
                *slot = Some(to);
            }
            KvOutput::Swapped(swapped)
        }
    }
}

fn median_ms(mut f: impl FnMut() -> bool) -> f64 {
    let mut times: Vec<f64> = (0..ROUNDS)
        .map(|_| {
            let started = Instant::now();
            black_box(f());
            started.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[ROUNDS / 2]
}

fn main() {
    println!("ops   keys  linearizable_ms  with_stale_read_ms");
    for ops in [100, 1_000, 10_000] {
        for keys in [1, 8] {
            let log = history(ops, keys, 42 + ops as u64);
            assert!(
                check::linearizable(&Kv, &log).is_ok(),
                "generated histories are linearizable"
            );
            let mut stale = log.clone();
            // A put that returned, then a read of the key that misses it.
            let w = stale.call(
                "w",
                KvInput::Put {
                    key: 0,
                    value: u64::MAX,
                },
            );
            stale.ret(w, KvOutput::Done);
            let r = stale.call("r", KvInput::Get { key: 0 });
            stale.ret(r, KvOutput::Value(None));
            assert!(
                check::linearizable(&Kv, &stale).is_err(),
                "the stale read is caught"
            );
            let pass_ms = median_ms(|| check::linearizable(&Kv, &log).is_ok());
            let fail_ms = median_ms(|| check::linearizable(&Kv, &stale).is_err());
            println!("{ops:<5} {keys:<5} {pass_ms:<16.3} {fail_ms:.3}");
        }
    }
}
