#ifndef AUTHCTL_CCURL_H
#define AUTHCTL_CCURL_H
/* libcurl, loaded when first used. Only a scenario's HTTP steps and an origin that is not a plain
   `scheme://host[:port]` need it, so a command that needs neither does not pay for loading
   libcurl and the two dozen libraries it links (about 3 ms of every start). Each function below
   is libcurl's of the same name without the `authctl_` prefix; before libcurl is loaded they load
   it, and if it cannot be loaded they fail as libcurl fails for want of memory (NULL, or
   CURLE_FAILED_INIT / CURLUE_OUT_OF_MEMORY), with the reason in authctl_curl_load_error(). */
#include <curl/curl.h>

/* Whether libcurl is loaded (loading it if it is not yet). */
int authctl_curl_load(void);
/* Why libcurl could not be loaded, or NULL. */
const char *authctl_curl_load_error(void);

CURLcode authctl_curl_global_init(long flags);
CURL *authctl_curl_easy_init(void);
void authctl_curl_easy_cleanup(CURL *handle);
void authctl_curl_easy_reset(CURL *handle);
CURLcode authctl_curl_easy_perform(CURL *handle);
const char *authctl_curl_easy_strerror(CURLcode code);
void authctl_curl_free(void *pointer);
struct curl_slist *authctl_curl_slist_append(struct curl_slist *list, const char *text);
void authctl_curl_slist_free_all(struct curl_slist *list);
CURLU *authctl_curl_url(void);
void authctl_curl_url_cleanup(CURLU *handle);
CURLUcode authctl_curl_url_set(CURLU *handle, CURLUPart what, const char *part, unsigned int flags);
CURLUcode authctl_curl_url_get(const CURLU *handle, CURLUPart what, char **part, unsigned int flags);
const char *authctl_curl_url_strerror(CURLUcode code);

/* curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: one typed
   wrapper per kind of value. */
typedef size_t (*authctl_curl_write_callback)(char *data, size_t size, size_t count, void *context);
CURLcode authctl_curl_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode authctl_curl_setopt_string(CURL *handle, CURLoption option, const char *value);
CURLcode authctl_curl_setopt_pointer(CURL *handle, CURLoption option, void *value);
CURLcode authctl_curl_setopt_write(CURL *handle, authctl_curl_write_callback callback);
/* CURLOPT_HEADERFUNCTION: each header line of a reply, as a write callback gets the body. */
CURLcode authctl_curl_setopt_header(CURL *handle, authctl_curl_write_callback callback);
/* CURLOPT_XFERINFOFUNCTION: called during a transfer (about once a second when nothing moves);
   a nonzero return ends it (CURLE_ABORTED_BY_CALLBACK). */
typedef int (*authctl_curl_xferinfo_callback)(void *context, curl_off_t downloadTotal, curl_off_t downloaded,
                                              curl_off_t uploadTotal, curl_off_t uploaded);
CURLcode authctl_curl_setopt_xferinfo(CURL *handle, authctl_curl_xferinfo_callback callback);
CURLcode authctl_curl_getinfo_long(CURL *handle, CURLINFO info, long *value);
#endif
