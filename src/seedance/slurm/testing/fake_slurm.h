#pragma once

// FakeSlurm: a CommandRunner that plays a small Slurm cluster in memory for the controller's unit
// and parity tests. It answers `sinfo --json`, `squeue --json`, `sacct --json [-S T] [-j IDS]` in Slurm
// 22.05's shape (the fields the readers use, spelled as in tests/data/slurm), `scontrol show job -d
// [ID]` and acts on `scontrol update|release|hold|requeuehold`. Simplifications (the real-cluster test covers real Slurm): a
// released job with a node list starts at once on those nodes (lowest free devices; a multi-node
// job needs exactly node_count nodes listed); a requeued job becomes PENDING at once; jobs end when
// the clock passes start + work. Host lists are written compressed ("n[1-2]") as Slurm does.

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <set>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "seedance/core/clock.h"
#include "seedance/core/process.h"
#include "seedance/tenancy/tiers.h"

namespace seedance::slurm::testing {

// A tenant of cohort "all" with a quota of `gpus` GPUs of any model (what the controller maps
// accounts to).
inline tenancy::TenantConfig Tenant(const std::string& name, tenancy::Tier tier, double gpus) {
  tenancy::TenantConfig t;
  t.name = name;
  t.cohort = "all";
  t.tier = tier;
  t.quota.push_back({"gpu", gpus, std::nullopt, std::nullopt});
  return t;
}

class FakeSlurm final : public CommandRunner {
 public:
  struct Node {
    std::string name;
    std::string type;  // GRES type
    int gpus = 0;
    int cpus = 96;
    std::int64_t memory_mib = 786432;
    bool drain = false;
    bool down = false;
    std::string reason;
    std::vector<bool> used;
    std::vector<std::string> partitions = {"gpu"};
  };
  struct Job {
    std::int64_t id = 0;
    std::string account;
    std::string state = "PENDING";
    std::string reason = "JobHeldUser";
    std::string comment;
    std::string gres_type;  // as submitted ("" = any)
    int gpus = 0;            // per node
    int node_count = 1;
    std::string required;    // as given to scontrol update nodelist= ("n1,n2")
    std::string node;        // where it runs: node names joined by ','
    std::vector<std::vector<int>> idx;  // devices per node of `node`
    int restarts = 0;
    std::int64_t submit_s = 0;
    std::int64_t start_s = 0;
    double work_s = 0;
    std::string partition = "gpu";
  };
  struct Incarnation {
    std::int64_t job = 0;
    std::string account, state, node, type;
    int gpus = 0;
    std::int64_t start_s = 0, end_s = 0;
  };

  explicit FakeSlurm(const Clock& clock) : clock_(clock) {}

  void AddNode(const std::string& name, const std::string& type, int gpus,
               std::vector<std::string> partitions = {"gpu"}) {
    Node n;
    n.name = name;
    n.type = type;
    n.gpus = gpus;
    n.partitions = std::move(partitions);
    n.used.assign(static_cast<std::size_t>(gpus), false);
    nodes_.push_back(n);
  }
  std::int64_t Submit(const std::string& account, int gpus, const std::string& type, double work_s, bool held = true,
                      int node_count = 1) {
    Job j;
    j.id = next_id_++;
    j.account = account;
    j.gpus = gpus;
    j.node_count = node_count;
    j.gres_type = type;
    j.work_s = work_s;
    j.submit_s = Now();
    if (!held) j.reason = "None";
    jobs_[j.id] = j;
    return j.id;
  }
  // Ends jobs whose work is done by now.
  void Advance() {
    for (auto& [id, j] : jobs_) {
      if (j.state == "RUNNING" && static_cast<double>(j.start_s) + j.work_s <= static_cast<double>(Now())) {
        Stop(j, "COMPLETED", static_cast<std::int64_t>(static_cast<double>(j.start_s) + j.work_s));
        j.state = "COMPLETED";
        j.reason = "None";
      }
    }
  }
  // The node's slurmd dies: the node goes down and its jobs are requeued (pending, not held).
  void KillNode(const std::string& name) {
    Node& n = NodeNamed(name);
    n.down = true;
    for (auto& [id, j] : jobs_) {
      if (j.state != "RUNNING" || !OnNode(j, name)) continue;
      Stop(j, "NODE_FAIL", Now());
      j.state = "PENDING";
      j.reason = "BeginTime";
      ++j.restarts;
    }
  }
  void ReviveNode(const std::string& name) { NodeNamed(name).down = false; }
  // Starts pending job `id` on `node` now, as if released there (a cluster's state for tests
  // that do not go through the controller's releases). False when it does not fit.
  bool StartOn(std::int64_t id, const std::string& node) {
    Job& j = jobs_.at(id);
    j.required = node;
    j.reason = "None";
    TryStart(j);
    return j.state == "RUNNING";
  }
  // A finished incarnation from before the test (accounting history only).
  void AddHistory(std::int64_t job, const std::string& account, const std::string& node, const std::string& type,
                  int gpus, std::int64_t start_s, std::int64_t end_s, const std::string& state = "COMPLETED") {
    incarnations_.push_back({job, account, state, node, type, gpus, start_s, end_s});
    next_id_ = std::max(next_id_, job + 1);
  }
  // Job ids sacct never reports again (purged from slurmdbd, or a lagging slurmdbd).
  std::set<std::int64_t> sacct_forgets;
  // sacct's TRES without the typed GPU entry (AccountingStorageTRES=gres/gpu, Slurm's usual
  // setting): the model is known only from the node.
  bool sacct_untyped = false;

