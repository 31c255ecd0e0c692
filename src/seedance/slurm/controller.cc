#include "seedance/slurm/controller.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <tuple>

#include "seedance/audit/admission.h"
#include "seedance/core/duration.h"
#include "seedance/cost/money.h"
#include "seedance/gpu/catalog.h"
#include "seedance/ledger/allocation.h"
#include "seedance/ledger/job_telemetry.h"
#include "seedance/sched/gang.h"
#include "seedance/sched/victims.h"
#include "seedance/slurm/standby.h"
#include "seedance/tenancy/quota.h"
#include "seedance/tenancy/tiers.h"

namespace seedance::slurm {

std::string_view ActionKindName(ActionKind k) {
  switch (k) {
    case ActionKind::kRelease: return "release";
    case ActionKind::kRequeue: return "requeue";
    case ActionKind::kSignal: return "signal";
    case ActionKind::kHold: return "hold";
    case ActionKind::kComment: return "comment";
    case ActionKind::kDrain: return "drain";
    case ActionKind::kResume: return "resume";
  }
  return "?";
}

std::string FormatAction(const Action& a, bool with_commands) {
  std::string s(ActionKindName(a.kind));
  if (a.job > 0) s += " job " + std::to_string(a.job);
  if (!a.node.empty()) s += (a.job > 0 ? " -> " : " node ") + a.node;
  if (!a.gpu_type.empty()) s += " (" + a.gpu_type + ")";
  s += ": " + a.reason;
  if (!a.ok) s += " [FAILED: " + a.error + "; retried next cycle]";
  if (with_commands) {
    for (const auto& c : a.commands) s += "\n    $ " + JoinArgv(c);
  }
  return s;
}

namespace {

constexpr const char* kCommentPrefix = "seedance: ";
constexpr const char* kCheckpointToken = "seedance.checkpoint=";
__extension__ using Int128 = __int128;

std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Fixed(double v, int digits) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(digits);
  os << v;
  return os.str();
}

}  // namespace

// One Slurm job the controller manages.
struct Controller::Tracked {
  enum class St { kQueued, kAdmitted, kEvicting, kBlocked };
  St st = St::kQueued;
  std::string account;
  int tenant = -1;
  tenancy::Tier tier = tenancy::Tier::kSilver;
  cluster::PodSpec pod;            // what placement sees per node (allowed_models = every model it may get)
  int node_count = 1;              // a multi-node gang: node_count nodes of one model, `pod` on each
  std::string gres_type;           // the job's own GRES type ("" = any)
  std::int64_t submit_s = 0;
  // kAdmitted:
  std::string node;                // where it was released to (a gang: "n1,n2"; running: Slurm's host list)
  std::string gpu_type;            // catalog model chosen
  bool release_ok = false;         // Slurm accepted the release
  bool running = false;            // seen active since the release
  bool waiting_node = false;       // admitted on quota (strict/borrowing), no node yet
  int restarts_at_release = 0;
  double start_s = 0;
  std::vector<sched::GangMember> members;  // bound in this cycle's ClusterState, one per node
  bool bound = false;              // bound in this cycle's ClusterState
  int gpus() const { return pod.num_gpu * node_count; }
  void Unbind(cluster::ClusterState& state) {
    for (const auto& m : members) state.Unbind(pod, m.node, m.gpus);
    members.clear();
    bound = false;
  }
  double checkpoint_s = 0;         // declared checkpoint interval (comment token, else the config's)
  // Running: the devices of the current incarnation per node (`scontrol show job -d`), read once
  // per incarnation (gpu_start_s = the start they belong to, -1 = not read yet), and how long its
  // GPUs have been idle by the ledger's telemetry (0 without telemetry).
  double gpu_start_s = -1;
  std::map<std::string, std::vector<int>> node_gpus;
  double idle_s = 0;
  // kEvicting:
  bool evict_ok = false;           // Slurm took the requeue (or the hold)
  bool signal_sent = false;        // the victim got preempt_signal at signaled_at
  double signaled_at = 0;
  std::string evict_reason;
  // kBlocked: why
  std::string block_reason;
};

struct Controller::Request {
  int tenant = -1;
  tenancy::Tier tier = tenancy::Tier::kSilver;
  cluster::PodSpec pod;
  int node_count = 1;
  double checkpoint_s = 0;
  std::string warning;  // a comment token not understood (the default is used)
};

// The driver's side of the Admitter on this cycle's ClusterState.
class Controller::Env final : public tenancy::AdmissionEnv {
 public:
  Env(Controller& c, double now, CycleReport& report) : c_(c), now_(now), report_(report) {}
  std::set<std::int64_t> adopting;

  tenancy::RunningState Running(std::int64_t id) const override {
    tenancy::RunningState rs;
    const Tracked& t = *c_.tracked_.at(id);
    if (!t.running && !t.release_ok) return rs;
    // Released this cycle or not seen running yet: it starts now.
    rs.admitted_at_s = t.running ? t.start_s : now_;
    rs.executed_s = std::max(0.0, now_ - rs.admitted_at_s);
    // No checkpoint telemetry from Slurm: all work since the (re)start is what preemption loses.
    // Work since the last checkpoint, from the job's declared interval (none: since the start).
    const double since_checkpoint = t.checkpoint_s > 0 ? std::fmod(rs.executed_s, t.checkpoint_s) : rs.executed_s;
    rs.lost_if_preempted = since_checkpoint * t.gpus();
    rs.idle_s = t.running ? t.idle_s : 0;  // from the ledger's GPU telemetry (ReadGpuTelemetry)
    return rs;
  }

  bool CanPlace(const tenancy::WorkloadRequest& w) override {
    if (!adopting.empty()) return adopting.count(w.id) > 0;
    const Tracked& t = *c_.tracked_.at(w.id);
    if (t.node_count == 1) return c_.state_->CanPlaceAnywhere(t.pod);
    // A gang: node_count nodes of one model that each take `pod`.
    for (auto m : c_.gpu_order_) {
      if (t.pod.num_gpu > 0 && !t.pod.allowed_models.Accepts(m)) continue;
      cluster::PodSpec pod = t.pod;
      if (pod.num_gpu > 0) pod.allowed_models = cluster::GpuModelSet::Of(m);
      int n = 0;
      for (std::size_t i = 0; i < c_.state_->size() && n < t.node_count; ++i)
        n += c_.state_->CanPlace(cluster::NodeId(static_cast<std::uint32_t>(i)), pod) ? 1 : 0;
      if (n >= t.node_count) return true;
    }
    return false;
  }

  std::optional<std::vector<std::int64_t>> VictimsForFit(const tenancy::WorkloadRequest& w,
                                                         std::span<const tenancy::VictimCandidate> cands) override {
    if (!adopting.empty()) return std::nullopt;
    // One candidate entry per node a victim holds (a gang victim frees all its nodes).
    std::vector<sched::PreemptionCandidate> pc;
    for (const auto& v : cands) {
      const Tracked& t = *c_.tracked_.at(v.id);
      if (!t.bound || !(t.running || t.release_ok)) continue;
      for (const auto& m : t.members) pc.push_back({v.id, m.node, t.pod, m.gpus, v.cost});
    }
    const Tracked& p = *c_.tracked_.at(w.id);
    auto sets = sched::FindVictimsForGang(*c_.state_, p.pod, p.node_count, pc);
    if (!sets) return std::nullopt;
    std::set<std::int64_t> victims;
    for (const auto& vs : *sets) victims.insert(vs.victims.begin(), vs.victims.end());
    return std::vector<std::int64_t>(victims.begin(), victims.end());
  }

  void OnAdmit(const tenancy::WorkloadRequest& w) override {
    Tracked& t = *c_.tracked_.at(w.id);
    t.st = Tracked::St::kAdmitted;
    if (adopting.count(w.id) > 0 || t.running) return;  // already on its node
    if (!c_.Place(w.id, t, now_, report_, "admitted")) {
      // Strict / borrowing admit on quota alone: the job stays held until a node takes it.
      t.waiting_node = true;
      report_.notes.push_back("job " + std::to_string(w.id) + ": admitted on quota, no node fits yet: stays held");
    }
  }

 private:
  Controller& c_;
  double now_;
  CycleReport& report_;
};

Controller::Controller(ControllerConfig config, CommandRunner& runner, const Clock& clock,
                       const cost::PriceTable& prices, ledger::Ledger* ledger)
    : config_(std::move(config)), runner_(runner), clock_(clock), prices_(prices), ledger_(ledger) {}

Controller::~Controller() = default;

