#ifndef AUTHCTL_CCURL_SHIM_H
#define AUTHCTL_CCURL_SHIM_H
#include <curl/curl.h>

/* curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: one typed
   wrapper per kind of value. */
typedef size_t (*authctl_curl_write_callback)(char *data, size_t size, size_t count, void *context);
static inline CURLcode authctl_curl_setopt_long(CURL *h, CURLoption option, long value) { return curl_easy_setopt(h, option, value); }
static inline CURLcode authctl_curl_setopt_string(CURL *h, CURLoption option, const char *value) { return curl_easy_setopt(h, option, value); }
static inline CURLcode authctl_curl_setopt_pointer(CURL *h, CURLoption option, void *value) { return curl_easy_setopt(h, option, value); }
static inline CURLcode authctl_curl_setopt_write(CURL *h, authctl_curl_write_callback callback) {
    return curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, callback);
}
static inline CURLcode authctl_curl_getinfo_long(CURL *h, CURLINFO info, long *value) { return curl_easy_getinfo(h, info, value); }
#endif
