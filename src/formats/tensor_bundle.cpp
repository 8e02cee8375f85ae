#include "formats/tensor_bundle.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "formats/crc32c.h"
#include "formats/sstable.h"
#include "kiln/base/error.h"
#include "formats/atomic_file.h"
#include "tf_bundle.pb.h"

namespace kiln::formats {
namespace {

namespace fs = std::filesystem;

tensorflow::DataType tf_dtype(DType t) {
  switch (t) {
    case DType::f32: return tensorflow::DT_FLOAT;
    case DType::f16: return tensorflow::DT_HALF;
    case DType::bf16: return tensorflow::DT_BFLOAT16;
    case DType::i32: return tensorflow::DT_INT32;
    case DType::i64: return tensorflow::DT_INT64;
    case DType::boolean: return tensorflow::DT_BOOL;
  }
  return tensorflow::DT_INVALID;
}

// kiln's dtype for a TensorFlow one, and the bytes of one stored element; false for those
// kiln does not hold.
bool kiln_dtype(int tf, DType* t, size_t* stored) {
  switch (tf) {
    case tensorflow::DT_FLOAT: *t = DType::f32, *stored = 4; return true;
    case tensorflow::DT_HALF: *t = DType::f16, *stored = 2; return true;
    case tensorflow::DT_BFLOAT16: *t = DType::bf16, *stored = 2; return true;
    case tensorflow::DT_INT32: *t = DType::i32, *stored = 4; return true;
    case tensorflow::DT_INT64: *t = DType::i64, *stored = 8; return true;
    case tensorflow::DT_BOOL: *t = DType::boolean, *stored = 1; return true;
    case tensorflow::DT_UINT8: *t = DType::i32, *stored = 1; return true;
    case tensorflow::DT_INT8: *t = DType::i32, *stored = 1; return true;
    case tensorflow::DT_INT16: *t = DType::i32, *stored = 2; return true;
    case tensorflow::DT_UINT16: *t = DType::i32, *stored = 2; return true;
    default: return false;
  }
}

std::string read_file(const std::string& path, const char* what) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    KILN_THROW(CheckpointError) << "[checkpoint] " << what << " '" << path << "' "
                                << (fs::exists(path, ec) ? "is not a regular file" : "does not exist");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  if (!in && !in.eof()) KILN_THROW(CheckpointError) << "[checkpoint] cannot read '" << path << "'";
  return s.str();
}

// One element of storage (TensorFlow's little-endian layout) into an Array element.
double stored_value(const char* p, int tf) {
  switch (tf) {
    case tensorflow::DT_UINT8: return static_cast<unsigned char>(*p);
    case tensorflow::DT_INT8: return static_cast<signed char>(*p);
    case tensorflow::DT_INT16: {
      int16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case tensorflow::DT_UINT16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    default: return 0;
  }
}

}  // namespace

void write_bundle(const std::string& prefix, const std::map<std::string, Array>& tensors,
                  const WriteFailpoints& failpoints) {
  std::string data;
  std::vector<std::pair<std::string, std::string>> entries;
  tensorflow::BundleHeaderProto header;
  header.set_num_shards(1);
  header.mutable_version()->set_producer(1);
  entries.emplace_back("", header.SerializeAsString());
  for (const auto& [name, a] : tensors) {  // std::map: name order, as Saver writes
    if (name.empty()) KILN_THROW(ConfigError) << "[checkpoint] a tensor without a name";
    tensorflow::BundleEntryProto e;
    e.set_dtype(tf_dtype(a.dtype()));
    tensorflow::TensorShapeProto* shape = e.mutable_shape();
    for (int64_t d : a.shape()) shape->add_dim()->set_size(d);
    e.set_offset(static_cast<int64_t>(data.size()));
    e.set_size(static_cast<int64_t>(a.nbytes()));
    const std::string_view bytes(reinterpret_cast<const char*>(a.bytes()), a.nbytes());
    e.set_crc32c(mask_crc(crc32c(bytes)));
    data.append(bytes);
    entries.emplace_back(name, e.SerializeAsString());
  }
  write_file_atomically(bundle_data_file(prefix), data, "[checkpoint]");
  write_file_atomically(bundle_index_file(prefix), write_table(entries), "[checkpoint]", failpoints);
}

bool bundle_exists(const std::string& prefix) {
  std::error_code ec;
  return fs::is_regular_file(bundle_index_file(prefix), ec);
}

namespace {

struct Parsed {
  tensorflow::BundleHeaderProto header;
  std::vector<std::pair<std::string, tensorflow::BundleEntryProto>> entries;
};

Parsed parse_index(const std::string& prefix) {
  const std::string path = bundle_index_file(prefix);
  const std::string bytes = read_file(path, "index");
  Parsed p;
  const std::vector<std::pair<std::string, std::string>> table = read_table(bytes, path);
  if (table.empty() || !table.front().first.empty() || !p.header.ParseFromString(table.front().second))
    KILN_THROW(CheckpointError) << "[checkpoint] '" << path << "' has no bundle header (not a TensorFlow checkpoint)";
  if (p.header.num_shards() != 1)
    KILN_THROW(CheckpointError) << "[checkpoint] '" << path << "' has " << p.header.num_shards()
                                << " data shards; kiln reads checkpoints of one shard (as Estimator writes them)";
  if (p.header.endianness() != tensorflow::BundleHeaderProto::LITTLE)
    KILN_THROW(CheckpointError) << "[checkpoint] '" << path << "' is big-endian";
  if (p.header.version().min_consumer() > 1)
    KILN_THROW(CheckpointError) << "[checkpoint] '" << path << "' needs a reader of version "
                                << p.header.version().min_consumer() << "; this one reads version 1";
  for (size_t i = 1; i < table.size(); ++i) {
    tensorflow::BundleEntryProto e;
    if (!e.ParseFromString(table[i].second))
      KILN_THROW(CheckpointError) << "[checkpoint] '" << path << "': the entry of '" << table[i].first << "' does not parse";
    p.entries.emplace_back(table[i].first, std::move(e));
  }
  return p;
}

}  // namespace

std::vector<BundleEntry> list_bundle(const std::string& prefix) {
  std::vector<BundleEntry> out;
  for (const auto& [name, e] : parse_index(prefix).entries) {
    BundleEntry b;
    b.name = name;
    for (const auto& d : e.shape().dim()) b.shape.push_back(d.size());
    DType t;
    size_t stored;
    b.readable = kiln_dtype(e.dtype(), &t, &stored);
    b.dtype = b.readable ? std::string(dtype_name(t)) : tensorflow::DataType_Name(e.dtype());
    out.push_back(std::move(b));
  }
  return out;
}

std::map<std::string, Array> read_bundle(const std::string& prefix, const std::vector<std::string>& names) {
  const Parsed p = parse_index(prefix);
  const std::string data_path = bundle_data_file(prefix);
  const std::string data = read_file(data_path, "data file");
  std::map<std::string, Array> out;
  auto wanted = [&](const std::string& n) {
    if (names.empty()) return true;
    for (const auto& w : names)
      if (w == n) return true;
    return false;
  };
  for (const auto& [name, e] : p.entries) {
    if (!wanted(name)) continue;
    const std::string where = "[checkpoint] '" + prefix + "', tensor '" + name + "': ";
    DType t;
    size_t stored;
    if (!kiln_dtype(e.dtype(), &t, &stored)) {
      if (!names.empty()) KILN_THROW(CheckpointError) << where << "dtype " << tensorflow::DataType_Name(e.dtype()) << " is not one kiln holds";
      continue;  // a string tensor and the like: not a variable kiln trains
    }
    if (e.slices_size() > 0 || e.shard_id() != 0)
      KILN_THROW(CheckpointError) << where << "a sliced (partitioned) tensor; kiln reads whole tensors";
    Shape shape;
    for (const auto& d : e.shape().dim()) {
      if (d.size() < 0) KILN_THROW(CheckpointError) << where << "a negative extent";
      shape.push_back(d.size());
    }
    // The element count and both byte counts (as stored, and as the Array holds them: narrow
    // integers widen) checked for overflow: a shape of [2^31, 2^31] f32 has 2^62 elements
    // whose 2^64 bytes would wrap to 0 and pass for an entry of size 0.
    int64_t elements = 1, bytes_stored = 0, bytes_held = 0;
    for (int64_t d : shape)
      if (__builtin_mul_overflow(elements, d, &elements))
        KILN_THROW(CheckpointError) << where << "shape " << shape_str(shape) << " has more than 2^63 elements";
    if (__builtin_mul_overflow(elements, static_cast<int64_t>(stored), &bytes_stored) ||
        __builtin_mul_overflow(elements, static_cast<int64_t>(dtype_size(t)), &bytes_held))
      KILN_THROW(CheckpointError) << where << "shape " << shape_str(shape) << " of " << elements << " "
                                  << tensorflow::DataType_Name(e.dtype()) << " elements needs more than 2^63 bytes";
    if (e.size() < 0 || e.size() != bytes_stored)
      KILN_THROW(CheckpointError) << where << e.size() << " bytes for shape " << shape_str(shape) << " (expected "
                                  << bytes_stored << ")";
    if (e.offset() < 0 || static_cast<uint64_t>(e.offset()) > data.size() ||
        static_cast<uint64_t>(e.size()) > data.size() - static_cast<uint64_t>(e.offset()))
      KILN_THROW(CheckpointError) << where << "its bytes lie outside '" << data_path << "' (" << data.size()
                                  << " bytes): the data file is truncated or belongs to another checkpoint";
    const std::string_view bytes(data.data() + e.offset(), static_cast<size_t>(e.size()));
    if (unmask_crc(e.crc32c()) != crc32c(bytes))
      KILN_THROW(CheckpointError) << where << "its CRC-32C does not match: the data file '" << data_path
                                  << "' is damaged";
    Array a(t, shape);
    if (stored == dtype_size(t)) {
      std::memcpy(a.bytes(), bytes.data(), bytes.size());
    } else {
      for (int64_t i = 0; i < elements; ++i) a.set(i, stored_value(bytes.data() + i * stored, e.dtype()));
    }
    out.emplace(name, std::move(a));
  }
  for (const auto& n : names)
    if (!out.count(n)) KILN_THROW(CheckpointError) << "[checkpoint] '" << prefix << "' has no tensor '" << n << "'";
  return out;
}

}  // namespace kiln::formats
