#ifndef WARMFEED_CLIBPQ_SHIM_H
#define WARMFEED_CLIBPQ_SHIM_H

/* libpq, PostgreSQL's own C client (Debian's libpq-dev): every connection of
 * PostgresStore, each used by one thread at a time. Nothing variadic is
 * called, so nothing needs wrapping but the notice processor. */
#include <libpq-fe.h>

static void wf_pq_drop_notice(void *arg, const char *message) {
    (void)arg;
    (void)message;
}

/* libpq prints the server's notices ("relation … already exists, skipping")
 * to stderr unless told otherwise: they are not errors, and would land in
 * the server's log as lines of their own. */
static inline void wf_pq_ignore_notices(PGconn *connection) {
    PQsetNoticeProcessor(connection, wf_pq_drop_notice, NULL);
}

#endif
