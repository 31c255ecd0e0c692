#include "seedance/config/gpu_catalog_file.h"

#include <cctype>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include "seedance/config/yaml_fields.h"
#include "seedance/core/file_util.h"
#include "seedance/gpu/catalog.h"

namespace seedance::config {
namespace {

using yaml_fields::CheckKeys;
using yaml_fields::Number;
using yaml_fields::Scalar;
using yaml_fields::Where;

// The keys an entry may carry for a built-in type: what a catalog file adds to it.
const std::set<std::string> kBuiltInKeys = {"name", "aliases", "dcgm_model_names", "purchase", "on_demand"};

Result<std::vector<std::string>> Strings(const std::string& name, const YAML::Node& n, const std::string& key) {
  std::vector<std::string> out;
  if (n.IsScalar()) {
    SEEDANCE_ASSIGN_OR_RETURN(std::string s, Scalar(name, n, key));
    out.push_back(std::move(s));
    return out;
  }
  if (!n.IsSequence()) return InvalidArgumentError(Where(name, n, key) + ": expected a list of names");
  for (std::size_t i = 0; i < n.size(); ++i) {
    const std::string k = key + "[" + std::to_string(i) + "]";
    SEEDANCE_ASSIGN_OR_RETURN(std::string s, Scalar(name, n[i], k));
    if (s.empty() || s.find('|') != std::string::npos) {
      return InvalidArgumentError(Where(name, n[i], k) + ": a spelling must be non-empty and without '|'");
    }
    out.push_back(std::move(s));
  }
  return out;
}

// A priced figure with its source: {<value_key>: number, source: text}, both required.
struct Priced {
  double value = 0;
  std::string source;
};
Result<Priced> PricedFigure(const std::string& name, const YAML::Node& n, const std::string& key,
                            const char* value_key, double hi) {
  SEEDANCE_RETURN_IF_ERROR(CheckKeys(name, n, key, {value_key, "source"}));
  for (const char* k : {value_key, "source"}) {
    if (!n[k]) return InvalidArgumentError(Where(name, n, key) + ": missing key '" + k + "'");
  }
  Priced p;
  SEEDANCE_ASSIGN_OR_RETURN(p.value, Number(name, n[value_key], key + "." + value_key, 0, hi, true));
  SEEDANCE_ASSIGN_OR_RETURN(p.source, Scalar(name, n["source"], key + ".source"));
  if (p.source.empty()) return InvalidArgumentError(Where(name, n["source"], key + ".source") + ": empty source");
  return p;
}

// Reads the optional number `key` of `n` into `out`, in (0, hi].
Status OptionalNumber(const std::string& name, const YAML::Node& n, const std::string& path, const char* key,
                      double hi, double& out) {
  if (!n[key]) return Status::Ok();
  SEEDANCE_ASSIGN_OR_RETURN(out, Number(name, n[key], path + "." + key, 0, hi, true));
  return Status::Ok();
}

Status AddOne(const std::string& name, const YAML::Node& n, const std::string& path) {
  if (!n.IsMap()) return InvalidArgumentError(Where(name, n, path) + ": expected a mapping");
  if (!n["name"]) return InvalidArgumentError(Where(name, n, path) + ": missing key 'name'");
  SEEDANCE_ASSIGN_OR_RETURN(std::string type, Scalar(name, n["name"], path + ".name"));
  std::vector<std::string> spellings;
  for (const char* key : {"aliases", "dcgm_model_names"}) {
    if (!n[key]) continue;
    SEEDANCE_ASSIGN_OR_RETURN(auto more, Strings(name, n[key], path + "." + key));
    spellings.insert(spellings.end(), more.begin(), more.end());
  }
  std::optional<Priced> purchase, on_demand;
  if (n["purchase"]) {
    SEEDANCE_ASSIGN_OR_RETURN(purchase, PricedFigure(name, n["purchase"], path + ".purchase", "usd", 1e7));
  }
  if (n["on_demand"]) {
    SEEDANCE_ASSIGN_OR_RETURN(on_demand,
                              PricedFigure(name, n["on_demand"], path + ".on_demand", "usd_per_gpu_hour", 1000));
  }
  const std::string defined_in = name + ":" + std::to_string(n.Mark().line + 1);
  gpu::GpuIndex index = 0;
  bool prices_only = true;  // only spellings and prices: an addition to a type already known
  for (const auto& kv : n) prices_only = prices_only && kv.first.IsScalar() && kBuiltInKeys.count(kv.first.Scalar()) > 0;
  if (auto known = gpu::ParseGpuName(type, gpu::NameMatch::kName);
      known.has_value() && (gpu::GpuAt(*known).defined_in.empty() || prices_only)) {
    // A built-in type: its facts are the catalog's; the file adds spellings and prices.
    for (const auto& kv : n) {
      const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string();
      if (kBuiltInKeys.count(key) == 0) {
        return InvalidArgumentError(Where(name, kv.first, path + "." + key) + ": " + type +
                                    " is built in (src/seedance/gpu/catalog.cc, with its datasheet); a catalog "
                                    "file may only add aliases, dcgm_model_names, purchase and on_demand to it");
      }
    }
    index = *known;
    if (auto added = gpu::AddGpuAliases(index, spellings); !added.ok()) {
      return InvalidArgumentError(Where(name, n, path) + ": " + added.message());
    }
    if (purchase) gpu::SetPurchasePrice(index, purchase->value, purchase->source + " (" + defined_in + ")");
    if (on_demand) gpu::SetListPrice(index, on_demand->value, on_demand->source + " (" + defined_in + ")");
    return Status::Ok();
  }
  SEEDANCE_RETURN_IF_ERROR(CheckKeys(
      name, n, path,
      {"name", "aliases", "dcgm_model_names", "family", "product", "memory_gib", "fp32_tflops", "fp16_tflops",
       "bf16_tflops", "int8_tops", "fp8_tflops", "memory_gb_s", "tdp_w", "interconnect", "host_link_gb_s",
       "speed_vs_v100", "source", "note", "purchase", "on_demand"}));
  for (const char* key : {"product", "memory_gib", "fp16_tflops", "memory_gb_s", "tdp_w", "source"}) {
    if (!n[key]) return InvalidArgumentError(Where(name, n, path) + ": missing key '" + key + "' (a new GPU type)");
  }
  gpu::GpuFacts f;
  std::string family, product, interconnect, source, note, aliases;
  for (const std::string& s : spellings) aliases += (aliases.empty() ? "" : "|") + s;
  SEEDANCE_ASSIGN_OR_RETURN(product, Scalar(name, n["product"], path + ".product"));
  SEEDANCE_ASSIGN_OR_RETURN(source, Scalar(name, n["source"], path + ".source"));
  if (n["family"]) {
    SEEDANCE_ASSIGN_OR_RETURN(family, Scalar(name, n["family"], path + ".family"));
  } else {
    for (char c : type) {
      if (std::isalnum(static_cast<unsigned char>(c)) != 0) family.push_back(c);
    }
  }
  if (n["interconnect"]) {
    SEEDANCE_ASSIGN_OR_RETURN(interconnect, Scalar(name, n["interconnect"], path + ".interconnect"));
  }
  if (n["note"]) {
    SEEDANCE_ASSIGN_OR_RETURN(note, Scalar(name, n["note"], path + ".note"));
  }
  SEEDANCE_ASSIGN_OR_RETURN(f.memory_gib, Number(name, n["memory_gib"], path + ".memory_gib", 0, 1e4, true));
  SEEDANCE_ASSIGN_OR_RETURN(f.fp16_tflops, Number(name, n["fp16_tflops"], path + ".fp16_tflops", 0, 1e5, true));
  SEEDANCE_ASSIGN_OR_RETURN(f.memory_gb_s, Number(name, n["memory_gb_s"], path + ".memory_gb_s", 0, 1e6, true));
  SEEDANCE_ASSIGN_OR_RETURN(f.tdp_w, Number(name, n["tdp_w"], path + ".tdp_w", 0, 1e5, true));
  const struct {
    const char* key;
    double hi;
    double* out;
  } optional_numbers[] = {{"fp32_tflops", 1e5, &f.fp32_tflops}, {"bf16_tflops", 1e5, &f.bf16_tflops},
                          {"int8_tops", 1e6, &f.int8_tops},     {"fp8_tflops", 1e6, &f.fp8_tflops},
                          {"host_link_gb_s", 1e4, &f.host_link_gb_s}, {"speed_vs_v100", 1e3, &f.speed_vs_v100}};
  for (const auto& o : optional_numbers) {
    SEEDANCE_RETURN_IF_ERROR(OptionalNumber(name, n, path, o.key, o.hi, *o.out));
  }
  f.name = type;
  f.aliases = aliases;
  f.family = family;
  f.product = product;
  f.tensor_cores = true;
  f.interconnect = interconnect;
  f.source = source;
  f.note = note;
  if (f.speed_vs_v100 > 0) {
    f.speed_basis = "catalog file";
    f.speed_source = "as the catalog file states it";
  }
  const std::string purchase_source = purchase ? purchase->source + " (" + defined_in + ")" : std::string();
  const std::string list_source = on_demand ? on_demand->source + " (" + defined_in + ")" : std::string();
  if (purchase) {
    f.purchase_usd = purchase->value;
    f.purchase_source = purchase_source;
  }
  if (on_demand) {
    f.list_usd_per_gpu_hour = on_demand->value;
    f.list_price_source = list_source;
  }
  f.defined_in = defined_in;
  auto added = gpu::AddGpuType(f);
  if (!added.has_value()) return InvalidArgumentError(Where(name, n["name"], path + ".name") + ": " + added.error().message());
  return Status::Ok();
}

}  // namespace

Status AddGpuTypes(const std::string& name, const YAML::Node& list, const std::string& path) {
  if (!list.IsSequence()) return InvalidArgumentError(Where(name, list, path) + ": expected a list of GPU types");
  for (std::size_t i = 0; i < list.size(); ++i) {
    SEEDANCE_RETURN_IF_ERROR(AddOne(name, list[i], path + "[" + std::to_string(i) + "]"));
  }
  return Status::Ok();
}

Status LoadGpuCatalogFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFoundError(path + ": cannot open GPU catalog file");
  std::stringstream ss;
  ss << in.rdbuf();
  YAML::Node root;
  try {
    root = YAML::Load(ss.str());
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(path + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
  }
  if (!root.IsMap()) return InvalidArgumentError(path + ": expected a mapping with key gpu_types");
  const yaml_fields::NullValueLines null_lines(root);
  SEEDANCE_RETURN_IF_ERROR(CheckKeys(path, root, "", {"gpu_types"}));
  if (!root["gpu_types"]) return InvalidArgumentError(path + ": missing key 'gpu_types'");
  return AddGpuTypes(path, root["gpu_types"], "gpu_types");
}

std::string BundledGpuCatalogPath() { return DataDir() + "/gpus/catalog.yaml"; }

}  // namespace seedance::config
