#include "targets.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string_view>

#include <xxhash.h>

#include <sstream>

#include "cache/entry_meta.h"
#include "formats/sstable.h"
#include "formats/example.h"
#include "formats/image_decode.h"
#include "formats/tensor_bundle.h"
#include "formats/tfrecord.h"
#include "formats/bounded_json.h"
#include "kiln/train/checkpoint.h"
#include "kiln/report/report.h"
#include "kiln/train/summary.h"
#include "kiln/train/config.h"
#include "kiln/data/dataset.h"
#include "kiln/base/error.h"
#include "kiln/ir/text.h"

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

int summary_records(const uint8_t* data, size_t size) {
  return rejecting_cleanly([&] {
    std::istringstream in(std::string(text_of(data, size)));
    const RecordFile f = parse_records(in, 4096);
    if (f.records.size() != f.record_lines.size()) __builtin_trap();
    for (const auto& r : f.records)
      if (!record_problem(r).empty()) __builtin_trap();  // what the reader keeps, it checked
    const report::Run run = report::run_from_records(f.records, "fuzz", "fuzz.jsonl", f.record_lines);
    (void)run;
  });
}

// The bytes as the manifest of a checkpoint whose header, lengths and checksum are right,
// so that the fuzzer reaches the manifest's parser instead of the checksum's refusal.
int checkpoint_manifest(const uint8_t* data, size_t size) {
  std::string bytes("KILNCKPT", 8);
  const uint32_t version = 1;
  const uint64_t mlen = size;
  bytes.append(reinterpret_cast<const char*>(&version), sizeof version);
  bytes.append(reinterpret_cast<const char*>(&mlen), sizeof mlen);
  bytes.append(text_of(data, size));
  bytes.append(std::string(64, '\0'));  // data the manifest may point into
  const XXH128_hash_t h = XXH3_128bits(bytes.data(), bytes.size());
  bytes.append(reinterpret_cast<const char*>(&h.low64), sizeof h.low64);
  bytes.append(reinterpret_cast<const char*>(&h.high64), sizeof h.high64);
  return rejecting_cleanly([&] {
    const Checkpoint c = parse_checkpoint(bytes, "fuzz.kiln");
    for (const auto& [name, a] : c.variables)
      if (static_cast<size_t>(a.numel()) * dtype_size(a.dtype()) != a.nbytes()) __builtin_trap();
  });
}

int bounded_json(const uint8_t* data, size_t size) {
  std::string why;
  const nlohmann::json j = parse_bounded_json(text_of(data, size), JsonLimits{4096, 8}, &why);
  if (j.is_discarded() == why.empty()) __builtin_trap();  // a rejection says why; an acceptance does not
  if (!j.is_discarded()) (void)j.dump();  // walking what was accepted is safe
  return 0;
}

int tfrecord_reader(const uint8_t* data, size_t size) {
  // The first byte picks the framing's compression; the rest is the file.
  if (size == 0) return 0;
  const MemoryFile f(data + 1, size - 1);
  if (!f.ok()) return 0;
  const formats::Compression c = data[0] % 3 == 0 ? formats::Compression::none
                                 : data[0] % 3 == 1 ? formats::Compression::gzip
                                                    : formats::Compression::zlib;
  return rejecting_cleanly([&] {
    formats::RecordReader r(f.path(), c);
    std::string rec;
    size_t total = 0;
    while (r.next(rec)) {
      total += rec.size() + 16;
      if (c == formats::Compression::none && total > size) __builtin_trap();  // records come from the bytes
    }
  });
}

int checkpoint_index(const uint8_t* data, size_t size) {
  return rejecting_cleanly([&] {
    const auto entries = formats::read_table(text_of(data, size), "fuzz.index");
    for (size_t i = 1; i < entries.size(); ++i)
      if (!(entries[i - 1].first < entries[i].first)) __builtin_trap();  // the reader checks the order
  });
}

int example_parser(const uint8_t* data, size_t size) {
  const std::string bytes(text_of(data, size));
  rejecting_cleanly([&] { (void)formats::read_example(bytes); });
  using formats::FeatureKind;
  using formats::FeatureType;
  std::vector<formats::FeatureSpec> specs(4);
  specs[0].key = "image/encoded", specs[0].type = FeatureType::bytes;
  specs[1].key = "label", specs[1].type = FeatureType::int64, specs[1].has_default = true;
  specs[1].default_ints = {0};
  specs[2].key = "tokens", specs[2].kind = FeatureKind::var_len, specs[2].type = FeatureType::int64;
  specs[3].key = "points", specs[3].kind = FeatureKind::fixed_len_sequence, specs[3].shape = {2};
  return rejecting_cleanly([&] {
    const auto parsed = formats::parse_examples({bytes}, specs);
    if (parsed.size() != specs.size() || parsed[0].bytes.size() != 1 || parsed[1].ints.size() != 1) __builtin_trap();
    if (parsed[3].counts.size() != 1 || parsed[3].counts[0] % 2 != 0) __builtin_trap();  // whole steps only
  });
}

