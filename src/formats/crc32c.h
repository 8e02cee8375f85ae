// CRC-32C (Castagnoli), as TensorFlow's file formats check their bytes with it, and
// TensorFlow's mask of a stored CRC. Debian 12 packages no CRC-32C library, so this is
// the SSE4.2 instruction where the CPU has it and a table otherwise (same values).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kiln::formats {

// Continues `crc` (0 to start) over `n` bytes.
uint32_t crc32c_extend(uint32_t crc, const void* data, size_t n);
inline uint32_t crc32c(std::string_view s) { return crc32c_extend(0, s.data(), s.size()); }

// TensorFlow's kMaskDelta rotation: a CRC stored beside the data it covers is masked, so
// that a CRC of data that holds CRCs stays meaningful.
inline uint32_t mask_crc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }
inline uint32_t unmask_crc(uint32_t masked) {
  const uint32_t rot = masked - 0xa282ead8u;
  return (rot >> 17) | (rot << 15);
}

}  // namespace kiln::formats
