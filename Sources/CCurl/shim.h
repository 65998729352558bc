#ifndef WARMFEED_CCURL_SHIM_H
#define WARMFEED_CCURL_SHIM_H

#include <stddef.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <string.h>
#include <curl/curl.h>

/* Swift cannot call C variadic functions, so every variadic libcurl call the
 * fetcher makes goes through a fixed-argument wrapper here: one per argument
 * type, because libcurl reads the argument with va_arg of exactly that type
 * (passing an int where it reads a long, or a long where it reads curl_off_t,
 * is undefined behaviour). */

/* libcurl before 8.17 (curl/curl#18968) opens its sockets without
 * close-on-exec: a process started while a fetch is open (by this process, or
 * by a test beside it) inherits the connection and holds it open after libcurl
 * closed it, so the origin never sees the hang-up. The fetcher's open-socket
 * callback (a Swift function, which first asks the fetch's address policy)
 * opens them with this: SOCK_CLOEXEC, as curl-rust's open-socket callback does. */
static inline curl_socket_t wf_open_socket_close_on_exec(const struct curl_sockaddr *address)
{
    return socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

/** Copies the IP address libcurl is about to connect to into `bytes` (4 bytes
 * for IPv4, 16 for IPv6, in network order) and its port into `port`; answers
 * how many bytes were copied, or 0 for any other family. libcurl allocates the
 * address as a `struct sockaddr_storage`, so reading an IPv6 one past
 * `sizeof(struct sockaddr)` is within its allocation. */
static inline int wf_socket_address(const struct curl_sockaddr *address, unsigned char bytes[16], int *port)
{
    if (address->family == AF_INET && address->addrlen >= sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)(const void *)&address->addr;
        memcpy(bytes, &v4->sin_addr, 4);
        *port = ntohs(v4->sin_port);
        return 4;
    }
    if (address->family == AF_INET6 && address->addrlen >= sizeof(struct sockaddr_in6)) {
        const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)(const void *)&address->addr;
        memcpy(bytes, &v6->sin6_addr, 16);
        *port = ntohs(v6->sin6_port);
        return 16;
    }
    return 0;
}

/** curl_easy_setopt for CURLOPT_OPENSOCKETFUNCTION. */
static inline CURLcode wf_easy_setopt_open_socket(CURL *easy, curl_opensocket_callback value)
{
    return curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, value);
}

/** curl_easy_setopt for CURLOPT_PREREQFUNCTION (called before each request is
 * sent, on a new connection or a reused one, libcurl 7.80 and later). */
static inline CURLcode wf_easy_setopt_prereq(CURL *easy, curl_prereq_callback value)
{
    return curl_easy_setopt(easy, CURLOPT_PREREQFUNCTION, value);
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
