// libFuzzer harness for deep and wide JSON (issue 40): the input is not the document but a
// recipe for one. Its first bytes choose a decoder, a hole in a valid request for it, a nesting
// style, a depth (up to ~260,000 levels) and a width (siblings per level); the rest is placed at
// the innermost level. Every decoder that reads a client's or a peer's JSON must refuse nesting
// past core's kMaxJsonDepth (64) with an error, never crash, recurse off the stack or hang, and
// CheckJsonDepth must agree with nlohmann's own (iterative) SAX depth on every valid document.
// Seed corpus: tests/fuzz/corpus/json_shape_fuzz/; run with `scripts/fuzz.sh 600 json_shape_fuzz`.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz_sink.h"
#include "seedance/core/json_depth.h"
#include "seedance/prometheus/source.h"
#include "seedance/server/extender_codec.h"
#include "seedance/telemetry/parse.h"

namespace {

using nlohmann::json;

// The deepest nesting of a document by nlohmann's SAX parser (no DOM); -1 when not valid JSON.
class DepthSax final : public json::json_sax_t {
 public:
  int max_depth = 0;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(json::number_integer_t) override { return true; }
  bool number_unsigned(json::number_unsigned_t) override { return true; }
  bool number_float(json::number_float_t, const json::string_t&) override { return true; }
  bool string(json::string_t&) override { return true; }
  bool binary(json::binary_t&) override { return true; }
  bool start_object(std::size_t) override { return Open(); }
  bool key(json::string_t&) override { return true; }
  bool end_object() override { return Close(); }
  bool start_array(std::size_t) override { return Open(); }
  bool end_array() override { return Close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  bool Open() {
    if (++depth_ > max_depth) max_depth = depth_;
    return true;
  }
  bool Close() {
    --depth_;
    return true;
  }
  int depth_ = 0;
};

int SaxDepth(std::string_view text) {
  DepthSax sax;
  if (!json::sax_parse(text.begin(), text.end(), &sax, json::input_format_t::json, /*strict=*/true)) return -1;
  return sax.max_depth;
}

// Holes in valid requests ("@" is where the generated value goes) and the levels above it.
struct Template {
  const char* text;
  int depth;  // nesting around the hole
};
constexpr Template kTemplates[] = {
    {"@", 0},
    {R"({"Pod":{"metadata":{"name":"p","labels":@}},"NodeNames":["a"]})", 3},
    {R"({"Pod":{"metadata":{"name":"p"}},"Nodes":{"items":[{"metadata":{"name":"n"},"x":@}]}})", 4},
    {R"({"NodeNames":["a","b"],"Pod":{"metadata":{"name":"p"},"spec":{"containers":[@]}}})", 4},
    {R"({"Pod":{"metadata":{"name":"p"}},"NodeNameToMetaVictims":{"n":{"Pods":[@]}}})", 4},
    {R"({"PodName":"p","Node":"n","PodUID":@})", 1},
    {R"({"resourceMetrics":[{"resource":{"attributes":[{"key":"k","value":@}]},"scopeMetrics":[]}]})", 5},
    {R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":@,"values":[[1,"1"]]}]}})", 4},
};

// Builds `levels` levels of nesting in `style`, with `width` scalar siblings beside each, and
// `core` innermost.
std::string Nest(std::size_t levels, std::uint8_t style, std::size_t width, std::string_view core) {
  std::string out;
  out.reserve(levels * (4 + width * 4) * 2 + core.size());
  std::string closes;
  closes.reserve(levels);
  for (std::size_t i = 0; i < levels; ++i) {
    const bool object = style == 1 || (style == 2 && i % 2 == 1) || (style == 3 && i % 3 == 0);
    if (object) {
      out += '{';
      for (std::size_t w = 0; w < width; ++w) out += "\"w" + std::to_string(w) + "\":\"]}\\\"[{\",";
      out += style == 3 ? "\"k\\\"{[\":" : "\"k\":";
      closes += '}';
    } else {
      out += '[';
      for (std::size_t w = 0; w < width; ++w) out += w % 2 == 0 ? "1," : "\"[\\\\\",";
      closes += ']';
    }
  }
  out += core;
  out.append(closes.rbegin(), closes.rend());
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace seedance;
  if (size < 5) return 0;
  const Template& t = kTemplates[data[0] % (sizeof kTemplates / sizeof kTemplates[0])];
  const std::uint8_t style = data[1] % 4;
  // Depth: mostly around the limit, sometimes far past it (a 200,000-level attack).
  const std::size_t raw = static_cast<std::size_t>(data[2]) | (static_cast<std::size_t>(data[3]) << 8);
  const std::size_t levels = data[2] % 2 == 0 ? raw % 96 : raw * 4;
  // Wide at shallow depths only: an input stays under a few MB.
  const std::size_t width = levels > 2048 ? 0 : data[4] % 16;
  const std::string_view core(reinterpret_cast<const char*>(data) + 5, size - 5);
  const std::string value = Nest(levels, style, width, core.empty() ? std::string_view("0") : core);
  std::string doc(t.text);
  doc.replace(doc.find('@'), 1, value);

  const Status depth = CheckJsonDepth(doc);
  const int sax = SaxDepth(doc);
  if (sax >= 0 && depth.ok() != (sax <= kMaxJsonDepth)) __builtin_trap();  // the scan and the parser disagree
  const bool too_deep = static_cast<int>(levels) + t.depth > kMaxJsonDepth;
  if (too_deep && depth.ok()) __builtin_trap();

  auto refused_if_deep = [&](const auto& r) {
    if (r.has_value() && too_deep) __builtin_trap();
    if (!r.has_value() && r.error().code() != StatusCode::kInvalidArgument) __builtin_trap();
  };
  switch (data[0] / 8 % 6) {
    case 0: {
      auto a = server::ParseExtenderArgs(doc);
      refused_if_deep(a);
      if (a.has_value()) {
        server::FilterResult r;
        if (a->nodes.has_value()) r.nodes = a->raw_nodes;  // the echo that overflowed the stack
        (void)server::DumpFilterResult(r);
      }
      break;
    }
    case 1: refused_if_deep(server::ParseExtenderPreemptionArgs(doc)); break;
    case 2: refused_if_deep(server::ParseExtenderBindingArgs(doc)); break;
    case 3: refused_if_deep(server::ParseNodeOrList(doc)); break;
    case 4: {
      fuzz::TouchingSink sink;
      telemetry::ParseStats stats;
      telemetry::ParseOptions options;
      options.source = "fuzz";
      telemetry::ParseOtlpJson(doc, options, sink, stats);
      if (stats.samples != sink.count) __builtin_trap();
      if (too_deep && sink.count != 0) __builtin_trap();
      break;
    }
    default: {
      fuzz::TouchingSink sink;
      prometheus::MatrixStats stats;
      const Status s = prometheus::ParseMatrix(doc, "fuzz", sink, stats);
      if (too_deep && s.ok()) __builtin_trap();
      break;
    }
  }
  return 0;
}
