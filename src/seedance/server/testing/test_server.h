#pragma once

// A seedance server running in-process on an ephemeral loopback port, for tests:
//   auto s = StartTestServer(options);          // options.port is forced to 0
//   httplib::Client c("127.0.0.1", s->port());
// `parts` (default: all of seedance server's) chooses what it serves; a test may add its own.
// The destructor stops it and joins its thread. The clock is TestServer::clock_ms (start value
// below; tests move it) unless `now_ms` is given.

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "seedance/server/http_server.h"

namespace seedance::server::testing {

class TestServer {
 public:
  ~TestServer() {
    server->Stop();
    if (thread.joinable()) thread.join();
  }
  int port() const { return server->port(); }
  App& app() { return server->app(); }

  std::unique_ptr<HttpServer> server;
  std::thread thread;
  std::shared_ptr<std::atomic<std::int64_t>> clock_ms = std::make_shared<std::atomic<std::int64_t>>(1'795'950'000'000);
};

// Returns the running server, or nullptr after an ADD_FAILURE naming why it did not start.
inline std::unique_ptr<TestServer> StartTestServer(
    ServerOptions options, std::function<std::int64_t()> now_ms = nullptr,
    const std::vector<HttpServer::PartFactory>& parts = HttpServer::DefaultParts()) {
  auto t = std::make_unique<TestServer>();
  options.host = "127.0.0.1";
  options.port = 0;
  if (options.db == ServerOptions{}.db) {
    // Not the shared default file in the working directory: ctest runs tests in parallel.
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string dir = ::testing::TempDir() + "/seedance_ledger_" + info->test_suite_name() + "_" + info->name();
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    options.db = dir + "/ledger.db";
  }
  if (!now_ms) now_ms = [clock = t->clock_ms] { return clock->load(); };
  auto created = HttpServer::Create(std::move(options), std::move(now_ms), parts);
  if (!created.has_value()) {
    ADD_FAILURE() << "server did not start: " << created.error().message();
    return nullptr;
  }
  t->server = std::move(*created);
  HttpServer* s = t->server.get();
  t->thread = std::thread([s] {
    Status st = s->Run();
    EXPECT_TRUE(st.ok()) << st.message();
  });
  for (int i = 0; i < 500 && !s->running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(s->running());
  return t;
}

// Resident set size of this process (the in-process server runs in it), bytes.
inline long RssBytes() {
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return resident * ::sysconf(_SC_PAGESIZE);
}

// A fresh directory under the test temp dir, named after the running test.
inline std::string TestDir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string dir = ::testing::TempDir() + "/seedance_" + info->test_suite_name() + "_" + info->name();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline void WriteFile(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

}  // namespace seedance::server::testing
