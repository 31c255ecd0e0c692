#include "seedance/audit/enforcement.h"

#include <algorithm>

#include "seedance/audit/gpu_catalog.h"
#include "seedance/gpu/catalog.h"
#include "seedance/sched/frag.h"
#include "seedance/sched/placement_policy.h"

namespace seedance::audit {
namespace {

NodeTelemetry Until(const NodeTelemetry& t, std::int64_t until_s) {
  NodeTelemetry out;
  out.host = t.host;
  out.schedule = t.schedule;
  for (const GpuSeries& g : t.gpus) {
    GpuSeries s;
    s.uuid = g.uuid;
    s.model_name = g.model_name;
    s.driver = g.driver;
    s.memory_reserved_mib = g.memory_reserved_mib;
    const auto n = static_cast<std::size_t>(
        std::upper_bound(g.t_s.begin(), g.t_s.end(), until_s) - g.t_s.begin());
    s.t_s.assign(g.t_s.begin(), g.t_s.begin() + static_cast<std::ptrdiff_t>(n));
    for (std::size_t f = 0; f < kFieldCount; ++f) {
      if (!g.columns[f].empty()) {
        s.columns[f].assign(g.columns[f].begin(),
                            g.columns[f].begin() + static_cast<std::ptrdiff_t>(n));
      }
    }
    out.gpus.push_back(std::move(s));
  }
  return out;
}

std::vector<cluster::PodSpec> EpochPods(int count, int epoch, Rng& rng) {
  std::vector<cluster::PodSpec> pods;
  for (int i = 0; i < count; ++i) {
    cluster::PodSpec p;
    p.name = "e";
    p.name += std::to_string(epoch);
    p.name += "-p";
    p.name += std::to_string(i);
    p.cpu = Millicores(rng.UniformInt(2000, 12000));
    p.memory = MiB(rng.UniformInt(8192, 65536));
    const auto kind = rng.Uniform(4);
    p.num_gpu = kind == 3 ? 2 : 1;
    p.gpu_milli = kind == 0 ? 500 : 1000;
    p.qos = i % 2 == 0 ? cluster::Qos::kBestEffort : cluster::Qos::kGuaranteed;
    pods.push_back(p);
  }
  return pods;
}

}  // namespace

EnforcementSpec DefaultEnforcementSpec() {
  EnforcementSpec s;
  for (int i = 0; i < 8; ++i) {
    SyntheticNode n;
    n.host = "node-" + std::to_string(i);
    n.gpus = 8;
    n.activity = 0.45 + 0.04 * i;
    s.nodes.push_back(n);
  }
  const std::int64_t fault_at = s.start_s + 80 * 3600;
  s.nodes[2].fault = SyntheticFault::kPowerDrift;
  s.nodes[2].fault_magnitude = 0.6;
  s.nodes[2].fault_start_s = fault_at;
  s.nodes[5].fault = SyntheticFault::kXid;
  s.nodes[5].xid_code = 79;
  s.nodes[5].fault_start_s = fault_at;
  return s;
}

Result<EnforcementResult> RunEnforcementScenario(const EnforcementSpec& spec) {
  SEEDANCE_RETURN_IF_ERROR(spec.config.Validate());
  const auto period_s = static_cast<std::int64_t>(spec.audit_period_h * 3600);
  const std::int64_t end_s = spec.start_s + spec.epochs * period_s;
  Rng rng(spec.seed);
  Rng telemetry_rng = rng.Fork(1);
  Rng pod_rng = rng.Fork(2);
  Rng policy_rng = rng.Fork(3);
  EnforcementResult r;
  std::vector<NodeTelemetry> full;
  std::vector<cluster::NodeSpec> node_specs;
  for (const SyntheticNode& n : spec.nodes) {
    r.hosts.push_back(n.host);
    full.push_back(GenerateNodeTelemetry(n, spec.start_s, end_s, spec.step_s, telemetry_rng));
    SEEDANCE_ASSIGN_OR_RETURN(cluster::GpuModelIndex model,
                              gpu::ParseGpuName(n.model_name, gpu::NameMatch::kProduct));
    node_specs.push_back(
        cluster::NodeSpec{n.host, Millicores(96000), MiB(1 << 20), n.gpus, model});
    r.ledger.nodes[n.host] = NodeAdmission{};
  }
  cluster::ClusterState cluster(node_specs);
  for (int e = 0; e < spec.epochs; ++e) {
    EnforcementEpoch epoch;
    epoch.start_s = spec.start_s + e * period_s;
    epoch.placed_guaranteed.assign(spec.nodes.size(), 0);
    epoch.placed_best_effort.assign(spec.nodes.size(), 0);
    for (std::size_t i = 0; i < spec.nodes.size(); ++i) {
      const AdmissionState s = r.ledger.nodes.at(r.hosts[i]).state;
      epoch.state.push_back(s);
      cluster.SetEligibility(cluster::NodeId(static_cast<std::uint32_t>(i)), EligibilityOf(s));
      // The grade's scheduling weight (S7.2) steers placement among admitted nodes: the last
      // complete audit's grade, already capped when a criterion was missing.
      double weight = 1.0;
      for (const auto& row : spec.config.grades.rows) {
        if (row.name == r.ledger.nodes.at(r.hosts[i]).grade) weight = row.weight;
      }
      cluster.SetWeight(cluster::NodeId(static_cast<std::uint32_t>(i)), weight);
      epoch.weight.push_back(weight);
    }
    // Place this epoch's pods; they all finish at the epoch's end.
    const std::vector<cluster::PodSpec> pods = EpochPods(spec.pods_per_epoch, e, pod_rng);
    sched::PolicyContext ctx;
    ctx.tie_rank.resize(spec.nodes.size());
    for (std::uint32_t i = 0; i < ctx.tie_rank.size(); ++i) ctx.tie_rank[i] = i;
    ctx.typical = sched::ComputeTypicalPods(pods);
    SEEDANCE_ASSIGN_OR_RETURN(auto policy, sched::MakePlacementPolicy(spec.policy, ctx));
    std::vector<std::pair<const cluster::PodSpec*, sched::PlacementDecision>> bound;
    for (const cluster::PodSpec& p : pods) {
      const sched::PlacementDecision d = policy->Decide(cluster, p, policy_rng);
      if (!d.placed()) {
        ++epoch.unschedulable;
        continue;
      }
      cluster.Bind(p, d.node, d.gpus);  // checks the admission mask again
      auto& counter = p.qos == cluster::Qos::kBestEffort ? epoch.placed_best_effort
                                                          : epoch.placed_guaranteed;
      ++counter[d.node.value()];
      bound.emplace_back(&p, d);
    }
    for (const auto& [p, d] : bound) cluster.Unbind(*p, d.node, d.gpus);
    r.epochs.push_back(std::move(epoch));
    // The audit at the epoch's end decides the next epoch's mask.
    const std::int64_t now = spec.start_s + (e + 1) * period_s;
    std::vector<NodeTelemetry> seen;
    for (const NodeTelemetry& t : full) seen.push_back(Until(t, now));
    SEEDANCE_ASSIGN_OR_RETURN(FleetAudit audit, AuditFleet(seen, spec.config, now));
    for (const NodeAudit& n : audit.nodes) {
      NodeAdmission& rec = r.ledger.nodes.at(n.host);
      if (n.outcome != AuditOutcome::kIncomplete) rec.grade = n.grade;
      if (auto t = ApplyAudit(spec.config.admission, n.host, n.Verdict(), now, rec)) {
        r.ledger.log.push_back(std::move(*t));
      }
    }
    r.last_audit = std::move(audit);
  }
  return r;
}

}  // namespace seedance::audit
