// libFuzzer harness for the kube-scheduler extender codec (src/seedance/server/extender_codec.h)
// and the Kubernetes quantity parser: every request decoder must return a value or a
// kInvalidArgument naming a field, never crash, throw or hang. Seed corpus: corpus/extender/.
// Build (clang from Debian; the codec compiled with coverage, its dependencies from build/ci):
//   clang++-14 -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -Isrc \
//     tests/fuzz/extender_fuzz.cc src/seedance/server/extender_codec.cc \
//     src/seedance/server/k8s_quantity.cc build/ci/src/seedance/cluster/libseedance_cluster.a \
//     build/ci/src/seedance/gpu/libseedance_gpu.a build/ci/src/seedance/core/libseedance_core.a \
//     -lfmt -o build/extender_fuzz
//   build/extender_fuzz -max_total_time=600 -max_len=65536 tests/fuzz/corpus/extender
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
        if (a.has_value()) (void)a->Candidates();
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
