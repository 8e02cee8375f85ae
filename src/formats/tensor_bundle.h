// TensorFlow's checkpoint V2 format, the "tensor bundle": <prefix>.index (a leveldb table
// of BundleEntryProto by tensor name, sstable.h) and <prefix>.data-00000-of-00001 (the
// tensors' raw little-endian bytes, in name order), each tensor checked by the masked
// CRC-32C of its bytes. What tf.train.Saver and Estimator write and
// tf.train.load_checkpoint reads.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "formats/atomic_file.h"
#include "kiln/ir/array.h"

namespace kiln::formats {

inline std::string bundle_data_file(const std::string& prefix) { return prefix + ".data-00000-of-00001"; }
inline std::string bundle_index_file(const std::string& prefix) { return prefix + ".index"; }

// Writes the bundle atomically as far as TensorFlow's files allow: each file through a
// temporary name in its directory (".tmp-<pid>-..."), fsynced, renamed; the data file
// first, the index last, so a bundle whose index exists is whole. SystemError naming the
// file when any of it fails.
// `failpoints`: those of the index's write (the commit point), for crash tests.
void write_bundle(const std::string& prefix, const std::map<std::string, Array>& tensors,
                  const WriteFailpoints& failpoints = {});

struct BundleEntry {
  std::string name;
  std::string dtype;   // kiln's name ("f32", ...), or TensorFlow's ("DT_STRING") for one kiln does not hold
  Shape shape;
  bool readable = true;  // a dtype kiln holds
};

// The entries of a bundle (names, dtypes, shapes), from its index alone.
std::vector<BundleEntry> list_bundle(const std::string& prefix);

// Every tensor of a bundle kiln can hold (float32/16, bfloat16, int32/64, bool; narrower
// integers widened to int32), each checked against its CRC-32C and size. `names`: only
// those (CheckpointError naming one that is missing). CheckpointError naming the file and
// the tensor for anything wrong: a missing or truncated file, a sliced or sharded tensor,
// a CRC that does not match, a size that does not fit the shape.
std::map<std::string, Array> read_bundle(const std::string& prefix, const std::vector<std::string>& names = {});

// Whether <prefix>.index exists (how tf.train.latest_checkpoint tells a V2 checkpoint).
bool bundle_exists(const std::string& prefix);

}  // namespace kiln::formats
