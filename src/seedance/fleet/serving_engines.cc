// Seedance's batching per serving deployment (issue 39 item 2): on each GPU type a replica runs the
// batching engine that serves more of the deployment's request mix within its SLOs, measured per
// Mélange bucket (ProfileServing's capacity tables), so the layer never needs more replicas than
// vLLM at its tuned knobs.
#include <cstddef>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "seedance/fleet/serving.h"

namespace seedance::fleet {

namespace {

// What one replica of a type serves of the mix: the share of the mix (by bucket_share) it serves
// within SLO at all, then the req/s of that share it sustains (1 / sum share_b / capacity_b).
std::pair<double, double> MixScore(const std::vector<double>& share, const std::vector<double>& rps) {
  double served = 0, inv = 0;
  for (std::size_t b = 0; b < share.size() && b < rps.size(); ++b) {
    if (share[b] <= 0 || rps[b] <= 0) continue;
    served += share[b];
    inv += share[b] / rps[b];
  }
  return {served, inv > 0 ? served / inv : 0.0};
}

}  // namespace

ServingProfile BetterEnginePerType(const ServingProfile& vllm, const ServingProfile& seedance) {
  ServingProfile out = seedance;
  if (vllm.gpus != seedance.gpus || vllm.bucket_share.size() != seedance.bucket_share.size() ||
      vllm.bucket_rps.size() != seedance.bucket_rps.size()) {
    out.notes.push_back("engines not compared: the two profiles hold different types or buckets");
    return out;
  }
  for (std::size_t k = 0; k < out.gpus.size(); ++k) {
    const auto v = MixScore(out.bucket_share, vllm.bucket_rps[k]);
    const auto s = MixScore(out.bucket_share, seedance.bucket_rps[k]);
    const bool keep_seedance = s > v;  // lexicographic: more of the mix served, then faster; ties to vLLM
    if (!keep_seedance) {
      out.bucket_rps[k] = vllm.bucket_rps[k];
      out.replica_rps[k] = vllm.replica_rps[k];
    }
    out.notes.push_back(fmt::format("{}: {} engine per replica (serves {:.1f} % of the mix at {:.2f} req/s; the other "
                                    "{:.1f} % at {:.2f} req/s)",
                                    out.gpus[k], keep_seedance ? "seedance" : "vllm",
                                    100 * (keep_seedance ? s : v).first, (keep_seedance ? s : v).second,
                                    100 * (keep_seedance ? v : s).first, (keep_seedance ? v : s).second));
  }
  return out;
}

Status ProfileBothEngines(const DeploymentSpec& d, const std::string& data_dir, const std::string& cache_dir,
                          std::ostream* progress, ServingProfile* vllm, ServingProfile* seedance) {
  SEEDANCE_ASSIGN_OR_RETURN(*vllm, ProfileServing(d, "vllm", data_dir, cache_dir, progress));
  SEEDANCE_ASSIGN_OR_RETURN(const ServingProfile own, ProfileServing(d, "seedance", data_dir, cache_dir, progress));
  *seedance = BetterEnginePerType(*vllm, own);
  return Status::Ok();
}

}  // namespace seedance::fleet
