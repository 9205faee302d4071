//! openraft's pluggable async runtime (`openraft::AsyncRuntime`, 0.9), implemented on
//! sim-core (the adapter of `examples/openraft-runtime`, copied: the zoo crate has no path
//! into the examples).
//!
//! Every associated type maps onto a sim-core piece: tasks, sleeps, timeouts and the clock
//! are the simulation's (virtual time, scheduling drawn from the input), the random
//! generator is [`sim_core::random::SimRng`] (every bit drawn from the input, through
//! rand 0.8's traits), and oneshots are `futures`' channels (they wake tasks like any
//! other waker). Two things a user has to write by hand, and why:
//!
//! * [`SimInstant`]: openraft's `Instant` trait is foreign and so is
//!   `sim_core::time::Instant`, so the orphan rule needs a newtype; its arithmetic only
//!   forwards to sim-core's.
//! * [`OneshotSender`]: openraft asks for its own `AsyncOneshotSendExt` on the sender.
//!
//! `is_panic` is always false: a panic inside a simulation fails the run (see
//! `sim_core::sim`), so a join handle never carries one.

use std::future::Future;
use std::ops::{Add, AddAssign, Sub, SubAssign};
use std::time::Duration;

use openraft::{AsyncRuntime, OptionalSend};

/// The runtime openraft is given: `RaftTypeConfig { AsyncRuntime = SimRuntime, .. }`.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct SimRuntime;

/// sim-core's virtual instant, as openraft's `Instant`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct SimInstant(pub sim_core::time::Instant);

impl Add<Duration> for SimInstant {
    type Output = SimInstant;
    fn add(self, d: Duration) -> SimInstant {
        SimInstant(self.0 + d)
    }
}

impl AddAssign<Duration> for SimInstant {
    fn add_assign(&mut self, d: Duration) {
        self.0 += d;
    }
}

impl Sub<Duration> for SimInstant {
    type Output = SimInstant;
    fn sub(self, d: Duration) -> SimInstant {
        SimInstant(self.0 - d)
    }
}

impl SubAssign<Duration> for SimInstant {
    fn sub_assign(&mut self, d: Duration) {
        self.0 -= d;
    }
}

impl Sub<SimInstant> for SimInstant {
    type Output = Duration;
    fn sub(self, earlier: SimInstant) -> Duration {
        self.0 - earlier.0
    }
}

impl openraft::Instant for SimInstant {
    fn now() -> Self {
        SimInstant(sim_core::time::now())
    }
}

/// A `futures` oneshot sender, with openraft's sending trait.
pub struct OneshotSender<T>(futures::channel::oneshot::Sender<T>);

impl<T> std::fmt::Debug for OneshotSender<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OneshotSender")
    }
}

impl<T: OptionalSend> openraft::async_runtime::AsyncOneshotSendExt<T> for OneshotSender<T> {
    fn send(self, value: T) -> Result<(), T> {
        self.0.send(value)
    }
}

impl AsyncRuntime for SimRuntime {
    type JoinError = sim_core::rt::JoinError;
    type JoinHandle<T: OptionalSend + 'static> = sim_core::rt::JoinHandle<T>;
    type Sleep = sim_core::time::Sleep;
    type Instant = SimInstant;
    type TimeoutError = sim_core::time::Elapsed;
    type Timeout<R, T: Future<Output = R> + OptionalSend> = sim_core::time::Timeout<T>;
    type ThreadLocalRng = sim_core::random::SimRng;
    type OneshotSender<T: OptionalSend> = OneshotSender<T>;
    type OneshotReceiverError = futures::channel::oneshot::Canceled;
    type OneshotReceiver<T: OptionalSend> = futures::channel::oneshot::Receiver<T>;

    fn spawn<T>(future: T) -> Self::JoinHandle<T::Output>
    where
        T: Future + OptionalSend + 'static,
        T::Output: OptionalSend + 'static,
    {
        sim_core::rt::spawn(future)
    }

    fn sleep(duration: Duration) -> Self::Sleep {
        sim_core::time::sleep(duration)
    }

    fn sleep_until(deadline: Self::Instant) -> Self::Sleep {
        sim_core::time::sleep_until(deadline.0)
    }

    fn timeout<R, F: Future<Output = R> + OptionalSend>(
        duration: Duration,
        future: F,
    ) -> Self::Timeout<R, F> {
        sim_core::time::timeout(duration, future)
    }

    fn timeout_at<R, F: Future<Output = R> + OptionalSend>(
        deadline: Self::Instant,
        future: F,
    ) -> Self::Timeout<R, F> {
        sim_core::time::timeout_at(deadline.0, future)
    }

    fn is_panic(_: &Self::JoinError) -> bool {
        false
    }

    fn thread_rng() -> Self::ThreadLocalRng {
        sim_core::random::rng()
    }

    fn oneshot<T>() -> (Self::OneshotSender<T>, Self::OneshotReceiver<T>)
    where
        T: OptionalSend,
    {
        let (tx, rx) = futures::channel::oneshot::channel();
        (OneshotSender(tx), rx)
    }
}
