// /v1/workloads: the tenancy Admitter (the admission step `cost-benchmark --tenancy` and
// `bench kueue` drive in simulation) driven online over HTTP, with the server's wall clock.
//
//   POST   /v1/workloads           {"workloads":[{"namespace","name","uid","tenant","priority","tier",
//                                    "request":{res: qty},"creation_time"}]}   submit, then one cycle
//   POST   /v1/workloads/finished  {"workloads":["namespace/name",...]}  an admitted workload ended
//   POST   /v1/workloads/evicted   {"workloads":["namespace/name",...]}  an evicted one left its node
//   DELETE /v1/workloads/{namespace}/{name}[?uid=]   withdraw: pending leaves its queue, admitted or
//                                                   evicting returns its quota; then one cycle
//   GET    /v1/workloads/{namespace}/{name}[?uid=]   state and decision history
//   GET    /v1/workloads?since=SEQ[&limit=N]         every decision after SEQ (a lost response)
//   GET    /v1/workloads/stats
// Every write answers with the admit/evict decisions it caused, in decision order:
//   {"decisions":[{"seq":..,"kind":"admit","namespace":..,"name":..,"uid":..,"borrowing":false},
//                 {"seq":..,"kind":"evict",..,"for":"ns/name","reclaim":false}],"pending":N,"admitted":M}
// so a client (Kueue's test runner in `bench kueue --online`, or a Slurm/Kueue adapter) acts on
// them without polling.
//
// Decisions are state (issue 26): every state change (submit, admit, evict, requeue, finish,
// withdraw) is written to the ledger (ledger::AdmissionLog) in one transaction before the
// response; if the write fails the client gets 503 and the part reloads its state from the
// ledger, so memory never holds a decision the ledger lacks. On start the Admitter is rebuilt
// from the ledger's live rows (Admitter::Restore). Only live workloads stay in memory, at most
// server.admission_max_workloads (429 past it).
//
// Replicas (issue 26): with --admission-db postgresql://... the replicas share one admission log.
// Only the leader decides: with --leader-elect a replica takes the log over (AdmissionLog::
// TakeOver: a new fencing epoch) and rebuilds its Admitter from it when it gains the Lease, and
// /readyz names "admission" until that is done; a follower answers 503. A replica whose commit is
// refused because another took the log over since (a deposed leader that has not noticed yet)
// answers 503 with the reason, drops its state and decides nothing until it leads again.
//
// Quota admission only: node placement is the extender's (kube-scheduler calls /extender/* for
// the pods of an admitted workload), so the environment here answers that every workload can be
// placed, as in Kueue's own scenario.

#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <httplib.h>

#include "seedance/core/json_depth.h"
#include "seedance/ledger/admission_log.h"
#include "seedance/server/app.h"
#include "seedance/server/extender_codec.h"
#include "seedance/tenancy/admission.h"
#include "seedance/tenancy/quota.h"

namespace seedance::server {
namespace {

using ledger::AdmissionDecisionRow;
using ledger::AdmissionWorkloadRow;
using nlohmann::json;
using tenancy::AdmissionDecision;

constexpr std::size_t kMaxBatch = 10'000;     // workloads per request
constexpr std::size_t kMaxNameBytes = 253;    // a Kubernetes object name (DNS-1123 subdomain)
constexpr std::size_t kMaxNamespaceBytes = 63;  // a Kubernetes namespace (DNS-1123 label)
constexpr std::size_t kMaxUidBytes = 128;
constexpr std::size_t kDefaultSinceLimit = 1000, kMaxSinceLimit = 10'000;
constexpr const char* kDefaultNamespace = "default";

// Kubernetes' DNS-1123 rules: lower-case alphanumerics and '-' (a label; a subdomain also '.'),
// starting and ending with an alphanumeric.
bool IsDnsName(std::string_view s, std::size_t max_bytes, bool dots) {
  if (s.empty() || s.size() > max_bytes) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(s.front()) || !alnum(s.back())) return false;
  for (char c : s)
    if (!alnum(c) && c != '-' && !(dots && c == '.')) return false;
  return true;
}

// The driver side the Admitter asks: no nodes here (see the file comment); running state from
// the admission records (no checkpoint telemetry: a preemption is assumed to lose all the work
// since admission).
class OnlineEnv final : public tenancy::AdmissionEnv {
 public:
  OnlineEnv(const std::unordered_map<std::int64_t, AdmissionWorkloadRow>& live, double now) : live_(live), now_(now) {}
  tenancy::RunningState Running(std::int64_t id) const override {
    tenancy::RunningState s;
    auto it = live_.find(id);
    if (it != live_.end() && it->second.state == "admitted") {
      s.admitted_at_s = it->second.admitted_at_s;
      s.executed_s = std::max(0.0, now_ - it->second.admitted_at_s);
      s.lost_if_preempted = s.executed_s;
    }
    return s;
  }
  bool CanPlace(const tenancy::WorkloadRequest& /*w*/) override { return true; }
  std::optional<std::vector<std::int64_t>> VictimsForFit(const tenancy::WorkloadRequest& /*w*/,
                                                         std::span<const tenancy::VictimCandidate> /*c*/) override {
    return std::nullopt;  // quota preemption only; nodes are the extender's
  }

 private:
  const std::unordered_map<std::int64_t, AdmissionWorkloadRow>& live_;
  double now_;
};

struct BadField {
  std::string field, message;
};

// One submitted workload, parsed.
struct Submission {
  std::string ns, name, uid;  // uid empty: not given
  tenancy::WorkloadRequest w;
  std::string request_json;
};

// What one request changes, committed to the ledger as one transaction before the answer.
struct Txn {
  std::set<std::int64_t> touched;          // live rows changed
  std::vector<AdmissionWorkloadRow> gone;  // rows that left memory (finished, withdrawn)
  std::vector<AdmissionDecisionRow> decisions;
};

std::string KeyOf(std::string_view ns, std::string_view name) {
  std::string k(ns);
  k += '/';
  k += name;
  return k;
}

json DecisionJson(const AdmissionDecisionRow& d) {
  json j = {{"seq", d.seq},          {"kind", d.kind}, {"namespace", d.namespace_name}, {"name", d.name},
            {"uid", d.uid},          {"reason", d.reason}, {"at_ms", d.at_ms}};
  json detail = json::parse(d.detail_json.empty() ? std::string("{}") : d.detail_json, nullptr, false);
  if (detail.is_object())
    for (const auto& [k, v] : detail.items()) j[k] = v;
  return j;
}

}  // namespace

