#ifndef WARMFEED_MAPGUARD_H
#define WARMFEED_MAPGUARD_H

/* Reads out of a file mapped read-only that survive the file being cut.
 *
 * Touching a page of a shared file mapping that lies past the file's end
 * raises SIGBUS, and a file can be cut under its readers (a sweep starts
 * the row file again, a node copy is rebuilt, another process truncates
 * it). A mapping registered here is guarded: a SIGBUS inside it maps a page
 * of zeros over the faulting page and marks the mapping faulted, so the
 * read finishes with zeros (which no record check accepts) and its caller,
 * seeing the mark, reads another way and maps the file again. A SIGBUS
 * anywhere else goes to the handler that was there before (the Swift
 * runtime's backtracer, or the default: the process dies as it would have).
 *
 * The handler only reads the registry's atomics and calls mmap: nothing that
 * allocates or locks. */

#include <stddef.h>

/* Installs the SIGBUS handler (once; later calls do nothing). 0 when it is in place. */
int wf_mapguard_install(void);

/* Guards [base, base + length): answers the registration's number, or -1
 * when every place in the registry is taken (then read another way). */
int wf_mapguard_register(const void *base, size_t length);

/* Ends the guard of registration `slot`: call it before unmapping. */
void wf_mapguard_unregister(int slot);

/* Copies `count` bytes at `source` (inside registration `slot`'s range) to
 * `destination`. 0 when no SIGBUS ever hit the range; -1 otherwise (the copy
 * may hold zeros for bytes the file no longer had). Loads after it are not
 * moved before the copy (an acquire fence), as after a read(2). */
int wf_mapguard_copy(int slot, void *destination, const void *source, size_t count);

/* Whether a SIGBUS hit registration `slot`'s range since it was made. */
int wf_mapguard_faulted(int slot);

/* How many SIGBUS the guard has turned into zeros, in every mapping. */
unsigned long wf_mapguard_faults(void);

#endif
