#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/core/status.h"

namespace seedance::batching {

// S5.6 request classes, most important first (their numeric order is the priority order).
enum class QosClass : std::uint8_t { kGuaranteed = 0, kBurstable = 1, kBestEffort = 2 };
inline constexpr int kNumQosClasses = 3;
std::string_view QosName(QosClass q);
Result<QosClass> ParseQos(std::string_view name);

// One inference request of a trace. `id` is its index in the trace (dense, stable).
struct Request {
  std::uint32_t id = 0;
  double arrival_s = 0;           // seconds from the trace start
  std::int32_t prompt = 0;        // prompt (context) tokens, >= 1
  std::int32_t output = 0;        // tokens to generate, >= 1
  QosClass qos = QosClass::kBurstable;
  std::uint16_t tenant = 0;
  std::uint32_t line = 0;         // line in the source file (0: generated)
};

struct Trace {
  std::string name;   // file name or generator description
  std::vector<Request> requests;  // sorted by arrival (stable), ids = positions
  double Span() const;            // last arrival - first arrival (s)
};

// Loads an Azure LLM inference trace: columns TIMESTAMP ("2023-11-16 18:15:46.6805900", or
// Unix-epoch seconds such as 1700158546.68, the same format on every row),
// ContextTokens, GeneratedTokens; optional `qos` (guaranteed|burstable|best-effort) and
// `tenant` (0..65535). Arrivals are made relative to the earliest timestamp; rows are
// sorted stably by arrival. Errors: kNotFound (cannot open); kInvalidArgument naming
// file:line:column and field for a malformed timestamp, a non-integer, zero or negative token
// count, an unknown qos, or an empty trace.
Result<Trace> LoadAzureTrace(const std::string& path);
Result<Trace> ParseAzureTrace(std::string name, std::string text);

// Loads a lengths-only trace (Vidur's processed traces: columns num_prefill_tokens,
// num_decode_tokens; other columns ignored). Every request arrives at 0; give it arrivals with
// PoissonTrace. Errors as LoadAzureTrace.
Result<Trace> LoadLengthsTrace(const std::string& path);
Result<Trace> ParseLengthsTrace(std::string name, std::string text);

// Loads either format, told apart by the header: TIMESTAMP (Azure) or num_prefill_tokens
// (lengths only). Sets *lengths_only for the latter.
Result<Trace> LoadAnyTrace(const std::string& path, bool* lengths_only);

// Parses "2023-11-16 18:15:46.6805900" into seconds since 1970-01-01 (UTC, no leap seconds).
Result<double> ParseTimestamp(std::string_view text);

// Parses a trace's TIMESTAMP: Unix-epoch seconds (digits with an optional fraction; sets *epoch)
// or the Azure format above. Errors: kInvalidArgument quoting the value and both formats.
Result<double> ParseTraceTime(std::string_view text, bool* epoch);

// Returns `t` with arrivals divided by `scale` (scale 2 = twice the request rate).
// REQUIRES: scale > 0.
Trace ScaleRate(const Trace& t, double scale);

// Which part of a trace a run replays. Knobs are chosen on the tuning part and capacity is
// reported on the held-out part: the first and the second half of the requests in arrival order
// (file order for a lengths-only trace, whose arrivals are all 0).
enum class TracePart : std::uint8_t { kAll, kTuning, kHeldOut };
std::string_view TracePartName(TracePart p);  // "all", "tuning", "held-out"
// Errors: kInvalidArgument naming the value and the accepted ones.
Result<TracePart> ParseTracePart(std::string_view name);
// The requests of `part` of `t`, renumbered, arrivals relative to the part's first one; the
// name says which half. The tuning part of n requests is the first n / 2 (rounded down).
Trace SelectTracePart(const Trace& t, TracePart part);

// Synthetic Poisson arrivals at `rate_rps` for `count` requests whose (prompt, output) pairs
// are drawn with replacement from `lengths` (seeded; same seed -> same trace).
// REQUIRES: rate_rps > 0, !lengths.requests.empty().
Trace PoissonTrace(const Trace& lengths, double rate_rps, std::size_t count, std::uint64_t seed);

// The multi-tenant mix (documented in data/azure_llm/SOURCE.md): every request of `base` is
// given a tenant by a seeded draw: tenant 0 "interactive" guaranteed 20%, tenant 1 "assistant"
// burstable 30%, tenants 2 and 3 "batch-a"/"batch-b" best-effort 25% each.
Trace MultiTenantMix(const Trace& base, std::uint64_t seed);
inline constexpr int kMixTenants = 4;

}  // namespace seedance::batching
