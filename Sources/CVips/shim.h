#ifndef WARMFEED_CVIPS_SHIM_H
#define WARMFEED_CVIPS_SHIM_H

// Fixed-argument wrappers for the variadic and macro parts of libvips 8.14.
// Swift cannot call variadic C functions; each wrapper pins the options the
// Thumbnailer module uses, so the option names live in one place.

#include <vips/vips.h>

// libvips reports recoverable decoder trouble (a short read, a bad tile) as
// GLib warnings on stderr, one per tile: hundreds of lines for one truncated
// image from a hostile origin. The failure itself still reaches the caller
// through the return code and the error buffer, so the warnings are dropped.
static void warmfeed_vips_drop_log(const gchar *domain, GLogLevelFlags level,
                                   const gchar *message, gpointer data) {
    (void)domain; (void)level; (void)message; (void)data;
}

/// Starts libvips for the whole process and sets it up for a thumbnail server:
/// no operation cache (its entries would pin source buffers and memory), one
/// vips thread per operation (parallelism comes from the caller's own worker
/// pool), no liborc vector code (see below), loaders marked untrusted (SVG, PDF, ImageMagick, ...) blocked, and
/// decoder warnings kept off stderr. Returns 0 on success. Call once.
static inline int warmfeed_vips_start(const char *argv0) {
    if (vips_init(argv0) != 0) return -1;
    vips_cache_set_max(0);
    vips_cache_set_max_mem(0);
    vips_cache_set_max_files(0);
    vips_concurrency_set(1);
    /* No liborc: libvips 8.14 compiles an orc program for each resize and
     * frees it with the operation, and liborc 0.4.33 crashes (a bad pointer
     * in its code allocator, or a heap abort) when several threads do that at
     * once: about once in 50,000 thumbnails under load, within seconds in
     * ManyResizesTests. (libvips 8.15 dropped liborc altogether.) */
    vips_vector_set_enabled(FALSE);
    vips_block_untrusted_set(TRUE);
    g_log_set_handler("VIPS", G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE,
                      warmfeed_vips_drop_log, NULL);
    return 0;
}

/// Opens an image from memory for its header only: sequential access, nothing
/// decoded until pixels are asked for. `buf` must outlive the image.
static inline VipsImage *warmfeed_vips_open_header(const void *buf, size_t len) {
    return vips_image_new_from_buffer(buf, len, "",
                                      "access", VIPS_ACCESS_SEQUENTIAL,
                                      NULL);
}

/// Opens an image source (a file) for its header only: sequential access,
/// nothing decoded until pixels are asked for. The image keeps its own
/// reference to `source`.
static inline VipsImage *warmfeed_vips_open_source_header(VipsSource *source) {
    return vips_image_new_from_source(source, "",
                                      "access", VIPS_ACCESS_SEQUENTIAL,
                                      NULL);
}

/// A lazy thumbnail of an encoded image: shrink-on-load, EXIF orientation
/// applied, scaled to cover `width` x `height` and cropped to it (`crop` is a
/// VipsInteresting). Pixels are made when the result is saved; `buf` must
/// outlive the result.
///
/// `fail_on` (a VipsFailOn) makes the loader stop on a damaged image instead
/// of padding it with grey. In 8.14 vips_thumbnail_buffer does not hand its
/// own "fail_on" to the loader (vips_thumbnail on a file does), so it also goes
/// in the loader's option string, which is passed on.
static inline int warmfeed_vips_thumbnail(const void *buf, size_t len, VipsImage **out,
                                          int width, int height, int crop, int fail_on) {
    const char *loader_options = fail_on >= VIPS_FAIL_ON_WARNING ? "[fail_on=warning]"
                               : fail_on >= VIPS_FAIL_ON_ERROR   ? "[fail_on=error]"
                               : fail_on >= VIPS_FAIL_ON_TRUNCATED ? "[fail_on=truncated]"
                               : "";
    return vips_thumbnail_buffer((void *)buf, len, out, width,
                                 "height", height,
                                 "crop", (VipsInteresting)crop,
                                 "fail_on", (VipsFailOn)fail_on,
                                 "option_string", loader_options,
                                 NULL);
}

/// The bytes of one band of one pixel in `image`'s format (1 for uchar, 2 for ushort, ...).
static inline int warmfeed_vips_sample_bytes(VipsImage *image) {
    return (int)vips_format_sizeof(vips_image_get_format(image));
}

