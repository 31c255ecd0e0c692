#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "seedance/cluster/gpu_model.h"
#include "seedance/core/csv.h"
#include "seedance/core/status.h"
#include "seedance/core/units.h"

namespace seedance::cost {

// How a price row was obtained.
enum class PriceBasis {
  kQuoted,  // a price published for this GPU model
  kProxy,   // an assumption: the price of a comparable model (the row's note says which, and why)
};

// Returns "quoted" or "proxy", the spelling of the CSV's `basis` column.
std::string_view PriceBasisName(PriceBasis basis);

// One row of a price table: the on-demand list price of one GPU of `model` for one hour.
struct GpuPrice {
  cluster::GpuModelIndex model = cluster::kNoGpuModel;
  Money usd_per_gpu_hour;  // micro-USD per GPU-hour
  Money spot_usd_per_gpu_hour;  // a quoted spot price; 0 = none (use kDefaultSpotRatio)
  PriceBasis basis = PriceBasis::kQuoted;
  std::string source;
  std::string note;
};

// PriceTable: on-demand $/GPU-hour per GPU model, read from a CSV with the columns
//   gpu_model                   a name of cluster::KnownGpuModels() (required)
//   usd_per_gpu_hour_on_demand  decimal USD, at most 6 decimals, > 0 (required)
//   basis                       quoted | proxy (optional; default quoted)
//   usd_per_gpu_hour_spot       a quoted spot price, decimal USD > 0 (optional; empty = none)
//   source, note                free text (optional)
// data/prices/SOURCE.md documents the bundled table. At most one row per model.
// Thread-safety: immutable after loading; safe to read from many threads.
class PriceTable {
 public:
  PriceTable() = default;

  // Reads and validates `path`. Errors: kNotFound (cannot open); kInvalidArgument naming
  // file:line:column and field for a bad row (unknown GPU model, bad or non-positive price,
  // unknown basis, a model listed twice), or the file for a missing column or no rows.
  static Result<PriceTable> LoadFile(const std::string& path);
  // Same as LoadFile for an already parsed table; table.name() is used in messages.
  static Result<PriceTable> FromCsv(const CsvTable& table);

  // Returns the row for `model`; for a model the table does not list, the list price its GPU
  // catalog file gives (CatalogListPrice); nullptr when neither prices it.
  const GpuPrice* Find(cluster::GpuModelIndex model) const;
  // Returns all rows in file order.
  const std::vector<GpuPrice>& prices() const { return prices_; }
  // Returns the file name the table was read from (as given to LoadFile / the CsvTable).
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::vector<GpuPrice> prices_;
};

// Spot price as a share of on-demand where no spot quote exists: the seed's AWS table (S1.2):
// p4d.24xlarge 11.92/32.77 = 0.364, g5.48xlarge 3.86/10.24 = 0.377, g6.24xlarge 2.63/7.12 = 0.369.
inline constexpr double kDefaultSpotRatio = 0.37;

// The on-demand list price a GPU catalog file gives `model` (gpu::GpuFacts::list_usd_per_gpu_hour,
// config/gpu_catalog_file.h) as a price row whose source names it; nullptr when it gives none.
// Built-in types are priced by the price table's CSV, catalog-file types here. Thread-safe.
const GpuPrice* CatalogListPrice(cluster::GpuModelIndex model);

// Returns the path of the bundled table: DataDir() + "/prices/gpu_prices.csv".
std::string BundledPriceTablePath();

}  // namespace seedance::cost
