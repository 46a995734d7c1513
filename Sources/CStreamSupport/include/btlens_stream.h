#ifndef BTLENS_STREAM_H
#define BTLENS_STREAM_H
#include <stdio.h>
#include <stddef.h>

/// A read-only stdio stream that first yields `prefix` (bytes already consumed while sniffing the format)
/// and then reads `fd`, so libpcap can read pipes and stdin after btlens looked at the first bytes.
/// ftell() on it reports the logical byte offset. Returns NULL on allocation failure.
FILE *btlens_prefixed_stream(int fd, const void *prefix, size_t prefix_len, long long start_offset);

/// Reads `count` bytes into `buffer` from `context`: the count, 0 at the end, -1 on an error.
typedef long (*btlens_read_callback)(void *context, void *buffer, size_t count);

/// A read-only stdio stream whose bytes come from `read_bytes` (a decompressed archive member), so libpcap can
/// read captures inside archives. ftell() reports the logical byte offset. Returns NULL on allocation failure.
FILE *btlens_callback_stream(void *context, btlens_read_callback read_bytes, long long start_offset);

#endif
