#include "CMicroHTTPD.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <errno.h>

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

/* Each connection's memory for its request line, headers and arguments (libmicrohttpd's default
   is 32 KiB, which a query of some 460 arguments exhausts, and then it answers nothing). */
#define CONNECTION_MEMORY (128 * 1024)

/* Connections libmicrohttpd may hold past the limit, for the moment between a new connection
   coming and the one it makes room for being closed (see make_room). */
#define CONNECTION_RESERVE 64

/* One open connection, watched for two things libmicrohttpd does not do: a deadline for each
   request's line and headers (its own timeout counts from the last byte, so a client sending a
   byte now and then holds the connection for ever), and room for a new connection when the
   limit is reached (libmicrohttpd then leaves new ones waiting, however long those it holds take
   to send their requests). */
struct watched {
    struct watched *previous, *next;
    int fd;
    uint64_t since;   /* when it began to wait for its current request (ms, monotonic) */
    int head_read;    /* that request's line and headers have come */
    int request_read; /* and its body: it is being answered, or waits for its answer or stream */
    int closing;      /* shut down here; libmicrohttpd closes it at its next look */
};

struct authctl_http_server {
    struct MHD_Daemon *daemon;
    int quiesced;
    authctl_http_head_check head_check;
    authctl_http_handler handler;
    void *context;
    size_t body_limit;
    pthread_mutex_t watch_lock;
    pthread_cond_t watch_wake;
    struct watched *watched; /* every open connection, newest first */
    unsigned open;           /* those not being closed here */
    unsigned connection_limit;
    uint64_t header_timeout_ms;
    int stopping;
    int reaper_started;
    pthread_t reaper;
};

static uint64_t monotonic_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000;
}

/* Closes a watched connection from outside libmicrohttpd's loop: shutdown(2) makes the socket
   readable at its end, and libmicrohttpd closes it as one its client closed. Under the lock,
   which libmicrohttpd's closing notice takes before it closes the descriptor, so the descriptor
   is still this connection's. */
static void close_watched(struct authctl_http_server *server, struct watched *entry) {
    entry->closing = 1;
    server->open--;
    if (entry->fd >= 0) shutdown(entry->fd, SHUT_RDWR);
}

/* Past the limit, a new connection closes the one that has waited longest for a request (its
   line, headers or body still coming, or nothing yet on a kept-alive connection) — never one
   being answered; when every other is, the new one is closed. A client that sends its request
   at once is served however many connections trickle theirs. Under the lock. */
static void make_room(struct authctl_http_server *server, struct watched *newcomer) {
    struct watched *oldest = NULL;
    for (struct watched *entry = server->watched; entry; entry = entry->next) {
        if (entry != newcomer && !entry->closing && !entry->request_read && (oldest == NULL || entry->since <= oldest->since)) oldest = entry;
    }
    close_watched(server, oldest ? oldest : newcomer);
}

static void notice_connection(void *cls, struct MHD_Connection *connection, void **socket_context,
                              enum MHD_ConnectionNotificationCode code) {
    struct authctl_http_server *server = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        struct watched *entry = calloc(1, sizeof *entry);
        *socket_context = entry;
        if (entry == NULL) return;
        const union MHD_ConnectionInfo *info = p_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
        entry->fd = info ? info->connect_fd : -1;
        entry->since = monotonic_ms();
        pthread_mutex_lock(&server->watch_lock);
        entry->next = server->watched;
        if (server->watched) server->watched->previous = entry;
        server->watched = entry;
        if (++server->open > server->connection_limit) make_room(server, entry);
        pthread_mutex_unlock(&server->watch_lock);
        return;
    }
    struct watched *entry = *socket_context;
    if (entry == NULL) return;
    pthread_mutex_lock(&server->watch_lock);
    if (entry->previous) entry->previous->next = entry->next; else server->watched = entry->next;
    if (entry->next) entry->next->previous = entry->previous;
    if (!entry->closing) server->open--;
    pthread_mutex_unlock(&server->watch_lock);
    free(entry);
    *socket_context = NULL;
}

/* Where the connection's current request is: its head read (1), its body too (2), or neither
   (0: a new request is awaited, from now). */
static void watch_progress(struct authctl_http_server *server, struct MHD_Connection *connection, int progress) {
    const union MHD_ConnectionInfo *info = p_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    struct watched *entry = info ? info->socket_context : NULL;
    if (entry == NULL) return;
    pthread_mutex_lock(&server->watch_lock);
    entry->head_read = progress >= 1;
    entry->request_read = progress >= 2;
    if (progress == 0) entry->since = monotonic_ms();
    pthread_mutex_unlock(&server->watch_lock);
}

