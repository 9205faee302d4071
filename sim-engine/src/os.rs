//! The OS boundary: what a simulation build's OS hooks read instead of the operating system.
//!
//! Code under test often reads the clock or entropy straight from the OS —
//! `std::time::Instant::now`, `SystemTime::now`, `HashMap`'s `RandomState`, the `getrandom`
//! crate behind `rand` 0.9 — bypassing sim-core's [`crate::time`] and node random generator.
//! The `sim-os` crate interposes those C calls (`clock_gettime`, `gettimeofday`, `time`,
//! `getrandom`, `getentropy`) in any binary that links it (`use sim_os as _;`), and each call
//! asks this module what to answer. Outside a run every answer is "pass through to the OS",
//! so a binary that links the hooks behaves normally until a simulation is running on the
//! calling thread.
//!
//! # The determinism boundary
//!
//! | what the code does | inside a run | outside a run |
//! |---|---|---|
//! | monotonic clocks (`Instant::now`, `CLOCK_MONOTONIC*`, `CLOCK_BOOTTIME`) | [`MONOTONIC_START_NS`] + virtual time | the OS |
//! | wall clocks (`SystemTime::now`, `CLOCK_REALTIME*`, `gettimeofday`, `time`) | the current node's wall clock, with its clock faults ([`crate::time::system_now`]); the true virtual date outside any node | the OS |
//! | entropy (`getrandom`, `getentropy`) | bytes drawn from the run's input (label `os.entropy`) | the OS |
//! | `HashMap`'s `RandomState` keys | fixed for the run when it runs [`isolated`] (see below) | the OS |
//! | `pthread_create` (threads, `spawn_blocking`), `socket` (real network) | refused (`EPERM` / `EACCES`); the run fails as escaped | the OS |
//! | `epoll_wait` of a runtime declared with [`set_idle_waiter`] (a tokio node's) | returns at once; the timeout goes to the runtime's driver | the OS |
//! | `write` to an event fd claimed by [`claim_wakeup_fds`] | skipped; wakes the claimer's waker | the OS |
//!
//! Not covered, and so still able to leak nondeterminism into a run: raw system calls (the
//! `getrandom` crate 0.2, which `rand` 0.8's `OsRng` and `thread_rng` use, calls
//! `SYS_getrandom` directly — use [`crate::random::rng`] instead), reads of
//! `/dev/urandom` or any file (`open` is not interposed: the panic machinery itself reads
//! files), CPU-time clocks, `rdtsc`, and anything a C library does behind its own system
//! calls. A run that reaches a refused call fails with a message naming the call, so an
//! escape is a clear error rather than a replay that silently differs.
//!
//! # Why runs with the hooks go on a thread of their own
//!
//! std draws `HashMap` hash keys from the OS once per thread and then counts up from them,
//! one step per `RandomState`. Two runs on one thread therefore see different keys — the
//! second continues the first's count — and a `HashMap` iterated in order would make a run
//! depend on the runs before it. [`isolated`] runs a closure on a fresh thread whose keys are
//! fixed before anything else can create a `RandomState`, so each run starts from the same
//! keys; sim-core's own run paths (sweeps, `sim run`, the fuzz target, `sim_core::system`'s
//! runs) use it whenever the hooks are linked ([`hooks_linked`]). A hand-written test that
//! builds a [`crate::sim::Sim`] itself wraps build and run in [`isolated`].
//!
//! ```
//! use sim_core::os::{clock_reading_ns, isolated, OsClock, MONOTONIC_START_NS};
//! use sim_core::sim::{Config, Sim};
//!
//! // Outside a run there is nothing to answer: the hooks pass through to the OS.
//! assert_eq!(clock_reading_ns(OsClock::Monotonic), None);
//! let report = isolated(|| {
//!     let mut sim = Sim::new(Config::default());
//!     sim.client("c", |_| async {
//!         sim_core::time::sleep(std::time::Duration::from_millis(5)).await;
//!         assert_eq!(clock_reading_ns(OsClock::Monotonic), Some(MONOTONIC_START_NS + 5_000_000));
//!     });
//!     sim.run_seed(1)
//! });
//! assert!(report.outcome.class.is_pass());
//! ```

use std::cell::Cell;
use std::sync::OnceLock;

use crate::choice::Source;
use crate::time::START_UNIX_NS;
use crate::world;

use crate::choice::lanes::Label;

// The labels this part draws, each declared with its lane: a label whose text would read
// another lane does not compile.
const OS_ENTROPY: Label = Label::workload("os.entropy");

