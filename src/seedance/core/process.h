#pragma once

#include <string>
#include <vector>

#include "seedance/core/status.h"

namespace seedance {

// What one command printed and how it exited.
struct CommandResult {
  int exit_code = 0;
  std::string out;
  std::string err;
};

// Runs external commands (Slurm's squeue, sinfo, scontrol, sacct, sbatch). Drivers talk to such
// peers only through this interface, so tests answer with canned output (slurm's FakeSlurm, the
// sweep's fake Slurm) and the CLI with the real binaries.
class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  // Runs argv[0] (looked up in PATH) with argv[1..]. A command that ran and exited non-zero is
  // a CommandResult, not an error; errors are for commands that could not be run at all
  // (kUnavailable: not found, could not fork, timed out).
  virtual Result<CommandResult> Run(const std::vector<std::string>& argv) = 0;
};

// Runs real processes (fork + execvp), reading stdout and stderr; the environment is inherited,
// so e.g. SLURM_CONF selects a Slurm cluster. A command running past `timeout_s` is killed (SIGKILL) and
// reported as kUnavailable.
class ProcessRunner final : public CommandRunner {
 public:
  explicit ProcessRunner(double timeout_s = 30) : timeout_s_(timeout_s) {}
  Result<CommandResult> Run(const std::vector<std::string>& argv) override;

 private:
  double timeout_s_;
};

// "scontrol update jobid=4 'comment=a b'": argv joined for logs, words with spaces or quotes quoted.
std::string JoinArgv(const std::vector<std::string>& argv);

}  // namespace seedance
