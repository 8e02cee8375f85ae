#include "formats/image_decode.h"

#include <jpeglib.h>
#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "kiln/base/error.h"

namespace kiln::formats {

bool looks_like_jpeg(std::string_view d) { return d.size() >= 3 && d.substr(0, 3) == "\xff\xd8\xff"; }
bool looks_like_png(std::string_view d) { return d.size() >= 8 && d.substr(0, 8) == "\x89PNG\r\n\x1a\n"; }

namespace {

struct JpegError {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX] = {};
};

void jpeg_fail(j_common_ptr info) {
  auto* e = reinterpret_cast<JpegError*>(info->err);
  (*info->err->format_message)(info, e->message);
  std::longjmp(e->jump, 1);
}

// A warning (corrupt data, a file that ends early: libjpeg would fill the rest with grey)
// is an error: a damaged image never trains silently.
void jpeg_warn(j_common_ptr info, int level) {
  if (level >= 0) return;  // trace messages
  jpeg_fail(info);
}

constexpr int64_t kMaxJpegBytes = int64_t{1} << 29;
constexpr uint64_t kMaxPngSide = uint64_t{1} << 27, kMaxPngPixels = uint64_t{1} << 29;  // TensorFlow's
constexpr uint64_t kMaxDeflateRatio = 1032;

// The rows of window `w`, cropped in libjpeg-turbo's scanline calls. May longjmp (no local
// here has a destructor).
void read_window(jpeg_decompress_struct& info, const CropWindow& w, int64_t ch, Image& out, std::vector<JSAMPLE>& line) {
  // Columns: libjpeg-turbo widens the window to iMCU boundaries (x0 <= x, width0 >= width).
  JDIMENSION x0 = static_cast<JDIMENSION>(w.x), width0 = static_cast<JDIMENSION>(w.width);
  jpeg_crop_scanline(&info, &x0, &width0);
  const int64_t skip_cols = w.x - static_cast<int64_t>(x0);
  line.resize(static_cast<size_t>(info.output_width * ch));
  if (w.y > 0) jpeg_skip_scanlines(&info, static_cast<JDIMENSION>(w.y));
  for (int64_t r = 0; r < w.height; ++r) {
    JSAMPROW row = line.data();
    jpeg_read_scanlines(&info, &row, 1);
    std::memcpy(out.pixels.data() + static_cast<size_t>(r * w.width * ch), line.data() + skip_cols * ch,
                static_cast<size_t>(w.width * ch));
  }
  if (info.output_scanline < info.output_height)
    jpeg_skip_scanlines(&info, info.output_height - info.output_scanline);
}

// 0 on success, else the decoder's message in `why`.
// header_only: out gets the height, width and component count and no pixels. Everything
// that allocates is the caller's (out, why, line): a libjpeg error longjmps out of here,
// past any destructor of a local.
bool run_jpeg(std::string_view data, int channels, J_DCT_METHOD dct, bool fancy, const CropWindow* crop,
              bool header_only, Image& out, std::string& why, std::vector<JSAMPLE>& line) {
  jpeg_decompress_struct info;
  JpegError err;
  info.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = jpeg_fail;
  err.mgr.emit_message = jpeg_warn;
  if (setjmp(err.jump)) {
    why = err.message;
    jpeg_destroy_decompress(&info);
    return false;
  }
  jpeg_create_decompress(&info);
  jpeg_mem_src(&info, reinterpret_cast<const unsigned char*>(data.data()), static_cast<unsigned long>(data.size()));
  jpeg_read_header(&info, TRUE);
  if (header_only) {
    out.height = info.image_height;
    out.width = info.image_width;
    out.channels = info.num_components;
    jpeg_destroy_decompress(&info);
    return true;
  }
  if (info.num_components != 1 && info.num_components != 3) {
    why = std::to_string(info.num_components) + " components (CMYK?); kiln decodes grey and colour JPEGs";
    jpeg_destroy_decompress(&info);
    return false;
  }
  const int want = channels == 0 ? (info.num_components == 1 ? 1 : 3) : channels;
  info.out_color_space = want == 1 ? JCS_GRAYSCALE : JCS_RGB;
  info.dct_method = dct;
  info.do_fancy_upsampling = fancy ? TRUE : FALSE;
  jpeg_start_decompress(&info);
  const int64_t full_h = info.output_height, full_w = info.output_width, ch = info.output_components;
  if (full_h * full_w * ch >= kMaxJpegBytes) {  // TensorFlow's limit, checked before anything is allocated
    why = "its header declares " + std::to_string(full_h) + "x" + std::to_string(full_w) + "x" + std::to_string(ch) +
          " samples, more than the 2^29 bytes TensorFlow and kiln decode";
    jpeg_abort_decompress(&info);
    jpeg_destroy_decompress(&info);
    return false;
  }
  CropWindow w{0, 0, full_h, full_w};
  if (crop) {
    w = *crop;
    if (w.y < 0 || w.x < 0 || w.height < 1 || w.width < 1 || w.y + w.height > full_h || w.x + w.width > full_w) {
      why = "crop window [y " + std::to_string(w.y) + ", x " + std::to_string(w.x) + ", height " +
            std::to_string(w.height) + ", width " + std::to_string(w.width) + "] is not inside the " +
            std::to_string(full_h) + "x" + std::to_string(full_w) + " image";
      jpeg_abort_decompress(&info);
      jpeg_destroy_decompress(&info);
      return false;
    }
  }
  out.height = w.height;
  out.width = w.width;
  out.channels = ch;
  out.pixels.resize(static_cast<size_t>(out.height * out.width * out.channels));
  if (!crop) {
    while (info.output_scanline < info.output_height) {
      JSAMPROW row = out.pixels.data() + static_cast<size_t>(info.output_scanline) * out.width * out.channels;
      jpeg_read_scanlines(&info, &row, 1);
    }
  } else {
    read_window(info, w, ch, out, line);
  }
  jpeg_finish_decompress(&info);
  jpeg_destroy_decompress(&info);
  return true;
}

struct PngRead {
  std::string_view data;
  size_t at = 0;
};

void png_read_mem(png_structp png, png_bytep into, png_size_t n) {
  auto* r = static_cast<PngRead*>(png_get_io_ptr(png));
  if (r->data.size() - r->at < n) png_error(png, "the file ends inside the image");
  std::memcpy(into, r->data.data() + r->at, n);
  r->at += n;
}

void png_fail(png_structp png, png_const_charp message) {
  auto* why = static_cast<std::string*>(png_get_error_ptr(png));
  *why = message;
  png_longjmp(png, 1);
}

void png_quiet(png_structp, png_const_charp) {}

// Whether a PNG whose header declares `height` x `width` pixels of `channels` samples of
// `bits` each may be decoded, checked before libpng or kiln allocates anything for it
// (docs/data.md, "Image decoding limits"): TensorFlow's limits (each side below 2^27, fewer
// than 2^29 pixels), and the image data must fit in the file: DEFLATE expands at most
// 1032:1, so a file of n bytes holds at most 1032 n bytes of samples. Without the second a
// 390-byte file declaring 20000x20000 RGBA16 would have 3.2 GB allocated and written
// before its data runs out. false with the reason in `why`.
bool png_size_fits(uint64_t height, uint64_t width, int bits, int channels, size_t file_bytes, std::string& why) {
  const std::string declared = "its header declares " + std::to_string(height) + "x" + std::to_string(width) + " pixels";
  if (height == 0 || width == 0 || height >= kMaxPngSide || width >= kMaxPngSide ||
      height * width >= kMaxPngPixels) {
    why = declared + ", more than the 2^29 pixels (2^27 a side) TensorFlow and kiln decode";
    return false;
  }
  const uint64_t sample_bytes = (height * width * static_cast<uint64_t>(bits) * static_cast<uint64_t>(channels) + 7) / 8;
  if (sample_bytes > kMaxDeflateRatio * file_bytes) {
    why = declared + " of " + std::to_string(channels) + "x" + std::to_string(bits) + "-bit samples (" +
          std::to_string(sample_bytes) + " bytes), more than a file of " + std::to_string(file_bytes) +
          " bytes can hold (DEFLATE expands at most 1032:1): it is cut short, or a decompression bomb";
    return false;
  }
  return true;
}

bool run_png(std::string_view data, int channels, bool sixteen, Image& out, std::string& why) {
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &why, png_fail, png_quiet);
  if (!png) {
    why = "libpng could not start";
    return false;
  }
  png_infop info = png_create_info_struct(png);
  PngRead src{data, 0};
  std::vector<png_bytep> rows;
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    return false;
  }
  png_set_read_fn(png, &src, png_read_mem);
  png_read_info(png, info);
  const int bit_depth = png_get_bit_depth(png, info);
  const int color = png_get_color_type(png, info);
  if (!png_size_fits(png_get_image_height(png, info), png_get_image_width(png, info), bit_depth,
                     png_get_channels(png, info), data.size(), why)) {
    png_destroy_read_struct(&png, &info, nullptr);
    return false;
  }
  const bool trns = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
  if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (color == PNG_COLOR_TYPE_GRAY && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (trns) png_set_tRNS_to_alpha(png);
  if (bit_depth == 16) {
    if (sixteen) png_set_swap(png);  // host order (little-endian) 16-bit samples
    else png_set_strip_16(png);
  } else if (sixteen) {
    png_set_expand_16(png);
    png_set_swap(png);
  }
  // The channels those expansions give (libpng allows one png_read_update_info).
  const bool colour = color == PNG_COLOR_TYPE_PALETTE || (color & PNG_COLOR_MASK_COLOR) != 0;
  const bool has_alpha = (color & PNG_COLOR_MASK_ALPHA) != 0 || trns;
  const int have = (colour ? 3 : 1) + (has_alpha ? 1 : 0);
  const int want = channels == 0 ? have : channels;
  if (want == 1 || want == 2) {
    if (colour) png_set_rgb_to_gray_fixed(png, 1, 29900, 58700);  // ITU-R 601 weights
    if (want == 1 && has_alpha) png_set_strip_alpha(png);
    if (want == 2 && !has_alpha) png_set_add_alpha(png, sixteen ? 0xffff : 0xff, PNG_FILLER_AFTER);
  } else {
    if (!colour) png_set_gray_to_rgb(png);
    if (want == 3 && has_alpha) png_set_strip_alpha(png);
    if (want == 4 && !has_alpha) png_set_add_alpha(png, sixteen ? 0xffff : 0xff, PNG_FILLER_AFTER);
  }
  png_read_update_info(png, info);
  out.height = png_get_image_height(png, info);
  out.width = png_get_image_width(png, info);
  out.channels = png_get_channels(png, info);
  out.bits = sixteen ? 16 : 8;
  const size_t row_bytes = png_get_rowbytes(png, info);
  const size_t total = row_bytes * static_cast<size_t>(out.height);
  if (sixteen) out.pixels16.resize(total / 2);
  else out.pixels.resize(total);
  auto* base = sixteen ? reinterpret_cast<png_bytep>(out.pixels16.data()) : out.pixels.data();
  rows.resize(static_cast<size_t>(out.height));
  for (int64_t y = 0; y < out.height; ++y) rows[static_cast<size_t>(y)] = base + static_cast<size_t>(y) * row_bytes;
  png_read_image(png, rows.data());
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  return true;
}

