#ifndef AUTHCTL_CCBOR_SHIM_H
#define AUTHCTL_CCBOR_SHIM_H
#include <cbor.h>
#include <stdlib.h>
static inline void authctl_cbor_free_buffer(unsigned char *p) { free(p); }
#endif
