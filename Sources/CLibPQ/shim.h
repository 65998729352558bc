#ifndef WARMFEED_CLIBPQ_SHIM_H
#define WARMFEED_CLIBPQ_SHIM_H

/* libpq, PostgreSQL's own C client (Debian's libpq-dev): the read path of
 * PostgresStore's deep pages, one blocking connection per reading thread.
 * Nothing variadic is called, so nothing needs wrapping. */
#include <libpq-fe.h>

#endif
