#ifndef WARMFEED_CZLIB_SHIM_H
#define WARMFEED_CZLIB_SHIM_H

#include <zlib.h>

/* deflateInit2 is a macro, which Swift cannot call: wrap it. windowBits 15+16
 * asks zlib for a gzip wrapper rather than a raw zlib stream. */
static inline int wf_deflate_init_gzip(z_streamp stream, int level)
{
    return deflateInit2(stream, level, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY);
}

#endif
