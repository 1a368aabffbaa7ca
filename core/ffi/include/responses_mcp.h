/*
 * responses_mcp.h: the C ABI of openai-responses-mcp's sans-IO engine, version 1.
 *
 * The engine speaks MCP with one client and asks the host for HTTP requests to the model
 * provider; it does no IO, starts no thread and keeps no global state. The host runs the
 * loop: orm_engine_poll until ORM_ACTION_WAIT or ORM_ACTION_EXIT, doing each action;
 * then waits for input (client bytes, an HTTP reply, the deadline) and hands it to
 * orm_engine_input with the time. README.md beside this folder describes each action
 * and input, with the struct layouts for 64-bit hosts and wasm32.
 *
 * Ownership, for every buffer:
 *  - What the host passes in (config, orm_input and the bytes it points at) stays the
 *    host's; the engine reads it only during the call and keeps no pointer to it.
 *  - What the engine hands out (orm_action's data and url, orm_engine_error's message)
 *    stays the engine's: valid until the host's next call with the same engine, never
 *    freed by the host. Copy what must live longer.
 *  - An engine is the host's from orm_engine_new to orm_engine_free. One engine is used by
 *    one thread at a time; separate engines share nothing.
 *  - orm_alloc's memory is the host's until it passes it to orm_dealloc.
 *
 * Errors: every function that can fail returns ORM_OK (0) or more on success and a
 * negative ORM_ERR_* on failure, after which orm_engine_error says what happened and what
 * to do. No panic crosses this boundary: in a build that unwinds
 * (orm_abi_catches_panics() == 1) a bug returns ORM_ERR_PANIC and the engine refuses
 * every later call with ORM_ERR_POISONED; otherwise it aborts the process (native) or
 * traps the instance (WebAssembly).
 */
#ifndef RESPONSES_MCP_H
#define RESPONSES_MCP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ORM_ABI_VERSION 1

/* Statuses. */
#define ORM_OK 0
#define ORM_RELEASED 1
#define ORM_ERR_NULL -1
#define ORM_ERR_INVALID -2
#define ORM_ERR_CONFIG -3
#define ORM_ERR_VERSION -4
#define ORM_ERR_PANIC -5
#define ORM_ERR_POISONED -6

/* orm_input.kind */
#define ORM_INPUT_START 1
#define ORM_INPUT_STDIN 2
#define ORM_INPUT_STDIN_CLOSED 3
#define ORM_INPUT_TIMEOUT 4
#define ORM_INPUT_SHUTDOWN 5
#define ORM_INPUT_WRITTEN 6
#define ORM_INPUT_STARTED 7
#define ORM_INPUT_HTTP_REPLY 8
#define ORM_INPUT_HTTP_FAILED 9
#define ORM_INPUT_HTTP_HEAD 10
#define ORM_INPUT_HTTP_BODY 11
#define ORM_INPUT_HTTP_END 12

/* orm_input.status of ORM_INPUT_STARTED (non-zero) and ORM_INPUT_HTTP_FAILED. */
#define ORM_TRANSPORT_CONNECT 1
#define ORM_TRANSPORT_IO 2
#define ORM_TRANSPORT_TLS 3
#define ORM_TRANSPORT_BODY_TOO_LARGE 4
#define ORM_TRANSPORT_INVALID 5

/* orm_action.kind */
#define ORM_ACTION_WRITE 1
#define ORM_ACTION_START 2
#define ORM_ACTION_ABORT 3
#define ORM_ACTION_WAIT 4
#define ORM_ACTION_EXIT 5
#define ORM_ACTION_RECORD 6

/* orm_action.flags of ORM_ACTION_WAIT */
#define ORM_WAIT_HAS_DEADLINE 1

/* orm_action.method of ORM_ACTION_START */
#define ORM_METHOD_POST 1
#define ORM_METHOD_GET 2

/* orm_action.destination of ORM_ACTION_START */
#define ORM_DEST_PROVIDER 1
#define ORM_DEST_IDENTITY_PROVIDER 2

/* An engine. Opaque. */
typedef struct orm_engine orm_engine;

