//===- Philox.h - counter-based random numbers for dropout ------*- C++ -*-===//
//
// Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3", SC'11; the Random123 reference) and the exact construction of dtg
// dropout masks on top of it. Generated code (CPU and CUDA) must reproduce
// `dropoutBits` bit for bit, so that a mask depends only on the key, the op's
// stream and each element's index in the unsharded tensor.
//
// The construction (all words are uint32, "lo"/"hi" the low and high halves
// of a 64-bit value taken as two's complement):
//
//   1. Op key: (k0, k1, _, _) = Philox4x32-10(
//        counter = (lo(step), hi(step), lo(stream), hi(stream)),
//        key     = (lo(seed), hi(seed)))
//      where (seed, step) are the two i64 elements of the op's `key` operand
//      and `stream` is its attribute. Only the first two output words are
//      kept; they are the key of step 2.
//   2. Element bits: element k (row-major linear index in the whole tensor,
//      k >= 0) takes word (k mod 4) of
//        Philox4x32-10(counter = (lo(k / 4), hi(k / 4), 0, 0), key = (k0, k1)).
//   3. Decision: with u = bits * 2^-32 in [0, 1), the element is kept iff
//      u >= ratio, i.e. iff bits >= ceil(ratio * 2^32) (an exact integer
//      comparison; see `dropoutThreshold`). Kept values are scaled by
//      1 / (1 - ratio).
//
// Four consecutive elements share one Philox call, so a kernel that owns an
// aligned group of four draws once for all of them; a shard that starts at an
// unaligned index simply discards the words before it.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_DIALECTS_DTG_INTERP_PHILOX_H
#define DTC_DIALECTS_DTG_INTERP_PHILOX_H

#include <array>
#include <cstdint>

namespace mlir::dtg::interp {

/// One Philox-4x32-10 block: ten rounds of the bijection on `counter` keyed
/// by `key` (Random123's `philox4x32`, its known-answer vectors hold).
std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> counter,
                                      std::array<uint32_t, 2> key);

/// The per-op Philox key of a dropout with key operand (`seed`, `step`) and
/// stream attribute `stream` (step 1 of the construction above).
std::array<uint32_t, 2> dropoutOpKey(int64_t seed, int64_t step,
                                     int64_t stream);

/// The 32 random bits of element `index` under the per-op key `opKey`
/// (step 2 of the construction above).
uint32_t dropoutBits(std::array<uint32_t, 2> opKey, uint64_t index);

/// Smallest bit pattern that is kept at drop probability `ratio` in [0, 1):
/// ceil(ratio * 2^32), so that bits >= threshold iff bits * 2^-32 >= ratio.
uint64_t dropoutThreshold(double ratio);

} // namespace mlir::dtg::interp

#endif // DTC_DIALECTS_DTG_INTERP_PHILOX_H
