//! Reading stdin, the same way in both runtimes: a thread of its own, so that the first
//! request is read the moment it arrives, whatever the runtime's executor is doing.

use responses_mcp_core::Message;
use std::io::Read;

/// Bytes read from stdin at a time.
pub const READ_CHUNK: usize = 64 * 1024;

/// Starts a thread that reads stdin and hands each chunk, then the end of input, to
/// `deliver` as a [`Message`]. `deliver` returns `false` once nobody listens any more,
/// which ends the thread.
pub fn spawn_reader(mut deliver: impl FnMut(Message) -> bool + Send + 'static) {
    let spawned = std::thread::Builder::new()
        .name("stdin".into())
        .spawn(move || {
            let mut stdin = std::io::stdin().lock();
            let mut buf = vec![0u8; READ_CHUNK];
            loop {
                match stdin.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        if !deliver(Message::Stdin(buf[..n].to_vec())) {
                            return;
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        log::debug!("stdin read failed: {e}");
                        break;
                    }
                }
            }
            deliver(Message::StdinClosed);
        });
    if let Err(e) = spawned {
        log::error!("cannot start the stdin reader: {e}");
    }
}