namespace {

class AdmissionService final : public Service {
 public:
  explicit AdmissionService(App& app) : app_(app) {
    app_.metrics.DeclareCounter("seedance_admission_decisions_total",
                                "Admission decisions of /v1/workloads by kind (admit, evict).");
    app_.metrics.DeclareCounter("seedance_admission_decisions_persisted_total",
                                "Admission state changes written to the ledger before any client heard of them, "
                                "by kind (submit, admit, evict, requeue, finish, withdraw).");
    app_.metrics.DeclareCounter("seedance_admission_persist_errors_total",
                                "Ledger writes of admission decisions that failed (the request got 503 and the "
                                "state was reloaded from the ledger).");
    app_.metrics.DeclareCounter("seedance_admission_fenced_total",
                                "Admission commits refused because another replica took the shared admission log "
                                "over (this replica dropped its state; the request got 503).");
    app_.metrics.DeclareCounter("seedance_admission_refused_total",
                                "Submissions refused because server.admission_max_workloads live workloads are tracked.");
    app_.metrics.DeclareHistogram("seedance_admission_persist_seconds",
                                  "Wall time of one ledger transaction of admission decisions (fsync included).",
                                  {100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 100e-3, 1.0});
    app_.metrics.DeclareGauge("seedance_admission_pending", "Workloads waiting for admission.");
    app_.metrics.DeclareGauge("seedance_admission_admitted", "Workloads admitted and not finished.");
    app_.metrics.DeclareGauge("seedance_admission_tracked",
                              "Live workloads (pending, admitted, evicting) held in memory; capped by "
                              "server.admission_max_workloads.");
    app_.metrics.DeclareHistogram("seedance_admission_cycle_seconds",
                                  "Wall time of one /v1/workloads request's admission cycle.",
                                  {50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 100e-3});
    elect_ = app_.options.leader_elect;
    if (elect_) {
      app_.readiness.Set("admission", false, "follower: the leader decides admission");
      app_.leadership.Subscribe([this](bool leader) { OnLeadership(leader); });
    }
  }

  void Register(httplib::Server& http) override {
    http.Post("/v1/workloads", [this](const httplib::Request& req, httplib::Response& res) { Submit(req, res); });
    http.Post("/v1/workloads/finished",
              [this](const httplib::Request& req, httplib::Response& res) { Release(req, res, /*evicted=*/false); });
    http.Post("/v1/workloads/evicted",
              [this](const httplib::Request& req, httplib::Response& res) { Release(req, res, /*evicted=*/true); });
    http.Get("/v1/workloads/stats", [this](const httplib::Request&, httplib::Response& res) { Stats(res); });
    http.Get("/v1/workloads", [this](const httplib::Request& req, httplib::Response& res) { Since(req, res); });
    http.Get(R"(/v1/workloads/([^/]+)/([^/]+))",
             [this](const httplib::Request& req, httplib::Response& res) { Show(req, res); });
    http.Delete(R"(/v1/workloads/([^/]+)/([^/]+))",
                [this](const httplib::Request& req, httplib::Response& res) { Withdraw(req, res); });
  }

  Status CheckConfig(const ServerConfig& config) override {
    if (!tenancy::ParseTenancyMode(config.admission_mode))
      return InvalidArgumentError("server.admission_mode: unknown mode '" + config.admission_mode +
                                  "' (strict, borrowing, seedance, kueue)");
    auto book = tenancy::QuotaBook::Build(config.tenancy.tenants, /*allow_borrowing=*/true);
    if (!book.has_value()) return book.error();
    return Status::Ok();
  }

  // A new quota takes effect at once when no workload is live; otherwise the running book stays
  // until they are done (the Admitter's usage cannot be carried over to new quotas without
  // re-deciding what is admitted), and the reload says so in the log. The cap applies at once.
  void ApplyConfig(const std::shared_ptr<const ServerConfig>& config) override {
    std::lock_guard lock(mu_);
    max_workloads_ = config->admission_max_workloads;
    if (!live_.empty()) {
      deferred_ = config;
      app_.Log("warn", "admission_config_deferred",
               {{"reason", "workloads are queued or admitted; the new quotas apply when they are done"},
                {"known", live_.size()}});
      return;
    }
    Status st = RebuildLocked(*config);
    if (!st.ok()) app_.Log("error", "admission_config", {{"error", st.message()}});
    deferred_.reset();
  }

  // Opens the admission log; without leader election takes it over and rebuilds the Admitter
  // from its live rows at once, with it when this replica gains the Lease (TakeOverLoop).
  Status Start() override {
    std::lock_guard lock(mu_);
    const std::string& where = app_.options.admission_db.empty() ? app_.options.db : app_.options.admission_db;
    auto log = ledger::AdmissionLog::Open(where);
    if (!log.has_value())
      return Status(log.error().code(), "admission log " + (ledger::AdmissionLog::IsPostgresUrl(where) ? std::string("(PostgreSQL)") : where) +
                                            ": " + log.error().message());
    log_ = std::move(*log);
    const auto config = app_.config.Get();
    max_workloads_ = config->admission_max_workloads;
    SEEDANCE_RETURN_IF_ERROR(RebuildLocked(*config));
    if (!elect_) return TakeOverLocked();
    if (!ledger::AdmissionLog::IsPostgresUrl(where))
      app_.Log("warn", "admission_log_not_shared",
               {{"message", "--leader-elect with an SQLite admission log: each replica keeps only the decisions it "
                            "took while leading; share one with --admission-db postgresql://..."}});
    stop_ = false;
    takeover_thread_ = std::thread([this] { TakeOverLoop(); });
    return Status::Ok();
  }