  Result<CommandResult> Run(const std::vector<std::string>& argv) override {
    log.push_back(argv);
    if (fail && fail(argv)) {
      return CommandResult{1, "", std::string(argv[0]) + ": error: Unable to contact slurm controller (connect failure)\n"};
    }
    const std::string& cmd = argv[0];
    if (cmd == "sinfo") return CommandResult{0, SinfoJson(), ""};
    if (cmd == "squeue") return CommandResult{0, squeue_override.empty() ? SqueueJson() : squeue_override, ""};
    if (cmd == "sacct") return Sacct(argv);
    if (cmd == "scontrol") return Scontrol(argv);
    if (cmd == "scancel") return Scancel(argv);
    return CommandResult{127, "", cmd + ": not found\n"};
  }

  // Mutating commands run so far (scontrol, scancel), for "no action" checks.
  std::vector<std::vector<std::string>> Mutations() const {
    std::vector<std::vector<std::string>> out;
    for (const auto& c : log)
      if (c[0] == "scontrol" || c[0] == "scancel") out.push_back(c);
    return out;
  }

  std::map<std::int64_t, Job>& jobs() { return jobs_; }
  std::vector<Node>& nodes() { return nodes_; }
  const std::vector<Incarnation>& incarnations() const { return incarnations_; }
  // Every signal sent (job, signal, time), in order.
  std::vector<std::tuple<std::int64_t, std::string, std::int64_t>> signals;
  // Every start (job, node, time), in order.
  std::vector<std::tuple<std::int64_t, std::string, std::int64_t>> starts;

  std::vector<std::vector<std::string>> log;
  std::function<bool(const std::vector<std::string>&)> fail;
  std::string squeue_override;

 private:
  std::int64_t Now() const { return static_cast<std::int64_t>(ToSeconds(clock_.Now())); }
  Node& NodeNamed(const std::string& name) {
    for (auto& n : nodes_)
      if (n.name == name) return n;
    throw std::runtime_error("FakeSlurm: no node " + name);
  }
 public:
  // "n1,n2" -> {n1, n2}.
  static std::vector<std::string> Split(const std::string& list) {
    std::vector<std::string> out;
    std::string cur;
    for (std::size_t i = 0; i <= list.size(); ++i) {
      if (i == list.size() || list[i] == ',') {
        if (!cur.empty()) out.push_back(cur);
        cur.clear();
      } else {
        cur += list[i];
      }
    }
    return out;
  }

  static bool OnNode(const Job& j, const std::string& name) {
    const auto v = Split(j.node);
    return std::find(v.begin(), v.end(), name) != v.end();
  }
  // "n1,n2,n3,n7" -> "n[1-3,7]" (names of one prefix and a number; others stay as they are).
  static std::string Compress(const std::string& list) {
    const auto names = Split(list);
    if (names.size() < 2) return list;
    std::string prefix;
    std::vector<long> nums;
    for (const auto& n : names) {
      const auto k = n.find_last_not_of("0123456789");
      if (k == std::string::npos || k + 1 == n.size() || n[k + 1] == '0') return list;
      if (prefix.empty()) prefix = n.substr(0, k + 1);
      if (n.substr(0, k + 1) != prefix) return list;
      nums.push_back(std::stol(n.substr(k + 1)));
    }
    std::sort(nums.begin(), nums.end());
    std::string out = prefix + "[";
    for (std::size_t i = 0; i < nums.size();) {
      std::size_t e = i;
      while (e + 1 < nums.size() && nums[e + 1] == nums[e] + 1) ++e;
      out += (i > 0 ? "," : "") + std::to_string(nums[i]) + (e > i ? "-" + std::to_string(nums[e]) : "");
      i = e + 1;
    }
    return out + "]";
  }

