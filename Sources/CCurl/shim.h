// Typed wrappers over libcurl's variadic curl_easy_setopt / curl_easy_getinfo,
// which Swift cannot call directly.
#ifndef UPLOADER_CCURL_SHIM_H
#define UPLOADER_CCURL_SHIM_H
#include <curl/curl.h>

typedef size_t (*uploader_curl_data_cb)(char *, size_t, size_t, void *);
typedef int (*uploader_curl_xferinfo_cb)(void *, curl_off_t, curl_off_t, curl_off_t, curl_off_t);
typedef int (*uploader_curl_seek_cb)(void *, curl_off_t, int);
typedef int (*uploader_curl_prereq_cb)(void *, char *, char *, int, int);
typedef int (*uploader_curl_sshkey_cb)(CURL *, const struct curl_khkey *, const struct curl_khkey *, enum curl_khmatch, void *);
typedef int (*uploader_curl_sshhostkey_cb)(void *, int, const char *, size_t);

static inline CURLcode uploader_curl_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode uploader_curl_setopt_off(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode uploader_curl_setopt_str(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode uploader_curl_setopt_ptr(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode uploader_curl_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode uploader_curl_setopt_data_cb(CURL *h, CURLoption o, uploader_curl_data_cb v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode uploader_curl_setopt_xferinfo_cb(CURL *h, uploader_curl_xferinfo_cb v) { return curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, v); }
static inline CURLcode uploader_curl_setopt_seek_cb(CURL *h, uploader_curl_seek_cb v) { return curl_easy_setopt(h, CURLOPT_SEEKFUNCTION, v); }
static inline CURLcode uploader_curl_setopt_prereq_cb(CURL *h, uploader_curl_prereq_cb v) { return curl_easy_setopt(h, CURLOPT_PREREQFUNCTION, v); }
static inline CURLcode uploader_curl_setopt_sshkey_cb(CURL *h, uploader_curl_sshkey_cb v) { return curl_easy_setopt(h, CURLOPT_SSH_KEYFUNCTION, v); }
static inline CURLcode uploader_curl_setopt_sshhostkey_cb(CURL *h, uploader_curl_sshhostkey_cb v) { return curl_easy_setopt(h, CURLOPT_SSH_HOSTKEYFUNCTION, v); }
static inline CURLcode uploader_curl_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode uploader_curl_getinfo_off(CURL *h, CURLINFO i, curl_off_t *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode uploader_curl_getinfo_str(CURL *h, CURLINFO i, char **v) { return curl_easy_getinfo(h, i, v); }
static inline CURLSHcode uploader_curl_share_setopt_long(CURLSH *s, CURLSHoption o, long v) { return curl_share_setopt(s, o, v); }

#endif
