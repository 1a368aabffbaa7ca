//! SIGINT and SIGTERM, turned into an ordinary event.
//!
//! The standard library has no signal API, so this uses libc (already in the dependency
//! tree through ring and getrandom). The two signals are blocked in every thread and one
//! thread waits for them with `sigwait`, so no code runs inside a signal handler.

use responses_mcp_core::Message;

/// What the `nth` termination signal (from 0) asks of the server: over HTTP the first
/// drains (no new connections, calls in flight finish) and the next stops at once; over
/// stdio the first stops at once.
pub fn termination(signal: i32, nth: u32, serving_http: bool) -> Message {
    if serving_http && nth == 0 {
        log::debug!("signal {signal}: no new connections; finishing calls in flight (again to stop at once)");
        Message::Drain
    } else {
        log::debug!("signal {signal}: aborting calls in flight and exiting");
        Message::Shutdown
    }
}

/// Calls `on_signal` from a dedicated thread each time SIGINT or SIGTERM arrives, with
/// the signal and how many came before it, until it returns `false`.
///
/// Call it before any other thread is started: threads inherit the blocked-signal mask,
/// and a thread started earlier would still take the default action (terminate).
///
/// # Errors
/// When the mask cannot be set or the thread cannot start.
#[cfg(unix)]
#[allow(unsafe_code)]
pub fn on_termination(
    mut on_signal: impl FnMut(i32, u32) -> bool + Send + 'static,
) -> std::io::Result<()> {
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
            for nth in 0.. {
                let mut signal: libc::c_int = 0;
                // SAFETY: as above; `signal` outlives the call.
                let rc = unsafe { libc::sigwait(&set, &mut signal) };
                if rc != 0 || !on_signal(signal, nth) {
                    return;
                }
            }
        })?;
    Ok(())
}

/// Signals are not handled on this platform; the default action applies.
#[cfg(not(unix))]
pub fn on_termination(
    _on_signal: impl FnMut(i32, u32) -> bool + Send + 'static,
) -> std::io::Result<()> {
    Ok(())
}
