#include "seedance/tenancy/quota.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace seedance::tenancy {

Quantity ToQuantity(double units) { return static_cast<Quantity>(std::llround(units * 1000.0)); }
double FromQuantity(Quantity q) { return static_cast<double>(q) / 1000.0; }

Result<QuotaBook> QuotaBook::Build(std::span<const TenantConfig> tenants, bool allow_borrowing) {
  QuotaBook b;
  b.allow_borrowing_ = allow_borrowing;
  std::set<std::string> names;
  for (const auto& t : tenants)
    for (const auto& q : t.quota) names.insert(q.resource);
  b.resources_.assign(names.begin(), names.end());
  const std::size_t nr = b.resources_.size();
  std::map<std::string, int> cohorts;
  std::set<std::string> seen;
  for (const auto& t : tenants) {
    if (!seen.insert(t.name).second) return InvalidArgumentError("tenant '" + t.name + "' defined twice");
    Tenant x;
    x.name = t.name;
    x.nominal.assign(nr, 0);
    x.borrow_limit.assign(nr, kUnlimited);
    x.lendable.assign(nr, 0);
    x.usage.assign(nr, 0);
    if (!t.cohort.empty() && allow_borrowing) {
      auto [it, fresh] = cohorts.emplace(t.cohort, static_cast<int>(cohorts.size()));
      x.cohort = it->second;
    }
    for (const auto& q : t.quota) {
      const auto r = static_cast<std::size_t>(b.ResourceIndex(q.resource));
      if (q.nominal < 0) return InvalidArgumentError("tenant '" + t.name + "': negative nominal quota");
      x.nominal[r] = ToQuantity(q.nominal);
      x.lendable[r] = x.nominal[r];
      if (q.lending_limit) x.lendable[r] = std::min(x.nominal[r], ToQuantity(*q.lending_limit));
      if (q.borrowing_limit) x.borrow_limit[r] = ToQuantity(*q.borrowing_limit);
    }
    if (x.cohort < 0) x.lendable.assign(nr, 0);
    b.tenants_.push_back(std::move(x));
  }
  b.cohorts_.resize(cohorts.size());
  for (auto& c : b.cohorts_) {
    c.pool.assign(nr, 0);
    c.pool_used.assign(nr, 0);
  }
  for (const auto& x : b.tenants_) {
    if (x.cohort < 0) continue;
    for (std::size_t r = 0; r < nr; ++r) b.cohorts_[static_cast<std::size_t>(x.cohort)].pool[r] += x.lendable[r];
  }
  return b;
}

int QuotaBook::ResourceIndex(const std::string& name) const {
  auto it = std::lower_bound(resources_.begin(), resources_.end(), name);
  return it != resources_.end() && *it == name ? static_cast<int>(it - resources_.begin()) : -1;
}

int QuotaBook::TenantIndex(const std::string& name) const {
  for (std::size_t i = 0; i < tenants_.size(); ++i)
    if (tenants_[i].name == name) return static_cast<int>(i);
  return -1;
}

Quantity QuotaBook::PoolUse(const Tenant& x, std::size_t r) const {
  return std::max<Quantity>(0, x.usage[r] - Kept(x, r));
}

Quantity QuotaBook::borrowed(int t, int r) const {
  const auto& x = At(t);
  return std::max<Quantity>(0, x.usage[static_cast<std::size_t>(r)] - x.nominal[static_cast<std::size_t>(r)]);
}

bool QuotaBook::IsBorrowing(int t) const {
  for (int r = 0; r < num_resources(); ++r)
    if (borrowed(t, r) > 0) return true;
  return false;
}

Quantity QuotaBook::Available(int t, int r) const {
  const auto& x = At(t);
  const auto ri = static_cast<std::size_t>(r);
  if (x.cohort < 0) return std::max<Quantity>(0, x.nominal[ri] - x.usage[ri]);
  const auto& c = cohorts_[static_cast<std::size_t>(x.cohort)];
  const Quantity own = std::max<Quantity>(0, Kept(x, ri) - x.usage[ri]);
  const Quantity pool_left = std::max<Quantity>(0, c.pool[ri] - c.pool_used[ri]);
  Quantity avail = own + pool_left;
  if (x.borrow_limit[ri] < kUnlimited) {
    avail = std::min(avail, std::max<Quantity>(0, x.nominal[ri] + x.borrow_limit[ri] - x.usage[ri]));
  }
  return avail;
}

Quantity QuotaBook::CohortLendable(int t, int r) const {
  const auto& x = At(t);
  if (x.cohort < 0) return 0;
  return cohorts_[static_cast<std::size_t>(x.cohort)].pool[static_cast<std::size_t>(r)];
}

Quantity QuotaBook::PotentialAvailable(int t, int r) const {
  const auto& x = At(t);
  const auto ri = static_cast<std::size_t>(r);
  if (x.cohort < 0) return x.nominal[ri];
  Quantity cap = Kept(x, ri) + cohorts_[static_cast<std::size_t>(x.cohort)].pool[ri];
  if (x.borrow_limit[ri] < kUnlimited) cap = std::min(cap, x.nominal[ri] + x.borrow_limit[ri]);
  return cap;
}

FitKind QuotaBook::Check(int t, std::span<const Quantity> request) const {
  bool borrow = false;
  const auto& x = At(t);
  for (std::size_t r = 0; r < request.size(); ++r) {
    if (request[r] == 0) continue;
    if (request[r] > Available(t, static_cast<int>(r))) return FitKind::kNoFit;
    if (x.usage[r] + request[r] > x.nominal[r]) borrow = true;
  }
  return borrow ? FitKind::kBorrow : FitKind::kFit;
}

bool QuotaBook::WithinNominal(int t, std::span<const Quantity> request) const {
  const auto& x = At(t);
  for (std::size_t r = 0; r < request.size(); ++r)
    if (request[r] > 0 && x.usage[r] + request[r] > x.nominal[r]) return false;
  return true;
}

bool QuotaBook::WithinShare(int t, std::span<const Quantity> request, double share) const {
  const auto& x = At(t);
  for (std::size_t r = 0; r < request.size(); ++r) {
    if (request[r] == 0) continue;
    const auto cap = static_cast<Quantity>(std::floor(static_cast<double>(x.nominal[r]) * share + 1e-9));
    if (x.usage[r] + request[r] > cap) return false;
  }
  return true;
}

void QuotaBook::Add(int t, std::span<const Quantity> request) {
  auto& x = tenants_[static_cast<std::size_t>(t)];
  for (std::size_t r = 0; r < request.size(); ++r) {
    if (x.cohort >= 0) {
      auto& c = cohorts_[static_cast<std::size_t>(x.cohort)];
      c.pool_used[r] -= PoolUse(x, r);
      x.usage[r] += request[r];
      c.pool_used[r] += PoolUse(x, r);
    } else {
      x.usage[r] += request[r];
    }
  }
}

void QuotaBook::Remove(int t, std::span<const Quantity> request) {
  auto& x = tenants_[static_cast<std::size_t>(t)];
  for (std::size_t r = 0; r < request.size(); ++r) {
    if (x.cohort >= 0) {
      auto& c = cohorts_[static_cast<std::size_t>(x.cohort)];
      c.pool_used[r] -= PoolUse(x, r);
      x.usage[r] -= request[r];
      c.pool_used[r] += PoolUse(x, r);
    } else {
      x.usage[r] -= request[r];
    }
  }
}

}  // namespace seedance::tenancy
