#include "seedance/core/file_util.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace seedance {

Status WriteFileAtomically(const std::string& path, std::string_view content) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return UnavailableError(path + ": cannot create: " + std::strerror(errno));
  std::size_t off = 0;
  while (off < content.size()) {
    ssize_t w = ::write(fd, content.data() + off, content.size() - off);
    if (w < 0) {
      if (errno == EINTR) continue;
      std::string err = std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      return UnavailableError(path + ": write failed: " + err);
    }
    off += static_cast<std::size_t>(w);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    return UnavailableError(path + ": sync failed");
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string err = std::strerror(errno);
    ::unlink(tmp.c_str());
    return UnavailableError(path + ": rename failed: " + err);
  }
  return Status::Ok();
}

Status EnsureDirectory(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return UnavailableError(dir + ": cannot create directory: " + ec.message());
  return Status::Ok();
}

std::string DataDir() {
  if (const char* env = std::getenv("SEEDANCE_DATA_DIR"); env != nullptr && *env != '\0') {
    return env;
  }
#ifdef SEEDANCE_SOURCE_DATA_DIR
  if (std::filesystem::exists(SEEDANCE_SOURCE_DATA_DIR)) return SEEDANCE_SOURCE_DATA_DIR;
#endif
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) return (exe.parent_path() / ".." / "share" / "seedance" / "data").string();
  return "data";
}

}  // namespace seedance
