#include "CCurl.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

/* libcurl's entry points, filled in once by load(). */
static struct {
    CURLcode (*global_init)(long);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *);
    void (*easy_reset)(CURL *);
    CURLcode (*easy_perform)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    void (*free)(void *);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
    CURLU *(*url)(void);
    void (*url_cleanup)(CURLU *);
    CURLUcode (*url_set)(CURLU *, CURLUPart, const char *, unsigned int);
    CURLUcode (*url_get)(const CURLU *, CURLUPart, char **, unsigned int);
    const char *(*url_strerror)(CURLUcode);
} curl;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;
static const char *load_error;

static void load(void) {
    /* The soname libcurl4-openssl-dev links against (ABI 4 since libcurl 7.16). */
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        load_error = dlerror();
        if (load_error == NULL) load_error = "dlopen failed";
        return;
    }
#define SYMBOL(field, name)                                   \
    *(void **)(&curl.field) = dlsym(library, name);           \
    if (curl.field == NULL) {                                 \
        load_error = "libcurl.so.4 lacks " name;              \
        return;                                               \
    }
    SYMBOL(global_init, "curl_global_init")
    SYMBOL(easy_init, "curl_easy_init")
    SYMBOL(easy_cleanup, "curl_easy_cleanup")
    SYMBOL(easy_reset, "curl_easy_reset")
    SYMBOL(easy_perform, "curl_easy_perform")
    SYMBOL(easy_strerror, "curl_easy_strerror")
    SYMBOL(easy_setopt, "curl_easy_setopt")
    SYMBOL(easy_getinfo, "curl_easy_getinfo")
    SYMBOL(free, "curl_free")
    SYMBOL(slist_append, "curl_slist_append")
    SYMBOL(slist_free_all, "curl_slist_free_all")
    SYMBOL(url, "curl_url")
    SYMBOL(url_cleanup, "curl_url_cleanup")
    SYMBOL(url_set, "curl_url_set")
    SYMBOL(url_get, "curl_url_get")
    SYMBOL(url_strerror, "curl_url_strerror")
#undef SYMBOL
    loaded = 1;
}

int authctl_curl_load(void) {
    pthread_once(&once, load);
    return loaded;
}

const char *authctl_curl_load_error(void) {
    authctl_curl_load();
    return load_error;
}

CURLcode authctl_curl_global_init(long flags) { return authctl_curl_load() ? curl.global_init(flags) : CURLE_FAILED_INIT; }
CURL *authctl_curl_easy_init(void) { return authctl_curl_load() ? curl.easy_init() : NULL; }
void authctl_curl_easy_cleanup(CURL *handle) { if (authctl_curl_load()) curl.easy_cleanup(handle); }
void authctl_curl_easy_reset(CURL *handle) { if (authctl_curl_load()) curl.easy_reset(handle); }
CURLcode authctl_curl_easy_perform(CURL *handle) { return authctl_curl_load() ? curl.easy_perform(handle) : CURLE_FAILED_INIT; }
const char *authctl_curl_easy_strerror(CURLcode code) {
    return authctl_curl_load() ? curl.easy_strerror(code) : "libcurl could not be loaded";
}
void authctl_curl_free(void *pointer) { if (authctl_curl_load()) curl.free(pointer); }
struct curl_slist *authctl_curl_slist_append(struct curl_slist *list, const char *text) {
    return authctl_curl_load() ? curl.slist_append(list, text) : NULL;
}
void authctl_curl_slist_free_all(struct curl_slist *list) { if (authctl_curl_load()) curl.slist_free_all(list); }
CURLU *authctl_curl_url(void) { return authctl_curl_load() ? curl.url() : NULL; }
void authctl_curl_url_cleanup(CURLU *handle) { if (authctl_curl_load()) curl.url_cleanup(handle); }
CURLUcode authctl_curl_url_set(CURLU *handle, CURLUPart what, const char *part, unsigned int flags) {
    return authctl_curl_load() ? curl.url_set(handle, what, part, flags) : CURLUE_OUT_OF_MEMORY;
}
CURLUcode authctl_curl_url_get(const CURLU *handle, CURLUPart what, char **part, unsigned int flags) {
    return authctl_curl_load() ? curl.url_get(handle, what, part, flags) : CURLUE_OUT_OF_MEMORY;
}
const char *authctl_curl_url_strerror(CURLUcode code) {
    return authctl_curl_load() ? curl.url_strerror(code) : "libcurl could not be loaded";
}

CURLcode authctl_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return authctl_curl_load() ? curl.easy_setopt(handle, option, value) : CURLE_FAILED_INIT;
}
CURLcode authctl_curl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return authctl_curl_load() ? curl.easy_setopt(handle, option, value) : CURLE_FAILED_INIT;
}
CURLcode authctl_curl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return authctl_curl_load() ? curl.easy_setopt(handle, option, value) : CURLE_FAILED_INIT;
}
CURLcode authctl_curl_setopt_write(CURL *handle, authctl_curl_write_callback callback) {
    return authctl_curl_load() ? curl.easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback) : CURLE_FAILED_INIT;
}
CURLcode authctl_curl_setopt_header(CURL *handle, authctl_curl_write_callback callback) {
    return authctl_curl_load() ? curl.easy_setopt(handle, CURLOPT_HEADERFUNCTION, callback) : CURLE_FAILED_INIT;
}
CURLcode authctl_curl_setopt_xferinfo(CURL *handle, authctl_curl_xferinfo_callback callback) {
    return authctl_curl_load() ? curl.easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback) : CURLE_FAILED_INIT;
}
CURLcode authctl_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return authctl_curl_load() ? curl.easy_getinfo(handle, info, value) : CURLE_FAILED_INIT;
}
