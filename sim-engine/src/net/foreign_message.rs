//! Sending values of types that are not messages: a third-party crate's `Request` that is not
//! `Clone` or `Hash` (or not even `Debug`).
//!
//! A [`Socket`](super::Socket) needs `Hash` (the history hashes every message) and `Clone` (a
//! duplicated datagram is a clone). [`Foreign`] wraps any `'static` value: the value is shared
//! behind an `Rc` (a duplicate is the same value, delivered twice) and the history hashes a
//! digest chosen when it is wrapped — by the value's `Debug` text ([`Foreign::by_debug`],
//! streamed into the hasher: no `String` per message), its serde form ([`Foreign::by_serde`],
//! also streamed), or a function of your own ([`Foreign::hashed_by`]), cheapest when the
//! type has a field that identifies it (a term and an index, a request id).
//!
//! ```
//! use sim_core::net::{Addr, Foreign, Socket};
//! use sim_core::sim::{Config, Sim};
//!
//! /// A third-party message: no Clone, no Hash.
//! #[derive(Debug)]
//! struct AppendEntries { term: u64, entries: Vec<String> }
//!
//! let mut sim = Sim::new(Config::default());
//! sim.node("follower", |_| async {
//!     let sock = Socket::<Foreign<AppendEntries>>::bind(1).unwrap();
//!     let (_, msg) = sock.recv().await;
//!     assert_eq!(msg.get().term, 3);
//!     // Not duplicated on the way, so this is the only copy: take it by value.
//!     let owned: AppendEntries = msg.into_inner().ok().unwrap();
//!     assert_eq!(owned.entries, ["x"]);
//! });
//! sim.client("leader", |_| async {
//!     let sock = Socket::<Foreign<AppendEntries>>::bind(1).unwrap();
//!     let msg = AppendEntries { term: 3, entries: vec!["x".into()] };
//!     sock.send(Addr::named("follower", 1), Foreign::hashed_by(msg, |m| m.term));
//!     sim_core::time::sleep(std::time::Duration::from_millis(50)).await;
//! });
//! assert!(sim.run_seed(0).outcome.class.is_pass());
//! ```

use std::fmt;
use std::hash::{Hash, Hasher};
use std::rc::Rc;

use crate::trace::StableHasher;

/// A value of any `'static` type, sent as a message: shared behind an `Rc` (a duplicate is
/// the same value) and hashed into the history as a digest chosen when it is wrapped.
///
/// A trace shows it as its `Debug` text when it was wrapped by [`Foreign::by_debug`] (cut
/// at [`Foreign::TRACE_TEXT_MAX_CHARS`]), else as its type's name and digest.
pub struct Foreign<T> {
    value: Rc<T>,
    digest: u64,
    /// How a trace prints the value, when the wrapper knew it has `Debug`.
    show: Option<fn(&T, &mut fmt::Formatter<'_>) -> fmt::Result>,
}

impl<T> Foreign<T> {
    /// Wraps `value`, hashed into the history as `digest` (which should tell apart the
    /// values a run could send, so that two runs that sent different ones hash differently).
    pub fn new(value: T, digest: u64) -> Self {
        Foreign {
            value: Rc::new(value),
            digest,
            show: None,
        }
    }

    /// Wraps `value`, hashed as `digest(&value)`.
    pub fn hashed_by<D: Hash>(value: T, digest: impl FnOnce(&T) -> D) -> Self {
        let digest = crate::trace::stable_hash(&digest(&value));
        Foreign::new(value, digest)
    }

    /// The value.
    pub fn get(&self) -> &T {
        &self.value
    }

    /// The value itself, if this is its only copy (a duplicated datagram shares it: then the
    /// wrapper comes back).
    pub fn into_inner(self) -> Result<T, Self> {
        let (digest, show) = (self.digest, self.show);
        Rc::try_unwrap(self.value).map_err(|value| Foreign {
            value,
            digest,
            show,
        })
    }

    /// What the history hashes for this message.
    pub fn digest(&self) -> u64 {
        self.digest
    }
}

impl<T: fmt::Debug> Foreign<T> {
    /// Wraps `value`, hashed by its `Debug` text (streamed into the hasher, not collected).
    pub fn by_debug(value: T) -> Self {
        use fmt::Write as _;
        let mut hasher = HashWriter(StableHasher::default());
        // Writing into a hasher cannot fail; a `Debug` impl that reports an error just ends
        // the text early, which is still a deterministic digest.
        let _ = write!(hasher, "{value:?}");
        let digest = hasher.0.finish();
        Foreign {
            show: Some(<T as fmt::Debug>::fmt),
            ..Foreign::new(value, digest)
        }
    }
}

impl<T: serde::Serialize> Foreign<T> {
    /// Wraps `value`, hashed by its JSON form (streamed into the hasher, not collected). A
    /// value serde cannot encode (a map with non-string keys) hashes as far as it got.
    pub fn by_serde(value: T) -> Self {
        let mut hasher = HashWriter(StableHasher::default());
        let _ = serde_json::to_writer(&mut hasher, &value);
        let digest = hasher.0.finish();
        Foreign::new(value, digest)
    }
}

/// Feeds text or bytes straight into a hasher.
struct HashWriter(StableHasher);

impl fmt::Write for HashWriter {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0.write(s.as_bytes());
        Ok(())
    }
}

