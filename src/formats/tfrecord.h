// TFRecord files: records framed as TensorFlow writes them (uint64 length, masked CRC-32C of
// the length, the bytes, masked CRC-32C of the bytes), plain or compressed as
// tf.data.TFRecordDataset(compression_type=) reads them: "" (none), "GZIP" or "ZLIB".
// The same framing is the container of TensorBoard's event files.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace kiln::formats {

enum class Compression { none, gzip, zlib };
// "" or "NONE", "GZIP", "ZLIB" (TensorFlow's spellings); ConfigError naming the others.
Compression parse_compression(const std::string& text);

class RecordReader {
 public:
  // DataError "[TFRecord] cannot open '<path>': ..." when the file cannot be read.
  RecordReader(std::string path, Compression compression);
  ~RecordReader();
  // The next record into `out`; false at the end. A damaged record (a CRC that does not
  // match, a length beyond the file, a file cut inside a record) is a DataError naming the
  // file and the record's offset (in the uncompressed stream), never a crash. So is
  // anything after a compressed stream's end that is not another GZIP member (GZIP, as
  // TensorFlow's DataLossError), or anything at all after a ZLIB stream (which TensorFlow
  // skips silently, losing the records of a second stream appended).
  bool next(std::string& out);
  uint64_t offset() const { return offset_; }
  const std::string& path() const { return path_; }
  // The largest record a reader takes (1 GiB): a length beyond it is damage.
  static constexpr uint64_t kMaxRecordBytes = uint64_t{1} << 30;

 private:
  struct Source;
  size_t read(char* into, size_t n);
  bool fill();
  std::string path_;
  std::unique_ptr<Source> src_;
  uint64_t offset_ = 0;
};

class RecordWriter {
 public:
  // Creates (or truncates) `path`; SystemError naming it when that fails. `append`: keep
  // what the file holds and write after it (uncompressed files only).
  RecordWriter(std::string path, Compression compression, bool append = false);
  ~RecordWriter();
  void write(std::string_view record);
  // Pushes what was written to the file (and, with sync, to the disk).
  void flush(bool sync = false);
  void close();
  const std::string& path() const { return path_; }

 private:
  struct Sink;
  std::string path_;
  std::unique_ptr<Sink> sink_;
};

// The framed bytes of one record (for tests and for writers of their own).
std::string frame_record(std::string_view record);

}  // namespace kiln::formats
