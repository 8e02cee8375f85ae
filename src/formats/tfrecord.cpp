#include "formats/tfrecord.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "formats/crc32c.h"
#include "kiln/base/error.h"

namespace kiln::formats {

Compression parse_compression(const std::string& text) {
  if (text.empty() || text == "NONE") return Compression::none;
  if (text == "GZIP") return Compression::gzip;
  if (text == "ZLIB") return Compression::zlib;
  KILN_THROW(ConfigError) << "[compression_type] '" << text << "' is not one of: '' (none), 'GZIP', 'ZLIB'";
}

namespace {
void put64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
void put32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
uint64_t get64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(p[i]);
  return v;
}
uint32_t get32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(p[i]);
  return v;
}
}  // namespace

std::string frame_record(std::string_view record) {
  std::string out;
  out.reserve(record.size() + 16);
  put64(out, record.size());
  put32(out, mask_crc(crc32c(std::string_view(out.data(), 8))));
  out.append(record);
  put32(out, mask_crc(crc32c(record)));
  return out;
}

// --- reading ----------------------------------------------------------------------------

// Both compressions through one zlib stream: gzip's members (windowBits 16 + 15) or a
// zlib stream. Not gzread: it skips whatever follows the last gzip member, so a file with
// garbage after its stream would read without error where TensorFlow raises DataLossError.
struct RecordReader::Source {
  Compression c;
  int fd = -1;
  z_stream z{};
  bool z_started = false;
  std::vector<unsigned char> in = std::vector<unsigned char>(1 << 16);
  bool z_end = false;
  uint64_t file_read = 0;          // compressed bytes read from fd
  int64_t member_end = -1;         // gzip: where the last member ended, until the next gives bytes
  ~Source() {
    if (z_started) inflateEnd(&z);
    if (fd >= 0) ::close(fd);
  }
  uint64_t consumed() const { return file_read - z.avail_in; }  // compressed bytes inflate took
};

RecordReader::RecordReader(std::string path, Compression compression) : path_(std::move(path)), src_(new Source) {
  src_->c = compression;
  src_->fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (src_->fd < 0) KILN_THROW(DataError) << "[TFRecord] cannot open '" << path_ << "': " << std::strerror(errno);
  if (compression == Compression::gzip) {
    // zlib reads a file without the GZIP magic as plain bytes; TensorFlow refuses it.
    unsigned char magic[2] = {0, 0};
    const ssize_t n = ::pread(src_->fd, magic, 2, 0);
    if (n > 0 && (n < 2 || magic[0] != 0x1f || magic[1] != 0x8b))
      KILN_THROW(DataError) << "[TFRecord] '" << path_ << "' is not GZIP (compression_type='GZIP'); "
                            << "an uncompressed file takes compression_type=''";
  }
  if (compression != Compression::none) {
    if (inflateInit2(&src_->z, compression == Compression::gzip ? 16 + MAX_WBITS : MAX_WBITS) != Z_OK)
      KILN_THROW(DataError) << "[TFRecord] cannot start " << (compression == Compression::gzip ? "GZIP" : "ZLIB")
                            << " for '" << path_ << "'";
    src_->z_started = true;
  }
}

RecordReader::~RecordReader() = default;

// More compressed bytes into s.in; false at the end of the file.
bool RecordReader::fill() {
  Source& s = *src_;
  for (;;) {
    const ssize_t r = ::read(s.fd, s.in.data(), s.in.size());
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) KILN_THROW(DataError) << "[TFRecord] cannot read '" << path_ << "': " << std::strerror(errno);
    s.z.next_in = s.in.data();
    s.z.avail_in = static_cast<uInt>(r);
    s.file_read += static_cast<uint64_t>(r);
    return r > 0;
  }
}

size_t RecordReader::read(char* into, size_t n) {
  Source& s = *src_;
  size_t done = 0;
  if (s.c == Compression::none) {
    while (done < n) {
      const ssize_t r = ::read(s.fd, into + done, n - done);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) KILN_THROW(DataError) << "[TFRecord] cannot read '" << path_ << "': " << std::strerror(errno);
      if (r == 0) break;
      done += static_cast<size_t>(r);
    }
    return done;
  }
  const bool gzip = s.c == Compression::gzip;
  const char* kind = gzip ? "GZIP" : "ZLIB";
  auto rest = [&](uint64_t from) {  // the bytes of the file from `from` on
    struct stat st {};
    return ::fstat(s.fd, &st) == 0 && static_cast<uint64_t>(st.st_size) > from ? st.st_size - from : 0;
  };
  s.z.next_out = reinterpret_cast<Bytef*>(into);
  s.z.avail_out = static_cast<uInt>(n);
  while (s.z.avail_out > 0 && !s.z_end) {
    if (s.z.avail_in == 0 && !fill()) break;
    const int rc = inflate(&s.z, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) {
      if (s.z.avail_in == 0 && !fill()) {  // the file ends with the stream
        s.z_end = true;
        break;
      }
      const uint64_t at = s.consumed();
      if (!gzip)  // TensorFlow stops reading there, dropping what follows (a second stream's records)
        KILN_THROW(DataError) << "[TFRecord] '" << path_ << "' has " << rest(at) << " bytes after the end of its "
                              << "ZLIB stream at byte " << at << " (a ZLIB file is one stream; another one appended, "
                              << "or garbage?)";
      inflateReset(&s.z);  // another gzip member follows (as `cat a.gz b.gz`), as TensorFlow reads it
      s.member_end = static_cast<int64_t>(at);
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      if (s.member_end >= 0)
        KILN_THROW(DataError) << "[TFRecord] '" << path_ << "' has " << rest(static_cast<uint64_t>(s.member_end))
                              << " bytes after the end of its GZIP stream at byte " << s.member_end
                              << " that are not another GZIP member (zlib: " << (s.z.msg ? s.z.msg : "error")
                              << "); TensorFlow refuses the file too (DataLossError)";
      KILN_THROW(DataError) << "[TFRecord] '" << path_ << "' is not a readable " << kind << " stream (offset "
                            << offset_ << "; zlib: " << (s.z.msg ? s.z.msg : "error") << ")";
    }
    if (s.z.total_out > 0) s.member_end = -1;
  }
  return n - s.z.avail_out;
}

