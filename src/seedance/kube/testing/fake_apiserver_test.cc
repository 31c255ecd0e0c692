// The fake API server's wire format: lists, single objects, create / update conflicts, bindings
// and leases, as a client sees them over HTTP.

#include "seedance/kube/testing/fake_apiserver.h"

#include <gtest/gtest.h>

#include "seedance/kube/client.h"

namespace seedance::kube::testing {
namespace {

using nlohmann::json;

TEST(FakeApiServerTest, ListShapesAndObjects) {
  FakeApiServer fake;
  ApiClient c(fake.credentials());
  fake.Put("nodes", json{{"metadata", {{"name", "n1"}}}});
  auto list = c.Json("GET", "/api/v1/nodes");
  ASSERT_TRUE(list.has_value()) << list.error().message();
  EXPECT_EQ((*list)["kind"], "NodeList");
  EXPECT_EQ((*list)["apiVersion"], "v1");
  EXPECT_EQ((*list)["metadata"]["resourceVersion"], std::to_string(fake.resource_version()));
  ASSERT_EQ((*list)["items"].size(), 1u);
  EXPECT_FALSE((*list)["items"][0].contains("kind"));
  EXPECT_FALSE((*list)["items"][0]["metadata"]["uid"].get<std::string>().empty());
  auto one = c.Json("GET", "/api/v1/nodes/n1");
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ((*one)["kind"], "Node");
  auto missing = c.Json("GET", "/api/v1/nodes/nope");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.error().message().find("nodes \"nope\" not found"), std::string::npos);
}

TEST(FakeApiServerTest, BindingSetsNodeNameOnceAndConflictsAfter) {
  FakeApiServer fake;
  ApiClient c(fake.credentials());
  auto created = c.Json("POST", "/api/v1/namespaces/team/pods",
                        json{{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", "p"}}}, {"spec", json::object()}});
  ASSERT_TRUE(created.has_value()) << created.error().message();
  EXPECT_EQ((*created)["metadata"]["namespace"], "team");
  auto again = c.Json("POST", "/api/v1/namespaces/team/pods", json{{"metadata", {{"name", "p"}}}});
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code(), StatusCode::kAlreadyExists);
  const json binding = {{"apiVersion", "v1"},
                        {"kind", "Binding"},
                        {"metadata", {{"name", "p"}, {"namespace", "team"}}},
                        {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", "n1"}}}};
  auto bound = c.Request("POST", "/api/v1/namespaces/team/pods/p/binding", binding.dump());
  ASSERT_TRUE(bound.has_value());
  EXPECT_EQ(bound->status, 201);
  EXPECT_EQ((*fake.Get("pods", "team", "p"))["spec"]["nodeName"], "n1");
  auto twice = c.Json("POST", "/api/v1/namespaces/team/pods/p/binding", binding);
  ASSERT_FALSE(twice.has_value());
  EXPECT_EQ(twice.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(twice.error().message().find("already assigned to node \"n1\""), std::string::npos);
  auto nobody = c.Json("POST", "/api/v1/namespaces/team/pods/q/binding", binding);
  ASSERT_FALSE(nobody.has_value());
  EXPECT_EQ(nobody.error().code(), StatusCode::kNotFound);
}

TEST(FakeApiServerTest, LeaseUpdatesConflictOnAStaleResourceVersion) {
  FakeApiServer fake;
  ApiClient c(fake.credentials());
  const std::string base = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases";
  ASSERT_EQ(c.Json("GET", base + "/seedance").error().code(), StatusCode::kNotFound);
  auto lease = c.Json("POST", base,
                      json{{"apiVersion", "coordination.k8s.io/v1"},
                           {"kind", "Lease"},
                           {"metadata", {{"name", "seedance"}}},
                           {"spec", {{"holderIdentity", "a"}, {"leaseDurationSeconds", 15}}}});
  ASSERT_TRUE(lease.has_value()) << lease.error().message();
  EXPECT_EQ((*lease)["apiVersion"], "coordination.k8s.io/v1");
  json mine = *lease;
  mine["spec"]["holderIdentity"] = "b";
  auto won = c.Json("PUT", base + "/seedance", mine);
  ASSERT_TRUE(won.has_value()) << won.error().message();
  mine["spec"]["holderIdentity"] = "c";  // still the old resourceVersion
  auto lost = c.Json("PUT", base + "/seedance", mine);
  ASSERT_FALSE(lost.has_value());
  EXPECT_EQ(lost.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ((*fake.Get("leases", "kube-system", "seedance"))["spec"]["holderIdentity"], "b");
}

TEST(FakeApiServerTest, WatchStreamsJsonLinesAndGoneAfterCompaction) {
  FakeApiServer fake;
  ApiClient c(fake.credentials());
  fake.Put("nodes", json{{"metadata", {{"name", "n1"}}}});
  const std::int64_t rv = fake.resource_version();
  fake.Put("nodes", json{{"metadata", {{"name", "n2"}}}});
  std::vector<json> events;
  int status = 0;
  std::string rest;
  Status s = c.Stream("/api/v1/nodes?watch=true&resourceVersion=" + std::to_string(rv) + "&timeoutSeconds=1",
                      [&](std::string_view line) {
                        events.push_back(json::parse(line));
                        return true;
                      },
                      &status, &rest);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(status, 200);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["type"], "ADDED");
  EXPECT_EQ(events[0]["object"]["kind"], "Node");
  EXPECT_EQ(events[0]["object"]["metadata"]["name"], "n2");
  fake.Compact();
  fake.Put("nodes", json{{"metadata", {{"name", "n3"}}}});
  events.clear();
  s = c.Stream("/api/v1/nodes?watch=true&resourceVersion=" + std::to_string(rv), [&](std::string_view line) {
    events.push_back(json::parse(line));
    return true;
  }, &status, &rest);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["type"], "ERROR");
  EXPECT_EQ(events[0]["object"]["kind"], "Status");
  EXPECT_EQ(events[0]["object"]["code"], 410);
  EXPECT_EQ(events[0]["object"]["reason"], "Expired");
  fake.SetGoneAsHttp(true);
  s = c.Stream("/api/v1/nodes?watch=true&resourceVersion=" + std::to_string(rv), [&](std::string_view) { return true; },
               &status, &rest);
  EXPECT_EQ(status, 410);
  EXPECT_NE(rest.find("too old resource version"), std::string::npos);
}

}  // namespace
}  // namespace seedance::kube::testing
