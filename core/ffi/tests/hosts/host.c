/*
 * A C host of the engine: it runs one MCP conversation (initialize, tools/list, a
 * tools/call) through responses_mcp.h, doing each HTTP request the engine asks for over a
 * plain loopback socket and feeding the answer back. It writes what the engine writes to
 * stdout and its own notes to stderr.
 *
 *   host <base_url> <api_key>   run the conversation against base_url (http:// only)
 *   host --layout               print the structs' sizes and offsets (tests/hosts.rs)
 *
 * A real host would use its own HTTP client (TLS, proxies, pooling); the loop is the same.
 */
#define _POSIX_C_SOURCE 200809L
#include "responses_mcp.h"

#include <arpa/inet.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const char CONVERSATION[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
    "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"c-host\",\"version\":\"1\"}}}\n"
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n"
    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"answer\","
    "\"arguments\":{\"query\":\"Weather in Tokyo today?\"}}}\n";

static uint64_t now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

static uint64_t unix_secs(void) { return (uint64_t)time(NULL); }

static void fail(orm_engine *engine, const char *what, int32_t status) {
    const uint8_t *message = NULL;
    size_t len = 0;
    if (engine != NULL) orm_engine_error(engine, &message, &len);
    fprintf(stderr, "%s failed (%d): %.*s\n", what, (int)status, (int)len,
            message ? (const char *)message : "");
    exit(1);
}

static void input(orm_engine *engine, const orm_input *in, uint64_t *released) {
    int32_t status = orm_engine_input(engine, now_ms(), unix_secs(), in, released);
    if (status < 0) fail(engine, "orm_engine_input", status);
}

/* A reply read off the socket. */
struct reply {
    unsigned status;
    char *head;       /* the header lines, after the status line */
    size_t head_len;
    char *body;
    size_t body_len;
};

/* POSTs body to url (http://a.b.c.d:port/path) and reads one reply with a Content-Length.
   Returns 0, or an ORM_TRANSPORT_* with why in *detail. */
static uint32_t http_post(const char *url, size_t url_len, const char *key, const uint8_t *body,
                          size_t body_len, struct reply *out, const char **detail) {
    char target[512];
    if (url_len >= sizeof target || url_len < 7 || strncmp(url, "http://", 7) != 0) {
        *detail = "this host speaks plain http:// only";
        return ORM_TRANSPORT_INVALID;
    }
    memcpy(target, url, url_len);
    target[url_len] = '\0';
    char *host = target + 7;
    char *path = strchr(host, '/');
    char *colon = strchr(host, ':');
    if (path == NULL || colon == NULL || colon > path) {
        *detail = "the URL has no port or path";
        return ORM_TRANSPORT_INVALID;
    }
    *colon = '\0';
    struct sockaddr_in addr = {0};
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)atoi(colon + 1));
    if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) {
        *detail = "the URL's host is not an IPv4 address";
        return ORM_TRANSPORT_INVALID;
    }
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        *detail = "connect failed";
        if (fd >= 0) close(fd);
        return ORM_TRANSPORT_CONNECT;
    }
    char head[1024];
    int n = snprintf(head, sizeof head,
                     "POST %s HTTP/1.1\r\nHost: %s:%s\r\nAuthorization: Bearer %s\r\n"
                     "Content-Type: application/json\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n\r\n",
                     path, host, colon + 1, key, body_len);
    if (n < 0 || (size_t)n >= sizeof head || write(fd, head, (size_t)n) != n ||
        write(fd, body, body_len) != (ssize_t)body_len) {
        *detail = "writing the request failed";
        close(fd);
        return ORM_TRANSPORT_IO;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap + 1);
    char *end = NULL;
    size_t content_length = 0;
    for (;;) {
        if (len == cap) {
            cap *= 2;
            buf = realloc(buf, cap + 1);
        }
        ssize_t got = read(fd, buf + len, cap - len);
        if (got <= 0) break;
        len += (size_t)got;
        buf[len] = '\0';
        if (end == NULL && (end = strstr(buf, "\r\n\r\n")) != NULL) {
            char *cl = strstr(buf, "Content-Length:");
            if (cl == NULL) cl = strstr(buf, "content-length:");
            if (cl == NULL || cl > end) {
                *detail = "the reply has no Content-Length";
                free(buf);
                close(fd);
                return ORM_TRANSPORT_IO;
            }
            content_length = (size_t)strtoul(cl + 15, NULL, 10);
        }
        if (end != NULL && len >= (size_t)(end + 4 - buf) + content_length) break;
    }
    close(fd);
    if (end == NULL || len < (size_t)(end + 4 - buf) + content_length) {
        *detail = "the connection closed before the whole reply";
        free(buf);
        return ORM_TRANSPORT_IO;
    }
    char *line_end = strstr(buf, "\r\n");
    out->status = (unsigned)atoi(buf + 9); /* "HTTP/1.1 200 OK" */
    out->head = line_end + 2;
    out->head_len = (size_t)(end + 2 - out->head);
    out->body = end + 4;
    out->body_len = content_length;
    *detail = buf; /* what to free */
    return 0;
}

