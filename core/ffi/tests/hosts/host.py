"""A Python host of the engine: the conversation of host.c (initialize, tools/list, a
tools/call whose request goes over real HTTP), on either form of the library:

    host.py native <libresponses_mcp_ffi.so> <base_url> <api_key>   ctypes
    host.py wasm <responses_mcp_ffi.wasm> <base_url> <api_key>      wasmtime

Both forms are the same ABI (include/responses_mcp.h); they differ only in where the
bytes live: the native library reads the host's memory, the WebAssembly instance its own,
so the wasm form copies inputs in and actions out. The engine's writes go to stdout, the
host's notes to stderr.
"""

import ctypes
import http.client
import json
import struct
import sys
import time
import urllib.parse

ABI_VERSION = 1
OK, RELEASED = 0, 1
INPUT_START, INPUT_STDIN, INPUT_STDIN_CLOSED, INPUT_TIMEOUT = 1, 2, 3, 4
INPUT_WRITTEN, INPUT_STARTED, INPUT_HTTP_REPLY, INPUT_HTTP_FAILED = 6, 7, 8, 9
TRANSPORT_CONNECT = 1
ACTION_WRITE, ACTION_START, ACTION_ABORT, ACTION_WAIT, ACTION_EXIT, ACTION_RECORD = 1, 2, 3, 4, 5, 6
WAIT_HAS_DEADLINE = 1
METHOD_POST = 1

CONVERSATION = b"".join(
    json.dumps(m, separators=(",", ":")).encode() + b"\n"
    for m in [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "python-host", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "answer", "arguments": {"query": "Weather in Tokyo today?"}}},
    ]
)


class AbiError(Exception):
    pass


class Native:
    """The shared library through ctypes: the structs are ctypes Structures."""

    class Input(ctypes.Structure):
        _fields_ = [("attempt", ctypes.c_uint64), ("handle", ctypes.c_uint64),
                    ("kind", ctypes.c_uint32), ("status", ctypes.c_uint32),
                    ("data", ctypes.c_char_p), ("data_len", ctypes.c_size_t),
                    ("headers", ctypes.c_char_p), ("headers_len", ctypes.c_size_t)]

    class Action(ctypes.Structure):
        _fields_ = [("attempt", ctypes.c_uint64), ("handle", ctypes.c_uint64),
                    ("deadline_ms", ctypes.c_uint64), ("kind", ctypes.c_uint32),
                    ("flags", ctypes.c_uint32), ("method", ctypes.c_uint32),
                    ("destination", ctypes.c_uint32),
                    ("data", ctypes.POINTER(ctypes.c_uint8)), ("data_len", ctypes.c_size_t),
                    ("url", ctypes.POINTER(ctypes.c_uint8)), ("url_len", ctypes.c_size_t)]

    def __init__(self, path, config):
        lib = ctypes.CDLL(path)
        engine_p = ctypes.c_void_p
        lib.orm_abi_version.restype = ctypes.c_uint32
        lib.orm_engine_new.argtypes = [ctypes.c_uint32, ctypes.c_char_p, ctypes.c_size_t,
                                       ctypes.POINTER(engine_p), ctypes.c_char_p,
                                       ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]
        lib.orm_engine_new.restype = ctypes.c_int32
        lib.orm_engine_input.argtypes = [engine_p, ctypes.c_uint64, ctypes.c_uint64,
                                         ctypes.POINTER(Native.Input),
                                         ctypes.POINTER(ctypes.c_uint64)]
        lib.orm_engine_input.restype = ctypes.c_int32
        lib.orm_engine_poll.argtypes = [engine_p, ctypes.POINTER(Native.Action)]
        lib.orm_engine_poll.restype = ctypes.c_int32
        lib.orm_engine_error.argtypes = [engine_p, ctypes.POINTER(ctypes.POINTER(ctypes.c_uint8)),
                                         ctypes.POINTER(ctypes.c_size_t)]
        lib.orm_engine_error.restype = ctypes.c_int32
        lib.orm_engine_free.argtypes = [engine_p]
        lib.orm_engine_free.restype = None
        self.lib = lib
        if lib.orm_abi_version() != ABI_VERSION:
            raise AbiError(f"the library speaks ABI {lib.orm_abi_version()}")
        self.engine = engine_p()
        error = ctypes.create_string_buffer(256)
        error_len = ctypes.c_size_t(0)
        status = lib.orm_engine_new(ABI_VERSION, config, len(config), ctypes.byref(self.engine),
                                    error, len(error), ctypes.byref(error_len))
        if status != OK:
            raise AbiError(f"orm_engine_new: {status}: {error.raw[:error_len.value].decode()}")

    def input(self, now_ms, unix_secs, kind, attempt=0, handle=0, status=0, data=b"", headers=b""):
        value = Native.Input(attempt, handle, kind, status, data, len(data), headers, len(headers))
        released = ctypes.c_uint64(0)
        rc = self.lib.orm_engine_input(self.engine, now_ms, unix_secs, ctypes.byref(value),
                                       ctypes.byref(released))
        if rc < 0:
            raise AbiError(f"orm_engine_input: {rc}: {self.error()}")
        return released.value if rc == RELEASED else None

    def poll(self):
        action = Native.Action()
        rc = self.lib.orm_engine_poll(self.engine, ctypes.byref(action))
        if rc != OK:
            raise AbiError(f"orm_engine_poll: {rc}: {self.error()}")
        return {"kind": action.kind, "attempt": action.attempt, "handle": action.handle,
                "deadline_ms": action.deadline_ms, "flags": action.flags,
                "method": action.method,
                # Copied: the engine's buffers last until the next call with it.
                "data": ctypes.string_at(action.data, action.data_len),
                "url": ctypes.string_at(action.url, action.url_len).decode()}

    def error(self):
        message = ctypes.POINTER(ctypes.c_uint8)()
        length = ctypes.c_size_t(0)
        self.lib.orm_engine_error(self.engine, ctypes.byref(message), ctypes.byref(length))
        return ctypes.string_at(message, length.value).decode(errors="replace")

    def free(self):
        self.lib.orm_engine_free(self.engine)


