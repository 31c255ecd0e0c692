// Serves the telemetry part of `seedance server` alone (test driver for the kill -9 durability
// test until A's `seedance server` is merged):
//   telemetry_server_driver DB_PATH PORT_FILE
// Listens on 127.0.0.1 (a free port, written to PORT_FILE once listening); runs until killed.
#include <httplib.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <thread>

#include "seedance/server/app.h"
#include "seedance/server/telemetry_service.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: telemetry_server_driver DB_PATH PORT_FILE\n";
    return 2;
  }
  seedance::server::App app;
  app.options.db = argv[1];
  app.now_ms = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  seedance::server::TelemetryServiceOptions o;
  o.background = false;
  auto service = seedance::server::MakeTelemetryService(app, o);
  if (auto s = service->Start(); !s.ok()) {
    std::cerr << "telemetry_server_driver: " << s.ToString() << "\n";
    return 1;
  }
  httplib::Server http;
  service->Register(http);
  int port = http.bind_to_any_port("127.0.0.1");
  if (port <= 0) return 1;
  std::thread announce([&http, port, path = std::string(argv[2])] {
    while (!http.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::ofstream(path + ".tmp") << port << "\n";
    std::rename((path + ".tmp").c_str(), path.c_str());
  });
  http.listen_after_bind();
  announce.join();
  service->Stop();
  return 0;
}
