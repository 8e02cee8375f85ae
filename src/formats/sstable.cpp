#include "formats/sstable.h"

#include <algorithm>

#include "formats/crc32c.h"
#include "kiln/base/error.h"

namespace kiln::formats {
namespace {

constexpr size_t kBlockSize = 262144;
constexpr uint64_t kMagic = 0xdb4775248b80fb57ull;
constexpr size_t kFooter = 48;

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
void put32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
void put64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}

class BlockBuilder {
 public:
  explicit BlockBuilder(int restart_interval) : interval_(restart_interval) {}
  void add(const std::string& key, const std::string& value) {
    size_t shared = 0;
    if (count_ % interval_ != 0) {
      const size_t n = std::min(last_.size(), key.size());
      while (shared < n && last_[shared] == key[shared]) ++shared;
    } else {
      restarts_.push_back(static_cast<uint32_t>(buf_.size()));
    }
    put_varint(buf_, shared);
    put_varint(buf_, key.size() - shared);
    put_varint(buf_, value.size());
    buf_.append(key, shared, std::string::npos);
    buf_.append(value);
    last_ = key;
    ++count_;
  }
  size_t estimate() const { return buf_.size() + 4 * restarts_.size() + 4; }
  bool empty() const { return count_ == 0; }
  std::string finish() {
    if (restarts_.empty()) restarts_.push_back(0);
    std::string out = buf_;
    for (uint32_t r : restarts_) put32(out, r);
    put32(out, static_cast<uint32_t>(restarts_.size()));
    buf_.clear();
    restarts_.clear();
    last_.clear();
    count_ = 0;
    return out;
  }

 private:
  int interval_;
  std::string buf_, last_;
  std::vector<uint32_t> restarts_;
  int count_ = 0;
};

struct Handle {
  uint64_t offset = 0, size = 0;
  std::string encode() const {
    std::string s;
    put_varint(s, offset);
    put_varint(s, size);
    return s;
  }
};

// Writes contents + trailer at the end of `file`; the block's handle.
Handle append_block(std::string& file, const std::string& contents) {
  Handle h{file.size(), contents.size()};
  file.append(contents);
  std::string with_type = contents;
  with_type.push_back('\0');
  file.push_back('\0');
  put32(file, mask_crc(crc32c(with_type)));
  return h;
}

std::string shortest_separator(const std::string& start, const std::string& limit) {
  const size_t n = std::min(start.size(), limit.size());
  size_t i = 0;
  while (i < n && start[i] == limit[i]) ++i;
  if (i >= n) return start;  // one is a prefix of the other
  const auto b = static_cast<unsigned char>(start[i]);
  if (b < 0xff && b + 1 < static_cast<unsigned char>(limit[i])) {
    std::string out = start.substr(0, i + 1);
    out[i] = static_cast<char>(b + 1);
    return out;
  }
  return start;
}

std::string short_successor(const std::string& key) {
  for (size_t i = 0; i < key.size(); ++i) {
    const auto b = static_cast<unsigned char>(key[i]);
    if (b != 0xff) {
      std::string out = key.substr(0, i + 1);
      out[i] = static_cast<char>(b + 1);
      return out;
    }
  }
  return key;
}

}  // namespace

std::string write_table(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string file;
  BlockBuilder data(16), index(1);
  std::string last;
  bool pending = false;
  Handle pending_handle;
  auto flush = [&] {
    if (data.empty()) return;
    pending_handle = append_block(file, data.finish());
    pending = true;
  };
  for (const auto& [k, v] : entries) {
    if (pending) {
      index.add(shortest_separator(last, k), pending_handle.encode());
      pending = false;
    }
    data.add(k, v);
    last = k;
    if (data.estimate() >= kBlockSize) flush();
  }
  flush();
  const Handle meta = append_block(file, BlockBuilder(16).finish());
  if (pending) index.add(short_successor(last), pending_handle.encode());
  const Handle idx = append_block(file, index.finish());
  std::string footer = meta.encode() + idx.encode();
  footer.resize(40, '\0');
  put64(footer, kMagic);
  file.append(footer);
  return file;
}

