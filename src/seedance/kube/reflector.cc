#include "seedance/kube/reflector.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

namespace seedance::kube {
namespace {

std::string QueryEscape(std::string_view s) {
  std::string out;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) != 0 || ch == '-' || ch == '_' || ch == '.' || ch == '~') {
      out.push_back(ch);
    } else {
      out += fmt::format("%{:02X}", static_cast<unsigned>(c));
    }
  }
  return out;
}

std::string Join(const std::string& path, const std::string& query) {
  return path + (path.find('?') == std::string::npos ? "?" : "&") + query;
}

}  // namespace

int StatusCodeOf(const nlohmann::json& status) {
  if (!status.is_object()) return 0;
  auto it = status.find("code");
  return it != status.end() && it->is_number_integer() ? it->get<int>() : 0;
}

Reflector::Reflector(ApiClient& client, ReflectorHandler& handler, ReflectorOptions options, ReflectorHooks hooks)
    : client_(client), handler_(handler), options_(std::move(options)), hooks_(std::move(hooks)) {
  SEEDANCE_CHECK(hooks_.clock != nullptr && hooks_.rng != nullptr) << "Reflector needs a clock and an rng";
}

std::string Reflector::KeyOf(const nlohmann::json& object) {
  const auto& meta = object.contains("metadata") ? object["metadata"] : nlohmann::json::object();
  const std::string ns = meta.is_object() ? meta.value("namespace", "") : "";
  const std::string name = meta.is_object() ? meta.value("name", "") : "";
  return ns.empty() ? name : ns + "/" + name;
}

std::string Reflector::resource_version() const {
  std::lock_guard lock(mu_);
  return rv_;
}

std::vector<Duration> Reflector::backoffs() const {
  std::lock_guard lock(mu_);
  return backoffs_;
}

void Reflector::Log(std::string_view event, nlohmann::json fields) const {
  if (!hooks_.log) return;
  fields["resource"] = options_.resource;
  hooks_.log(event, fields);
}

void Reflector::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  client_.CancelStreams();
}

bool Reflector::Backoff() {
  double base = std::chrono::duration<double>(options_.initial_backoff).count() *
                std::pow(options_.factor, static_cast<double>(failures_));
  base = std::min(base, std::chrono::duration<double>(options_.max_backoff).count());
  ++failures_;
  const double seconds = base + base * options_.jitter * hooks_.rng->UniformDouble();
  const auto d = std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds));
  {
    std::lock_guard lock(mu_);
    backoffs_.push_back(d);
  }
  if (hooks_.wait) return hooks_.wait(d) && !stop_;
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, d, [&] { return stop_.load(); });
  return !stop_;
}

Status Reflector::ListAndReplace() {
  // The old store goes first and the list fills the new one as its pages arrive: one copy of the
  // objects, packed, plus the page in flight. Until a list succeeds nothing reads the store (a
  // failed list is retried before any watch or resync). The old entries' blocks stay in pool_ and
  // take the new ones: new chunks allocated amid the pages' garbage would pin it after a relist.
  store_.clear();
  std::string cont;
  std::string rv;
  do {
    std::string path = Join(options_.path, fmt::format("limit={}", options_.page_size));
    if (!cont.empty()) path = Join(path, "continue=" + QueryEscape(cont));
    auto list = client_.Json("GET", path);
    if (!list.has_value()) {
      // An expired continue token: start the list again (client-go's pager falls back to a full list).
      store_.clear();
      return list.error();
    }
    const nlohmann::json& meta = list->contains("metadata") ? (*list)["metadata"] : nlohmann::json::object();
    if (!list->contains("items") || !(*list)["items"].is_array() || !meta.is_object() ||
        !meta.contains("resourceVersion")) {
      store_.clear();
      return UnavailableError(fmt::format("list {}: not a list (items, metadata.resourceVersion)", options_.path));
    }
    rv = meta.value("resourceVersion", "");
    cont = meta.value("continue", "");
    for (auto& item : (*list)["items"]) {
      if (options_.transform) options_.transform(item);
      store_.insert_or_assign(Text(KeyOf(item), &pool_), Text(keys_.Pack(item), &pool_));
    }
  } while (!cont.empty());
  ReplaceFromStore();
  {
    std::lock_guard lock(mu_);
    rv_ = rv;
  }
  last_resync_ = hooks_.clock->Now();
  synced_ = true;
  CountWhat("list");
  Log("watch_listed", {{"objects", store_.size()}, {"resource_version", rv}});
  return Status::Ok();
}

