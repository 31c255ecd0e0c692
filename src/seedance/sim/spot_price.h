#pragma once

#include <optional>
#include <string>
#include <vector>

#include "seedance/core/status.h"

// A spot pool's price over time (a fleet file's `spot[].price_series`, docs/YOUR_FLEET.md).
namespace seedance::sim {

// USD per GPU-hour, step-wise constant: point i's price is in force from its time until the next
// point's, and the last price after the last point (a price history records changes, as AWS's
// does). Times are seconds after the first point, which is time 0 of a simulation; when the file
// gave wall-clock times, origin_unix_s() is the first point's (the as-run baseline aligns the
// history it prices to it). Only the engine, billing, the lower bound and the as-run pricing read
// a series; a policy sees the price in force now (PoolView), never a later one.
class PriceSeries {
 public:
  struct Point {
    double t_s = 0;
    double usd_per_gpu_hour = 0;
    bool operator==(const Point&) const = default;
  };

  PriceSeries() = default;
  // REQUIRES: points non-empty, the first at 0, times strictly increasing, prices > 0.
  PriceSeries(std::vector<Point> points, std::optional<double> origin_unix_s);

  bool empty() const { return points_.empty(); }
  const std::vector<Point>& points() const { return points_; }
  std::optional<double> origin_unix_s() const { return origin_unix_s_; }
  // The price in force at t (t < 0: the first).
  double At(double t) const;
  // USD one GPU costs over [t0, t1]: the integral of the price, per hour, over it (0 when t1 <= t0).
  double UsdPerGpu(double t0, double t1) const;
  // The lowest price in force at any instant of [t0, t1) (at t0 when t1 <= t0).
  double MinOver(double t0, double t1) const;
  double Min() const;
  double Max() const;

  bool operator==(const PriceSeries&) const = default;

 private:
  std::size_t IndexAt(double t) const;  // the point in force at t

  std::vector<Point> points_;
  std::optional<double> origin_unix_s_;
};

// Which rows of an AWS price history a pool uses (empty: the file must hold one value).
struct AwsPriceFilter {
  std::string instance_type;
  std::string availability_zone;
  std::string product_description;
};

// Reads a price series file; `gpus_per_instance` divides per-instance prices (AWS JSON only). The
// format is told by the content:
//  - CSV with the header `time,usd_per_gpu_hour`: time is seconds from the start (the first row
//    0) or RFC 3339 ("2026-12-01T00:00:00Z", "+01:00" offsets) in every row; the price is per
//    GPU-hour. Errors name file:line and the column.
//  - JSON from `aws ec2 describe-spot-price-history`: {"SpotPriceHistory": [{"Timestamp",
//    "SpotPrice" (per instance-hour, a string or a number), "InstanceType", "AvailabilityZone",
//    "ProductDescription"}]}, in any order; the rows left by `filter` must name one instance type,
//    zone and product. Errors name the file and the field ("SpotPriceHistory[3].SpotPrice").
// Times must be strictly increasing (CSV) or distinct (JSON); prices in (0, 1000] per GPU-hour.
Result<PriceSeries> LoadPriceSeries(const std::string& path, int gpus_per_instance, const AwsPriceFilter& filter);

// RFC 3339 date-time ("2026-12-01T10:00:00Z", "2026-12-01T10:00:00.5+02:00", 't' or ' ' for
// 'T') to Unix seconds; nullopt when the text is not one.
std::optional<double> ParseRfc3339(const std::string& text);

}  // namespace seedance::sim