bool RecordReader::next(std::string& out) {
  char head[12];
  const uint64_t at = offset_;
  const size_t got = read(head, sizeof head);
  if (got == 0) return false;
  auto damaged = [&](const std::string& why) {
    KILN_THROW(DataError) << "[TFRecord] '" << path_ << "' is damaged at offset " << at << ": " << why;
  };
  if (got < sizeof head) damaged("the file ends inside a record's header (" + std::to_string(got) + " of 12 bytes)");
  if (unmask_crc(get32(head + 8)) != crc32c(std::string_view(head, 8))) damaged("the length's CRC-32C does not match");
  const uint64_t len = get64(head);
  if (len > kMaxRecordBytes) damaged("a record of " + std::to_string(len) + " bytes, more than 1 GiB");
  out.resize(len);
  if (read(out.data(), len) != len) damaged("the file ends inside a record of " + std::to_string(len) + " bytes");
  char tail[4];
  if (read(tail, 4) != 4) damaged("the file ends before the record's CRC-32C");
  if (unmask_crc(get32(tail)) != crc32c(out)) damaged("the data's CRC-32C does not match");
  offset_ = at + 16 + len;
  return true;
}

// --- writing ----------------------------------------------------------------------------

struct RecordWriter::Sink {
  Compression c;
  int fd = -1;
  gzFile gz = nullptr;
  z_stream z{};
  std::string path;
  void raw(const char* p, size_t n) {
    while (n > 0) {
      const ssize_t w = ::write(fd, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) KILN_THROW(SystemError) << "[TFRecord] cannot write '" << path << "': " << std::strerror(errno);
      p += w;
      n -= static_cast<size_t>(w);
    }
  }
  void deflate_out(int flush) {
    unsigned char buf[1 << 15];
    do {
      z.next_out = buf;
      z.avail_out = sizeof buf;
      const int rc = ::deflate(&z, flush);
      if (rc == Z_STREAM_ERROR) KILN_THROW(SystemError) << "[TFRecord] ZLIB failed writing '" << path << "'";
      raw(reinterpret_cast<char*>(buf), sizeof buf - z.avail_out);
    } while (z.avail_out == 0);
  }
};

RecordWriter::RecordWriter(std::string path, Compression compression, bool append)
    : path_(std::move(path)), sink_(new Sink) {
  Sink& s = *sink_;
  s.c = compression;
  s.path = path_;
  if (append && compression != Compression::none)
    KILN_THROW(ConfigError) << "[TFRecord] '" << path_ << "': only an uncompressed file can be appended to";
  s.fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0644);
  if (s.fd < 0) KILN_THROW(SystemError) << "[TFRecord] cannot create '" << path_ << "': " << std::strerror(errno);
  if (compression == Compression::gzip) {
    s.gz = gzdopen(::dup(s.fd), "wb");
    if (!s.gz) KILN_THROW(SystemError) << "[TFRecord] cannot write GZIP to '" << path_ << "'";
  } else if (compression == Compression::zlib) {
    if (deflateInit(&s.z, Z_DEFAULT_COMPRESSION) != Z_OK)
      KILN_THROW(SystemError) << "[TFRecord] cannot start ZLIB for '" << path_ << "'";
  }
}

RecordWriter::~RecordWriter() {
  try {
    close();
  } catch (...) {
  }
}

void RecordWriter::write(std::string_view record) {
  Sink& s = *sink_;
  if (s.fd < 0) KILN_THROW(SystemError) << "[TFRecord] '" << path_ << "' is closed";
  const std::string framed = frame_record(record);
  if (s.c == Compression::none) {
    s.raw(framed.data(), framed.size());
  } else if (s.c == Compression::gzip) {
    if (gzwrite(s.gz, framed.data(), static_cast<unsigned>(framed.size())) != static_cast<int>(framed.size()))
      KILN_THROW(SystemError) << "[TFRecord] cannot write '" << path_ << "'";
  } else {
    s.z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(framed.data()));
    s.z.avail_in = static_cast<uInt>(framed.size());
    s.deflate_out(Z_NO_FLUSH);
  }
}

void RecordWriter::flush(bool sync) {
  Sink& s = *sink_;
  if (s.fd < 0) return;
  if (s.c == Compression::gzip) gzflush(s.gz, Z_SYNC_FLUSH);
  if (s.c == Compression::zlib) s.deflate_out(Z_SYNC_FLUSH);
  if (sync && ::fsync(s.fd) != 0)
    KILN_THROW(SystemError) << "[TFRecord] cannot sync '" << path_ << "': " << std::strerror(errno);
}

void RecordWriter::close() {
  Sink& s = *sink_;
  if (s.fd < 0) return;
  if (s.c == Compression::gzip) {
    gzclose(s.gz);
    s.gz = nullptr;
  } else if (s.c == Compression::zlib) {
    s.deflate_out(Z_FINISH);
    deflateEnd(&s.z);
  }
  const int fd = s.fd;
  s.fd = -1;
  if (::close(fd) != 0) KILN_THROW(SystemError) << "[TFRecord] cannot close '" << path_ << "': " << std::strerror(errno);
}

}  // namespace kiln::formats
