#ifndef AUTHCTL_BUILD_INFO_H
#define AUTHCTL_BUILD_INFO_H
/* What was fixed when this binary was built. */

/* The commit the binary was built from: twelve hex digits, with "-dirty" when tracked files
   differed from it (scripts/build-env.sh), or "unknown" when the build was not given one. */
const char *authctl_build_commit(void);

#endif
