//! The boundary's promises, called as a C host calls them.

use super::*;
use std::ptr::{null, null_mut};

fn engine(config: &str) -> *mut OrmEngine {
    let mut engine = null_mut();
    let status = unsafe {
        orm_engine_new(
            ORM_ABI_VERSION,
            config.as_ptr(),
            config.len(),
            &mut engine,
            null_mut(),
            0,
            null_mut(),
        )
    };
    assert_eq!(status, ORM_OK);
    engine
}

fn error(engine: *mut OrmEngine) -> String {
    let (mut message, mut len) = (null(), 0);
    assert_eq!(
        unsafe { orm_engine_error(engine, &mut message, &mut len) },
        ORM_OK
    );
    String::from_utf8(unsafe { std::slice::from_raw_parts(message, len) }.to_vec()).unwrap()
}

fn input(kind: u32, attempt: u64, status: u32) -> OrmInput {
    OrmInput {
        attempt,
        handle: 0,
        kind,
        status,
        data: null(),
        data_len: 0,
        headers: null(),
        headers_len: 0,
    }
}

/// The next action that is not a write, each write reported done.
fn poll_past_writes(engine: *mut OrmEngine) -> OrmAction {
    loop {
        let action = poll(engine);
        if action.kind != ORM_ACTION_WRITE {
            return action;
        }
        let written = input(ORM_INPUT_WRITTEN, 0, 1);
        assert_eq!(
            unsafe { orm_engine_input(engine, 10, 1, &written, null_mut()) },
            ORM_OK
        );
    }
}

fn poll(engine: *mut OrmEngine) -> OrmAction {
    let mut action = OrmAction::of(0);
    assert_eq!(unsafe { orm_engine_poll(engine, &mut action) }, ORM_OK);
    action
}

#[test]
fn a_refused_configuration_says_why_in_the_hosts_buffer() {
    let config = br#"{"timeout":5}"#;
    let mut engine = null_mut();
    let mut buffer = [0u8; 32];
    let mut len = 0;
    let status = unsafe {
        orm_engine_new(
            ORM_ABI_VERSION,
            config.as_ptr(),
            config.len(),
            &mut engine,
            buffer.as_mut_ptr(),
            buffer.len(),
            &mut len,
        )
    };
    assert_eq!(status, ORM_ERR_CONFIG);
    assert!(engine.is_null());
    // Cut to the buffer; the whole length is reported.
    assert_eq!(&buffer, b"the configuration has an unknown");
    assert!(len > buffer.len());
}

#[test]
fn another_abi_version_and_null_pointers_are_refused() {
    let mut engine = null_mut();
    let mut buffer = [0u8; 256];
    let mut len = 0;
    let status = unsafe {
        orm_engine_new(
            2,
            null(),
            0,
            &mut engine,
            buffer.as_mut_ptr(),
            256,
            &mut len,
        )
    };
    assert_eq!(status, ORM_ERR_VERSION);
    assert!(String::from_utf8_lossy(&buffer[..len]).contains("rebuild the host"));
    let status = unsafe {
        orm_engine_new(
            ORM_ABI_VERSION,
            null(),
            0,
            null_mut(),
            null_mut(),
            0,
            null_mut(),
        )
    };
    assert_eq!(status, ORM_ERR_NULL);
    let status = unsafe {
        orm_engine_new(
            ORM_ABI_VERSION,
            null(),
            3,
            &mut engine,
            null_mut(),
            0,
            null_mut(),
        )
    };
    assert_eq!(status, ORM_ERR_NULL);

    let engine = engine_with_defaults();
    assert_eq!(unsafe { orm_engine_poll(engine, null_mut()) }, ORM_ERR_NULL);
    assert_eq!(
        unsafe { orm_engine_poll(null_mut(), &mut OrmAction::of(0)) },
        ORM_ERR_NULL
    );
    let mut stdin = input(ORM_INPUT_STDIN, 0, 0);
    stdin.data_len = 4;
    assert_eq!(
        unsafe { orm_engine_input(engine, 0, 0, &stdin, null_mut()) },
        ORM_ERR_NULL
    );
    assert!(error(engine).contains("input.data is null with a length of 4"));
    unsafe { orm_engine_free(engine) };
    unsafe { orm_engine_free(null_mut()) };
}

fn engine_with_defaults() -> *mut OrmEngine {
    engine("")
}

#[test]
fn inputs_out_of_range_are_refused_and_change_nothing() {
    let engine = engine_with_defaults();
    for (bad, says) in [
        (input(99, 0, 0), "input kind 99 is unknown"),
        (
            input(ORM_INPUT_WRITTEN, 0, 1),
            "without an ORM_ACTION_WRITE to report",
        ),
        (
            input(ORM_INPUT_STARTED, 7, 0),
            "attempt 7, which this engine is not waiting",
        ),
        (
            input(ORM_INPUT_HTTP_REPLY, 1, 42),
            "HTTP status 42 is not a status code",
        ),
        (
            input(ORM_INPUT_HTTP_FAILED, 1, 9),
            "transport failure kind 9 is unknown",
        ),
    ] {
        assert_eq!(
            unsafe { orm_engine_input(engine, 0, 0, &bad, null_mut()) },
            ORM_ERR_INVALID
        );
        assert!(error(engine).contains(says), "{}", error(engine));
    }
    let mut head = input(ORM_INPUT_HTTP_HEAD, 1, 200);
    head.headers = b"content-type application/json".as_ptr();
    head.headers_len = 29;
    assert_eq!(
        unsafe { orm_engine_input(engine, 0, 0, &head, null_mut()) },
        ORM_ERR_INVALID
    );
    assert!(error(engine).contains("has no colon"));
    // Nothing was written or asked for.
    let action = poll(engine);
    assert_eq!((action.kind, action.flags), (ORM_ACTION_WAIT, 0));
    unsafe { orm_engine_free(engine) };
}

