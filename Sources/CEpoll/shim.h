#ifndef WARMFEED_CEPOLL_SHIM_H
#define WARMFEED_CEPOLL_SHIM_H

/* The kernel's event loop calls the HTTP server's own loop makes, which
 * Swift's Glibc module leaves out: epoll, eventfd, accept4 and memmem.
 * Part of libc: nothing to link. */
#include <stddef.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

/* GNU extensions, declared here rather than by defining _GNU_SOURCE, which
 * would change what every other header this module shares with Glibc declares. */
struct sockaddr;
int accept4(int sockfd, struct sockaddr *addr, unsigned int *addrlen, int flags);
int pthread_setname_np(unsigned long thread, const char *name);
void *memmem(const void *haystack, size_t haystacklen, const void *needle, size_t needlelen);

/* epoll's flags as plain constants (the header's are an enum Swift imports with mixed types). */
static const unsigned int WF_EPOLLIN = EPOLLIN;
static const unsigned int WF_EPOLLOUT = EPOLLOUT;
static const unsigned int WF_EPOLLRDHUP = EPOLLRDHUP;
static const unsigned int WF_EPOLLHUP = EPOLLHUP;
static const unsigned int WF_EPOLLERR = EPOLLERR;
static const unsigned int WF_EPOLLET = EPOLLET;
static const unsigned int WF_EPOLLEXCLUSIVE = EPOLLEXCLUSIVE;

#endif
