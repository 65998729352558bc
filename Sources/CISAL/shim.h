#ifndef WARMFEED_CISAL_SHIM_H
#define WARMFEED_CISAL_SHIM_H

/* Intel's ISA-L, for its CRC-32 only: gzip's own CRC (the reflected IEEE
 * polynomial, crc32_gzip_refl), chosen at the first call for the CPU
 * (AVX-512 with VPCLMULQDQ, PCLMULQDQ, or plain C). Plain functions, so the
 * shim only includes the header. */
#include <isa-l/crc.h>

#endif
