#ifndef BTLENS_STREAM_H
#define BTLENS_STREAM_H
#include <stdio.h>
#include <stddef.h>

/// A read-only stdio stream that first yields `prefix` (bytes already consumed while sniffing the format)
/// and then reads `fd`, so libpcap can read pipes and stdin after btlens looked at the first bytes.
/// ftell() on it reports the logical byte offset. Returns NULL on allocation failure.
FILE *btlens_prefixed_stream(int fd, const void *prefix, size_t prefix_len, long long start_offset);

#endif
