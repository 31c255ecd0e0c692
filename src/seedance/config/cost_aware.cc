#include "seedance/config/cost_aware.h"

namespace seedance::config {

std::string_view AutoscaleModeName(AutoscaleMode mode) {
  return mode == AutoscaleMode::kReactive ? "reactive" : "predictive";
}

}  // namespace seedance::config
