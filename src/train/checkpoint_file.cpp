// One checkpoint file: serialise, checksum, write atomically; read and verify.
#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "kiln/checkpoint.h"
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
T get(const std::string& in, size_t at) {
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

[[noreturn]] void os_error(const std::string& what, const std::string& path) {
  KILN_THROW(SystemError) << "[checkpoint] cannot " << what << " '" << path << "': " << std::strerror(errno);
}

void write_all(int fd, const std::string& bytes, const std::string& path) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) os_error("write", path);
    done += static_cast<size_t>(n);
  }
}

void fsync_dir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) os_error("open directory", dir);
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) os_error("fsync directory", dir);
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
    ::unlink(tmp.c_str());
    os_error("close", tmp);
  }
  failpoint(kFailpointEnv, "fsynced", ckpt.step);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    os_error("rename into", path);
  }
  failpoint(kFailpointEnv, "renamed", ckpt.step);
  fsync_dir(dir);
  failpoint(kFailpointEnv, "saved", ckpt.step);
}

Checkpoint read_checkpoint(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) KILN_THROW(CheckpointError) << "[checkpoint] cannot open '" << path << "'";
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto corrupt = [&](const std::string& why) {
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
  Checkpoint ckpt;
  try {
    const nlohmann::json m = nlohmann::json::parse(bytes.substr(kHeader, mlen));
    ckpt.step = m.at("global_step").get<int64_t>();
    ckpt.state = m.value("state", nlohmann::json::object());
    for (const auto& v : m.at("variables")) {
      Array a(parse_dtype(v.at("dtype").get<std::string>()), v.at("shape").get<Shape>());
      const auto off = v.at("offset").get<uint64_t>(), n = v.at("bytes").get<uint64_t>();
      if (n != a.nbytes() || off > data_len || n > data_len - off) corrupt("variable '" + v.at("name").get<std::string>() + "' out of range");
      std::memcpy(a.bytes(), bytes.data() + data_at + off, n);
      ckpt.variables[v.at("name").get<std::string>()] = std::move(a);
    }
  } catch (const nlohmann::json::exception& e) {
    corrupt(std::string("bad manifest: ") + e.what());
  } catch (const GraphError& e) {
    corrupt(std::string("bad manifest: ") + e.what());
  }
  return ckpt;
}

std::vector<std::string> checkpoint_mismatches(const Graph& g, const Variables& saved, bool allow_extra) {
  std::vector<std::string> out;
  std::map<std::string, bool> in_graph;
  for (ValueId id : g.variables()) {
    const Node& n = g.node(id);
    in_graph[n.name] = true;
    auto it = saved.find(n.name);
    if (it == saved.end()) {
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
