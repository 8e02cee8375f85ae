#include "targets.h"

#include <sys/mman.h>
#include <unistd.h>

#include <string_view>

#include "cache/entry_meta.h"
#include "kiln/checkpoint.h"
#include "kiln/config.h"
#include "kiln/data.h"
#include "kiln/error.h"
#include "kiln/text.h"

namespace kiln::fuzz {
namespace {

std::string_view text_of(const uint8_t* data, size_t size) { return {reinterpret_cast<const char*>(data), size}; }

// Runs `read`, accepting a kiln::Error as a clean rejection.
template <class F>
int rejecting_cleanly(F&& read) {
  try {
    read();
  } catch (const Error&) {
  }
  return 0;
}

// The bytes as a file read_idx can open by name: a memory file, seen through /proc.
class MemoryFile {
 public:
  MemoryFile(const uint8_t* data, size_t size) : fd_(::memfd_create("kiln-fuzz", MFD_CLOEXEC)) {
    size_t done = 0;
    while (fd_ >= 0 && done < size) {
      const ssize_t n = ::write(fd_, data + done, size - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
  }
  ~MemoryFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool ok() const { return fd_ >= 0; }
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  int fd_;
};

}  // namespace

int idx_reader(const uint8_t* data, size_t size) {
  const MemoryFile f(data, size);
  if (!f.ok()) return 0;
  return rejecting_cleanly([&] {
    const data::IdxData idx = data::read_idx(f.path());
    size_t count = idx.dims.empty() ? 0 : 1;
    for (int64_t d : idx.dims) count *= static_cast<size_t>(d);
    if (count != idx.values.size()) __builtin_trap();  // a reader that accepts must be consistent
  });
}

int checkpoint_reader(const uint8_t* data, size_t size) {
  return rejecting_cleanly([&] {
    const Checkpoint c = parse_checkpoint(text_of(data, size), "fuzz.kiln");
    for (const auto& [name, a] : c.variables)
      if (static_cast<size_t>(a.numel()) * dtype_size(a.dtype()) != a.nbytes()) __builtin_trap();
  });
}

int cache_metadata(const uint8_t* data, size_t size) {
  return rejecting_cleanly([&] {
    const cache::EntryMeta m = cache::parse_entry_meta(text_of(data, size), "00112233445566778899aabbccddeeff", "meta.json");
    if (m.hits < 0 || (m.created && !(*m.created == *m.created))) __builtin_trap();
  });
}

int graph_parser(const uint8_t* data, size_t size) {
  return rejecting_cleanly([&] {
    const Graph g = parse_graph(text_of(data, size));
    // What parses prints, and the printed form parses to the same text.
    const std::string text = print_graph(g, TextForm::canonical);
    if (print_graph(parse_graph(text), TextForm::canonical) != text) __builtin_trap();
  });
}

int accelerate_mode(const uint8_t* data, size_t size) {
  return rejecting_cleanly([&] {
    const AccelerateTrainMode m = AccelerateTrainMode::parse(text_of(data, size));
    const AccelerateTrainMode again = AccelerateTrainMode::parse(m.to_string());
    if (again.to_string() != m.to_string()) __builtin_trap();
  });
}

const std::vector<NamedTarget>& all_targets() {
  static const std::vector<NamedTarget> targets = {{"idx_reader", idx_reader},
                                                   {"checkpoint_reader", checkpoint_reader},
                                                   {"cache_metadata", cache_metadata},
                                                   {"graph_parser", graph_parser},
                                                   {"accelerate_mode", accelerate_mode}};
  return targets;
}

}  // namespace kiln::fuzz
