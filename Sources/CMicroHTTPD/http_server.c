/* libmicrohttpd's side of `authctl serve`: only what Swift cannot do (CMicroHTTPD.h). Its symbols
   are found with dlsym (a C function pointer to a variadic function, MHD_start_daemon, Swift cannot
   call), and its callbacks — the access handler, the completion, connection and unescape notices,
   the content reader of a stream — are C functions that pass what they are given to Swift's
   callbacks (Sources/Server/HTTP/HTTPServer.swift) and do what those answer. No rule about bytes,
   limits, paths or times is kept here: the query's encoding, the path's decoding, the headers'
   checks, the socket file, the watch over connections (the deadline for a request's head, room
   past the limit), and the state of deferred answers and streams are Swift's. What is left is the
   memory libmicrohttpd's calls need: each request's body as it comes (up to the body limit), the
   fields a callback collects for Swift, an answer until libmicrohttpd has it. */
#include "CMicroHTTPD.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;
static char load_error[512];

static struct MHD_Daemon *(*p_start)(unsigned int, uint16_t, MHD_AcceptPolicyCallback, void *, MHD_AccessHandlerCallback, void *, ...);
static void (*p_stop)(struct MHD_Daemon *);
static MHD_socket (*p_quiesce)(struct MHD_Daemon *);
static const union MHD_DaemonInfo *(*p_info)(struct MHD_Daemon *, enum MHD_DaemonInfoType, ...);
static struct MHD_Response *(*p_create)(size_t, void *, enum MHD_ResponseMemoryMode);
static enum MHD_Result (*p_queue)(struct MHD_Connection *, unsigned int, struct MHD_Response *);
static void (*p_destroy)(struct MHD_Response *);
static enum MHD_Result (*p_add_header)(struct MHD_Response *, const char *, const char *);
static const char *(*p_lookup)(struct MHD_Connection *, enum MHD_ValueKind, const char *);
static int (*p_values)(struct MHD_Connection *, enum MHD_ValueKind, MHD_KeyValueIterator, void *);
static struct MHD_Response *(*p_create_callback)(uint64_t, size_t, MHD_ContentReaderCallback, void *, MHD_ContentReaderFreeCallback);
static void (*p_suspend)(struct MHD_Connection *);
static void (*p_resume)(struct MHD_Connection *);
static const union MHD_ConnectionInfo *(*p_connection_info)(struct MHD_Connection *, enum MHD_ConnectionInfoType, ...);

static int symbol(void *library, void **slot, const char *name) {
    *slot = dlsym(library, name);
    if (*slot == NULL) {
        snprintf(load_error, sizeof load_error, "libmicrohttpd has no %s", name);
        return 0;
    }
    return 1;
}

static void load(void) {
    void *library = dlopen("libmicrohttpd.so.12", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *why = dlerror();
        snprintf(load_error, sizeof load_error, "cannot load libmicrohttpd (libmicrohttpd12): %s", why ? why : "unknown");
        return;
    }
    /* One line per symbol: scripts/package-deb.sh reads these for the package's minimum version. */
#define SYMBOL(slot, name) if (!symbol(library, (void **)&slot, name)) return
    SYMBOL(p_start, "MHD_start_daemon");
    SYMBOL(p_stop, "MHD_stop_daemon");
    SYMBOL(p_quiesce, "MHD_quiesce_daemon");
    SYMBOL(p_info, "MHD_get_daemon_info");
    SYMBOL(p_create, "MHD_create_response_from_buffer");
    SYMBOL(p_queue, "MHD_queue_response");
    SYMBOL(p_destroy, "MHD_destroy_response");
    SYMBOL(p_add_header, "MHD_add_response_header");
    SYMBOL(p_lookup, "MHD_lookup_connection_value");
    SYMBOL(p_values, "MHD_get_connection_values");
    SYMBOL(p_create_callback, "MHD_create_response_from_callback");
    SYMBOL(p_suspend, "MHD_suspend_connection");
    SYMBOL(p_resume, "MHD_resume_connection");
    SYMBOL(p_connection_info, "MHD_get_connection_info");
#undef SYMBOL
    loaded = 1;
}

int authctl_http_load(void) {
    pthread_once(&once, load);
    return loaded;
}

const char *authctl_http_load_error(void) { return loaded ? NULL : load_error; }

struct authctl_http_server {
    struct MHD_Daemon *daemon;
    int quiesced;
    authctl_http_callbacks callbacks;
    size_t body_limit;
};

void authctl_http_suspend(void *connection) { p_suspend(connection); }

void authctl_http_resume(void *connection) { p_resume(connection); }

