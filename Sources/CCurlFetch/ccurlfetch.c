#include "ccurlfetch.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

int ccurlfetch_global_init(void) { return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1; }

/// The write callback's state: the body so far, its bound, and why it stopped.
typedef struct {
    CURL *handle;
    char *data;
    size_t length;
    size_t capacity;
    size_t max_bytes;
    int too_large;
} body_buffer;

/// Appends a piece of the body. Returning fewer bytes than given makes libcurl
/// abandon the transfer (CURLE_WRITE_ERROR): past max_bytes, for an answer other
/// than 200 (its body is not wanted), or when memory runs out.
static size_t append(char *piece, size_t size, size_t count, void *user) {
    body_buffer *body = user;
    size_t bytes = size * count;
    long status = 0;
    curl_easy_getinfo(body->handle, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200) return 0;
    if (bytes > body->max_bytes - body->length) {
        body->too_large = 1;
        return 0;
    }
    if (body->length + bytes + 1 > body->capacity) {
        size_t capacity = body->capacity ? body->capacity : 16384;
        while (capacity < body->length + bytes + 1) capacity *= 2;
        char *grown = realloc(body->data, capacity);
        if (!grown) return 0;
        body->data = grown;
        body->capacity = capacity;
    }
    memcpy(body->data + body->length, piece, bytes);
    body->length += bytes;
    body->data[body->length] = 0;
    return bytes;
}

void ccurlfetch_get(const char *url, long timeout_ms, size_t max_bytes, ccurlfetch_result *result) {
    memset(result, 0, sizeof *result);
    char error[CURL_ERROR_SIZE] = {0};
    CURL *handle = curl_easy_init();
    if (!handle) {
        result->code = CURLE_FAILED_INIT;
        result->message = strdup(curl_easy_strerror(CURLE_FAILED_INIT));
        return;
    }
    body_buffer body = {.handle = handle, .max_bytes = max_bytes};
    struct curl_slist *headers = curl_slist_append(NULL, "Accept: application/json");
    if (timeout_ms < 1) timeout_ms = 1;
    curl_easy_setopt(handle, CURLOPT_URL, url);
    curl_easy_setopt(handle, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(handle, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(handle, CURLOPT_USERAGENT, "ferry");
    curl_easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    // A key set's URL is configured by the operator: a redirect is refused with
    // its status, which names what to configure instead.
    curl_easy_setopt(handle, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(handle, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(handle, CURLOPT_SSL_VERIFYHOST, 2L);
    // Threads: no SIGALRM for DNS timeouts, no signal handlers touched.
    curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(handle, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    // Refuses an announced Content-Length over the bound before reading it.
    curl_easy_setopt(handle, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)max_bytes);
    curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, append);
    curl_easy_setopt(handle, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, error);
    CURLcode code = curl_easy_perform(handle);
    curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &result->status);
    result->code = (int)code;
    result->timed_out = code == CURLE_OPERATION_TIMEDOUT;
    result->too_large = body.too_large || code == CURLE_FILESIZE_EXCEEDED;
    result->body = body.data;
    result->length = body.length;
    if (code != CURLE_OK) result->message = strdup(error[0] ? error : curl_easy_strerror(code));
    curl_slist_free_all(headers);
    curl_easy_cleanup(handle);
}

void ccurlfetch_free(ccurlfetch_result *result) {
    free(result->body);
    free(result->message);
    result->body = NULL;
    result->message = NULL;
}
