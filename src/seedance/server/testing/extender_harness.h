#pragma once

// Test harness: an in-process cpp-httplib server (loopback, port 0) with the extender service
// registered, and builders for v1.Node / v1.Pod JSON.

#include <httplib.h>

#include <memory>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "seedance/cluster/cluster.h"
#include "seedance/cluster/gpu_model.h"
#include "seedance/server/app.h"
#include "seedance/server/extender.h"

namespace seedance::server::testing {

class ExtenderHarness {
 public:
  explicit ExtenderHarness(ServerConfig config = ServerConfig::Defaults(), ExtenderOptions options = {}) {
    app.now_ms = [this] { return now_ms; };
    app.config.Set(std::make_shared<const ServerConfig>(std::move(config)));
    service = MakeExtenderService(app, std::move(options));
    service->Register(server);
    server.set_tcp_nodelay(true);
    server.set_keep_alive_timeout(1);
    port = server.bind_to_any_port("127.0.0.1");
    thread = std::thread([this] { server.listen_after_bind(); });
    while (!server.is_running()) std::this_thread::yield();
    client = std::make_unique<httplib::Client>("127.0.0.1", port);
    client->set_keep_alive(true);
    client->set_tcp_nodelay(true);
  }
  ~ExtenderHarness() {
    client.reset();  // closes the keep-alive connection, so stop() does not wait on it
    server.stop();
    thread.join();
  }

  // POSTs `body`; returns {status, parsed body (null when not JSON)}.
  std::pair<int, nlohmann::json> Post(const std::string& path, const nlohmann::json& body) {
    return PostRaw(path, body.dump());
  }
  std::pair<int, nlohmann::json> PostRaw(const std::string& path, const std::string& body) {
    auto res = client->Post(path, body, "application/json");
    if (!res) return {-1, nullptr};
    return {res->status, nlohmann::json::parse(res->body, nullptr, false)};
  }
  std::pair<int, nlohmann::json> Get(const std::string& path) {
    auto res = client->Get(path);
    if (!res) return {-1, nullptr};
    return {res->status, nlohmann::json::parse(res->body, nullptr, false)};
  }

  std::int64_t now_ms = 1'000'000;
  App app;
  std::unique_ptr<Service> service;
  httplib::Server server;
  int port = 0;
  std::thread thread;
  std::unique_ptr<httplib::Client> client;
};

// A GPU node (96 cores, 512 GiB) and a GPU pod (1 core, 1 GiB, whole GPUs) for tests.
inline cluster::NodeSpec GpuNode(const std::string& name, int gpus, const char* model = "A100-80G") {
  cluster::NodeSpec n;
  n.name = name;
  n.cpu = MilliCpu::FromRaw(96'000);
  n.memory = Mebibytes::FromRaw(512 * 1024);
  n.gpu_count = gpus;
  n.model = *cluster::ParseGpuModel(model);
  return n;
}

inline cluster::PodSpec GpuPod(const std::string& name, int gpus) {
  cluster::PodSpec p;
  p.name = name;
  p.cpu = MilliCpu::FromRaw(1000);
  p.memory = Mebibytes::FromRaw(1024);
  p.num_gpu = gpus;
  p.gpu_milli = 1000;
  return p;
}

inline nlohmann::json NodeJson(const cluster::NodeSpec& n) {
  nlohmann::json labels = nlohmann::json::object();
  nlohmann::json alloc{{"cpu", std::to_string(n.cpu.raw()) + "m"}, {"memory", std::to_string(n.memory.raw()) + "Mi"}};
  if (n.gpu_count > 0) {
    labels["nvidia.com/gpu.product"] = std::string(cluster::GpuModelName(n.model));
    alloc["nvidia.com/gpu"] = std::to_string(n.gpu_count);
  }
  return {{"metadata", {{"name", n.name}, {"labels", labels}}}, {"spec", nlohmann::json::object()},
          {"status", {{"allocatable", alloc}}}};
}

inline nlohmann::json PodJson(const cluster::PodSpec& p, const std::string& ns, const std::string& uid,
                              const nlohmann::json& labels = nlohmann::json::object()) {
  nlohmann::json req{{"cpu", std::to_string(p.cpu.raw()) + "m"}, {"memory", std::to_string(p.memory.raw()) + "Mi"}};
  nlohmann::json ann = nlohmann::json::object();
  if (p.is_gpu()) {
    if (p.gpu_milli == cluster::kMilliPerGpu) {
      req["nvidia.com/gpu"] = std::to_string(p.num_gpu);
    } else {
      if (p.num_gpu > 1) req["nvidia.com/gpu"] = std::to_string(p.num_gpu);
      ann["seedance.io/gpu-milli"] = std::to_string(p.gpu_milli);
    }
    if (!p.allowed_models.any()) {
      std::string models;
      for (int m = 0; m < 32; ++m) {
        if ((p.allowed_models.mask() & (1u << m)) == 0) continue;
        if (!models.empty()) models += '|';
        models += cluster::GpuModelName(static_cast<cluster::GpuModelIndex>(m));
      }
      ann["seedance.io/gpu-models"] = models;
    }
  }
  return {{"metadata", {{"name", p.name}, {"namespace", ns}, {"uid", uid}, {"labels", labels}, {"annotations", ann}}},
          {"spec", {{"containers", {{{"name", "main"}, {"resources", {{"requests", req}}}}}}}},
          {"status", nlohmann::json::object()}};
}

}  // namespace seedance::server::testing
