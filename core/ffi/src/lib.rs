//! A stable C ABI over the sans-IO engine of `responses-mcp-core`, for hosts that are not
//! Rust: a C program, Python through `ctypes`, a WebAssembly runtime.
//!
//! The host's loop is the `Driver`'s (docs/ARCHITECTURE.md, "The driving loop"): poll an
//! action, do it, report what happened as an input with the time, until the engine says
//! wait or exit. `include/responses_mcp.h` declares every function and states who owns
//! each buffer; `README.md` beside it describes the actions for a host that reads no Rust.
//!
//! The crate keeps the core's promises: no global state, no thread, no IO (the monotonic
//! clock is read once per engine, as an origin: `clock.rs`). Every entry point catches a
//! panic and returns `ORM_ERR_PANIC` instead of unwinding into the host, and the engine
//! it happened in refuses every later call; that needs a build that unwinds: the `ffi`
//! profile (`cargo build -p responses-mcp-ffi --profile ffi`), or any debug build. With
//! `panic = "abort"` (the workspace's release profile, and every wasm32 build) a panic ends
//! the process, or traps the WebAssembly instance; `orm_abi_catches_panics` tells a host
//! which build it has.

// The functions below are the ABI: every pointer is checked for null, every length comes
// with its pointer, and the header states what the host promises about each.
#![allow(clippy::missing_safety_doc)]
#![warn(clippy::too_many_lines)]

pub mod abi;
mod clock;
mod config;
mod engine;

pub use abi::*;
pub use engine::OrmEngine;

use engine::{Input, Refusal};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The ABI version this library speaks (`ORM_ABI_VERSION`).
#[no_mangle]
pub extern "C" fn orm_abi_version() -> u32 {
    ORM_ABI_VERSION
}

/// 1 when this build catches a panic at the boundary (`ORM_ERR_PANIC`), 0 when a panic
/// aborts the process or traps the instance.
#[no_mangle]
pub extern "C" fn orm_abi_catches_panics() -> u32 {
    u32::from(cfg!(panic = "unwind"))
}

/// Creates an engine from `config` (UTF-8 JSON, README.md's keys; `config_len` 0 means
/// `{}`) and stores it in `*engine_out`. On failure, writes why into `error` (at most
/// `error_cap` bytes, not NUL-terminated) and its whole length into `*error_len`; both
/// may be null.
#[no_mangle]
pub unsafe extern "C" fn orm_engine_new(
    abi_version: u32,
    config: *const u8,
    config_len: usize,
    engine_out: *mut *mut OrmEngine,
    error: *mut u8,
    error_cap: usize,
    error_len: *mut usize,
) -> i32 {
    let made = catch_unwind(AssertUnwindSafe(|| {
        if engine_out.is_null() {
            return Err(Refusal {
                code: ORM_ERR_NULL,
                message: "engine_out is null: pass where to store the engine".into(),
            });
        }
        if abi_version != ORM_ABI_VERSION {
            return Err(Refusal {
                code: ORM_ERR_VERSION,
                message: format!(
                    "the host was built for ABI version {abi_version} and this library speaks version {ORM_ABI_VERSION}: rebuild the host with this library's header"
                ),
            });
        }
        let bytes = unsafe { slice(config, config_len, "config") }?;
        let config = config::parse(bytes).map_err(|error| Refusal {
            code: ORM_ERR_CONFIG,
            message: error.to_string(),
        })?;
        Ok(Box::new(OrmEngine::new(config)))
    }));
    let refusal = match made {
        Ok(Ok(engine)) => {
            unsafe { *engine_out = Box::into_raw(engine) };
            return ORM_OK;
        }
        Ok(Err(refusal)) => refusal,
        Err(_) => Refusal {
            code: ORM_ERR_PANIC,
            message: PANIC.into(),
        },
    };
    let message = refusal.message.as_bytes();
    if !error_len.is_null() {
        unsafe { *error_len = message.len() };
    }
    if !error.is_null() {
        let n = message.len().min(error_cap);
        unsafe { std::ptr::copy_nonoverlapping(message.as_ptr(), error, n) };
    }
    refusal.code
}

/// Frees an engine and everything it handed out. Null is ignored.
#[no_mangle]
pub unsafe extern "C" fn orm_engine_free(engine: *mut OrmEngine) {
    if engine.is_null() {
        return;
    }
    let engine = unsafe { Box::from_raw(engine) };
    // A panic while dropping is a bug too; it must not unwind into the host either.
    let _ = catch_unwind(AssertUnwindSafe(move || drop(engine)));
}