int image_decoder(const uint8_t* data, size_t size) {
  // The first byte picks the decoder and the channels; the rest is the file.
  if (size == 0) return 0;
  const std::string_view file(reinterpret_cast<const char*>(data + 1), size - 1);
  const int pick = data[0];
  return rejecting_cleanly([&] {
    if (pick % 8 == 5 || pick % 8 == 7) {  // a JPEG's header, then the window decode_and_crop_jpeg would take from it
      const formats::JpegShape s = formats::jpeg_shape(file);
      const formats::CropWindow w{s.height / 4, s.width / 3, std::max<int64_t>(s.height / 2, 1),
                                  std::max<int64_t>(s.width / 2, 1)};
      const formats::Image img = formats::decode_jpeg(file, pick % 8 == 5 ? 0 : 3, "", true, &w);
      if (img.height != w.height || img.width != w.width ||
          img.pixels.size() != static_cast<size_t>(img.height * img.width * img.channels))
        __builtin_trap();  // the window, filled
      return;
    }
    const formats::Image img = pick % 2 == 0 ? formats::decode_png(file, (pick / 2) % 5, (pick / 10) % 2 == 1)
                                             : formats::decode_jpeg(file, pick % 4 == 1 ? 0 : 3, "", true);
    const size_t n = static_cast<size_t>(img.height * img.width * img.channels);
    if ((img.bits == 16 ? img.pixels16.size() : img.pixels.size()) != n) __builtin_trap();  // pixels fill the image
  });
}

int tensor_bundle(const uint8_t* data, size_t size) {
  // The first 4 bytes (little-endian) give the length of the .index; the rest is the data
  // file. Both are written to a directory of this process's own, as read_bundle reads files.
  if (size < 4) return 0;
  uint32_t index_length = 0;
  for (int i = 3; i >= 0; --i) index_length = index_length << 8 | data[i];
  const std::string_view rest(reinterpret_cast<const char*>(data + 4), size - 4);
  const size_t cut = std::min<size_t>(index_length, rest.size());
  struct OwnDirectory {  // removed when the process exits
    std::string path;
    OwnDirectory() {
      char dir[] = "/tmp/kiln-fuzz-bundle-XXXXXX";
      if (!mkdtemp(dir)) __builtin_trap();
      path = dir;
    }
    ~OwnDirectory() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static const OwnDirectory dir;
  const std::string prefix = dir.path + "/model.ckpt-1";
  for (const auto& [path, bytes] : {std::pair{formats::bundle_index_file(prefix), rest.substr(0, cut)},
                                    std::pair{formats::bundle_data_file(prefix), rest.substr(cut)}}) {
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() || std::fclose(f) != 0) __builtin_trap();
  }
  rejecting_cleanly([&] { (void)formats::list_bundle(prefix); });
  return rejecting_cleanly([&] {
    for (const auto& [name, a] : formats::read_bundle(prefix))
      if (a.numel() < 0 || static_cast<uint64_t>(a.numel()) * dtype_size(a.dtype()) > rest.size() * 8 + 64)
        __builtin_trap();  // an Array is never larger than the bytes it was read from allow
  });
}

const std::vector<NamedTarget>& all_targets() {
  static const std::vector<NamedTarget> targets = {{"idx_reader", idx_reader},
                                                   {"checkpoint_reader", checkpoint_reader},
                                                   {"cache_metadata", cache_metadata},
                                                   {"graph_parser", graph_parser},
                                                   {"accelerate_mode", accelerate_mode},
                                                   {"summary_records", summary_records},
                                                   {"checkpoint_manifest", checkpoint_manifest},
                                                   {"bounded_json", bounded_json},
                                                   {"tfrecord_reader", tfrecord_reader},
                                                   {"checkpoint_index", checkpoint_index},
                                                   {"example_parser", example_parser},
                                                   {"image_decoder", image_decoder},
                                                   {"tensor_bundle", tensor_bundle}};
  return targets;
}

}  // namespace kiln::fuzz
