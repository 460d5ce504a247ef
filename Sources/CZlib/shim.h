#include <zlib.h>

// deflateInit2 and inflateInit2 are macros that pass ZLIB_VERSION and
// sizeof(z_stream); Swift imports neither macro, so these wrap them.
static inline int czlib_deflate_init(z_streamp stream, int level, int window_bits) {
    return deflateInit2(stream, level, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY);
}

static inline int czlib_inflate_init(z_streamp stream, int window_bits) {
    return inflateInit2(stream, window_bits);
}