static void notice_connection(void *cls, struct MHD_Connection *connection, void **socket_context,
                              enum MHD_ConnectionNotificationCode code) {
    struct authctl_http_server *server = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *info = p_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
        *socket_context = (void *)server->callbacks.connection_opened(server->callbacks.context, info ? info->connect_fd : -1);
        return;
    }
    if (*socket_context == NULL) return;
    server->callbacks.connection_closed(server->callbacks.context, (intptr_t)*socket_context);
    *socket_context = NULL;
}

static void watch_progress(struct authctl_http_server *server, struct MHD_Connection *connection, int progress) {
    const union MHD_ConnectionInfo *info = p_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    if (info == NULL || info->socket_context == NULL) return;
    server->callbacks.connection_progress(server->callbacks.context, (intptr_t)info->socket_context, progress);
}

static size_t unescape(void *cls, struct MHD_Connection *connection, char *text) {
    (void)connection;
    struct authctl_http_server *server = cls;
    return server->callbacks.unescape(text);
}

/* Fields collected from libmicrohttpd's iterator for Swift: names and values, pointing into the
   connection's own memory (valid while the request is). */
struct fields {
    const char **names, **values;
    size_t count, room;
    int failed;
};

static void fields_add(struct fields *fields, const char *name, const char *value) {
    if (fields->failed) return;
    if (fields->count == fields->room) {
        size_t grown = fields->room ? fields->room * 2 : 8;
        const char **names = realloc(fields->names, grown * sizeof *names);
        if (names) fields->names = names;
        const char **values = names ? realloc(fields->values, grown * sizeof *values) : NULL;
        if (values) fields->values = values;
        if (names == NULL || values == NULL) {
            fields->failed = 1;
            return;
        }
        fields->room = grown;
    }
    fields->names[fields->count] = name;
    fields->values[fields->count] = value;
    fields->count++;
}

static void fields_free(struct fields *fields) {
    free(fields->names);
    free(fields->values);
}

static enum MHD_Result add_argument(void *cls, enum MHD_ValueKind kind, const char *name, const char *value) {
    (void)kind;
    fields_add(cls, name, value);
    return MHD_YES;
}

/* The framing fields, each of them (libmicrohttpd looks at the first only), for the head check. */
struct framing {
    struct fields lengths, encodings;
};

static enum MHD_Result add_framing(void *cls, enum MHD_ValueKind kind, const char *name, const char *value) {
    (void)kind;
    struct framing *framing = cls;
    if (strcasecmp(name, "Transfer-Encoding") == 0) fields_add(&framing->encodings, name, value ? value : "");
    else if (strcasecmp(name, "Content-Length") == 0) fields_add(&framing->lengths, name, value ? value : "");
    return MHD_YES;
}

/* One request as it arrives: its body, then, once handed to Swift, its answer. */
struct upload {
    void *deferred; /* its answer comes later */
    unsigned char *data;
    size_t length, capacity;
    int too_large;
    int answered; /* answered before its body (on its head): the rest of the body is not read */
};

/* A streamed body being sent: Swift's stream, and the connection it suspends while there is
   nothing to send. */
struct streaming {
    struct authctl_http_server *server;
    void *stream;
    struct MHD_Connection *connection;
};

static ssize_t read_stream(void *cls, uint64_t position, char *buffer, size_t capacity) {
    (void)position;
    struct streaming *streaming = cls;
    long count = streaming->server->callbacks.stream_pull(streaming->stream, streaming->connection, (unsigned char *)buffer, capacity);
    if (count > 0) return (ssize_t)count;
    if (count < 0) return MHD_CONTENT_READER_END_OF_STREAM;
    p_suspend(streaming->connection);
    return 0;
}

static void end_stream(void *cls) {
    struct streaming *streaming = cls;
    streaming->server->callbacks.stream_release(streaming->stream);
    free(streaming);
}

static void free_response(authctl_http_response *response) {
    free(response->body);
    free(response->headers);
    response->body = NULL;
    response->headers = NULL;
}

