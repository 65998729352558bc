#ifndef WARMFEED_CZLIB_SHIM_H
#define WARMFEED_CZLIB_SHIM_H

#include <zlib.h>

/* zlib is the independent decoder the tests check libdeflate's gzip with.
 * inflateInit2 is a macro, which Swift cannot call: wrap it. windowBits
 * 15+16 asks for a gzip wrapper rather than a raw zlib stream. */
static inline int wf_inflate_init_gzip(z_streamp stream)
{
    return inflateInit2(stream, 15 + 16);
}

#endif
