#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/tenancy/tiers.h"

namespace seedance::tenancy {

// Quantities are integers in milli-units (1 GPU = 1000, 1 core = 1000, 1 GiB = 1000), as Kueue
// counts them, so quota arithmetic is exact.
using Quantity = std::int64_t;
inline constexpr Quantity kUnlimited = std::numeric_limits<Quantity>::max() / 4;
Quantity ToQuantity(double units);
double FromQuantity(Quantity q);

// Whether a request can be admitted against the quotas now (Kueue's flavor assigner, one flavor).
enum class FitKind {
  kFit,     // within the tenant's unused nominal quota
  kBorrow,  // fits only by borrowing unused quota of the cohort (within the borrowing limit)
  kNoFit,   // not now
};

// QuotaBook: nominal quota, borrowing and lending limits and usage of every tenant, with Kueue's
// semantics for a flat cohort (docs/PROTOCOLS.md section 6, kueue pkg/cache resource_node):
//  - a tenant's lendable quota is its lending limit (unset: all of nominal); the rest of nominal
//    is kept for it alone;
//  - the cohort's pool is the sum of its members' lendable quota; a member uses the pool for the
//    part of its usage above what it keeps;
//  - available(t) = max(0, kept - usage) + pool left, and never more than
//    nominal + borrowing limit - usage (unset limit: no cap beyond the pool).
// A tenant without a cohort, or any tenant when built with borrowing off, gets nominal - usage.
// Resources are indexed 0..num_resources()-1 in sorted name order. Thread-compatible.
class QuotaBook {
 public:
  // REQUIRES: tenants validated (ParseTenancyConfig). Resources no tenant names are absent.
  static Result<QuotaBook> Build(std::span<const TenantConfig> tenants, bool allow_borrowing);

  int num_tenants() const { return static_cast<int>(tenants_.size()); }
  int num_resources() const { return static_cast<int>(resources_.size()); }
  const std::string& resource_name(int r) const { return resources_[static_cast<std::size_t>(r)]; }
  int ResourceIndex(const std::string& name) const;  // -1 if absent
  int TenantIndex(const std::string& name) const;    // -1 if absent
  const std::string& tenant_name(int t) const { return tenants_[static_cast<std::size_t>(t)].name; }
  int cohort_of(int t) const { return tenants_[static_cast<std::size_t>(t)].cohort; }  // -1: none
  bool allow_borrowing() const { return allow_borrowing_; }

  Quantity nominal(int t, int r) const { return At(t).nominal[static_cast<std::size_t>(r)]; }
  Quantity usage(int t, int r) const { return At(t).usage[static_cast<std::size_t>(r)]; }
  // Usage above nominal (what the tenant borrows now).
  Quantity borrowed(int t, int r) const;
  bool IsBorrowing(int t) const;
  // The most of `r` the tenant could get now (see the class comment).
  Quantity Available(int t, int r) const;
  // What the tenant's cohort can lend in all: the sum of its members' lendable quota (their
  // lending limits, else nominal); 0 without a cohort. Kueue's lendable in the parent, the
  // denominator of the dominant resource share (fair_sharing.go calculateLendable).
  Quantity CohortLendable(int t, int r) const;
  // The most it could ever get if the whole cohort were idle (Kueue's PotentialAvailable).
  Quantity PotentialAvailable(int t, int r) const;

  FitKind Check(int t, std::span<const Quantity> request) const;
  // True if usage + request stays within nominal for every resource.
  bool WithinNominal(int t, std::span<const Quantity> request) const;
  // True if usage + request stays within `share` x nominal for every resource it requests.
  bool WithinShare(int t, std::span<const Quantity> request, double share) const;

  // Usage bookkeeping. REQUIRES: Remove only what was added.
  void Add(int t, std::span<const Quantity> request);
  void Remove(int t, std::span<const Quantity> request);

 private:
  struct Tenant {
    std::string name;
    int cohort = -1;
    std::vector<Quantity> nominal, borrow_limit, lendable, usage;
  };
  struct Cohort {
    std::vector<Quantity> pool;       // sum of members' lendable
    std::vector<Quantity> pool_used;  // sum of members' usage above what they keep
  };
  const Tenant& At(int t) const { return tenants_[static_cast<std::size_t>(t)]; }
  Quantity Kept(const Tenant& x, std::size_t r) const { return x.nominal[r] - x.lendable[r]; }
  Quantity PoolUse(const Tenant& x, std::size_t r) const;

  bool allow_borrowing_ = true;
  std::vector<std::string> resources_;
  std::vector<Tenant> tenants_;
  std::vector<Cohort> cohorts_;
};

}  // namespace seedance::tenancy
