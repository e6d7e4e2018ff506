// The link benchmark's plain parts, in every build: its options checked, its
// message sizes, and the pattern the send buffers hold and the check reads.
#include <cstring>

#include "flashlab/kernels/links/link_bench.hpp"

namespace flashlab::kernels {

std::vector<std::string> validate(const LinkBenchOptions& o) {
  std::vector<std::string> out;
  if (o.min_bytes < 1) out.push_back("the smallest message must be at least 1 byte, not " + std::to_string(o.min_bytes));
  if (o.max_bytes < o.min_bytes)
    out.push_back("the largest message (" + std::to_string(o.max_bytes) + " bytes) is smaller than the smallest (" +
                  std::to_string(o.min_bytes) + ")");
  if (o.max_bytes > (i64{1} << 34))
    out.push_back("messages above 16 GiB are not measured (asked " + std::to_string(o.max_bytes) + " bytes)");
  if (o.step < 2) out.push_back("the size step must be at least 2, not " + std::to_string(o.step));
  if (o.warmup < 0) out.push_back("warm-up iterations cannot be negative (" + std::to_string(o.warmup) + ")");
  if (o.iterations < 1) out.push_back("at least 1 timed iteration, not " + std::to_string(o.iterations));
  if (!o.devices.empty() && o.devices.size() < 2)
    out.push_back("a link needs 2 devices; " + std::to_string(o.devices.size()) + " named");
  for (std::size_t i = 0; i < o.devices.size(); ++i) {
    if (o.devices[i] < 0) out.push_back("device " + std::to_string(o.devices[i]) + " is not a CUDA ordinal");
    for (std::size_t j = 0; j < i; ++j)
      if (o.devices[j] == o.devices[i]) out.push_back("device " + std::to_string(o.devices[i]) + " is named twice");
  }
  return out;
}

std::vector<i64> link_bench_sizes(const LinkBenchOptions& o) {
  std::vector<i64> out;
  if (o.min_bytes < 1 || o.max_bytes < o.min_bytes || o.step < 2) return out;
  for (i64 b = o.min_bytes; b <= o.max_bytes; b *= o.step) {
    out.push_back(b);
    if (b > o.max_bytes / o.step) break;  // the next step would pass max (or overflow)
  }
  if (out.back() != o.max_bytes) out.push_back(o.max_bytes);
  return out;
}

int link_bench_messages(i64 bytes) {
  constexpr i64 kIterationBytes = i64{64} << 20;
  constexpr i64 kMaxMessages = 100;
  if (bytes <= 0) return static_cast<int>(kMaxMessages);
  const i64 n = (kIterationBytes + bytes - 1) / bytes;
  return static_cast<int>(n < 1 ? 1 : (n > kMaxMessages ? kMaxMessages : n));
}

std::uint64_t link_pattern_word(int gpu, std::uint64_t index) {
  std::uint64_t z = (index + 1) * 0x9E3779B97F4A7C15ULL;
  z ^= z >> 29;
  z *= 0xBF58476D1CE4E5B9ULL;
  z ^= z >> 32;
  // Each GPU's own bits, with bit 0 of every byte left alone so that every byte stays odd.
  const std::uint64_t tag = (static_cast<std::uint64_t>(gpu) + 1) * 0xD1B54A32D192ED03ULL & 0xFEFEFEFEFEFEFEFEULL;
  return (z | 0x0101010101010101ULL) ^ tag;
}

i64 first_pattern_mismatch(const void* received, i64 bytes, int from, i64 offset_bytes) {
  const auto* p = static_cast<const unsigned char*>(received);
  i64 k = 0;
  // Whole words while the offset is word-aligned: the check of a GiB takes a fraction of a second.
  if (offset_bytes % 8 == 0)
    for (; k + 8 <= bytes; k += 8) {
      std::uint64_t got;
      std::memcpy(&got, p + k, 8);
      if (got != link_pattern_word(from, static_cast<std::uint64_t>((offset_bytes + k) / 8))) break;
    }
  for (; k < bytes; ++k) {
    const i64 at = offset_bytes + k;
    const std::uint64_t word = link_pattern_word(from, static_cast<std::uint64_t>(at / 8));
    unsigned char expected[8];
    std::memcpy(expected, &word, 8);
    if (p[k] != expected[at % 8]) return k;
  }
  return -1;
}

}  // namespace flashlab::kernels
