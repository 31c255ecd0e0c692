#include "seedance/cost/price_table.h"

#include <deque>
#include <mutex>

#include "seedance/core/file_util.h"
#include "seedance/cost/money.h"
#include "seedance/gpu/catalog.h"

namespace seedance::cost {

std::string_view PriceBasisName(PriceBasis basis) {
  switch (basis) {
    case PriceBasis::kQuoted:
      return "quoted";
    case PriceBasis::kProxy:
      return "proxy";
  }
  return "?";
}

Result<PriceTable> PriceTable::LoadFile(const std::string& path) {
  SEEDANCE_ASSIGN_OR_RETURN(CsvTable table, CsvTable::ReadFile(path));
  return FromCsv(table);
}

Result<PriceTable> PriceTable::FromCsv(const CsvTable& t) {
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_model, t.ColumnIndex("gpu_model"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_price, t.ColumnIndex("usd_per_gpu_hour_on_demand"));
  const std::ptrdiff_t c_basis = t.FindColumn("basis");
  const std::ptrdiff_t c_source = t.FindColumn("source");
  const std::ptrdiff_t c_note = t.FindColumn("note");
  const std::ptrdiff_t c_spot = t.FindColumn("usd_per_gpu_hour_spot");
  auto optional_str = [&](const CsvTable::Row& row, std::ptrdiff_t col) {
    return col < 0 ? std::string() : std::string(t.Str(row, static_cast<std::size_t>(col)));
  };
  PriceTable out;
  out.name_ = t.name();
  for (const CsvTable::Row& row : t.rows()) {
    GpuPrice p;
    auto model = cluster::ParseGpuModel(t.Str(row, c_model));
    if (!model.has_value()) return t.FieldError(row, c_model, model.error().message());
    p.model = *model;
    if (out.Find(p.model) != nullptr) {
      return t.FieldError(row, c_model,
                          "GPU model '" + std::string(t.Str(row, c_model)) + "' is priced twice");
    }
    auto price = ParseUsd(t.Str(row, c_price));
    if (!price.has_value()) return t.FieldError(row, c_price, price.error().message());
    if (price->raw() <= 0) return t.FieldError(row, c_price, "the price must be positive");
    p.usd_per_gpu_hour = *price;
    if (c_spot >= 0 && !t.Str(row, static_cast<std::size_t>(c_spot)).empty()) {
      const auto col = static_cast<std::size_t>(c_spot);
      auto spot = ParseUsd(t.Str(row, col));
      if (!spot.has_value()) return t.FieldError(row, col, spot.error().message());
      if (spot->raw() <= 0) return t.FieldError(row, col, "the price must be positive");
      p.spot_usd_per_gpu_hour = *spot;
    }
    if (c_basis >= 0) {
      const auto col = static_cast<std::size_t>(c_basis);
      const std::string_view basis = t.Str(row, col);
      if (basis == "proxy") {
        p.basis = PriceBasis::kProxy;
      } else if (basis != "quoted" && !basis.empty()) {
        return t.FieldError(row, col, "expected quoted or proxy, got '" + std::string(basis) + "'");
      }
    }
    p.source = optional_str(row, c_source);
    p.note = optional_str(row, c_note);
    out.prices_.push_back(std::move(p));
  }
  if (out.prices_.empty()) return InvalidArgumentError(t.name() + ": the price table has no rows");
  return out;
}

const GpuPrice* PriceTable::Find(cluster::GpuModelIndex model) const {
  for (const GpuPrice& p : prices_) {
    if (p.model == model) return &p;
  }
  return CatalogListPrice(model);
}

const GpuPrice* CatalogListPrice(cluster::GpuModelIndex model) {
  if (model >= gpu::Catalog().size()) return nullptr;
  const gpu::GpuFacts& g = gpu::GpuAt(model);
  if (!(g.list_usd_per_gpu_hour > 0)) return nullptr;
  // One entry per (model, price, source), kept for the process: a pointer stays valid, and a
  // later catalog file's other price makes a new entry.
  static std::mutex mu;
  static std::deque<GpuPrice> entries;
  const std::lock_guard<std::mutex> lock(mu);
  const Money usd = UsdFromDouble(g.list_usd_per_gpu_hour);
  for (const GpuPrice& p : entries) {
    if (p.model == model && p.usd_per_gpu_hour == usd && p.source == g.list_price_source) return &p;
  }
  GpuPrice p;
  p.model = model;
  p.usd_per_gpu_hour = usd;
  p.source = std::string(g.list_price_source);
  p.note = "from the GPU catalog file that defines " + std::string(g.name);
  return &entries.emplace_back(std::move(p));
}

std::string BundledPriceTablePath() { return DataDir() + "/prices/gpu_prices.csv"; }

}  // namespace seedance::cost
