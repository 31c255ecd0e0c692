#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/sim/workload.h"

namespace seedance::sim {

// Gavel's measured throughputs (data/gavel/gavel_isolated_throughputs.csv): steps/s of each
// (job type, GPU count) on V100, P100 and K80 (0 = infeasible).
struct GavelThroughputs {
  std::vector<std::string> gpu_types{"V100", "P100", "K80"};
  std::map<std::pair<std::string, int>, std::vector<double>> steps_per_s;
  std::vector<std::string> job_types;  // the 26 single-GPU templates, file order

  static Result<GavelThroughputs> LoadFile(const std::string& path);
  const std::vector<double>* Find(const std::string& job_type, int gpus) const;
  bool Distributed(const std::string& job_type) const;
};

// The Gavel job stream that Gavel's own simulator generates for seed 0 (data/gavel_peer,
// recorded at 2.0 jobs/h) rescaled to `rate_per_hour`: Gavel draws inter-arrival times as
// -ln(1-u) * 3600/rate from its own stream and the job mix from another, so a different rate
// scales the arrival times and keeps the jobs. Single-GPU jobs (continuous-single).
Result<Workload> LoadGavelPeerStream(const std::string& path, const GavelThroughputs& thr,
                                     double rate_per_hour);

// Gavel's generator (utils.generate_job) with our RNG: template uniform over the 26, duration
// on V100 60*10^U(1.5,3) s w.p. 0.8 else 60*10^U(3,4) s, Poisson arrivals at `rate_per_hour`;
// `multi_gpu` (continuous-multiple): distributed templates get 1/2/4/8 GPUs w.p.
// .70/.10/.15/.05. Jobs are numbered from 0.
Workload GenerateGavel(const GavelThroughputs& thr, double rate_per_hour, std::int64_t num_jobs,
                       bool multi_gpu, std::uint64_t seed);

// The Philly-derived jobs (data/gavel/msr_philly_vc_jobs_seed0.csv): all virtual clusters
// merged by arrival time, each VC a tenant; jobs wider than 8 GPUs (no measured throughput) are
// skipped and counted in `skipped`.
Result<Workload> LoadPhillyJobs(const std::string& path, const GavelThroughputs& thr,
                                std::int64_t* skipped);

// The openb trace replayed with its creation and deletion times: each GPU pod is a job whose
// recorded run time (deletion - creation) is taken as its run time on the types its `gpu_spec`
// names (at their mean speed), or on a V100-class GPU when it names none (the trace does not say
// which GPU a pod ran on). Work is counted in V100-seconds; each type runs at its relative speed
// from the GPU catalog (gpu::GpuFacts::speed_vs_v100; docs/WORKLOADS.md "openb speeds").
// `gpu_spec` limits the types. Fractional-GPU pods occupy one whole GPU here (the time simulator
// does not share GPUs). Errors: a type of `gpu_types` without a catalog speed; bad rows (file:line).
Result<Workload> LoadOpenbJobs(const std::string& path, const std::vector<std::string>& gpu_types,
                               std::int64_t* never_ran = nullptr);

// The one-line "assumes" note for the openb replay on `gpu_types`: the run-time reference and
// each type's speed with its source.
std::string OpenbSpeedNote(const std::vector<std::string>& gpu_types);

// Jobs from a CSV file: job_id, arrival_s, job_type, gpus, total_steps, steps_per_s_<TYPE> (one
// column per GPU type), optional deadline_s (absolute seconds; empty = none), tenant,
// priority (normal | critical). Errors name file:line:column and the field.
Result<Workload> LoadJobsCsv(const std::string& path);
// Writes a workload in the LoadJobsCsv format.
std::string JobsToCsv(const Workload& w);

// The bundled llm-finetune workload, built by this function (docs/WORKLOADS.md): LoRA and full
// fine-tunes of 7B/13B/70B models over a week with a diurnal arrival pulse, on H100, A100-80G,
// A100 (40 GB), A10G and L4; throughput from dense FP16 TFLOPS x model-FLOPs utilization, zero
// where the model's training state does not fit in 80% of the GPUs' memory (S2.4); 30% of jobs
// carry a deadline.
Workload GenerateLlmFinetune(std::int64_t num_jobs, double duration_s, std::uint64_t seed);

// What the llm-finetune generator assumes about one of its job types (the what-if levers of
// `seedance advise` scale these): parameters, full fine-tune or LoRA, gang size and training-state
// bytes per parameter (16 for a mixed-precision Adam full fine-tune, 2.4 for LoRA).
struct LlmFinetuneJobModel {
  double params_b = 0;
  bool full = false;
  int gpus = 1;
  double state_bytes_per_param = 0;
};
// Errors: kInvalidArgument for a job type the generator does not make.
Result<LlmFinetuneJobModel> LlmFinetuneModelOf(std::string_view job_type);
// Steps/s of `job_type` on each llm-finetune GPU type, exactly as the generator computes them,
// with the training state scaled by `memory_factor` (a type is infeasible where the scaled state
// does not fit 80% of the gang's memory). memory_factor 1 gives the generated speeds.
Result<std::vector<double>> LlmFinetuneStepsPerS(std::string_view job_type, double memory_factor);
// Model FLOPs of one step of `job_type` (6 N per token for a full fine-tune, 4 N with LoRA, times
// the generator's tokens per step): the useful work a step does, whatever GPU runs it.
Result<double> LlmFinetuneFlopsPerStep(std::string_view job_type);

}  // namespace seedance::sim
