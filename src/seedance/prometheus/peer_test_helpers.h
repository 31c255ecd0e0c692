#pragma once

// What the Prometheus peer tests share: a shell command's exit code and output, the scalar of an
// instant query, and docs/YOUR_FLEET.md's walk (the ```sh block after the
// `<!-- your-fleet-walkthrough` marker), read line by line as a user would copy it.

#include <httplib.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <sys/wait.h>

#include <nlohmann/json.hpp>

namespace seedance::prometheus::peer {

struct RunResult {
  int rc = -1;
  std::string out;  // stdout and stderr
};

inline RunResult RunCommand(const std::string& command) {
  RunResult r;
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = ::pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// The scalar an instant query returns (at `time`, Unix seconds, when not empty), or -1.
inline double InstantValue(httplib::Client& prom, const std::string& query, const std::string& time = "") {
  httplib::Params params{{"query", query}};
  if (!time.empty()) params.emplace("time", time);
  auto r = prom.Get("/api/v1/query", params, httplib::Headers{});
  if (!r || r->status != 200) return -1;
  auto j = nlohmann::json::parse(r->body, nullptr, false);
  if (!j.is_object() || j.value("status", "") != "success") return -1;
  const auto& result = j["data"]["result"];
  if (!result.is_array() || result.empty()) return -1;
  return std::stod(result[0]["value"][1].get<std::string>());
}

// The walk's command lines (empty lines dropped); empty when the file or the block is missing.
inline std::vector<std::string> WalkCommands(const std::string& doc_path) {
  std::ifstream doc(doc_path);
  std::vector<std::string> commands;
  bool marked = false, in_block = false;
  for (std::string l; std::getline(doc, l);) {
    if (l.rfind("<!-- your-fleet-walkthrough", 0) == 0) {
      marked = true;
    } else if (marked && !in_block && l.rfind("```sh", 0) == 0) {
      in_block = true;
    } else if (in_block) {
      if (l.rfind("```", 0) == 0) break;
      if (!l.empty()) commands.push_back(l);
    }
  }
  return commands;
}

}  // namespace seedance::prometheus::peer
