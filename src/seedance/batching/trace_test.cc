#include "seedance/batching/trace.h"

#include <gtest/gtest.h>

#include "seedance/batching/benchmark.h"

namespace seedance::batching {
namespace {

const std::string kData = SEEDANCE_TEST_DATA_DIR;
const std::string kHeader = "TIMESTAMP,ContextTokens,GeneratedTokens\n";

std::string ErrorOf(const std::string& text) {
  auto t = ParseAzureTrace("t.csv", text);
  EXPECT_FALSE(t.has_value());
  return t.has_value() ? "" : t.error().message();
}

TEST(TraceTest, LoadsTheBundledConversationTrace) {
  auto t = LoadAzureTrace(kData + "/azure_llm/AzureLLMInferenceTrace_conv.csv");
  ASSERT_TRUE(t.has_value()) << t.error().ToString();
  EXPECT_EQ(t->requests.size(), 19366u);
  EXPECT_NEAR(t->Span(), 3502, 5);
  EXPECT_EQ(t->requests[0].arrival_s, 0);
  EXPECT_EQ(t->requests[0].prompt, 374);
  EXPECT_EQ(t->requests[0].output, 44);
  EXPECT_EQ(t->requests[0].line, 2u);
}

TEST(TraceTest, ParsesTimestamps) {
  auto a = ParseTimestamp("2023-11-16 18:15:46.6805900");
  auto b = ParseTimestamp("2023-11-16 18:15:50.9951690");
  ASSERT_TRUE(a.has_value() && b.has_value());
  EXPECT_NEAR(*b - *a, 4.314579, 1e-6);
  EXPECT_NEAR(*ParseTimestamp("1970-01-02 00:00:00"), 86400, 1e-9);
}

// Unix-epoch seconds (float) in TIMESTAMP: same arrivals as the Azure dates they stand for;
// one format per file.
TEST(TraceTest, AcceptsUnixEpochSeconds) {
  auto azure = ParseAzureTrace("a.csv", kHeader + "2023-11-16 18:15:46.5,10,2\n2023-11-16 18:15:50.75,20,3\n");
  auto epoch = ParseAzureTrace("e.csv", kHeader + "1700158550.75,20,3\n1700158546.5,10,2\n");
  ASSERT_TRUE(azure.has_value() && epoch.has_value()) << epoch.error().ToString();
  ASSERT_EQ(epoch->requests.size(), 2u);
  EXPECT_EQ(epoch->requests[0].prompt, 10);  // sorted by arrival
  EXPECT_NEAR(epoch->requests[1].arrival_s, 4.25, 1e-6);
  EXPECT_NEAR(epoch->requests[1].arrival_s, azure->requests[1].arrival_s, 1e-6);
  bool is_epoch = false;
  auto t = ParseTraceTime("1700158546.5", &is_epoch);
  ASSERT_TRUE(t.has_value());
  EXPECT_TRUE(is_epoch);
  EXPECT_NEAR(*t, *ParseTimestamp("2023-11-16 18:15:46.5"), 1e-6);
  EXPECT_EQ(ErrorOf(kHeader + "1700158546.5,10,2\n2023-11-16 18:15:50,20,3\n"),
            "t.csv:3:1: field 'TIMESTAMP': mixes a date with the Unix-epoch seconds of the first row");
  EXPECT_NE(ErrorOf(kHeader + "17001.585.46,10,2\n").find("expected Unix-epoch seconds"), std::string::npos);
  EXPECT_NE(ErrorOf(kHeader + "-5,10,2\n").find("or Unix-epoch seconds like 1700158546.68, got '-5'"),
            std::string::npos);
}

TEST(TraceTest, BadRowsNameFileLineAndField) {
  EXPECT_EQ(ErrorOf(kHeader + "2023-11-16 18:15:46.1,374,44\n2023-11-16 18:15:47.1,0,44\n"),
            "t.csv:3:23: field 'ContextTokens': must be >= 1, got 0");
  EXPECT_EQ(ErrorOf(kHeader + "2023-11-16 18:15:46.1,374,-3\n"),
            "t.csv:2:27: field 'GeneratedTokens': must be >= 1, got -3");
  EXPECT_NE(ErrorOf(kHeader + "2023-11-16 18:15:46.1,3x4,5\n").find("t.csv:2:23: field 'ContextTokens'"),
            std::string::npos);
  EXPECT_NE(ErrorOf(kHeader + "yesterday,374,44\n").find("t.csv:2:1: field 'TIMESTAMP'"),
            std::string::npos);
  EXPECT_NE(ErrorOf(kHeader + "2023-11-16 18:15:46.1,374\n").find("t.csv:2"), std::string::npos);
  EXPECT_NE(ErrorOf("TIMESTAMP,Tokens\n2023-11-16 18:15:46.1,3\n").find("ContextTokens"),
            std::string::npos);
  EXPECT_NE(ErrorOf(kHeader).find("no requests"), std::string::npos);
  EXPECT_NE(ErrorOf("TIMESTAMP,ContextTokens,GeneratedTokens,qos\n2023-11-16 18:15:46.1,3,4,gold\n")
                .find("field 'qos': unknown qos 'gold'"),
            std::string::npos);
}

TEST(TraceTest, RateScalePoissonAndMix) {
  auto t = ParseAzureTrace("t.csv", kHeader + "2023-11-16 18:15:46,10,2\n2023-11-16 18:15:48,20,3\n");
  ASSERT_TRUE(t.has_value());
  EXPECT_DOUBLE_EQ(ScaleRate(*t, 2).requests[1].arrival_s, 1.0);
  const Trace p1 = PoissonTrace(*t, 10, 1000, 7), p2 = PoissonTrace(*t, 10, 1000, 7);
  EXPECT_EQ(p1.requests.back().arrival_s, p2.requests.back().arrival_s);
  EXPECT_NEAR(1000 / p1.requests.back().arrival_s, 10, 1.0);
  auto conv = LoadAzureTrace(kData + "/azure_llm/AzureLLMInferenceTrace_conv.csv");
  const Trace mix = MultiTenantMix(*conv, 42);
  int counts[kNumQosClasses] = {};
  for (const auto& r : mix.requests) ++counts[static_cast<int>(r.qos)];
  EXPECT_NEAR(counts[0] / 19366.0, 0.20, 0.015);
  EXPECT_NEAR(counts[1] / 19366.0, 0.30, 0.015);
  EXPECT_NEAR(counts[2] / 19366.0, 0.50, 0.015);
}

TEST(RunBatchingTest, BadConfigIsInvalidArgument) {
  BatchingConfig c;
  c.data_dir = kData;
  c.gpu = "v100";
  EXPECT_EQ(RunBatching(c, nullptr).error().code(), StatusCode::kInvalidArgument);
  c.gpu = "a100";
  c.precision = "fp4";
  EXPECT_EQ(RunBatching(c, nullptr).error().code(), StatusCode::kInvalidArgument);
  c.precision = "fp16";
  c.model = "gpt-5";
  EXPECT_EQ(RunBatching(c, nullptr).error().code(), StatusCode::kInvalidArgument);
  c.model = "llama-2-7b";
  c.policies = {"orca"};
  EXPECT_EQ(RunBatching(c, nullptr).error().code(), StatusCode::kInvalidArgument);
  c.policies = {};
  c.oversize = OversizePolicy::kError;  // the conversation trace has 14,050-token prompts
  auto r = RunBatching(c, nullptr);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("AzureLLMInferenceTrace_conv.csv:"), std::string::npos);
  EXPECT_NE(r.error().message().find("field 'ContextTokens'"), std::string::npos);
  EXPECT_NE(r.error().message().find("exceeds the llama-2-7b context of 4096"), std::string::npos);
}

}  // namespace
}  // namespace seedance::batching

