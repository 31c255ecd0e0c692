#pragma once

#include <string>
#include <string_view>

namespace seedance::report {

// Returns `text` safe to place in HTML or XML (SVG) text and in double- or single-quoted
// attribute values: & < > " ' become character references; everything else is unchanged.
std::string HtmlEscape(std::string_view text);

}  // namespace seedance::report
