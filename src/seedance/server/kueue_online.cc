#include "seedance/server/kueue_online.h"

#include <algorithm>
#include <chrono>
#include <queue>
#include <thread>
#include <unordered_map>

#include <httplib.h>

#include "seedance/core/clock.h"

namespace seedance::server {
namespace {

using nlohmann::json;

enum class Kind { kCreate, kFinish };
struct Event {
  std::int64_t due_us;
  std::uint64_t seq;
  Kind kind;
  std::int64_t id;
  int epoch;
  bool operator>(const Event& o) const { return due_us != o.due_us ? due_us > o.due_us : seq > o.seq; }
};

double NearestRankP99(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(v.size())));
  return v[std::max<std::size_t>(rank, 1) - 1];
}

}  // namespace

Result<KueueOnlineResult> RunKueueOnline(const sim::KueueScenarioSpec& spec, const KueueOnlineOptions& options) {
  SEEDANCE_RETURN_IF_ERROR(spec.Validate());
  if (!(options.speedup >= 1) || !std::isfinite(options.speedup))
    return InvalidArgumentError("--speedup: must be a number >= 1");
  const std::vector<sim::KueueWorkload> wls = sim::GenerateKueueWorkloads(spec);
  const auto n = wls.size();
  std::vector<std::string> names(n);
  std::unordered_map<std::string, std::int64_t> id_of;
  for (std::size_t i = 0; i < n; ++i) {
    names[i] = sim::KueueCqName(spec, wls[i].cq);
    names[i] += '/';
    names[i] += wls[i].name;
    id_of[names[i]] = static_cast<std::int64_t>(i);
  }

  httplib::Client client(options.host, options.port);
  client.set_keep_alive(true);
  client.set_tcp_nodelay(true);  // Nagle + delayed ACK would add ~40 ms to every request
  client.set_read_timeout(30, 0);
  httplib::Headers headers;
  if (!options.token.empty()) headers.emplace("Authorization", "Bearer " + options.token);

  KueueOnlineResult r;
  std::vector<double> rtt_ms;
  SteadyClock clock;
  const auto start = clock.Now();
  auto elapsed_us = [&] {
    return std::chrono::duration_cast<std::chrono::microseconds>(clock.Now() - start).count();
  };
  auto scaled = [&](std::int64_t scenario_us) {
    return static_cast<std::int64_t>(static_cast<double>(scenario_us) / options.speedup);
  };

  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  std::uint64_t seq = 0;
  std::vector<int> epoch(n, 0);
  std::vector<std::int64_t> created_at(n, 0), last_admit(n, -1), finished(n, -1);
  std::vector<int> evictions(n, 0);
  std::vector<bool> running(n, false);
  for (std::size_t i = 0; i < n; ++i) events.push({scaled(wls[i].created_us), seq++, Kind::kCreate, static_cast<std::int64_t>(i), 0});

  // Usage integral (cpu x us of wall time).
  double usage = 0, integral = 0;
  std::int64_t last_t = 0, last_change = 0;
  auto change_usage = [&](std::int64_t now, double delta) {
    integral += usage * static_cast<double>(now - last_t);
    last_t = now;
    usage += delta;
    last_change = now;
  };
  auto cpu_of = [&](std::size_t i) { return spec.classes[static_cast<std::size_t>(wls[i].klass)].request_cpu; };

  auto post = [&](const char* path, const json& body) -> Result<json> {
    const auto t0 = clock.Now();
    auto res = client.Post(path, headers, body.dump(), "application/json");
    rtt_ms.push_back(std::chrono::duration<double, std::milli>(clock.Now() - t0).count());
    ++r.requests;
    if (!res) return UnavailableError(std::string("POST ") + path + ": " + httplib::to_string(res.error()));
    if (res->status != 200)
      return UnavailableError(std::string("POST ") + path + ": HTTP " + std::to_string(res->status) + ": " + res->body);
    json j = json::parse(res->body, nullptr, false);
    if (j.is_discarded() || !j.contains("decisions"))
      return UnavailableError(std::string("POST ") + path + ": the answer is not a decision list");
    return j;
  };

  // Applies a decision list; evictions are reported gone at once (Kueue's runner), which may
  // bring more decisions.
  std::function<Status(const json&)> apply = [&](const json& answer) -> Status {
    const std::int64_t now = elapsed_us();
    json gone = json::array();
    for (const auto& d : answer["decisions"]) {
      auto it = id_of.find(d.value("namespace", "") + "/" + d.value("name", ""));
      if (it == id_of.end()) return InternalError("server decided on an unknown workload: " + d.dump());
      const auto i = static_cast<std::size_t>(it->second);
      if (d.value("kind", "") == "admit") {
        ++r.admissions;
        last_admit[i] = now;
        running[i] = true;
        change_usage(now, cpu_of(i));
        events.push({now + scaled(wls[i].runtime_us), seq++, Kind::kFinish, it->second, ++epoch[i]});
      } else if (d.value("kind", "") == "evict") {
        ++r.preemptions;
        ++evictions[i];
        ++epoch[i];  // its finish event is void
        if (running[i]) change_usage(now, -cpu_of(i));
        running[i] = false;
        gone.push_back(names[i]);
      }
    }
    if (gone.empty()) return Status::Ok();
    auto next = post("/v1/workloads/evicted", {{"workloads", gone}});
    if (!next.has_value()) return next.error();
    return apply(*next);
  };

  while (!events.empty()) {
    const std::int64_t due = events.top().due_us;
    const std::int64_t now = elapsed_us();
    if (due > now) std::this_thread::sleep_for(std::chrono::microseconds(due - now));
    const std::int64_t at = std::max(due, elapsed_us());
    json create = json::array(), done = json::array();
    while (!events.empty() && events.top().due_us <= at) {
      const Event e = events.top();
      events.pop();
      const auto i = static_cast<std::size_t>(e.id);
      if (e.kind == Kind::kCreate) {
        created_at[i] = e.due_us;
        const auto& c = spec.classes[static_cast<std::size_t>(wls[i].klass)];
        create.push_back({{"namespace", sim::KueueCqName(spec, wls[i].cq)},
                          {"name", wls[i].name},
                          {"tenant", sim::KueueCqName(spec, wls[i].cq)},
                          {"priority", c.priority},
                          {"request", {{"cpu", c.request_cpu}}}});
      } else if (e.epoch == epoch[i] && running[i]) {
        running[i] = false;
        finished[i] = elapsed_us();
        change_usage(finished[i], -cpu_of(i));
        done.push_back(names[i]);
      }
    }
    if (!done.empty()) {
      auto answer = post("/v1/workloads/finished", {{"workloads", done}});
      if (!answer.has_value()) return answer.error();
      SEEDANCE_RETURN_IF_ERROR(apply(*answer));
    }
    if (!create.empty()) {
      auto answer = post("/v1/workloads", {{"workloads", create}});
      if (!answer.has_value()) return answer.error();
      SEEDANCE_RETURN_IF_ERROR(apply(*answer));
    }
  }
  for (std::size_t i = 0; i < n; ++i)
    if (finished[i] < 0) return InternalError("workload " + names[i] + " never finished (a bug)");

  r.wall_s = static_cast<double>(*std::max_element(finished.begin(), finished.end())) / 1e6;
  const double nominal = spec.nominal_cpu * spec.cohorts * spec.queues_per_cohort;
  r.usage_pct = last_change > 0 ? 100.0 * integral / (nominal * static_cast<double>(last_change)) : 0;
  // Outcomes in scenario time: wall intervals from each creation, times the speedup.
  std::vector<sim::KueueWorkloadOutcome> outcomes(n);
  auto scenario_us = [&](std::size_t i, std::int64_t wall_us) {
    return wls[i].created_us + std::llround(static_cast<double>(wall_us - created_at[i]) * options.speedup);
  };
  for (std::size_t i = 0; i < n; ++i) {
    outcomes[i].last_admitted_us = scenario_us(i, last_admit[i]);
    outcomes[i].finished_us = scenario_us(i, finished[i]);
    outcomes[i].evictions = evictions[i];
  }
  r.classes = sim::SummarizeKueueClasses(spec, wls, outcomes);
  std::sort(rtt_ms.begin(), rtt_ms.end());
  if (!rtt_ms.empty()) {
    r.request_p50_ms = rtt_ms[rtt_ms.size() / 2];
    r.request_p99_ms = NearestRankP99(rtt_ms);
  }
  return r;
}

json KueueOnlineJson(const KueueOnlineOptions& options, const KueueOnlineResult& r) {
  const sim::KueuePublished pub;
  return {{"mode", "online"},
          {"speedup", options.speedup},
          {"wall_s", r.wall_s},
          {"admissions", r.admissions},
          {"admissions_per_s", r.wall_s > 0 ? static_cast<double>(r.admissions) / r.wall_s : 0},
          {"preemptions", r.preemptions},
          {"requests", r.requests},
          {"request_p50_ms", r.request_p50_ms},
          {"request_p99_ms", r.request_p99_ms},
          {"usage_pct", r.usage_pct},
          {"classes", sim::KueueClassesJson(r.classes)},
          {"published", {{"source", pub.source}, {"wall_s", pub.wall_s}, {"usage_pct", pub.usage_pct},
                         {"admissions", pub.admissions}}}};
}

}  // namespace seedance::server
