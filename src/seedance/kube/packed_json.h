#pragma once

// JSON values packed for a store of many objects of the same kinds (issue 40: memory per object,
// not per byte of JSON). A Reflector keeps thousands of pods that repeat the same member names
// ("metadata", "namespace", "resourceVersion", "nvidia.com/gpu", label keys...): KeyTable writes
// each object key once, in a table the store shares, and a packed value names it by index. Values
// are inline, in a binary form without quotes, colons or commas. The slim pod of the cluster watch
// (613 bytes of JSON) packs into 256 (the generator of server/testing/k8s_objects.h).
//   Unpack(Pack(v)) == v for every JSON value (numbers keep their type and bits; objects are
//   nlohmann's sorted maps, so member order is the same).
// Bounds: at most kMaxKeys keys of up to kMaxKeyBytes bytes are interned (about 0.5 MB at worst);
// other keys are written inline, so objects with ever-new keys (annotations of a store without a
// transform) cannot grow the table without bound. Keys are never removed: the table holds the
// vocabulary of the resource's schema, not per-object data.
// Not thread-safe: one owner (the Reflector's Run() thread).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "seedance/core/status.h"

namespace seedance::kube {

class KeyTable {
 public:
  static constexpr std::size_t kMaxKeys = 4096;
  static constexpr std::size_t kMaxKeyBytes = 96;

  // `v` packed, appended to `out`.
  void Pack(const nlohmann::json& v, std::string& out);
  std::string Pack(const nlohmann::json& v) {
    std::string out;
    Pack(v, out);
    return out;
  }
  // What Pack wrote with this table. Bytes that are not a packed value (truncated, an unknown
  // tag or key index) are an internal error.
  Result<nlohmann::json> Unpack(std::string_view packed) const;

  std::size_t size() const { return keys_.size(); }

 private:
  void PackKey(const std::string& key, std::string& out);
  std::vector<std::string> keys_;
  std::unordered_map<std::string, std::uint32_t> index_;
};

}  // namespace seedance::kube
