#ifndef AUTHCTL_CFIDO2PRELOAD_H
#define AUTHCTL_CFIDO2PRELOAD_H
/* libauthctl-fido2.so: loaded with LD_PRELOAD into a program that uses libfido2 (fido2-token,
   fido2-cred, fido2-assert, OpenSSH's ssh-sk-helper), it lets that program reach authctl's
   security keys over their CTAPHID socket (docs/ctap.md). It defines the three libfido2
   functions below, which the program's calls reach before libfido2's own; each does its part and
   calls libfido2's, found with dlsym at the call. Everything else the program calls is libfido2's,
   untouched.

   The parts of libfido2's ABI (libfido2.so.1, as of 1.12) used here are declared here, from
   libfido2 1.12's src/fido/types.h and src/fido.h: building needs no libfido2 header, and the
   library links nothing of libfido2 (a program without libfido2 that inherits LD_PRELOAD loads
   it and never calls it). */
#include <stddef.h>

typedef struct fido_dev fido_dev_t;           /* opaque */
typedef struct fido_dev_info fido_dev_info_t; /* opaque */

/* A device's I/O: open a path, close, read one report (waiting at most `ms` milliseconds, -1 for
   no limit; the report's length in, the count read out), write one report (preceded by its report
   ID byte: 65 bytes for a 64-byte report; the count written out). */
typedef void *fido_dev_io_open_t(const char *);
typedef void fido_dev_io_close_t(void *);
typedef int fido_dev_io_read_t(void *, unsigned char *, size_t, int);
typedef int fido_dev_io_write_t(void *, const unsigned char *, size_t);
typedef struct fido_dev_io {
    fido_dev_io_open_t *open;
    fido_dev_io_close_t *close;
    fido_dev_io_read_t *read;
    fido_dev_io_write_t *write;
} fido_dev_io_t;

typedef int fido_dev_rx_t(fido_dev_t *, unsigned char, unsigned char *, size_t, int);
typedef int fido_dev_tx_t(fido_dev_t *, unsigned char, const unsigned char *, size_t);
typedef struct fido_dev_transport {
    fido_dev_rx_t *rx;
    fido_dev_tx_t *tx;
} fido_dev_transport_t;

#define FIDO_OK 0
#define FIDO_ERR_INVALID_ARGUMENT (-7)
#define FIDO_ERR_INTERNAL (-9)

/* libfido2's list of the devices present, then every key AUTHCTL_CTAP names that answers, as
   "authctl:unix:/abs/path" or "authctl:udp:HOST:PORT" (manufacturer "authctl", product
   "security key"), while the list has room. */
int fido_dev_info_manifest(fido_dev_info_t *devlist, size_t ilen, size_t *olen);
/* libfido2's, but a path "authctl:..." is opened over the key's socket. */
int fido_dev_open(fido_dev_t *dev, const char *path);
/* libfido2's, but a device of an "authctl:..." entry of the list opens over the key's socket. */
fido_dev_t *fido_dev_new_with_info(const fido_dev_info_t *info);

#endif
