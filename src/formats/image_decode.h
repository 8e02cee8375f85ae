// JPEG and PNG images decoded as tf.io.decode_jpeg / decode_png decode them, by
// libjpeg-turbo and libpng (Debian's): height x width x channels, 8-bit (or 16-bit PNG)
// samples, channels 0 meaning the image's own. A file that is not a valid image is a
// DataError saying what the decoder found, never a crash.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::formats {

struct Image {
  int64_t height = 0, width = 0, channels = 0;
  int bits = 8;                 // 8, or 16 (PNG only)
  std::vector<uint8_t> pixels;  // 8-bit samples, row-major HWC
  std::vector<uint16_t> pixels16;
};

// A window of an image: rows y .. y+height-1, columns x .. x+width-1.
struct CropWindow {
  int64_t y = 0, x = 0, height = 0, width = 0;
};

// channels: 0 (as stored), 1 (grey) or 3 (RGB). dct: "INTEGER_FAST" (TensorFlow's default,
// also for "") or "INTEGER_ACCURATE". fancy_upscaling: chroma upsampling as TensorFlow's.
// With a crop window (tf.image.decode_and_crop_jpeg), only that window is returned, and
// rows above and below it are skipped and columns cut at iMCU boundaries by libjpeg-turbo
// rather than decoded whole; a window outside the image is a ConfigError naming both.
Image decode_jpeg(std::string_view data, int channels, const std::string& dct, bool fancy_upscaling,
                  const CropWindow* crop = nullptr);
// tf.image.extract_jpeg_shape: {height, width, components} from the JPEG's header alone.
struct JpegShape {
  int64_t height = 0, width = 0, components = 0;
};
JpegShape jpeg_shape(std::string_view data);
// channels: 0, 1, 2 (grey + alpha), 3 (RGB) or 4 (RGBA). sixteen_bit: keep 16-bit samples
// (dtype=uint16); otherwise they are scaled to 8 bits as TensorFlow does.
Image decode_png(std::string_view data, int channels, bool sixteen_bit);
// Whether data starts like a JPEG / a PNG file.
bool looks_like_jpeg(std::string_view data);
bool looks_like_png(std::string_view data);

// Encoders (tf.image.encode_png / encode_jpeg, and fixture writers): an 8-bit HWC image.
std::string encode_png(const Image& image);
// quality 0-100 (TensorFlow's default 95); chroma_downsampling: 4:2:0 (TensorFlow's
// default) or full-resolution colour; 1 (grey) or 3 (RGB) channels; 300 dpi as TensorFlow.
std::string encode_jpeg(const Image& image, int quality, bool chroma_downsampling);

}  // namespace kiln::formats
