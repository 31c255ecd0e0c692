#pragma once

#include <cstdlib>
#include <iostream>
#include <sstream>

namespace seedance::internal {

// Streams a message and aborts in its destructor. Used only by SEEDANCE_CHECK.
class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* cond) {
    stream_ << file << ":" << line << ": check failed: " << cond << " ";
  }
  [[noreturn]] ~CheckFailure() {
    std::cerr << stream_.str() << std::endl;
    std::abort();
  }
  std::ostream& stream() { return stream_; }

 private:
  std::ostringstream stream_;
};

struct Voidify {
  void operator&(std::ostream&) {}
};

}  // namespace seedance::internal

// Always-on invariant check: SEEDANCE_CHECK(cond) << "context"; aborts when cond is false.
#define SEEDANCE_CHECK(cond)                  \
  (cond) ? static_cast<void>(0)               \
         : ::seedance::internal::Voidify() &  \
               ::seedance::internal::CheckFailure(__FILE__, __LINE__, #cond).stream()

#ifdef NDEBUG
#define SEEDANCE_DCHECK(cond) \
  true ? static_cast<void>(0) : ::seedance::internal::Voidify() & std::cerr
#else
#define SEEDANCE_DCHECK(cond) SEEDANCE_CHECK(cond)
#endif
