//! Output that never panics: standard error written best-effort, and a standard output whose
//! reader may go away (`sim sweep ... | head -1`).
//!
//! A closed pipe is not an error of the command: a command whose standard output closes ends
//! quietly with [`PIPE_CLOSED`], the status a shell reports for a process a pipe ended (128 +
//! SIGPIPE), and prints no message about it. `eprintln!` panics when standard error is a
//! closed pipe (`2>&1 | head`), so messages go through [`to_stderr`] instead.

use std::io::{ErrorKind, Write};

use super::CliError;

/// Exit status when standard output closed before the command finished: 128 + SIGPIPE.
pub(super) const PIPE_CLOSED: i32 = 141;

/// Writes `text` and a newline to standard error; a closed or full standard error loses the
/// line rather than ending the command (what was found is on standard output or in files).
pub(super) fn to_stderr(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{text}");
}

/// Writes `bytes` to standard error as they are, best-effort as [`to_stderr`].
pub(super) fn bytes_to_stderr(bytes: &[u8]) {
    let _ = std::io::stderr().lock().write_all(bytes);
}

/// True if `error` is a write to a pipe whose reader has gone.
pub(super) fn is_closed_pipe(error: &CliError) -> bool {
    matches!(error, CliError::Output(e) if e.kind() == ErrorKind::BrokenPipe)
}

/// A writer that notices its reader going away: after the first broken-pipe error it drops
/// every write (reporting success), and [`Watched::closed`] says so. Other errors (a full
/// disk) are returned as they are.
pub(super) struct Watched<'a> {
    inner: &'a mut dyn Write,
    closed: bool,
}

impl<'a> Watched<'a> {
    pub(super) fn new(inner: &'a mut dyn Write) -> Self {
        Watched {
            inner,
            closed: false,
        }
    }

    /// True once a write found the reader gone.
    pub(super) fn closed(&self) -> bool {
        self.closed
    }

    fn check<T>(&mut self, result: std::io::Result<T>, or: T) -> std::io::Result<T> {
        match result {
            Err(e) if e.kind() == ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(or)
            }
            other => other,
        }
    }
}

impl Write for Watched<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        let written = self.inner.write(buf);
        self.check(written, buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.closed {
            return Ok(());
        }
        let flushed = self.inner.flush();
        self.check(flushed, ())
    }
}

/// True if this process's standard output is a pipe or socket whose reader has gone, checked
/// without writing (a sweep writes its results only at the end, so it asks while it runs).
#[cfg(unix)]
pub(super) fn stdout_reader_gone() -> bool {
    let mut fd = libc::pollfd {
        fd: libc::STDOUT_FILENO,
        events: libc::POLLOUT,
        revents: 0,
    };
    // SAFETY: one valid pollfd, a timeout of zero: the call only reads the descriptor's state.
    let ready = unsafe { libc::poll(&mut fd, 1, 0) };
    ready > 0 && fd.revents & (libc::POLLERR | libc::POLLHUP) != 0
}

/// Elsewhere a closed standard output is noticed at the next write.
#[cfg(not(unix))]
pub(super) fn stdout_reader_gone() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer whose reader has gone.
    struct Gone;

    impl Write for Gone {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Err(ErrorKind::BrokenPipe.into())
        }
    }

    #[test]
    fn a_closed_pipe_is_noticed_and_later_writes_dropped() {
        let mut gone = Gone;
        let mut out = Watched::new(&mut gone);
        assert!(!out.closed());
        writeln!(out, "first").unwrap();
        assert!(out.closed());
        writeln!(out, "second").unwrap();
        out.flush().unwrap();

        let mut open = Vec::new();
        let mut out = Watched::new(&mut open);
        writeln!(out, "kept").unwrap();
        assert!(!out.closed());
        assert_eq!(open, b"kept\n");
    }

    #[test]
    fn only_a_broken_pipe_counts_as_closed() {
        assert!(is_closed_pipe(&CliError::Output(
            ErrorKind::BrokenPipe.into()
        )));
        assert!(!is_closed_pipe(&CliError::Output(
            ErrorKind::StorageFull.into()
        )));
    }
}