void check_channels(const char* op, int channels, std::initializer_list<int> valid) {
  for (int v : valid)
    if (channels == v) return;
  std::string list;
  for (int v : valid) list += (list.empty() ? "" : ", ") + std::to_string(v);
  KILN_THROW(ConfigError) << "[" << op << "] channels " << channels << " is not one of " << list;
}

}  // namespace

Image decode_jpeg(std::string_view data, int channels, const std::string& dct, bool fancy_upscaling,
                  const CropWindow* crop) {
  check_channels("decode_jpeg", channels, {0, 1, 3});
  J_DCT_METHOD method = JDCT_IFAST;
  if (dct == "INTEGER_ACCURATE") method = JDCT_ISLOW;
  else if (!dct.empty() && dct != "INTEGER_FAST")
    KILN_THROW(ConfigError) << "[decode_jpeg] dct_method '" << dct << "' is not one of '', INTEGER_FAST, INTEGER_ACCURATE";
  if (!looks_like_jpeg(data))
    KILN_THROW(DataError) << "[decode_jpeg] " << data.size() << " bytes that are not a JPEG image (no JPEG start marker)";
  Image out;
  std::string why;
  const char* op = crop ? "decode_and_crop_jpeg" : "decode_jpeg";
  std::vector<JSAMPLE> line;
  if (!run_jpeg(data, channels, method, fancy_upscaling, crop, false, out, why, line)) {
    if (why.rfind("crop window", 0) == 0) KILN_THROW(ConfigError) << "[" << op << "] " << why;
    KILN_THROW(DataError) << "[" << op << "] a JPEG image of " << data.size() << " bytes cannot be decoded: " << why;
  }
  return out;
}

