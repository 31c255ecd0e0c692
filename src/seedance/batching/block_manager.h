#pragma once

#include <cstdint>
#include <vector>

#include "seedance/core/status.h"

namespace seedance::batching {

// BlockManager: the paged KV cache of one GPU replica. `total_blocks` blocks of `block_size`
// tokens; each owner (a sequence, or a sequence's compressed cold copy) holds a block table.
// Allocation is all-or-nothing; blocks come from a LIFO free list, so the same calls give the
// same block ids. The watermark (a fraction of all blocks) is kept free when admitting new
// sequences, so running ones can grow without immediate preemption (vLLM's watermark).
// Thread-compatible.
class BlockManager {
 public:
  BlockManager(std::int64_t total_blocks, int block_size, double watermark_fraction);

  int block_size() const { return block_size_; }
  std::int64_t total_blocks() const { return total_; }
  std::int64_t free_blocks() const { return static_cast<std::int64_t>(free_.size()); }
  std::int64_t used_blocks() const { return total_ - free_blocks(); }
  std::int64_t watermark_blocks() const { return watermark_; }

  // Blocks needed to hold `tokens` tokens.
  std::int64_t BlocksFor(std::int64_t tokens) const {
    return (tokens + block_size_ - 1) / block_size_;
  }
  // Whether `n` more blocks can be handed out (keeping the watermark free when asked).
  bool CanAllocate(std::int64_t n, bool keep_watermark) const {
    return n <= free_blocks() - (keep_watermark ? watermark_ : 0);
  }
  // Appends `n` blocks to `owner`'s table. Returns false (and changes nothing) when fewer
  // than n (+ watermark) blocks are free.
  bool Allocate(std::uint32_t owner, std::int64_t n, bool keep_watermark = false);
  // Grows `owner`'s table to hold `tokens` tokens. Returns false when that cannot be done.
  bool EnsureTokens(std::uint32_t owner, std::int64_t tokens, bool keep_watermark = false);
  // Returns all of `owner`'s blocks to the free list (no-op when it holds none).
  void Free(std::uint32_t owner);
  std::int64_t Held(std::uint32_t owner) const;

  // Verifies that every block is either free or held by exactly one owner, exactly once.
  // Errors: kInternal describing the first leak or double allocation. O(total blocks).
  Status CheckInvariants() const;

 private:
  std::int64_t total_;
  int block_size_;
  std::int64_t watermark_;
  std::vector<std::int32_t> free_;
  std::vector<std::vector<std::int32_t>> tables_;
};

}  // namespace seedance::batching
