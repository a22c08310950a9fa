# Sourced by the build scripts: the environment a build of authctl reads (Package.swift).
# AUTHCTL_COMMIT is the commit the binary is built from, shown by `authctl --version`: twelve hex
# digits, with "-dirty" when tracked files differ from it; "unknown" outside a git checkout.
if [ -z "${AUTHCTL_COMMIT:-}" ]; then
  if AUTHCTL_COMMIT=$(git rev-parse --short=12 HEAD 2>/dev/null); then
    git diff --quiet HEAD -- 2>/dev/null || AUTHCTL_COMMIT="$AUTHCTL_COMMIT-dirty"
  else
    AUTHCTL_COMMIT=unknown
  fi
fi
export AUTHCTL_COMMIT