Result<std::unique_ptr<Controller>> Controller::Create(ControllerConfig config, CommandRunner& runner,
                                                       const Clock& clock, const cost::PriceTable& prices,
                                                       ledger::Ledger* ledger) {
  std::unique_ptr<Controller> c(new Controller(std::move(config), runner, clock, prices, ledger));
  SEEDANCE_RETURN_IF_ERROR(c->Init());
  return c;
}

Status Controller::Init() {
  auto mode = tenancy::ParseTenancyMode(config_.slurm.mode);
  if (!mode.has_value() || *mode == tenancy::TenancyMode::kKueue || tenancy::IsFairSharing(*mode)) {
    return InvalidArgumentError("slurm.mode: '" + config_.slurm.mode + "' (allowed: strict, borrowing, seedance)");
  }
  mode_ = *mode;
  if (config_.tenancy.tenants.empty()) {
    return InvalidArgumentError("tenancy.tenants: the controller needs the tenants (and their 'gpu' quotas) "
                                "that Slurm accounts map to");
  }
  SEEDANCE_ASSIGN_OR_RETURN(auto book, tenancy::QuotaBook::Build(config_.tenancy.tenants, mode_ != tenancy::TenancyMode::kStrict));
  gpu_resource_ = book.ResourceIndex("gpu");
  if (gpu_resource_ < 0) return InvalidArgumentError("tenancy.tenants: no tenant has a 'gpu' quota (GPUs of any model)");
  for (std::size_t t = 0; t < config_.tenancy.tenants.size(); ++t)
    tenant_index_.emplace(config_.tenancy.tenants[t].name, static_cast<int>(t));
  for (const auto& [account, tenant] : config_.slurm.accounts) {
    if (!tenant_index_.count(tenant)) {
      return InvalidArgumentError("slurm.accounts." + account + ": tenant '" + tenant + "' is not in tenancy.tenants");
    }
  }
  std::vector<double> nominal;
  for (std::size_t t = 0; t < config_.tenancy.tenants.size(); ++t)
    nominal.push_back(tenancy::FromQuantity(book.nominal(static_cast<int>(t), gpu_resource_)));
  fair_ = std::make_unique<tenancy::FairShareTracker>(nominal, config_.tenancy.fairness_window_s);
  admitter_ = std::make_unique<tenancy::Admitter>(std::move(book), mode_, config_.tenancy);
  held_.assign(nominal.size(), 0);
  demand_.assign(nominal.size(), 0);
  // GPU models by throughput per dollar: the catalog's FP16 peak (tensor cores where present; the
  // assumption: training throughput scales with it) over the price table's on-demand price. Models
  // without either are tried last, by name.
  std::set<std::string> allowed(config_.slurm.gpu_types.begin(), config_.slurm.gpu_types.end());
  struct Ranked {
    double value;
    std::string name;
    cluster::GpuModelIndex model;
  };
  std::vector<Ranked> ranked;
  const auto& cat = gpu::Catalog();
  for (std::size_t i = 0; i < cat.size(); ++i) {
    const std::string name(cat[i].name);
    if (!allowed.empty() && !allowed.count(name)) continue;
    const auto model = cluster::GpuModelIndex(static_cast<std::int32_t>(i));
    const cost::GpuPrice* p = prices_.Find(model);
    const double usd = p != nullptr ? ToUsd(p->usd_per_gpu_hour) : 0;
    ranked.push_back({usd > 0 && cat[i].fp16_tflops > 0 ? cat[i].fp16_tflops / usd : 0, name, model});
  }
  std::sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
    return a.value != b.value ? a.value > b.value : a.name < b.name;
  });
  for (const auto& r : ranked) gpu_order_.push_back(r.model);
  SEEDANCE_ASSIGN_OR_RETURN(placer_, sched::MakePlacementPolicy(config_.slurm.placement, ctx_));
  return Status::Ok();
}

Result<std::string> Controller::Read(const std::vector<std::string>& argv) {
  SEEDANCE_ASSIGN_OR_RETURN(CommandResult r, runner_.Run(argv));
  if (r.exit_code != 0) {
    std::string err = r.err;
    while (!err.empty() && (err.back() == '\n' || err.back() == '\r')) err.pop_back();
    return UnavailableError(JoinArgv(argv) + ": exit " + std::to_string(r.exit_code) + (err.empty() ? "" : ": " + err));
  }
  return r.out;
}

void Controller::Execute(Action& a) {
  if (config_.dry_run) return;
  for (const auto& c : a.commands) {
    auto r = runner_.Run(c);
    if (!r.has_value()) {
      a.ok = false;
      a.error = r.error().message();
      return;
    }
    if (r->exit_code != 0) {
      std::string err = r->err;
      while (!err.empty() && (err.back() == '\n' || err.back() == '\r')) err.pop_back();
      a.ok = false;
      a.error = JoinArgv(c) + ": exit " + std::to_string(r->exit_code) + (err.empty() ? "" : ": " + err);
      return;
    }
  }
}

Result<Controller::Request> Controller::Classify(const SlurmJob& j) const {
  Request q;
  auto acct = config_.slurm.accounts.find(j.account);
  const std::string tenant = acct != config_.slurm.accounts.end() ? acct->second : j.account;
  auto ti = tenant_index_.find(tenant);
  if (ti == tenant_index_.end()) {
    return InvalidArgumentError("account '" + j.account + "' maps to no tenant (add it to slurm.accounts or tenancy.tenants)");
  }
  q.tenant = ti->second;
  q.tier = config_.tenancy.tenants[static_cast<std::size_t>(q.tenant)].tier;
  if (j.node_count < 1) return InvalidArgumentError("node_count: " + std::to_string(j.node_count) + " (must be >= 1)");
  q.checkpoint_s = config_.slurm.checkpoint_interval_s;
  if (auto at = j.comment.find(kCheckpointToken); at != std::string::npos) {
    const std::size_t from = at + std::string_view(kCheckpointToken).size();
    const std::size_t to = j.comment.find_first_of(" ,;\t", from);
    const std::string value = j.comment.substr(from, to == std::string::npos ? std::string::npos : to - from);
    auto d = ParseDurationSeconds(value);
    if (d.has_value() && *d > 0) {
      q.checkpoint_s = *d;
    } else {
      q.warning = "comment: " + std::string(kCheckpointToken) + "'" + value + "' is not a positive duration (e.g. 15m); the default " +
                  Fixed(config_.slurm.checkpoint_interval_s, 0) + " s is used";
    }
  }
  q.node_count = j.node_count;
  q.pod.name = std::to_string(j.id);
  q.pod.cpu = Millicores(static_cast<std::int64_t>(j.cpus) * 1000);
  q.pod.memory = MiB(j.memory_mib);
  int per_node = j.gpus.count;
  if (j.gpus_per_job && j.node_count > 1) {
    // --gpus=N over several nodes: the gang needs the same share on each node.
    if (j.gpus.count % j.node_count != 0) {
      return InvalidArgumentError("tres_per_job: " + std::to_string(j.gpus.count) + " GPUs do not split evenly over " +
                                  std::to_string(j.node_count) + " nodes (ask --gres=gpu:N per node)");
    }
    per_node = j.gpus.count / j.node_count;
  }
  q.pod.num_gpu = per_node;
  q.pod.gpu_milli = per_node > 0 ? cluster::kMilliPerGpu : 0;
  q.pod.qos = q.tier == tenancy::Tier::kBronze ? cluster::Qos::kBestEffort : cluster::Qos::kGuaranteed;
  if (per_node > cluster::kMaxGpusPerNode) {
    return InvalidArgumentError("tres_per_node: " + std::to_string(per_node) + " GPUs on one node is more than any node holds");
  }
  // The models it may get: its GRES type, else GPU names among its --constraint features, within
  // the config's gpu_types (gpu_order_ holds only those).
  std::set<cluster::GpuModelIndex> want;
  if (!j.gpus.type.empty()) {
    auto m = ModelOfGres(j.gpus.type);
    if (!m.has_value()) return InvalidArgumentError("tres_per_node: unknown GRES type '" + j.gpus.type + "': " + m.error().message());
    want.insert(*m);
  } else if (!j.features.empty()) {
    std::string token;
    for (std::size_t k = 0; k <= j.features.size(); ++k) {
      const char c = k < j.features.size() ? j.features[k] : '|';
      if (c == '|' || c == '&' || c == ',' || c == '[' || c == ']' || c == '(' || c == ')') {
        if (!token.empty()) {
          if (auto m = ModelOfGres(token); m.has_value()) want.insert(*m);
        }
        token.clear();
      } else {
        token += c;
      }
    }
  }
  if (j.gpus.count > 0) {
    bool any = false;
    for (auto m : gpu_order_) {
      if (!want.empty() && !want.count(m)) continue;
      q.pod.allowed_models.Add(m);
      any = true;
    }
    if (!any) {
      return InvalidArgumentError("tres_per_node: no GPU model both requested and allowed by slurm.gpu_types");
    }
  }
  return q;
}