  void Stop() override {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (takeover_thread_.joinable()) takeover_thread_.join();
    std::lock_guard lock(mu_);
    log_.reset();
  }

 private:
  // Makes this replica the admission log's only writer and rebuilds the Admitter from it.
  // REQUIRES: mu_ held, log_ open.
  Status TakeOverLocked() {
    const std::string holder = ReplicaIdentity(app_.options);
    SEEDANCE_ASSIGN_OR_RETURN(const std::int64_t epoch, log_->TakeOver(holder, app_.now_ms()));
    SEEDANCE_RETURN_IF_ERROR(ReloadLocked());
    taken_over_ = true;
    fenced_.clear();
    app_.readiness.Set("admission", true);
    app_.Log("info", "admission_restored",
             {{"live", live_.size()}, {"pending", admitter_->pending()}, {"admitted", admitted_count_},
              {"next_id", next_id_}, {"epoch", epoch}, {"holder", holder}});
    return Status::Ok();
  }

  // The elector's thread: leadership gained or lost. Gained: /readyz names "admission" until the
  // take-over thread has rebuilt the state. Lost: the state is dropped at once.
  void OnLeadership(bool leader) {
    {
      std::lock_guard lock(mu_);
      leading_ = leader;
      if (leader) {
        app_.readiness.Set("admission", false, "leader: rebuilding the admission state from its log");
      } else {
        DropLocked();
        fenced_.clear();
        app_.readiness.Set("admission", false, "follower: the leader decides admission");
      }
    }
    cv_.notify_all();
  }

  // With --leader-elect: takes the log over each time this replica becomes leader, retrying
  // every second while the log cannot be reached (a fenced replica waits to lead again).
  void TakeOverLoop() {
    std::unique_lock lock(mu_);
    while (true) {
      cv_.wait(lock, [&] { return stop_ || (leading_ && !taken_over_ && fenced_.empty() && log_); });
      if (stop_) return;
      Status st = TakeOverLocked();
      if (st.ok()) continue;
      app_.Log("error", "admission_takeover", {{"error", st.message()}});
      DropLocked();
      app_.readiness.Set("admission", false, "leader: cannot take the admission log over: " + st.message());
      cv_.wait_for(lock, std::chrono::seconds(1), [&] { return stop_; });
    }
  }

  // Forgets the in-memory state (the log keeps it). REQUIRES: mu_ held.
  void DropLocked() {
    taken_over_ = false;
    live_.clear();
    by_key_.clear();
    admitted_count_ = 0;
    if (built_from_) (void)RebuildLocked(*built_from_);  // an empty Admitter for the stats
    PublishGauges();
  }

  // A fresh Admitter for `config`. REQUIRES: mu_ held.
  Status RebuildLocked(const ServerConfig& config) {
    auto mode = tenancy::ParseTenancyMode(config.admission_mode);
    if (!mode) return InvalidArgumentError("server.admission_mode: unknown mode '" + config.admission_mode + "'");
    auto book = tenancy::QuotaBook::Build(config.tenancy.tenants, /*allow_borrowing=*/*mode != tenancy::TenancyMode::kStrict);
    if (!book.has_value()) return book.error();
    admitter_ = std::make_unique<tenancy::Admitter>(std::move(*book), *mode, config.tenancy);
    mode_name_ = config.admission_mode;
    built_from_ = std::make_shared<ServerConfig>(config);
    return Status::Ok();
  }

  // Replaces the in-memory state by the ledger's: a fresh Admitter (the config the running one
  // was built from) with every live row restored, pending ones first (an evicting row names the
  // pending workload it makes room for). A live row the config cannot take any more (its tenant
  // or a resource was removed) is withdrawn, with the reason in its history.
  Status ReloadLocked() {
    if (!log_) return UnavailableError("admission: the ledger is not open");
    if (!built_from_) return FailedPreconditionError("admission: no valid config (see the server log)");
    SEEDANCE_RETURN_IF_ERROR(RebuildLocked(*built_from_));
    live_.clear();
    by_key_.clear();
    admitted_count_ = 0;
    SEEDANCE_ASSIGN_OR_RETURN(next_id_, log_->MaxWorkloadId());
    ++next_id_;
    SEEDANCE_ASSIGN_OR_RETURN(auto rows, log_->Live());
    Txn txn;
    const std::int64_t now_ms = app_.now_ms();
    std::vector<std::pair<AdmissionWorkloadRow, tenancy::WorkloadRequest>> restore;
    for (auto& row : rows) {
      tenancy::WorkloadRequest w;
      if (auto why = RequestOf(row, &w)) {
        row.state = "withdrawn";
        row.updated_ms = now_ms;
        txn.decisions.push_back(DecisionOf(row, "withdraw", "withdrawn at restart: " + *why, "{}", now_ms));
        txn.gone.push_back(std::move(row));
        continue;
      }
      restore.emplace_back(std::move(row), std::move(w));
    }
    for (const char* pass : {"pending", "admitted", "evicting"}) {
      for (auto& [row, w] : restore) {
        if (row.state != pass) continue;
        using RS = tenancy::Admitter::RestoredState;
        const RS rs = row.state == "pending" ? RS::kPending : row.state == "admitted" ? RS::kAdmitted : RS::kEvicting;
        admitter_->Restore(std::move(w), rs, row.admitted_at_s, row.evicted_for);
        if (rs == RS::kAdmitted) ++admitted_count_;
        by_key_[KeyOf(row.namespace_name, row.name)] = row.id;
        live_.emplace(row.id, std::move(row));
      }
    }
    if (!txn.decisions.empty()) {
      SEEDANCE_RETURN_IF_ERROR(log_->Commit(txn.gone, txn.decisions));
      for (const auto& d : txn.decisions)
        app_.Log("warn", "admission_withdrawn_at_restart", {{"workload", KeyOf(d.namespace_name, d.name)}, {"reason", d.reason}});
    }
    PublishGauges();
    return Status::Ok();
  }

