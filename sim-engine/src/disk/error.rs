//! What a disk operation can fail with.
//!
//! A system sees `std::io::Error`s with real `ErrorKind`s, as from a real file system. The
//! inner error is a [`DiskError`], so a test can tell a simulated fault from a mistake
//! (`err.get_ref()` and downcast) and every message names the problem and the fix.

use std::io;

/// Why a disk operation failed (the inner error of the `io::Error` a system sees).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DiskError {
    /// No file has that name (`ErrorKind::NotFound`).
    #[error("no file named {0:?} on this node's disk; create it first")]
    NotFound(String),
    /// `create` of a name that exists (`ErrorKind::AlreadyExists`).
    #[error("a file named {0:?} already exists; open it, or remove it first")]
    AlreadyExists(String),
    /// A path the disk does not accept (`ErrorKind::InvalidInput`).
    #[error("invalid path {0:?}: use 1 to 255 characters from A-Z a-z 0-9 . _ - (one flat directory per node), not \".\" or \"..\"")]
    InvalidPath(String),
    /// The handle was closed (`ErrorKind::InvalidInput`, as for a closed descriptor).
    #[error("file {0:?} is closed; open it again")]
    Closed(String),
    /// The handle's file was removed (`ErrorKind::NotFound`).
    #[error("file {0:?} was removed while open; open or create it again")]
    Removed(String),
    /// The handle belongs to an earlier incarnation of its node, which crashed
    /// (`ErrorKind::InvalidInput`).
    #[error(
        "handle {0:?} was opened before its node crashed; open the file again after the restart"
    )]
    Stale(String),
    /// A read past the end of the file (`ErrorKind::UnexpectedEof`).
    #[error("read of {len} bytes at offset {offset} of {path:?} goes past its end at {file_len}; read within len()")]
    PastEnd {
        /// The file.
        path: String,
        /// Where the read started.
        offset: u64,
        /// How much it asked for.
        len: u64,
        /// The file's length.
        file_len: u64,
    },
    /// A simulated read error (`ErrorKind::Other`, as EIO): transient, nothing changed.
    #[error("I/O error reading {0:?} (injected read fault; retry, or read another copy)")]
    ReadFault(String),
    /// A simulated write error (`ErrorKind::Other`, as EIO): transient, nothing written.
    #[error("I/O error writing {0:?} (injected write fault; nothing was written; retry)")]
    WriteFault(String),
}

impl DiskError {
    /// The `ErrorKind` a real file system would report.
    pub fn kind(&self) -> io::ErrorKind {
        match self {
            DiskError::NotFound(_) | DiskError::Removed(_) => io::ErrorKind::NotFound,
            DiskError::AlreadyExists(_) => io::ErrorKind::AlreadyExists,
            DiskError::InvalidPath(_) | DiskError::Closed(_) | DiskError::Stale(_) => {
                io::ErrorKind::InvalidInput
            }
            DiskError::PastEnd { .. } => io::ErrorKind::UnexpectedEof,
            DiskError::ReadFault(_) | DiskError::WriteFault(_) => io::ErrorKind::Other,
        }
    }

    /// True for injected faults (as opposed to a mistake of the caller's).
    pub fn is_fault(&self) -> bool {
        matches!(self, DiskError::ReadFault(_) | DiskError::WriteFault(_))
    }
}

impl From<DiskError> for io::Error {
    fn from(e: DiskError) -> io::Error {
        io::Error::new(e.kind(), e)
    }
}

/// Checks a path: 1 to 255 characters from `A-Z a-z 0-9 . _ -`, not `.` or `..`.
pub(crate) fn check_path(path: &str) -> Result<(), DiskError> {
    let ok = !path.is_empty()
        && path.len() <= 255
        && path != "."
        && path != ".."
        && path
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(DiskError::InvalidPath(path.to_string()))
    }
}