/// What a monotonic clock reads at the start of every run: a simulated uptime of one day, so
/// that code subtracting a timeout from "now" (`Instant::now() - Duration::from_secs(60)`)
/// does not underflow at time zero.
pub const MONOTONIC_START_NS: u64 = 86_400 * 1_000_000_000;

/// The two kinds of OS clock a hook can be asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OsClock {
    /// Counts from an arbitrary start and never goes back (`CLOCK_MONOTONIC`, `Instant`).
    Monotonic,
    /// The date and time (`CLOCK_REALTIME`, `SystemTime`), nanoseconds since the Unix epoch.
    Realtime,
}

/// Switches for tests that break the hooks on purpose, to see the tests that guard them fail.
#[doc(hidden)]
pub mod knobs {
    use std::cell::Cell;
    thread_local! {
        /// When false, every hook passes through to the OS, inside a run too.
        pub static HOOKS_ON: Cell<bool> = const { Cell::new(true) };
    }
}

thread_local! {
    /// Set by [`isolated`] just before it creates the thread's first `RandomState`: the next
    /// entropy read is std asking for this thread's hash keys.
    static PRIMING_HASH_KEYS: Cell<bool> = const { Cell::new(false) };
    /// The first refused call of the run in progress on this thread.
    static ESCAPE: Cell<Option<&'static str>> = const { Cell::new(None) };
    /// Set when a hook answered a probe (see [`hooks_linked`]).
    static PROBE_ANSWERED: Cell<bool> = const { Cell::new(false) };
    /// Set while [`hooks_linked`] probes.
    static PROBING: Cell<bool> = const { Cell::new(false) };
}

/// The environment variable that turns the hooks off for a whole process: `SIM_OS_HOOKS=off`
/// makes every hook pass through to the OS, which shows what the hooks hide (`sim
/// determinism` then reports a system that reads the OS as nondeterministic).
pub const HOOKS_ENV: &str = "SIM_OS_HOOKS";

/// `SIM_OS_HOOKS` holds neither `on` nor `off`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("SIM_OS_HOOKS={0:?} is not a setting; set it to `on` (the default) or `off`")]
pub struct BadHooksSetting(pub String);

/// The process's `SIM_OS_HOOKS` setting: true for on (or unset). Command lines call it at
/// start, so a bad value is an error there; inside a hook a bad value counts as on.
pub fn hooks_setting() -> Result<bool, BadHooksSetting> {
    match std::env::var(HOOKS_ENV) {
        Err(_) => Ok(true),
        Ok(v) if v == "on" => Ok(true),
        Ok(v) if v == "off" => Ok(false),
        Ok(v) => Err(BadHooksSetting(v)),
    }
}

fn hooks_on() -> bool {
    static SETTING: OnceLock<bool> = OnceLock::new();
    knobs::HOOKS_ON.with(Cell::get) && *SETTING.get_or_init(|| hooks_setting().unwrap_or(true))
}

/// What an OS clock reads inside the run on this thread, in nanoseconds (monotonic: since
/// the simulated boot; realtime: since the Unix epoch); `None` outside a run, where the hook
/// asks the OS.
///
/// Also `None` while sim-core itself holds the world (a hook reached from inside the engine,
/// which never reads the OS clock).
pub fn clock_reading_ns(clock: OsClock) -> Option<u64> {
    if !hooks_on() {
        return None;
    }
    world::try_with_installed(|w| {
        let now_ns = w.now_ns();
        match clock {
            OsClock::Monotonic => MONOTONIC_START_NS + now_ns,
            OsClock::Realtime => match w.current_node() {
                Some(node) => w.clocks().read(node, now_ns),
                None => START_UNIX_NS + now_ns,
            },
        }
    })
}

/// Fills `buf` with entropy for a hook: bytes drawn from the run's input inside a run (or
/// std's fixed hash keys while [`isolated`] primes them). Returns false outside a run, where
/// the hook asks the OS.
pub fn fill_entropy(buf: &mut [u8]) -> bool {
    if PROBING.with(Cell::get) {
        PROBE_ANSWERED.with(|a| a.set(true));
        return true;
    }
    if PRIMING_HASH_KEYS.with(|p| p.replace(false)) {
        // Fixed keys: iteration order is then a function of what was inserted, and the
        // shrinker does not see it change under an edit elsewhere in the input.
        buf.fill(0x5A);
        return true;
    }
    if !hooks_on() {
        return false;
    }
    world::try_with_installed(|w| w.source().fill(OS_ENTROPY.name(), buf)).is_some()
}