/// Feeds one input at the host's time: `now_ms`, its monotonic clock in milliseconds
/// (any origin; never going back), and `unix_secs`, the wall clock. Returns `ORM_OK`, or
/// `ORM_RELEASED` with an ended attempt's handle in `*released` (which may be null).
#[no_mangle]
pub unsafe extern "C" fn orm_engine_input(
    engine: *mut OrmEngine,
    now_ms: u64,
    unix_secs: u64,
    input: *const OrmInput,
    released: *mut u64,
) -> i32 {
    guarded(engine, |engine| {
        let Some(input) = (unsafe { input.as_ref() }) else {
            return Err(Refusal {
                code: ORM_ERR_NULL,
                message: "input is null: pass an orm_input".into(),
            });
        };
        let input = Input {
            kind: input.kind,
            attempt: input.attempt,
            handle: input.handle,
            status: input.status,
            data: unsafe { slice(input.data, input.data_len, "input.data") }?,
            headers: unsafe { slice(input.headers, input.headers_len, "input.headers") }?,
        };
        match engine.input(now_ms, unix_secs, &input)? {
            Some(handle) => {
                if !released.is_null() {
                    unsafe { *released = handle };
                }
                Ok(ORM_RELEASED)
            }
            None => Ok(ORM_OK),
        }
    })
}

/// Fills `*action` with what to do next. Poll until `ORM_ACTION_WAIT` or `ORM_ACTION_EXIT`.
#[no_mangle]
pub unsafe extern "C" fn orm_engine_poll(engine: *mut OrmEngine, action: *mut OrmAction) -> i32 {
    guarded(engine, |engine| {
        if action.is_null() {
            return Err(Refusal {
                code: ORM_ERR_NULL,
                message: "action is null: pass an orm_action to fill".into(),
            });
        }
        let next = engine.poll();
        unsafe { action.write(next) };
        Ok(ORM_OK)
    })
}

/// The message of the engine's last refused call (UTF-8, not NUL-terminated), borrowed
/// until the next call with the engine; empty when none was refused.
#[no_mangle]
pub unsafe extern "C" fn orm_engine_error(
    engine: *const OrmEngine,
    message: *mut *const u8,
    message_len: *mut usize,
) -> i32 {
    let Some(engine) = (unsafe { engine.as_ref() }) else {
        return ORM_ERR_NULL;
    };
    if message.is_null() || message_len.is_null() {
        return ORM_ERR_NULL;
    }
    unsafe {
        *message = engine.error.as_ptr();
        *message_len = engine.error.len();
    }
    ORM_OK
}

/// `size` bytes the host may use (aligned to 8), for hosts that must place their data in
/// the library's memory (a WebAssembly instance's); null for 0 or when memory is short.
#[no_mangle]
pub extern "C" fn orm_alloc(size: usize) -> *mut u8 {
    match std::alloc::Layout::from_size_align(size, 8) {
        Ok(layout) if size > 0 => unsafe { std::alloc::alloc(layout) },
        _ => std::ptr::null_mut(),
    }
}

/// Frees what `orm_alloc(size)` returned, with the same `size`. Null is ignored.
#[no_mangle]
pub unsafe extern "C" fn orm_dealloc(ptr: *mut u8, size: usize) {
    if let (false, Ok(layout)) = (ptr.is_null(), std::alloc::Layout::from_size_align(size, 8)) {
        unsafe { std::alloc::dealloc(ptr, layout) };
    }
}

const PANIC: &str = "the engine hit a bug (a panic) and cannot be used again: free it, and report the bug with the input that led here";

/// Runs `f` on the engine behind `engine`, turning a refusal into its status and message
/// and a panic into `ORM_ERR_PANIC`, after which the engine refuses every call.
fn guarded(engine: *mut OrmEngine, f: impl FnOnce(&mut OrmEngine) -> Result<i32, Refusal>) -> i32 {
    let Some(engine) = (unsafe { engine.as_mut() }) else {
        return ORM_ERR_NULL;
    };
    if engine.poisoned {
        engine.error = PANIC.into();
        return ORM_ERR_POISONED;
    }
    let result = catch_unwind(AssertUnwindSafe(|| f(&mut *engine)));
    match result {
        Ok(Ok(code)) => code,
        Ok(Err(refusal)) => {
            engine.error = refusal.message;
            refusal.code
        }
        Err(_) => {
            engine.poisoned = true;
            engine.error = PANIC.into();
            ORM_ERR_PANIC
        }
    }
}

/// The host's `len` bytes at `ptr`; null is allowed only for none.
unsafe fn slice<'a>(ptr: *const u8, len: usize, what: &str) -> Result<&'a [u8], Refusal> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(Refusal {
            code: ORM_ERR_NULL,
            message: format!(
                "{what} is null with a length of {len}: pass the bytes, or a length of 0"
            ),
        });
    }
    if len > isize::MAX as usize {
        return Err(Refusal {
            code: ORM_ERR_INVALID,
            message: format!("{what}'s length {len} is larger than any buffer"),
        });
    }
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

#[cfg(test)]
mod tests;
