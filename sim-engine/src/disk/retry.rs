//! Retrying a disk call through injected faults.
//!
//! An injected read or write error (`ErrorKind::Other`, as EIO) changes nothing on the disk
//! and may clear on the next try, so storage code written for this disk retries it. Every
//! other error is the caller's mistake (a stale handle after a crash, a path that does not
//! exist): retrying cannot clear it, and hiding it would hide a bug.

use std::future::Future;
use std::io;

use super::DiskError;

/// Calls `call` until it succeeds or fails with anything but an injected fault, and returns
/// its value. Each try is a real disk call: it draws its latency and its faults from the
/// input like any other, so a run replays with the same retries.
///
/// # Panics
///
/// On any error but an injected fault ([`DiskError::is_fault`]), naming `what`: storage code
/// that calls this treats such an error as its own bug.
///
/// ```
/// use sim_core::disk::{retry_faults, Disk, DiskFaultProfile, DiskFaults};
/// use sim_core::sim::{Config, Sim};
///
/// let mut config = Config::default();
/// let flaky = DiskFaultProfile { read_error_per_mille: 300, write_error_per_mille: 300, ..DiskFaultProfile::NONE };
/// config.disk.faults = DiskFaults::Fixed(flaky);
/// let mut sim = Sim::new(config);
/// sim.node("db", |_| async move {
///     let disk = Disk::current();
///     let log = retry_faults("create", || disk.open_or_create("log")).await;
///     let mut tries = 0;
///     for _ in 0..20 {
///         retry_faults("append", || {
///             tries += 1;
///             log.append(b"entry")
///         })
///         .await;
///     }
///     assert!(tries > 20, "some appends failed and were tried again");
///     retry_faults("sync", || log.sync()).await;
///     let bytes = retry_faults("read", || log.read_all()).await;
///     assert_eq!(bytes.len(), 20 * 5, "every append landed exactly once");
/// });
/// assert!(sim.run_seed(1).outcome.class.is_pass());
/// ```
pub async fn retry_faults<T, F, Fut>(what: &str, mut call: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = io::Result<T>>,
{
    loop {
        match call().await {
            Ok(value) => return value,
            Err(e) if is_injected_fault(&e) => {}
            Err(e) => panic!("invariant: {what} on the simulated disk cannot fail this way: {e}"),
        }
    }
}

/// True when `e` is a simulated read or write error, which a retry may clear.
fn is_injected_fault(e: &io::Error) -> bool {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<DiskError>())
        .is_some_and(DiskError::is_fault)
}
