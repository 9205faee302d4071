//! Stopping on a signal: SIGINT (Ctrl-C), SIGTERM (what `timeout`, CI cancellation and
//! Kubernetes send) and SIGHUP stop a sweep cleanly — the runs in progress finish, then the
//! summary so far and the replay lines are printed — and a second signal ends the process at
//! once. Which signal arrived decides the exit status (see [`Stopped::exit_code`]).
//!
//! On Unix the handler is a plain `sigaction` handler: the `ctrlc` crate handles SIGTERM too
//! (its `termination` feature) but does not say which signal arrived, and the exit status
//! must. The handler only stores atomics and calls `write` and `_exit`, which is all a signal
//! handler may do.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The signal that stopped a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Stopped {
    /// SIGINT, Ctrl-C.
    Interrupt,
    /// SIGTERM.
    Terminate,
    /// SIGHUP, the terminal closed.
    HangUp,
}

impl Stopped {
    /// The exit status of a sweep this signal stopped. A terminating signal (SIGTERM, SIGHUP)
    /// always gives 128 + its number, as if the signal had ended the process, so a supervisor
    /// reads "terminated on request"; the failures found are printed and in the failure log.
    /// Ctrl-C gives 1 if a failure was found, else 130 (128 + SIGINT).
    pub(super) fn exit_code(self, any_failure: bool) -> i32 {
        match self {
            Stopped::Interrupt if any_failure => 1,
            Stopped::Interrupt => 130,
            Stopped::Terminate => 143,
            Stopped::HangUp => 129,
        }
    }
}

#[cfg(unix)]
mod imp {
    use super::*;
    use std::sync::atomic::{AtomicI32, AtomicPtr};

    /// The first signal received, 0 before any.
    static SIGNAL: AtomicI32 = AtomicI32::new(0);
    /// The stop flag of the command line that installed the handler (leaked: it lives as
    /// long as the process).
    static STOP: AtomicPtr<AtomicBool> = AtomicPtr::new(std::ptr::null_mut());

    const MESSAGE: &[u8] =
        b"\nstopping: finishing the runs in progress (Ctrl-C or SIGTERM again to quit now)\n";

    extern "C" fn on_signal(signal: libc::c_int) {
        if SIGNAL
            .compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
        {
            // SAFETY: `_exit` is async-signal-safe; a second signal asks to quit now.
            unsafe { libc::_exit(128 + signal) };
        }
        let stop = STOP.load(Ordering::SeqCst);
        if !stop.is_null() {
            // SAFETY: the pointer comes from `Arc::into_raw` and is never freed.
            unsafe { (*stop).store(true, Ordering::SeqCst) };
        }
        // SAFETY: `write` is async-signal-safe; the buffer is static. A failed write (a closed
        // standard error) loses only the message.
        let _ = unsafe { libc::write(libc::STDERR_FILENO, MESSAGE.as_ptr().cast(), MESSAGE.len()) };
    }

    pub(super) fn install(stop: &Arc<AtomicBool>) -> Result<(), String> {
        STOP.store(Arc::into_raw(Arc::clone(stop)).cast_mut(), Ordering::SeqCst);
        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            // SAFETY: a zeroed sigaction is a valid empty one; the handler is async-signal-safe.
            let failed = unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
                action.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(signal, &action, std::ptr::null_mut()) != 0
            };
            if failed {
                return Err(std::io::Error::last_os_error().to_string());
            }
        }
        Ok(())
    }

    pub(super) fn received() -> Option<Stopped> {
        match SIGNAL.load(Ordering::SeqCst) {
            libc::SIGINT => Some(Stopped::Interrupt),
            libc::SIGTERM => Some(Stopped::Terminate),
            libc::SIGHUP => Some(Stopped::HangUp),
            _ => None,
        }
    }
}

#[cfg(not(unix))]
mod imp {
    use super::*;

    static RECEIVED: AtomicBool = AtomicBool::new(false);

    pub(super) fn install(stop: &Arc<AtomicBool>) -> Result<(), String> {
        let stop = Arc::clone(stop);
        ctrlc::set_handler(move || {
            if RECEIVED.swap(true, Ordering::SeqCst) {
                std::process::exit(130);
            }
            stop.store(true, Ordering::SeqCst);
            super::super::output::to_stderr(
                "\nstopping: finishing the runs in progress (Ctrl-C again to quit now)",
            );
        })
        .map_err(|e| e.to_string())
    }

    pub(super) fn received() -> Option<Stopped> {
        RECEIVED
            .load(Ordering::SeqCst)
            .then_some(Stopped::Interrupt)
    }
}

/// Makes SIGINT, SIGTERM and SIGHUP set `stop` (a second one ends the process at once).
pub(super) fn install(stop: &Arc<AtomicBool>) -> Result<(), String> {
    imp::install(stop)
}

/// The signal that stopped this process's command, if one did.
pub(super) fn received() -> Option<Stopped> {
    imp::received()
}