  // The Admitter's request of a stored row under the current book; the reason when it has none.
  std::optional<std::string> RequestOf(const AdmissionWorkloadRow& row, tenancy::WorkloadRequest* w) const {
    const auto& book = admitter_->book();
    w->id = row.id;
    w->tenant = book.TenantIndex(row.tenant);
    if (w->tenant < 0) return "tenant '" + row.tenant + "' is not in the config";
    auto tier = tenancy::ParseTier(row.tier);
    if (!tier) return "tier '" + row.tier + "' is unknown";
    w->tier = *tier;
    w->priority = row.priority;
    w->creation_s = row.creation_s;
    w->request.assign(static_cast<std::size_t>(book.num_resources()), 0);
    json req = json::parse(row.request_json, nullptr, false);
    if (!req.is_object()) return std::string("the stored request is not a JSON object");
    for (const auto& [res, qty] : req.items()) {
      const int r = book.ResourceIndex(res);
      if (r < 0) return "no tenant has a quota for resource '" + res + "' any more";
      if (!qty.is_number_integer()) return "the stored quantity of '" + res + "' is not an integer";
      w->request[static_cast<std::size_t>(r)] = qty.get<tenancy::Quantity>();
    }
    return std::nullopt;
  }

  static AdmissionDecisionRow DecisionOf(const AdmissionWorkloadRow& row, std::string kind, std::string reason,
                                         std::string detail, std::int64_t at_ms) {
    AdmissionDecisionRow d;
    d.workload_id = row.id;
    d.namespace_name = row.namespace_name;
    d.name = row.name;
    d.uid = row.uid;
    d.kind = std::move(kind);
    d.reason = std::move(reason);
    d.detail_json = std::move(detail);
    d.at_ms = at_ms;
    return d;
  }

  // Records a state change of live row `id` in `txn`.
  void Record(Txn& txn, AdmissionWorkloadRow& row, std::string kind, std::string reason, std::string detail,
              std::int64_t now_ms) {
    row.updated_ms = now_ms;
    txn.touched.insert(row.id);
    txn.decisions.push_back(DecisionOf(row, std::move(kind), std::move(reason), std::move(detail), now_ms));
  }

  // Moves live row `id` out of memory as `state` (finished, withdrawn); the ledger keeps it.
  void Retire(Txn& txn, std::int64_t id, const char* state) {
    auto it = live_.find(id);
    if (it->second.state == "admitted") --admitted_count_;
    it->second.state = state;
    by_key_.erase(KeyOf(it->second.namespace_name, it->second.name));
    txn.touched.erase(id);
    txn.gone.push_back(std::move(it->second));
    live_.erase(it);
  }

