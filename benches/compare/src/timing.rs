//! Wall-time helpers shared by the comparison binaries, so every engine's median is taken the
//! same way.

use std::time::Instant;

/// The median of `v` (the upper middle for an even count).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// The wall time of `f`, in microseconds.
pub fn time_us(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64() * 1e6
}
