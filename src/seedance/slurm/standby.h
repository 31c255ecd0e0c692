#pragma once

#include <memory>
#include <string>

#include "seedance/core/status.h"

namespace seedance::slurm {

// The hot standby's lock (issue 27): an exclusive flock(2) on a file every controller of a
// cluster names (slurm.lock, on a path they share: local disk for two controllers on one host,
// NFS with working flock for two hosts). The holder is the active controller; a second one waits
// on the lock and takes over when the holder's process ends (the kernel drops the lock with it,
// kill -9 included). The holder writes "pid@host" into the file for operators and --check-config.
class LeaderLock {
 public:
  ~LeaderLock();
  LeaderLock(const LeaderLock&) = delete;
  LeaderLock& operator=(const LeaderLock&) = delete;

  // One attempt: the lock, or nullptr when another process holds it. Errors: the file cannot be
  // opened or created (kUnavailable naming the path).
  static Result<std::unique_ptr<LeaderLock>> TryAcquire(const std::string& path);
  // What the holder wrote ("pid@host"), "" when unreadable or empty.
  static std::string Holder(const std::string& path);

 private:
  explicit LeaderLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// Writes `unix_s` (whole seconds) to `path` atomically (a temporary file renamed over it): the
// heartbeat the job_submit plugin reads (deploy/slurm/job_submit.lua).
Status WriteHeartbeat(const std::string& path, double unix_s);

}  // namespace seedance::slurm