  // Writes `txn` to the ledger. On error the part reloads from the ledger (what clients may
  // have seen) and the request is answered 503 by the caller.
  Status CommitLocked(Txn& txn) {
    std::vector<AdmissionWorkloadRow> rows = std::move(txn.gone);
    for (std::int64_t id : txn.touched) rows.push_back(live_.at(id));
    const auto t0 = std::chrono::steady_clock::now();
    Status st = log_->Commit(rows, txn.decisions);
    app_.metrics.Observe("seedance_admission_persist_seconds", {},
                         std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (!st.ok() && log_->fenced()) {
      // Another replica leads and rebuilt from the log: nothing of this request was written and
      // this replica decides nothing until it is leader again.
      app_.metrics.Inc("seedance_admission_fenced_total", {});
      app_.Log("error", "admission_fenced", {{"error", st.message()}, {"decisions", txn.decisions.size()}});
      DropLocked();
      fenced_ = st.message();
      app_.readiness.Set("admission", false, st.message());
      return UnavailableError(st.message());
    }
    if (!st.ok()) {
      app_.metrics.Inc("seedance_admission_persist_errors_total", {});
      app_.Log("error", "admission_persist", {{"error", st.message()}, {"decisions", txn.decisions.size()}});
      Status reload = ReloadLocked();
      if (!reload.ok()) {
        app_.Log("error", "admission_reload", {{"error", reload.message()}});
        // Memory may disagree with the log: 503 until a restart, or (--leader-elect) until the
        // take-over thread has reloaded it.
        admitter_.reset();
        taken_over_ = false;
        cv_.notify_all();
      }
      return UnavailableError("admission: the ledger did not take the decisions, nothing was decided: " + st.message());
    }
    std::map<std::string, double> by_kind;
    for (const auto& d : txn.decisions) by_kind[d.kind] += 1;
    for (const auto& [kind, n] : by_kind)
      app_.metrics.Inc("seedance_admission_decisions_persisted_total", {{"kind", kind}}, n);
    return Status::Ok();
  }

  double NowS() const { return static_cast<double>(app_.now_ms()) / 1000.0; }

  // Parses one workload of a POST /v1/workloads body; `path` names it in errors.
  std::optional<BadField> ParseWorkload(const json& j, const std::string& path, Submission* s, double now) const {
    if (!j.is_object()) return BadField{path, "must be an object"};
    for (const auto& [key, value] : j.items()) {
      if (key != "namespace" && key != "name" && key != "uid" && key != "tenant" && key != "priority" && key != "tier" &&
          key != "request" && key != "creation_time")
        return BadField{path + "." + key, "unknown field"};
      (void)value;
    }
    const auto& book = admitter_->book();
    tenancy::WorkloadRequest& w = s->w;
    s->ns = kDefaultNamespace;
    if (auto it = j.find("namespace"); it != j.end()) {
      if (!it->is_string() || !IsDnsName(it->get_ref<const std::string&>(), kMaxNamespaceBytes, false))
        return BadField{path + ".namespace",
                        "must be a Kubernetes namespace: at most 63 lower-case alphanumerics or '-', "
                        "starting and ending with an alphanumeric"};
      s->ns = it->get<std::string>();
    }
    auto name_it = j.find("name");
    if (name_it == j.end() || !name_it->is_string() ||
        !IsDnsName(name_it->get_ref<const std::string&>(), kMaxNameBytes, true))
      return BadField{path + ".name",
                      "required: a Kubernetes object name: at most 253 lower-case alphanumerics, '-' or '.', "
                      "starting and ending with an alphanumeric"};
    s->name = name_it->get<std::string>();
    if (auto it = j.find("uid"); it != j.end()) {
      if (!it->is_string() || it->get_ref<const std::string&>().empty() ||
          it->get_ref<const std::string&>().size() > kMaxUidBytes)
        return BadField{path + ".uid", "must be a non-empty string of at most 128 bytes"};
      for (char c : it->get_ref<const std::string&>())
        if (c < '!' || c > '~') return BadField{path + ".uid", "must be printable ASCII without spaces"};
      s->uid = it->get<std::string>();
    }
    auto tenant_it = j.find("tenant");
    if (tenant_it == j.end() || !tenant_it->is_string()) return BadField{path + ".tenant", "required: a string"};
    w.tenant = book.TenantIndex(tenant_it->get<std::string>());
    if (w.tenant < 0) return BadField{path + ".tenant", "unknown tenant '" + tenant_it->get<std::string>() + "'"};
    if (auto it = j.find("priority"); it != j.end()) {
      if (!it->is_number_integer()) return BadField{path + ".priority", "must be an integer"};
      const auto p = it->get<std::int64_t>();
      if (p < std::numeric_limits<int>::min() || p > std::numeric_limits<int>::max())
        return BadField{path + ".priority", "out of range"};
      w.priority = static_cast<int>(p);
    }
    w.tier = TenantTier(w.tenant);
    if (auto it = j.find("tier"); it != j.end()) {
      if (!it->is_string()) return BadField{path + ".tier", "must be a string"};
      auto tier = tenancy::ParseTier(it->get<std::string>());
      if (!tier) return BadField{path + ".tier", "unknown tier '" + it->get<std::string>() + "' (gold, silver, bronze)"};
      w.tier = *tier;
    }
    w.creation_s = now;
    if (auto it = j.find("creation_time"); it != j.end()) {
      if (!it->is_number() || !std::isfinite(it->get<double>()))
        return BadField{path + ".creation_time", "must be Unix seconds (a number)"};
      w.creation_s = it->get<double>();
    }
    auto req_it = j.find("request");
    if (req_it == j.end() || !req_it->is_object() || req_it->empty())
      return BadField{path + ".request", "required: an object of resource -> quantity"};
    w.request.assign(static_cast<std::size_t>(book.num_resources()), 0);
    json stored = json::object();
    for (const auto& [res, qty] : req_it->items()) {
      const int r = book.ResourceIndex(res);
      if (r < 0) return BadField{path + ".request." + res, "no tenant has a quota for this resource"};
      // Quantities are kept in thousandths in an int64; past 1e12 units a sum could overflow.
      if (!qty.is_number() || !(qty.get<double>() >= 0) || !(qty.get<double>() <= 1e12))
        return BadField{path + ".request." + res, "must be a number in [0, 1e12]"};
      w.request[static_cast<std::size_t>(r)] = tenancy::ToQuantity(qty.get<double>());
      stored[res] = w.request[static_cast<std::size_t>(r)];
    }
    s->request_json = stored.dump();
    return std::nullopt;
  }

  tenancy::Tier TenantTier(int tenant) const {
    const auto& tenants = built_from_->tenancy.tenants;
    const std::string& name = admitter_->book().tenant_name(tenant);
    for (const auto& t : tenants)
      if (t.name == name) return t.tier;
    return tenancy::Tier::kSilver;
  }

  static std::optional<json> ParseBody(const httplib::Request& req, httplib::Response& res) {
    if (Status depth = CheckJsonDepth(req.body); !depth.ok()) {
      ReplyError(res, 400, FieldOf(depth), ReasonOf(depth));
      return std::nullopt;
    }
    json body = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
    if (body.is_discarded()) {
      ReplyError(res, 400, "", "request body is not valid JSON");
      return std::nullopt;
    }
    if (!body.is_object()) {
      ReplyError(res, 400, "", "request body must be a JSON object");
      return std::nullopt;
    }
    for (const auto& [key, value] : body.items()) {
      (void)value;
      if (key != "workloads") {
        ReplyError(res, 400, key, "unknown field");
        return std::nullopt;
      }
    }
    auto it = body.find("workloads");
    if (it == body.end() || !it->is_array()) {
      ReplyError(res, 400, "workloads", "required: an array");
      return std::nullopt;
    }
    if (it->size() > kMaxBatch) {
      ReplyError(res, 400, "workloads", "at most 10000 workloads per request");
      return std::nullopt;
    }
    return body;
  }

  // 503 unless the part is started with a valid config. REQUIRES: mu_ held.
  bool Ready(httplib::Response& res) {
    if (!log_) {
      ReplyError(res, 503, "", "admission is not started (its ledger is not open)");
      return false;
    }
    if (!fenced_.empty()) {
      ReplyError(res, 503, "", fenced_);
      return false;
    }
    if (elect_ && !leading_) {
      ReplyError(res, 503, "", "admission: this replica is a follower; the leader decides (send to the Service)");
      return false;
    }
    if (!taken_over_) {
      ReplyError(res, 503, "", "admission: the leader is rebuilding its state from the admission log");
      return false;
    }
    if (!admitter_) {
      ReplyError(res, 503, "", "admission is not configured or lost its state (see the server log)");
      return false;
    }
    return true;
  }

  json WorkloadJson(const AdmissionWorkloadRow& row) const {
    json j = {{"namespace", row.namespace_name},
              {"name", row.name},
              {"uid", row.uid},
              {"tenant", row.tenant},
              {"tier", row.tier},
              {"priority", row.priority},
              {"creation_time", row.creation_s},
              {"state", row.state},
              {"created_ms", row.created_ms},
              {"updated_ms", row.updated_ms}};
    json req = json::parse(row.request_json, nullptr, false);
    json units = json::object();
    if (req.is_object())
      for (const auto& [res, qty] : req.items())
        if (qty.is_number_integer()) units[res] = tenancy::FromQuantity(qty.get<tenancy::Quantity>());
    j["request"] = std::move(units);
    if (row.state == "admitted" || row.state == "evicting") j["admitted_at"] = row.admitted_at_s;
    if (row.state == "evicting" && row.evicted_for >= 0) {
      auto it = live_.find(row.evicted_for);
      if (it != live_.end()) j["evicted_for"] = KeyOf(it->second.namespace_name, it->second.name);
    }
    return j;
  }

  void Submit(const httplib::Request& req, httplib::Response& res) {
    auto body = ParseBody(req, res);
    if (!body) return;
    std::lock_guard lock(mu_);
    if (!Ready(res)) return;
    const double now = NowS();
    const std::int64_t now_ms = app_.now_ms();
    // Validate every workload before any is submitted: a request is taken whole or not at all.
    const json& list = (*body)["workloads"];
    std::vector<Submission> fresh;
    // Per item: the live id it names (>= 0), or an index into `fresh` (encoded -1 - i), or a
    // finished/withdrawn row it replays (kept in `replayed`).
    std::vector<std::int64_t> refs;
    std::map<std::size_t, AdmissionWorkloadRow> replayed;
    std::set<std::string> seen;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string path = "workloads[" + std::to_string(i) + "]";
      Submission s;
      if (auto bad = ParseWorkload(list[i], path, &s, now)) return ReplyError(res, 400, bad->field, bad->message);
      const std::string key = KeyOf(s.ns, s.name);
      if (!seen.insert(key).second)
        return ReplyError(res, 409, path + ".name", "workload '" + key + "' appears twice in this request");
      if (auto it = by_key_.find(key); it != by_key_.end()) {
        const AdmissionWorkloadRow& live = live_.at(it->second);
        if (!s.uid.empty() && s.uid != live.uid)
          return ReplyError(res, 409, path + ".uid",
                            "workload '" + key + "' is live with uid '" + live.uid + "' (" + live.state +
                                "); withdraw it first (DELETE /v1/workloads/" + key + ")");
        refs.push_back(it->second);  // the same workload again: its state, no second queue entry
        continue;
      }
      if (!s.uid.empty()) {
        auto old = log_->ByUid(s.ns, s.name, s.uid);
        if (!old.has_value()) return ReplyError(res, 503, "", "admission: ledger read failed: " + old.error().message());
        if (old->has_value()) {  // this very workload already ended: a replay
          replayed.emplace(i, std::move(**old));
          refs.push_back(0);
          continue;
        }
      }
      refs.push_back(-1 - static_cast<std::int64_t>(fresh.size()));
      fresh.push_back(std::move(s));
    }
    if (static_cast<std::int64_t>(live_.size() + fresh.size()) > max_workloads_) {
      app_.metrics.Inc("seedance_admission_refused_total", {}, static_cast<double>(fresh.size()));
      return ReplyError(res, 429, "workloads",
                        "admission tracks " + std::to_string(live_.size()) + " live workloads and this request adds " +
                            std::to_string(fresh.size()) + ", past server.admission_max_workloads (" +
                            std::to_string(max_workloads_) + "); finish or withdraw some first");
    }
    Txn txn;
    std::vector<std::int64_t> fresh_ids;
    for (auto& s : fresh) {
      AdmissionWorkloadRow row;
      row.id = next_id_++;
      row.namespace_name = s.ns;
      row.name = s.name;
      row.uid = s.uid.empty() ? "seedance-" + std::to_string(row.id) : s.uid;
      row.tenant = admitter_->book().tenant_name(s.w.tenant);
      row.tier = std::string(tenancy::TierName(s.w.tier));
      row.priority = s.w.priority;
      row.request_json = s.request_json;
      row.creation_s = s.w.creation_s;
      row.state = "pending";
      row.created_ms = now_ms;
      s.w.id = row.id;
      fresh_ids.push_back(row.id);
      by_key_[KeyOf(row.namespace_name, row.name)] = row.id;
      auto& stored = live_.emplace(row.id, std::move(row)).first->second;
      Record(txn, stored, "submit", "submitted", "{}", now_ms);
      admitter_->Submit(std::move(s.w));
    }
    CycleLocked(now, now_ms, txn);
    if (Status st = CommitLocked(txn); !st.ok()) return ReplyError(res, 503, "", st.message());
    json states = json::array();
    for (std::size_t i = 0; i < refs.size(); ++i) {
      if (auto it = replayed.find(i); it != replayed.end()) {
        states.push_back(WorkloadJson(it->second));
      } else {
        const std::int64_t id = refs[i] >= 0 ? refs[i] : fresh_ids[static_cast<std::size_t>(-1 - refs[i])];
        states.push_back(WorkloadJson(live_.at(id)));  // a submission cannot end within its own request
      }
    }
    ReplyDecisions(res, txn, &states);
  }

