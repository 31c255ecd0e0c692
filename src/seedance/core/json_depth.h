#pragma once

#include <cstddef>
#include <string_view>

#include "seedance/core/status.h"

namespace seedance {

// The deepest nesting of arrays and objects any JSON we read from a client or a peer may have
// (issue 40). nlohmann-json parses and destroys iteratively, but its copy, dump and comparison
// recurse once per level: a 400 KB request nesting 200,000 levels overflowed the stack. Kubernetes
// objects nest about 10 levels, OTLP about 8.
inline constexpr int kMaxJsonDepth = 64;

// Counts the nesting of the JSON text `text` without recursion (brackets inside strings, escapes
// included, do not count) and refuses it past `max_depth` levels with kInvalidArgument
// "<path>: JSON nests deeper than <max_depth> levels", where <path> names the value that opens
// the level too many ("Nodes.items[0].metadata.labels", "[3][0]"; "body" for the top level) in
// the form the codecs' "<path>: <reason>" errors use. Object keys are shown as written, at most
// 64 bytes. Says nothing else about the text: malformed JSON is the parser's to refuse, and
// several documents in a row (JSON lines) are scanned as one. One pass, no allocation past
// max_depth small frames.
// `max_values` bounds the DOM a parser would build (about 64-100 bytes per value whatever its text,
// so "[{},{},...]" costs 20-30x its size): arrays and objects plus separators are counted, and
// past it the answer is "body: JSON has more than <max_values> values".
Status CheckJsonDepth(std::string_view text, int max_depth = kMaxJsonDepth,
                      std::size_t max_values = static_cast<std::size_t>(-1));

}  // namespace seedance