class Wasm:
    """The wasm32-wasip1 module under wasmtime: pointers are 32-bit offsets into the
    instance's memory, so orm_input is 40 bytes and orm_action 56 (README.md)."""

    INPUT = struct.Struct("<QQIIIIII")      # attempt handle kind status data len headers len
    ACTION = struct.Struct("<QQQIIIIIIII")  # attempt handle deadline kind flags method dest data len url len

    def __init__(self, path, config):
        import wasmtime

        engine = wasmtime.Engine()
        self.store = wasmtime.Store(engine)
        # No preopened folder, no environment, no arguments, no inherited stdio: the
        # module is given nothing it could do IO with.
        self.store.set_wasi(wasmtime.WasiConfig())
        linker = wasmtime.Linker(engine)
        linker.define_wasi()
        module = wasmtime.Module.from_file(engine, path)
        imports = sorted(f"{i.module}.{i.name}" for i in module.imports)
        print(f"module imports: {' '.join(imports)}", file=sys.stderr)
        exports = linker.instantiate(self.store, module).exports(self.store)
        if "_initialize" in exports:
            exports["_initialize"](self.store)  # a WASI reactor's constructors
        self.x = exports
        self.memory = exports["memory"]
        if self.call("orm_abi_version") != ABI_VERSION:
            raise AbiError("the module speaks another ABI version")
        self.scratch = self.call("orm_alloc", 64)  # out-parameters
        config_p = self.put(config)
        error_p = self.call("orm_alloc", 256)
        rc = self.call("orm_engine_new", ABI_VERSION, config_p, len(config), self.scratch,
                       error_p, 256, self.scratch + 8)
        if rc != OK:
            length = self.u32(self.scratch + 8)
            raise AbiError(f"orm_engine_new: {rc}: {self.read(error_p, min(length, 256)).decode()}")
        self.engine = self.u32(self.scratch)
        self.release(config_p, len(config))
        self.call("orm_dealloc", error_p, 256)
        self.input_p = self.call("orm_alloc", Wasm.INPUT.size)
        self.action_p = self.call("orm_alloc", Wasm.ACTION.size)

    def call(self, name, *args):
        return self.x[name](self.store, *args)

    def read(self, at, length):
        return bytes(self.memory.read(self.store, at, at + length))

    def u32(self, at):
        return struct.unpack("<I", self.read(at, 4))[0]

    def put(self, data):
        """Copies data into the instance; 0 (null) for none."""
        if not data:
            return 0
        at = self.call("orm_alloc", len(data))
        self.memory.write(self.store, data, at)
        return at

    def release(self, at, length):
        if at:
            self.call("orm_dealloc", at, length)

    def input(self, now_ms, unix_secs, kind, attempt=0, handle=0, status=0, data=b"", headers=b""):
        data_p, headers_p = self.put(data), self.put(headers)
        self.memory.write(self.store, Wasm.INPUT.pack(attempt, handle, kind, status, data_p,
                                                      len(data), headers_p, len(headers)),
                          self.input_p)
        rc = self.call("orm_engine_input", self.engine, now_ms, unix_secs, self.input_p,
                       self.scratch)
        self.release(data_p, len(data))
        self.release(headers_p, len(headers))
        if rc < 0:
            raise AbiError(f"orm_engine_input: {rc}: {self.error()}")
        return struct.unpack("<Q", self.read(self.scratch, 8))[0] if rc == RELEASED else None

    def poll(self):
        rc = self.call("orm_engine_poll", self.engine, self.action_p)
        if rc != OK:
            raise AbiError(f"orm_engine_poll: {rc}: {self.error()}")
        (attempt, handle, deadline_ms, kind, flags, method, _destination,
         data, data_len, url, url_len) = Wasm.ACTION.unpack(self.read(self.action_p, Wasm.ACTION.size))
        return {"kind": kind, "attempt": attempt, "handle": handle, "deadline_ms": deadline_ms,
                "flags": flags, "method": method, "data": self.read(data, data_len),
                "url": self.read(url, url_len).decode()}

    def error(self):
        self.call("orm_engine_error", self.engine, self.scratch, self.scratch + 4)
        return self.read(self.u32(self.scratch), self.u32(self.scratch + 4)).decode(errors="replace")

    def free(self):
        self.call("orm_engine_free", self.engine)