/* Closes each connection whose request's line and headers have not all come within the
   deadline, counted from when it began to wait for that request. */
static void *reap(void *cls) {
    struct authctl_http_server *server = cls;
    pthread_mutex_lock(&server->watch_lock);
    while (!server->stopping) {
        uint64_t now = monotonic_ms(), next = now + server->header_timeout_ms;
        for (struct watched *entry = server->watched; entry; entry = entry->next) {
            if (entry->closing || entry->head_read) continue;
            uint64_t deadline = entry->since + server->header_timeout_ms;
            if (deadline <= now) close_watched(server, entry);
            else if (deadline < next) next = deadline;
        }
        if (next < now + 50) next = now + 50; /* a look every 50 ms at most */
        struct timespec until = { (time_t)(next / 1000), (long)(next % 1000) * 1000000 };
        pthread_cond_timedwait(&server->watch_wake, &server->watch_lock, &until);
    }
    pthread_mutex_unlock(&server->watch_lock);
    return NULL;
}

/* Percent-decoding as libmicrohttpd's own does it, but for %00, which is left as it is: a NUL
   would end the path where the server reads it, so that `/accounts/ID%00x` named account ID. Left
   as text, it names nothing. */
static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static size_t unescape(void *cls, struct MHD_Connection *connection, char *text) {
    (void)cls; (void)connection;
    char *out = text;
    for (const char *in = text; *in;) {
        int high, low;
        if (in[0] == '%' && (high = hex_digit(in[1])) >= 0 && (low = hex_digit(in[2])) >= 0 && (high | low) != 0) {
            *out++ = (char)(high * 16 + low);
            in += 3;
        } else {
            *out++ = *in++;
        }
    }
    *out = '\0';
    return (size_t)(out - text);
}

/* An answer that comes later (see the header). */
struct authctl_http_deferred {
    pthread_mutex_t lock;
    struct MHD_Connection *connection;
    int references;
    int suspended; /* the connection waits for the answer */
    int ready;     /* the answer is here */
    authctl_http_response response;
};

/* Drops one of an object's references under its lock: how many are left. */
static int drop_reference(pthread_mutex_t *lock, int *references) {
    pthread_mutex_lock(lock);
    int left = --*references;
    pthread_mutex_unlock(lock);
    return left;
}

authctl_http_deferred *authctl_http_deferred_new(void) {
    authctl_http_deferred *deferred = calloc(1, sizeof *deferred);
    if (deferred == NULL) return NULL;
    pthread_mutex_init(&deferred->lock, NULL);
    deferred->references = 2;
    return deferred;
}

void authctl_http_deferred_unref(authctl_http_deferred *deferred) {
    if (deferred == NULL) return;
    if (drop_reference(&deferred->lock, &deferred->references) == 0) {
        free(deferred->response.body);
        free(deferred->response.headers);
        pthread_mutex_destroy(&deferred->lock);
        free(deferred);
    }
}

void authctl_http_deferred_complete(authctl_http_deferred *deferred, const authctl_http_response *response) {
    if (deferred == NULL) return;
    pthread_mutex_lock(&deferred->lock);
    if (deferred->ready) { /* answered once only */
        pthread_mutex_unlock(&deferred->lock);
        free(response->body);
        free(response->headers);
        return;
    }
    deferred->response = *response;
    deferred->response.stream = NULL;
    deferred->response.deferred = NULL;
    deferred->ready = 1;
    int resume = deferred->suspended;
    deferred->suspended = 0;
    pthread_mutex_unlock(&deferred->lock);
    if (resume) p_resume(deferred->connection); /* a suspended connection is still there */
}

/* One request as it arrives: its query (from the URI as sent), then its body. */
struct upload {
    authctl_http_deferred *deferred; /* its answer comes later */
    char *query;
    unsigned char *data;
    size_t length, capacity;
    int too_large;
    int answered; /* answered before its body (413): the rest of the body is not read */
};

/* The query, as libmicrohttpd decoded it, written again as `name=value&…` with every byte but
   unreserved ones percent-encoded, so the handler reads it as any query. */
struct query_text {
    char *text;
    size_t length, capacity;
    int failed;
};