/// A session whose `tools/call` has been handed out: the call's `START`, initialize's
/// reply written.
fn a_call_to_start(engine: *mut OrmEngine) -> OrmAction {
    let lines = concat!(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"answer","arguments":{"query":"q"}}}"#,
        "\n",
    );
    let mut stdin = input(ORM_INPUT_STDIN, 0, 0);
    stdin.data = lines.as_ptr();
    stdin.data_len = lines.len();
    unsafe {
        assert_eq!(
            orm_engine_input(engine, 10, 1, &input(ORM_INPUT_START, 0, 0), null_mut()),
            ORM_OK
        );
        assert_eq!(orm_engine_input(engine, 10, 1, &stdin, null_mut()), ORM_OK);
    }
    // The call's request, and initialize's reply, in either order.
    let mut start = poll(engine);
    while start.kind == ORM_ACTION_WRITE {
        let written = input(ORM_INPUT_WRITTEN, 0, 1);
        assert_eq!(
            unsafe { orm_engine_input(engine, 10, 1, &written, null_mut()) },
            ORM_OK
        );
        start = poll(engine);
    }
    assert_eq!(start.kind, ORM_ACTION_START);
    assert_eq!(
        (start.method, start.destination),
        (ORM_METHOD_POST, ORM_DEST_PROVIDER)
    );
    let url = unsafe { std::slice::from_raw_parts(start.url, start.url_len) };
    assert_eq!(url, b"http://127.0.0.1:9/v1/responses");
    start
}

#[test]
fn a_start_is_reported_once_and_its_handle_comes_back_once() {
    let engine = engine(r#"{"base_url":"http://127.0.0.1:9/v1","max_retries":0}"#);
    let start = a_call_to_start(engine);
    let mut started = input(ORM_INPUT_STARTED, start.attempt, 0);
    started.handle = 4242;
    unsafe {
        assert_eq!(
            orm_engine_input(engine, 20, 1, &started, null_mut()),
            ORM_OK
        );
        // Twice is refused: the engine is no longer waiting to hear about it.
        assert_eq!(
            orm_engine_input(engine, 20, 1, &started, null_mut()),
            ORM_ERR_INVALID
        );
    }
    // The attempt's deadline is the request timeout (120 s) in the host's milliseconds.
    let wait = poll_past_writes(engine);
    assert_eq!(
        (wait.kind, wait.flags),
        (ORM_ACTION_WAIT, ORM_WAIT_HAS_DEADLINE)
    );
    assert_eq!(wait.deadline_ms, 10 + 120_000);
    let mut failed = input(ORM_INPUT_HTTP_FAILED, start.attempt, ORM_TRANSPORT_CONNECT);
    failed.data = b"refused".as_ptr();
    failed.data_len = 7;
    let mut released = 0;
    unsafe {
        assert_eq!(
            orm_engine_input(engine, 30, 1, &failed, &mut released),
            ORM_RELEASED
        );
        assert_eq!(released, 4242);
        // Its completion again finds nothing to hand back.
        assert_eq!(
            orm_engine_input(engine, 30, 1, &failed, &mut released),
            ORM_OK
        );
    }
    let write = poll(engine);
    assert_eq!(write.kind, ORM_ACTION_WRITE);
    let reply = unsafe { std::slice::from_raw_parts(write.data, write.data_len) };
    assert!(String::from_utf8_lossy(reply).contains("\"id\":1"));
    let odd = input(ORM_INPUT_WRITTEN, 0, 2);
    assert_eq!(
        unsafe { orm_engine_input(engine, 40, 1, &odd, null_mut()) },
        ORM_ERR_INVALID
    );
    assert!(error(engine).contains("give 1 (written) or 0"));
    let written = input(ORM_INPUT_WRITTEN, 0, 1);
    assert_eq!(
        unsafe { orm_engine_input(engine, 40, 1, &written, null_mut()) },
        ORM_OK
    );
    // Reported once: a second report has no write to be about.
    assert_eq!(
        unsafe { orm_engine_input(engine, 40, 1, &written, null_mut()) },
        ORM_ERR_INVALID
    );
    unsafe { orm_engine_free(engine) };
}

#[test]
fn a_panic_is_caught_and_the_engine_refuses_every_later_call() {
    let engine = engine_with_defaults();
    let status = guarded(engine, |_| panic!("a bug"));
    assert_eq!(status, ORM_ERR_PANIC);
    assert!(error(engine).contains("hit a bug"));
    assert_eq!(
        unsafe { orm_engine_poll(engine, &mut OrmAction::of(0)) },
        ORM_ERR_POISONED
    );
    let start = input(ORM_INPUT_START, 0, 0);
    assert_eq!(
        unsafe { orm_engine_input(engine, 0, 0, &start, null_mut()) },
        ORM_ERR_POISONED
    );
    assert_eq!(orm_abi_catches_panics(), 1);
    unsafe { orm_engine_free(engine) };
}

#[test]
fn alloc_gives_aligned_memory_and_takes_it_back() {
    let p = orm_alloc(40);
    assert!(!p.is_null());
    assert_eq!(p as usize % 8, 0);
    unsafe { orm_dealloc(p, 40) };
    assert!(orm_alloc(0).is_null());
    unsafe { orm_dealloc(null_mut(), 0) };
}