  // Parses a "namespace/name" (or "name": namespace "default") reference of a release body.
  static std::string RefKey(const std::string& ref) {
    return ref.find('/') == std::string::npos ? KeyOf(kDefaultNamespace, ref) : ref;
  }

  void Release(const httplib::Request& req, httplib::Response& res, bool evicted) {
    auto body = ParseBody(req, res);
    if (!body) return;
    std::lock_guard lock(mu_);
    if (!Ready(res)) return;
    const json& list = (*body)["workloads"];
    const std::int64_t now_ms = app_.now_ms();
    std::vector<std::int64_t> ids;
    std::set<std::int64_t> seen;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string path = "workloads[" + std::to_string(i) + "]";
      if (!list[i].is_string()) return ReplyError(res, 400, path, "must be a workload reference: \"namespace/name\"");
      const std::string key = RefKey(list[i].get<std::string>());
      auto it = by_key_.find(key);
      if (it == by_key_.end()) return ReplyError(res, 404, path, "unknown workload '" + key + "' (not live)");
      const std::string& state = live_.at(it->second).state;
      if (!evicted && state != "admitted")
        return ReplyError(res, 409, path, "workload '" + key + "' is not admitted (" + state + ")");
      if (evicted && state != "evicting")
        return ReplyError(res, 409, path, "workload '" + key + "' was not asked to leave (" + state + ")");
      if (!seen.insert(it->second).second)
        return ReplyError(res, 409, path, "workload '" + key + "' appears twice in this request");
      ids.push_back(it->second);
    }
    Txn txn;
    for (std::int64_t id : ids) {
      AdmissionWorkloadRow& row = live_.at(id);
      if (evicted) {
        admitter_->Evicted(id, /*requeue=*/true);
        row.state = "pending";
        row.evicted_for = -1;
        Record(txn, row, "requeue", "left its node after eviction; waits again with its creation time", "{}", now_ms);
      } else {
        admitter_->Finished(id);
        Record(txn, row, "finish", "reported finished; its quota returned", "{}", now_ms);
        Retire(txn, id, "finished");
      }
    }
    CycleLocked(NowS(), now_ms, txn);
    if (Status st = CommitLocked(txn); !st.ok()) return ReplyError(res, 503, "", st.message());
    ReplyDecisions(res, txn, nullptr);
    ApplyDeferredLocked();
  }