/* Room for `count` more bytes and the terminating NUL. */
static int query_room(struct query_text *query, size_t count) {
    if (query->failed) return 0;
    if (query->length + count + 1 <= query->capacity) return 1;
    size_t capacity = query->capacity ? query->capacity : 256;
    while (capacity < query->length + count + 1) capacity *= 2;
    char *grown = realloc(query->text, capacity);
    if (grown == NULL) {
        query->failed = 1;
        return 0;
    }
    query->text = grown;
    query->capacity = capacity;
    return 1;
}

static void query_separator(struct query_text *query, char separator) {
    if (query_room(query, 1)) query->text[query->length++] = separator;
}

static void query_encoded(struct query_text *query, const char *bytes) {
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *c = (const unsigned char *)bytes; c && *c; c++) {
        if (!query_room(query, 3)) return;
        if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '-' || *c == '.' || *c == '_' || *c == '~') {
            query->text[query->length++] = (char)*c;
        } else {
            query->text[query->length++] = '%';
            query->text[query->length++] = hex[*c >> 4];
            query->text[query->length++] = hex[*c & 15];
        }
    }
}

static enum MHD_Result query_pair(void *cls, enum MHD_ValueKind kind, const char *name, const char *value) {
    (void)kind;
    struct query_text *query = cls;
    if (query->length > 0) query_separator(query, '&');
    query_encoded(query, name);
    if (value) {
        query_separator(query, '=');
        query_encoded(query, value);
    }
    return query->failed ? MHD_NO : MHD_YES;
}

static char *query_of(struct MHD_Connection *connection) {
    struct query_text query = { NULL, 0, 0, 0 };
    p_values(connection, MHD_GET_ARGUMENT_KIND, query_pair, &query);
    if (query.failed || query.text == NULL) {
        free(query.text);
        return strdup("");
    }
    query.text[query.length] = '\0'; /* query_room keeps room for it */
    return query.text;
}

/* A streamed body: its connection (to suspend while there is nothing to send, and resume), and
   two references — the caller's and the response's. */
struct authctl_http_stream {
    pthread_mutex_t lock;
    authctl_http_pull pull;
    authctl_http_release release;
    void *context;
    struct MHD_Connection *connection;
    int references;
    int suspended; /* the connection waits for bytes */
    int woken;     /* bytes came since the last pull began */
    int closed;    /* the response is gone */
};

authctl_http_stream *authctl_http_stream_new(authctl_http_pull pull, authctl_http_release release, void *stream_context) {
    authctl_http_stream *stream = calloc(1, sizeof *stream);
    if (stream == NULL) return NULL;
    pthread_mutex_init(&stream->lock, NULL);
    stream->pull = pull;
    stream->release = release;
    stream->context = stream_context;
    stream->references = 2;
    return stream;
}

void authctl_http_stream_unref(authctl_http_stream *stream) {
    if (stream == NULL) return;
    if (drop_reference(&stream->lock, &stream->references) == 0) {
        pthread_mutex_destroy(&stream->lock);
        free(stream);
    }
}

void authctl_http_stream_wake(authctl_http_stream *stream) {
    if (stream == NULL) return;
    pthread_mutex_lock(&stream->lock);
    stream->woken = 1;
    int resume = stream->suspended && !stream->closed;
    if (resume) stream->suspended = 0;
    pthread_mutex_unlock(&stream->lock);
    /* Outside the lock (libmicrohttpd takes its own); a suspended connection is neither timed
       out nor closed, so it is still there. */
    if (resume) p_resume(stream->connection);
}

static ssize_t read_stream(void *cls, uint64_t position, char *buffer, size_t capacity) {
    (void)position;
    authctl_http_stream *stream = cls;
    pthread_mutex_lock(&stream->lock);
    stream->woken = 0;
    pthread_mutex_unlock(&stream->lock);
    long count = stream->pull(stream->context, (unsigned char *)buffer, capacity);
    if (count > 0) return (ssize_t)count;
    if (count < 0) return MHD_CONTENT_READER_END_OF_STREAM;
    pthread_mutex_lock(&stream->lock);
    int suspend = !stream->woken; /* a wake during the pull: pull again rather than wait */
    if (suspend) stream->suspended = 1;
    pthread_mutex_unlock(&stream->lock);
    if (suspend) p_suspend(stream->connection);
    return 0;
}

static void end_stream(void *cls) {
    authctl_http_stream *stream = cls;
    pthread_mutex_lock(&stream->lock);
    stream->closed = 1;
    pthread_mutex_unlock(&stream->lock);
    stream->release(stream->context);
    authctl_http_stream_unref(stream);
}

