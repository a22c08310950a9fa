#ifndef AUTHCTL_CSODIUM_SHIM_H
#define AUTHCTL_CSODIUM_SHIM_H
#include <sodium.h>
#endif
