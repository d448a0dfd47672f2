//===- Philox.cpp - counter-based random numbers for dropout -------------===//

#include "dialects/DTG/Interp/Philox.h"

#include <cmath>

using namespace mlir::dtg::interp;

/// Philox-4x32 multipliers and Weyl key increments (Random123).
static constexpr uint32_t kMultiplier0 = 0xD2511F53u;
static constexpr uint32_t kMultiplier1 = 0xCD9E8D57u;
static constexpr uint32_t kWeyl0 = 0x9E3779B9u;
static constexpr uint32_t kWeyl1 = 0xBB67AE85u;

static uint32_t lo32(uint64_t v) { return static_cast<uint32_t>(v); }
static uint32_t hi32(uint64_t v) { return static_cast<uint32_t>(v >> 32); }

std::array<uint32_t, 4>
mlir::dtg::interp::philox4x32_10(std::array<uint32_t, 4> counter,
                                 std::array<uint32_t, 2> key) {
  std::array<uint32_t, 4> c = counter;
  std::array<uint32_t, 2> k = key;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k[0] += kWeyl0;
      k[1] += kWeyl1;
    }
    uint64_t p0 = uint64_t(kMultiplier0) * c[0];
    uint64_t p1 = uint64_t(kMultiplier1) * c[2];
    c = {hi32(p1) ^ c[1] ^ k[0], lo32(p1), hi32(p0) ^ c[3] ^ k[1], lo32(p0)};
  }
  return c;
}

std::array<uint32_t, 2>
mlir::dtg::interp::dropoutOpKey(int64_t seed, int64_t step, int64_t stream) {
  uint64_t s = static_cast<uint64_t>(seed), t = static_cast<uint64_t>(step),
           r = static_cast<uint64_t>(stream);
  std::array<uint32_t, 4> block =
      philox4x32_10({lo32(t), hi32(t), lo32(r), hi32(r)}, {lo32(s), hi32(s)});
  return {block[0], block[1]};
}

uint32_t mlir::dtg::interp::dropoutBits(std::array<uint32_t, 2> opKey,
                                        uint64_t index) {
  uint64_t group = index / 4;
  return philox4x32_10({lo32(group), hi32(group), 0, 0}, opKey)[index % 4];
}

uint64_t mlir::dtg::interp::dropoutThreshold(double ratio) {
  if (!(ratio > 0.0))
    return 0;
  if (ratio >= 1.0)
    return uint64_t(1) << 32;
  // ratio * 2^32 is exact (a power-of-two scaling), so is its ceiling.
  return static_cast<uint64_t>(std::ceil(std::ldexp(ratio, 32)));
}
