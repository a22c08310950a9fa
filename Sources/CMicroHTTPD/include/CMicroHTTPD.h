#ifndef AUTHCTL_CMICROHTTPD_H
#define AUTHCTL_CMICROHTTPD_H
/* An HTTP/1.1 server on libmicrohttpd, loaded when first used (only `authctl serve` needs it, and
   linking it would load it, and GnuTLS, into every command). The server reads each request whole
   (up to a body limit), hands it to one handler, and sends what the handler answers; everything
   else — keep-alive, timeouts, the connection cap, malformed HTTP — is libmicrohttpd's. */
#include <stddef.h>
#include <stdint.h>

/* Whether libmicrohttpd is loaded (loading it if it is not yet), and why not. */
int authctl_http_load(void);
const char *authctl_http_load_error(void);

typedef struct authctl_http_request {
    const char *method;
    const char *path;          /* the URL's path, without its query */
    const char *authorization; /* the Authorization header, or NULL */
    const unsigned char *body;
    size_t body_length;
    int body_too_large;        /* the body went past the limit: `body` is empty */
} authctl_http_request;

typedef struct authctl_http_response {
    unsigned int status;
    unsigned int content_kind; /* 0: none, 1: application/json, 2: application/problem+json, 3: text/plain */
    unsigned char *body;       /* malloc'd by the handler, freed by the server (NULL: none) */
    size_t body_length;
} authctl_http_response;

typedef void (*authctl_http_handler)(void *context, const authctl_http_request *request, authctl_http_response *response);

typedef struct authctl_http_server authctl_http_server;

/* Starts serving on IPv4 `address`:`port` (0: a free port, written to `bound_port`) with
   `threads` threads; NULL, with the reason in `error`, when it cannot. */
authctl_http_server *authctl_http_start(const char *address, uint16_t port, unsigned threads, size_t body_limit,
                                        unsigned timeout_seconds, unsigned connection_limit,
                                        authctl_http_handler handler, void *context,
                                        uint16_t *bound_port, char *error, size_t error_length);

/* Stops accepting, lets the requests being handled finish, and frees the server. */
void authctl_http_stop(authctl_http_server *server);
#endif
