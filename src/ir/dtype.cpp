#include "kiln/ir/dtype.h"

#include "kiln/base/error.h"

namespace kiln {

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "f32";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::boolean: return "bool";
  }
  KILN_CHECK(false) << "bad dtype " << int(t);
  return {};
}

DType parse_dtype(std::string_view s) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (dtype_name(DType(i)) == s) return DType(i);
  KILN_THROW(GraphError) << "[dtype] unknown type '" << s << "'; valid: f32, f16, bf16, i32, i64, bool";
}

size_t dtype_size(DType t) {
  switch (t) {
    case DType::f32: case DType::i32: return 4;
    case DType::f16: case DType::bf16: return 2;
    case DType::i64: return 8;
    case DType::boolean: return 1;
  }
  return 0;
}

}  // namespace kiln
