#include "l2_cache.hpp"

#include <algorithm>

namespace flashlab::sim::detail {

namespace {
// The L2 walk counts tiles at every access. Without -mpopcnt GCC calls a
// library routine for __builtin_popcountll; LineShape::bytes is compiled twice
// instead (target_clones), and the loader picks the popcnt one on every x86-64
// processor that has the instruction.
int popcount(std::uint64_t x) { return __builtin_popcountll(x); }
std::uint64_t mix(std::uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ull;
  k ^= k >> 33;
  return k;
}
int tag_of(std::uint64_t key) { return static_cast<int>(key >> SectoredLru::kTagShift); }
}  // namespace

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("popcnt", "default")))
#endif
i64 LineShape::bytes(std::uint64_t mask) const {
  if (partial_bit >= 0 && (mask >> partial_bit) & 1u)
    return tile_bytes * (popcount(mask) - 1) + partial_bytes;
  return tile_bytes * popcount(mask);
}

SectoredLru::SectoredLru(i64 capacity_bytes) : capacity_(capacity_bytes) {
  table_.assign(1024, 0);
  mask_ = table_.size() - 1;
}

std::size_t SectoredLru::slot_of(std::uint64_t key) const { return static_cast<std::size_t>(mix(key)) & mask_; }

std::int32_t SectoredLru::find(std::uint64_t key, std::size_t& slot) const {
  for (std::size_t s = slot_of(key);; s = (s + 1) & mask_) {
    const std::int32_t v = table_[s];
    if (v == 0) {
      slot = s;  // where the key would go
      return -1;
    }
    if (lines_[static_cast<std::size_t>(v - 1)].key == key) {
      slot = s;
      return v - 1;
    }
  }
}

std::int32_t SectoredLru::insert(std::uint64_t key, const LineShape& shape, std::size_t slot) {
  if ((used_ + 1) * 2 > table_.size()) {  // keep the load under one half
    std::vector<std::int32_t> old;
    old.swap(table_);
    table_.assign(old.size() * 2, 0);
    mask_ = table_.size() - 1;
    for (std::int32_t v : old)
      if (v != 0) {
        Line& l = lines_[static_cast<std::size_t>(v - 1)];
        std::size_t s = slot_of(l.key);
        while (table_[s] != 0) s = (s + 1) & mask_;
        table_[s] = v;
        l.slot = static_cast<std::uint32_t>(s);
      }
    slot = slot_of(key);
    while (table_[slot] != 0) slot = (slot + 1) & mask_;
  }
  std::int32_t n;
  if (!free_.empty()) {
    n = free_.back();
    free_.pop_back();
  } else {
    n = static_cast<std::int32_t>(lines_.size());
    lines_.emplace_back();
  }
  Line& l = lines_[static_cast<std::size_t>(n)];
  l = Line{};
  l.key = key;
  l.shape = shape;
  l.slot = static_cast<std::uint32_t>(slot);
  table_[slot] = n + 1;
  ++used_;
  return n;
}

void SectoredLru::erase_slot(std::size_t hole) {
  // Backward-shift deletion keeps every probe sequence unbroken.
  table_[hole] = 0;
  --used_;
  for (std::size_t s = (hole + 1) & mask_; table_[s] != 0; s = (s + 1) & mask_) {
    const std::size_t home = slot_of(lines_[static_cast<std::size_t>(table_[s] - 1)].key);
    // Move the entry at s into the hole when its home does not lie in (hole, s].
    const bool between = hole <= s ? (home > hole && home <= s) : (home > hole || home <= s);
    if (!between) {
      table_[hole] = table_[s];
      lines_[static_cast<std::size_t>(table_[s] - 1)].slot = static_cast<std::uint32_t>(hole);
      table_[s] = 0;
      hole = s;
    }
  }
}

void SectoredLru::unlink(std::int32_t n) {
  Line& l = lines_[static_cast<std::size_t>(n)];
  if (l.prev >= 0) lines_[static_cast<std::size_t>(l.prev)].next = l.next;
  else head_ = l.next;
  if (l.next >= 0) lines_[static_cast<std::size_t>(l.next)].prev = l.prev;
  else tail_ = l.prev;
  l.prev = l.next = -1;
}