/// A hook's verdict on a call that would leave the simulation (an OS thread, a real socket):
/// inside a run it is refused — returns true, and the run will end failed, naming `call` —
/// outside a run it is allowed (false).
pub fn refuse_escape(call: &'static str) -> bool {
    if !hooks_on() || !world::in_simulation() {
        return false;
    }
    ESCAPE.with(|e| {
        if e.get().is_none() {
            e.set(Some(call));
        }
    });
    true
}

/// Clears the escape record at the start of a run.
pub(crate) fn reset_escape() {
    ESCAPE.with(|e| e.set(None));
}

/// The first call refused during the run that just ended, if any.
pub(crate) fn take_escape() -> Option<&'static str> {
    ESCAPE.with(Cell::take)
}

/// Where an absorbed idle wait goes: the waker to call, and the timeout it carried.
struct IdleWaiter {
    waker: std::task::Waker,
    timeout_ms: Option<i32>,
}

thread_local! {
    /// Set while a runtime that waits on an OS poller runs inside the run on this thread.
    static IDLE_WAITER: std::cell::RefCell<Option<IdleWaiter>> =
        const { std::cell::RefCell::new(None) };
}

/// Declares that an async runtime is about to run on this thread inside the run, and that its
/// idle waits on the OS poller (`epoll_wait`, the wait of tokio's I/O driver) are to be
/// absorbed: while `waker` is set, such a wait returns at once with no events, its timeout is
/// kept for [`take_idle_timeout`], and `waker` is woken so the runtime's caller regains
/// control. `None` ends the declaration.
///
/// This is how a tokio node learns when its runtime next has work of its own (the earliest
/// timer) without tokio exposing it: nothing real can arrive inside a simulation, so the
/// runtime only ever waits for its timers, and the timeout it asks the OS for is the
/// distance to the earliest one, in whole milliseconds (tokio's timer resolution).
pub fn set_idle_waiter(waker: Option<std::task::Waker>) {
    IDLE_WAITER.with(|w| {
        *w.borrow_mut() = waker.map(|waker| IdleWaiter {
            waker,
            timeout_ms: None,
        })
    });
}

/// The timeout of the last idle wait absorbed since the previous call (`-1`: no timeout, the
/// runtime has no timer), if one was.
pub fn take_idle_timeout() -> Option<i32> {
    IDLE_WAITER.with(|w| w.borrow_mut().as_mut().and_then(|w| w.timeout_ms.take()))
}

/// A hook's verdict on a wait on the OS poller with `timeout_ms` (`-1`: forever): true when
/// the wait is absorbed (the hook returns at once, reporting no events). Absorbed only while
/// a runtime has declared itself with [`set_idle_waiter`]; a zero timeout (a poll that does
/// not wait) is absorbed without waking anyone.
pub fn absorb_idle_wait(timeout_ms: i32) -> bool {
    if !hooks_on() {
        return false;
    }
    IDLE_WAITER.with(|w| {
        let Ok(mut slot) = w.try_borrow_mut() else {
            return false;
        };
        let Some(waiter) = slot.as_mut() else {
            return false;
        };
        if timeout_ms != 0 {
            waiter.timeout_ms = Some(timeout_ms);
            waiter.waker.wake_by_ref();
        }
        true
    })
}