namespace {

class Cursor {
 public:
  Cursor(std::string_view s, const std::string& what) : s_(s), what_(what) {}
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at_ >= s_.size()) bad("a varint runs past its block");
      const auto b = static_cast<unsigned char>(s_[at_++]);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    bad("a varint is too long");
  }
  std::string_view bytes(uint64_t n) {
    if (n > s_.size() - at_) bad("an entry runs past its block");
    const std::string_view out = s_.substr(at_, n);
    at_ += n;
    return out;
  }
  size_t at() const { return at_; }
  [[noreturn]] void bad(const std::string& why) const {
    KILN_THROW(CheckpointError) << "[checkpoint] '" << what_ << "' is not a sound checkpoint index: " << why;
  }

 private:
  std::string_view s_;
  size_t at_ = 0;
  const std::string& what_;
};

uint32_t get32(std::string_view s, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(s[at + i]);
  return v;
}

// A block's contents, its CRC checked.
std::string_view block(std::string_view file, uint64_t offset, uint64_t size, const std::string& what) {
  Cursor c(file, what);
  if (offset > file.size() || size > file.size() - offset || file.size() - offset - size < 5)
    c.bad("a block handle points outside the file");
  const std::string_view contents = file.substr(offset, size);
  const auto type = static_cast<unsigned char>(file[offset + size]);
  if (type != 0) c.bad("a block is compressed (type " + std::to_string(type) + "); only uncompressed is read");
  std::string with_type(contents);
  with_type.push_back('\0');
  if (unmask_crc(get32(file, offset + size + 1)) != crc32c(with_type)) c.bad("a block's CRC-32C does not match");
  return contents;
}

std::vector<std::pair<std::string, std::string>> entries_of(std::string_view contents, const std::string& what) {
  Cursor c(contents, what);
  if (contents.size() < 4) c.bad("a block is shorter than its restart count");
  const uint32_t restarts = get32(contents, contents.size() - 4);
  if (restarts == 0 || static_cast<uint64_t>(restarts) * 4 + 4 > contents.size()) c.bad("a block's restart count is out of range");
  const size_t end = contents.size() - 4 - 4 * static_cast<size_t>(restarts);
  Cursor e(contents.substr(0, end), what);
  std::vector<std::pair<std::string, std::string>> out;
  std::string key;
  while (e.at() < end) {
    const uint64_t shared = e.varint(), unshared = e.varint(), vlen = e.varint();
    if (shared > key.size()) e.bad("an entry shares more of the previous key than it has");
    key = key.substr(0, shared) + std::string(e.bytes(unshared));
    out.emplace_back(key, std::string(e.bytes(vlen)));
  }
  return out;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> read_table(std::string_view file, const std::string& what) {
  Cursor c(file, what);
  if (file.size() < kFooter) c.bad("only " + std::to_string(file.size()) + " bytes, shorter than the footer");
  const std::string_view footer = file.substr(file.size() - kFooter);
  uint64_t magic = 0;
  for (int i = 7; i >= 0; --i) magic = magic << 8 | static_cast<unsigned char>(footer[40 + i]);
  if (magic != kMagic) c.bad("the footer's magic number is wrong (not a TensorFlow checkpoint index)");
  Cursor f(footer.substr(0, 40), what);
  const uint64_t meta_offset = f.varint(), meta_size = f.varint();
  const uint64_t index_offset = f.varint(), index_size = f.varint();
  // The metaindex block: TensorFlow writes it empty and never reads it; kiln checks its CRC
  // and that it is empty, so that no byte of an index goes unchecked.
  if (!entries_of(block(file, meta_offset, meta_size, what), what).empty())
    c.bad("the metaindex block is not empty (a filter block TensorFlow does not write)");
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [sep, handle] : entries_of(block(file, index_offset, index_size, what), what)) {
    Cursor h(handle, what);
    const uint64_t off = h.varint(), size = h.varint();
    for (auto& kv : entries_of(block(file, off, size, what), what)) {
      if (!out.empty() && !(out.back().first < kv.first)) c.bad("keys are not in increasing order");
      out.push_back(std::move(kv));
    }
    (void)sep;
  }
  return out;
}

}  // namespace kiln::formats
