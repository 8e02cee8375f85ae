#include "formats/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "kiln/base/error.h"
#include "process/failpoint.h"

namespace kiln {

void write_file_atomically(const std::string& path, std::string_view bytes, const std::string& tag,
                           const WriteFailpoints& fp) {
  auto stage = [&fp](const char* point) {
    if (fp.env) failpoint(fp.env, point, fp.step);
  };
  namespace fs = std::filesystem;
  const fs::path p(path);
  const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  const std::string tmp = (dir / (".tmp-" + std::to_string(::getpid()) + "-" + p.filename().string())).string();
  auto fail = [&](const char* step) {
    const int err = errno;
    ::unlink(tmp.c_str());
    KILN_THROW(SystemError) << tag << " cannot write '" << path << "': " << step << ": " << std::strerror(err);
  };
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("create");
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      ::close(fd);
      fail("write");
    }
    done += static_cast<size_t>(n);
  }
  stage("written");
  if (::fsync(fd) != 0) {
    ::close(fd);
    fail("sync");
  }
  if (::close(fd) != 0) fail("close");
  stage("fsynced");
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail("rename into");
  stage("renamed");
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  stage("saved");
}

}  // namespace kiln
