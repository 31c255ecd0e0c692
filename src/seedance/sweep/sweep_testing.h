// Test helpers shared by the sweep tests: the small grid they run and a scratch directory per test.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "seedance/core/file_util.h"
#include "seedance/sweep/sweep.h"

namespace seedance::sweep::testing {

// 2 quotas x 2 policies x 2 seeds of a six-hour llm-finetune window: 8 cells of a few ms each.
inline constexpr const char* kSmallGrid =
    "workloads: [llm-finetune]\n"
    "policies: [fifo, seedance]\n"
    "seeds: [0, 1]\n"
    "values:\n"
    "  duration: 6h\n"
    "  on_demand_quota: [8, 24]\n";

inline std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A fixture with the small grid's plan (build "test-build", bundled data) and an empty scratch
// directory named after the test, removed afterwards.
class SmallGridTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("seedance_sweep_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(root_);
    auto g = ParseGrid("grid.yaml", kSmallGrid, "");
    ASSERT_TRUE(g.has_value()) << g.error().message();
    auto p = MakePlan(*g, DataDir(), "test-build");
    ASSERT_TRUE(p.has_value()) << p.error().message();
    plan_ = *p;
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  std::string Dir(const std::string& name) const { return (root_ / name).string(); }

  std::filesystem::path root_;
  Plan plan_;
};

}  // namespace seedance::sweep::testing