static int layout(void) {
    printf("orm_input %zu %zu %zu %zu %zu %zu %zu %zu %zu\n", sizeof(orm_input),
           offsetof(orm_input, attempt), offsetof(orm_input, handle), offsetof(orm_input, kind),
           offsetof(orm_input, status), offsetof(orm_input, data), offsetof(orm_input, data_len),
           offsetof(orm_input, headers), offsetof(orm_input, headers_len));
    printf("orm_action %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu\n", sizeof(orm_action),
           offsetof(orm_action, attempt), offsetof(orm_action, handle),
           offsetof(orm_action, deadline_ms), offsetof(orm_action, kind),
           offsetof(orm_action, flags), offsetof(orm_action, method),
           offsetof(orm_action, destination), offsetof(orm_action, data),
           offsetof(orm_action, data_len), offsetof(orm_action, url),
           offsetof(orm_action, url_len));
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "--layout") == 0) return layout();
    if (argc != 3) {
        fprintf(stderr, "usage: host <base_url> <api_key> | host --layout\n");
        return 2;
    }
    if (orm_abi_version() != ORM_ABI_VERSION) {
        fprintf(stderr, "the library speaks ABI %u, this host %d\n", orm_abi_version(),
                ORM_ABI_VERSION);
        return 1;
    }
    char config[600];
    snprintf(config, sizeof config, "{\"base_url\":\"%s\",\"max_retries\":0}", argv[1]);
    orm_engine *engine = NULL;
    char error[256];
    size_t error_len = 0;
    int32_t status = orm_engine_new(ORM_ABI_VERSION, (const uint8_t *)config, strlen(config),
                                    &engine, (uint8_t *)error, sizeof error, &error_len);
    if (status != ORM_OK) {
        fprintf(stderr, "orm_engine_new failed (%d): %.*s\n", (int)status,
                (int)(error_len < sizeof error ? error_len : sizeof error), error);
        return 1;
    }

    orm_input in = {0};
    in.kind = ORM_INPUT_START;
    input(engine, &in, NULL);
    /* The client says everything at once, then closes its stream: the engine finishes
       the call in flight, writes its answer and exits. */
    in.kind = ORM_INPUT_STDIN;
    in.data = (const uint8_t *)CONVERSATION;
    in.data_len = sizeof CONVERSATION - 1;
    input(engine, &in, NULL);
    in = (orm_input){0};
    in.kind = ORM_INPUT_STDIN_CLOSED;
    input(engine, &in, NULL);

    for (;;) {
        orm_action action;
        status = orm_engine_poll(engine, &action);
        if (status != ORM_OK) fail(engine, "orm_engine_poll", status);
        if (action.kind == ORM_ACTION_EXIT) break;
        in = (orm_input){0};
        switch (action.kind) {
        case ORM_ACTION_WRITE: {
            int ok = fwrite(action.data, 1, action.data_len, stdout) == action.data_len &&
                     fflush(stdout) == 0;
            in.kind = ORM_INPUT_WRITTEN;
            in.status = ok ? 1 : 0;
            input(engine, &in, NULL);
            break;
        }
        case ORM_ACTION_START: {
            /* Copy what the action points at: the engine's buffers last until our next
               call with it, and we call it before the request ends. */
            char *url = malloc(action.url_len + 1);
            uint8_t *body = malloc(action.data_len + 1);
            memcpy(url, action.url, action.url_len);
            memcpy(body, action.data, action.data_len);
            size_t url_len = action.url_len, body_len = action.data_len;
            uint64_t attempt = action.attempt;
            fprintf(stderr, "start attempt %llu: %s %.*s\n", (unsigned long long)attempt,
                    action.method == ORM_METHOD_POST ? "POST" : "GET", (int)url_len, url);
            in.kind = ORM_INPUT_STARTED;
            in.attempt = attempt;
            in.handle = 1000 + attempt; /* ours: any number */
            input(engine, &in, NULL);

            struct reply reply;
            const char *detail = NULL;
            uint32_t failed = http_post(url, url_len, argv[2], body, body_len, &reply, &detail);
            in = (orm_input){0};
            in.attempt = attempt;
            uint64_t released = 0;
            if (failed) {
                in.kind = ORM_INPUT_HTTP_FAILED;
                in.status = failed;
                in.data = (const uint8_t *)detail;
                in.data_len = strlen(detail);
                input(engine, &in, &released);
            } else {
                in.kind = ORM_INPUT_HTTP_REPLY;
                in.status = reply.status;
                in.headers = (const uint8_t *)reply.head;
                in.headers_len = reply.head_len;
                in.data = (const uint8_t *)reply.body;
                in.data_len = reply.body_len;
                status = orm_engine_input(engine, now_ms(), unix_secs(), &in, &released);
                if (status < 0) fail(engine, "orm_engine_input", status);
                if (status == ORM_RELEASED)
                    fprintf(stderr, "released handle %llu\n", (unsigned long long)released);
                free((void *)detail);
            }
            free(url);
            free(body);
            break;
        }
        case ORM_ACTION_ABORT:
            /* Our requests end before we poll again: nothing is left to abort. */
            break;
        case ORM_ACTION_RECORD:
            fprintf(stderr, "record: %.*s\n", (int)action.data_len, (const char *)action.data);
            break;
        case ORM_ACTION_WAIT: {
            if (!(action.flags & ORM_WAIT_HAS_DEADLINE)) {
                fprintf(stderr, "the engine waits for input this host will never give\n");
                return 1;
            }
            uint64_t now = now_ms();
            if (action.deadline_ms > now) {
                uint64_t ms = action.deadline_ms - now;
                struct timespec t = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
                nanosleep(&t, NULL);
            }
            in.kind = ORM_INPUT_TIMEOUT;
            input(engine, &in, NULL);
            break;
        }
        default:
            fprintf(stderr, "unknown action %u\n", action.kind);
            return 1;
        }
    }
    fprintf(stderr, "exit\n");
    orm_engine_free(engine);
    return 0;
}