  void Withdraw(const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(mu_);
    if (!Ready(res)) return;
    const std::string ns = req.matches[1], name = req.matches[2];
    const std::string uid = req.has_param("uid") ? req.get_param_value("uid") : "";
    const std::string key = KeyOf(ns, name);
    auto it = by_key_.find(key);
    if (it == by_key_.end()) {
      // Not live: a retried DELETE (or one after it finished) answers the stored end state.
      auto old = uid.empty() ? log_->Latest(ns, name) : log_->ByUid(ns, name, uid);
      if (!old.has_value()) return ReplyError(res, 503, "", "admission: ledger read failed: " + old.error().message());
      if (!old->has_value()) return ReplyError(res, 404, "name", "unknown workload '" + key + "'");
      return ReplyJson(res, 200, {{"workload", WorkloadJson(**old)}, {"decisions", json::array()},
                                  {"pending", admitter_->pending()}, {"admitted", admitted_count_}});
    }
    AdmissionWorkloadRow& row = live_.at(it->second);
    if (!uid.empty() && uid != row.uid)
      return ReplyError(res, 409, "uid", "workload '" + key + "' is live with uid '" + row.uid + "', not '" + uid + "'");
    const std::int64_t now_ms = app_.now_ms();
    const std::int64_t id = row.id;
    const bool held = row.state != "pending";
    Txn txn;
    admitter_->Withdraw(id);
    Record(txn, row, "withdraw",
           held ? "withdrawn by the client (DELETE); its quota returned" : "withdrawn by the client (DELETE) while pending",
           "{}", now_ms);
    Retire(txn, id, "withdrawn");
    json gone = WorkloadJson(txn.gone.back());
    CycleLocked(NowS(), now_ms, txn);
    if (Status st = CommitLocked(txn); !st.ok()) return ReplyError(res, 503, "", st.message());
    ReplyDecisions(res, txn, nullptr, &gone);
    ApplyDeferredLocked();
  }

  void ApplyDeferredLocked() {
    if (!deferred_ || !live_.empty()) return;
    Status st = RebuildLocked(*deferred_);
    if (!st.ok()) app_.Log("error", "admission_config", {{"error", st.message()}});
    deferred_.reset();
  }

  // GET /v1/workloads/{namespace}/{name}: reads only.
  void Show(const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(mu_);
    if (!Ready(res)) return;
    const std::string ns = req.matches[1], name = req.matches[2];
    const std::string uid = req.has_param("uid") ? req.get_param_value("uid") : "";
    std::optional<AdmissionWorkloadRow> row;
    if (auto it = by_key_.find(KeyOf(ns, name)); it != by_key_.end() && (uid.empty() || live_.at(it->second).uid == uid)) {
      row = live_.at(it->second);
    } else {
      auto old = uid.empty() ? log_->Latest(ns, name) : log_->ByUid(ns, name, uid);
      if (!old.has_value()) return ReplyError(res, 503, "", "admission: ledger read failed: " + old.error().message());
      row = std::move(*old);
    }
    if (!row) return ReplyError(res, 404, "name", "unknown workload '" + KeyOf(ns, name) + "'" + (uid.empty() ? "" : " with uid '" + uid + "'"));
    auto history = log_->History(row->id);
    if (!history.has_value()) return ReplyError(res, 503, "", "admission: ledger read failed: " + history.error().message());
    json decisions = json::array();
    for (const auto& d : *history) decisions.push_back(DecisionJson(d));
    ReplyJson(res, 200, {{"workload", WorkloadJson(*row)}, {"decisions", std::move(decisions)}});
  }

