//! A deterministic select: wait for the first of several futures, asking them in a fixed order.
//!
//! `futures::select!` (and `futures::stream_select!`) poll ready branches in a random order,
//! drawn from a thread-local generator that carries over from one run to the next on the
//! same thread: the same input can take a different branch in a sweep than in its replay.
//! Inside a simulation, ask in a fixed order instead, so a tie is broken by the schedule (which
//! the input decides) and never by the select:
//!
//! * `futures::select_biased!` (needs the `futures` crate's `async-await` feature);
//! * `tokio::select! { biased; ... }`; in a sim-tokio node plain `tokio::select!` is also a
//!   function of the input, since each node's runtime seeds tokio's generator from it (with
//!   `--cfg tokio_unstable`, see sim-tokio), but `biased;` says so in the code;
//! * `futures::future::select(a, b)` for two futures (it polls `a` first);
//! * [`first_ready`] below, for any number of futures with one output type and no macro.
//!
//! The workspace's `clippy.toml` files flag `futures::select!` and `futures::stream_select!`
//! (`disallowed-macros`; an error under CI's `-D warnings`). Clippy cannot tell
//! `tokio::select!` with `biased;` from one without, so that one is a rule to keep by reading.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

/// Waits for the first of `futures` to finish, polling them in array order every time, and
/// returns its position and output. When several are ready at once the first in the array
/// wins, so which branch a run takes depends only on what is ready, never on chance.
///
/// The futures are borrowed: those that did not finish can be passed again (the pattern of
/// a `select!` in a loop). One that finished must not be: a finished `async` block panics
/// when polled again.
///
/// ```
/// use std::pin::pin;
/// use std::time::Duration;
/// use sim_core::select::first_ready;
/// use sim_core::sim::{Config, Sim};
/// use sim_core::time::sleep;
///
/// let mut sim = Sim::new(Config::default());
/// sim.client("c", |_| async {
///     // Both are ready at 5ms: the first in the array wins, in every run.
///     let mut fast = pin!(async { sleep(Duration::from_millis(5)).await; "fast" });
///     let mut tied = pin!(async { sleep(Duration::from_millis(5)).await; "tied" });
///     let mut slow = pin!(async { sleep(Duration::from_millis(9)).await; "slow" });
///     let (index, name) = first_ready([fast.as_mut(), tied.as_mut(), slow.as_mut()]).await;
///     assert_eq!((index, name), (0, "fast"));
///     // The others are still there: the next call finds the tie's loser at once.
///     let (index, name) = first_ready([tied.as_mut(), slow.as_mut()]).await;
///     assert_eq!((index, name), (0, "tied"));
/// });
/// assert!(sim.run_seed(7).outcome.class.is_pass());
/// ```
pub async fn first_ready<T, const N: usize>(
    mut futures: [Pin<&mut (dyn Future<Output = T> + '_)>; N],
) -> (usize, T) {
    const { assert!(N > 0, "first_ready of no futures would wait forever") };
    std::future::poll_fn(move |cx| {
        for (index, future) in futures.iter_mut().enumerate() {
            if let Poll::Ready(output) = future.as_mut().poll(cx) {
                return Poll::Ready((index, output));
            }
        }
        Poll::Pending
    })
    .await
}
