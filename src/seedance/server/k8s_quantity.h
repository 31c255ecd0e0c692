#pragma once

// Kubernetes resource quantities (k8s.io/apimachinery/pkg/api/resource): "500m", "2", "16Gi",
// "1e3", "1.5", "100M", "+0.5E-2". Parsed exactly: the value is kept as an integer mantissa
// times a power of ten and a power of two, and converted with Kubernetes' rounding (up).

#include <cstdint>
#include <string_view>

#include "seedance/core/status.h"

namespace seedance::server {

struct K8sQuantity {
  std::int64_t mantissa = 0;  // signed
  int exp10 = 0;              // value = mantissa * 10^exp10 * 2^exp2
  int exp2 = 0;

  // ceil(value * 10^scale10), e.g. scale10 = 3 for milli-units (Kubernetes' MilliValue).
  // kOutOfRange when the result does not fit in int64.
  Result<std::int64_t> CeilScaled(int scale10) const;
  // ceil(value / 2^20): bytes to MiB.
  Result<std::int64_t> CeilMebibytes() const;
};

// Errors: kInvalidArgument "quantity '<text>': <reason>" (the grammar of
// resource.ParseQuantity: sign, digits with at most one '.', then a binary suffix Ki..Ei, a
// decimal suffix n u m k M G T P E, or an exponent e/E<int>).
Result<K8sQuantity> ParseK8sQuantity(std::string_view text);

}  // namespace seedance::server
