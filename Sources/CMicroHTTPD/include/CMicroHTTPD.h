#ifndef AUTHCTL_CMICROHTTPD_H
#define AUTHCTL_CMICROHTTPD_H
/* libmicrohttpd, loaded when first used (only `authctl serve` needs it, and linking it would load
   it, and GnuTLS, into every command), reduced to what Swift cannot do itself: call its symbols
   (found with dlsym, one of them variadic), and be called back by it. Each request is read whole
   (up to a body limit) and handed to Swift — its head first, before the body is read — and what
   Swift answers is sent. Every rule is Swift's (Sources/Server/HTTP): the framing, the query's
   encoding and the path's decoding, the headers, the socket file, the deadline for each request's
   head and room for new connections past the limit, answers that come later and streams; this
   file passes what libmicrohttpd gives and does what Swift says. Keep-alive, the idle timeout and
   malformed HTTP are libmicrohttpd's. */
#include <stddef.h>
#include <stdint.h>

/* Whether libmicrohttpd is loaded (loading it if it is not yet), and why not. */
int authctl_http_load(void);
const char *authctl_http_load_error(void);

typedef struct authctl_http_request {
    const char *method;
    const char *path;          /* the URL's path (percent-decoded by `unescape`), without its query */
    /* The query's arguments in the order sent, each name and value decoded by `unescape`; a value
       is NULL for an argument without '='. */
    const char *const *argument_names;
    const char *const *argument_values;
    size_t argument_count;
    const char *authorization; /* the Authorization header, or NULL */
    const char *origin;        /* the Origin header (a page's cross-origin request), or NULL */
    const char *host;          /* the Host header, or NULL */
    const unsigned char *body;
    size_t body_length;
    int body_too_large;        /* the body went past the limit: `body` is empty */
} authctl_http_request;

typedef struct authctl_http_response {
    unsigned int status;
    unsigned int content_kind; /* 0: none, 1: application/json, 2: application/problem+json, 3: text/plain,
                                  4: text/event-stream, 5: text/javascript, 6: application/xml, 7: text/html */
    unsigned char *body;       /* malloc'd by the handler, freed by the server (NULL: none) */
    size_t body_length;
    char *headers;             /* more headers, `header_count` of them, each its name and its value as two
                                  NUL-terminated strings one after the other, added as they are (Swift checked
                                  them); malloc'd, freed by the server (NULL: none) */
    size_t header_count;
    void *stream;              /* a body sent as it comes, instead of `body`: the context of `stream_pull`,
                                  held by the server until it calls `stream_release` */
    void *deferred;            /* the answer comes later: the context of `deferred_answer`, held by the
                                  server until it calls `deferred_release` (the rest of this response is
                                  not sent) */
} authctl_http_response;

/* A request's head as it came, before its body is read: its version and every Content-Length and
   Transfer-Encoding field, in the order sent (libmicrohttpd itself reads the first of each only). */
typedef struct authctl_http_head {
    const char *version;
    const char *const *content_lengths;
    size_t content_length_count;
    const char *const *transfer_encodings;
    size_t transfer_encoding_count;
} authctl_http_head;

/* What libmicrohttpd's callbacks hand to Swift, each on one of its threads. `connection` is
   libmicrohttpd's, for authctl_http_suspend and authctl_http_resume. */
typedef struct authctl_http_callbacks {
    void *context;
    /* Whether a request is refused on its head alone: nonzero with the answer written into
       `response` (no stream, no deferred answer); the body is then never read and the connection
       is closed after the answer. */
    int (*head_check)(void *context, const authctl_http_head *head, authctl_http_response *response);
    /* The request, read whole: its answer written into `response`. */
    void (*handle)(void *context, const authctl_http_request *request, authctl_http_response *response);
    /* Percent-decodes the NUL-terminated `text` (the path, each argument's name and value) in
       place: its new length. */
    size_t (*unescape)(char *text);
    /* A connection opened (`fd` its socket, -1 when unknown): a token for it, not 0. */
    intptr_t (*connection_opened)(void *context, int fd);
    /* Where its current request is: its head read (1), its body too (2), or neither (0: a new
       request is awaited, from now). */
    void (*connection_progress)(void *context, intptr_t token, int progress);
    /* It is closing: its socket is still open, and is closed once this returns. */
    void (*connection_closed)(void *context, intptr_t token);
    /* A stream's next bytes, written into `buffer`: their count, -1 at its end, or 0 when there
       are none yet — the connection is then suspended, without a thread, until Swift resumes it. */
    long (*stream_pull)(void *stream, void *connection, unsigned char *buffer, size_t capacity);
    /* The stream's connection is gone (closed by either side, or the server stopped): once. */
    void (*stream_release)(void *stream);
    /* A deferred answer, asked for: 1 with it written into `response` when it has come; 0 when
       not, and then Swift has suspended `connection`, and resumes it when the answer comes. */
    int (*deferred_answer)(void *deferred, void *connection, authctl_http_response *response);
    /* The request the deferred answer was for is over (answered, or its connection gone): once. */
    void (*deferred_release)(void *deferred);
} authctl_http_callbacks;

/* libmicrohttpd's own: a connection waits without a thread until resumed (only from a callback
   about that connection), and is resumed (from any thread). */
void authctl_http_suspend(void *connection);
void authctl_http_resume(void *connection);

typedef struct authctl_http_server authctl_http_server;

/* Starts serving on `listen_fd`, a listening socket (then the server's), or, when it is -1, on
   IPv4 `address`:`port` (0: a free port, written to `bound_port`), with `threads` threads; NULL,
   with the reason in `error`, when it cannot (`listen_fd` is then still the caller's). A
   connection idle for `timeout_seconds` is closed; libmicrohttpd holds at most `connection_limit`
   connections, each with `connection_memory` bytes for its request's line, headers and
   arguments. */
authctl_http_server *authctl_http_start(const char *address, uint16_t port, int listen_fd, unsigned threads, size_t body_limit,
                                        unsigned timeout_seconds, unsigned connection_limit, size_t connection_memory,
                                        const authctl_http_callbacks *callbacks, uint16_t *bound_port, char *error, size_t error_length);

/* Stops accepting (the listening socket is closed); the connections open are still served. */
void authctl_http_quiesce(authctl_http_server *server);

/* Stops accepting, lets the requests being handled finish, and frees the server: each
   connection's `connection_closed`, and each stream's and deferred answer's release, is called
   before it returns. */
void authctl_http_stop(authctl_http_server *server);
#endif
