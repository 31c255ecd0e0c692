// seedance-config.yaml: the parser's keys, ranges and file:line:key errors, section by section
// (moved from sim's engine_test and slurm's slurm_test with the parser, issue 30).
#include "seedance/config/seedance_config.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace seedance::config {
namespace {

const std::string kData = SEEDANCE_TEST_DATA_DIR;

// ---- scheduler: ----

TEST(Config, ParsesSeedKeysAndRejectsBadOnes) {
  auto ok = ParseSimConfig("c.yaml",
                           "scheduler:\n  cost_aware:\n    enabled: true\n    spot_fallback: false\n"
                           "    max_price_ratio: 0.5\n    warmup_window: 2m\n  autoscaling:\n    mode: predictive\n");
  ASSERT_TRUE(ok.has_value()) << ok.error().ToString();
  EXPECT_FALSE(ok->cost_aware.spot_fallback);
  EXPECT_DOUBLE_EQ(ok->cost_aware.max_price_ratio, 0.5);
  EXPECT_DOUBLE_EQ(ok->cost_aware.warmup_window_s, 120);
  EXPECT_EQ(ok->cost_aware.autoscale, AutoscaleMode::kPredictive);
  // One file serves every driver: seedance server's section is a known key here.
  auto baselines = ParseSimConfig("c.yaml", "scheduler:\n  baselines:\n    checkpoint_interval: 1h\n");
  ASSERT_TRUE(baselines.has_value()) << baselines.error().ToString();
  EXPECT_DOUBLE_EQ(baselines->baseline_checkpoint_interval_s, 3600);
  auto shared = ParseSimConfig("c.yaml", "server:\n  admission_mode: kueue\nscheduler:\n  autoscaling:\n    mode: reactive\n");
  ASSERT_TRUE(shared.has_value()) << shared.error().ToString();
  struct Bad {
    const char* text;
    const char* expect;
  } bad[] = {
      {"scheduler:\n  cost_awre: {}\n", "c.yaml:2: key 'scheduler.cost_awre': unknown key"},
      {"scheduler:\n  cost_aware:\n    max_price_ratio: 0\n", "max_price_ratio': 0 is out of range (0, 1]"},
      {"scheduler:\n  cost_aware:\n    max_price_ratio: 1.01\n", "out of range (0, 1]"},
      {"scheduler:\n  cost_aware:\n    warmup_window: -1s\n", "c.yaml:3: key 'scheduler.cost_aware.warmup_window': -1s is out of range"},
      {"scheduler:\n  cost_aware:\n    warmup_window: 300\n",
       "c.yaml:3: key 'scheduler.cost_aware.warmup_window': '300': a number needs a unit (write e.g. 120ms, 2s, 3m"},
      {"scheduler:\n  checkpoint:\n    restart: 60\n", "c.yaml:3: key 'scheduler.checkpoint.restart': '60': a number needs a unit"},
      {"scheduler:\n  cost_aware:\n    enabled: maybe\n", "expected true or false"},
      {"scheduler:\n  autoscaling:\n    mode: magic\n", "(allowed: reactive, predictive)"},
      {"scheduler: [1, 2\n", "c.yaml:"},
      {"scheduler:\n  baselines:\n    checkpoint_interval: 0\n",
       "c.yaml:3: key 'scheduler.baselines.checkpoint_interval': 0 is out of range"},
      {"scheduler:\n  baselines:\n    patience: 1\n", "key 'scheduler.baselines.patience': unknown key"},
  };
  for (const auto& b : bad) {
    auto r = ParseSimConfig("c.yaml", b.text);
    ASSERT_FALSE(r.has_value()) << b.text;
    EXPECT_NE(r.error().message().find(b.expect), std::string::npos) << r.error().message();
  }
}

// The documented example config parses and spells out the defaults.
TEST(Config, ExampleFileIsValidAndMatchesTheDefaults) {
  auto c = LoadSimConfig(kData + "/../examples/seedance-config.yaml");
  ASSERT_TRUE(c.has_value()) << c.error().ToString();
  SimConfig d;
  EXPECT_EQ(c->cost_aware.enabled, d.cost_aware.enabled);
  EXPECT_EQ(c->cost_aware.spot_fallback, d.cost_aware.spot_fallback);
  EXPECT_DOUBLE_EQ(c->cost_aware.max_price_ratio, d.cost_aware.max_price_ratio);
  EXPECT_DOUBLE_EQ(c->cost_aware.warmup_window_s, d.cost_aware.warmup_window_s);
  EXPECT_DOUBLE_EQ(c->cost_aware.min_speed_ratio, d.cost_aware.min_speed_ratio);
  EXPECT_DOUBLE_EQ(c->cost_aware.spot_patience, d.cost_aware.spot_patience);
  EXPECT_DOUBLE_EQ(c->cost_aware.max_spot_wait_s, d.cost_aware.max_spot_wait_s);
  EXPECT_DOUBLE_EQ(c->cost_aware.migrate_min_restarts, d.cost_aware.migrate_min_restarts);
  EXPECT_DOUBLE_EQ(c->cost_aware.spot_return_cooldown_s, d.cost_aware.spot_return_cooldown_s);
  EXPECT_DOUBLE_EQ(c->cost_aware.time_value_per_hour, d.cost_aware.time_value_per_hour);
  EXPECT_DOUBLE_EQ(c->cost_aware.overflow_speed_ratio, d.cost_aware.overflow_speed_ratio);
  EXPECT_DOUBLE_EQ(c->cost_aware.max_step_price_ratio, d.cost_aware.max_step_price_ratio);
  EXPECT_EQ(c->cost_aware.migrate_after_queue, d.cost_aware.migrate_after_queue);
  EXPECT_DOUBLE_EQ(c->cost_aware.spot_mtbf_prior_s, d.cost_aware.spot_mtbf_prior_s);
  EXPECT_EQ(c->cost_aware.autoscale, d.cost_aware.autoscale);
  EXPECT_DOUBLE_EQ(c->cold_start_s, d.cold_start_s);
  EXPECT_DOUBLE_EQ(c->scale_down_delay_s, d.scale_down_delay_s);
  EXPECT_DOUBLE_EQ(c->checkpoint_cost_s, d.checkpoint_cost_s);
  EXPECT_DOUBLE_EQ(c->restart_s, d.restart_s);
  // The operating point at Gavel-LAS's JCT used in docs/BENCHMARKS.md.
  auto las = LoadSimConfig(kData + "/../examples/seedance-at-las-jct.yaml");
  ASSERT_TRUE(las.has_value()) << las.error().ToString();
  EXPECT_EQ(las->cost_aware.spot_patience, 0.0);
  EXPECT_EQ(las->cost_aware.time_value_per_hour, 6.0);
}

// ---- slurm: (what `seedance slurm` reads) ----

TEST(SlurmConfig, SectionParsesAndNamesBadKeys) {
  auto c = ParseSimConfig("c.yaml",
                               "slurm:\n  partition: gpu\n  interval: 2s\n  mode: seedance\n  accounts: {acct-a: team-a}\n"
                               "  gpu_types: [H100, a100]\n  gres_types: {H100: H100}\n  breaker: {accounts: {acct-a: 2.5}}\n");
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_TRUE(c->slurm.present);
  EXPECT_EQ(c->slurm.interval_s, 2);
  EXPECT_EQ(c->slurm.accounts.at("acct-a"), "team-a");
  EXPECT_EQ(c->slurm.gpu_types, (std::vector<std::string>{"H100", "A100"}));
  EXPECT_EQ(c->slurm.gres_types.at("h100"), "H100");
  EXPECT_EQ(c->slurm.breaker_accounts.at("acct-a"), 2.5);
  auto bad = ParseSimConfig("c.yaml", "slurm:\n  partition: gpu\n  intervl: 5s\n");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("c.yaml:3: key 'slurm.intervl': unknown key"), std::string::npos) << bad.error().message();
  auto bad_gpu = ParseSimConfig("c.yaml", "slurm:\n  gpu_types: [H100, Z9]\n");
  ASSERT_FALSE(bad_gpu.has_value());
  EXPECT_NE(bad_gpu.error().message().find("c.yaml:2: key 'slurm.gpu_types[1]'"), std::string::npos) << bad_gpu.error().message();
  auto bad_mode = ParseSimConfig("c.yaml", "slurm:\n  mode: kueue\n");
  ASSERT_FALSE(bad_mode.has_value());
  auto fair_mode = ParseSimConfig("c.yaml", "slurm:\n  mode: fair-sharing\n");
  ASSERT_FALSE(fair_mode.has_value());  // Kueue's Fair Sharing is a what-if baseline only
  EXPECT_NE(fair_mode.error().message().find("(allowed: strict, borrowing, seedance)"), std::string::npos)
      << fair_mode.error().message();
}