namespace seedance::batching {
namespace {

TEST(LengthsTraceTest, LoadsTheBundledArxivLengthsAndNamesBadFields) {
  bool lengths_only = false;
  auto t = LoadAnyTrace(ResolveTracePath(SEEDANCE_TEST_DATA_DIR, "arxiv"), &lengths_only);
  ASSERT_TRUE(t.has_value()) << t.error().ToString();
  EXPECT_TRUE(lengths_only);
  EXPECT_EQ(t->requests.size(), 28257u);
  auto bad = ParseLengthsTrace("l.csv", "num_prefill_tokens,num_decode_tokens\n10,2\n0,3\n");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("l.csv:3:1: field 'num_prefill_tokens'"), std::string::npos)
      << bad.error().message();
  auto missing = ParseLengthsTrace("l.csv", "num_prefill_tokens\n10\n");
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message().find("num_decode_tokens"), std::string::npos);
}

}  // namespace
}  // namespace seedance::batching

namespace seedance::batching {
namespace {

// Knobs are chosen on the first half of a trace and judged on the second: the halves are
// disjoint, cover the trace, and each starts at 0 with dense ids and the source lines kept.
TEST(TracePartTest, SplitsIntoTuningAndHeldOutHalves) {
  auto t = ParseAzureTrace("t.csv", kHeader +
                                        "2023-11-16 18:15:40.0,10,1\n"
                                        "2023-11-16 18:15:41.0,20,2\n"
                                        "2023-11-16 18:15:43.0,30,3\n"
                                        "2023-11-16 18:15:46.0,40,4\n"
                                        "2023-11-16 18:15:50.0,50,5\n");
  ASSERT_TRUE(t.has_value()) << t.error().ToString();
  const Trace tuning = SelectTracePart(*t, TracePart::kTuning);
  const Trace held = SelectTracePart(*t, TracePart::kHeldOut);
  ASSERT_EQ(tuning.requests.size(), 2u);
  ASSERT_EQ(held.requests.size(), 3u);
  EXPECT_EQ(tuning.requests[1].prompt, 20);
  EXPECT_DOUBLE_EQ(tuning.requests[1].arrival_s, 1.0);
  EXPECT_EQ(held.requests[0].prompt, 30);
  EXPECT_EQ(held.requests[0].line, 4u);
  EXPECT_EQ(held.requests[0].id, 0u);
  EXPECT_EQ(held.requests[2].id, 2u);
  EXPECT_DOUBLE_EQ(held.requests[0].arrival_s, 0.0);
  EXPECT_DOUBLE_EQ(held.requests[2].arrival_s, 7.0);
  EXPECT_NE(held.name.find("held-out"), std::string::npos);
  EXPECT_EQ(SelectTracePart(*t, TracePart::kAll).requests.size(), 5u);
}

TEST(TracePartTest, ParsesNamesAndRejectsOthers) {
  EXPECT_EQ(*ParseTracePart("held-out"), TracePart::kHeldOut);
  EXPECT_EQ(*ParseTracePart("tuning"), TracePart::kTuning);
  EXPECT_EQ(*ParseTracePart("all"), TracePart::kAll);
  auto bad = ParseTracePart("test");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("unknown trace part 'test' (accepted: all, tuning, held-out)"),
            std::string::npos);
}

}  // namespace
}  // namespace seedance::batching
