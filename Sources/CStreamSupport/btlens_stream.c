#define _GNU_SOURCE
#include "btlens_stream.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct prefixed {
    int fd;
    unsigned char *prefix;
    size_t prefix_len;
    size_t prefix_pos;
    long long position;
};

static ssize_t prefixed_read(void *cookie, char *buf, size_t size) {
    struct prefixed *p = cookie;
    if (p->prefix_pos < p->prefix_len) {
        size_t n = p->prefix_len - p->prefix_pos;
        if (n > size) n = size;
        memcpy(buf, p->prefix + p->prefix_pos, n);
        p->prefix_pos += n;
        p->position += (long long)n;
        return (ssize_t)n;
    }
    for (;;) {
        ssize_t n = read(p->fd, buf, size);
        if (n < 0 && errno == EINTR) continue;
        if (n > 0) p->position += n;
        return n;
    }
}

static int prefixed_seek(void *cookie, off64_t *offset, int whence) {
    struct prefixed *p = cookie;
    // Only "where am I" is supported: ftell() asks with SEEK_CUR 0.
    if (whence == SEEK_CUR && *offset == 0) {
        *offset = p->position;
        return 0;
    }
    errno = ESPIPE;
    return -1;
}

static int prefixed_close(void *cookie) {
    struct prefixed *p = cookie;
    free(p->prefix);
    free(p);
    return 0;
}

FILE *btlens_prefixed_stream(int fd, const void *prefix, size_t prefix_len, long long start_offset) {
    struct prefixed *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->fd = fd;
    p->position = start_offset;
    if (prefix_len > 0) {
        p->prefix = malloc(prefix_len);
        if (!p->prefix) { free(p); return NULL; }
        memcpy(p->prefix, prefix, prefix_len);
        p->prefix_len = prefix_len;
    }
    cookie_io_functions_t io = { .read = prefixed_read, .write = NULL, .seek = prefixed_seek, .close = prefixed_close };
    FILE *f = fopencookie(p, "r", io);
    if (!f) prefixed_close(p);
    return f;
}

struct callback_stream {
    void *context;
    btlens_read_callback read;
    long long position;
};

static ssize_t callback_read(void *cookie, char *buf, size_t size) {
    struct callback_stream *c = cookie;
    ssize_t n = c->read(c->context, buf, size);
    if (n > 0) c->position += n;
    if (n < 0) errno = EIO;
    return n;
}

static int callback_seek(void *cookie, off64_t *offset, int whence) {
    struct callback_stream *c = cookie;
    if (whence == SEEK_CUR && *offset == 0) {
        *offset = c->position;
        return 0;
    }
    errno = ESPIPE;
    return -1;
}

static int callback_close(void *cookie) {
    free(cookie);
    return 0;
}

FILE *btlens_callback_stream(void *context, btlens_read_callback read_bytes, long long start_offset) {
    struct callback_stream *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->context = context;
    c->read = read_bytes;
    c->position = start_offset;
    cookie_io_functions_t io = { .read = callback_read, .write = NULL, .seek = callback_seek, .close = callback_close };
    FILE *f = fopencookie(c, "r", io);
    if (!f) free(c);
    return f;
}
