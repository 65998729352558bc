#ifndef WARMFEED_CMICROHTTPD_SHIM_H
#define WARMFEED_CMICROHTTPD_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <microhttpd.h>

/* Swift cannot call C variadic functions, so each variadic libmicrohttpd call
 * the server needs gets a fixed-argument wrapper here. */

typedef void *(*wf_uri_log_callback)(void *cls, const char *uri, struct MHD_Connection *connection);

typedef void (*wf_notify_connection_callback)(void *cls, struct MHD_Connection *connection,
                                              void **socket_context, enum MHD_ConnectionNotificationCode code);

/** Starts a daemon bound to `address` with the options Warmfeed uses. */
static inline struct MHD_Daemon *wf_mhd_start(
    unsigned int flags,
    const struct sockaddr *address,
    unsigned int thread_pool_size,
    unsigned int connection_limit,
    unsigned int connection_timeout_seconds,
    size_t connection_memory_limit,
    unsigned int listen_backlog,
    MHD_AccessHandlerCallback handler, void *handler_cls,
    MHD_RequestCompletedCallback completed, void *completed_cls,
    wf_uri_log_callback uri_log, void *uri_log_cls,
    wf_notify_connection_callback notify_connection, void *notify_connection_cls)
{
    return MHD_start_daemon(
        flags, 0, NULL, NULL, handler, handler_cls,
        MHD_OPTION_SOCK_ADDR, address,
        MHD_OPTION_THREAD_POOL_SIZE, thread_pool_size,
        MHD_OPTION_CONNECTION_LIMIT, connection_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout_seconds,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory_limit,
        MHD_OPTION_LISTEN_BACKLOG_SIZE, listen_backlog,
        MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
        MHD_OPTION_URI_LOG_CALLBACK, uri_log, uri_log_cls,
        MHD_OPTION_NOTIFY_CONNECTION, notify_connection, notify_connection_cls,
        MHD_OPTION_END);
}

/** The port the daemon is bound to (useful after binding port 0). */
static inline uint16_t wf_mhd_bind_port(struct MHD_Daemon *daemon)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

/** The daemon's listening socket, or -1. */
static inline int wf_mhd_listen_socket(struct MHD_Daemon *daemon)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_LISTEN_FD);
    return info == NULL ? -1 : info->listen_fd;
}

/** The connection's socket, or -1. */
static inline int wf_mhd_connection_socket(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

/** What the notify-connection callback left in the connection's socket context, or NULL. */
static inline void *wf_mhd_connection_context(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info == NULL ? NULL : info->socket_context;
}

/** The client's IPv4 address in host byte order, or 0 for another family. */
static inline uint32_t wf_mhd_connection_ipv4(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL || info->client_addr->sa_family != AF_INET) return 0;
    return ntohl(((const struct sockaddr_in *)info->client_addr)->sin_addr.s_addr);
}

#endif