Result<cluster::GpuModelIndex> Controller::ModelOfGres(const std::string& type) const {
  const std::string lower = Lower(type);
  auto it = config_.slurm.gres_types.find(lower);
  SEEDANCE_ASSIGN_OR_RETURN(gpu::GpuIndex idx, gpu::ParseGpuName(it != config_.slurm.gres_types.end() ? it->second : type,
                                                                 gpu::NameMatch::kProduct));
  return cluster::GpuModelIndex(static_cast<std::int32_t>(idx));
}

bool Controller::Place(std::int64_t id, Tracked& t, double now, CycleReport& r, const std::string& why) {
  (void)now;
  for (auto m : gpu_order_) {
    if (t.pod.num_gpu > 0 && !t.pod.allowed_models.Accepts(m)) continue;
    cluster::PodSpec pod = t.pod;
    if (pod.num_gpu > 0) pod.allowed_models = cluster::GpuModelSet::Of(m);
    // One node per member, all of model m, each chosen by the policy (sched::PlaceGang).
    auto members = sched::PlaceGang(*placer_, *state_, pod, t.node_count, placer_rng_);
    if (!members) continue;
    t.bound = true;
    t.members = std::move(*members);
    t.node.clear();
    for (const auto& g : t.members) t.node += (t.node.empty() ? "" : ",") + node_names_[g.node.value()];
    t.gpu_type = pod.num_gpu > 0 ? std::string(gpu::GpuAt(static_cast<gpu::GpuIndex>(m)).name) : "";
    t.waiting_node = false;
    t.release_ok = false;
    t.running = false;
    Release(id, t, r, why);
    return true;
  }
  return false;
}

bool Controller::Signals() const { return !config_.slurm.preempt_signal.empty() && config_.slurm.preempt_grace_s > 0; }

void Controller::Signal(std::int64_t id, Tracked& t, double now, CycleReport& r) {
  Action a;
  a.kind = ActionKind::kSignal;
  a.job = id;
  a.node = t.node;
  a.reason = t.evict_reason + "; SIG" + config_.slurm.preempt_signal + " to checkpoint, requeued in " +
             Fixed(config_.slurm.preempt_grace_s, 0) + " s";
  a.commands.push_back({"scancel", "--signal=" + config_.slurm.preempt_signal, "--batch", std::to_string(id)});
  Execute(a);
  t.signal_sent = a.ok;
  t.evict_ok = false;
  if (a.ok) {
    t.signaled_at = now;
    const double due = now + config_.slurm.preempt_grace_s;
    r.wake_at_s = r.wake_at_s > 0 ? std::min(r.wake_at_s, due) : due;
  }
  r.actions.push_back(std::move(a));
}

void Controller::Release(std::int64_t id, Tracked& t, CycleReport& r, const std::string& why) {
  Action a;
  a.kind = ActionKind::kRelease;
  a.job = id;
  a.node = t.node;
  a.gpu_type = t.gpu_type.empty() ? "" : t.gpu_type + " x" + std::to_string(t.pod.num_gpu) +
                                              (t.node_count > 1 ? " per node, " + std::to_string(t.node_count) + " nodes" : "");
  const auto& tc = config_.tenancy.tenants[static_cast<std::size_t>(t.tenant)];
  a.reason = why + " (account " + t.account + " -> tenant " + tc.name + ", " + std::string(tenancy::TierName(t.tier)) +
             "; " + config_.slurm.placement + " node)";
  const std::string sid = std::to_string(id);
  if (t.restarts_at_release > 0) a.commands.push_back({"scontrol", "update", "jobid=" + sid, "StartTime=now"});
  // The node fixes the model (a node's GPUs are one model): Slurm 22.05 refuses to retype a
  // pending job's GRES ("Invalid GRES specification (with and without type identification)").
  a.commands.push_back({"scontrol", "update", "jobid=" + sid, "nodelist=" + t.node});
  a.commands.push_back({"scontrol", "release", sid});
  Execute(a);
  t.release_ok = a.ok;
  if (a.ok && !config_.dry_run) releases_.push_back({id, t.node});
  r.actions.push_back(std::move(a));
}

Status Controller::BuildState(const std::vector<SlurmNode>& nodes, const std::vector<SlurmJob>& jobs,
                              const std::vector<SlurmJob>& others, CycleReport& r) {
  std::vector<cluster::NodeSpec> specs;
  node_names_.clear();
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const SlurmNode& n = nodes[i];
    cluster::NodeSpec s;
    s.name = n.name;
    s.cpu = Millicores(static_cast<std::int64_t>(n.cpus) * 1000);
    s.memory = MiB(n.memory_mib);
    s.gpu_count = std::min(n.gpus.count, cluster::kMaxGpusPerNode);
    if (n.gpus.count > 0) {
      if (n.gpus.type.empty()) {
        return InvalidArgumentError("sinfo --json: node " + n.name + ": gres: GPUs without a type ('gpu:" +
                                    std::to_string(n.gpus.count) + "'); give gres.conf a Type= so the model is known");
      }
      auto m = ModelOfGres(n.gpus.type);
      if (!m.has_value()) {
        return InvalidArgumentError("sinfo --json: node " + n.name + ": gres: unknown GRES type '" + n.gpus.type +
                                    "' (map it in slurm.gres_types): " + m.error().message());
      }
      s.model = *m;
    }
    index.emplace(n.name, specs.size());
    node_names_.push_back(n.name);
    specs.push_back(std::move(s));
  }
  state_ = std::make_unique<cluster::ClusterState>(specs);
  if (ctx_.tie_rank.size() != specs.size()) {
    ctx_.tie_rank.resize(specs.size());
    for (std::size_t i = 0; i < specs.size(); ++i) ctx_.tie_rank[i] = static_cast<std::uint32_t>(i);
  }
  for (auto& [id, t] : tracked_) {
    t->bound = false;
    t->members.clear();
  }
  // Every job holding GPUs on a managed node, with the devices Slurm gave it (a gang: on each of
  // its nodes; gres_detail lists them in host-list order); also jobs of other partitions on nodes
  // shared with the managed one (overlapping partitions): their GPUs are not free.
  for (const auto* holders : {&jobs, &others}) for (const SlurmJob& j : *holders) {
    const bool reserved = [&] {
      auto it = tracked_.find(j.id);
      return it != tracked_.end() && it->second->st == Tracked::St::kAdmitted && j.pending() && !it->second->node.empty();
    }();
    if (!j.active() && !reserved) continue;
    const std::string list = reserved ? tracked_.at(j.id)->node : j.nodes;
    auto hosts = ExpandHostlist(list, "squeue --json: job " + std::to_string(j.id) + ": nodes");
    if (!hosts.has_value()) {
      r.notes.push_back(hosts.error().message() + ": not counted");
      continue;
    }
    cluster::PodSpec pod;
    auto it = tracked_.find(j.id);
    if (it != tracked_.end()) {
      pod = it->second->pod;
    } else {
      pod.name = std::to_string(j.id);
      pod.cpu = Millicores(static_cast<std::int64_t>(j.cpus) * 1000);
      pod.memory = MiB(j.memory_mib);
      pod.num_gpu = j.gpus_per_job && j.node_count > 1 ? j.gpus.count / j.node_count : j.gpus.count;
      pod.gpu_milli = pod.num_gpu > 0 ? cluster::kMilliPerGpu : 0;
    }
    pod.allowed_models = {};
    const bool per_node_indices = !reserved && j.node_gpu_indices.size() == hosts->size();
    for (std::size_t k = 0; k < hosts->size(); ++k) {
      const std::string& node = (*hosts)[k];
      auto ni = index.find(node);
      if (ni == index.end()) continue;  // another partition's node
      const cluster::NodeId nid(static_cast<std::uint32_t>(ni->second));
      const cluster::NodeState& ns = state_->node(nid);
      if (!cluster::Fits(ns, pod)) {
        r.notes.push_back("job " + std::to_string(j.id) + ": more than node " + node + " has free by its own record; not counted");
        continue;
      }
      const std::vector<int>& idx = per_node_indices ? j.node_gpu_indices[k] : hosts->size() == 1 ? j.gpu_indices : std::vector<int>{};
      cluster::GpuAssignment g;
      bool ok = !idx.empty() && static_cast<int>(idx.size()) == pod.num_gpu;
      if (ok) {
        for (int dev : idx) {
          if (dev >= ns.gpu_count || ns.gpu_idle[static_cast<std::size_t>(dev)] < pod.gpu_milli) ok = false;
        }
      }
      if (ok) {
        for (std::size_t d = 0; d < idx.size(); ++d) g.gpus[d] = static_cast<std::uint8_t>(idx[d]);
        g.count = static_cast<std::uint8_t>(idx.size());
      } else if (pod.num_gpu > 0) {
        g = cluster::FirstFitGpus(ns, pod);
      }
      state_->Bind(pod, nid, g);
      if (it != tracked_.end()) {
        it->second->bound = true;
        it->second->members.push_back({nid, g});
      }
    }
  }
  // What new work each node may take: down or drained nodes nothing; the audit's states.
  audit::AdmissionLedger audit;
  if (!config_.admission_path.empty()) {
    SEEDANCE_ASSIGN_OR_RETURN(audit, audit::AdmissionLedger::LoadFile(config_.admission_path));
  }
  std::set<std::string> open_nodes;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const SlurmNode& n = nodes[i];
    const cluster::NodeId nid(static_cast<std::uint32_t>(i));
    auto rec = audit.nodes.find(n.name);
    const audit::AdmissionState as = rec != audit.nodes.end() ? rec->second.state : audit::AdmissionState::kAdmitted;
    cluster::NodeEligibility e = audit::EligibilityOf(as);
    if (n.down() || n.drained()) e = cluster::NodeEligibility::kNone;
    state_->SetEligibility(nid, e);
    if (e != cluster::NodeEligibility::kNone) open_nodes.insert(n.name);
    const bool ours = n.reason.rfind(kCommentPrefix, 0) == 0;
    if (as == audit::AdmissionState::kRemoved && !n.drained()) {
      std::string why = "audit removed the node";
      for (auto it = audit.log.rbegin(); it != audit.log.rend(); ++it) {
        if (it->node == n.name && it->to == audit::AdmissionState::kRemoved) {
          why += ": " + it->reason;
          break;
        }
      }
      Action a;
      a.kind = ActionKind::kDrain;
      a.node = n.name;
      a.reason = why;
      a.commands.push_back({"scontrol", "update", "nodename=" + n.name, "state=drain", "reason=" + std::string(kCommentPrefix) + why});
      Execute(a);
      r.actions.push_back(std::move(a));
    } else if (n.drained() && ours && (as == audit::AdmissionState::kAdmitted || as == audit::AdmissionState::kObservation)) {
      Action a;
      a.kind = ActionKind::kResume;
      a.node = n.name;
      a.reason = std::string("audit readmitted the node (") + std::string(audit::AdmissionStateName(as)) + ")";
      a.commands.push_back({"scontrol", "update", "nodename=" + n.name, "state=resume"});
      Execute(a);
      r.actions.push_back(std::move(a));
    }
  }
  // A node that takes work again (resumed, back up, new): jobs waiting for a node are reconsidered.
  bool grew = false;
  for (const auto& n : open_nodes) grew |= !open_nodes_.count(n);
  if (grew && !open_nodes_.empty()) {
    admitter_->CapacityChanged();
    r.notes.push_back("nodes open again: waiting jobs reconsidered");
  }
  open_nodes_ = std::move(open_nodes);
  return Status::Ok();
}

