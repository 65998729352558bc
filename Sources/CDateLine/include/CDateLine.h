#ifndef WF_CDATELINE_H
#define WF_CDATELINE_H

#include <time.h>

/// Whether this process's `gmtime_r` is the lock-free one of `gmtime_r.c`
/// (the dynamic linker found it before glibc's): 1 when it is, else 0.
int wf_gmtime_r_is_lock_free(void);

/// glibc's own `gmtime_r`, found past this one, for tests to compare against.
struct tm *wf_glibc_gmtime_r(const time_t *timer, struct tm *result);

#endif