/* Adds "Name: value\n" lines as headers. */
static void add_headers(struct MHD_Response *answer, char *lines) {
    for (char *line = lines; line && *line;) {
        char *end = strchr(line, '\n');
        if (end) *end = '\0';
        char *colon = strchr(line, ':');
        if (colon) {
            *colon = '\0';
            const char *value = colon + 1;
            while (*value == ' ') value++;
            p_add_header(answer, line, value);
        }
        line = end ? end + 1 : NULL;
    }
}

/* The request's framing fields, each of them (libmicrohttpd looks at the first only), for the
   head check: every Content-Length and every Transfer-Encoding, in the order sent. */
struct framing {
    const char **lengths;
    size_t length_count, length_room;
    const char **encodings;
    size_t encoding_count, encoding_room;
    int failed;
};

static void framing_add(const char ***fields, size_t *count, size_t *room, const char *value, int *failed) {
    if (*count == *room) {
        size_t grown = *room ? *room * 2 : 4;
        const char **more = realloc(*fields, grown * sizeof *more);
        if (more == NULL) {
            *failed = 1;
            return;
        }
        *fields = more;
        *room = grown;
    }
    (*fields)[(*count)++] = value ? value : "";
}

static enum MHD_Result read_framing(void *cls, enum MHD_ValueKind kind, const char *name, const char *value) {
    (void)kind;
    struct framing *framing = cls;
    if (strcasecmp(name, "Transfer-Encoding") == 0) {
        framing_add(&framing->encodings, &framing->encoding_count, &framing->encoding_room, value, &framing->failed);
    } else if (strcasecmp(name, "Content-Length") == 0) {
        framing_add(&framing->lengths, &framing->length_count, &framing->length_room, value, &framing->failed);
    }
    return MHD_YES;
}

static enum MHD_Result send_answer(struct MHD_Connection *connection, authctl_http_response *response);
static enum MHD_Result defer_answer(struct MHD_Connection *connection, authctl_http_deferred *deferred);

