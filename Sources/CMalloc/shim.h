#ifndef WARMFEED_CMALLOC_SHIM_H
#define WARMFEED_CMALLOC_SHIM_H

/* glibc's allocator knobs and counts (<malloc.h>, which Swift's Glibc module
 * leaves out): mallopt, malloc_trim, mallinfo2. Part of libc: nothing to link. */
#include <malloc.h>

/* mallopt's parameters, as plain constants (the header's are macros). */
static const int WF_M_ARENA_MAX = M_ARENA_MAX;
static const int WF_M_MMAP_THRESHOLD = M_MMAP_THRESHOLD;
static const int WF_M_TRIM_THRESHOLD = M_TRIM_THRESHOLD;

#endif