TEST(SlurmConfig, PreemptAndFailOpenKeysParseAndNameBadValues) {
  auto c = ParseSimConfig("c.yaml", "slurm:\n  preempt: {signal: SIGUSR2, grace: 2m}\n  checkpoint_interval: 15m\n"
                                          "  heartbeat: /run/seedance/hb\n  fail_open_after: 30s\n  lock: /run/seedance/lock\n");
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->slurm.preempt_signal, "USR2");
  EXPECT_EQ(c->slurm.preempt_grace_s, 120);
  EXPECT_EQ(c->slurm.checkpoint_interval_s, 900);
  EXPECT_EQ(c->slurm.heartbeat_path, "/run/seedance/hb");
  EXPECT_EQ(c->slurm.fail_open_after_s, 30);
  EXPECT_EQ(c->slurm.lock_path, "/run/seedance/lock");
  auto none = ParseSimConfig("c.yaml", "slurm:\n  preempt: {signal: none}\n");
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(none->slurm.preempt_signal, "");
  auto d = ParseSimConfig("c.yaml", "slurm: {}\n");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->slurm.preempt_signal, "USR1");
  EXPECT_EQ(d->slurm.preempt_grace_s, 60);
  EXPECT_EQ(d->slurm.fail_open_after_s, 300);
  for (const auto& [text, want] : std::vector<std::pair<std::string, std::string>>{
           {"slurm:\n  preempt: {signal: 'usr1; rm'}\n", "c.yaml:2: key 'slurm.preempt.signal'"},
           {"slurm:\n  preempt:\n    grace: -3s\n", "c.yaml:3: key 'slurm.preempt.grace'"},
           {"slurm:\n  preempt: {sig: USR1}\n", "slurm.preempt.sig"},
           {"slurm:\n  fail_open_after: 0s\n", "c.yaml:2: key 'slurm.fail_open_after'"},
           {"slurm:\n  checkpoint_interval: often\n", "c.yaml:2: key 'slurm.checkpoint_interval'"}}) {
    auto bad = ParseSimConfig("c.yaml", text);
    ASSERT_FALSE(bad.has_value()) << text;
    EXPECT_NE(bad.error().message().find(want), std::string::npos) << bad.error().message();
  }
}

}  // namespace
}  // namespace seedance::config
