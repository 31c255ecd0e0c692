#include "seedance/slurm/standby.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace seedance::slurm {

LeaderLock::~LeaderLock() {
  if (fd_ >= 0) ::close(fd_);  // drops the flock
}

Result<std::unique_ptr<LeaderLock>> LeaderLock::TryAcquire(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return UnavailableError("slurm.lock: cannot open " + path + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) return std::unique_ptr<LeaderLock>();
    return UnavailableError("slurm.lock: flock " + path + ": " + std::strerror(err));
  }
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const std::string who = std::to_string(::getpid()) + "@" + host + "\n";
  if (::ftruncate(fd, 0) == 0) {
    [[maybe_unused]] const ssize_t n = ::pwrite(fd, who.data(), who.size(), 0);
  }
  return std::unique_ptr<LeaderLock>(new LeaderLock(fd));
}

std::string LeaderLock::Holder(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

Status WriteHeartbeat(const std::string& path, double unix_s) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << static_cast<long long>(std::floor(unix_s)) << "\n";
    out.flush();
    if (!out) return UnavailableError("slurm.heartbeat: cannot write " + tmp + ": " + std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return UnavailableError("slurm.heartbeat: cannot rename " + tmp + " to " + path + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace seedance::slurm
