#ifndef AUTHCTL_CMICROHTTPD_H
#define AUTHCTL_CMICROHTTPD_H
/* An HTTP/1.1 server on libmicrohttpd, loaded when first used (only `authctl serve` needs it, and
   linking it would load it, and GnuTLS, into every command). The server reads each request whole
   (up to a body limit), hands it to one handler, and sends what the handler answers; before the
   body is read, the request's head goes to a head check (the framing, RFC 9112, 6.1 and 6.3, is
   judged there, in Swift); a deadline for each request's head and room for new connections past
   the limit are kept here; everything else — keep-alive, the idle timeout,
   malformed HTTP — is libmicrohttpd's. */
#include <stddef.h>
#include <stdint.h>

/* Whether libmicrohttpd is loaded (loading it if it is not yet), and why not. */
int authctl_http_load(void);
const char *authctl_http_load_error(void);

typedef struct authctl_http_request {
    const char *method;
    const char *path;          /* the URL's path (percent-decoded by libmicrohttpd), without its query */
    const char *query;         /* the URL's query as sent, without its '?' ("" when none) */
    const char *authorization; /* the Authorization header, or NULL */
    const char *origin;        /* the Origin header (a page's cross-origin request), or NULL */
    const char *host;          /* the Host header, or NULL */
    const unsigned char *body;
    size_t body_length;
    int body_too_large;        /* the body went past the limit: `body` is empty */
} authctl_http_request;

typedef struct authctl_http_stream authctl_http_stream;
typedef struct authctl_http_deferred authctl_http_deferred;

/* A stream's next bytes, written into `buffer`: their count, 0 when there are none yet (the
   connection then waits, without a thread, until `authctl_http_stream_wake`), -1 at its end. */
typedef long (*authctl_http_pull)(void *stream_context, unsigned char *buffer, size_t capacity);
/* The stream's connection is gone (closed by either side, or the server stopped): called once. */
typedef void (*authctl_http_release)(void *stream_context);

typedef struct authctl_http_response {
    unsigned int status;
    unsigned int content_kind; /* 0: none, 1: application/json, 2: application/problem+json, 3: text/plain,
                                  4: text/event-stream, 5: text/javascript */
    unsigned char *body;       /* malloc'd by the handler, freed by the server (NULL: none) */
    size_t body_length;
    char *headers;             /* more headers, "Name: value\n" each; malloc'd, freed by the server (NULL: none) */
    authctl_http_stream *stream; /* a body sent as it comes (from authctl_http_stream_new), instead of `body` */
    authctl_http_deferred *deferred; /* the answer comes later (authctl_http_deferred_complete): the connection
                                        waits without a thread until then */
} authctl_http_response;

/* An answer given later, from any thread: the connection waits, suspended, until
   authctl_http_deferred_complete hands over the response (whose body and headers the server then
   frees). The caller holds one reference (authctl_http_deferred_unref drops it); the request
   another. */
authctl_http_deferred *authctl_http_deferred_new(void);
void authctl_http_deferred_complete(authctl_http_deferred *deferred, const authctl_http_response *response);
void authctl_http_deferred_unref(authctl_http_deferred *deferred);

/* A body that comes over time (Server-Sent Events): `pull` gives its bytes, `release` says its
   connection is gone. The caller holds one reference (authctl_http_stream_unref drops it); the
   response it is put in holds another. */
authctl_http_stream *authctl_http_stream_new(authctl_http_pull pull, authctl_http_release release, void *stream_context);
/* There are bytes to pull (or the end): a waiting connection is resumed. */
void authctl_http_stream_wake(authctl_http_stream *stream);
void authctl_http_stream_unref(authctl_http_stream *stream);

typedef void (*authctl_http_handler)(void *context, const authctl_http_request *request, authctl_http_response *response);

/* A request's head as it came, before its body is read: its version and every Content-Length and
   Transfer-Encoding field, in the order sent (libmicrohttpd itself reads the first of each only). */
typedef struct authctl_http_head {
    const char *version;
    const char *const *content_lengths;
    size_t content_length_count;
    const char *const *transfer_encodings;
    size_t transfer_encoding_count;
} authctl_http_head;

/* Whether a request is refused on its head alone (its body's end ambiguous, or declared too
   large): nonzero with the answer written into `response` (no stream, no deferred answer); the
   body is then never read and the connection is closed after the answer. */
typedef int (*authctl_http_head_check)(void *context, const authctl_http_head *head, authctl_http_response *response);

typedef struct authctl_http_server authctl_http_server;

/* Starts serving on IPv4 `address`:`port` (0: a free port, written to `bound_port`), or on a
   Unix socket when `address` is an absolute path (made mode 600; never over an existing file but
   a socket nobody listens on), with `threads` threads; NULL, with the reason in `error`, when it
   cannot. A connection idle for `timeout_seconds` is closed, and so is one whose request's line
   and headers have not all come `header_timeout_seconds` after it began to wait for them; past
   `connection_limit` connections, a new one closes the one that has waited longest for a request. */
authctl_http_server *authctl_http_start(const char *address, uint16_t port, unsigned threads, size_t body_limit,
                                        unsigned timeout_seconds, unsigned header_timeout_seconds, unsigned connection_limit,
                                        authctl_http_head_check head_check, authctl_http_handler handler, void *context,
                                        uint16_t *bound_port, char *error, size_t error_length);

/* Stops accepting (the listening socket is closed); the connections open are still served. */
void authctl_http_quiesce(authctl_http_server *server);

/* Stops accepting, lets the requests being handled finish, and frees the server. */
void authctl_http_stop(authctl_http_server *server);
#endif