Result<CycleReport> Controller::Cycle() {
  CycleReport r;
  const double now = ToSeconds(clock_.Now());
  r.now_s = now;
  // 1. Read everything first: a failure here takes no action.
  SEEDANCE_ASSIGN_OR_RETURN(std::string sinfo, Read({"sinfo", "--json", "-N"}));
  SEEDANCE_ASSIGN_OR_RETURN(std::string squeue, Read({"squeue", "--json"}));
  SEEDANCE_ASSIGN_OR_RETURN(auto all_nodes, ParseSinfoJson(sinfo));
  SEEDANCE_ASSIGN_OR_RETURN(auto all_jobs, ParseSqueueJson(squeue));
  std::vector<SlurmNode> nodes;
  for (const auto& n : all_nodes)
    if (n.in_partition(config_.slurm.partition)) nodes.push_back(n);
  // The managed partition's jobs are decided; the running jobs of other partitions are only
  // observed (their GPUs on shared nodes, their devices for the bill's telemetry join).
  std::vector<SlurmJob> jobs, others;
  for (auto& j : all_jobs) {
    if (config_.slurm.partition.empty() || j.partition == config_.slurm.partition) {
      jobs.push_back(std::move(j));
    } else if (j.active()) {
      others.push_back(std::move(j));
    }
  }
  if (ledger_ != nullptr) SEEDANCE_RETURN_IF_ERROR(EvaluateBreaker(now, r));
  r.tripped = tripped_;
  // Fair-share history over the interval since the last cycle (held / demand as left then).
  double capacity = 0;
  for (const auto& n : nodes) capacity += n.gpus.count;
  if (last_now_ >= 0 && now > last_now_) fair_->Advance(last_now_, now, capacity, demand_, held_);
  last_now_ = now;
  SEEDANCE_RETURN_IF_ERROR(BuildState(nodes, jobs, others, r));
  Observe(others, r);

  // 2. Reconcile the Admitter with Slurm.
  const int nr = admitter_->book().num_resources();
  auto submit = [&](std::int64_t id, Tracked& t) {
    tenancy::WorkloadRequest w;
    w.id = id;
    w.tenant = t.tenant;
    w.tier = t.tier;
    w.priority = tenancy::TierPriority(t.tier);
    w.creation_s = static_cast<double>(t.submit_s);
    w.request.assign(static_cast<std::size_t>(nr), 0);
    w.request[static_cast<std::size_t>(gpu_resource_)] = tenancy::ToQuantity(t.gpus());
    admitter_->Submit(std::move(w));
    t.st = Tracked::St::kQueued;
  };
  auto comment = [&](std::int64_t id, const SlurmJob& j, const std::string& text) {
    const std::string c = kCommentPrefix + text;
    if (j.comment == c) return;
    Action a;
    a.kind = ActionKind::kComment;
    a.job = id;
    a.reason = text;
    a.commands.push_back({"scontrol", "update", "jobid=" + std::to_string(id), "comment=" + c});
    Execute(a);
    r.actions.push_back(std::move(a));
  };
  auto hold = [&](std::int64_t id, const std::string& why) {
    Action a;
    a.kind = ActionKind::kHold;
    a.job = id;
    a.reason = why;
    a.commands.push_back({"scontrol", "hold", std::to_string(id)});
    Execute(a);
    r.actions.push_back(std::move(a));
  };
  auto block = [&](std::int64_t id, Tracked& t, const SlurmJob& j, const std::string& why) {
    t.st = Tracked::St::kBlocked;
    t.block_reason = why;
    if (!j.held()) hold(id, why);
    comment(id, j, why);
  };
  auto breaker_reason = [&](const std::string& account) {
    auto it = trip_reason_.find(account);
    return it != trip_reason_.end() ? it->second : "breaker tripped for account " + account;
  };
  // Off its node and back in its queue (Slurm requeued it, or it was evicted and is pending now).
  auto back_to_queue = [&](const SlurmJob& j, Tracked& t) {
    t.Unbind(*state_);
    t.running = false;
    t.node.clear();
    t.restarts_at_release = j.restarts;
    admitter_->Evicted(j.id, /*requeue=*/true);
    t.st = Tracked::St::kQueued;
  };
  Env env(*this, now, r);
  std::set<std::int64_t> seen;
  for (const SlurmJob& j : jobs) {
    seen.insert(j.id);
    auto it = tracked_.find(j.id);
    if (it == tracked_.end()) {
      if (j.ended()) continue;
      auto q = Classify(j);
      auto t = std::make_unique<Tracked>();
      t->account = j.account;
      t->submit_s = j.submit_s;
      t->gres_type = j.gpus.type;
      if (q.has_value()) {
        t->tenant = q->tenant;
        t->tier = q->tier;
        t->pod = q->pod;
        t->node_count = q->node_count;
        t->checkpoint_s = q->checkpoint_s;
        if (!q->warning.empty()) r.notes.push_back("job " + std::to_string(j.id) + ": " + q->warning);
      }
      if (j.active()) {
        if (!q.has_value()) continue;  // not ours to manage (its GPUs are counted all the same)
        // Running before the controller knew it (a restart, or released by hand): adopt it.
        t->running = true;
        t->release_ok = true;
        t->node = j.nodes;
        t->start_s = static_cast<double>(j.start_s);
        t->restarts_at_release = j.restarts;
        Tracked& ref = *t;
        tracked_.emplace(j.id, std::move(t));
        submit(j.id, ref);
        env.adopting.insert(j.id);
        r.notes.push_back("job " + std::to_string(j.id) + ": running on " + j.nodes + " already: adopted");
        continue;
      }
      Tracked& ref = *t;
      tracked_.emplace(j.id, std::move(t));
      if (!q.has_value()) {
        block(j.id, ref, j, "not placed: " + q.error().message());
        continue;
      }
      if (tripped_.count(j.account)) {
        block(j.id, ref, j, breaker_reason(j.account));
        continue;
      }
      if (!j.held()) hold(j.id, "pending in a managed partition: seedance decides when and where it runs");
      ref.restarts_at_release = j.restarts;
      submit(j.id, ref);
      continue;
    }
    Tracked& t = *it->second;
    switch (t.st) {
      case Tracked::St::kBlocked: {
        if (j.ended()) {
          tracked_.erase(it);
          break;
        }
        auto q = Classify(j);
        if (!q.has_value()) {
          block(j.id, t, j, "not placed: " + q.error().message());
        } else if (tripped_.count(j.account)) {
          block(j.id, t, j, breaker_reason(j.account));
        } else {
          t.tenant = q->tenant;
          t.tier = q->tier;
          t.pod = q->pod;
          t.node_count = q->node_count;
          t.checkpoint_s = q->checkpoint_s;
          t.restarts_at_release = j.restarts;
          submit(j.id, t);
          r.notes.push_back("job " + std::to_string(j.id) + ": no longer blocked (" + t.block_reason + "): queued");
        }
        break;
      }
      case Tracked::St::kQueued:
        if (j.ended()) {
          admitter_->Withdraw(j.id);
          r.notes.push_back("job " + std::to_string(j.id) + ": " + j.state + " while queued: withdrawn");
          tracked_.erase(it);
        } else if (tripped_.count(j.account)) {
          admitter_->Withdraw(j.id);
          block(j.id, t, j, breaker_reason(j.account));
        } else if (j.pending() && !j.held()) {
          hold(j.id, "released outside seedance while queued: held again");
        }
        break;
      case Tracked::St::kAdmitted:
        if (j.ended()) {
          admitter_->Finished(j.id);
          r.notes.push_back("job " + std::to_string(j.id) + ": " + j.state);
          tracked_.erase(it);
        } else if (j.active()) {
          if (!t.running) t.start_s = static_cast<double>(j.start_s);
          t.running = true;
          t.release_ok = true;
          t.node = j.nodes;
        } else if (j.pending() && j.restarts > t.restarts_at_release) {
          // Slurm requeued it itself (its node failed, or a user requeued it): decide again.
          if (!j.held()) hold(j.id, "requeued by Slurm (restart " + std::to_string(j.restarts) + "): placed again by seedance");
          r.notes.push_back("job " + std::to_string(j.id) + ": requeued by Slurm (" + j.reason + "): back in its queue");
          back_to_queue(j, t);
        } else if (j.held() && t.running) {
          r.notes.push_back("job " + std::to_string(j.id) + ": requeued and held outside seedance: back in its queue");
          back_to_queue(j, t);
        } else if (j.held() && !t.node.empty() && !t.waiting_node) {
          // The release did not take (slurmctld was down, the command failed): again, same node.
          if (t.bound) {
            Release(j.id, t, r, "retry: Slurm has not taken the earlier release");
          } else {
            r.notes.push_back("job " + std::to_string(j.id) + ": its node " + t.node + " no longer fits it: back in its queue");
            t.node.clear();
            admitter_->Evicted(j.id, /*requeue=*/true);
            t.st = Tracked::St::kQueued;
          }
        }
        break;
      case Tracked::St::kEvicting:
        if (j.ended()) {
          admitter_->Evicted(j.id, /*requeue=*/false);
          tracked_.erase(it);
        } else if (j.pending()) {
          back_to_queue(j, t);
          if (!j.held()) hold(j.id, "evicted: back in its queue");
        } else if (!t.evict_ok && Signals() && !t.signal_sent) {
          Signal(j.id, t, now, r);  // the earlier signal failed: again (the grace starts when it takes)
        } else if (!t.evict_ok && Signals() && now < t.signaled_at + config_.slurm.preempt_grace_s) {
          // Checkpointing: requeued once the grace period is over.
          const double due = t.signaled_at + config_.slurm.preempt_grace_s;
          r.wake_at_s = r.wake_at_s > 0 ? std::min(r.wake_at_s, due) : due;
        } else if (!t.evict_ok) {
          Action a;
          a.kind = ActionKind::kRequeue;
          a.job = j.id;
          a.node = j.nodes;
          a.reason = t.signal_sent ? t.evict_reason + "; SIG" + config_.slurm.preempt_signal + " sent " +
                                         Fixed(now - t.signaled_at, 0) + " s ago, grace " +
                                         Fixed(config_.slurm.preempt_grace_s, 0) + " s over"
                                   : "retry: Slurm has not taken the earlier requeue";
          a.commands.push_back({"scontrol", "requeuehold", std::to_string(j.id)});
          Execute(a);
          t.evict_ok = a.ok;
          r.actions.push_back(std::move(a));
        }
        break;
    }
  }
  // Jobs gone from squeue (ended before MinJobAge, or purged).
  for (auto it = tracked_.begin(); it != tracked_.end();) {
    if (seen.count(it->first)) {
      ++it;
      continue;
    }
    switch (it->second->st) {
      case Tracked::St::kQueued: admitter_->Withdraw(it->first); break;
      case Tracked::St::kAdmitted: admitter_->Finished(it->first); break;
      case Tracked::St::kEvicting: admitter_->Evicted(it->first, /*requeue=*/false); break;
      case Tracked::St::kBlocked: break;
    }
    r.notes.push_back("job " + std::to_string(it->first) + ": gone from squeue");
    it = tracked_.erase(it);
  }

  // GPU devices of new incarnations, and the idle time of running jobs' GPUs by the telemetry.
  ReadGpuDetail(r);
  if (ledger_ != nullptr) {
    if (Status s = ReadGpuTelemetry(now); !s.ok()) r.notes.push_back("GPU telemetry not read: " + s.message());
  }

  // 3. Seedance's signals, as the replay computes them: elastic scale from utilization (no GPU
  // telemetry from Slurm: a running job counts as busy) and fairness compensation.
  if (mode_ == tenancy::TenancyMode::kSeedance) {
    const std::size_t nt = config_.tenancy.tenants.size();
    std::vector<double> gpus(nt, 0.0);
    for (const auto& [id, t] : tracked_)
      if (t->st == Tracked::St::kAdmitted && t->running) gpus[static_cast<std::size_t>(t->tenant)] += t->gpus();
    for (std::size_t t = 0; t < nt; ++t) {
      const auto& p = config_.tenancy.tiers[static_cast<std::size_t>(config_.tenancy.tenants[t].tier)];
      admitter_->SetElasticScale(static_cast<int>(t), tenancy::ElasticScale(p, 0.0, gpus[t] > 0 ? 1.0 : 0.0));
      admitter_->SetCompensation(static_cast<int>(t), config_.tenancy.fairness_compensation
                                                          ? tenancy::CompensationWeight(fair_->Deviation(static_cast<int>(t)))
                                                          : 0.0);
    }
  }

  // 4. Decide.
  std::vector<tenancy::AdmissionDecision> decisions;
  auto apply = [&](const std::vector<tenancy::AdmissionDecision>& ds) {
    for (const auto& d : ds) {
      if (d.kind != tenancy::AdmissionDecision::Kind::kEvict) continue;
      Tracked& t = *tracked_.at(d.id);
      t.st = Tracked::St::kEvicting;
      if (!t.running && !t.release_ok) {
        // Never released: nothing to requeue on Slurm.
        t.Unbind(*state_);
        t.node.clear();
        admitter_->Evicted(d.id, /*requeue=*/true);
        t.st = Tracked::St::kQueued;
        continue;
      }
      t.evict_reason = std::string(d.reclaim ? "idle reclaim" : "preempted") + " for job " + std::to_string(d.for_id) +
                       " (" + std::string(tenancy::TierName(tracked_.at(d.for_id)->tier)) + " over " +
                       std::string(tenancy::TierName(t.tier)) + "; victims chosen to lose the least work)";
      t.signal_sent = false;
      if (t.running && Signals()) {
        // Checkpoint first: the signal now, the requeue once the grace period is over.
        Signal(d.id, t, now, r);
        continue;
      }
      Action a;
      a.kind = ActionKind::kRequeue;
      a.job = d.id;
      a.node = t.node;
      a.reason = t.evict_reason;
      a.commands.push_back({"scontrol", "requeuehold", std::to_string(d.id)});
      Execute(a);
      if (!a.ok && !t.running) {
        // Released but not started yet ("Job is pending execution"): hold it instead.
        a.commands = {{"scontrol", "hold", std::to_string(d.id)}};
        a.ok = true;
        a.error.clear();
        Execute(a);
      }
      t.evict_ok = a.ok;
      r.actions.push_back(std::move(a));
    }
  };
  if (!env.adopting.empty()) {
    admitter_->Cycle(now, env, &decisions);
    apply(decisions);
    decisions.clear();
    env.adopting.clear();
    // The adoption pass answered "cannot place" for every other job: not a real verdict, so
    // nothing it marked inadmissible stays parked (a job submitted while the controller was down
    // would otherwise wait for the next quota release).
    admitter_->CapacityChanged();
  }
  // Jobs admitted on quota alone wait for a node (strict / borrowing), oldest first.
  for (auto& [id, t] : tracked_) {
    if (t->st == Tracked::St::kAdmitted && t->waiting_node) Place(id, *t, now, r, "admitted earlier; a node fits now");
  }
  admitter_->Cycle(now, env, &decisions);
  apply(decisions);

  // 5. Book-keeping for the next cycle.
  std::fill(held_.begin(), held_.end(), 0.0);
  std::fill(demand_.begin(), demand_.end(), 0.0);
  for (const auto& [id, t] : tracked_) {
    if (t->st == Tracked::St::kBlocked) {
      ++r.blocked;
      continue;
    }
    const auto k = static_cast<std::size_t>(t->tenant);
    demand_[k] += t->gpus();
    if (t->st == Tracked::St::kQueued) ++r.queued;
    if (t->st == Tracked::St::kAdmitted || t->st == Tracked::St::kEvicting) {
      if (t->st == Tracked::St::kAdmitted) ++r.admitted;
      if (!t->waiting_node) held_[k] += t->gpus();
    }
  }
  if (ledger_ != nullptr) {
    // The decisions stand (they were taken); a charge failure is reported and retried next cycle.
    // Every node of the cluster: the bill covers the jobs of every partition (sacct reads them all).
    if (Status s = Charge(now, all_nodes); !s.ok()) r.notes.push_back("charges not updated: " + s.message());
    for (const std::string& node : new_unpriced_) {
      r.notes.push_back("error: node " + node + " is not charged: " + unpriced_nodes_.at(node));
    }
    new_unpriced_.clear();
  }
  // Alive and acting: the job_submit plugin keeps holding new jobs while this is fresh.
  if (!config_.slurm.heartbeat_path.empty() && !config_.dry_run) {
    if (Status s = WriteHeartbeat(config_.slurm.heartbeat_path, now); !s.ok()) r.notes.push_back(s.message());
  }
  return r;
}

