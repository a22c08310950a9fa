#ifndef AUTHCTL_FIDO2_WIRE_H
#define AUTHCTL_FIDO2_WIRE_H
/* authctl's CTAPHID wire, the client's side (docs/ctap.md): where a key listens, and a link to it
   that carries 64-byte HID reports (no report ID byte) — back to back on a Unix stream socket,
   one per datagram over UDP. */
#include <stddef.h>
#include <sys/socket.h>

#define WIRE_REPORT_LEN 64
/* How long a key over UDP has to answer the CTAPHID_INIT that tells whether it is there. */
#define WIRE_UDP_PROBE_MS 1000

#define WIRE_HIDDEN __attribute__((visibility("hidden")))

enum wire_kind { WIRE_UNIX, WIRE_UDP };

struct wire_place {
    enum wire_kind kind;
    struct sockaddr_storage address;
    socklen_t address_len;
};

/* Parses an AUTHCTL_CTAP entry, "unix:/abs/path" or "udp:HOST:PORT" (HOST an IPv4 address, an
   IPv6 one in brackets, or a name: its first address). 0, or -1 with `why` (of `why_len` bytes)
   saying what is wrong. */
WIRE_HIDDEN int wire_place_parse(const char *entry, struct wire_place *place, char *why, size_t why_len);

/* Whether a key listens there now: a Unix socket that accepts a connection, or a UDP port that
   answers a CTAPHID_INIT within WIRE_UDP_PROBE_MS. */
WIRE_HIDDEN int wire_place_present(const struct wire_place *place);

struct wire_link;
/* A link to the key (NULL with errno set when it cannot be made: a Unix socket that refuses). */
WIRE_HIDDEN struct wire_link *wire_link_open(const struct wire_place *place);
WIRE_HIDDEN void wire_link_close(struct wire_link *link);
/* Sends one report: 0, or -1 (the key gone). */
WIRE_HIDDEN int wire_link_send(struct wire_link *link, const unsigned char report[WIRE_REPORT_LEN]);
/* Receives one report, waiting at most `ms` milliseconds (-1: no limit): 0, or -1 (the time
   passed, or the key gone). A report cut by the time limit is kept and completed by the next
   call, so the stream stays in step. */
WIRE_HIDDEN int wire_link_receive(struct wire_link *link, unsigned char report[WIRE_REPORT_LEN], int ms);

#endif
