#include "seedance/core/json_depth.h"

#include <cstring>
#include <string>
#include <vector>

namespace seedance {
namespace {

struct Frame {
  bool object = false;
  bool want_key = false;   // object: the next string is a key
  std::size_t index = 0;   // array: elements before the current one
  std::string_view key;    // object: the current member's key as written
};

// The path of the value the innermost frame is reading.
std::string PathOf(const std::vector<Frame>& frames) {
  std::string out;
  for (const Frame& f : frames) {
    if (f.object) {
      if (!out.empty()) out += '.';
      out += f.key.substr(0, 64);
    } else {
      out += '[';
      out += std::to_string(f.index);
      out += ']';
    }
  }
  return out.empty() ? std::string("body") : out;
}

}  // namespace

Status CheckJsonDepth(std::string_view text, int max_depth, std::size_t max_values) {
  std::size_t values = 0;
  auto too_many = [&] {
    return InvalidArgumentError("body: JSON has more than " + std::to_string(max_values) + " values");
  };
  std::vector<Frame> frames;
  frames.reserve(static_cast<std::size_t>(max_depth > 0 ? max_depth : 0) + 1);
  const char* p = text.data();
  const char* const end = p + text.size();
  while (p < end) {
    const char c = *p;
    switch (c) {
      case '"': {
        const char* start = ++p;
        const char* close = end;  // the closing quote (end: unterminated)
        while (p < end) {
          const void* hit = std::memchr(p, '"', static_cast<std::size_t>(end - p));
          if (hit == nullptr) {
            p = end;
            break;
          }
          const char* q = static_cast<const char*>(hit);
          // Escaped when an odd number of backslashes precede it.
          std::size_t slashes = 0;
          for (const char* b = q; b > start && b[-1] == '\\'; --b) ++slashes;
          p = q + 1;
          if (slashes % 2 == 0) {
            close = q;
            break;
          }
        }
        if (!frames.empty() && frames.back().object && frames.back().want_key) {
          frames.back().key = std::string_view(start, static_cast<std::size_t>(close - start));
          frames.back().want_key = false;
        }
        continue;
      }
      case '{':
      case '[':
        if (static_cast<int>(frames.size()) >= max_depth) {
          return InvalidArgumentError(PathOf(frames) + ": JSON nests deeper than " + std::to_string(max_depth) +
                                      " levels");
        }
        if (++values > max_values) return too_many();
        frames.push_back(Frame{c == '{', c == '{', 0, {}});
        break;
      case '}':
      case ']':
        if (!frames.empty()) frames.pop_back();
        break;
      case ',':
        if (++values > max_values) return too_many();
        if (!frames.empty()) {
          Frame& f = frames.back();
          if (f.object) {
            f.want_key = true;
          } else {
            ++f.index;
          }
        }
        break;
      default:
        break;
    }
    ++p;
  }
  return Status::Ok();
}

}  // namespace seedance