bool Reflector::ApplyEvent(std::string_view line, WatchEnd* end) {
  auto event = ParsePeerJson(line);
  if (!event.is_object() || !event.contains("type") || !event["type"].is_string() || !event.contains("object") ||
      !event["object"].is_object()) {
    Log("watch_bad_event", {{"line", std::string(line.substr(0, 200))}});
    *end = WatchEnd::kBroken;
    return false;
  }
  const std::string type = event["type"].get<std::string>();
  nlohmann::json& object = event["object"];
  if (type == "ERROR") {
    const int code = StatusCodeOf(object);
    Log("watch_error_event", {{"code", code}, {"message", object.value("message", "")}});
    *end = code == 410 ? WatchEnd::kExpired : WatchEnd::kError;
    return false;
  }
  std::string rv;
  if (object.contains("metadata") && object["metadata"].is_object()) {
    rv = object["metadata"].value("resourceVersion", "");
  }
  if ((type == "ADDED" || type == "MODIFIED" || type == "DELETED") && options_.transform) options_.transform(object);
  if (type == "ADDED" || type == "MODIFIED") {
    auto [it, inserted] = store_.insert_or_assign(Text(KeyOf(object), &pool_), Text(keys_.Pack(object), &pool_));
    if (inserted || type == "ADDED") {
      handler_.OnAdd(object);
    } else {
      handler_.OnUpdate(object);
    }
  } else if (type == "DELETED") {
    store_.erase(Text(KeyOf(object), &pool_));
    handler_.OnDelete(object);
  } else if (type != "BOOKMARK") {
    Log("watch_unknown_event", {{"type", type}});
  }
  if (!rv.empty()) {
    std::lock_guard lock(mu_);
    rv_ = rv;
  }
  CountWhat(type == "BOOKMARK" ? "bookmark" : "event");
  return true;
}

Reflector::WatchEnd Reflector::WatchOnce() {
  const double min_s = std::chrono::duration<double>(options_.min_watch_timeout).count();
  const auto timeout = static_cast<std::int64_t>(min_s * (1.0 + hooks_.rng->UniformDouble()));
  const std::string path =
      Join(options_.path, fmt::format("watch=true&resourceVersion={}&allowWatchBookmarks=true&timeoutSeconds={}",
                                      QueryEscape(resource_version()), std::max<std::int64_t>(1, timeout)));
  WatchEnd end = WatchEnd::kTimeout;
  std::int64_t events = 0;
  int status = 0;
  std::string rest;
  const Status s = client_.Stream(
      path,
      [&](std::string_view line) {
        if (stop_) {
          end = WatchEnd::kStopped;
          return false;
        }
        if (!ApplyEvent(line, &end)) return false;
        if (++events == 1) ResetBackoff();
        MaybeResync();
        return true;
      },
      &status, &rest, &stop_);
  if (stop_) return WatchEnd::kStopped;
  if (end != WatchEnd::kTimeout) return end;
  if (status == 410) {
    Log("watch_gone", {{"message", ApiClient::StatusMessage(rest)}});
    return WatchEnd::kExpired;
  }
  if (!s.ok() || status < 200 || status >= 300) {
    Log("watch_broken", {{"error", s.ok() ? fmt::format("HTTP {}: {}", status, ApiClient::StatusMessage(rest))
                                          : s.message()},
                         {"events", events},
                         {"partial_bytes", status >= 200 && status < 300 ? rest.size() : 0}});
    // An answer with an error status (not 429: busy) counts toward a relist; no answer does not.
    const bool answered = status >= 300 && status != 429;
    return answered ? WatchEnd::kError : WatchEnd::kBroken;
  }
  if (!rest.empty()) {
    Log("watch_broken", {{"error", "stream ended inside an event"}, {"partial_bytes", rest.size()}});
    return WatchEnd::kBroken;
  }
  return WatchEnd::kTimeout;
}

void Reflector::ReplaceFromStore() {
  handler_.OnReplaceEach([this](const ReflectorHandler::Visit& visit) {
    for (const auto& [key, packed] : store_) {
      auto object = keys_.Unpack(packed);
      SEEDANCE_CHECK(object.has_value()) << key << ": " << object.error().message();  // written by Pack
      visit(*object);
    }
  });
}

void Reflector::MaybeResync() {
  if (options_.resync_period <= Duration::zero()) return;
  const Duration now = hooks_.clock->Now();
  if (now - last_resync_ < options_.resync_period) return;
  last_resync_ = now;
  ReplaceFromStore();
  CountWhat("resync");
}

void Reflector::Run() {
  bool need_list = true;
  while (!stop_) {
    if (need_list) {
      const Status s = ListAndReplace();
      if (!s.ok()) {
        Log("watch_list_failed", {{"error", s.message()}});
        CountWhat("reconnect");
        ++reconnects_;
        if (!Backoff()) break;
        continue;
      }
      ResetBackoff();
      need_list = false;
    }
    MaybeResync();
    const WatchEnd end = WatchOnce();
    switch (end) {
      case WatchEnd::kStopped:
        return;
      case WatchEnd::kTimeout:
        break;
      case WatchEnd::kExpired:
        ++relists_;
        CountWhat("relist");
        Log("watch_relist", {{"resource_version", resource_version()}});
        need_list = true;
        break;
      case WatchEnd::kBroken:
      case WatchEnd::kError:
        ++reconnects_;
        CountWhat("reconnect");
        if (!Backoff()) return;
        if (end == WatchEnd::kError && options_.relist_after_errors > 0 &&
            ++error_answers_ >= options_.relist_after_errors) {
          ++relists_;
          CountWhat("relist");
          Log("watch_relist", {{"resource_version", resource_version()},
                               {"reason", fmt::format("{} watch errors in a row", error_answers_)}});
          need_list = true;
        }
        break;
    }
  }
}

}  // namespace seedance::kube