/* Sends what Swift answered; the body and headers are the server's to free. */
static enum MHD_Result send_answer(struct authctl_http_server *server, struct MHD_Connection *connection, authctl_http_response *response) {
    struct MHD_Response *answer;
    if (response->stream) {
        free(response->body);
        response->body = NULL;
        struct streaming *streaming = malloc(sizeof *streaming);
        if (streaming == NULL) {
            server->callbacks.stream_release(response->stream);
            answer = NULL;
        } else {
            *streaming = (struct streaming){ server, response->stream, connection };
            answer = p_create_callback(MHD_SIZE_UNKNOWN, 4096, read_stream, streaming, end_stream);
            if (answer == NULL) end_stream(streaming);
        }
    } else {
        answer = response->body
            ? p_create(response->body_length, response->body, MHD_RESPMEM_MUST_FREE)
            : p_create(0, (void *)"", MHD_RESPMEM_PERSISTENT);
        if (answer == NULL) free(response->body);
        response->body = NULL;
    }
    if (answer == NULL) {
        free_response(response);
        return MHD_NO;
    }
    static const char *const kinds[] = { NULL, "application/json", "application/problem+json", "text/plain; charset=utf-8",
                                         "text/event-stream", "text/javascript; charset=utf-8",
                                         "application/xml; charset=utf-8", "text/html; charset=utf-8" };
    if (response->content_kind > 0 && response->content_kind < sizeof kinds / sizeof kinds[0]) p_add_header(answer, "Content-Type", kinds[response->content_kind]);
    p_add_header(answer, "Cache-Control", "no-store");
    const char *field = response->headers;
    for (size_t i = 0; field && i < response->header_count; i++) {
        const char *value = field + strlen(field) + 1;
        p_add_header(answer, field, value);
        field = value + strlen(value) + 1;
    }
    free_response(response);
    enum MHD_Result queued = p_queue(connection, response->status, answer);
    p_destroy(answer);
    return queued;
}

/* The answer comes later: sent now if it came already, else Swift has suspended the connection
   until the answer comes (and the access handler is called again). */
static enum MHD_Result defer_answer(struct authctl_http_server *server, struct MHD_Connection *connection, void *deferred) {
    authctl_http_response response = { .status = 500 };
    if (!server->callbacks.deferred_answer(deferred, connection, &response)) return MHD_YES;
    response.stream = NULL;
    response.deferred = NULL;
    return send_answer(server, connection, &response);
}

/* The head handed to Swift's head check before the body is read; a refused request is answered
   at once, its connection closed after. */
static enum MHD_Result check_head(struct authctl_http_server *server, struct MHD_Connection *connection, const char *version,
                                  struct upload *upload) {
    struct framing framing = { { 0 }, { 0 } };
    p_values(connection, MHD_HEADER_KIND, add_framing, &framing);
    int failed = framing.lengths.failed || framing.encodings.failed;
    authctl_http_head head = {
        .version = version ? version : "", .content_lengths = framing.lengths.values, .content_length_count = framing.lengths.count,
        .transfer_encodings = framing.encodings.values, .transfer_encoding_count = framing.encodings.count,
    };
    authctl_http_response refusal = { .status = 500 };
    int refused = failed ? 0 : server->callbacks.head_check(server->callbacks.context, &head, &refusal);
    fields_free(&framing.lengths);
    fields_free(&framing.encodings);
    if (failed) return MHD_NO;
    if (!refused) return MHD_YES;
    upload->answered = 1;
    watch_progress(server, connection, 2);
    refusal.stream = NULL;
    refusal.deferred = NULL;
    return send_answer(server, connection, &refusal);
}

/* The request, read whole, to Swift's handler. */
static enum MHD_Result handle(struct authctl_http_server *server, struct MHD_Connection *connection, const char *url, const char *method,
                              struct upload *upload) {
    struct fields arguments = { 0 };
    p_values(connection, MHD_GET_ARGUMENT_KIND, add_argument, &arguments);
    if (arguments.failed) {
        fields_free(&arguments);
        return MHD_NO;
    }
    authctl_http_request request = {
        .method = method, .path = url,
        .argument_names = arguments.names, .argument_values = arguments.values, .argument_count = arguments.count,
        .authorization = p_lookup(connection, MHD_HEADER_KIND, "Authorization"),
        .origin = p_lookup(connection, MHD_HEADER_KIND, "Origin"),
        .host = p_lookup(connection, MHD_HEADER_KIND, "Host"),
        .body = upload->data, .body_length = upload->length, .body_too_large = upload->too_large,
    };
    authctl_http_response response = { .status = 500 };
    server->callbacks.handle(server->callbacks.context, &request, &response);
    fields_free(&arguments);
    if (response.deferred) {
        upload->deferred = response.deferred;
        free_response(&response);
        return defer_answer(server, connection, upload->deferred);
    }
    return send_answer(server, connection, &response);
}