impl std::io::Write for HashWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.write(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<T> Clone for Foreign<T> {
    /// The same value, shared (what a duplicated datagram delivers).
    fn clone(&self) -> Self {
        Foreign {
            value: Rc::clone(&self.value),
            digest: self.digest,
            show: self.show,
        }
    }
}

impl<T> Hash for Foreign<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.digest.hash(state);
    }
}

impl<T> Foreign<T> {
    /// The longest `Debug` text a trace line shows of a wrapped value; the rest is cut, so a
    /// message carrying a thousand log entries stays one readable line.
    pub const TRACE_TEXT_MAX_CHARS: usize = 200;
}

/// Shows the value's own `Debug` text through a stored function pointer.
struct Shown<'a, T>(&'a T, fn(&T, &mut fmt::Formatter<'_>) -> fmt::Result);

impl<T> fmt::Debug for Shown<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (self.1)(self.0, f)
    }
}

impl<T> fmt::Debug for Foreign<T> {
    /// The value's `Debug` text when wrapped by [`Foreign::by_debug`] (only the first
    /// [`Foreign::TRACE_TEXT_MAX_CHARS`] characters), else the type's name and the digest:
    /// all a trace can say of a value it cannot print. Only traces read this; the history
    /// hashes the digest.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.show {
            Some(show) => {
                let text = format!("{:?}", Shown(&*self.value, show));
                match text.char_indices().nth(Self::TRACE_TEXT_MAX_CHARS) {
                    Some((cut, _)) => write!(f, "{}…", &text[..cut]),
                    None => f.write_str(&text),
                }
            }
            None => write!(f, "{}#{:016x}", std::any::type_name::<T>(), self.digest),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Serialize)]
    struct Vote {
        term: u64,
        granted: bool,
    }

    #[test]
    fn digests_tell_values_apart_and_agree_on_equal_ones() {
        let a = || Vote {
            term: 3,
            granted: true,
        };
        let b = Vote {
            term: 3,
            granted: false,
        };
        assert_eq!(
            Foreign::by_debug(a()).digest(),
            Foreign::by_debug(a()).digest()
        );
        assert_ne!(
            Foreign::by_debug(a()).digest(),
            Foreign::by_debug(b).digest()
        );
        let b = Vote {
            term: 3,
            granted: false,
        };
        assert_eq!(
            Foreign::by_serde(a()).digest(),
            Foreign::by_serde(a()).digest()
        );
        assert_ne!(
            Foreign::by_serde(a()).digest(),
            Foreign::by_serde(b).digest()
        );
        assert_eq!(
            Foreign::hashed_by(a(), |v| v.term).digest(),
            Foreign::hashed_by(
                Vote {
                    term: 3,
                    granted: false
                },
                |v| v.term
            )
            .digest()
        );
    }

    #[test]
    fn a_duplicate_shares_the_value_and_gives_it_up_last() {
        let one = Foreign::new(String::from("x"), 1);
        let two = one.clone();
        let one = one.into_inner().expect_err("shared with its duplicate");
        drop(two);
        assert_eq!(one.into_inner().ok().as_deref(), Some("x"));
    }

    #[test]
    fn a_trace_shows_what_by_debug_wrapped_and_cuts_it_short() {
        let vote = Foreign::by_debug(Vote {
            term: 3,
            granted: true,
        });
        assert_eq!(format!("{vote:?}"), "Vote { term: 3, granted: true }");
        // A duplicate and a value taken back keep showing it.
        assert_eq!(
            format!("{:?}", vote.clone()),
            "Vote { term: 3, granted: true }"
        );
        let long = Foreign::by_debug("x".repeat(500));
        let shown = format!("{long:?}");
        assert_eq!(
            shown.chars().count(),
            Foreign::<String>::TRACE_TEXT_MAX_CHARS + 1
        );
        assert!(shown.ends_with('…'));
        // Wrapped without Debug: the type and digest.
        let opaque = Foreign::new(7u8, 0xab);
        assert_eq!(format!("{opaque:?}"), "u8#00000000000000ab");
    }
}
