// The fake API server checked against the real one: every exchange captured from a real
// kube-apiserver (tests/data/k8s/, `controlplane capture`) is replayed against the fake, which
// must answer with the same status code and the same JSON shape: kind, apiVersion, the metadata
// fields, a Status's status / reason / code / details for errors, the event types of a watch and
// each event's envelope. Values that differ per object (uids, resourceVersions, timestamps,
// messages) are compared by type only. Left out, as seedance reads neither: metadata.managedFields
// and metadata.generation (the fake does no server-side apply and keeps no generation).

#include <httplib.h>

#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "seedance/kube/testing/fake_apiserver.h"

namespace seedance::kube::testing {
namespace {

using nlohmann::json;

std::string CaptureDir() { return std::string(SEEDANCE_TEST_DATA_DIR) + "/../tests/data/k8s/"; }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// NAME.json (the body) and NAME.http.json (method, path, request, status).
struct Capture {
  json meta, body;
  std::vector<json> lines;  // a watch stream's events
};

Capture Load(const std::string& name) {
  Capture c;
  c.meta = json::parse(ReadFile(CaptureDir() + name + ".http.json"));
  const std::string body = ReadFile(CaptureDir() + name + ".json");
  std::istringstream in(body);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) c.lines.push_back(json::parse(line));
  }
  if (c.lines.size() == 1) c.body = c.lines[0];
  return c;
}

// Keys and JSON types, recursively; an array by its first element.
json Shape(const json& j) {
  if (j.is_object()) {
    json out = json::object();
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.key() == "managedFields" || it.key() == "generation") continue;
      out[it.key()] = Shape(*it);
    }
    return out;
  }
  if (j.is_array()) return j.empty() ? json::array() : json::array({Shape(j[0])});
  return j.type_name();
}

// Same shape, and equal values where the wire format fixes them.
void ExpectSameWire(const json& real, const json& fake, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(Shape(real), Shape(fake)) << "real: " << real.dump() << "\nfake: " << fake.dump();
  for (const char* k : {"kind", "apiVersion", "status", "reason", "code"}) {
    if (real.contains(k) && !real[k].is_object()) {
      EXPECT_EQ(real[k], fake.value(k, json())) << k;
    }
  }
  if (real.contains("details")) {
    EXPECT_EQ(real["details"], fake.value("details", json()));
  }
}

// An object as a client creates it: without what the server fills in.
json AsCreated(json o) {
  for (const char* k : {"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields",
                        "deletionTimestamp", "deletionGracePeriodSeconds"}) {
    o["metadata"].erase(k);
  }
  o.erase("kind");
  o.erase("apiVersion");
  return o;
}

class FakeApiServerWireTest : public ::testing::Test {
 protected:
  httplib::Result Do(const json& meta, const std::string& body) {
    const std::string method = meta["method"];
    const std::string path = meta["path"];
    if (method == "GET") return client_.Get(path);
    if (method == "POST") return client_.Post(path, body, "application/json");
    return client_.Put(path, body, "application/json");
  }
  // Replays capture `name` (its request body, or `body` when given) and compares the answer.
  json Replay(const std::string& name, std::optional<json> body = std::nullopt) {
    const Capture c = Load(name);
    const std::string sent = body ? body->dump() : (c.meta.contains("request") ? c.meta["request"].dump() : "");
    auto r = Do(c.meta, sent);
    EXPECT_TRUE(r) << name;
    if (!r) return json();
    EXPECT_EQ(r->status, c.meta["status"].get<int>()) << name << ": " << r->body;
    const json got = json::parse(r->body, nullptr, false);
    ExpectSameWire(c.body, got, name);
    return got;
  }
  // Loads the captured lists into the fake, as the objects the API server held.
  void LoadObjects() {
    for (const char* list : {"nodes-list", "pods-list"}) {
      const std::string resource = std::string(list) == "nodes-list" ? "nodes" : "pods";
      const Capture c = Load(list);  // not Load(list).body[...] in the loop: the temporary would die first
      for (const json& item : c.body["items"]) fake_.Put(resource, item);
    }
  }

  FakeApiServer fake_;
  httplib::Client client_{"127.0.0.1", fake_.port()};
};

TEST_F(FakeApiServerWireTest, ListsAndOneObject) {
  LoadObjects();
  for (const char* name : {"nodes-list", "pods-list"}) {
    const json got = Replay(name);
    // Items carry no kind / apiVersion in a list, and keep every field the API server wrote.
    const Capture real = Load(name);
    ASSERT_EQ(got["items"].size(), real.body["items"].size()) << name;
    for (std::size_t i = 0; i < got["items"].size(); ++i) {
      ExpectSameWire(real.body["items"][i], got["items"][i], std::string(name) + " item");
    }
  }
}