def now():
    return time.monotonic_ns() // 1_000_000, int(time.time())


def send(method, url, body, key):
    """One request over real HTTP; (status, header lines, body) or raises OSError."""
    parts = urllib.parse.urlsplit(url)
    connection = (http.client.HTTPSConnection if parts.scheme == "https"
                  else http.client.HTTPConnection)(parts.hostname, parts.port, timeout=60)
    try:
        connection.request(method, parts.path + (f"?{parts.query}" if parts.query else ""),
                           body=body or None,
                           headers={"Authorization": f"Bearer {key}",
                                    "Content-Type": "application/json"})
        reply = connection.getresponse()
        headers = "".join(f"{k}: {v}\n" for k, v in reply.getheaders()).encode()
        return reply.status, headers, reply.read()
    finally:
        connection.close()


def run(abi, key):
    abi.input(*now(), INPUT_START)
    # The client says everything at once, then closes its stream: the engine finishes
    # the call in flight, writes its answer and exits.
    abi.input(*now(), INPUT_STDIN, data=CONVERSATION)
    abi.input(*now(), INPUT_STDIN_CLOSED)
    while True:
        action = abi.poll()
        kind = action["kind"]
        if kind == ACTION_EXIT:
            break
        if kind == ACTION_WRITE:
            sys.stdout.buffer.write(action["data"])
            sys.stdout.flush()
            abi.input(*now(), INPUT_WRITTEN, status=1)
        elif kind == ACTION_START:
            attempt = action["attempt"]
            method = "POST" if action["method"] == METHOD_POST else "GET"
            print(f"start attempt {attempt}: {method} {action['url']}", file=sys.stderr)
            abi.input(*now(), INPUT_STARTED, attempt=attempt, handle=1000 + attempt)
            try:
                status, headers, body = send(method, action["url"], action["data"], key)
            except OSError as e:
                abi.input(*now(), INPUT_HTTP_FAILED, attempt=attempt, status=TRANSPORT_CONNECT,
                          data=type(e).__name__.encode())
                continue
            released = abi.input(*now(), INPUT_HTTP_REPLY, attempt=attempt, status=status,
                                 headers=headers, data=body)
            print(f"released handle {released}", file=sys.stderr)
        elif kind == ACTION_ABORT:
            pass  # requests end before the next poll: nothing is left to abort
        elif kind == ACTION_RECORD:
            print(f"record: {action['data'].decode()}", file=sys.stderr)
        elif kind == ACTION_WAIT:
            if not action["flags"] & WAIT_HAS_DEADLINE:
                raise AbiError("the engine waits for input this host will never give")
            time.sleep(max(0, action["deadline_ms"] - now()[0]) / 1000)
            abi.input(*now(), INPUT_TIMEOUT)
        else:
            raise AbiError(f"unknown action {kind}")
    print("exit", file=sys.stderr)
    abi.free()


def main():
    form, library, base_url, key = sys.argv[1:5]
    config = json.dumps({"base_url": base_url, "max_retries": 0}).encode()
    abi = (Native if form == "native" else Wasm)(library, config)
    run(abi, key)


if __name__ == "__main__":
    main()
