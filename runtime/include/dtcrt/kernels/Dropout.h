//===- Dropout.h - dropout and its gradient -------------------------------===//
//
// dtg.dropout and its gradient (NN.h), from Philox.h's counter-based bits.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_KERNELS_DROPOUT_H
#define DTCRT_KERNELS_DROPOUT_H

#include "dtcrt/kernels/NNSupport.h"
#include "dtcrt/kernels/Philox.h"

namespace dtck {
//===----------------------------------------------------------------------===//
// Dropout
//===----------------------------------------------------------------------===//

/// dtg.dropout: element k is kept iff dropoutBits(dropoutOpKey(key[0],
/// key[1], stream), k + offset) >= dropoutThreshold(ratio) (Philox.h),
/// offset being key[2] for a key of 3 elements (the index of the tensor's
/// first element in the whole batch's tensor), else 0; kept elements are
/// scaled by 1 / (1 - ratio), the others zeroed; mask is true where kept.
namespace nndetail {
/// Dropout of the n elements x[0, n), whose indices in the whole tensor
/// are offset, offset + 1, ...: groups of 4 indices, the first and last
/// partly outside.
template <typename T>
void dropoutRun(PhiloxKey opKey, uint64_t threshold, double keptScale,
                const T *x, int64_t n, int64_t offset, T *y, bool *mask) {
  int64_t first = offset / 4,
          groups = n == 0 ? 0 : (offset + n - 1) / 4 - first + 1;
  for (int64_t g = 0; g < groups; ++g) {
    int64_t group = first + g;
    PhiloxBlock bits = dropoutGroupBits(opKey, uint64_t(group));
    for (int64_t w = 0; w < 4; ++w) {
      int64_t k = group * 4 + w - offset;
      if (k < 0 || k >= n)
        continue;
      bool keep = bits[w] >= threshold;
      y[k] = store<T>(keep ? toDouble(x[k]) * keptScale : 0.0);
      mask[k] = keep;
    }
  }
}
} // namespace nndetail

template <typename T>
void dropout(const Shape &sx, const T *x, const int64_t *key, int64_t keyLength,
             double ratio, int64_t stream, T *y, bool *mask) {
  PhiloxKey opKey = dropoutOpKey(key[0], key[1], stream);
  uint64_t threshold = dropoutThreshold(ratio);
  double keptScale = 1.0 / (1.0 - ratio);
  int64_t offset = keyLength == 3 ? key[2] : 0;
  if (offset < 0)
    fail("dropout: the key's element offset is negative");
  // Chunks of whole groups of 4 indices, in parallel.
  int64_t n = sx.numel(), chunk = 4096;
  int64_t head = std::min(n, (4 - offset % 4) % 4);
  nndetail::dropoutRun(opKey, threshold, keptScale, x, head, offset, y, mask);
  int64_t chunks = (n - head + chunk - 1) / chunk;
  parallelFor(n, chunks, [&](int64_t chunkBegin, int64_t chunkEnd) {
    for (int64_t c = chunkBegin; c < chunkEnd; ++c) {
      int64_t begin = head + c * chunk, count = std::min(chunk, n - begin);
      nndetail::dropoutRun(opKey, threshold, keptScale, x + begin, count,
                           offset + begin, y + begin, mask + begin);
    }
  });
}

/// dtg.dropout with block_of: x (shape sx) is the block of a tensor of
/// shape `whole` that starts at the coordinates key[3, 3 + rank); each
/// element draws the bits of its index in the whole tensor, plus key[2].
template <typename T>
void dropoutBlock(const Shape &sx, const T *x, const int64_t *key,
                  const Shape &whole, double ratio, int64_t stream, T *y,
                  bool *mask) {
  PhiloxKey opKey = dropoutOpKey(key[0], key[1], stream);
  uint64_t threshold = dropoutThreshold(ratio);
  double keptScale = 1.0 / (1.0 - ratio);
  if (key[2] < 0)
    fail("dropout: the key's element offset is negative");
  int r = sx.rank;
  // Rows of the last dimension: consecutive indices in the whole tensor.
  int64_t last = r == 0 ? 1 : sx.dims[r - 1],
          rows = last ? sx.numel() / last : 0;
  parallelFor(sx.numel(), rows, [&](int64_t chunkBegin, int64_t chunkEnd) {
    for (int64_t row = chunkBegin; row < chunkEnd; ++row) {
      int64_t index = 0, rest = row;
      int64_t at[kMaxRank] = {};
      for (int d = r - 2; d >= 0; --d) {
        at[d] = rest % sx.dims[d];
        rest /= sx.dims[d];
      }
      for (int d = 0; d < r; ++d)
        index = index * whole.dims[d] + (d < r - 1 ? at[d] : 0) + key[3 + d];
      nndetail::dropoutRun(opKey, threshold, keptScale, x + row * last, last,
                           key[2] + index, y + row * last, mask + row * last);
    }
  });
}
} // namespace dtck

#endif // DTCRT_KERNELS_DROPOUT_H
