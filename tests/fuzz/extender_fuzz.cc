// libFuzzer harness for the kube-scheduler extender codec (src/seedance/server/extender_codec.h)
// and the Kubernetes quantity parser: every request decoder must return a value or a
// kInvalidArgument naming a field, never crash, throw or hang. An ExtenderArgs body that decodes is
// decoded again on nlohmann's DOM path (an escaped key sends it there) and must give the same
// names (the NodeNames scanner reads eight bytes at a time); its names are written as a filter and
// a prioritize answer, which must be byte for byte what nlohmann writes. Seed corpus:
// tests/fuzz/corpus/extender_fuzz/. Built by the fuzz preset; run with `scripts/fuzz.sh 600 extender_fuzz`.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "seedance/server/extender_codec.h"
#include "seedance/server/k8s_quantity.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace seedance::server;
  if (size == 0) return 0;
  // The first byte picks the decoder ('0'..'5' in the corpus), the rest is the body.
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto check = [](const auto& r) {
    if (!r.has_value()) {
      if (r.error().code() != seedance::StatusCode::kInvalidArgument) __builtin_trap();
      (void)FieldOf(r.error());
    }
  };
  {
    switch (data[0] % 6) {
      case 0: {
        auto a = ParseExtenderArgs(body);
        check(a);
        if (a.has_value()) {
          std::vector<std::string> scratch;
          (void)a->Candidates(&scratch);
          const std::size_t close = body.rfind('}');
          if (close != std::string_view::npos) {
            std::string dom(body.substr(0, close));
            dom += ",\"\\u0078\":0";
            dom += body.substr(close);
            const auto b = ParseExtenderArgs(dom);
            if (!b.has_value() || b->node_names != a->node_names) __builtin_trap();
          }
          if (a->node_names.has_value()) {
            using nlohmann::json;
            FilterResult fr;
            fr.node_names = *a->node_names;
            std::vector<HostPriority> scores;
            for (const auto& n : fr.node_names) scores.push_back(HostPriority{n, static_cast<std::int64_t>(n.size())});
            if (!fr.node_names.empty()) fr.failed[fr.node_names.back()] = fr.node_names.front();
            json j{{"Error", ""}, {"FailedAndUnresolvableNodes", json::object()}, {"FailedNodes", fr.failed},
                   {"NodeNames", fr.node_names}, {"Nodes", nullptr}};
            json s = json::array();
            for (const auto& h : scores) s.push_back(json{{"Host", h.host}, {"Score", h.score}});
            if (DumpFilterResult(fr) != j.dump(-1, ' ', false, json::error_handler_t::replace)) __builtin_trap();
            if (DumpHostPriorityList(scores) != s.dump(-1, ' ', false, json::error_handler_t::replace)) __builtin_trap();
          }
        }
        break;
      }
      case 1: check(ParseExtenderPreemptionArgs(body)); break;
      case 2: check(ParseExtenderBindingArgs(body)); break;
      case 3: check(ParsePodOrList(body)); break;
      case 4: check(ParseNodeOrList(body)); break;
      default: {
        auto q = ParseK8sQuantity(body.substr(0, 80));
        if (q.has_value()) {
          (void)q->CeilScaled(3);
          (void)q->CeilMebibytes();
        }
      }
    }
  }
  return 0;
}
