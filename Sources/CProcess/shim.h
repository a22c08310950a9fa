#ifndef AUTHCTL_CPROCESS_SHIM_H
#define AUTHCTL_CPROCESS_SHIM_H
#include <sys/prctl.h>
#include <sys/resource.h>

/* prctl is variadic, which Swift cannot call: the one use, wrapped. */
static inline int authctl_set_not_dumpable(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }
#endif
