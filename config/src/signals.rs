//! SIGINT and SIGTERM, turned into an ordinary event.
//!
//! The standard library has no signal API, so this uses libc (already in the dependency
//! tree through ring and getrandom). The two signals are blocked in every thread and one
//! thread waits for them with `sigwait`, so no code runs inside a signal handler.

/// Calls `on_signal` once, from a dedicated thread, when SIGINT or SIGTERM arrives.
///
/// Call it before any other thread is started: threads inherit the blocked-signal mask,
/// and a thread started earlier would still take the default action (terminate).
///
/// # Errors
/// When the mask cannot be set or the thread cannot start.
#[cfg(unix)]
#[allow(unsafe_code)]
pub fn on_termination(on_signal: impl FnOnce(i32) + Send + 'static) -> std::io::Result<()> {
    // SAFETY: `set` is a plain C struct initialised by sigemptyset before use; the
    // pointers passed are valid for the duration of each call; pthread_sigmask and
    // sigwait have no other preconditions.
    let set = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        let rc = libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        if rc != 0 {
            return Err(std::io::Error::from_raw_os_error(rc));
        }
        set
    };
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            let mut signal: libc::c_int = 0;
            // SAFETY: as above; `signal` outlives the call.
            let rc = unsafe { libc::sigwait(&set, &mut signal) };
            if rc == 0 {
                on_signal(signal);
            }
        })?;
    Ok(())
}

/// Signals are not handled on this platform; the default action applies.
#[cfg(not(unix))]
pub fn on_termination(_on_signal: impl FnOnce(i32) + Send + 'static) -> std::io::Result<()> {
    Ok(())
}