 private:
  void Stop(Job& j, const std::string& state, std::int64_t end) {
    const auto names = Split(j.node);
    for (std::size_t k = 0; k < names.size(); ++k) {
      Node& n = NodeNamed(names[k]);
      for (int d : j.idx[k]) n.used[static_cast<std::size_t>(d)] = false;
    }
    incarnations_.push_back({j.id, j.account, state, Compress(j.node), TypeOf(j), j.gpus * j.node_count, j.start_s, end});
    j.node.clear();
    j.idx.clear();
  }
  std::string TypeOf(const Job& j) const {
    if (!j.gres_type.empty()) return j.gres_type;
    const auto names = Split(j.node);
    for (const auto& n : nodes_)
      if (!names.empty() && n.name == names[0]) return n.type;
    return "";
  }
  void TryStart(Job& j) {
    if (j.state != "PENDING" || j.reason != "None" || j.required.empty()) return;
    const auto names = Split(j.required);
    if (static_cast<int>(names.size()) != j.node_count) return;  // Slurm would pick the rest itself
    std::vector<std::vector<int>> all;
    for (const auto& name : names) {
      Node& n = NodeNamed(name);
      if (n.down || n.drain || (!j.gres_type.empty() && j.gres_type != n.type)) return;
      std::vector<int> idx;
      for (int d = 0; d < n.gpus && static_cast<int>(idx.size()) < j.gpus; ++d)
        if (!n.used[static_cast<std::size_t>(d)]) idx.push_back(d);
      if (static_cast<int>(idx.size()) < j.gpus) return;
      all.push_back(std::move(idx));
    }
    for (std::size_t k = 0; k < names.size(); ++k)
      for (int d : all[k]) NodeNamed(names[k]).used[static_cast<std::size_t>(d)] = true;
    j.idx = std::move(all);
    j.node = j.required;
    j.state = "RUNNING";
    j.reason = "None";
    j.start_s = Now();
    starts.emplace_back(j.id, j.node, j.start_s);
  }
  // scancel --signal=SIG --batch J: recorded in `signals`; the job keeps running.
  Result<CommandResult> Scancel(const std::vector<std::string>& argv) {
    if (argv.size() != 4 || argv[1].rfind("--signal=", 0) != 0 || argv[2] != "--batch") {
      return CommandResult{1, "", "scancel: unsupported in FakeSlurm\n"};
    }
    auto it = jobs_.find(std::stoll(argv[3]));
    if (it == jobs_.end() || it->second.state != "RUNNING") {
      return CommandResult{1, "", "scancel: error: Kill job error on job id " + argv[3] + ": Job is pending execution\n"};
    }
    signals.emplace_back(it->first, argv[1].substr(9), Now());
    return CommandResult{0, "", ""};
  }
  Result<CommandResult> Scontrol(const std::vector<std::string>& argv) {
    auto job_of = [&](const std::string& s) -> Job* {
      auto it = jobs_.find(std::stoll(s));
      return it == jobs_.end() ? nullptr : &it->second;
    };
    const std::string& sub = argv.at(1);
    if (sub == "show" && argv.size() >= 4 && argv[2] == "job" && argv[3] == "-d") {
      if (argv.size() == 4) return CommandResult{0, ShowJobDetail(0), ""};
      Job* j = job_of(argv[4]);
      if (j == nullptr) return CommandResult{1, "", "slurm_load_jobs error: Invalid job id specified\n"};
      return CommandResult{0, ShowJobDetail(j->id), ""};
    }
    if (sub == "release" || sub == "hold" || sub == "requeuehold") {
      Job* j = job_of(argv.at(2));
      if (j == nullptr) return CommandResult{1, "", "Invalid job id specified\n"};
      if (sub == "hold") {
        if (j->state == "PENDING") j->reason = "JobHeldAdmin";
      } else if (sub == "release") {
        if (j->state == "PENDING" && j->reason != "BeginTime") j->reason = "None";
        TryStart(*j);
      } else {
        if (j->state != "RUNNING") return CommandResult{1, "", "Job is pending execution\n"};
        Stop(*j, "REQUEUED", Now());
        j->state = "PENDING";
        j->reason = "job requeued in held state";
        ++j->restarts;
      }
      return CommandResult{0, "", ""};
    }
    if (sub == "update") {
      const std::string& target = argv.at(2);
      if (target.rfind("jobid=", 0) == 0) {
        Job* j = job_of(target.substr(6));
        if (j == nullptr) return CommandResult{1, "", "Invalid job id specified\n"};
        for (std::size_t k = 3; k < argv.size(); ++k) {
          const std::string& kv = argv[k];
          const auto eq = kv.find('=');
          const std::string key = kv.substr(0, eq), value = kv.substr(eq + 1);
          if (key == "nodelist") j->required = value;
          if (key == "comment") j->comment = value;
          if (key == "StartTime" && value == "now" && j->reason == "BeginTime") j->reason = "None";
        }
        return CommandResult{0, "", ""};
      }
      if (target.rfind("nodename=", 0) == 0) {
        Node& n = NodeNamed(target.substr(9));
        for (std::size_t k = 3; k < argv.size(); ++k) {
          if (argv[k] == "state=drain") n.drain = true;
          if (argv[k] == "state=resume") {
            n.drain = false;
            n.reason.clear();
          }
          if (argv[k].rfind("reason=", 0) == 0) n.reason = argv[k].substr(7);
        }
        return CommandResult{0, "", ""};
      }
    }
    return CommandResult{1, "", "scontrol: unsupported in FakeSlurm\n"};
  }
  // `scontrol show job -d [ID]` in 22.05's layout (tests/data/slurm/scontrol_show_job_d.txt), the
  // lines the controller reads and a few around them; consecutive nodes with the same devices
  // share one "Nodes=" line as Slurm writes them. id 0 = every job.
  std::string ShowJobDetail(std::int64_t only) const {
    std::string out;
    for (const auto& [id, j] : jobs_) {
      if (only != 0 && id != only) continue;
      out += "JobId=" + std::to_string(id) + " JobName=job" + std::to_string(id) + "\n";
      out += "   Priority=1 Nice=0 Account=" + j.account + " QOS=normal\n";
      out += "   JobState=" + j.state + " Reason=" + j.reason + " Dependency=(null)\n";
      out += "   NodeList=" + Compress(j.node) + "\n";
      out += "   NumNodes=" + std::to_string(j.node_count) + " NumCPUs=1 NumTasks=1 CPUs/Task=1\n";
      const auto names = Split(j.node);
      if (!names.empty()) out += "   JOB_GRES=gpu:" + TypeOf(j) + ":" + std::to_string(j.gpus * j.node_count) + "\n";
      for (std::size_t k = 0; k < names.size();) {
        std::size_t e = k;
        while (e + 1 < names.size() && j.idx[e + 1] == j.idx[k]) ++e;
        std::string group, list;
        for (std::size_t i = k; i <= e; ++i) group += (group.empty() ? "" : ",") + names[i];
        for (int d : j.idx[k]) list += (list.empty() ? "" : ",") + std::to_string(d);
        out += "     Nodes=" + Compress(group) + " CPU_IDs=0 Mem=0 GRES=gpu:" + TypeOf(j) + ":" +
               std::to_string(j.idx[k].size()) + "(IDX:" + list + ")\n";
        k = e + 1;
      }
      out += "   TresPerNode=gres:gpu:" + (j.gres_type.empty() ? "" : j.gres_type + ":") + std::to_string(j.gpus) + "\n\n";
    }
    return out;
  }
  std::string SinfoJson() const {
    nlohmann::json nodes = nlohmann::json::array();
    for (const auto& n : nodes_) {
      const auto used = std::count(n.used.begin(), n.used.end(), true);
      nlohmann::json flags = nlohmann::json::array();
      if (n.drain) flags.push_back("DRAIN");
      if (n.down) flags.push_back("NOT_RESPONDING");
      nodes.push_back({{"name", n.name},
                       {"state", n.down ? "down" : used == 0 ? "idle" : used == n.gpus ? "allocated" : "mixed"},
                       {"state_flags", flags},
                       {"reason", n.reason},
                       {"gres", "gpu:" + n.type + ":" + std::to_string(n.gpus)},
                       {"cpus", n.cpus},
                       {"real_memory", n.memory_mib},
                       {"partitions", n.partitions}});
    }
    return nlohmann::json{{"meta", nlohmann::json::object()}, {"errors", nlohmann::json::array()}, {"nodes", nodes}}.dump();
  }
  std::string SqueueJson() const {
    nlohmann::json jobs = nlohmann::json::array();
    for (const auto& [id, j] : jobs_) {
      nlohmann::json detail = nlohmann::json::array();
      for (const auto& idx : j.idx) {
        std::string list;
        for (int d : idx) list += (list.empty() ? "" : ",") + std::to_string(d);
        detail.push_back("gpu:" + TypeOf(j) + ":" + std::to_string(j.gpus) + "(IDX:" + list + ")");
      }
      jobs.push_back({{"job_id", id},
                      {"name", "job" + std::to_string(id)},
                      {"account", j.account},
                      {"partition", j.partition},
                      {"job_state", j.state},
                      {"state_reason", j.reason},
                      {"comment", j.comment},
                      {"nodes", Compress(j.node)},
                      {"required_nodes", Compress(j.required)},
                      {"features", ""},
                      {"tres_per_node", j.gpus == 0 ? "" : "gres:gpu:" + (j.gres_type.empty() ? "" : j.gres_type + ":") + std::to_string(j.gpus)},
                      {"gres_detail", detail},
                      {"node_count", j.node_count},
                      {"cpus", 1},
                      {"memory_per_node", nullptr},
                      {"restart_cnt", j.restarts},
                      {"submit_time", j.submit_s},
                      {"start_time", j.start_s},
                      {"priority", 1}});
    }
    return nlohmann::json{{"meta", nlohmann::json::object()}, {"errors", nlohmann::json::array()}, {"jobs", jobs}}.dump();
  }
  // sacct --json [-S time] [-j id,...]: -S (local time, or now-Ndays) keeps incarnations that
  // were running at or after it; -j keeps those jobs (from the epoch).
  Result<CommandResult> Sacct(const std::vector<std::string>& argv) const {
    std::int64_t since = Now() - 86'400;  // sacct's default: midnight today (a day here)
    std::set<std::int64_t> ids;
    for (std::size_t k = 1; k + 1 < argv.size(); ++k) {
      const std::string& v = argv[k + 1];
      if (argv[k] == "-S") {
        if (v.rfind("now-", 0) == 0 && v.size() > 8 && v.substr(v.size() - 4) == "days") {
          since = Now() - std::stoll(v.substr(4, v.size() - 8)) * 86'400;
        } else {
          std::tm tm{};
          if (strptime(v.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) == nullptr) {
            return CommandResult{1, "", "sacct: error: Invalid time specification: " + v + "\n"};
          }
          tm.tm_isdst = -1;
          since = static_cast<std::int64_t>(std::mktime(&tm));
        }
      }
      if (argv[k] == "-j") {
        std::string id;
        for (std::size_t i = 0; i <= v.size(); ++i) {
          if (i == v.size() || v[i] == ',') {
            ids.insert(std::stoll(id));
            id.clear();
          } else {
            id += v[i];
          }
        }
      }
    }
    if (!ids.empty()) since = 0;
    return CommandResult{0, SacctJson(since, ids), ""};
  }
  std::string SacctJson(std::int64_t since, const std::set<std::int64_t>& ids) const {
    nlohmann::json jobs = nlohmann::json::array();
    auto add = [&](std::int64_t id, const std::string& account, const std::string& state, const std::string& node,
                   const std::string& type, int gpus, std::int64_t start, std::int64_t end) {
      if (sacct_forgets.count(id) || (!ids.empty() && !ids.count(id)) || (end > 0 && end < since)) return;
      jobs.push_back({{"job_id", id},
                      {"cluster", "fake"},
                      {"account", account},
                      {"nodes", node},
                      {"state", {{"current", state}, {"reason", "None"}}},
                      {"time", {{"start", start}, {"end", end}, {"elapsed", end > 0 ? end - start : 0}}},
                      {"tres", {{"allocated", sacct_untyped ? nlohmann::json::array({{{"type", "gres"}, {"name", "gpu"}, {"id", 1001}, {"count", gpus}}})
                                                            : nlohmann::json::array({{{"type", "gres"}, {"name", "gpu"}, {"id", 1001}, {"count", gpus}},
                                                                                     {{"type", "gres"}, {"name", "gpu:" + type}, {"id", 1002}, {"count", gpus}}})}}}});
    };
    for (const auto& i : incarnations_) add(i.job, i.account, i.state, i.node, i.type, i.gpus, i.start_s, i.end_s);
    for (const auto& [id, j] : jobs_)
      if (j.state == "RUNNING") add(id, j.account, "RUNNING", Compress(j.node), TypeOf(j), j.gpus * j.node_count, j.start_s, 0);
    return nlohmann::json{{"meta", nlohmann::json::object()}, {"errors", nlohmann::json::array()}, {"jobs", jobs}}.dump();
  }

  const Clock& clock_;
  std::vector<Node> nodes_;
  std::map<std::int64_t, Job> jobs_;
  std::vector<Incarnation> incarnations_;
  std::int64_t next_id_ = 1;
};

}  // namespace seedance::slurm::testing
