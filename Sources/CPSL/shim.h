#ifndef AUTHCTL_CPSL_SHIM_H
#define AUTHCTL_CPSL_SHIM_H
#include <stdio.h>
#include <libpsl.h>
#endif
