/* The client's side of authctl's CTAPHID wire (wire.h). No CTAPHID framing is done here:
   libfido2 frames and reads its messages itself; this carries its reports. */
#define _GNU_SOURCE
#include "wire.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

struct wire_link {
    enum wire_kind kind;
    int fd;
    /* A report partly received on the stream when the time ran out. */
    unsigned char pending[WIRE_REPORT_LEN];
    size_t pending_len;
};

int wire_place_parse(const char *entry, struct wire_place *place, char *why, size_t why_len) {
    memset(place, 0, sizeof(*place));
    if (strncmp(entry, "unix:", 5) == 0) {
        const char *path = entry + 5;
        struct sockaddr_un *address = (struct sockaddr_un *)&place->address;
        if (path[0] != '/') {
            snprintf(why, why_len, "'%s' is not an absolute path", path);
            return -1;
        }
        if (strlen(path) >= sizeof(address->sun_path)) {
            snprintf(why, why_len, "the socket path is longer than %zu bytes", sizeof(address->sun_path) - 1);
            return -1;
        }
        place->kind = WIRE_UNIX;
        address->sun_family = AF_UNIX;
        strcpy(address->sun_path, path);
        place->address_len = (socklen_t)sizeof(*address);
        return 0;
    }
    if (strncmp(entry, "udp:", 4) == 0) {
        const char *rest = entry + 4;
        /* [IPv6]:PORT, or HOST:PORT split at the last colon */
        const char *close = rest[0] == '[' ? strchr(rest, ']') : NULL;
        const char *colon = rest[0] == '[' ? (close != NULL && close[1] == ':' ? close + 1 : NULL) : strrchr(rest, ':');
        char host[256];
        if (colon == NULL || colon == rest || colon[1] == '\0') {
            snprintf(why, why_len, "'%s' is not HOST:PORT", rest);
            return -1;
        }
        const char *port = colon + 1;
        size_t host_len = (size_t)(colon - rest);
        if (close != NULL) {
            rest++;
            host_len -= 2;
        }
        if (host_len == 0 || host_len >= sizeof(host)) {
            snprintf(why, why_len, "'%s' is not HOST:PORT", entry + 4);
            return -1;
        }
        memcpy(host, rest, host_len);
        host[host_len] = '\0';
        char *end = NULL;
        long number = strtol(port, &end, 10);
        if (*end != '\0' || number < 1 || number > 65535 || port[0] < '0' || port[0] > '9') {
            snprintf(why, why_len, "'%s' is not a port (1 to 65535)", port);
            return -1;
        }
        struct addrinfo hints = {.ai_socktype = SOCK_DGRAM, .ai_flags = AI_NUMERICSERV}, *found = NULL;
        int status = getaddrinfo(host, port, &hints, &found);
        if (status != 0 || found == NULL) {
            snprintf(why, why_len, "the host '%s' is not found (%s)", host, gai_strerror(status));
            return -1;
        }
        place->kind = WIRE_UDP;
        memcpy(&place->address, found->ai_addr, found->ai_addrlen);
        place->address_len = found->ai_addrlen;
        freeaddrinfo(found);
        return 0;
    }
    snprintf(why, why_len, "not unix:/ABSOLUTE/PATH or udp:HOST:PORT");
    return -1;
}

static long long now_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* Waits until `fd` can be read, up to `deadline` (now_ms; -1: no limit): 1 ready, 0 the time
   passed, -1 an error. */
static int wait_readable(int fd, long long deadline) {
    for (;;) {
        int timeout = -1;
        if (deadline >= 0) {
            long long left = deadline - now_ms();
            if (left <= 0)
                return 0;
            timeout = left > 1000000 ? 1000000 : (int)left;
        }
        struct pollfd watched = {.fd = fd, .events = POLLIN};
        int ready = poll(&watched, 1, timeout);
        if (ready > 0)
            return 1;
        if (ready < 0 && errno != EINTR)
            return -1;
    }
}

