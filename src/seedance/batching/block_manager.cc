#include "seedance/batching/block_manager.h"

#include <cmath>

#include <fmt/format.h>

namespace seedance::batching {

BlockManager::BlockManager(std::int64_t total_blocks, int block_size, double watermark_fraction)
    : total_(total_blocks),
      block_size_(block_size),
      watermark_(static_cast<std::int64_t>(std::ceil(watermark_fraction *
                                                     static_cast<double>(total_blocks)))) {
  SEEDANCE_CHECK(total_blocks >= 0 && block_size > 0);
  free_.reserve(static_cast<std::size_t>(total_blocks));
  for (std::int64_t b = total_blocks - 1; b >= 0; --b) free_.push_back(static_cast<std::int32_t>(b));
}

bool BlockManager::Allocate(std::uint32_t owner, std::int64_t n, bool keep_watermark) {
  if (n <= 0) return true;
  if (!CanAllocate(n, keep_watermark)) return false;
  if (owner >= tables_.size()) tables_.resize(owner + 1);
  auto& t = tables_[owner];
  for (std::int64_t i = 0; i < n; ++i) {
    t.push_back(free_.back());
    free_.pop_back();
  }
  return true;
}

bool BlockManager::EnsureTokens(std::uint32_t owner, std::int64_t tokens, bool keep_watermark) {
  return Allocate(owner, BlocksFor(tokens) - Held(owner), keep_watermark);
}

void BlockManager::Free(std::uint32_t owner) {
  if (owner >= tables_.size()) return;
  auto& t = tables_[owner];
  for (auto it = t.rbegin(); it != t.rend(); ++it) free_.push_back(*it);
  t.clear();
}

std::int64_t BlockManager::Held(std::uint32_t owner) const {
  return owner < tables_.size() ? static_cast<std::int64_t>(tables_[owner].size()) : 0;
}

Status BlockManager::CheckInvariants() const {
  std::vector<int> seen(static_cast<std::size_t>(total_), 0);
  auto mark = [&](std::int32_t b, const std::string& where) -> Status {
    if (b < 0 || b >= total_) return InternalError(fmt::format("block {} out of range ({})", b, where));
    if (++seen[static_cast<std::size_t>(b)] > 1) {
      return InternalError(fmt::format("block {} handed out twice ({})", b, where));
    }
    return Status::Ok();
  };
  for (std::int32_t b : free_) SEEDANCE_RETURN_IF_ERROR(mark(b, "free list"));
  for (std::size_t o = 0; o < tables_.size(); ++o) {
    for (std::int32_t b : tables_[o]) SEEDANCE_RETURN_IF_ERROR(mark(b, fmt::format("owner {}", o)));
  }
  for (std::size_t b = 0; b < seen.size(); ++b) {
    if (seen[b] == 0) return InternalError(fmt::format("block {} leaked: neither free nor held", b));
  }
  return Status::Ok();
}

}  // namespace seedance::batching