thread_local! {
    /// Set while [`claim_wakeup_fds`] builds a runtime: the waker its fds are claimed for.
    static CLAIMING: std::cell::RefCell<Option<std::task::Waker>> =
        const { std::cell::RefCell::new(None) };
    /// The event fds that runtimes built by [`claim_wakeup_fds`] wake themselves with, and
    /// the waker a write to each wakes instead.
    static CLAIMED_FDS: std::cell::RefCell<Vec<(i32, std::task::Waker)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `build`, which builds an async runtime whose idle waits are absorbed (see
/// [`set_idle_waiter`]), and claims the event fds it opens (tokio's I/O driver wakes itself
/// by writing to one): a later write to a claimed fd is skipped by the hooks, and wakes
/// `on_write` instead.
///
/// Such a runtime never blocks in the OS, so nobody waits for its wake-up signal: skipping
/// the write spares a system call on every wake (most of a tokio node's cost per step
/// otherwise). What the write meant still has to reach whoever drives the runtime: it is how
/// tokio says "a task of mine was woken from outside me" (by another node's task, or by a
/// sim-core timer or delivery), and `on_write` is that driver's waker.
pub fn claim_wakeup_fds<R>(on_write: std::task::Waker, build: impl FnOnce() -> R) -> R {
    struct Unclaim;
    impl Drop for Unclaim {
        fn drop(&mut self) {
            CLAIMING.with(|c| c.borrow_mut().take());
        }
    }
    CLAIMING.with(|c| *c.borrow_mut() = Some(on_write));
    let _unclaim = Unclaim;
    build()
}

/// For the hooks: an event fd was opened; claimed if [`claim_wakeup_fds`] is building.
pub fn note_event_fd(fd: i32) {
    let claimer = CLAIMING
        .try_with(|c| c.try_borrow().ok().and_then(|c| c.clone()))
        .ok()
        .flatten();
    if let Some(waker) = claimer {
        let _ = CLAIMED_FDS.try_with(|fds| {
            if let Ok(mut fds) = fds.try_borrow_mut() {
                fds.push((fd, waker));
            }
        });
    }
}

/// For the hooks: true when a write to `fd` is to be skipped (a claimed wake-up fd); the
/// claimer's waker has then been woken.
pub fn skips_write(fd: i32) -> bool {
    CLAIMED_FDS
        .try_with(|fds| {
            // A shared borrow, held while waking: a waker that writes to a claimed fd again
            // comes back here, and only reads.
            let Ok(fds) = fds.try_borrow() else {
                return false;
            };
            match fds.iter().find(|(claimed, _)| *claimed == fd) {
                Some((_, waker)) => {
                    waker.wake_by_ref();
                    true
                }
                None => false,
            }
        })
        .unwrap_or(false)
}

/// For the hooks: `fd` is being closed, and is claimed no more.
pub fn note_close(fd: i32) {
    let _ = CLAIMED_FDS.try_with(|fds| {
        if let Ok(mut fds) = fds.try_borrow_mut() {
            fds.retain(|(claimed, _)| *claimed != fd);
        }
    });
}

/// True when this binary links OS hooks that consult this module (the `sim-os` crate).
///
/// Probed once per process: an empty `getrandom` call reaches the hook if one is linked (it
/// answers and is noticed), and the C library otherwise (which reads nothing for an empty
/// buffer).
pub fn hooks_linked() -> bool {
    static LINKED: OnceLock<bool> = OnceLock::new();
    *LINKED.get_or_init(|| {
        unsafe extern "C" {
            fn getrandom(buf: *mut u8, len: usize, flags: u32) -> isize;
        }
        PROBING.with(|p| p.set(true));
        let mut nothing = [0u8; 0];
        // SAFETY: `getrandom` (the C library's, or a hook with its signature) writes at most
        // `len` = 0 bytes to `buf`, a valid pointer to an empty array; it has no other effect.
        unsafe { getrandom(nothing.as_mut_ptr(), 0, 0) };
        PROBING.with(|p| p.set(false));
        PROBE_ANSWERED.with(Cell::take)
    })
}

/// Runs `f` on a fresh thread whose std `HashMap` keys are fixed (when the hooks are linked),
/// and returns its result; a panic in `f` is resumed here.
///
/// See the [module docs](self) for why. Without the hooks it still runs `f` on a fresh thread,
/// but the keys come from the OS.
pub fn isolated<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    std::thread::scope(|scope| {
        let runner = std::thread::Builder::new()
            .name("sim-run".into())
            .spawn_scoped(scope, || {
                PRIMING_HASH_KEYS.with(|p| p.set(true));
                // The thread's first `RandomState` asks for its keys: answered by the priming.
                let _ = std::collections::hash_map::RandomState::new();
                PRIMING_HASH_KEYS.with(|p| p.set(false));
                f()
            })
            .expect("spawning a thread for an isolated run");
        match runner.join() {
            Ok(result) => result,
            Err(payload) => std::panic::resume_unwind(payload),
        }
    })
}

/// Runs `f` [`isolated`] for a system that asks for a thread per run, and on this thread
/// otherwise: how sim-core's own run paths start a run.
pub fn run_maybe_isolated<R: Send>(thread_per_run: bool, f: impl FnOnce() -> R + Send) -> R {
    if thread_per_run {
        isolated(f)
    } else {
        f()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outside_a_run_every_hook_passes_through() {
        assert_eq!(clock_reading_ns(OsClock::Monotonic), None);
        assert_eq!(clock_reading_ns(OsClock::Realtime), None);
        assert!(!fill_entropy(&mut [0u8; 4]));
        assert!(!refuse_escape("socket"));
    }
}