static enum MHD_Result access_handler(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                                      const char *version, const char *upload_data, size_t *upload_data_size, void **state) {
    struct authctl_http_server *server = cls;
    struct upload *upload = *state;
    if (upload == NULL) {
        upload = calloc(1, sizeof *upload);
        if (upload == NULL) return MHD_NO;
        *state = upload;
        watch_progress(server, connection, 1);
        return check_head(server, connection, version, upload);
    }
    if (upload->answered) {
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (upload->deferred) return defer_answer(server, connection, upload->deferred); /* resumed: its answer came */
    if (*upload_data_size != 0) {
        size_t count = *upload_data_size;
        *upload_data_size = 0;
        if (upload->too_large) return MHD_YES;
        if (count > server->body_limit - upload->length) {
            upload->too_large = 1;
            free(upload->data);
            upload->data = NULL;
            upload->length = upload->capacity = 0;
            return MHD_YES;
        }
        if (upload->length + count > upload->capacity) {
            size_t capacity = upload->capacity ? upload->capacity : 4096;
            while (capacity < upload->length + count) capacity *= 2;
            if (capacity > server->body_limit) capacity = server->body_limit;
            unsigned char *grown = realloc(upload->data, capacity);
            if (grown == NULL) return MHD_NO;
            upload->data = grown;
            upload->capacity = capacity;
        }
        memcpy(upload->data + upload->length, upload_data, count);
        upload->length += count;
        return MHD_YES;
    }
    watch_progress(server, connection, 2);
    return handle(server, connection, url, method, upload);
}

static void completed(void *cls, struct MHD_Connection *connection, void **state, enum MHD_RequestTerminationCode code) {
    (void)code;
    struct authctl_http_server *server = cls;
    watch_progress(server, connection, 0); /* kept alive, it waits for its next request from now */
    struct upload *upload = *state;
    if (upload) {
        if (upload->deferred) server->callbacks.deferred_release(upload->deferred);
        free(upload->data);
        free(upload);
        *state = NULL;
    }
}

authctl_http_server *authctl_http_start(const char *address, uint16_t port, int listen_fd, unsigned threads, size_t body_limit,
                                        unsigned timeout_seconds, unsigned connection_limit, size_t connection_memory,
                                        const authctl_http_callbacks *callbacks, uint16_t *bound_port, char *error, size_t error_length) {
    if (!authctl_http_load()) {
        snprintf(error, error_length, "%s", load_error);
        return NULL;
    }
    struct sockaddr_in socket_address;
    memset(&socket_address, 0, sizeof socket_address);
    if (listen_fd < 0) {
        socket_address.sin_family = AF_INET;
        socket_address.sin_port = htons(port);
        if (inet_pton(AF_INET, address, &socket_address.sin_addr) != 1) {
            snprintf(error, error_length, "%s is not an IPv4 address", address);
            return NULL;
        }
    }
    struct authctl_http_server *server = calloc(1, sizeof *server);
    if (server == NULL) {
        snprintf(error, error_length, "out of memory");
        return NULL;
    }
    server->callbacks = *callbacks;
    server->body_limit = body_limit;
    /* poll(2), not epoll: libmicrohttpd 0.9.75's epoll loop stalls when one wait returns exactly
       as many events as its buffer holds (128), and its quiesce can abort the process ("Failed to
       remove listen FD from epoll set") racing the pool's workers. poll has neither, and no
       FD_SETSIZE bound as select has. */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ITC | MHD_ALLOW_SUSPEND_RESUME;
    struct MHD_OptionItem options[] = {
        listen_fd >= 0 ? (struct MHD_OptionItem){ MHD_OPTION_LISTEN_SOCKET, (intptr_t)listen_fd, NULL }
                       : (struct MHD_OptionItem){ MHD_OPTION_SOCK_ADDR, 0, &socket_address },
        { MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)(threads ? threads : 1), NULL },
        { MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)timeout_seconds, NULL },
        { MHD_OPTION_CONNECTION_LIMIT, (intptr_t)connection_limit, NULL },
        { MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, server },
        { MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)notice_connection, server },
        { MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)unescape, server },
        { MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)connection_memory, NULL },
        { MHD_OPTION_END, 0, NULL },
    };
    server->daemon = p_start(flags, listen_fd >= 0 ? 0 : port, NULL, NULL, access_handler, server, MHD_OPTION_ARRAY, options, MHD_OPTION_END);
    if (server->daemon == NULL) {
        if (listen_fd >= 0) snprintf(error, error_length, "cannot serve on %s", address);
        else snprintf(error, error_length, "cannot listen on %s:%u (in use, or not allowed)", address, (unsigned)port);
        free(server);
        return NULL;
    }
    const union MHD_DaemonInfo *info = listen_fd >= 0 ? NULL : p_info(server->daemon, MHD_DAEMON_INFO_BIND_PORT);
    *bound_port = info ? info->port : port;
    return server;
}

void authctl_http_quiesce(authctl_http_server *server) {
    if (server == NULL || server->quiesced) return;
    server->quiesced = 1;
    MHD_socket listening = p_quiesce(server->daemon);
    if (listening != MHD_INVALID_SOCKET) close(listening);
}

void authctl_http_stop(authctl_http_server *server) {
    if (server == NULL) return;
    authctl_http_quiesce(server);
    p_stop(server->daemon); /* each connection's closing notice, each stream's and answer's release */
    free(server);
}
