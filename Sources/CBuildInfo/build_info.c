#include "build_info.h"

#ifndef AUTHCTL_COMMIT
#define AUTHCTL_COMMIT "unknown"
#endif

const char *authctl_build_commit(void) { return AUTHCTL_COMMIT; }
