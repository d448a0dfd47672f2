//===- Shape.h - data-movement kernels of the CPU target --------*- C++ -*-===//
//
// transpose, concat, slice, gather, gather_elements, scatter_elements,
// broadcast, tile, pad, trilu and the gradient primitives gather_grad,
// slice_grad and pad_grad. The reference is
// dialects/DTG/Interp/KernelsShape.cpp; the argument convention is the one
// at the top of Elementwise.h (attributes that the shapes determine, such as
// a slice's limits, are left out).
//
// Only trilu and scatterElements (its `data`) may write over an input;
// the other kernels need an output distinct from their inputs.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_KERNELS_SHAPE_H
#define DTCRT_KERNELS_SHAPE_H

#include "dtcrt/kernels/Elementwise.h"

#include <initializer_list>
#include <vector>

namespace dtck {

/// How dtg.pad fills positions outside the operand.
enum class PadMode { Constant, Reflect, Edge };

namespace detail {

/// Fails naming the kernel and the index out of range.
[[noreturn]] inline void failIndex(const char *kernel, int64_t raw,
                                   int64_t axis, int64_t size) {
  char message[256];
  std::snprintf(message, sizeof(message),
                "%s: index %lld is out of range for axis %lld of size %lld "
                "(valid: [%lld, %lld))",
                kernel, static_cast<long long>(raw),
                static_cast<long long>(axis), static_cast<long long>(size),
                static_cast<long long>(-size), static_cast<long long>(size));
  fail(message);
}

/// Index `k` of `indices` counted from the end when negative; fails when it
/// is not in [0, size).
template <typename I>
inline int64_t readIndex(const char *kernel, const I *indices, int64_t k,
                         int64_t size, int64_t axis) {
  int64_t raw = static_cast<int64_t>(indices[k]);
  int64_t index = raw < 0 ? raw + size : raw;
  if (index < 0 || index >= size)
    failIndex(kernel, raw, axis, size);
  return index;
}

/// The transposing case of copyStrided: the destination is contiguous in
/// the innermost dimension and the source in another one, q. Copies 32 x 32
/// tiles of those two dimensions, so that both sides are read and written a
/// cache line at a time; false (nothing done) for other nests.
template <typename T>
inline bool copyTransposed(const StridedLoop<2> &nest, const T *src, T *dst) {
  int rank = nest.rank, inner = rank - 1, q = -1;
  if (nest.empty || rank < 2 || nest.strides[1][inner] != 1 ||
      nest.strides[0][inner] == 1)
    return false;
  for (int d = 0; d < inner; ++d)
    if (nest.strides[0][d] == 1)
      q = d;
  if (q < 0)
    return false;
  constexpr int64_t kTile = 32;
  int64_t sizeI = nest.dims[inner], sizeQ = nest.dims[q];
  int64_t tilesI = (sizeI + kTile - 1) / kTile;
  int64_t tilesQ = (sizeQ + kTile - 1) / kTile;
  int64_t outer = 1;
  for (int d = 0; d < inner; ++d)
    if (d != q)
      outer *= nest.dims[d];
  int64_t srcI = nest.strides[0][inner], dstQ = nest.strides[1][q];
  int64_t tiles = outer * tilesQ * tilesI;
  parallelFor(
      outer * sizeQ * sizeI, tiles, [&](int64_t chunkBegin, int64_t chunkEnd) {
        for (int64_t t = chunkBegin; t < chunkEnd; ++t) {
          int64_t i0 = (t % tilesI) * kTile, q0 = (t / tilesI % tilesQ) * kTile;
          int64_t rest = t / tilesI / tilesQ, from = 0, to = 0;
          for (int d = inner - 1; d >= 0; --d) {
            if (d == q)
              continue;
            int64_t c = rest % nest.dims[d];
            rest /= nest.dims[d];
            from += c * nest.strides[0][d];
            to += c * nest.strides[1][d];
          }
          int64_t endQ = std::min(q0 + kTile, sizeQ),
                  endI = std::min(i0 + kTile, sizeI);
          for (int64_t a = q0; a < endQ; ++a)
            for (int64_t i = i0; i < endI; ++i)
              dst[to + a * dstQ + i] = src[from + a + i * srcI];
        }
      });
  return true;
}

/// Copies, for every position p of `loop`, `src[srcOffset + p . srcStrides]`
/// to `dst[dstOffset + p . dstStrides]`.
template <typename T>
inline void copyStrided(const Shape &loop, const T *src, int64_t srcOffset,
                        const int64_t (&srcStrides)[kMaxRank], T *dst,
                        int64_t dstOffset,
                        const int64_t (&dstStrides)[kMaxRank]) {
  int64_t strides[2][kMaxRank];
  for (int d = 0; d < kMaxRank; ++d) {
    strides[0][d] = srcStrides[d];
    strides[1][d] = dstStrides[d];
  }
  StridedLoop<2> nest(loop, strides);
  src += srcOffset;
  dst += dstOffset;
  if (copyTransposed(nest, src, dst))
    return;
  forEachRun(nest, [&](const int64_t *off, const int64_t *step, int64_t len) {
    const T *from = src + off[0];
    T *to = dst + off[1];
    if (step[0] == 1 && step[1] == 1) {
      for (int64_t j = 0; j < len; ++j)
        to[j] = from[j];
    } else if (step[0] == 0) {
      T v = from[0];
      for (int64_t j = 0; j < len; ++j)
        to[j * step[1]] = v;
    } else {
      for (int64_t j = 0; j < len; ++j)
        to[j * step[1]] = from[j * step[0]];
    }
  });
}

/// Fills `n` elements of `y` with `value`.
template <typename T> inline void fill(int64_t n, T value, T *y) {
  parallelFor(n, n, [&](int64_t chunkBegin, int64_t chunkEnd) {
    for (int64_t i = chunkBegin; i < chunkEnd; ++i) {
      y[i] = value;
    }
  });
}

/// Maps an out-of-range coordinate `c` of a dimension of `size` (> 0) back
/// into it: mirrored without repeating the edge (reflect) or clamped (edge).
inline int64_t foldCoordinate(int64_t c, int64_t size, bool reflect) {
  if (!reflect || size == 1)
    return std::min(std::max(c, int64_t(0)), size - 1);
  int64_t period = 2 * (size - 1);
  c %= period;
  if (c < 0)
    c += period;
  return c < size ? c : period - c;
}

/// Fails when a reflect or edge pad would have to read an empty dimension.
inline void checkPadSource(const char *kernel, const Shape &source,
                           const Shape &padded, PadMode mode) {
  if (mode == PadMode::Constant || padded.numel() == 0)
    return;
  for (int d = 0; d < source.rank; ++d) {
    if (source.dims[d] != 0)
      continue;
    char message[128];
    std::snprintf(message, sizeof(message),
                  "%s: cannot %s-pad empty dimension %d", kernel,
                  mode == PadMode::Reflect ? "reflect" : "edge", d);
    fail(message);
  }
}

} // namespace detail

//===----------------------------------------------------------------------===//
// Forward data movement
//===----------------------------------------------------------------------===//

/// Result dimension d is operand dimension perm[d].
template <typename T>
inline void transpose(const Shape &in, const Shape &out, const T *x,
                      const int64_t *perm, T *y) {
  int64_t inStrides[kMaxRank], srcStrides[kMaxRank] = {},
                               dstStrides[kMaxRank] = {};
  stridesOf(in, inStrides);
  stridesOf(out, dstStrides);
  for (int d = 0; d < out.rank; ++d)
    srcStrides[d] = inStrides[perm[d]];
  detail::copyStrided(out, x, 0, srcStrides, y, 0, dstStrides);
}

/// Joins the inputs (shapes `ins`, data `xs`, in order) along `axis`.
template <typename T>
inline void concat(std::initializer_list<Shape> ins, const Shape &out,
                   std::initializer_list<const T *> xs, int64_t axis, T *y) {
  int a = static_cast<int>(axis);
  int64_t outer = detail::product(out, 0, a);
  int64_t inner = detail::product(out, a + 1, out.rank);
  int64_t outRow = out.dims[a] * inner;
  int64_t offset = 0;
  const T *const *x = xs.begin();
  for (const Shape &in : ins) {
    int64_t row = in.dims[a] * inner;
    const T *src = *x++;
    parallelFor(outer * row, outer, [&](int64_t chunkBegin, int64_t chunkEnd) {
      for (int64_t o = chunkBegin; o < chunkEnd; ++o) {
        for (int64_t j = 0; j < row; ++j) {
          y[o * outRow + offset + j] = src[o * row + j];
        }
      }
    });
    offset += row;
  }
}

/// Takes indices starts[d] + k * steps[d] in each dimension (the result's
/// shape gives the count; every index is in range by the op's verifier).
template <typename T>
inline void slice(const Shape &in, const Shape &out, const T *x,
                  const int64_t *starts, const int64_t *steps, T *y) {
  int64_t inStrides[kMaxRank], srcStrides[kMaxRank] = {},
                               dstStrides[kMaxRank] = {};
  stridesOf(in, inStrides);
  stridesOf(out, dstStrides);
  int64_t offset = 0;
  for (int d = 0; d < in.rank; ++d) {
    offset += starts[d] * inStrides[d];
    srcStrides[d] = inStrides[d] * steps[d];
  }
  detail::copyStrided(out, x, offset, srcStrides, y, 0, dstStrides);
}

/// ONNX Gather: result shape data[:axis] + indices + data[axis+1:].
template <typename T, typename I>
inline void gather(const Shape &data, const Shape &indices, const T *x,
                   const I *idx, int64_t axis, T *y) {
  int a = static_cast<int>(axis);
  int64_t outer = detail::product(data, 0, a);
  int64_t size = data.dims[a];
  int64_t inner = detail::product(data, a + 1, data.rank);
  int64_t count = indices.numel();
  for (int64_t j = 0; j < count; ++j)
    detail::readIndex("gather", idx, j, size, axis);
  if (outer * inner == 0)
    return;
  int64_t blocks = outer * count;
  parallelFor(blocks * inner, blocks,
              [&](int64_t chunkBegin, int64_t chunkEnd) {
                for (int64_t b = chunkBegin; b < chunkEnd; ++b) {
                  int64_t o = b / count, j = b % count;
                  int64_t i = static_cast<int64_t>(idx[j]);
                  if (i < 0)
                    i += size;
                  const T *src = x + (o * size + i) * inner;
                  T *dst = y + b * inner;
                  for (int64_t n = 0; n < inner; ++n)
                    dst[n] = src[n];
                }
              });
}

namespace detail {

/// Checks every index of an elements op (gather_elements, scatter_elements)
/// and that `indices` fits in `data` off the axis.
template <typename I>
inline void checkElementIndices(const char *kernel, const Shape &data,
                                const Shape &indices, const I *idx,
                                int64_t axis) {
  for (int d = 0; d < data.rank; ++d) {
    if (d == axis || indices.dims[d] <= data.dims[d] || indices.numel() == 0)
      continue;
    char message[160];
    std::snprintf(message, sizeof(message),
                  "%s: indices dimension %d (size %lld) is larger than "
                  "data's (size %lld)",
                  kernel, d, static_cast<long long>(indices.dims[d]),
                  static_cast<long long>(data.dims[d]));
    fail(message);
  }
  for (int64_t k = 0, n = indices.numel(); k < n; ++k)
    readIndex(kernel, idx, k, data.dims[axis], axis);
}

/// Calls `body(k, target)` for every position k of `indices` (row-major) with
/// the linear index into `data` whose coordinates are k's with coordinate
/// `axis` replaced by the (checked) index; rows run in parallel when
/// `parallel`.
template <typename I, typename Body>
inline void forEachElementTarget(const Shape &data, const Shape &indices,
                                 const I *idx, int64_t axis, bool parallel,
                                 Body body) {
  int rank = indices.rank;
  int64_t dataStrides[kMaxRank];
  stridesOf(data, dataStrides);
  int64_t inner = indices.dims[rank - 1];
  int64_t n = indices.numel();
  if (n == 0)
    return;
  int64_t rows = n / inner;
  int64_t size = data.dims[axis];
  auto row = [&](int64_t r) {
    int64_t base = 0, rest = r;
    for (int d = rank - 2; d >= 0; --d) {
      int64_t c = rest % indices.dims[d];
      rest /= indices.dims[d];
      if (d != axis)
        base += c * dataStrides[d];
    }
    for (int64_t j = 0; j < inner; ++j) {
      int64_t k = r * inner + j;
      int64_t i = static_cast<int64_t>(idx[k]);
      if (i < 0)
        i += size;
      int64_t target = base + i * dataStrides[axis];
      if (axis != rank - 1)
        target += j * dataStrides[rank - 1];
      body(k, target);
    }
  };
  if (parallel) {
    parallelFor(n, rows, [&](int64_t chunkBegin, int64_t chunkEnd) {
      for (int64_t r = chunkBegin; r < chunkEnd; ++r) {
        row(r);
      }
    });
  } else {
    for (int64_t r = 0; r < rows; ++r)
      row(r);
  }
}

} // namespace detail

/// torch.gather: y[p] = data[p with coordinate axis = indices[p]].
template <typename T, typename I>
inline void gatherElements(const Shape &data, const Shape &indices, const T *x,
                           const I *idx, int64_t axis, T *y) {
  detail::checkElementIndices("gather_elements", data, indices, idx, axis);
  detail::forEachElementTarget(data, indices, idx, axis, /*parallel=*/true,
                               [&](int64_t k, int64_t t) { y[k] = x[t]; });
}

/// How scatterElements combines an update with the element it targets.
enum class ScatterReduction { None, Add, Mul, Max, Min };

/// y = data, then y[p with coordinate axis = indices[p]] = updates[p] (or
/// combined with it by `reduction`), in order of p. `y` may be `x`.
template <typename T, typename I>
inline void scatterElements(const Shape &data, const Shape &indices, const T *x,
                            const I *idx, const T *updates, int64_t axis,
                            ScatterReduction reduction, T *y) {
  detail::checkElementIndices("scatter_elements", data, indices, idx, axis);
  if (y != x) {
    int64_t n = data.numel();
    parallelFor(n, n, [&](int64_t chunkBegin, int64_t chunkEnd) {
      for (int64_t i = chunkBegin; i < chunkEnd; ++i) {
        y[i] = x[i];
      }
    });
  }
  // Sequential: repeated indices take the last update, or combine in order.
  detail::forEachElementTarget(
      data, indices, idx, axis, /*parallel=*/false, [&](int64_t k, int64_t t) {
        auto a = detail::load(y[t]), b = detail::load(updates[k]);
        switch (reduction) {
        case ScatterReduction::None:
          y[t] = updates[k];
          break;
        case ScatterReduction::Add:
          if constexpr (isFloating<T>)
            y[t] = T(a + b);
          else
            y[t] = detail::wrapInt<T>(detail::wrappingAdd(a, b));
          break;
        case ScatterReduction::Mul:
          if constexpr (isFloating<T>)
            y[t] = T(a * b);
          else
            y[t] = detail::wrapInt<T>(detail::wrappingMul(a, b));
          break;
        case ScatterReduction::Max:
          y[t] = T(a < b ? b : a);
          break;
        case ScatterReduction::Min:
          y[t] = T(b < a ? b : a);
          break;
        }
      });
}

/// Broadcasts (NumPy rules) to the result's shape.
template <typename T>
inline void broadcast(const Shape &in, const Shape &out, const T *x, T *y) {
  int64_t srcStrides[kMaxRank], dstStrides[kMaxRank];
  broadcastStrides(in, out, srcStrides);
  stridesOf(out, dstStrides);
  detail::copyStrided(out, x, 0, srcStrides, y, 0, dstStrides);
}

/// Repeats the operand along each dimension (the shapes give the repeats).
template <typename T>
inline void tile(const Shape &in, const Shape &out, const T *x, T *y) {
  int rank = out.rank;
  if (rank == 0) {
    y[0] = x[0];
    return;
  }
  int64_t n = out.numel();
  if (n == 0)
    return;
  int64_t inStrides[kMaxRank];
  stridesOf(in, inStrides);
  int64_t srcLast = in.dims[rank - 1], outLast = out.dims[rank - 1];
  int64_t rows = n / outLast;
  parallelFor(n, rows, [&](int64_t chunkBegin, int64_t chunkEnd) {
    for (int64_t r = chunkBegin; r < chunkEnd; ++r) {
      int64_t base = 0, rest = r;
      for (int d = rank - 2; d >= 0; --d) {
        int64_t c = rest % out.dims[d];
        rest /= out.dims[d];
        base += (c % in.dims[d]) * inStrides[d];
      }
      T *dst = y + r * outLast;
      for (int64_t start = 0; start < outLast; start += srcLast)
        for (int64_t j = 0; j < srcLast; ++j)
          dst[start + j] = x[base + j];
    }
  });
}

/// Pads by low[d] before each dimension (the shapes give the high amounts);
/// negative amounts crop. Constant mode fills with `value` (stored as the
/// interpreter's Tensor::set).
template <typename T>
inline void pad(const Shape &in, const Shape &out, const T *x,
                const int64_t *low, PadMode mode, double value, T *y) {
  detail::checkPadSource("pad", in, out, mode);
  int rank = out.rank;
  if (rank == 0) {
    y[0] = x[0];
    return;
  }
  int64_t n = out.numel();
  if (n == 0)
    return;
  T fillValue = detail::fromDouble<T>(value);
  bool reflect = mode == PadMode::Reflect;
  int64_t inStrides[kMaxRank];
  stridesOf(in, inStrides);
  int64_t outLast = out.dims[rank - 1], srcLast = in.dims[rank - 1];
  int64_t lowLast = low[rank - 1];
  int64_t rows = n / outLast;
  // The columns [begin, end) of a row read the operand row in order.
  int64_t begin = std::min(std::max(lowLast, int64_t(0)), outLast);
  int64_t end = std::max(std::min(lowLast + srcLast, outLast), begin);
  parallelFor(n, rows, [&](int64_t chunkBegin, int64_t chunkEnd) {
    for (int64_t r = chunkBegin; r < chunkEnd; ++r) {
      T *dst = y + r * outLast;
      int64_t base = 0, rest = r;
      bool filled = false;
      for (int d = rank - 2; d >= 0; --d) {
        int64_t c = rest % out.dims[d] - low[d];
        rest /= out.dims[d];
        if (c < 0 || c >= in.dims[d]) {
          if (mode == PadMode::Constant) {
            filled = true;
            break;
          }
          c = detail::foldCoordinate(c, in.dims[d], reflect);
        }
        base += c * inStrides[d];
      }
      if (filled) {
        for (int64_t j = 0; j < outLast; ++j)
          dst[j] = fillValue;
        continue;
      }
      const T *src = x + base;
      for (int64_t j = begin; j < end; ++j)
        dst[j] = src[j - lowLast];
      for (int64_t j = 0; j < outLast; ++j) {
        if (j == begin)
          j = end;
        if (j >= outLast)
          break;
        if (mode == PadMode::Constant)
          dst[j] = fillValue;
        else
          dst[j] = src[detail::foldCoordinate(j - lowLast, srcLast, reflect)];
      }
    }
  });
}

/// Keeps col - row >= k (upper) or col - row <= k (lower) in the last two
/// dimensions; zero elsewhere. `y` may be `x`.
template <typename T>
inline void trilu(const Shape &s, const T *x, bool upper, int64_t k, T *y) {
  int64_t rows = s.dims[s.rank - 2], cols = s.dims[s.rank - 1];
  int64_t n = s.numel();
  if (n == 0)
    return;
  int64_t allRows = n / cols;
  parallelFor(n, allRows, [&](int64_t chunkBegin, int64_t chunkEnd) {
    for (int64_t r = chunkBegin; r < chunkEnd; ++r) {
      int64_t row = r % rows;
      // Kept columns: [row + k, cols) when upper, [0, row + k] when lower.
      int64_t lo = upper ? std::min(std::max(row + k, int64_t(0)), cols) : 0;
      int64_t hi =
          upper ? cols : std::min(std::max(row + k + 1, int64_t(0)), cols);
      const T *src = x + r * cols;
      T *dst = y + r * cols;
      for (int64_t c = 0; c < cols; ++c)
        dst[c] = c >= lo && c < hi ? src[c] : T(0);
    }
  });
}

//===----------------------------------------------------------------------===//
// Gradient primitives (adjoints of gather, slice and pad)
//===----------------------------------------------------------------------===//

/// The adjoint of gather: y = 0, then y[.., indices[j], ..] += grad[.., j,
/// ..]. Each element sums its contributions in double, in order of j, and
/// rounds once (as the interpreter).
template <typename T, typename I>
inline void gatherGrad(const Shape &grad, const Shape &indices,
                       const Shape &out, const T *g, const I *idx, int64_t axis,
                       T *y) {
  int a = static_cast<int>(axis);
  int64_t outer = detail::product(out, 0, a);
  int64_t size = out.dims[a];
  int64_t inner = detail::product(out, a + 1, out.rank);
  int64_t count = indices.numel();
  (void)grad;
  // Positions j grouped by index (a stable counting sort).
  std::vector<int64_t> begin(size + 1, 0), order(count);
  for (int64_t j = 0; j < count; ++j)
    ++begin[detail::readIndex("gather_grad", idx, j, size, axis) + 1];
  for (int64_t i = 0; i < size; ++i)
    begin[i + 1] += begin[i];
  {
    std::vector<int64_t> next(begin.begin(), begin.end() - 1);
    for (int64_t j = 0; j < count; ++j) {
      int64_t i = static_cast<int64_t>(idx[j]);
      order[next[i < 0 ? i + size : i]++] = j;
    }
  }
  const int64_t *first = begin.data(), *positions = order.data();
  int64_t rows = outer * size;
  constexpr int64_t kChunk = 256;
  parallelFor(rows * inner, rows, [&](int64_t chunkBegin, int64_t chunkEnd) {
    for (int64_t r = chunkBegin; r < chunkEnd; ++r) {
      int64_t o = r / size, i = r % size;
      for (int64_t n0 = 0; n0 < inner; n0 += kChunk) {
        int64_t len = std::min(kChunk, inner - n0);
        double acc[kChunk] = {};
        for (int64_t p = first[i]; p < first[i + 1]; ++p) {
          const T *src = g + (o * count + positions[p]) * inner + n0;
          for (int64_t n = 0; n < len; ++n)
            acc[n] += static_cast<double>(detail::load(src[n]));
        }
        T *dst = y + r * inner + n0;
        for (int64_t n = 0; n < len; ++n)
          dst[n] = detail::roundTo<T>(acc[n]);
      }
    }
  });
}

/// The adjoint of slice: y = 0 except at the indices the slice took, which
/// receive grad.
template <typename T>
inline void sliceGrad(const Shape &grad, const Shape &out, const T *g,
                      const int64_t *starts, const int64_t *steps, T *y) {
  detail::fill(out.numel(), T(0), y);
  int64_t outStrides[kMaxRank], srcStrides[kMaxRank] = {},
                                dstStrides[kMaxRank] = {};
  stridesOf(out, outStrides);
  stridesOf(grad, srcStrides);
  int64_t offset = 0;
  for (int d = 0; d < out.rank; ++d) {
    offset += starts[d] * outStrides[d];
    dstStrides[d] = outStrides[d] * steps[d];
  }
  detail::copyStrided(grad, g, 0, srcStrides, y, offset, dstStrides);
}

/// The adjoint of pad: each operand element sums (in double, in the order
/// of the padded positions, rounding once) the gradient at every position
/// that pad copied it to.
template <typename T>
inline void padGrad(const Shape &grad, const Shape &out, const T *g,
                    const int64_t *low, PadMode mode, T *y) {
  detail::checkPadSource("pad_grad", out, grad, mode);
  int rank = out.rank;
  int64_t n = out.numel();
  if (rank == 0) {
    y[0] = g[0];
    return;
  }
  if (n == 0)
    return;
  bool reflect = mode == PadMode::Reflect;
  // Per dimension, the gradient coordinates copied from each operand
  // coordinate c, ascending: sources[d][first[d][c] .. first[d][c + 1]).
  std::vector<int64_t> first[kMaxRank], sources[kMaxRank];
  for (int d = 0; d < rank; ++d) {
    int64_t size = out.dims[d], padded = grad.dims[d];
    std::vector<int64_t> target(padded, -1);
    first[d].assign(size + 1, 0);
    for (int64_t p = 0; p < padded; ++p) {
      int64_t c = p - low[d];
      if (c < 0 || c >= size) {
        if (mode == PadMode::Constant)
          continue;
        c = detail::foldCoordinate(c, size, reflect);
      }
      target[p] = c;
      ++first[d][c + 1];
    }
    for (int64_t c = 0; c < size; ++c)
      first[d][c + 1] += first[d][c];
    sources[d].resize(first[d][size]);
    std::vector<int64_t> next(first[d].begin(), first[d].end() - 1);
    for (int64_t p = 0; p < padded; ++p)
      if (target[p] >= 0)
        sources[d][next[target[p]]++] = p;
  }
  const int64_t *firstOf[kMaxRank], *sourcesOf[kMaxRank];
  for (int d = 0; d < rank; ++d) {
    firstOf[d] = first[d].data();
    sourcesOf[d] = sources[d].data();
  }
  int64_t gradStrides[kMaxRank];
  stridesOf(grad, gradStrides);
  parallelFor(n, n, [&](int64_t chunkBegin, int64_t chunkEnd) {
    for (int64_t k = chunkBegin; k < chunkEnd; ++k) {
      int64_t lo[kMaxRank], hi[kMaxRank], pos[kMaxRank];
      bool none = false;
      int64_t rest = k;
      for (int d = rank - 1; d >= 0; --d) {
        int64_t c = rest % out.dims[d];
        rest /= out.dims[d];
        lo[d] = pos[d] = firstOf[d][c];
        hi[d] = firstOf[d][c + 1];
        none = none || lo[d] == hi[d];
      }
      double acc = 0.0;
      // Every combination of the per-dimension sources, last dimension
      // fastest: the row-major order the interpreter adds them in.
      while (!none) {
        int64_t index = 0;
        for (int d = 0; d < rank; ++d)
          index += sourcesOf[d][pos[d]] * gradStrides[d];
        acc += static_cast<double>(detail::load(g[index]));
        int d = rank - 1;
        while (d >= 0 && ++pos[d] == hi[d]) {
          pos[d] = lo[d];
          --d;
        }
        none = d < 0;
      }
      y[k] = detail::roundTo<T>(acc);
    }
  });
}

} // namespace dtck

#endif // DTCRT_KERNELS_SHAPE_H