CycleReport Controller::Shutdown() {
  CycleReport r;
  r.now_s = ToSeconds(clock_.Now());
  if (config_.dry_run) return r;
  // First the heartbeat: new jobs are left to Slurm from now on (the plugin fails open at once).
  if (!config_.slurm.heartbeat_path.empty() && std::remove(config_.slurm.heartbeat_path.c_str()) != 0 && errno != ENOENT) {
    r.notes.push_back("slurm.heartbeat: cannot remove " + config_.slurm.heartbeat_path + ": " + std::strerror(errno));
  }
  // Then what it holds: queued jobs and those admitted without a node yet are released to Slurm's
  // own scheduling (no node list). Jobs held for a reason (breaker, bad request) stay held.
  for (auto& [id, t] : tracked_) {
    const bool ours = t->st == Tracked::St::kQueued || (t->st == Tracked::St::kAdmitted && t->waiting_node) ||
                      (t->st == Tracked::St::kEvicting && t->evict_ok);
    if (!ours) continue;
    Action a;
    a.kind = ActionKind::kRelease;
    a.job = id;
    a.reason = "controller stopping: left to Slurm's own scheduling";
    if (t->restarts_at_release > 0 || t->st == Tracked::St::kEvicting) {
      a.commands.push_back({"scontrol", "update", "jobid=" + std::to_string(id), "StartTime=now"});
    }
    a.commands.push_back({"scontrol", "release", std::to_string(id)});
    Execute(a);
    r.actions.push_back(std::move(a));
  }
  return r;
}

