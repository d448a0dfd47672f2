//===- Philox.h - counter-based random numbers of dropout masks -----------===//
//
// Philox-4x32-10 (Salmon et al., SC'11; Random123's `philox4x32`) and the
// construction of dtg dropout masks on top of it, bit for bit as the
// reference interpreter defines them (dialects/DTG/Interp/Philox.h documents
// the construction; this is a header-only port without MLIR):
//
//   1. Op key: the first two words of Philox4x32-10(
//        counter = (lo(step), hi(step), lo(stream), hi(stream)),
//        key     = (lo(seed), hi(seed))).
//   2. Element k takes word (k mod 4) of
//        Philox4x32-10(counter = (lo(k / 4), hi(k / 4), 0, 0), key = op key).
//   3. It is kept iff its bits >= ceil(ratio * 2^32).
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_KERNELS_PHILOX_H
#define DTCRT_KERNELS_PHILOX_H

#include <array>
#include <cmath>
#include <cstdint>

namespace dtck {

/// Four 32-bit words: a Philox counter or output block.
using PhiloxBlock = std::array<uint32_t, 4>;
/// Two 32-bit words: a Philox key.
using PhiloxKey = std::array<uint32_t, 2>;

/// One Philox-4x32-10 block: ten rounds of the bijection on `counter` keyed
/// by `key`.
inline PhiloxBlock philox4x32_10(PhiloxBlock counter, PhiloxKey key) {
  constexpr uint32_t kMultiplier0 = 0xD2511F53u, kMultiplier1 = 0xCD9E8D57u;
  constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  PhiloxBlock c = counter;
  PhiloxKey k = key;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k[0] += kWeyl0;
      k[1] += kWeyl1;
    }
    uint64_t p0 = uint64_t(kMultiplier0) * c[0];
    uint64_t p1 = uint64_t(kMultiplier1) * c[2];
    c = {uint32_t(p1 >> 32) ^ c[1] ^ k[0], uint32_t(p1),
         uint32_t(p0 >> 32) ^ c[3] ^ k[1], uint32_t(p0)};
  }
  return c;
}

/// The per-op key of a dropout whose key operand holds (`seed`, `step`) and
/// whose stream attribute is `stream` (step 1).
inline PhiloxKey dropoutOpKey(int64_t seed, int64_t step, int64_t stream) {
  uint64_t s = uint64_t(seed), t = uint64_t(step), r = uint64_t(stream);
  PhiloxBlock block = philox4x32_10(
      {uint32_t(t), uint32_t(t >> 32), uint32_t(r), uint32_t(r >> 32)},
      {uint32_t(s), uint32_t(s >> 32)});
  return {block[0], block[1]};
}

/// The four words of elements 4 * `group` .. 4 * `group` + 3 (step 2).
inline PhiloxBlock dropoutGroupBits(PhiloxKey opKey, uint64_t group) {
  return philox4x32_10({uint32_t(group), uint32_t(group >> 32), 0, 0}, opKey);
}

/// The 32 random bits of element `index` (step 2).
inline uint32_t dropoutBits(PhiloxKey opKey, uint64_t index) {
  return dropoutGroupBits(opKey, index / 4)[index % 4];
}

/// Smallest bit pattern kept at drop probability `ratio`: ceil(ratio * 2^32)
/// (step 3; exact, since scaling by 2^32 is).
inline uint64_t dropoutThreshold(double ratio) {
  if (!(ratio > 0.0))
    return 0;
  if (ratio >= 1.0)
    return uint64_t(1) << 32;
  return static_cast<uint64_t>(std::ceil(std::ldexp(ratio, 32)));
}

} // namespace dtck

#endif // DTCRT_KERNELS_PHILOX_H
