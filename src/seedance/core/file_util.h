#pragma once

#include <string>
#include <string_view>

#include "seedance/core/status.h"

namespace seedance {

// Writes `content` to `path` atomically: a temporary file in the same directory, fsync'd, then
// renamed over `path`. A reader never sees a partial file. Creates no directories.
Status WriteFileAtomically(const std::string& path, std::string_view content);

// Creates `dir` and its parents if missing.
Status EnsureDirectory(const std::string& dir);

// Returns the directory holding the bundled data: $SEEDANCE_DATA_DIR if set, else the path
// compiled in for the source tree, else "<exe dir>/../share/seedance/data".
std::string DataDir();

}  // namespace seedance
