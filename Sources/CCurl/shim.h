#ifndef WARMFEED_CCURL_SHIM_H
#define WARMFEED_CCURL_SHIM_H

#include <stddef.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <curl/curl.h>

/* Swift cannot call C variadic functions, so every variadic libcurl call the
 * fetcher makes goes through a fixed-argument wrapper here: one per argument
 * type, because libcurl reads the argument with va_arg of exactly that type
 * (passing an int where it reads a long, or a long where it reads curl_off_t,
 * is undefined behaviour). */

/* libcurl before 8.17 (curl/curl#18968) opens its sockets without
 * close-on-exec: a process started while a fetch is open (by this process, or
 * by a test beside it) inherits the connection and holds it open after libcurl
 * closed it, so the origin never sees the hang-up. This opens them with
 * SOCK_CLOEXEC, as curl-rust's open-socket callback does. */
static curl_socket_t wf_curl_open_socket(void *client, curlsocktype purpose, struct curl_sockaddr *address)
{
    (void)client;
    (void)purpose;
    return socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

/** Makes `easy` open its sockets with wf_curl_open_socket. */
static inline CURLcode wf_easy_open_sockets_close_on_exec(CURL *easy)
{
    return curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, wf_curl_open_socket);
}

/** The default flags of curl_global_init, which Swift cannot import (a macro of macros). */
static inline CURLcode wf_curl_global_init(void)
{
    return curl_global_init(CURL_GLOBAL_ALL);
}

/** curl_easy_setopt for options that take a long. */
static inline CURLcode wf_easy_setopt_long(CURL *easy, CURLoption option, long value)
{
    return curl_easy_setopt(easy, option, value);
}

/** curl_easy_setopt for options that take a curl_off_t (the *_LARGE options). */
static inline CURLcode wf_easy_setopt_off(CURL *easy, CURLoption option, curl_off_t value)
{
    return curl_easy_setopt(easy, option, value);
}

/** curl_easy_setopt for options that take a string (libcurl copies it). */
static inline CURLcode wf_easy_setopt_string(CURL *easy, CURLoption option, const char *value)
{
    return curl_easy_setopt(easy, option, value);
}

/** curl_easy_setopt for options that take an object pointer (userdata, error buffer). */
static inline CURLcode wf_easy_setopt_pointer(CURL *easy, CURLoption option, void *value)
{
    return curl_easy_setopt(easy, option, value);
}

/** curl_easy_setopt for CURLOPT_WRITEFUNCTION (and CURLOPT_HEADERFUNCTION, same shape). */
static inline CURLcode wf_easy_setopt_write_callback(CURL *easy, CURLoption option, curl_write_callback value)
{
    return curl_easy_setopt(easy, option, value);
}

/** curl_easy_getinfo for infos that answer a long. */
static inline CURLcode wf_easy_getinfo_long(CURL *easy, CURLINFO info, long *value)
{
    return curl_easy_getinfo(easy, info, value);
}

/** curl_easy_getinfo for infos that answer a curl_off_t (the *_T infos). */
static inline CURLcode wf_easy_getinfo_off(CURL *easy, CURLINFO info, curl_off_t *value)
{
    return curl_easy_getinfo(easy, info, value);
}

/** curl_easy_getinfo for infos that answer a string owned by the handle. */
static inline CURLcode wf_easy_getinfo_string(CURL *easy, CURLINFO info, char **value)
{
    return curl_easy_getinfo(easy, info, value);
}

/** curl_multi_setopt for options that take a long. */
static inline CURLMcode wf_multi_setopt_long(CURLM *multi, CURLMoption option, long value)
{
    return curl_multi_setopt(multi, option, value);
}

/** Resumes a transfer paused by its write callback (CURL_WRITEFUNC_PAUSE):
 * libcurl hands the data it kept to the callback again, from inside this call. */
static inline CURLcode wf_easy_resume(CURL *easy)
{
    return curl_easy_pause(easy, CURLPAUSE_CONT);
}

#endif