/// The pixels of a generated original: `sketch` (small 8-bit RGB) enlarged to
/// `width` x `height` (bilinear: soft edges, and cheap), with Gaussian grain of
/// `sigma` from `seed` added and the result clipped back to 8 bits. The grain
/// is one 256 x 256 tile repeated: a full-size gaussnoise costs more CPU than
/// everything else together, and a repeat every 256 pixels is invisible under
/// the shapes. The tile is made once in memory (a lazy one would be computed
/// again for every repeat). The grain is added as signed 8-bit integers, which is cheaper
/// than float arithmetic over every pixel. Lazy; `*out` holds references to everything it reads.
static inline int warmfeed_vips_enlarge_with_grain(VipsImage *sketch, VipsImage **out,
                                                   int width, int height, double sigma, int seed) {
    const int tile = 256;
    VipsImage *large = NULL, *noise = NULL, *small_noise = NULL, *tile_in_memory = NULL;
    VipsImage *tiled = NULL, *grain = NULL, *sum = NULL;
    int result = -1;
    double hscale = (double)width / vips_image_get_width(sketch);
    double vscale = (double)height / vips_image_get_height(sketch);
    if (vips_resize(sketch, &large, hscale, "vscale", vscale, "kernel", VIPS_KERNEL_LINEAR, NULL) == 0 &&
        vips_gaussnoise(&noise, tile, tile, "sigma", sigma, "mean", 0.0, "seed", seed, NULL) == 0 &&
        vips_cast(noise, &small_noise, VIPS_FORMAT_CHAR, NULL) == 0 &&
        (tile_in_memory = vips_image_copy_memory(small_noise)) != NULL &&
        vips_replicate(tile_in_memory, &tiled, (width + tile - 1) / tile, (height + tile - 1) / tile, NULL) == 0 &&
        vips_crop(tiled, &grain, 0, 0, width, height, NULL) == 0 &&
        vips_add(large, grain, &sum, NULL) == 0 &&
        vips_cast(sum, out, VIPS_FORMAT_UCHAR, NULL) == 0) {
        result = 0;
    }
    if (large) g_object_unref(large);
    if (noise) g_object_unref(noise);
    if (small_noise) g_object_unref(small_noise);
    if (tile_in_memory) g_object_unref(tile_in_memory);
    if (tiled) g_object_unref(tiled);
    if (grain) g_object_unref(grain);
    if (sum) g_object_unref(sum);
    return result;
}

/// JPEG with every metadata block stripped; transparent areas become white.
static inline int warmfeed_vips_save_jpeg(VipsImage *in, void **buf, size_t *len, int quality) {
    double white[3] = {255, 255, 255};
    VipsArrayDouble *background = vips_array_double_new(white, 3);
    int result = vips_jpegsave_buffer(in, buf, len,
                                      "Q", quality,
                                      "strip", TRUE,
                                      "background", background,
                                      NULL);
    vips_area_unref(VIPS_AREA(background));
    return result;
}

/// JPEG that keeps the image's metadata (EXIF orientation included): used only
/// to make test and demo originals that carry an orientation tag.
static inline int warmfeed_vips_save_jpeg_keeping_metadata(VipsImage *in, void **buf, size_t *len,
                                                           int quality) {
    return vips_jpegsave_buffer(in, buf, len, "Q", quality, NULL);
}

/// Lossy WebP at an effort from 0 (fastest) to 6 (smallest; libvips' default
/// is 4). libvips 8.14.1 ignores "strip" here and always writes an EXIF chunk;
/// the caller removes metadata chunks from the result.
static inline int warmfeed_vips_save_webp(VipsImage *in, void **buf, size_t *len, int quality, int effort) {
    return vips_webpsave_buffer(in, buf, len,
                                "Q", quality,
                                "effort", effort,
                                "strip", TRUE,
                                NULL);
}

/// AVIF (AV1 in HEIF, through libheif and libaom) with metadata stripped and
/// chroma kept whole (4:4:4): at thumbnail sizes, subsampled chroma cost more
/// quality than the bytes it saved (docs/benchmarks-history.md, "AVIF").
static inline int warmfeed_vips_save_avif(VipsImage *in, void **buf, size_t *len, int quality, int effort) {
    return vips_heifsave_buffer(in, buf, len,
                                "Q", quality,
                                "effort", effort,
                                "compression", VIPS_FOREIGN_HEIF_COMPRESSION_AV1,
                                "subsample_mode", VIPS_FOREIGN_SUBSAMPLE_OFF,
                                "strip", TRUE,
                                NULL);
}

/// PNG with every metadata block stripped, at a zlib compression level from
/// 0 to 9 (libvips' default is 6).
static inline int warmfeed_vips_save_png(VipsImage *in, void **buf, size_t *len, int compression) {
    return vips_pngsave_buffer(in, buf, len, "compression", compression, "strip", TRUE, NULL);
}

/// The costly sources a decode budget is tested with: a progressive JPEG, an
/// interlaced (Adam7) PNG of `bitdepth` 8 or 16 bits, a GIF. Not used to serve.
static inline int warmfeed_vips_save_jpeg_progressive(VipsImage *in, void **buf, size_t *len, int quality) {
    return vips_jpegsave_buffer(in, buf, len, "Q", quality, "interlace", TRUE, "strip", TRUE, NULL);
}

static inline int warmfeed_vips_save_png_interlaced(VipsImage *in, void **buf, size_t *len, int bitdepth) {
    return vips_pngsave_buffer(in, buf, len, "interlace", TRUE, "bitdepth", bitdepth, "compression", 9, "strip", TRUE, NULL);
}

static inline int warmfeed_vips_save_gif(VipsImage *in, void **buf, size_t *len) {
    return vips_gifsave_buffer(in, buf, len, "strip", TRUE, NULL);
}

#endif
