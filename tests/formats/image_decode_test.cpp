// JPEG and PNG decoding limits: a header that declares more than kiln decodes is refused
// with a DataError before anything is allocated for it (docs/python.md, "Limits on input
// files"), and the most compressible real image still decodes.
#include "formats/image_decode.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <string>

#include "kiln/base/error.h"

namespace kiln::formats {
namespace {

void put_be32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(v >> shift));
}

void put_chunk(std::string& out, const char* type, const std::string& body) {
  put_be32(out, static_cast<uint32_t>(body.size()));
  const std::string typed = std::string(type, 4) + body;
  out += typed;
  put_be32(out, static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(typed.data()), typed.size())));
}

// A PNG whose IHDR declares height x width at `depth` bits of colour type `color` (valid
// chunks and CRCs), with an IDAT of `raw` zero bytes deflated as well as zlib can: by
// default a few hundred bytes, what a decompression bomb looks like to libpng until its
// data runs out.
std::string declared_png(uint32_t height, uint32_t width, int depth, int color, size_t raw = 100000) {
  std::string png("\x89PNG\r\n\x1a\n", 8), ihdr;
  put_be32(ihdr, width);
  put_be32(ihdr, height);
  ihdr += {static_cast<char>(depth), static_cast<char>(color), 0, 0, 0};
  put_chunk(png, "IHDR", ihdr);
  const std::string zeros(raw, '\0');
  uLongf n = compressBound(zeros.size());
  std::string idat(n, '\0');
  compress2(reinterpret_cast<Bytef*>(idat.data()), &n, reinterpret_cast<const Bytef*>(zeros.data()), zeros.size(), 9);
  idat.resize(n);
  put_chunk(png, "IDAT", idat);
  put_chunk(png, "IEND", "");
  return png;
}

std::string decode_error(const std::string& png, bool sixteen) {
  try {
    decode_png(png, 0, sixteen);
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

// 100000x100000 RGBA16 gave a bare std::bad_alloc; 40000x40000 had 12.8 GB allocated and
// written before libpng found the data missing. TensorFlow's limit refuses both at once.
TEST(DecodePng, AHeaderBeyondTensorFlowsLimitIsRefusedBeforeAllocating) {
  for (uint32_t side : {100000u, 40000u}) {
    const std::string png = declared_png(side, side, 16, 6);
    const std::string m = decode_error(png, true);
    EXPECT_NE(m.find("[decode_png] a PNG image of " + std::to_string(png.size()) + " bytes cannot be decoded: its "
                     "header declares " + std::to_string(side) + "x" + std::to_string(side) +
                     " pixels, more than the 2^29 pixels (2^27 a side)"),
              std::string::npos)
        << m;
  }
  // A side beyond libpng's own limit (1000000) is refused by libpng, still as a DataError.
  EXPECT_NE(decode_error(declared_png(1, 1u << 27, 8, 0), false).find("[decode_png]"), std::string::npos);
}

// Within TensorFlow's limit (16000^2 < 2^29 pixels) but more samples than a file of a few
// hundred bytes can inflate to: refused before its 256 MB are allocated.
TEST(DecodePng, MoreSamplesThanTheFileCanHoldIsRefused) {
  const std::string png = declared_png(16000, 16000, 8, 0);
  const std::string m = decode_error(png, false);
  EXPECT_NE(m.find("its header declares 16000x16000 pixels of 1x8-bit samples (256000000 bytes), more than a file of " +
                   std::to_string(png.size()) + " bytes can hold (DEFLATE expands at most 1032:1)"),
            std::string::npos)
      << m;
}

// The limit is no tighter than DEFLATE itself: an all-zero image (each row's filter byte
// and samples zero) deflated at zlib's best, about 1030:1, decodes.
TEST(DecodePng, TheMostCompressibleImageStillDecodes) {
  const std::string png = declared_png(3000, 3000, 8, 0, 3000 * 3001);
  ASSERT_LT(png.size() * 1000, 3000u * 3000u) << "not compressed near DEFLATE's limit";
  const Image back = decode_png(png, 0, false);
  EXPECT_EQ(back.height, 3000);
  EXPECT_EQ(back.pixels, std::vector<uint8_t>(3000 * 3000, 0));
}

}  // namespace
}  // namespace kiln::formats