struct wire_link *wire_link_open(const struct wire_place *place) {
    int type = place->kind == WIRE_UNIX ? SOCK_STREAM : SOCK_DGRAM;
    int fd = socket(place->address.ss_family, type | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return NULL;
    /* Over UDP, connect() only fixes the peer: the key's reports alone are received, and a port
       nobody listens on shows as ECONNREFUSED. */
    while (connect(fd, (const struct sockaddr *)&place->address, place->address_len) != 0) {
        if (errno == EINTR)
            continue;
        int saved = errno;
        close(fd);
        errno = saved;
        return NULL;
    }
    struct wire_link *link = calloc(1, sizeof(*link));
    if (link == NULL) {
        close(fd);
        errno = ENOMEM;
        return NULL;
    }
    link->kind = place->kind;
    link->fd = fd;
    return link;
}

void wire_link_close(struct wire_link *link) {
    if (link == NULL)
        return;
    close(link->fd);
    free(link);
}

int wire_link_send(struct wire_link *link, const unsigned char report[WIRE_REPORT_LEN]) {
    size_t sent = 0;
    while (sent < WIRE_REPORT_LEN) {
        /* MSG_NOSIGNAL: a key that went away fails the write; it does not kill the program. */
        ssize_t n = send(link->fd, report + sent, WIRE_REPORT_LEN - sent, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (link->kind == WIRE_UDP)
            return n == WIRE_REPORT_LEN ? 0 : -1;
        sent += (size_t)n;
    }
    return 0;
}

int wire_link_receive(struct wire_link *link, unsigned char report[WIRE_REPORT_LEN], int ms) {
    long long deadline = ms < 0 ? -1 : now_ms() + ms;
    if (link->kind == WIRE_UDP) {
        for (;;) {
            int ready = wait_readable(link->fd, deadline);
            if (ready <= 0)
                return -1;
            unsigned char datagram[WIRE_REPORT_LEN + 1];
            /* MSG_TRUNC: the datagram's own length, so a longer one is seen as such. */
            ssize_t n = recv(link->fd, datagram, sizeof(datagram), MSG_TRUNC);
            if (n < 0) {
                if (errno == EINTR || errno == EAGAIN)
                    continue;
                return -1;
            }
            if (n != WIRE_REPORT_LEN)
                continue; /* not a report (the wire says: ignored) */
            memcpy(report, datagram, WIRE_REPORT_LEN);
            return 0;
        }
    }
    while (link->pending_len < WIRE_REPORT_LEN) {
        int ready = wait_readable(link->fd, deadline);
        if (ready <= 0)
            return -1;
        ssize_t n = recv(link->fd, link->pending + link->pending_len, WIRE_REPORT_LEN - link->pending_len, 0);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            return -1;
        }
        if (n == 0)
            return -1; /* the key closed the connection */
        link->pending_len += (size_t)n;
    }
    memcpy(report, link->pending, WIRE_REPORT_LEN);
    link->pending_len = 0;
    return 0;
}

int wire_place_present(const struct wire_place *place) {
    struct wire_link *link = wire_link_open(place);
    if (link == NULL)
        return 0;
    if (place->kind == WIRE_UNIX) {
        wire_link_close(link);
        return 1;
    }
    /* CTAPHID_INIT (0x86) on the broadcast channel with an 8-byte nonce (CTAP 2.1 §11.2.9.1.3).
       Any report on the broadcast channel in return shows the key there: its INIT answer, or an
       error such as ERR_CHANNEL_BUSY while another channel's transaction runs. */
    unsigned char report[WIRE_REPORT_LEN] = {0xff, 0xff, 0xff, 0xff, 0x86, 0x00, 0x08};
    if (getrandom(report + 7, 8, 0) != 8)
        memset(report + 7, 0x5a, 8);
    int present = 0;
    if (wire_link_send(link, report) == 0) {
        long long deadline = now_ms() + WIRE_UDP_PROBE_MS;
        unsigned char answer[WIRE_REPORT_LEN];
        while (!present) {
            long long left = deadline - now_ms();
            if (left <= 0 || wire_link_receive(link, answer, (int)left) != 0)
                break;
            present = memcmp(answer, "\xff\xff\xff\xff", 4) == 0;
        }
    }
    wire_link_close(link);
    return present;
}