static enum MHD_Result access_handler(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                                      const char *version, const char *upload_data, size_t *upload_data_size, void **state) {
    struct authctl_http_server *server = cls;
    struct upload *upload = *state;
    if (upload == NULL) {
        upload = calloc(1, sizeof *upload);
        if (upload == NULL) return MHD_NO;
        *state = upload;
        watch_progress(server, connection, 1);
        /* The head checked before the body is read (the handler's head check: the framing, the
           declared length); a refused request is answered at once, its connection closed after. */
        struct framing framing = { NULL, 0, 0, NULL, 0, 0, 0 };
        p_values(connection, MHD_HEADER_KIND, read_framing, &framing);
        authctl_http_head head = {
            .version = version ? version : "", .content_lengths = framing.lengths, .content_length_count = framing.length_count,
            .transfer_encodings = framing.encodings, .transfer_encoding_count = framing.encoding_count,
        };
        authctl_http_response refusal = { .status = 500, .content_kind = 0, .body = NULL, .body_length = 0, .headers = NULL, .stream = NULL,
                                          .deferred = NULL };
        int refused = framing.failed ? 0 : server->head_check(server->context, &head, &refusal);
        free(framing.lengths);
        free(framing.encodings);
        if (framing.failed) return MHD_NO;
        if (refused) {
            upload->answered = 1;
            watch_progress(server, connection, 2);
            return send_answer(connection, &refusal);
        }
        return MHD_YES;
    }
    if (upload->answered) {
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (upload->deferred) return defer_answer(connection, upload->deferred); /* resumed: its answer came */
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
    if (upload->query == NULL) upload->query = query_of(connection);
    authctl_http_request request = {
        .method = method, .path = url, .query = upload->query ? upload->query : "", .authorization = p_lookup(connection, MHD_HEADER_KIND, "Authorization"),
        .origin = p_lookup(connection, MHD_HEADER_KIND, "Origin"),
        .host = p_lookup(connection, MHD_HEADER_KIND, "Host"),
        .body = upload->data, .body_length = upload->length, .body_too_large = upload->too_large,
    };
    authctl_http_response response = { .status = 500, .content_kind = 0, .body = NULL, .body_length = 0, .headers = NULL, .stream = NULL,
                                        .deferred = NULL };
    server->handler(server->context, &request, &response);
    if (response.deferred) {
        upload->deferred = response.deferred;
        free(response.body);
        free(response.headers);
        return defer_answer(connection, upload->deferred);
    }
    return send_answer(connection, &response);
}

/* Sends what the handler answered; the body and headers are the server's to free. */
static enum MHD_Result send_answer(struct MHD_Connection *connection, authctl_http_response *response) {
    struct MHD_Response *answer;
    if (response->stream) {
        free(response->body);
        response->stream->connection = connection;
        answer = p_create_callback(MHD_SIZE_UNKNOWN, 4096, read_stream, response->stream, end_stream);
        if (answer == NULL) end_stream(response->stream);
    } else {
        answer = response->body
            ? p_create(response->body_length, response->body, MHD_RESPMEM_MUST_FREE)
            : p_create(0, (void *)"", MHD_RESPMEM_PERSISTENT);
        if (answer == NULL) free(response->body);
    }
    response->body = NULL;
    if (answer == NULL) {
        free(response->headers);
        response->headers = NULL;
        return MHD_NO;
    }
    static const char *const kinds[] = { NULL, "application/json", "application/problem+json", "text/plain; charset=utf-8",
                                         "text/event-stream", "text/javascript; charset=utf-8" };
    if (response->content_kind > 0 && response->content_kind < 6) p_add_header(answer, "Content-Type", kinds[response->content_kind]);
    p_add_header(answer, "Cache-Control", "no-store");
    add_headers(answer, response->headers);
    free(response->headers);
    response->headers = NULL;
    enum MHD_Result queued = p_queue(connection, response->status, answer);
    p_destroy(answer);
    return queued;
}

/* The answer comes later: sent now if it came already, else the connection waits, suspended,
   until authctl_http_deferred_complete resumes it (and the access handler is called again). */
static enum MHD_Result defer_answer(struct MHD_Connection *connection, authctl_http_deferred *deferred) {
    pthread_mutex_lock(&deferred->lock);
    if (deferred->ready) {
        authctl_http_response response = deferred->response;
        deferred->response.body = NULL;
        deferred->response.headers = NULL;
        pthread_mutex_unlock(&deferred->lock);
        return send_answer(connection, &response);
    }
    deferred->connection = connection;
    deferred->suspended = 1;
    p_suspend(connection);
    pthread_mutex_unlock(&deferred->lock);
    return MHD_YES;
}

static void completed(void *cls, struct MHD_Connection *connection, void **state, enum MHD_RequestTerminationCode code) {
    (void)code;
    watch_progress(cls, connection, 0); /* kept alive, it waits for its next request from now */
    struct upload *upload = *state;
    if (upload) {
        authctl_http_deferred_unref(upload->deferred);
        free(upload->query);
        free(upload->data);
        free(upload);
        *state = NULL;
    }
}

static void free_server(struct authctl_http_server *server) {
    pthread_cond_destroy(&server->watch_wake);
    pthread_mutex_destroy(&server->watch_lock);
    free(server);
}

/* What is at `path` before a socket is made there: 0 when nothing (or a socket nobody listens
   on, left by a server that was killed, which is removed); -1, with the reason, when something
   else is — a file, a link, another user's socket, or one a server listens on. */
static int clear_socket_path(const char *path, const struct sockaddr_un *address, char *error, size_t error_length) {
    struct stat found;
    if (lstat(path, &found) != 0) {
        if (errno == ENOENT) return 0;
        snprintf(error, error_length, "cannot look at %s: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISSOCK(found.st_mode)) {
        snprintf(error, error_length, "cannot listen on %s: it exists and is not a socket (it is left as it is)", path);
        return -1;
    }
    if (found.st_uid != geteuid()) {
        snprintf(error, error_length, "cannot listen on %s: it is another user's socket", path);
        return -1;
    }
    /* Without blocking: a live server whose backlog is full answers EAGAIN, not at all. */
    int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (probe < 0) {
        snprintf(error, error_length, "cannot make a socket: %s", strerror(errno));
        return -1;
    }
    int connected = connect(probe, (const struct sockaddr *)address, sizeof *address);
    int why = errno;
    close(probe);
    if (connected == 0 || why == EAGAIN || why == EINPROGRESS) {
        snprintf(error, error_length, "cannot listen on %s: a server listens there already", path);
        return -1;
    }
    if (why != ECONNREFUSED) {
        snprintf(error, error_length, "cannot listen on %s: it is a socket that cannot be tried (%s)", path, strerror(why));
        return -1;
    }
    if (unlink(path) != 0 && errno != ENOENT) {
        snprintf(error, error_length, "cannot remove the stale socket %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* A Unix socket listening at `path`, made mode 600 (under the umask, so never reachable by
   others even for a moment): over nothing, or over a stale socket (clear_socket_path). The
   directory is locked (flock) from the look to the bind, so two servers starting on one path
   cannot each take the other's socket for stale. */
static int listen_unix(const char *path, char *error, size_t error_length) {
    struct sockaddr_un address;
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof address.sun_path) {
        snprintf(error, error_length, "the socket path is longer than %zu bytes", sizeof address.sun_path - 1);
        return -1;
    }
    strcpy(address.sun_path, path);
    char directory[sizeof address.sun_path];
    strcpy(directory, path);
    char *slash = strrchr(directory, '/');
    if (slash == directory) slash[1] = '\0'; else *slash = '\0';
    int directory_fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (directory_fd >= 0) flock(directory_fd, LOCK_EX);
    int listen_fd = -1;
    if (clear_socket_path(path, &address, error, error_length) == 0) {
        listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (listen_fd < 0) {
            snprintf(error, error_length, "cannot make a socket: %s", strerror(errno));
        } else {
            mode_t before = umask(0177);
            int bound = bind(listen_fd, (struct sockaddr *)&address, sizeof address);
            int saved = errno;
            umask(before);
            if (bound != 0 || listen(listen_fd, 128) != 0) {
                if (bound != 0) errno = saved;
                snprintf(error, error_length, "cannot listen on %s: %s", path, strerror(errno));
                if (bound == 0) unlink(path);
                close(listen_fd);
                listen_fd = -1;
            }
        }
    }
    if (directory_fd >= 0) close(directory_fd); /* and its lock */
    return listen_fd;
}

authctl_http_server *authctl_http_start(const char *address, uint16_t port, unsigned threads, size_t body_limit,
                                        unsigned timeout_seconds, unsigned header_timeout_seconds, unsigned connection_limit,
                                        authctl_http_head_check head_check, authctl_http_handler handler, void *context,
                                        uint16_t *bound_port, char *error, size_t error_length) {
    if (!authctl_http_load()) {
        snprintf(error, error_length, "%s", load_error);
        return NULL;
    }
    struct sockaddr_in socket_address;
    memset(&socket_address, 0, sizeof socket_address);
    int listen_fd = -1;
    if (address[0] == '/') {
        listen_fd = listen_unix(address, error, error_length);
        if (listen_fd < 0) return NULL;
    } else {
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
        if (listen_fd >= 0) {
            unlink(address);
            close(listen_fd);
        }
        return NULL;
    }
    server->head_check = head_check;
    server->handler = handler;
    server->context = context;
    server->body_limit = body_limit;
    server->connection_limit = connection_limit;
    server->header_timeout_ms = (uint64_t)(header_timeout_seconds ? header_timeout_seconds : 1) * 1000;
    pthread_mutex_init(&server->watch_lock, NULL);
    pthread_condattr_t monotonic;
    pthread_condattr_init(&monotonic);
    pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
    pthread_cond_init(&server->watch_wake, &monotonic);
    pthread_condattr_destroy(&monotonic);
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
        { MHD_OPTION_CONNECTION_LIMIT, (intptr_t)(connection_limit + CONNECTION_RESERVE), NULL },
        { MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, server },
        { MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)notice_connection, server },
        { MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)unescape, NULL },
        { MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)CONNECTION_MEMORY, NULL },
        { MHD_OPTION_END, 0, NULL },
    };
    server->daemon = p_start(flags, listen_fd >= 0 ? 0 : port, NULL, NULL, access_handler, server, MHD_OPTION_ARRAY, options, MHD_OPTION_END);
    if (server->daemon == NULL) {
        if (listen_fd >= 0) {
            snprintf(error, error_length, "cannot serve on %s", address);
            unlink(address);
            close(listen_fd);
        } else {
            snprintf(error, error_length, "cannot listen on %s:%u (in use, or not allowed)", address, (unsigned)port);
        }
        free_server(server);
        return NULL;
    }
    server->reaper_started = pthread_create(&server->reaper, NULL, reap, server) == 0;
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
    pthread_mutex_lock(&server->watch_lock);
    server->stopping = 1;
    pthread_cond_signal(&server->watch_wake);
    pthread_mutex_unlock(&server->watch_lock);
    if (server->reaper_started) pthread_join(server->reaper, NULL);
    p_stop(server->daemon); /* each connection's closing notice frees what watched it */
    free_server(server);
}
