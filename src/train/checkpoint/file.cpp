// One checkpoint file: serialise, checksum, write atomically; read and verify.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>

#include "formats/bounded_json.h"
#include "kiln/train/checkpoint.h"
#include "kiln/ir/ops.h"
#include "process/failpoint.h"

namespace kiln {
namespace {

constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'C', 'K', 'P', 'T'};
constexpr uint32_t kVersion = 1;
constexpr size_t kHeader = 8 + 4 + 8;
constexpr size_t kTrailer = 16;
// Crash tests: KILN_CHECKPOINT_FAILPOINT=POINT[@STEP] kills the process with the temp file
// `written` (not yet fsynced), `fsynced` (not yet renamed), `renamed` (directory not yet
// fsynced) or the checkpoint `saved` (before older ones are removed).
constexpr const char* kFailpointEnv = "KILN_CHECKPOINT_FAILPOINT";

template <class T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
template <class T>
T get(std::string_view in, size_t at) {
  T v;
  std::memcpy(&v, in.data() + at, sizeof v);
  return v;
}

std::string checksum(const char* data, size_t n) {
  const XXH128_hash_t h = XXH3_128bits(data, n);
  std::string out;
  put(out, h.low64);
  put(out, h.high64);
  return out;
}

// err: the errno of the call that failed, taken before any clean-up call can change it.
[[noreturn]] void os_error(const std::string& what, const std::string& path, int err = errno) {
  KILN_THROW(SystemError) << "[checkpoint] cannot " << what << " '" << path << "': " << std::strerror(err);
}

void write_all(int fd, const std::string& bytes, const std::string& path) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) os_error("write", path, n == 0 ? EIO : errno);
    done += static_cast<size_t>(n);
  }
}

void fsync_dir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) os_error("open directory", dir);
  const int rc = ::fsync(fd), err = errno;
  ::close(fd);
  if (rc != 0) os_error("fsync directory", dir, err);
}

}  // namespace

void write_checkpoint(const std::string& path, const Checkpoint& ckpt) {
  nlohmann::json vars = nlohmann::json::array();
  std::string data;
  for (const auto& [name, a] : ckpt.variables) {
    vars.push_back({{"name", name},
                    {"dtype", std::string(dtype_name(a.dtype()))},
                    {"shape", a.shape()},
                    {"offset", data.size()},
                    {"bytes", a.nbytes()}});
    data.append(reinterpret_cast<const char*>(a.bytes()), a.nbytes());
  }
  const nlohmann::json manifest = {{"format", "kiln-checkpoint"},
                                   {"version", kVersion},
                                   {"kiln", KILN_VERSION},
                                   {"global_step", ckpt.step},
                                   {"state", ckpt.state},
                                   {"variables", vars}};
  const std::string text = manifest.dump();
  std::string out(kMagic, sizeof kMagic);
  put(out, kVersion);
  put(out, static_cast<uint64_t>(text.size()));
  out += text;
  out += data;
  out += checksum(out.data(), out.size());

  const std::filesystem::path p(path);
  const std::string dir = p.parent_path().empty() ? "." : p.parent_path().string();
  const std::string tmp = (p.parent_path() / (".tmp-" + std::to_string(::getpid()) + "-" + p.filename().string())).string();
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) os_error("create", tmp);
  try {
    write_all(fd, out, tmp);
    failpoint(kFailpointEnv, "written", ckpt.step);
    if (::fsync(fd) != 0) os_error("fsync", tmp);
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    os_error("close", tmp, err);
  }
  failpoint(kFailpointEnv, "fsynced", ckpt.step);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    os_error("rename into", path, err);
  }
  failpoint(kFailpointEnv, "renamed", ckpt.step);
  fsync_dir(dir);
  failpoint(kFailpointEnv, "saved", ckpt.step);
}

