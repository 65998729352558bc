#ifndef WARMFEED_CHIREDIS_SHIM_H
#define WARMFEED_CHIREDIS_SHIM_H

// Wrappers for hiredis 0.14 (Debian's libhiredis-dev). Swift cannot call the
// variadic redisCommand, and `struct timeval` arguments read better as
// milliseconds; binary values only ever go through redisAppendCommandArgv
// with explicit lengths (docs/C-INTEROP.md).
//
// hiredis's blocking calls bound each read() by SO_RCVTIMEO, not a command:
// a Redis that sends a byte every so often holds the caller for ever. So the
// socket is made non-blocking after the connect, and RedisConnection writes
// and reads with poll() against one deadline per command. hiredis 0.14's
// reader has no bound on a reply either (`*2147483647` makes it calloc 16 GB
// of pointers before a single element arrives): the reader's object functions
// are wrapped to count every object of a reply and refuse past a limit.

#include <hiredis/hiredis.h>
#include <sys/time.h>
#include <fcntl.h>
#include <stdio.h>

static inline struct timeval warmfeed_redis_timeval(int milliseconds) {
    struct timeval tv;
    tv.tv_sec = milliseconds / 1000;
    tv.tv_usec = (milliseconds % 1000) * 1000;
    return tv;
}

/// Connects within `timeout_ms`, then makes the socket non-blocking (the
/// caller polls it: see RedisConnection). Returns NULL only when out of
/// memory; otherwise check `err`.
static inline redisContext *warmfeed_redis_connect(const char *host, int port, int timeout_ms) {
    redisContext *context = redisConnectWithTimeout(host, port, warmfeed_redis_timeval(timeout_ms));
    if (context == NULL || context->err) return context;
    redisEnableKeepAlive(context);
    int flags = fcntl(context->fd, F_GETFL);
    if (flags < 0 || fcntl(context->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
        context->err = REDIS_ERR_IO;
        snprintf(context->errstr, sizeof(context->errstr), "cannot make the socket non-blocking");
        return context;
    }
    // hiredis reads EAGAIN as "try again later" only on a context not marked blocking.
    context->flags &= ~REDIS_BLOCK;
    return context;
}

/// The bound on one reply's objects, kept beside the reader (its privdata).
typedef struct {
    redisReplyObjectFunctions functions;  // ours: count, then hiredis's own
    redisReplyObjectFunctions *original;  // hiredis's (its static defaultFunctions)
    size_t objects;                       // made for the reply being read
    size_t max_objects;
    int refused;                          // an array or object past the bound was refused
} warmfeed_redis_bounds;

/// Counts one object (and an array's slots); false once the reply has too many.
static inline int warmfeed_redis_admit(const redisReadTask *task, size_t count) {
    warmfeed_redis_bounds *bounds = (warmfeed_redis_bounds *)task->privdata;
    if (count > bounds->max_objects || bounds->objects + count > bounds->max_objects) {
        bounds->refused = 1;
        return 0;
    }
    bounds->objects += count;
    return 1;
}

static inline void *warmfeed_redis_create_string(const redisReadTask *task, char *str, size_t len) {
    if (!warmfeed_redis_admit(task, 1)) return NULL;  // NULL: the reader fails with "out of memory"
    return ((warmfeed_redis_bounds *)task->privdata)->original->createString(task, str, len);
}

static inline void *warmfeed_redis_create_array(const redisReadTask *task, int elements) {
    // Checked before hiredis allocates `elements` pointers.
    if (elements < 0 || !warmfeed_redis_admit(task, 1 + (size_t)elements)) return NULL;
    return ((warmfeed_redis_bounds *)task->privdata)->original->createArray(task, elements);
}

static inline void *warmfeed_redis_create_integer(const redisReadTask *task, long long value) {
    if (!warmfeed_redis_admit(task, 1)) return NULL;
    return ((warmfeed_redis_bounds *)task->privdata)->original->createInteger(task, value);
}

static inline void *warmfeed_redis_create_nil(const redisReadTask *task) {
    if (!warmfeed_redis_admit(task, 1)) return NULL;
    return ((warmfeed_redis_bounds *)task->privdata)->original->createNil(task);
}

static inline void warmfeed_redis_free_object(void *reply) {
    freeReplyObject(reply);
}

/// Puts `bounds` between the context's reader and hiredis's reply objects.
/// `bounds` must outlive the context: the reader frees a reply it was
/// building through these functions when the context is freed.
static inline void warmfeed_redis_bound_replies(redisContext *context, warmfeed_redis_bounds *bounds, size_t max_objects) {
    bounds->original = context->reader->fn;
    bounds->functions.createString = warmfeed_redis_create_string;
    bounds->functions.createArray = warmfeed_redis_create_array;
    bounds->functions.createInteger = warmfeed_redis_create_integer;
    bounds->functions.createNil = warmfeed_redis_create_nil;
    bounds->functions.freeObject = warmfeed_redis_free_object;
    bounds->objects = 0;
    bounds->max_objects = max_objects;
    bounds->refused = 0;
    context->reader->fn = &bounds->functions;
    context->reader->privdata = bounds;
}

/// Reads what the socket has into the reader: the bytes read (0: nothing
/// yet), or -1 when the connection failed or the reply does not parse
/// (`err` is set then, and the context is dead).
static inline long warmfeed_redis_read(redisContext *context) {
    size_t before = context->reader->len;
    if (redisBufferRead(context) != REDIS_OK) return -1;
    // The reader only appends here (or starts an empty buffer afresh, when `before` was 0).
    return (long)(context->reader->len - before);
}

/// Bytes the reader holds that no reply has consumed yet.
static inline size_t warmfeed_redis_unread(const redisContext *context) {
    return context->reader->len - context->reader->pos;
}

#endif
