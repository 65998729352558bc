#ifndef WARMFEED_CISAL_SHIM_H
#define WARMFEED_CISAL_SHIM_H

/* Intel's ISA-L, for two things: gzip's CRC-32 (the reflected IEEE
 * polynomial, crc32_gzip_refl), and igzip's level-1 deflate of a whole
 * buffer (isal_deflate_stateless), each chosen at the first call for the CPU
 * (AVX-512 with VPCLMULQDQ, AVX2, SSE, or plain C). Plain functions; the
 * constants below are macros Swift does not import. */
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>

/* The level-1 buffer (hash table and tokens) for inputs of pages' size:
 * SMALL holds 16 K tokens; larger buffers were no faster on a 25 KB page. */
static const unsigned int WF_ISAL_LEVEL1_BUFFER = ISAL_DEF_LVL1_SMALL;
/* A gzip member (RFC 1952 header and trailer) rather than raw deflate. */
static const unsigned short WF_ISAL_GZIP = IGZIP_GZIP;
static const int WF_ISAL_COMP_OK = COMP_OK;
static const unsigned short WF_ISAL_NO_FLUSH = NO_FLUSH;

#endif
