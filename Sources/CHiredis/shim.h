#ifndef WARMFEED_CHIREDIS_SHIM_H
#define WARMFEED_CHIREDIS_SHIM_H

// Fixed-argument wrappers for hiredis 0.14 (Debian's libhiredis-dev). Swift
// cannot call the variadic redisCommand, and `struct timeval` arguments read
// better as milliseconds; binary values only ever go through
// redisCommandArgv with explicit lengths (docs/C-INTEROP.md).

#include <hiredis/hiredis.h>
#include <sys/time.h>

static inline struct timeval warmfeed_redis_timeval(int milliseconds) {
    struct timeval tv;
    tv.tv_sec = milliseconds / 1000;
    tv.tv_usec = (milliseconds % 1000) * 1000;
    return tv;
}

/// Connects within `timeout_ms`, then bounds every command by `timeout_ms`
/// (SO_RCVTIMEO/SO_SNDTIMEO), so a slow Redis can never block a caller for
/// longer. Returns NULL only when out of memory; otherwise check `err`.
static inline redisContext *warmfeed_redis_connect(const char *host, int port, int timeout_ms) {
    redisContext *context = redisConnectWithTimeout(host, port, warmfeed_redis_timeval(timeout_ms));
    if (context == NULL || context->err) return context;
    if (redisSetTimeout(context, warmfeed_redis_timeval(timeout_ms)) != REDIS_OK) return context;
    redisEnableKeepAlive(context);
    return context;
}

/// One command, its arguments as byte strings with their lengths. NULL when
/// the connection failed (then `err` is set and the context is dead).
static inline redisReply *warmfeed_redis_command(redisContext *context, int argc, const char **argv, const size_t *lengths) {
    return (redisReply *)redisCommandArgv(context, argc, argv, lengths);
}

#endif
