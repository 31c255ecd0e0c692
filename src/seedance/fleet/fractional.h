#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "seedance/gpu/catalog.h"

// Fractional GPUs for the fleet week (issue 39): NVIDIA MIG profiles a GPU can be partitioned
// into, the profile a notebook of a given memory need takes, and the rule that decides whether a
// serving replica runs on a slice. Facts from NVIDIA's MIG user guide, "Supported MIG Profiles"
// (https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html): for
// A100-SXM4-40GB, A100-SXM4-80GB and H100 80 GB, the fraction of SMs (compute, in sevenths), the
// memory and the number of instances of one profile a GPU holds.
namespace seedance::fleet {

// The MIG profiles (their table is a GPU fact: gpu::MigProfiles() in src/seedance/gpu/catalog.cc).
using gpu::MigProfile;
using gpu::MigProfiles;

// The profile of `gpu_type` a notebook needing `memory_gb` takes: the one whose homogeneous
// partition puts the most instances on a GPU (the least GPU per notebook), then the least compute;
// nullptr when the type has no MIG profiles or none holds the memory (the notebook takes a whole
// GPU). A need of 0 or less is unknown: nullptr. Only profiles with at least
// `min_compute_fraction` of the GPU's SMs and `min_memory_fraction` of its memory (bandwidth) are
// considered.
const MigProfile* NotebookProfile(std::string_view gpu_type, double memory_gb, double min_compute_fraction = 0,
                                  double min_memory_fraction = 0);

// A serving replica on a slice of `profile` (issue 39 item 2) runs there only when a request
// within SLO is strictly cheaper than on a whole GPU. A slice is charged its GPU's worth: the
// GPU's price over the profile's instances (the part of the GPU a homogeneous partition cannot
// use is paid by its slices), so a slice wins when instances x its req/s within SLO exceeds the
// whole GPU's. False when the replica's weights and KV cache (`replica_memory_gb`) do not fit the
// slice, or a rate is not positive.
bool ReplicaSliceIsCheaper(const MigProfile& profile, double slice_rps, double whole_gpu_rps,
                           double replica_memory_gb);
// The slice's req/s within SLO as the fleet week assumes it: the whole GPU's measured rate times
// the slice's compute fraction (linear; the KV cache shrinks by the memory fraction, so this is
// the slice's best case). Under it no slice is strictly cheaper (instances x fraction <= 1).
double ScaledSliceRps(const MigProfile& profile, double whole_gpu_rps);

// Dense FP16 tensor TFLOPS and memory bandwidth (GB/s) of a fleet type from the GPU catalog
// ({0, 0} when the catalog lacks it).
struct GpuRates {
  double fp16_tflops = 0;
  double memory_gb_s = 0;
};
GpuRates CatalogRates(std::string_view gpu_type);

// The most notebook work (GPU-hours in use of the type the notebook asked for, `asked`) one
// GPU-hour of `on` can supply under any placement a stack may make (the bound's notebook term):
// 1 on its own type (a slice counts its compute fraction and costs it); on another type, the FP16
// rate of `on` over `asked`'s (a slice does no more per GPU-hour than its whole GPU), and at most
// one over the compute fraction of `on`'s smallest MIG slice (a notebook in use counts at most one
// unit an hour; 1 where `on` has no MIG profiles). Only the slice cap where a rate is unknown.
double NotebookWorkPerGpuHour(std::string_view asked, std::string_view on);

struct ServingProfile;
// The rule applied to every one-GPU type of a deployment's profile (`replica_memory_gb`: its
// weights plus one full-context request's KV cache) at ScaledSliceRps: how many (type, profile)
// pairs make a request cheaper on slices (`cheaper`) and a one-line verdict naming the best.
std::string ReplicaSliceVerdict(const ServingProfile& profile, double replica_memory_gb, int* cheaper);
// Weights (FP16) plus one full-context request's KV cache (FP16) of a batching model, GB; 0 for
// an unknown model.
double ReplicaMemoryGb(const std::string& model);

}  // namespace seedance::fleet
