// Memory of the cluster watch (issue 40): a 5,000-node / 50,000-pod cluster served by the fake
// kube-apiserver, followed by ClusterWatch into the Extender, fits in 1 GiB RSS, and a relist
// (410 Expired on both watches) does not double it, and the RSS per object stays within 2 KB per
// pod and 4 KB per node (after the first list). Production-shaped objects: ~6.9 KB pods,
// ~6.8 KB nodes (testing/k8s_objects.h). The fake runs in one child process and the server's
// side in another, so each RSS is the watch's own. Prints the figures docs/BENCHMARKS.md quotes.
// Label slow (about a minute of CPU and ~2 GB in the fake's process).

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "seedance/kube/testing/fake_apiserver.h"
#include "seedance/server/cluster_watch.h"
#include "seedance/server/testing/k8s_objects.h"

namespace seedance::server {
namespace {

using nlohmann::json;

std::int64_t StatusKib(const char* field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind(field, 0) == 0) return std::stoll(line.substr(std::string(field).size()));
  }
  return -1;
}

// The fake API server's process: serves `nodes` nodes and `pods` bound pods (ten per node, eight
// of them with one GPU); writes its port to `out`; on 'r' from `in` expires every watch (the
// watches relist), on 'q' or EOF exits.
[[noreturn]] void ServeCluster(int nodes, int pods, int in, int out) {
  kube::testing::FakeApiServer fake;
  std::vector<json> objects;
  for (int i = 0; i < nodes; ++i) objects.push_back(testing::RealisticNode(i));
  fake.Load("nodes", std::move(objects));
  objects.clear();
  for (int i = 0; i < pods; ++i) {
    json p = testing::RealisticPod(i, "gpu-node-" + std::to_string(i / 10), "team-" + std::to_string(i % 4));
    if (i % 10 >= 8) {  // CPU-only
      p["spec"]["containers"][0]["resources"] = {{"requests", {{"cpu", "2"}, {"memory", "8Gi"}}}};
      p["metadata"]["annotations"].erase("seedance.io/gpu-milli");
    }
    objects.push_back(std::move(p));
    if (objects.size() == 5000) fake.Load("pods", std::move(objects)), objects.clear();
  }
  fake.Load("pods", std::move(objects));
  const int port = fake.port();
  (void)!write(out, &port, sizeof port);
  char c = 0;
  while (read(in, &c, 1) == 1 && c != 'q') {
    if (c == 'r') {
      // Both watches open first: a watch that starts after the expiry begins past it.
      while (fake.open_watches() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      fake.ExpireWatches();
    }
    (void)!write(out, &c, 1);
  }
  _exit(0);
}

std::int64_t HeapInUse() {
#ifdef __GLIBC__
  const struct mallinfo2 m = mallinfo2();
  return static_cast<std::int64_t>(m.uordblks + m.hblkhd);
#else
  return 0;
#endif
}

double Lists(const App& app, const char* resource) {
  return app.metrics.Value("seedance_watch_lists_total", {{"resource", resource}});
}

struct Figures {
  std::int64_t base_kib = 0, synced_kib = 0, first_peak_kib = 0, relist_peak_kib = 0, after_relist_kib = 0;
  std::int64_t bound = 0;
  std::int64_t base_heap = 0, synced_heap = 0, after_heap = 0;  // bytes malloc hands out (mallinfo2), 0 without glibc
  double list_s = 0, relist_s = 0;
};

// The server's side, in its own process: ClusterWatch into an Extender until both lists are
// applied and every pod is bound; then a relist. Writes Figures to `out`.
[[noreturn]] void FollowCluster(int port, int pods, int to_fake, int from_fake, int out) {
  Figures f;
  App app;
  app.now_ms = [] { return std::int64_t{0}; };
  auto extender = std::make_unique<Extender>(app);
  kube::Credentials c;
  c.server = "http://127.0.0.1:" + std::to_string(port);
  c.token = "fake-token";
  c.source = "memory test";
  auto watch = std::make_unique<ClusterWatch>(app, *extender, c);
  f.base_kib = StatusKib("VmRSS:");
  f.base_heap = HeapInUse();
  // The peak by sampling VmRSS every 5 ms (VmHWM is not kept up to date by every kernel).
  std::atomic<std::int64_t> peak{0};
  std::atomic<bool> sampling{true};
  std::thread sampler([&] {
    while (sampling) {
      peak = std::max(peak.load(), StatusKib("VmRSS:"));
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  auto wait_lists = [&](double n) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto deadline = t0 + std::chrono::minutes(10);
    while (std::chrono::steady_clock::now() < deadline &&
           (Lists(app, "nodes") < n || Lists(app, "pods") < n ||
            static_cast<int>(extender->num_bound()) < pods)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  watch->Start();
  f.list_s = wait_lists(1);
  f.synced_kib = StatusKib("VmRSS:");
  f.synced_heap = HeapInUse();
  f.first_peak_kib = peak.exchange(0);  // from here: the relist's peak
  char r = 'r';
  (void)!write(to_fake, &r, 1);
  (void)!read(from_fake, &r, 1);
  f.relist_s = wait_lists(2);
  f.after_relist_kib = StatusKib("VmRSS:");
  f.after_heap = HeapInUse();
  sampling = false;
  sampler.join();
  f.relist_peak_kib = std::max(peak.load(), f.after_relist_kib);
  f.bound = static_cast<std::int64_t>(extender->num_bound());
  (void)!write(out, &f, sizeof f);
  watch->Stop();
  _exit(0);
}

Figures Measure(int nodes, int pods) {
  int to_fake[2], from_fake[2], result[2];
  EXPECT_EQ(pipe(to_fake), 0);
  EXPECT_EQ(pipe(from_fake), 0);
  EXPECT_EQ(pipe(result), 0);
  const pid_t fake = fork();
  if (fake == 0) ServeCluster(nodes, pods, to_fake[0], from_fake[1]);
  int port = 0;
  EXPECT_EQ(read(from_fake[0], &port, sizeof port), static_cast<ssize_t>(sizeof port));
  const pid_t server = fork();
  if (server == 0) FollowCluster(port, pods, to_fake[1], from_fake[0], result[1]);
  Figures f;
  EXPECT_EQ(read(result[0], &f, sizeof f), static_cast<ssize_t>(sizeof f));
  char q = 'q';
  (void)!write(to_fake[1], &q, 1);
  waitpid(server, nullptr, 0);
  waitpid(fake, nullptr, 0);
  for (int fd : {to_fake[0], to_fake[1], from_fake[0], from_fake[1], result[0], result[1]}) close(fd);
  std::printf("%d nodes, %d pods: RSS %lld KiB before the watch, %lld KiB synced (first list %.1f s, peak %lld KiB), "
              "relist %.1f s: peak %lld KiB, %lld KiB after; %lld pods bound\n",
              nodes, pods, static_cast<long long>(f.base_kib), static_cast<long long>(f.synced_kib), f.list_s,
              static_cast<long long>(f.first_peak_kib), f.relist_s, static_cast<long long>(f.relist_peak_kib),
              static_cast<long long>(f.after_relist_kib), static_cast<long long>(f.bound));
  std::printf("  heap in use: %lld KiB before the watch, %lld KiB synced, %lld KiB after the relist\n",
              static_cast<long long>(f.base_heap / 1024), static_cast<long long>(f.synced_heap / 1024),
              static_cast<long long>(f.after_heap / 1024));
  return f;
}

TEST(ClusterWatchMemory, FiveThousandNodesFiftyThousandPodsInOneGiB) {
  const Figures n = Measure(5000, 0);
  const Figures all = Measure(5000, 50000);
  ASSERT_EQ(all.bound, 50000);
  const double per_node = static_cast<double>(n.synced_kib - n.base_kib) * 1024 / 5000;
  const double per_pod = static_cast<double>(all.synced_kib - n.synced_kib) * 1024 / 50000;
  std::printf("per node %.0f bytes, per pod %.0f bytes (RSS after the first list)\n", per_node, per_pod);
  EXPECT_LE(all.synced_kib, 1024 * 1024) << "RSS over 1 GiB";
  EXPECT_LE(all.first_peak_kib, 1024 * 1024) << "the first list's peak over 1 GiB";
  EXPECT_LE(all.relist_peak_kib, 1024 * 1024) << "the relist's peak over 1 GiB";
  // A relist does not double the watch's memory.
  EXPECT_LT(all.relist_peak_kib - all.base_kib, 2 * (all.synced_kib - all.base_kib));
  // Memory per object, not per byte of JSON (issue 40): the RSS per object counts the reflector's
  // store (packed, kube/packed_json.h), the extender's state and what the allocator keeps.
  EXPECT_LE(per_node, 4096) << "bytes per node";
  EXPECT_LE(per_pod, 2048) << "bytes per pod";
}

}  // namespace
}  // namespace seedance::server
