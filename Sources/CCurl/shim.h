#ifndef AUTHCTL_CCURL_SHIM_H
#define AUTHCTL_CCURL_SHIM_H
#include <curl/curl.h>
#endif