/* What happened, filled by the host. Pointers are the host's, read during the call. */
typedef struct orm_input {
    uint64_t attempt;       /* STARTED, HTTP_*: the attempt of ORM_ACTION_START */
    uint64_t handle;        /* STARTED: the host's handle for it, any number */
    uint32_t kind;          /* ORM_INPUT_* */
    uint32_t status;        /* WRITTEN: 1 or 0; STARTED, HTTP_FAILED: 0 or ORM_TRANSPORT_*;
                               HTTP_REPLY, HTTP_HEAD: the HTTP status */
    const uint8_t *data;    /* STDIN: client bytes; HTTP_REPLY, HTTP_BODY: body;
                               STARTED, HTTP_FAILED: why (UTF-8, no secrets) */
    size_t data_len;
    const uint8_t *headers; /* HTTP_REPLY, HTTP_HEAD: "name: value" lines, UTF-8 */
    size_t headers_len;
} orm_input;

/* What to do next, filled by the engine. data and url are the engine's, valid until the
   host's next call with the same engine. */
typedef struct orm_action {
    uint64_t attempt;     /* START: report it in ORM_INPUT_STARTED and the reply */
    uint64_t handle;      /* ABORT: the host's handle from ORM_INPUT_STARTED */
    uint64_t deadline_ms; /* WAIT with ORM_WAIT_HAS_DEADLINE: the host's clock */
    uint32_t kind;        /* ORM_ACTION_* */
    uint32_t flags;       /* WAIT: ORM_WAIT_HAS_DEADLINE or 0 */
    uint32_t method;      /* START: ORM_METHOD_* */
    uint32_t destination; /* START: ORM_DEST_* */
    const uint8_t *data;  /* WRITE: bytes for the client; START: JSON body (empty for GET);
                             RECORD: one JSON line */
    size_t data_len;
    const uint8_t *url;   /* START: the URL, UTF-8 */
    size_t url_len;
} orm_action;

/* The ABI version of the library (ORM_ABI_VERSION of its header). */
uint32_t orm_abi_version(void);

/* 1 when a panic returns ORM_ERR_PANIC, 0 when it aborts (or traps). */
uint32_t orm_abi_catches_panics(void);

/* Creates an engine from config: config_len bytes of UTF-8 JSON (README.md lists the
   keys; 0 bytes means {}), stored in *engine_out. abi_version: ORM_ABI_VERSION.
   On failure writes why into error (at most error_cap bytes, not NUL-terminated, the
   host's buffer) and the message's whole length into *error_len; both may be NULL.
   Returns ORM_OK, ORM_ERR_NULL, ORM_ERR_VERSION, ORM_ERR_CONFIG or ORM_ERR_PANIC. */
int32_t orm_engine_new(uint32_t abi_version, const uint8_t *config, size_t config_len,
                       orm_engine **engine_out, uint8_t *error, size_t error_cap,
                       size_t *error_len);

/* Frees the engine and everything it handed out. NULL is ignored. */
void orm_engine_free(orm_engine *engine);

/* Hands the engine one input at the host's time: now_ms, a monotonic clock in
   milliseconds from any origin, and unix_secs, the wall clock. Returns ORM_OK, or
   ORM_RELEASED when an attempt ended: its handle is then in *released (which may be
   NULL) for the host to release. Negative: nothing changed; see orm_engine_error. */
int32_t orm_engine_input(orm_engine *engine, uint64_t now_ms, uint64_t unix_secs,
                         const orm_input *input, uint64_t *released);

/* Fills *action with the next thing to do. Returns ORM_OK or a negative ORM_ERR_*. */
int32_t orm_engine_poll(orm_engine *engine, orm_action *action);

/* The message of the engine's last refused call: UTF-8, not NUL-terminated, the engine's
   until the next call with it; empty when none was refused. */
int32_t orm_engine_error(const orm_engine *engine, const uint8_t **message,
                         size_t *message_len);

/* size bytes aligned to 8 in the library's memory (for a WebAssembly host, which must put
   its inputs there); NULL for 0. The host's until orm_dealloc(ptr, size). */
uint8_t *orm_alloc(size_t size);

/* Frees what orm_alloc(size) returned. NULL is ignored. */
void orm_dealloc(uint8_t *ptr, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* RESPONSES_MCP_H */
