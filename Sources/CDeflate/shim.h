#ifndef WARMFEED_CDEFLATE_SHIM_H
#define WARMFEED_CDEFLATE_SHIM_H

/* libdeflate: whole-buffer DEFLATE/gzip, 2-4x faster than zlib at the same
 * ratio. Its API is plain functions, so the shim only includes it. */
#include <libdeflate.h>

#endif
