//! The interposed symbols. Each asks `sim_core::os` first and falls back to the C library's
//! own function, found once with `dlsym(RTLD_NEXT, …)`.
//!
//! None of these functions may panic: a panic cannot unwind out of an `extern "C"` function
//! (the process would abort), so every path returns an error code instead.

use std::ffi::CStr;
use std::sync::atomic::{AtomicPtr, Ordering};

use libc::{c_int, c_uint, c_void, clockid_t, size_t, ssize_t, time_t, timespec, timeval};
use sim_core::os::{self, OsClock};

/// The C library's definition of one symbol, looked up on first use.
struct Real {
    name: &'static CStr,
    address: AtomicPtr<c_void>,
}

impl Real {
    const fn new(name: &'static CStr) -> Real {
        Real {
            name,
            address: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// The address of the next definition after ours (the C library's), or null.
    fn get(&self) -> *mut c_void {
        let cached = self.address.load(Ordering::Relaxed);
        if !cached.is_null() {
            return cached;
        }
        // SAFETY: `name` is a NUL-terminated C string; `dlsym` with `RTLD_NEXT` only searches
        // the objects loaded after this one and returns null when nothing is found.
        let found = unsafe { libc::dlsym(libc::RTLD_NEXT, self.name.as_ptr()) };
        self.address.store(found, Ordering::Relaxed);
        found
    }
}

static REAL_CLOCK_GETTIME: Real = Real::new(c"clock_gettime");
static REAL_GETTIMEOFDAY: Real = Real::new(c"gettimeofday");
static REAL_TIME: Real = Real::new(c"time");
static REAL_GETRANDOM: Real = Real::new(c"getrandom");
static REAL_GETENTROPY: Real = Real::new(c"getentropy");
static REAL_EPOLL_WAIT: Real = Real::new(c"epoll_wait");
static REAL_EVENTFD: Real = Real::new(c"eventfd");
static REAL_WRITE: Real = Real::new(c"write");
static REAL_CLOSE: Real = Real::new(c"close");
#[cfg(feature = "escapes")]
static REAL_PTHREAD_CREATE: Real = Real::new(c"pthread_create");
#[cfg(feature = "escapes")]
static REAL_SOCKET: Real = Real::new(c"socket");

fn set_errno(code: c_int) {
    // SAFETY: `__errno_location` returns this thread's errno slot, valid for writes.
    unsafe { *libc::__errno_location() = code };
}

/// Which simulated clock a clock id reads, if any.
fn simulated_clock(clock: clockid_t) -> Option<OsClock> {
    match clock {
        libc::CLOCK_MONOTONIC
        | libc::CLOCK_MONOTONIC_RAW
        | libc::CLOCK_MONOTONIC_COARSE
        | libc::CLOCK_BOOTTIME => Some(OsClock::Monotonic),
        libc::CLOCK_REALTIME | libc::CLOCK_REALTIME_COARSE | libc::CLOCK_TAI => {
            Some(OsClock::Realtime)
        }
        _ => None,
    }
}

fn timespec_of(ns: u64) -> timespec {
    timespec {
        tv_sec: (ns / 1_000_000_000) as time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    }
}

/// `clock_gettime(2)`.
///
/// # Safety
/// `tp` must be null or valid for writing one `timespec`, as for the C library's function.
#[no_mangle]
pub unsafe extern "C" fn clock_gettime(clock: clockid_t, tp: *mut timespec) -> c_int {
    if let Some(ns) = simulated_clock(clock).and_then(os::clock_reading_ns) {
        if tp.is_null() {
            set_errno(libc::EFAULT);
            return -1;
        }
        // SAFETY: `tp` is non-null and, by this function's contract, valid for writes.
        unsafe { tp.write(timespec_of(ns)) };
        return 0;
    }
    let real = REAL_CLOCK_GETTIME.get();
    if real.is_null() {
        set_errno(libc::ENOSYS);
        return -1;
    }
    // SAFETY: `real` is the C library's `clock_gettime`, which has this signature; the
    // arguments are passed through unchanged under the caller's contract.
    unsafe {
        let real: unsafe extern "C" fn(clockid_t, *mut timespec) -> c_int =
            std::mem::transmute(real);
        real(clock, tp)
    }
}

/// `gettimeofday(2)`.
///
/// # Safety
/// `tv` must be null or valid for writing one `timeval`; `tz` as for the C library.
#[no_mangle]
pub unsafe extern "C" fn gettimeofday(tv: *mut timeval, tz: *mut c_void) -> c_int {
    if let Some(ns) = os::clock_reading_ns(OsClock::Realtime) {
        if !tv.is_null() {
            // SAFETY: `tv` is non-null and, by this function's contract, valid for writes.
            unsafe {
                tv.write(timeval {
                    tv_sec: (ns / 1_000_000_000) as time_t,
                    tv_usec: ((ns % 1_000_000_000) / 1_000) as libc::suseconds_t,
                })
            };
        }
        return 0;
    }
    let real = REAL_GETTIMEOFDAY.get();
    if real.is_null() {
        set_errno(libc::ENOSYS);
        return -1;
    }
    // SAFETY: `real` is the C library's `gettimeofday`, which has this signature; the
    // arguments are passed through unchanged under the caller's contract.
    unsafe {
        let real: unsafe extern "C" fn(*mut timeval, *mut c_void) -> c_int =
            std::mem::transmute(real);
        real(tv, tz)
    }
}

/// `time(2)`.
///
/// # Safety
/// `out` must be null or valid for writing one `time_t`.
#[no_mangle]
pub unsafe extern "C" fn time(out: *mut time_t) -> time_t {
    if let Some(ns) = os::clock_reading_ns(OsClock::Realtime) {
        let seconds = (ns / 1_000_000_000) as time_t;
        if !out.is_null() {
            // SAFETY: `out` is non-null and, by this function's contract, valid for writes.
            unsafe { out.write(seconds) };
        }
        return seconds;
    }
    let real = REAL_TIME.get();
    if real.is_null() {
        set_errno(libc::ENOSYS);
        return -1;
    }
    // SAFETY: `real` is the C library's `time`, which has this signature; the argument is
    // passed through unchanged under the caller's contract.
    unsafe {
        let real: unsafe extern "C" fn(*mut time_t) -> time_t = std::mem::transmute(real);
        real(out)
    }
}

/// Fills `len` bytes at `buf` from the simulation; false when the OS should answer.
///
/// # Safety
/// `buf` must be valid for writing `len` bytes (or `len` is 0).
unsafe fn simulated_entropy(buf: *mut c_void, len: size_t) -> bool {
    if len == 0 {
        return os::fill_entropy(&mut []);
    }
    // SAFETY: by this function's contract `buf` is valid for `len` bytes of writes, and no
    // other reference to them exists while the slice lives.
    let bytes = unsafe { std::slice::from_raw_parts_mut(buf.cast::<u8>(), len) };
    os::fill_entropy(bytes)
}

/// `getrandom(2)`.
///
/// # Safety
/// `buf` must be valid for writing `len` bytes, as for the C library's function.
#[no_mangle]
pub unsafe extern "C" fn getrandom(buf: *mut c_void, len: size_t, flags: c_uint) -> ssize_t {
    // SAFETY: forwarded under this function's contract.
    if unsafe { simulated_entropy(buf, len) } {
        return len as ssize_t;
    }
    let real = REAL_GETRANDOM.get();
    if real.is_null() {
        // A C library without `getrandom`: ask the kernel directly.
        // SAFETY: the system call writes at most `len` bytes to `buf`, valid by contract.
        return unsafe { libc::syscall(libc::SYS_getrandom, buf, len, flags) as ssize_t };
    }
    // SAFETY: `real` is the C library's `getrandom`, which has this signature; the arguments
    // are passed through unchanged under the caller's contract.
    unsafe {
        let real: unsafe extern "C" fn(*mut c_void, size_t, c_uint) -> ssize_t =
            std::mem::transmute(real);
        real(buf, len, flags)
    }
}

/// `getentropy(3)`.
///
/// # Safety
/// `buf` must be valid for writing `len` bytes, as for the C library's function.
#[no_mangle]
pub unsafe extern "C" fn getentropy(buf: *mut c_void, len: size_t) -> c_int {
    if len > 256 {
        set_errno(libc::EIO);
        return -1;
    }
    // SAFETY: forwarded under this function's contract.
    if unsafe { simulated_entropy(buf, len) } {
        return 0;
    }
    let real = REAL_GETENTROPY.get();
    if real.is_null() {
        set_errno(libc::ENOSYS);
        return -1;
    }
    // SAFETY: `real` is the C library's `getentropy`, which has this signature; the arguments
    // are passed through unchanged under the caller's contract.
    unsafe {
        let real: unsafe extern "C" fn(*mut c_void, size_t) -> c_int = std::mem::transmute(real);
        real(buf, len)
    }
}

/// `epoll_wait(2)`: inside a run, the idle wait of a tokio node's I/O driver returns at once
/// and hands its timeout (the distance to the runtime's next timer) to the node's driver.
///
/// # Safety
/// `events` must be valid for writing `max_events` entries, as for the C library's function.
#[no_mangle]
pub unsafe extern "C" fn epoll_wait(
    epfd: c_int,
    events: *mut libc::epoll_event,
    max_events: c_int,
    timeout_ms: c_int,
) -> c_int {
    if os::absorb_idle_wait(timeout_ms) {
        return 0;
    }
    let real = REAL_EPOLL_WAIT.get();
    if real.is_null() {
        set_errno(libc::ENOSYS);
        return -1;
    }
    // SAFETY: `real` is the C library's `epoll_wait`, which has this signature; the arguments
    // are passed through unchanged under the caller's contract.
    unsafe {
        let real: unsafe extern "C" fn(c_int, *mut libc::epoll_event, c_int, c_int) -> c_int =
            std::mem::transmute(real);
        real(epfd, events, max_events, timeout_ms)
    }
}

/// `eventfd(2)`: passed through; an fd opened while a tokio node's runtime is built is that
/// runtime's wake-up signal, and is claimed (see `sim_core::os::claim_wakeup_fds`).
#[no_mangle]
pub extern "C" fn eventfd(initval: c_uint, flags: c_int) -> c_int {
    let real = REAL_EVENTFD.get();
    if real.is_null() {
        set_errno(libc::ENOSYS);
        return -1;
    }
    // SAFETY: `real` is the C library's `eventfd`, which has this signature and takes no
    // pointers.
    let fd = unsafe {
        let real: unsafe extern "C" fn(c_uint, c_int) -> c_int = std::mem::transmute(real);
        real(initval, flags)
    };
    if fd >= 0 {
        os::note_event_fd(fd);
    }
    fd
}

/// `write(2)`: a write to a claimed wake-up fd is skipped (its runtime never blocks in the
/// OS); every other write passes through.
///
/// # Safety
/// `buf` must be valid for reading `count` bytes, as for the C library's function.
#[no_mangle]
pub unsafe extern "C" fn write(fd: c_int, buf: *const c_void, count: size_t) -> ssize_t {
    if os::skips_write(fd) {
        return count as ssize_t;
    }
    let real = REAL_WRITE.get();
    if real.is_null() {
        // SAFETY: the system call reads at most `count` bytes from `buf`, valid by contract.
        return unsafe { libc::syscall(libc::SYS_write, fd, buf, count) as ssize_t };
    }
    // SAFETY: `real` is the C library's `write`, which has this signature; the arguments are
    // passed through unchanged under the caller's contract.
    unsafe {
        let real: unsafe extern "C" fn(c_int, *const c_void, size_t) -> ssize_t =
            std::mem::transmute(real);
        real(fd, buf, count)
    }
}

/// `close(2)`: passed through, after forgetting a claimed wake-up fd.
#[no_mangle]
pub extern "C" fn close(fd: c_int) -> c_int {
    os::note_close(fd);
    let real = REAL_CLOSE.get();
    if real.is_null() {
        // SAFETY: closing a descriptor number has no memory effects.
        return unsafe { libc::syscall(libc::SYS_close, fd) as c_int };
    }
    // SAFETY: `real` is the C library's `close`, which has this signature and takes no
    // pointers.
    unsafe {
        let real: unsafe extern "C" fn(c_int) -> c_int = std::mem::transmute(real);
        real(fd)
    }
}

#[cfg(feature = "escapes")]
type StartRoutine = extern "C" fn(*mut c_void) -> *mut c_void;

#[cfg(feature = "escapes")]
/// `pthread_create(3)`: refused inside a run (an OS thread would run outside virtual time).
///
/// # Safety
/// As for the C library's function.
#[no_mangle]
pub unsafe extern "C" fn pthread_create(
    thread: *mut libc::pthread_t,
    attr: *const libc::pthread_attr_t,
    start: StartRoutine,
    arg: *mut c_void,
) -> c_int {
    if os::refuse_escape("pthread_create (an OS thread)") {
        return libc::EPERM;
    }
    let real = REAL_PTHREAD_CREATE.get();
    if real.is_null() {
        return libc::ENOSYS;
    }
    // SAFETY: `real` is the C library's `pthread_create`, which has this signature; the
    // arguments are passed through unchanged under the caller's contract.
    unsafe {
        let real: unsafe extern "C" fn(
            *mut libc::pthread_t,
            *const libc::pthread_attr_t,
            StartRoutine,
            *mut c_void,
        ) -> c_int = std::mem::transmute(real);
        real(thread, attr, start, arg)
    }
}

#[cfg(feature = "escapes")]
/// `socket(2)`: refused inside a run (a real socket would reach the real network).
///
/// # Safety
/// As for the C library's function.
#[no_mangle]
pub unsafe extern "C" fn socket(domain: c_int, kind: c_int, protocol: c_int) -> c_int {
    if os::refuse_escape("socket (a real network socket)") {
        set_errno(libc::EACCES);
        return -1;
    }
    let real = REAL_SOCKET.get();
    if real.is_null() {
        set_errno(libc::ENOSYS);
        return -1;
    }
    // SAFETY: `real` is the C library's `socket`, which has this signature; the arguments are
    // passed through unchanged.
    unsafe {
        let real: unsafe extern "C" fn(c_int, c_int, c_int) -> c_int = std::mem::transmute(real);
        real(domain, kind, protocol)
    }
}
