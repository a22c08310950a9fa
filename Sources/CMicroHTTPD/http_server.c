#include "CMicroHTTPD.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    authctl_http_handler handler;
    void *context;
    size_t body_limit;
};

/* One request's body as it arrives. */
struct upload {
    unsigned char *data;
    size_t length, capacity;
    int too_large;
    int answered; /* answered before its body (413): the rest of the body is not read */
};

static const char too_large_body[] =
    "{\"type\":\"about:blank\",\"title\":\"badInput\",\"status\":413,"
    "\"detail\":\"the body is larger than the server accepts\",\"name\":\"badInput\"}";

/* A body its Content-Length says is over the limit is refused at once, not read first. */
static enum MHD_Result refuse_too_large(struct MHD_Connection *connection) {
    struct MHD_Response *answer = p_create(sizeof too_large_body - 1, (void *)too_large_body, MHD_RESPMEM_PERSISTENT);
    if (answer == NULL) return MHD_NO;
    p_add_header(answer, "Content-Type", "application/problem+json");
    p_add_header(answer, "Connection", "close");
    enum MHD_Result queued = p_queue(connection, 413, answer);
    p_destroy(answer);
    return queued;
}

static enum MHD_Result access_handler(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                                      const char *version, const char *upload_data, size_t *upload_data_size, void **state) {
    (void)version;
    struct authctl_http_server *server = cls;
    struct upload *upload = *state;
    if (upload == NULL) {
        upload = calloc(1, sizeof *upload);
        if (upload == NULL) return MHD_NO;
        *state = upload;
        const char *declared = p_lookup(connection, MHD_HEADER_KIND, "Content-Length");
        if (declared != NULL) {
            char *end = NULL;
            unsigned long long length = strtoull(declared, &end, 10);
            if (end != declared && *end == '\0' && length > server->body_limit) {
                upload->answered = 1;
                return refuse_too_large(connection);
            }
        }
        return MHD_YES;
    }
    if (upload->answered) {
        *upload_data_size = 0;
        return MHD_YES;
    }
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
    authctl_http_request request = {
        .method = method, .path = url, .authorization = p_lookup(connection, MHD_HEADER_KIND, "Authorization"),
        .body = upload->data, .body_length = upload->length, .body_too_large = upload->too_large,
    };
    authctl_http_response response = { .status = 500, .content_kind = 0, .body = NULL, .body_length = 0 };
    server->handler(server->context, &request, &response);
    struct MHD_Response *answer = response.body
        ? p_create(response.body_length, response.body, MHD_RESPMEM_MUST_FREE)
        : p_create(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    if (answer == NULL) {
        free(response.body);
        return MHD_NO;
    }
    static const char *const kinds[] = { NULL, "application/json", "application/problem+json", "text/plain; charset=utf-8" };
    if (response.content_kind > 0 && response.content_kind < 4) p_add_header(answer, "Content-Type", kinds[response.content_kind]);
    p_add_header(answer, "Cache-Control", "no-store");
    enum MHD_Result queued = p_queue(connection, response.status, answer);
    p_destroy(answer);
    return queued;
}

static void completed(void *cls, struct MHD_Connection *connection, void **state, enum MHD_RequestTerminationCode code) {
    (void)cls; (void)connection; (void)code;
    struct upload *upload = *state;
    if (upload) {
        free(upload->data);
        free(upload);
        *state = NULL;
    }
}

authctl_http_server *authctl_http_start(const char *address, uint16_t port, unsigned threads, size_t body_limit,
                                        unsigned timeout_seconds, unsigned connection_limit,
                                        authctl_http_handler handler, void *context,
                                        uint16_t *bound_port, char *error, size_t error_length) {
    if (!authctl_http_load()) {
        snprintf(error, error_length, "%s", load_error);
        return NULL;
    }
    struct sockaddr_in socket_address;
    memset(&socket_address, 0, sizeof socket_address);
    socket_address.sin_family = AF_INET;
    socket_address.sin_port = htons(port);
    if (inet_pton(AF_INET, address, &socket_address.sin_addr) != 1) {
        snprintf(error, error_length, "%s is not an IPv4 address", address);
        return NULL;
    }
    struct authctl_http_server *server = calloc(1, sizeof *server);
    if (server == NULL) {
        snprintf(error, error_length, "out of memory");
        return NULL;
    }
    server->handler = handler;
    server->context = context;
    server->body_limit = body_limit;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC;
    server->daemon = p_start(flags, port, NULL, NULL, access_handler, server,
                             MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&socket_address,
                             MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)(threads ? threads : 1),
                             MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)timeout_seconds,
                             MHD_OPTION_CONNECTION_LIMIT, (unsigned int)connection_limit,
                             MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
                             MHD_OPTION_END);
    if (server->daemon == NULL) {
        snprintf(error, error_length, "cannot listen on %s:%u (in use, or not allowed)", address, (unsigned)port);
        free(server);
        return NULL;
    }
    const union MHD_DaemonInfo *info = p_info(server->daemon, MHD_DAEMON_INFO_BIND_PORT);
    *bound_port = info ? info->port : port;
    return server;
}

void authctl_http_stop(authctl_http_server *server) {
    if (server == NULL) return;
    p_quiesce(server->daemon);
    p_stop(server->daemon);
    free(server);
}
