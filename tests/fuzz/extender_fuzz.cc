// libFuzzer harness for the kube-scheduler extender codec (src/seedance/server/extender_codec.h)
// and the Kubernetes quantity parser: every request decoder must return a value or a
// kInvalidArgument naming a field, never crash, throw or hang. Seed corpus:
// tests/fuzz/corpus/extender_fuzz/. Built by the fuzz preset; run with `scripts/fuzz.sh 600 extender_fuzz`.
#include <cstddef>
#include <cstdint>
#include <string_view>

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
        if (a.has_value()) { std::vector<std::string> scratch; (void)a->Candidates(&scratch); }
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
