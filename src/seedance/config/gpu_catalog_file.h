#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "seedance/core/status.h"

// GPU types from a catalog file (issue 38): B200, MI300X or any GPU the built-in catalog
// (gpu/catalog.cc) does not hold, with their datasheet facts, their on-demand list price and
// purchase price, each with its source. docs/FLEET_FILE.md "GPU types from a catalog file" has
// the format; data/gpus/catalog.yaml is the bundled one (`seedance` loads it at start, then every
// `--gpu-catalog FILE`; a fleet file's `gpu_types:` has the same entries). Once added, a type is
// known to the one GPU-name parser (gpu::ParseGpuName: its name, aliases, dcgm-exporter modelName
// spellings, and product strings naming its family), priced by every price table that does not
// price it (cost::PriceTable), and its owned GPUs by the TCO model at its purchase price.
namespace seedance::config {

// Adds the entries of the `gpu_types` list `list` of file `name` (errors: "<name>:<line>: key
// '<path>[i].<field>': ..."). An entry for a built-in type may only add aliases, dcgm_model_names,
// a purchase price and an on-demand price.
Status AddGpuTypes(const std::string& name, const YAML::Node& list, const std::string& path);

// Reads a catalog file (top-level key `gpu_types`). kNotFound when it cannot be opened.
Status LoadGpuCatalogFile(const std::string& path);

// DataDir() + "/gpus/catalog.yaml".
std::string BundledGpuCatalogPath();

}  // namespace seedance::config