TEST_F(FakeApiServerWireTest, BindingCreatedThenConflict) {
  LoadObjects();
  Replay("binding-create");
  const json conflict = Replay("binding-conflict");
  EXPECT_NE(conflict.value("message", "").find("is already assigned to node \"gpu-a\""), std::string::npos);
  const json pod = Replay("pod-bound");
  EXPECT_EQ(pod["spec"]["nodeName"], Load("pod-bound").body["spec"]["nodeName"]);
}

TEST_F(FakeApiServerWireTest, LeaseCreateGetPutAndStaleConflict) {
  Replay("lease-create");
  json lease = Replay("lease-get");
  const json stale_rv = lease["metadata"]["resourceVersion"];
  lease["spec"]["renewTime"] = Load("lease-put").meta["request"]["spec"]["renewTime"];
  const json put = Replay("lease-put", lease);
  EXPECT_NE(put["metadata"]["resourceVersion"], stale_rv);
  EXPECT_EQ(put["metadata"]["uid"], lease["metadata"]["uid"]);
  lease["metadata"]["resourceVersion"] = stale_rv;
  lease["spec"]["holderIdentity"] = "seedance-1";
  Replay("lease-put-conflict", lease);
}

TEST_F(FakeApiServerWireTest, WatchEventsAndBookmark) {
  LoadObjects();
  const Capture c = Load("watch-events");
  std::vector<std::string> real_types;
  std::map<std::string, json> real_by_type;
  for (const json& e : c.lines) {
    if (real_types.empty() || real_types.back() != e["type"]) real_types.push_back(e["type"]);
    real_by_type.emplace(e["type"], e);
  }
  const std::string path = "/api/v1/namespaces/team-a/pods?watch=true&allowWatchBookmarks=true&timeoutSeconds=1"
                           "&resourceVersion=" + std::to_string(fake_.resource_version());
  std::string body;
  int status = 0;
  std::thread watch([&] {
    httplib::Client w("127.0.0.1", fake_.port());
    auto r = w.Get(path);
    if (r) {
      status = r->status;
      body = r->body;
    }
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (fake_.open_watches() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  // The capture's pod: created, labelled, deleted; then a bookmark.
  fake_.Put("pods", AsCreated(real_by_type.at("ADDED")["object"]));
  fake_.Put("pods", AsCreated(real_by_type.at("DELETED")["object"]));
  fake_.Delete("pods", "team-a", real_by_type.at("ADDED")["object"]["metadata"]["name"]);
  fake_.Bookmark();
  watch.join();
  EXPECT_EQ(status, c.meta["status"].get<int>());
  std::vector<std::string> fake_types;
  std::istringstream in(body);
  for (std::string line; std::getline(in, line);) {
    const json e = json::parse(line);
    if (fake_types.empty() || fake_types.back() != e["type"]) fake_types.push_back(e["type"]);
    ASSERT_TRUE(real_by_type.count(e["type"])) << line;
    const json& real = real_by_type.at(e["type"]);
    EXPECT_EQ(Shape(json::object({{"type", real["type"]}})), Shape(json::object({{"type", e["type"]}})));
    ExpectSameWire(real["object"], e["object"], "watch " + e["type"].get<std::string>());
  }
  EXPECT_EQ(fake_types, real_types);
}

TEST_F(FakeApiServerWireTest, WatchFromCompactedVersionIsGone) {
  LoadObjects();
  const std::int64_t old = fake_.resource_version() - 1;
  fake_.Put("pods", AsCreated(Load("pods-list").body["items"][0]));
  fake_.Compact();
  const Capture c = Load("watch-gone");
  ASSERT_EQ(c.lines.size(), 1u);
  auto r = client_.Get("/api/v1/namespaces/team-a/pods?watch=true&timeoutSeconds=5&resourceVersion=" +
                       std::to_string(old));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, c.meta["status"].get<int>());
  const json got = json::parse(r->body);  // exactly one event, then the stream ends
  EXPECT_EQ(got["type"], "ERROR");
  ExpectSameWire(c.body["object"], got["object"], "watch-gone");
  EXPECT_EQ(got["object"]["reason"], "Expired");
  EXPECT_EQ(got["object"]["code"], 410);
}

}  // namespace
}  // namespace seedance::kube::testing