void SectoredLru::push_front(std::int32_t n) {
  Line& l = lines_[static_cast<std::size_t>(n)];
  l.prev = -1;
  l.next = head_;
  if (head_ >= 0) lines_[static_cast<std::size_t>(head_)].prev = n;
  head_ = n;
  if (tail_ < 0) tail_ = n;
}

void SectoredLru::evict_to_capacity() {
  while (resident_ > capacity_ && tail_ >= 0) {
    const std::int32_t n = tail_;
    Line& l = lines_[static_cast<std::size_t>(n)];
    if (l.dirty && l.owner != kNoOwner) {
      const i64 dirty = l.shape.bytes(l.dirty);
      const std::size_t at = static_cast<std::size_t>(l.owner) * kTags + static_cast<std::size_t>(tag_of(l.key));
      if (at >= written_back_by_owner_tag_.size()) written_back_by_owner_tag_.resize(at + kTags, 0);
      written_back_by_owner_tag_[at] += dirty;
    }
    resident_ -= l.bytes;
    unlink(n);
    erase_slot(l.slot);
    free_.push_back(n);
  }
}

AccessOutcome SectoredLru::access(std::uint64_t key, const LineShape& shape, std::uint64_t mask, bool write,
                                  std::int32_t owner, i64 held_in) {
  AccessOutcome out;
  std::size_t slot = 0;
  std::int32_t n = find(key, slot);
  if (n < 0) {
    n = insert(key, shape, slot);
    lines_[static_cast<std::size_t>(n)].owner = owner;
  } else {
    unlink(n);
  }
  Line& l = lines_[static_cast<std::size_t>(n)];
  const std::uint64_t miss = mask & ~l.present, hit = mask & l.present;
  out.miss_bytes = miss ? l.shape.bytes(miss) : 0;
  out.hit_bytes = hit ? l.shape.bytes(hit) : 0;
  out.dirty_hit_bytes = hit & l.dirty ? l.shape.bytes(hit & l.dirty) : 0;
  l.present |= mask;
  held_in = std::max<i64>(1, held_in);
  if (held_in != l.held_in || miss != 0) {
    resident_ -= l.bytes;
    l.held_in = held_in;
    l.bytes = l.shape.bytes(l.present) / held_in;
    resident_ += l.bytes;
  }
  brought_in_ += out.miss_bytes;
  if (write) l.dirty |= mask;
  push_front(n);
  evict_to_capacity();
  return out;
}

void SectoredLru::bring_in_other(i64 bytes, i64 line_bytes) {
  // In the caller's lines: other data leaves as it came, a line at a time.
  const i64 chunk = std::max<i64>(1, line_bytes);
  for (bytes = std::min(bytes, capacity_); bytes > 0; bytes -= chunk) {
    LineShape shape;
    shape.tile_bytes = std::min(chunk, bytes);
    const std::uint64_t key = (static_cast<std::uint64_t>(kOtherTag) << kTagShift) | next_other_++;
    access(key, shape, 1, false, kNoOwner);
  }
}

i64 SectoredLru::written_back(std::int32_t owner, int tag) const {
  const std::size_t at = static_cast<std::size_t>(owner) * kTags + static_cast<std::size_t>(tag);
  return owner >= 0 && at < written_back_by_owner_tag_.size() ? written_back_by_owner_tag_[at] : 0;
}

std::vector<i64> SectoredLru::dirty_bytes_by_tag() const {
  std::vector<i64> by(kTags, 0);
  for (std::int32_t n = head_; n >= 0; n = lines_[static_cast<std::size_t>(n)].next) {
    const Line& l = lines_[static_cast<std::size_t>(n)];
    by[static_cast<std::size_t>(tag_of(l.key))] += l.shape.bytes(l.dirty);
  }
  return by;
}

}  // namespace flashlab::sim::detail