  // GET /v1/workloads?since=SEQ&limit=N: reads only.
  void Since(const httplib::Request& req, httplib::Response& res) {
    for (const auto& [key, value] : req.params) {
      (void)value;
      if (key != "since" && key != "limit") return ReplyError(res, 400, key, "unknown parameter (since, limit)");
    }
    auto number = [&](const char* key, std::int64_t def, std::int64_t lo, std::int64_t hi) -> std::optional<std::int64_t> {
      if (!req.has_param(key)) return def;
      const std::string v = req.get_param_value(key);
      std::int64_t n = 0;
      auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
      if (ec != std::errc() || end != v.data() + v.size() || n < lo || n > hi) return std::nullopt;
      return n;
    };
    auto since = number("since", 0, 0, std::numeric_limits<std::int64_t>::max());
    if (!since) return ReplyError(res, 400, "since", "must be a decision seq: a whole number >= 0");
    auto limit = number("limit", kDefaultSinceLimit, 1, kMaxSinceLimit);
    if (!limit) return ReplyError(res, 400, "limit", "must be a whole number in [1, 10000]");
    std::lock_guard lock(mu_);
    if (!log_) return ReplyError(res, 503, "", "admission is not started (its ledger is not open)");
    auto rows = log_->DecisionsSince(*since, static_cast<std::size_t>(*limit) + 1);
    if (!rows.has_value()) return ReplyError(res, 503, "", "admission: ledger read failed: " + rows.error().message());
    const bool more = rows->size() > static_cast<std::size_t>(*limit);
    if (more) rows->pop_back();
    json decisions = json::array();
    for (const auto& d : *rows) decisions.push_back(DecisionJson(d));
    const std::int64_t next = rows->empty() ? *since : rows->back().seq;
    ReplyJson(res, 200, {{"decisions", std::move(decisions)}, {"next", next}, {"more", more}});
  }

  void Stats(httplib::Response& res) {
    std::lock_guard lock(mu_);
    json body = {{"mode", mode_name_},
                 {"pending", admitter_ ? admitter_->pending() : 0},
                 {"admitted", admitted_count_},
                 {"known", live_.size()},
                 {"max_workloads", max_workloads_}};
    if (admitter_) {
      const auto& s = admitter_->stats();
      body["cycles"] = s.cycles;
      body["admissions"] = s.admitted;
      body["evictions"] = s.evictions;
    }
    if (log_) {
      auto seq = log_->LastSeq();
      if (seq.has_value()) body["last_seq"] = *seq;
    }
    ReplyJson(res, 200, body);
  }

  // Runs the Admitter at `now` and records its decisions in `txn`. REQUIRES: mu_ held.
  void CycleLocked(double now, std::int64_t now_ms, Txn& txn) {
    const auto t0 = std::chrono::steady_clock::now();
    OnlineEnv env(live_, now);
    decisions_.clear();
    admitter_->Cycle(now, env, &decisions_);
    std::int64_t admits = 0, evicts = 0;
    for (const auto& d : decisions_) {
      AdmissionWorkloadRow& row = live_.at(d.id);
      if (d.kind == AdmissionDecision::Kind::kAdmit) {
        ++admits;
        ++admitted_count_;
        row.state = "admitted";
        row.admitted_at_s = now;
        Record(txn, row, "admit", d.borrowing ? "admitted, borrowing cohort quota" : "admitted within its quota",
               json{{"borrowing", d.borrowing}}.dump(), now_ms);
      } else {
        ++evicts;
        if (row.state == "admitted") --admitted_count_;
        row.state = "evicting";
        row.evicted_for = d.for_id;
        json detail = {{"reclaim", d.reclaim}};
        std::string reason = d.reclaim ? "evicted: idle past its tier's trigger" : "evicted";
        if (auto p = live_.find(d.for_id); p != live_.end()) {
          detail["for"] = KeyOf(p->second.namespace_name, p->second.name);
          reason += " to make room for " + detail["for"].get<std::string>();
        }
        Record(txn, row, "evict", std::move(reason), detail.dump(), now_ms);
      }
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    app_.metrics.Observe("seedance_admission_cycle_seconds", {}, secs);
    if (admits > 0) app_.metrics.Inc("seedance_admission_decisions_total", {{"kind", "admit"}}, static_cast<double>(admits));
    if (evicts > 0) app_.metrics.Inc("seedance_admission_decisions_total", {{"kind", "evict"}}, static_cast<double>(evicts));
    PublishGauges();
  }

  void PublishGauges() {
    app_.metrics.Set("seedance_admission_pending", {}, static_cast<double>(admitter_ ? admitter_->pending() : 0));
    app_.metrics.Set("seedance_admission_admitted", {}, static_cast<double>(admitted_count_));
    app_.metrics.Set("seedance_admission_tracked", {}, static_cast<double>(live_.size()));
  }

  // The committed admit/evict decisions of `txn` (what clients act on), plus the workloads' states.
  void ReplyDecisions(httplib::Response& res, const Txn& txn, json* states, json* workload = nullptr) {
    json out = json::array();
    for (const auto& d : txn.decisions)
      if (d.kind == "admit" || d.kind == "evict") out.push_back(DecisionJson(d));
    json body = {{"decisions", std::move(out)}, {"pending", admitter_->pending()}, {"admitted", admitted_count_}};
    if (!txn.decisions.empty()) body["last_seq"] = txn.decisions.back().seq;
    if (states != nullptr) body["workloads"] = std::move(*states);
    if (workload != nullptr) body["workload"] = std::move(*workload);
    ReplyJson(res, 200, body);
  }

  App& app_;
  std::mutex mu_;
  std::unique_ptr<ledger::AdmissionLog> log_;
  std::unique_ptr<tenancy::Admitter> admitter_;
  std::shared_ptr<const ServerConfig> built_from_;  // the config admitter_ was built from
  std::string mode_name_;
  std::shared_ptr<const ServerConfig> deferred_;
  std::int64_t max_workloads_ = ServerConfig{}.admission_max_workloads;
  std::int64_t next_id_ = 1;
  // Live workloads only (pending, admitted, evicting), by id and by namespace/name.
  std::unordered_map<std::int64_t, AdmissionWorkloadRow> live_;
  std::unordered_map<std::string, std::int64_t> by_key_;
  std::size_t admitted_count_ = 0;
  std::vector<AdmissionDecision> decisions_;
  // Leadership (--leader-elect): whether the elector says this replica leads; whether it took the
  // log over since; why a commit was refused (another replica took over; "" = not fenced).
  bool elect_ = false, leading_ = false, taken_over_ = false, stop_ = false;
  std::string fenced_;
  std::condition_variable cv_;
  std::thread takeover_thread_;
};

}  // namespace

std::unique_ptr<Service> MakeAdmissionService(App& app) { return std::make_unique<AdmissionService>(app); }

}  // namespace seedance::server
