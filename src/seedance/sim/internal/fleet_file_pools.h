#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "seedance/core/status.h"
#include "seedance/sim/fleet_file.h"

namespace seedance::sim::internal {

// Reads the fleet file's `node_pools` list (`n`) into `f.node_pools`; errors name file:line and key.
Status ParseNodePools(const std::string& name, const YAML::Node& n, FleetFile& f);

}  // namespace seedance::sim::internal
