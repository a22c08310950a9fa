#ifndef AUTHCTL_CIDN2_SHIM_H
#define AUTHCTL_CIDN2_SHIM_H
#include <stdlib.h>
#include <idn2.h>
/* The URL Standard's "domain to ASCII" maps with UTS #46, non-transitional (browsers do the same). */
static const int authctl_idn2_flags = IDN2_NONTRANSITIONAL | IDN2_NFC_INPUT;
static inline void authctl_idn2_free(char *p) { idn2_free(p); }
#endif