std::string SacctTime(std::int64_t unix_s) {
  // sacct reads -S in the local time of the host it runs on (the controller's).
  const std::time_t t = static_cast<std::time_t>(unix_s);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

namespace {

constexpr const char* kChargeCursor = "slurm.sacct";
constexpr std::size_t kJobsPerSacct = 200;  // job ids per `sacct -j` (the command line stays short)

}  // namespace

Result<std::vector<AcctRecord>> Controller::ReadAccounting(std::optional<std::int64_t> cursor,
                                                           std::map<AllocKey, std::vector<ledger::JobAllocation>>& open) {
  std::vector<AcctRecord> recs;
  if (!config_.jobcomp_path.empty()) {
    std::ifstream in(config_.jobcomp_path);
    if (!in) return recs;  // no job has ended yet
    std::stringstream ss;
    ss << in.rdbuf();
    return ParseJobcomp(ss.str(), config_.jobcomp_path);
  }
  // Only what changed since the last cycle: sacct -S selects the jobs that ran at or after S
  // (every running job, and those that ended since S), so the read is as small as the change.
  const std::string since =
      cursor.has_value() ? SacctTime(*cursor - static_cast<std::int64_t>(config_.charge_overlap_s)) : "now-7days";
  SEEDANCE_ASSIGN_OR_RETURN(std::string text, Read({"sacct", "--json", "-D", "--allusers", "-S", since}));
  SEEDANCE_ASSIGN_OR_RETURN(recs, ParseSacctJson(text));
  // Incarnations charged as running that this read did not return ended before S (slurmdbd
  // recorded the end late): asked for by job id (sacct -j reads from the epoch).
  SEEDANCE_ASSIGN_OR_RETURN(auto stored, ledger_->OpenJobAllocations());
  for (auto& a : stored) {
    AllocKey key{a.cluster, a.job_id, a.incarnation};
    open[std::move(key)].push_back(std::move(a));
  }
  std::set<AllocKey> got;
  for (const auto& a : recs) got.insert({a.cluster, a.job_id, a.start_s});
  std::vector<std::string> missing;
  for (const auto& [key, a] : open) {
    if (!got.count(key)) missing.push_back(std::to_string(std::get<1>(key)));
  }
  missing.erase(std::unique(missing.begin(), missing.end()), missing.end());
  for (std::size_t k = 0; k < missing.size(); k += kJobsPerSacct) {
    std::string ids;
    for (std::size_t i = k; i < std::min(missing.size(), k + kJobsPerSacct); ++i) ids += (ids.empty() ? "" : ",") + missing[i];
    SEEDANCE_ASSIGN_OR_RETURN(std::string more, Read({"sacct", "--json", "-D", "--allusers", "-j", ids}));
    SEEDANCE_ASSIGN_OR_RETURN(auto extra, ParseSacctJson(more));
    recs.insert(recs.end(), extra.begin(), extra.end());
  }
  return recs;
}

Status Controller::Charge(double now, const std::vector<SlurmNode>& nodes) {
  ledger_->set_source("slurm");
  std::optional<std::int64_t> cursor;
  if (config_.jobcomp_path.empty()) {
    SEEDANCE_ASSIGN_OR_RETURN(cursor, ledger_->Cursor(kChargeCursor));
  }
  std::map<AllocKey, std::vector<ledger::JobAllocation>> open;
  SEEDANCE_ASSIGN_OR_RETURN(std::vector<AcctRecord> recs, ReadAccounting(cursor, open));
  // One transaction: the allocations, the node intervals they change and the cursor are
  // committed together or not at all (a cycle killed part-way is done again by the next one).
  SEEDANCE_RETURN_IF_ERROR(ledger_->BeginTransaction());
  Status s = ChargeInTransaction(now, nodes, recs, cursor, open);
  if (!s.ok()) {
    ledger_->Rollback();
    return s;
  }
  return ledger_->Flush();
}

Status Controller::ChargeInTransaction(double now, const std::vector<SlurmNode>& nodes,
                                       const std::vector<AcctRecord>& recs, std::optional<std::int64_t> cursor,
                                       const std::map<AllocKey, std::vector<ledger::JobAllocation>>& open) {
  const auto now_s = static_cast<std::int64_t>(now);
  std::map<std::string, cluster::GpuModelIndex> node_model;
  std::map<std::string, int> node_gpus;
  std::map<std::string, std::vector<std::string>> node_partitions;
  for (const auto& n : nodes) {
    if (auto m = ModelOfGres(n.gpus.type); m.has_value()) node_model[n.name] = *m;
    node_gpus[n.name] = n.gpus.count;
    node_partitions[n.name] = n.partitions;
  }
  // 1. Upsert each incarnation sacct reports (never delete one it stopped reporting), noting per
  // node the earliest time whose node intervals change.
  std::map<std::string, std::int64_t> changed;
  auto note = [&](const std::string& node, std::int64_t at) {
    auto [it, fresh] = changed.emplace(node, at);
    if (!fresh) it->second = std::min(it->second, at);
  };
  std::int64_t seen = cursor.value_or(0);
  std::set<AllocKey> done;
  // Later records win (the -j re-read after the -S read).
  for (auto rit = recs.rbegin(); rit != recs.rend(); ++rit) {
    const AcctRecord& r = *rit;
    if (r.node.empty() || r.gpus <= 0 || r.start_s <= 0) continue;
    if (!done.insert({r.cluster, r.job_id, r.start_s}).second) continue;
    seen = std::max({seen, r.start_s, r.end_s});
    const std::int64_t end = r.end_s > 0 ? r.end_s : now_s;
    if (end <= r.start_s) continue;
    // What was stored of this incarnation (one allocation per node).
    std::vector<ledger::JobAllocation> old;
    if (auto it = open.find({r.cluster, r.job_id, r.start_s}); it != open.end()) {
      old = it->second;
    } else {
      SEEDANCE_ASSIGN_OR_RETURN(old, ledger_->FindJobAllocations(r.cluster, r.job_id, r.start_s));
    }
    // Every node of the job holds GPUs: each node's devices as `scontrol show job -d` gave them
    // (this incarnation, read while it ran), else as stored, else the job's GPUs split evenly.
    const std::vector<std::string> where = r.nodes.empty() ? std::vector<std::string>{r.node} : r.nodes;
    const std::map<std::string, std::vector<int>>* detail = DevicesOf(r.job_id, r.start_s);
    std::vector<ledger::JobAllocation> want;
    for (std::size_t k = 0; k < where.size(); ++k) {
      const std::string& node = where[k];
      ledger::JobAllocation a;
      if (detail != nullptr && detail->count(node)) {
        a.gpu_indices = detail->at(node);
      } else if (auto o = std::find_if(old.begin(), old.end(), [&](const auto& x) { return x.node == node; }); o != old.end()) {
        a.gpu_indices = o->gpu_indices;
      }
      const int even = r.gpus / static_cast<int>(where.size()) + (static_cast<int>(k) < r.gpus % static_cast<int>(where.size()) ? 1 : 0);
      a.gpus = a.gpu_indices.empty() ? even : static_cast<int>(a.gpu_indices.size());
      if (a.gpus <= 0) continue;
      if (!node_model.count(node) && !r.gpu_type.empty()) {
        if (auto m = ModelOfGres(r.gpu_type); m.has_value()) node_model[node] = *m;
      }
      if (!node_model.count(node)) continue;  // a node we cannot price
      a.cluster = r.cluster;
      a.job_id = r.job_id;
      a.incarnation = r.start_s;
      a.node = node;
      a.start_ms = r.start_s * 1000;
      a.end_ms = end * 1000;
      a.ended = r.end_s > 0;
      a.node_gpus = std::max(node_gpus[node], a.gpus);
      if (!config_.node_pools.empty()) {
        // The node's pool (by name, else by one of its partitions): owned nodes at their owned price.
        const std::vector<std::string>& parts = node_partitions[node];
        Result<const cost::NodePool*> pool = cost::FindNodePool(config_.node_pools, {node, {}, ""},
                                                                config_.node_pools_source);
        for (std::size_t i = 0; !pool.has_value() && i < parts.size(); ++i) {
          if (auto by_part = cost::FindNodePool(config_.node_pools, {node, {}, parts[i]}, config_.node_pools_source);
              by_part.has_value()) {
            pool = by_part;
          }
        }
        if (!pool.has_value()) {
          if (unpriced_nodes_.emplace(node, pool.error().message()).second) new_unpriced_.push_back(node);
          continue;  // never a list price for a node no pool prices
        }
        if (const std::string model(gpu::GpuAt(node_model.at(node)).name); model != (*pool)->gpu_type) {
          const std::string why = "it has " + model + " GPUs and its pool '" + (*pool)->name + "' of " +
                                  config_.node_pools_source + " is " + (*pool)->gpu_type;
          if (unpriced_nodes_.emplace(node, why).second) new_unpriced_.push_back(node);
          continue;
        }
        a.price_per_gpu_hour = UsdFromDouble((*pool)->usd_per_gpu_hour);
      } else {
        const cost::GpuPrice* p = prices_.Find(node_model.at(node));
        a.price_per_gpu_hour = p != nullptr ? p->usd_per_gpu_hour : Money();
      }
      a.workload.name = "slurm-" + std::to_string(r.job_id);
      a.workload.job = a.workload.name;
      a.workload.namespace_name = r.account;
      auto acct = config_.slurm.accounts.find(r.account);
      a.workload.tenant = acct != config_.slurm.accounts.end() ? acct->second : r.account;
      if (auto ti = tenant_index_.find(a.workload.tenant); ti != tenant_index_.end()) {
        a.workload.sla_tier = std::string(tenancy::TierName(config_.tenancy.tenants[static_cast<std::size_t>(ti->second)].tier));
      }
      want.push_back(std::move(a));
    }
    for (const auto& a : want) {
      auto o = std::find_if(old.begin(), old.end(), [&](const auto& x) { return x.node == a.node; });
      if (o != old.end() && *o == a) continue;
      if (o == old.end()) {
        note(a.node, a.start_ms);
      } else if (o->start_ms != a.start_ms || o->gpus != a.gpus || o->node_gpus != a.node_gpus ||
                 o->price_per_gpu_hour != a.price_per_gpu_hour || !(o->workload == a.workload)) {
        note(a.node, std::min(o->start_ms, a.start_ms));
      } else if (o->end_ms != a.end_ms || o->ended != a.ended) {
        note(a.node, std::min(o->end_ms, a.end_ms));  // ended, or ran on
      }  // else only the device indices changed: the charges stand
      SEEDANCE_RETURN_IF_ERROR(ledger_->PutJobAllocation(a));
    }
  }
  // 2. Recompute each changed node's intervals from the first one the change touches, from the
  // stored allocations (also those sacct no longer reports).
  for (const auto& [node, at] : changed) SEEDANCE_RETURN_IF_ERROR(RechargeNode(node, at));
  if (config_.jobcomp_path.empty()) SEEDANCE_RETURN_IF_ERROR(ledger_->SetCursor(kChargeCursor, seen));
  return Status::Ok();
}

Status Controller::RechargeNode(const std::string& node, std::int64_t changed_ms) {
  // Below changed_ms the node's cuts (allocation starts and ends) are what they were, so the
  // intervals before the last cut below it stand; everything from that cut on is recorded again.
  SEEDANCE_ASSIGN_OR_RETURN(auto last, ledger_->LastCutBefore(node, changed_ms));
  const std::int64_t from = last.value_or(changed_ms);
  SEEDANCE_RETURN_IF_ERROR(ledger_->DeleteNodeCharges(node, from));
  SEEDANCE_ASSIGN_OR_RETURN(auto allocs, ledger_->JobAllocationsOnNode(node, from));
  if (allocs.empty()) return Status::Ok();
  // Workload ids: one per distinct workload (incarnations of one job share it).
  std::vector<ledger::WorkloadDims> dims;
  std::vector<std::uint32_t> wid(allocs.size());
  std::vector<std::int64_t> cuts{from};
  for (std::size_t i = 0; i < allocs.size(); ++i) {
    const auto& a = allocs[i];
    auto it = std::find(dims.begin(), dims.end(), a.workload);
    if (it == dims.end()) it = dims.insert(dims.end(), a.workload);
    wid[i] = static_cast<std::uint32_t>(it - dims.begin()) + 1;
    if (a.start_ms > from) cuts.push_back(a.start_ms);
    cuts.push_back(a.end_ms);
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::vector<ledger::GpuUse> holders;
  for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
    holders.clear();
    std::int64_t gpus = 0, price = 0;
    for (std::size_t i = 0; i < allocs.size(); ++i) {
      const auto& a = allocs[i];
      if (a.start_ms > cuts[k] || a.end_ms < cuts[k + 1]) continue;
      auto h = std::find_if(holders.begin(), holders.end(), [&](const ledger::GpuUse& u) { return u.workload == wid[i]; });
      if (h == holders.end()) {
        holders.push_back({wid[i], a.gpus * 1000LL, 0, 1000, false});
      } else {
        h->request_milli += a.gpus * 1000LL;
      }
      gpus = std::max<std::int64_t>(gpus, a.node_gpus);
      price = std::max(price, a.price_per_gpu_hour.raw());
    }
    if (holders.empty()) continue;  // nobody on the node: not billed to any account
    std::sort(holders.begin(), holders.end(), [](const ledger::GpuUse& a, const ledger::GpuUse& b) { return a.workload < b.workload; });
    ledger::NodeInterval ni;
    ni.start_ms = cuts[k];
    ni.end_ms = cuts[k + 1];
    // The node's GPUs for the interval at the price table's on-demand price (128-bit: exact).
    const Int128 micro = static_cast<Int128>(price) * gpus * (ni.end_ms - ni.start_ms) / 3'600'000;
    ni.bill = MicroUsd(static_cast<std::int64_t>(micro));
    ni.capacity_milli = gpus * 1000;
    ni.uses = holders;
    SEEDANCE_RETURN_IF_ERROR(ledger::RecordAllocatedInterval(*ledger_, ni, ledger::IdleShare::kNone, node,
                                                             [&](std::uint32_t id) -> const ledger::WorkloadDims& { return dims.at(id - 1); }));
  }
  return Status::Ok();
}

namespace {
constexpr std::size_t kJobsPerDetailRead = 32;  // more new incarnations: one `scontrol show job -d` for all
}  // namespace

void Controller::Observe(const std::vector<SlurmJob>& others, CycleReport& r) {
  std::set<std::int64_t> running;
  for (const SlurmJob& j : others) {
    if (j.gpus.count <= 0) continue;
    running.insert(j.id);
    auto [it, fresh] = observed_.try_emplace(j.id);
    it->second.start_s = static_cast<double>(j.start_s);  // a new start: its devices are read again
    if (fresh) {
      r.notes.push_back("job " + std::to_string(j.id) + ": partition " + j.partition +
                        " is not managed: observed for charges and GPU telemetry only");
    }
  }
  std::erase_if(observed_, [&](const auto& o) { return !running.count(o.first); });
}

const std::map<std::string, std::vector<int>>* Controller::DevicesOf(std::int64_t id, std::int64_t start_s) const {
  const double start = static_cast<double>(start_s);
  if (auto t = tracked_.find(id); t != tracked_.end() && t->second->gpu_start_s == start) return &t->second->node_gpus;
  if (auto o = observed_.find(id); o != observed_.end() && o->second.gpu_start_s == start) return &o->second.node_gpus;
  return nullptr;
}

void Controller::ReadGpuDetail(CycleReport& r) {
  std::set<std::int64_t> want;
  for (const auto& [id, t] : tracked_) {
    if (t->running && t->pod.num_gpu > 0 && t->gpu_start_s != t->start_s) want.insert(id);
  }
  for (const auto& [id, o] : observed_) {
    if (o.gpu_start_s != o.start_s) want.insert(id);
  }
  if (want.empty()) return;
  std::vector<std::vector<std::string>> reads;
  if (want.size() <= kJobsPerDetailRead) {
    for (std::int64_t id : want) reads.push_back({"scontrol", "show", "job", "-d", std::to_string(id)});
  } else {
    reads.push_back({"scontrol", "show", "job", "-d"});
  }
  for (const auto& argv : reads) {
    auto text = Read(argv);
    Result<std::vector<JobGpuDetail>> details = text.has_value() ? ParseScontrolJobDetail(*text) : text.error();
    if (!details.has_value()) {
      // Read again next cycle; until then the job's GPU telemetry is not joined (its charges stand).
      r.notes.push_back("GPU devices not read: " + details.error().message());
      continue;
    }
    for (auto& d : *details) {
      // Read once per incarnation, also when Slurm names no devices (GRES without File=: IDX:N/A).
      if (d.state != "RUNNING") continue;
      if (auto it = tracked_.find(d.id); it != tracked_.end() && it->second->running) {
        it->second->node_gpus = std::move(d.node_gpus);
        it->second->gpu_start_s = it->second->start_s;
      } else if (auto o = observed_.find(d.id); o != observed_.end()) {
        o->second.node_gpus = std::move(d.node_gpus);
        o->second.gpu_start_s = o->second.start_s;
      }
    }
  }
}

Status Controller::ReadGpuTelemetry(double now) {
  SEEDANCE_ASSIGN_OR_RETURN(auto hosts, ledger::TelemetryNodes(*ledger_));
  const std::set<std::string> with_telemetry(hosts.begin(), hosts.end());
  // The idle time only matters up to the longest tier trigger: read twice that, not the whole run.
  double horizon_s = 0;
  for (const auto& p : config_.tenancy.tiers) horizon_s = std::max({horizon_s, p.reclaim_after_s, p.max_idle_s});
  const auto now_ms = static_cast<std::int64_t>(now * 1000);
  bool newly_idle = false;
  for (auto& [id, t] : tracked_) {
    const double before = t->idle_s;
    t->idle_s = 0;
    if (!t->running || t->gpu_start_s != t->start_s) continue;
    std::vector<ledger::NodeGpu> gpus;
    for (const auto& [node, idx] : t->node_gpus) {
      if (!with_telemetry.count(node)) continue;
      for (int i : idx) gpus.push_back({node, i});
    }
    if (gpus.empty()) continue;
    const std::int64_t from = std::max(static_cast<std::int64_t>(t->start_s * 1000), now_ms - static_cast<std::int64_t>(2 * horizon_s * 1000));
    const auto& tier = config_.tenancy.tiers[static_cast<std::size_t>(t->tier)];
    SEEDANCE_ASSIGN_OR_RETURN(auto act, ledger::ReadGpuActivity(*ledger_, gpus, from, now_ms + 1, tier.reclaim_util_below));
    t->idle_s = act.IdleSeconds(from);
    newly_idle |= before < tier.reclaim_after_s && t->idle_s >= tier.reclaim_after_s;
  }
  // An allocation idle past its trigger may be reclaimed: what waited for a node is considered again.
  if (newly_idle) admitter_->CapacityChanged();
  return Status::Ok();
}

Status Controller::EvaluateBreaker(double now, CycleReport& r) {
  tripped_.clear();
  if (config_.slurm.breaker_default_hourly_usd <= 0 && config_.slurm.breaker_accounts.empty()) return Status::Ok();
  const std::int64_t now_ms = static_cast<std::int64_t>(now * 1000);
  const std::int64_t hour = now_ms / 3'600'000 * 3'600'000;
  SEEDANCE_ASSIGN_OR_RETURN(auto rep, ledger_->Attribute(ledger::Dimension::kNamespace, hour, hour + 3'600'000, false));
  for (const auto& row : rep.rows) {
    if (row.key.empty()) continue;
    double threshold = config_.slurm.breaker_default_hourly_usd;
    if (auto it = config_.slurm.breaker_accounts.find(row.key); it != config_.slurm.breaker_accounts.end()) threshold = it->second;
    if (threshold <= 0 || ToUsd(row.cost) <= threshold) continue;
    tripped_.insert(row.key);
    const std::string reason = "breaker: account " + row.key + " spent $" + Fixed(ToUsd(row.cost), 4) +
                               " this hour, above its $" + Fixed(threshold, 4) + "/h threshold; new jobs held";
    trip_reason_[row.key] = reason;
    if (trips_recorded_.insert({row.key, hour}).second) {
      r.notes.push_back(reason);
      SEEDANCE_RETURN_IF_ERROR(ledger_->RecordBreakerAction("account:" + row.key, hour, row.cost,
                                                            MicroUsd(static_cast<std::int64_t>(std::llround(threshold * 1e6))),
                                                            /*paused=*/true, reason));
      SEEDANCE_RETURN_IF_ERROR(ledger_->Flush());
    }
  }
  return Status::Ok();
}

}  // namespace seedance::slurm