JpegShape jpeg_shape(std::string_view data) {
  if (!looks_like_jpeg(data))
    KILN_THROW(DataError) << "[extract_jpeg_shape] " << data.size()
                          << " bytes that are not a JPEG image (no JPEG start marker)";
  Image header;
  std::string why;
  std::vector<JSAMPLE> line;
  if (!run_jpeg(data, 0, JDCT_IFAST, true, nullptr, true, header, why, line))
    KILN_THROW(DataError) << "[extract_jpeg_shape] the header of a JPEG image of " << data.size()
                          << " bytes cannot be read: " << why;
  return {header.height, header.width, header.channels};
}

Image decode_png(std::string_view data, int channels, bool sixteen_bit) {
  check_channels("decode_png", channels, {0, 1, 2, 3, 4});
  if (!looks_like_png(data))
    KILN_THROW(DataError) << "[decode_png] " << data.size() << " bytes that are not a PNG image (no PNG signature)";
  Image out;
  std::string why;
  if (!run_png(data, channels, sixteen_bit, out, why))
    KILN_THROW(DataError) << "[decode_png] a PNG image of " << data.size() << " bytes cannot be decoded: " << why;
  return out;
}

namespace {
void png_write_mem(png_structp png, png_bytep data, png_size_t n) {
  static_cast<std::string*>(png_get_io_ptr(png))->append(reinterpret_cast<const char*>(data), n);
}
void png_flush_mem(png_structp) {}
}  // namespace