namespace {

// The one integer field `key` of `j`, in [lo, hi]; `what` names it in the error.
int64_t integer_field(const nlohmann::json& j, const char* key, int64_t lo, int64_t hi, const std::string& what,
                      const std::function<void(const std::string&)>& corrupt) {
  if (!j.contains(key)) corrupt(what + " has no '" + key + "'");
  const nlohmann::json& v = j[key];
  if (!v.is_number_integer()) corrupt(what + ": '" + key + "' is " + v.dump() + ", not an integer");
  if (v.is_number_unsigned() ? v.get<uint64_t>() > static_cast<uint64_t>(hi) : v.get<int64_t>() > hi)
    corrupt(what + ": '" + key + "' " + v.dump() + " is larger than " + std::to_string(hi));
  if (!v.is_number_unsigned() && v.get<int64_t>() < lo)
    corrupt(what + ": '" + key + "' " + v.dump() + " is below " + std::to_string(lo));
  return v.get<int64_t>();
}

std::string string_field(const nlohmann::json& j, const char* key, const std::string& what,
                         const std::function<void(const std::string&)>& corrupt) {
  if (!j.contains(key) || !j[key].is_string()) corrupt(what + ": '" + key + "' is missing or not a string");
  return j[key].get<std::string>();
}

// One variable of the manifest, checked against the data section before any allocation.
void read_variable(const nlohmann::json& v, size_t index, std::string_view data, Checkpoint& ckpt,
                   const std::function<void(const std::string&)>& corrupt) {
  const std::string at = "variable #" + std::to_string(index);
  if (!v.is_object()) corrupt(at + " is not an object");
  const std::string name = string_field(v, "name", at, corrupt);
  const std::string what = "variable '" + name + "'";
  if (name.empty()) corrupt(at + " has an empty name");
  if (ckpt.variables.count(name)) corrupt(what + " appears twice");
  const std::string dtype_text = string_field(v, "dtype", what, corrupt);
  DType dtype{};
  try {
    dtype = parse_dtype(dtype_text);
  } catch (const Error&) {
    corrupt(what + ": unknown dtype '" + dtype_text + "'");
  }
  if (!v.contains("shape") || !v["shape"].is_array() || v["shape"].size() > 8)
    corrupt(what + ": 'shape' is missing or not a list of at most 8 extents");
  const auto limit = static_cast<int64_t>(data.size());
  Shape shape;
  uint64_t count = 1;
  for (const auto& d : v["shape"]) {
    if (!d.is_number_integer() || (!d.is_number_unsigned() && d.get<int64_t>() < 0) ||
        (d.is_number_unsigned() && d.get<uint64_t>() > static_cast<uint64_t>(limit)))
      corrupt(what + ": shape " + v["shape"].dump() + " has an extent that is not a size (0.." +
              std::to_string(limit) + ", the data section's bytes)");
    shape.push_back(d.get<int64_t>());
    // Extents are <= the data size, so the product is checked before it can overflow.
    count = shape.back() == 0 ? 0 : count * static_cast<uint64_t>(shape.back());
    if (count > data.size()) count = data.size() + 1;
  }
  const uint64_t need = count * dtype_size(dtype);
  const int64_t offset = integer_field(v, "offset", 0, limit, what, corrupt);
  const int64_t bytes = integer_field(v, "bytes", 0, limit, what, corrupt);
  if (count > data.size() || static_cast<uint64_t>(bytes) != need)
    corrupt(what + ": shape " + v["shape"].dump() + " of " + dtype_text + " does not match its " +
            std::to_string(bytes) + " bytes");
  if (bytes > limit - offset)
    corrupt(what + ": bytes " + std::to_string(offset) + ".." + std::to_string(offset + bytes) +
            " lie outside the " + std::to_string(limit) + "-byte data section");
  Array a(dtype, shape);
  std::memcpy(a.bytes(), data.data() + offset, static_cast<size_t>(bytes));
  ckpt.variables.emplace(name, std::move(a));
}

// Reads the whole of a regular file, never blocking on a FIFO or following a device.
std::string read_regular_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    KILN_THROW(CheckpointError) << "[checkpoint] cannot open '" << path << "': " << std::strerror(err);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    KILN_THROW(CheckpointError) << "[checkpoint] cannot examine '" << path << "': " << std::strerror(err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    const char* kind = S_ISDIR(st.st_mode)                          ? "a directory"
                       : S_ISFIFO(st.st_mode)                       ? "a FIFO"
                       : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                                                                    : "not a plain file";
    KILN_THROW(CheckpointError) << "[checkpoint] '" << path << "' is not a regular file (" << kind
                                << "); names ckpt-<step>.kiln are kiln's checkpoints: move it out of the model directory";
  }
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      KILN_THROW(CheckpointError) << "[checkpoint] cannot read '" << path << "': " << std::strerror(err);
    }
    if (n == 0) break;  // shrank meanwhile: the checksum says so
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  bytes.resize(done);
  return bytes;
}

}  // namespace

Checkpoint read_checkpoint(const std::string& path) { return parse_checkpoint(read_regular_file(path), path); }

