// The extender's rules per candidate node: tenant and quota, conditions, audit, breaker, fit.

#include "seedance/server/extender_internal.h"

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "seedance/audit/admission.h"
#include "seedance/cluster/gpu_model.h"

namespace seedance::server {

namespace extender_internal {

cluster::Qos QosOf(Tier t) {
  switch (t) {
    case Tier::kGold: return cluster::Qos::kGuaranteed;
    case Tier::kSilver: return cluster::Qos::kBurstable;
    case Tier::kBronze: return cluster::Qos::kBestEffort;
  }
  return cluster::Qos::kBurstable;
}

GpuAssignment ChooseGpus(const cluster::NodeState& n, const PodSpec& pod) {
  if (!pod.is_gpu()) return {};
  return pod.is_share() ? cluster::BestFitShareGpu(n, pod) : cluster::FirstFitGpus(n, pod);
}

// Why `pod` does not fit the free capacity of `n` (rule kPass when it fits).
NodeCheck FitCheck(const cluster::NodeState& n, const PodSpec& pod) {
  if (pod.cpu.raw() > n.cpu_left) return NodeCheck::Fail(Verdict::kFailed, Rule::kFreeCpu, pod.cpu.raw(), n.cpu_left);
  if (pod.memory.raw() > n.mem_left) {
    return NodeCheck::Fail(Verdict::kFailed, Rule::kFreeMemory, pod.memory.raw(), n.mem_left);
  }
  if (pod.is_gpu()) {
    const int free = cluster::CountGpusWithIdle(n, pod.gpu_milli);
    if (pod.is_share()) {
      if (free == 0) {
        std::int32_t most = 0;
        for (int i = 0; i < n.gpu_count; ++i) most = std::max(most, n.gpu_idle[static_cast<std::size_t>(i)]);
        return NodeCheck::Fail(Verdict::kFailed, Rule::kFreeShare, pod.gpu_milli, most);
      }
    } else if (free < pod.num_gpu) {
      return NodeCheck::Fail(Verdict::kFailed, Rule::kFreeGpus, pod.num_gpu, free);
    }
  }
  // What cluster::Fits checks beyond the above (its second count of idle GPUs was a tenth of a
  // filter's time at 5,000 names): the model.
  if (pod.is_gpu() && !pod.allowed_models.Accepts(n.model)) return NodeCheck::Fail(Verdict::kFailed, Rule::kNoFit);
  return {};
}

// The rule's name, the key of a filter decision's "failed_by_rule" (the reason's prefix).
std::string_view RuleName(const NodeCheck& c) {
  switch (c.rule) {
    case Rule::kPass: return "";
    case Rule::kUnknown: return "unknown node";
    case Rule::kCondition: return c.text.rfind("taint:", 0) == 0 ? "taint" : "node";
    case Rule::kAudit: return "audit";
    case Rule::kTier: return "tier";
    case Rule::kBreaker: return "breaker";
    case Rule::kQuota: return "quota";
    default: return "fit";
  }
}

// A check's reason for the rules that need no lookups (everything but kBreaker and kQuota).
std::string FitText(const NodeCheck& c) {
  switch (c.rule) {
    case Rule::kPass: return "";
    case Rule::kUnknown:
      return "unknown node: not in the node table (POST /v1/nodes or the API-server watch; the Nodes of a filter "
             "request are not stored)";
    case Rule::kNodeCpu: return fmt::format("fit: needs {}m CPU, node has {}m", c.a, c.b);
    case Rule::kNodeMemory: return fmt::format("fit: needs {}Mi memory, node has {}Mi", c.a, c.b);
    case Rule::kNoGpu: return "fit: node has no GPU";
    case Rule::kModel:
      return fmt::format("fit: GPU model {} not accepted by the pod",
                         cluster::GpuModelName(static_cast<cluster::GpuModelIndex>(c.a)));
    case Rule::kNodeGpus: return fmt::format("fit: needs {} GPU, node has {}", c.a, c.b);
    case Rule::kFreeCpu: return fmt::format("fit: needs {}m CPU, {}m free", c.a, c.b);
    case Rule::kFreeMemory: return fmt::format("fit: needs {}Mi memory, {}Mi free", c.a, c.b);
    case Rule::kFreeShare: return fmt::format("fit: needs {} milli-GPU on one GPU, at most {} free", c.a, c.b);
    case Rule::kFreeGpus: return fmt::format("fit: needs {} GPU, {} free", c.a, c.b);
    case Rule::kNoFit: return "fit: does not fit";
    default: return c.text;
  }
}

// Why `pod` does not fit the free capacity of `n` ("" when it fits).
std::string FitReason(const cluster::NodeState& n, const PodSpec& pod) { return FitText(FitCheck(n, pod)); }

// Whether a node's conditions can bar any pod (a cordon, a Ready condition other than True, a
// NoSchedule or NoExecute taint); nodes without are passed without calling ScheduleBlock.
bool MayBlock(const NodeConditions& c) {
  if (c.unschedulable || (!c.ready.empty() && c.ready != "True")) return true;
  return std::any_of(c.taints.begin(), c.taints.end(),
                     [](const K8sTaint& t) { return t.effect == "NoSchedule" || t.effect == "NoExecute"; });
}

}  // namespace extender_internal

Extender::Impl::TenantInfo Extender::Impl::TenantOf(const K8sPod& pod) const {
  TenantInfo info;
  const std::string name = pod.tenant();
  const tenancy::TenantConfig* found = nullptr;
  for (const auto& t : config->tenancy.tenants) {
    if (t.name == name) found = &t;
  }
  if (found == nullptr) {
    for (const auto& t : config->tenancy.tenants) {
      if (t.name == "default") found = &t;
    }
  }
  if (found == nullptr) return info;
  info.name = found->name;
  info.tier = found->tier;
  if (book.has_value()) info.book = book->TenantIndex(found->name);
  return info;
}

std::vector<Quantity> Extender::Impl::RequestOn(const PodSpec& pod, cluster::GpuModelIndex model, int tenant) const {
  std::vector<Quantity> r(static_cast<std::size_t>(book ? book->num_resources() : 0), 0);
  if (!book || tenant < 0) return r;
  const std::vector<bool>& limited = named[static_cast<std::size_t>(tenant)];
  const std::string model_res =
      model == cluster::kNoGpuModel ? std::string() : tenancy::GpuResourceName(cluster::GpuModelName(model));
  for (int i = 0; i < book->num_resources(); ++i) {
    const std::string& name = book->resource_name(i);
    Quantity q = 0;
    if (name == "gpu" || (!model_res.empty() && name == model_res)) {
      q = pod.total_gpu_milli();
    } else if (name == "cpu") {
      q = pod.cpu.raw();
    } else if (name == "memory") {
      q = (pod.memory.raw() * 1000 + 1023) / 1024;
    }
    if (limited[static_cast<std::size_t>(i)]) r[static_cast<std::size_t>(i)] = q;
  }
  return r;
}

std::string Extender::Impl::QuotaReason(const TenantInfo& t, const std::vector<Quantity>& req) const {
  if (t.book < 0 || !book) return "";
  if (book->Check(t.book, req) != tenancy::FitKind::kNoFit) return "";
  for (int r = 0; r < book->num_resources(); ++r) {
    const Quantity want = req[static_cast<std::size_t>(r)];
    if (want == 0) continue;
    const Quantity use = book->usage(t.book, r);
    const Quantity avail = book->Available(t.book, r);
    if (want <= avail) continue;
    const Quantity nominal = book->nominal(t.book, r);
    const Quantity lends = std::max<Quantity>(0, avail - std::max<Quantity>(0, nominal - use));
    return fmt::format("quota: tenant {} would use {}/{} {} (nominal {}, cohort lends {})", t.name,
                       tenancy::FromQuantity(use + want), tenancy::FromQuantity(use + avail),
                       book->resource_name(r), tenancy::FromQuantity(nominal),
                       tenancy::FromQuantity(lends));
  }
  return "quota: no fit";
}

std::string Extender::Impl::Reason(const NodeCheck& c, const Lookups& look) {
  switch (c.rule) {
    case Rule::kBreaker: return look.breaker;
    case Rule::kQuota: return look.quota[static_cast<std::size_t>(c.a)].second;
    default: return FitText(c);
  }
}

NodeCheck Extender::Impl::Check(const std::string& name, const K8sPod& pod, const TenantInfo& tenant,
                                const std::optional<BreakerTrip>& trip, Lookups& look, std::size_t* index_out) const {
  // kube-scheduler lists the nodes in its snapshot's order and the table holds them in the order
  // the watch's list brought them (both the API server's, by name), so a candidate is usually
  // the node after the previous one: one compare of names read in sequence, where a hash probe
  // is a cache miss per name. Anything else is looked up.
  std::size_t index = look.next;
  if (index >= specs.size() || !SameName(specs[index].name, name)) {
    auto it = node_index.find(name);
    if (it == node_index.end()) return NodeCheck::Fail(Verdict::kUnresolvable, Rule::kUnknown);
    index = it->second;
  }
  look.next = index + 1;
  if (index_out != nullptr) *index_out = index;
  return Rules(NodeId(static_cast<std::uint32_t>(index)), name, pod, tenant, trip, look);
}

NodeCheck Extender::Impl::Rules(NodeId n, const std::string& name, const K8sPod& pod, const TenantInfo& tenant,
                                const std::optional<BreakerTrip>& trip, Lookups& look) const {
  if (blocks[n.value()] != 0) {
    if (std::string why = ScheduleBlock(conds[n.value()], pod.tolerations); !why.empty()) {
      return NodeCheck::Text(Verdict::kUnresolvable, Rule::kCondition, std::move(why));
    }
  }
  if (const NodeHealth* h = look.health.Find(name); h != nullptr) {
    switch (audit::EligibilityOf(h->state)) {
      case cluster::NodeEligibility::kNone:
        return NodeCheck::Text(Verdict::kUnresolvable, Rule::kAudit,
                               fmt::format("audit: node {} ({})", audit::AdmissionStateName(h->state), h->reason));
      case cluster::NodeEligibility::kBestEffortOnly:
        if (pod.spec.qos != cluster::Qos::kBestEffort) {
          return NodeCheck::Text(Verdict::kUnresolvable, Rule::kTier,
                                 fmt::format("tier: node in observation admits Bronze only ({})", h->reason));
        }
        break;
      case cluster::NodeEligibility::kAll:
        break;
    }
  }
  if (trip.has_value()) {
    if (look.breaker.empty()) look.breaker = fmt::format("breaker: {}; POST /v1/breaker/reset", trip->reason);
    return NodeCheck::Fail(Verdict::kUnresolvable, Rule::kBreaker);
  }
  const NodeSpec& s = specs[n.value()];
  const PodSpec& p = pod.spec;
  if (p.cpu.raw() > s.cpu.raw()) return NodeCheck::Fail(Verdict::kUnresolvable, Rule::kNodeCpu, p.cpu.raw(), s.cpu.raw());
  if (p.memory.raw() > s.memory.raw()) {
    return NodeCheck::Fail(Verdict::kUnresolvable, Rule::kNodeMemory, p.memory.raw(), s.memory.raw());
  }
  if (p.is_gpu()) {
    if (!p.allowed_models.Accepts(s.model)) {
      return s.model == cluster::kNoGpuModel ? NodeCheck::Fail(Verdict::kUnresolvable, Rule::kNoGpu)
                                             : NodeCheck::Fail(Verdict::kUnresolvable, Rule::kModel, s.model);
    }
    if (p.num_gpu > s.gpu_count) return NodeCheck::Fail(Verdict::kUnresolvable, Rule::kNodeGpus, p.num_gpu, s.gpu_count);
  }
  auto q = std::find_if(look.quota.begin(), look.quota.end(), [&](const auto& m) { return m.first == s.model; });
  if (q == look.quota.end()) {
    look.quota.emplace_back(s.model, QuotaReason(tenant, RequestOn(p, s.model, tenant.book)));
    q = look.quota.end() - 1;
  }
  if (!q->second.empty()) return NodeCheck::Fail(Verdict::kFailed, Rule::kQuota, q - look.quota.begin());
  return FitCheck(cluster->node(n), p);
}

Extender::Impl::Request Extender::Impl::Begin(const ExtenderArgs& args) {
  Request r;
  r.pod = Admit(args.pod, &r.tenant);
  r.trip = app.breaker.Active(r.pod.namespace_name, r.pod.job(), Now());
  return r;
}

Extender::Impl::Screen Extender::Impl::ScreenForPolicy(const std::vector<std::string>& candidates, const Request& r) const {
  Screen out;
  out.generation = generation;
  out.index.reserve(candidates.size());
  out.eligibility.reserve(candidates.size());
  out.weight.reserve(candidates.size());
  out.fits.reserve(candidates.size());
  Lookups look(app.health);
  for (const std::string& name : candidates) {
    std::size_t index = NodeCheck::kUnknown;
    const NodeCheck c = Check(name, r.pod, r.tenant, r.trip, look, &index);
    ScreenNode(out, name, index, c, look);
  }
  return out;
}

void Extender::Impl::ScreenNode(Screen& s, const std::string& name, std::size_t index, const NodeCheck& c,
                                Lookups& look) const {
  s.index.push_back(index);
  s.fits.push_back(c.rule == Rule::kPass ? 1 : 0);
  // A rule other than free capacity fails: the policy may not place there.
  const bool barred = c.verdict == Verdict::kUnresolvable || c.rule == Rule::kQuota;
  const NodeHealth* h = barred ? nullptr : look.health.Find(name);
  s.eligibility.push_back(barred      ? cluster::NodeEligibility::kNone
                          : h != nullptr ? audit::EligibilityOf(h->state)
                                         : cluster::NodeEligibility::kAll);
  s.weight.push_back(h != nullptr ? h->grade_weight : 1.0);
}

}  // namespace seedance::server