std::string encode_png(const Image& image) {
  if (image.channels < 1 || image.channels > 4 || image.bits != 8 ||
      image.pixels.size() != static_cast<size_t>(image.height * image.width * image.channels))
    KILN_THROW(ConfigError) << "[encode_png] takes an 8-bit image of 1 to 4 channels whose pixels fill it";
  std::string out, why;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &why, png_fail, png_quiet);
  png_infop info = png_create_info_struct(png);
  std::vector<png_bytep> rows(static_cast<size_t>(image.height));
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    KILN_THROW(SystemError) << "[encode_png] libpng failed: " << why;
  }
  png_set_write_fn(png, &out, png_write_mem, png_flush_mem);
  static const int types[] = {PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGBA};
  png_set_IHDR(png, info, static_cast<png_uint_32>(image.width), static_cast<png_uint_32>(image.height), 8,
               types[image.channels - 1], PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int64_t y = 0; y < image.height; ++y)
    rows[static_cast<size_t>(y)] = const_cast<png_bytep>(image.pixels.data() + y * image.width * image.channels);
  png_write_image(png, rows.data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return out;
}

std::string encode_jpeg(const Image& image, int quality, bool chroma_downsampling) {
  if ((image.channels != 1 && image.channels != 3) || image.bits != 8 || image.height < 1 || image.width < 1 ||
      image.pixels.size() != static_cast<size_t>(image.height * image.width * image.channels))
    KILN_THROW(ConfigError) << "[encode_jpeg] takes an 8-bit image of 1 or 3 channels whose pixels fill it; got "
                            << image.height << "x" << image.width << "x" << image.channels;
  if (quality < 0 || quality > 100) KILN_THROW(ConfigError) << "[encode_jpeg] quality " << quality << " is not in 0-100";
  if (image.height > 65500 || image.width > 65500)
    KILN_THROW(ConfigError) << "[encode_jpeg] " << image.height << "x" << image.width
                            << " is larger than JPEG's 65500 pixels a side";
  // Everything that outlives a libjpeg error is declared before setjmp, at this scope.
  jpeg_compress_struct info;
  JpegError err;
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  std::string out;
  info.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = jpeg_fail;
  if (setjmp(err.jump)) {
    jpeg_destroy_compress(&info);
    std::free(buffer);
    KILN_THROW(SystemError) << "[encode_jpeg] libjpeg failed: " << err.message;
  }
  jpeg_create_compress(&info);
  jpeg_mem_dest(&info, &buffer, &size);
  info.image_width = static_cast<JDIMENSION>(image.width);
  info.image_height = static_cast<JDIMENSION>(image.height);
  info.input_components = static_cast<int>(image.channels);
  info.in_color_space = image.channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&info);
  jpeg_set_quality(&info, quality, TRUE);
  info.density_unit = 1;  // dots per inch, 300 as TensorFlow writes
  info.X_density = info.Y_density = 300;
  if (image.channels == 3 && !chroma_downsampling) info.comp_info[0].h_samp_factor = info.comp_info[0].v_samp_factor = 1;
  jpeg_start_compress(&info, TRUE);
  while (info.next_scanline < info.image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(image.pixels.data() + static_cast<size_t>(info.next_scanline) * image.width *
                                                                  image.channels);
    jpeg_write_scanlines(&info, &row, 1);
  }
  jpeg_finish_compress(&info);
  out.assign(reinterpret_cast<const char*>(buffer), size);
  jpeg_destroy_compress(&info);
  std::free(buffer);
  return out;
}

}  // namespace kiln::formats