Checkpoint parse_checkpoint(std::string_view bytes, const std::string& path) {
  const std::function<void(const std::string&)> corrupt = [&](const std::string& why) {
    KILN_THROW(CheckpointError) << "[checkpoint] '" << path << "' is corrupt: " << why
                                << "; delete it to resume from an older checkpoint or start over";
  };
  if (bytes.size() < kHeader + kTrailer) corrupt("only " + std::to_string(bytes.size()) + " bytes");
  if (std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) corrupt("not a kiln checkpoint (bad magic)");
  if (checksum(bytes.data(), bytes.size() - kTrailer) != bytes.substr(bytes.size() - kTrailer))
    corrupt("checksum mismatch (XXH3-128)");
  if (get<uint32_t>(bytes, 8) != kVersion) corrupt("unsupported version " + std::to_string(get<uint32_t>(bytes, 8)));
  const uint64_t mlen = get<uint64_t>(bytes, 12);
  if (mlen > bytes.size() - kHeader - kTrailer) corrupt("manifest length out of range");
  const size_t data_at = kHeader + mlen, data_len = bytes.size() - kTrailer - data_at;
  const std::string_view data = bytes.substr(data_at, data_len);
  // A manifest lists every variable: at most 64 MiB of it, nested as kiln writes it.
  std::string why;
  const nlohmann::json m = parse_bounded_json(bytes.substr(kHeader, mlen), JsonLimits{size_t{64} << 20, 16}, &why);
  if (m.is_discarded()) corrupt("the manifest is not valid JSON (" + why + ")");
  if (!m.is_object()) corrupt("the manifest is not a JSON object");
  Checkpoint ckpt;
  ckpt.step = integer_field(m, "global_step", 0, std::numeric_limits<int64_t>::max(), "the manifest", corrupt);
  if (m.contains("state")) {
    if (!m["state"].is_object()) corrupt("the manifest's 'state' is not an object");
    ckpt.state = m["state"];
  }
  if (!m.contains("variables") || !m["variables"].is_array()) corrupt("the manifest's 'variables' is not a list");
  size_t index = 0;
  for (const auto& v : m["variables"]) read_variable(v, index++, data, ckpt, corrupt);
  // The step counter is saved twice: in the manifest and as the variable; they must agree.
  if (const auto it = ckpt.variables.find("global_step"); it != ckpt.variables.end()) {
    const Array& gs = it->second;
    if (gs.numel() != 1 || !(gs.dtype() == DType::i64 || gs.dtype() == DType::i32))
      corrupt("variable 'global_step' is " + std::string(dtype_name(gs.dtype())) + shape_str(gs.shape()) +
              ", not an integer scalar");
    if (gs.get_int(0) != ckpt.step)
      corrupt("the manifest says step " + std::to_string(ckpt.step) + " but variable 'global_step' holds " +
              std::to_string(gs.get_int(0)));
  }
  return ckpt;
}

std::vector<std::string> checkpoint_mismatches(const Graph& g, const Variables& saved, bool allow_extra,
                                               const std::map<std::string, std::string>& unread) {
  std::vector<std::string> out;
  std::map<std::string, bool> in_graph;
  for (ValueId id : g.variables()) {
    const Node& n = g.node(id);
    in_graph[n.name] = true;
    if (is_local_variable(n)) continue;  // never in a checkpoint
    auto it = saved.find(n.name);
    if (const auto u = unread.find(n.name); it == saved.end() && u != unread.end()) {
      // TensorFlow too restores a variable only from a tensor of its own dtype.
      out.push_back("'" + n.name + "' is " + std::string(dtype_name(n.dtype)) + shape_str(n.shape) +
                    " in the model but " + u->second + " in the checkpoint, a dtype kiln does not hold (it holds " +
                    "f32, f16, bf16, i32, i64, bool and TensorFlow's 8/16-bit integers): save the variable as " +
                    std::string(dtype_name(n.dtype)) + " in TensorFlow, or read the checkpoint there");
    } else if (it == saved.end()) {
      out.push_back("'" + n.name + "' " + std::string(dtype_name(n.dtype)) + shape_str(n.shape) +
                    " is in the model but not in the checkpoint");
    } else if (it->second.dtype() != n.dtype || it->second.shape() != n.shape) {
      out.push_back("'" + n.name + "' is " + std::string(dtype_name(n.dtype)) + shape_str(n.shape) +
                    " in the model but " + std::string(dtype_name(it->second.dtype())) +
                    shape_str(it->second.shape()) + " in the checkpoint");
    }
  }
  for (const auto& [name, a] : saved)
    if (!allow_extra && !in_graph.count(name))
      out.push_back("'" + name + "' " + std::string(dtype_name(a.dtype())) + shape_str(a.shape()) +
                    " is in the checkpoint but not in the model");
  return out;
}

}  // namespace kiln
