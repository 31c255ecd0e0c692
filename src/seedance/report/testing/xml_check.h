#pragma once

// A small well-formedness check for the SVG and HTML the report module writes. Test-only.

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

namespace seedance::report::testing {

// Returns "" when `doc` is well-formed: tags nest and close in order, attribute values are
// quoted, and every '&' starts a character reference (&amp; &lt; &gt; &quot; &#NN;), so no text
// can have leaked unescaped. Otherwise returns what is wrong and the byte offset. With `html`,
// also accepts <!DOCTYPE>, HTML void elements written without "/>" and raw <style> text.
inline std::string CheckXml(std::string_view doc, bool html = false) {
  std::vector<std::string> open;
  std::size_t i = 0;
  auto err = [&](const std::string& what) { return what + " at offset " + std::to_string(i); };
  auto is_name = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == ':';
  };
  auto check_entity = [&](std::size_t at) {
    const std::size_t semi = doc.find(';', at);
    if (semi == std::string_view::npos || semi - at > 8) return false;
    const std::string_view e = doc.substr(at + 1, semi - at - 1);
    if (e == "amp" || e == "lt" || e == "gt" || e == "quot") return true;
    if (e.size() < 2 || e[0] != '#') return false;
    for (std::size_t k = 1; k < e.size(); ++k) {
      if (std::isdigit(static_cast<unsigned char>(e[k])) == 0) return false;
    }
    return true;
  };
  const std::vector<std::string> kVoid = {"meta", "link", "br", "hr", "img", "input"};
  while (i < doc.size()) {
    const char c = doc[i];
    if (c == '&') {
      if (!check_entity(i)) return err("bare '&'");
      ++i;
      continue;
    }
    if (c == '>') return err("stray '>'");
    if (c != '<') {
      ++i;
      continue;
    }
    if (html && doc.substr(i, 9) == "<!DOCTYPE") {
      i = doc.find('>', i);
      if (i == std::string_view::npos) return "unterminated <!DOCTYPE";
      ++i;
      continue;
    }
    if (doc.substr(i, 4) == "<!--") {
      i = doc.find("-->", i);
      if (i == std::string_view::npos) return "unterminated comment";
      i += 3;
      continue;
    }
    const bool closing = i + 1 < doc.size() && doc[i + 1] == '/';
    i += closing ? 2 : 1;
    const std::size_t name_start = i;
    while (i < doc.size() && is_name(doc[i])) ++i;
    const std::string name(doc.substr(name_start, i - name_start));
    if (name.empty()) return err("'<' without a tag name");
    if (closing) {
      if (i >= doc.size() || doc[i] != '>') return err("bad closing tag </" + name);
      ++i;
      if (open.empty() || open.back() != name) {
        return err("</" + name + "> closes <" + (open.empty() ? "" : open.back()) + ">");
      }
      open.pop_back();
      continue;
    }
    bool self_closing = false;
    while (true) {  // attributes
      while (i < doc.size() && std::isspace(static_cast<unsigned char>(doc[i])) != 0) ++i;
      if (i >= doc.size()) return err("unterminated <" + name);
      if (doc[i] == '>') {
        ++i;
        break;
      }
      if (doc.substr(i, 2) == "/>") {
        i += 2;
        self_closing = true;
        break;
      }
      const std::size_t attr_start = i;
      while (i < doc.size() && is_name(doc[i])) ++i;
      if (i == attr_start) return err("bad attribute in <" + name);
      if (i + 1 >= doc.size() || doc[i] != '=' || (doc[i + 1] != '"' && doc[i + 1] != '\'')) {
        return err("unquoted attribute in <" + name);
      }
      const char quote = doc[i + 1];
      i += 2;
      while (i < doc.size() && doc[i] != quote) {
        if (doc[i] == '<') return err("'<' in an attribute of <" + name);
        if (doc[i] == '&' && !check_entity(i)) return err("bare '&' in an attribute");
        ++i;
      }
      if (i >= doc.size()) return err("unterminated attribute in <" + name);
      ++i;
    }
    if (self_closing) continue;
    if (html && std::find(kVoid.begin(), kVoid.end(), name) != kVoid.end()) continue;
    if (html && name == "style") {
      const std::size_t end = doc.find("</style>", i);
      if (end == std::string_view::npos) return err("unterminated <style>");
      i = end + 8;
      continue;
    }
    open.push_back(name);
  }
  if (!open.empty()) return "unclosed <" + open.back() + ">";
  return "";
}

}  // namespace seedance::report::testing
