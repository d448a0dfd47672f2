//===- Matmul.h - matmul, gemm, einsum ------------------------------------===//
//
// The contractions of the dtg NN family (NN.h): matmul through strided
// views, gemm and einsum; small products in registers, the rest through
// NNSupport.h's GEMM.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_KERNELS_MATMUL_H
#define DTCRT_KERNELS_MATMUL_H

#include "dtcrt/kernels/MatmulLibrary.h"
#include "dtcrt/kernels/NNSupport.h"

namespace dtck {
namespace nndetail {

/// One row of y = a x b with N (a compile-time constant) columns, the sums
/// held in registers: y[j] = sum over p of a[p * aCol] * b[p * bRow + j *
/// bCol], p in order.
template <int N, typename A, typename T, typename BCol, typename Widen,
          typename Store>
inline void matmulRowOf(int64_t k, const T *a, int64_t aCol, const T *b,
                        int64_t bRow, BCol bCol, T *y, Widen widen,
                        Store store) {
  A acc[N] = {};
  for (int64_t p = 0; p < k; ++p) {
    A av = widen(a[p * aCol]);
    const T *bp = b + p * bRow;
    for (int j = 0; j < N; ++j)
      acc[j] += av * widen(bp[j * bCol]);
  }
  for (int j = 0; j < N; ++j)
    y[j] = store(acc[j]);
}

/// kRows consecutive rows of matmulRowOf at once (A's rows `aRow` apart,
/// the results `n` apart): each sum in its own order, as one row alone
/// (the same bits), the right operand's row loaded once for all of them,
/// and their independent chains overlapping where one row's would wait on
/// each addition (a head of 4 columns summing 16 products).
constexpr int kRowsAtOnce = 4;
template <int N, typename A, typename T, typename BCol, typename Widen,
          typename Store>
inline void matmulRowsOf(int64_t k, const T *a, int64_t aRow, int64_t aCol,
                         const T *b, int64_t bRow, BCol bCol, T *y, Widen widen,
                         Store store) {
  if constexpr (std::is_same_v<T, float> && std::is_same_v<A, float> &&
                N % 8 == 0 &&
                std::is_same_v<BCol, std::integral_constant<int64_t, 1>>) {
    // The same sums in vectors of 8 (GCC's vector extension), 16 where the
    // CPU has 512-bit registers and the row fills them: left to itself, GCC
    // 12 packs this loop into pairs with spills (attention's 32 heads of 32
    // x 16 x 32: 130 us, against 15-22 us so). Loaded and stored as
    // unaligned vectors: through memcpy, GCC builds each from two 16-byte
    // halves on the stack, and AVX2 loses the gain to store-forwarding
    // stalls.
#ifdef __AVX512F__
    constexpr int L = N % 16 == 0 ? 16 : 8;
#else
    constexpr int L = 8;
#endif
    typedef float V __attribute__((vector_size(L * 4)));
    typedef float Vu __attribute__((vector_size(L * 4), aligned(4), may_alias));
    constexpr int W = N / L;
    V acc[kRowsAtOnce][W] = {};
    for (int64_t p = 0; p < k; ++p) {
      const Vu *bp = reinterpret_cast<const Vu *>(b + p * bRow);
      V bv[W];
      for (int w = 0; w < W; ++w)
        bv[w] = bp[w];
      for (int r = 0; r < kRowsAtOnce; ++r) {
        float av = a[r * aRow + p * aCol];
        for (int w = 0; w < W; ++w)
          acc[r][w] += bv[w] * av;
      }
    }
    for (int r = 0; r < kRowsAtOnce; ++r)
      for (int w = 0; w < W; ++w)
        reinterpret_cast<Vu *>(y + r * N)[w] = acc[r][w];
    return;
  }
  A acc[kRowsAtOnce][N] = {};
  for (int64_t p = 0; p < k; ++p) {
    const T *bp = b + p * bRow;
    A bv[N];
    for (int j = 0; j < N; ++j)
      bv[j] = widen(bp[j * bCol]);
    for (int r = 0; r < kRowsAtOnce; ++r) {
      A av = widen(a[r * aRow + p * aCol]);
      for (int j = 0; j < N; ++j)
        acc[r][j] += av * bv[j];
    }
  }
  for (int r = 0; r < kRowsAtOnce; ++r)
    for (int j = 0; j < N; ++j)
      y[r * N + j] = store(acc[r][j]);
}

/// Matrix products y[b] = a[b] x b[b] by plain loops, rows in parallel:
/// accumulating in A (wrapping uint64_t for integers, the compute type for
/// floats), in the interpreter's order over the contracted dimension.
/// Element (i, p) of a[b] is at `a + aOffset[b] + i * aRow + p * aCol`, and
/// likewise for b; y is contiguous. Products with 1, 2, 4, 8, 16 or 32
/// columns (attention's per-head products at small head sizes, small
/// hidden sizes) keep their rows' sums in registers, four rows at a time
/// when the rows allow; the others in a buffer, the inner loop over
/// columns.
template <typename A, typename T>
void matmulLoops(int64_t batch, int64_t m, int64_t n, int64_t k,
                 const int64_t *aOffset, const int64_t *bOffset, const T *a,
                 int64_t aRow, int64_t aCol, const T *b, int64_t bRow,
                 int64_t bCol, T *y) {
  auto widenValue = [](T v) -> A {
    if constexpr (std::is_same_v<A, uint64_t>)
      return static_cast<uint64_t>(static_cast<int64_t>(v));
    else
      return static_cast<A>(static_cast<compute_t<T>>(v));
  };
  auto storeValue = [](A v) -> T {
    if constexpr (std::is_same_v<A, uint64_t>)
      return store<T>(static_cast<int64_t>(v));
    else
      return store<T>(v);
  };
  int64_t rows = batch * m;
  // bCol is a type: a compile-time 1 where the right operand's rows are
  // contiguous (then a row of it is one vector load, and the sums vectorize),
  // else the run-time stride (one load per element).
  auto fixedRowsStrided = [&](auto columns, auto bCol) {
    constexpr int N = decltype(columns)::value;
    if (m % kRowsAtOnce == 0) {
      int64_t groups = rows / kRowsAtOnce;
      parallelFor(
          rows * n * k, groups, [&](int64_t chunkBegin, int64_t chunkEnd) {
            for (int64_t group = chunkBegin; group < chunkEnd; ++group) {
              int64_t row = group * kRowsAtOnce, bi = row / m, i = row % m;
              matmulRowsOf<N, A>(k, a + aOffset[bi] + i * aRow, aRow, aCol,
                                 b + bOffset[bi], bRow, bCol, y + row * n,
                                 widenValue, storeValue);
            }
          });
      return;
    }
    parallelFor(rows * n * k, rows, [&](int64_t chunkBegin, int64_t chunkEnd) {
      for (int64_t row = chunkBegin; row < chunkEnd; ++row) {
        int64_t bi = row / m, i = row % m;
        matmulRowOf<N, A>(k, a + aOffset[bi] + i * aRow, aCol, b + bOffset[bi],
                          bRow, bCol, y + row * n, widenValue, storeValue);
      }
    });
  };
  // A float right operand with strided rows (attention's keys, transposed)
  // that several groups of rows read: each batch's matrix copied into
  // contiguous rows once per thread, then read as above. The same sums.
  auto fixedRowsPacked = [&](auto columns) {
    constexpr int N = decltype(columns)::value;
    int64_t groups = rows / kRowsAtOnce;
    parallelFor(
        rows * n * k, groups, [&](int64_t chunkBegin, int64_t chunkEnd) {
          thread_local std::vector<T> packed;
          packed.resize(k * N);
          int64_t packedBatch = -1;
          for (int64_t group = chunkBegin; group < chunkEnd; ++group) {
            int64_t row = group * kRowsAtOnce, bi = row / m, i = row % m;
            if (bi != packedBatch) {
              const T *bMat = b + bOffset[bi];
              for (int j = 0; j < N; ++j)
                for (int64_t p = 0; p < k; ++p)
                  packed[p * N + j] = bMat[p * bRow + j * bCol];
              packedBatch = bi;
            }
            matmulRowsOf<N, A>(k, a + aOffset[bi] + i * aRow, aRow, aCol,
                               packed.data(), N,
                               std::integral_constant<int64_t, 1>(),
                               y + row * n, widenValue, storeValue);
          }
        });
  };
  auto fixedRows = [&](auto columns) {
    if (bCol == 1)
      return fixedRowsStrided(columns, std::integral_constant<int64_t, 1>());
    if constexpr (std::is_same_v<T, float>)
      if (m % kRowsAtOnce == 0 && m >= 2 * kRowsAtOnce)
        return fixedRowsPacked(columns);
    fixedRowsStrided(columns, bCol);
  };
  switch (n) {
  case 1:
    return fixedRows(std::integral_constant<int, 1>());
  case 2:
    return fixedRows(std::integral_constant<int, 2>());
  case 4:
    return fixedRows(std::integral_constant<int, 4>());
  case 8:
    return fixedRows(std::integral_constant<int, 8>());
  case 16:
    return fixedRows(std::integral_constant<int, 16>());
  case 32:
    return fixedRows(std::integral_constant<int, 32>());
  default:
    break;
  }
  // (Each thread its own sums; no team below the threshold.)
  parallelTasks(
      rows * n * k >= kParallelThreshold, 0, rows,
      [n] { return std::vector<A>(n); },
      [&](std::vector<A> &acc, int64_t row) {
        int64_t bi = row / m, i = row % m;
        const T *aRowPtr = a + aOffset[bi] + i * aRow;
        const T *bMat = b + bOffset[bi];
        std::fill(acc.begin(), acc.end(), A(0));
        for (int64_t p = 0; p < k; ++p) {
          A av = widenValue(aRowPtr[p * aCol]);
          const T *bRowPtr = bMat + p * bRow;
          if (bCol == 1)
            for (int64_t j = 0; j < n; ++j)
              acc[j] += av * widenValue(bRowPtr[j]);
          else
            for (int64_t j = 0; j < n; ++j)
              acc[j] += av * widenValue(bRowPtr[j * bCol]);
        }
        T *yRow = y + row * n;
        for (int64_t j = 0; j < n; ++j)
          yRow[j] = storeValue(acc[j]);
      });
}

} // namespace nndetail

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

/// A matrix operand of matmulView read through strides (in elements):
/// element (batch coordinates c, row i, column p) is at `offset +
/// sum(c[d] * batch[d]) + i * row + p * col`, with one batch stride per
/// batch dimension of the result (0 along broadcast ones).
struct MatrixView {
  int64_t offset = 0;
  int64_t batch[kMaxRank] = {};
  int64_t row = 0, col = 0;
};

/// The view of a contiguous operand of shape `s` broadcast to the batch
/// dimensions of `sy` (NumPy rules).
inline MatrixView contiguousView(const Shape &s, const Shape &sy) {
  using namespace nndetail;
  MatrixView v;
  int r = sy.rank;
  int64_t rows = s.dims[s.rank - 2], cols = s.dims[s.rank - 1];
  broadcastStrides(subShape(s, 0, s.rank - 2), subShape(sy, 0, r - 2), v.batch);
  for (int d = 0; d < r - 2; ++d)
    v.batch[d] *= rows * cols;
  v.row = cols;
  v.col = 1;
  return v;
}

namespace nndetail {

/// The stride between consecutive offsets when it is constant, 0 for fewer
/// than two, -1 otherwise.
inline int64_t constantStride(const std::vector<int64_t> &offsets) {
  if (offsets.size() < 2)
    return 0;
  int64_t stride = offsets[1] - offsets[0];
  for (size_t i = 2; i < offsets.size(); ++i)
    if (offsets[i] - offsets[i - 1] != stride)
      return -1;
  return stride;
}

/// matmulView's bf16 products through oneDNN (MatmulLibrary.h), a and b
/// read through the views (`va`, `vb`: their row and column strides) at
/// the batch's offsets: one primitive when the batch's matrices lie a
/// constant stride apart (the rows of a stacked batch over one b as one
/// product), else one product at a time. False where the library does not
/// take them (then y is unspecified).
inline bool bf16MatmulByLibrary(int64_t numBatch, int64_t m, int64_t n,
                                int64_t k, const bf16 *a, const MatrixView &va,
                                const std::vector<int64_t> &aOffset,
                                const bf16 *b, const MatrixView &vb,
                                const std::vector<int64_t> &bOffset, bf16 *y) {
  int64_t sa = constantStride(aOffset), sb = constantStride(bOffset);
  DnnlMatmul *whole = nullptr;
  if (numBatch > 1 && sb == 0 && va.col == 1 && sa == m * va.row)
    whole = bf16MatmulFor(1, numBatch * m, n, k, {0, va.row, 1},
                          {0, vb.row, vb.col}, dnnl_bf16);
  else if (numBatch == 1 || (sa > 0 && sb >= 0))
    whole = bf16MatmulFor(numBatch, m, n, k, {sa, va.row, va.col},
                          {sb, vb.row, vb.col}, dnnl_bf16);
  if (whole)
    return whole->run(a + aOffset[0], b + bOffset[0], y);
  DnnlMatmul *one = bf16MatmulFor(1, m, n, k, {0, va.row, va.col},
                                  {0, vb.row, vb.col}, dnnl_bf16);
  if (!one)
    return false;
  for (int64_t bi = 0; bi < numBatch; ++bi)
    if (!one->run(a + aOffset[bi], b + bOffset[bi], y + bi * m * n))
      return false;
  return true;
}

} // namespace nndetail

/// y[..., m, n] = a[..., m, k] x b[..., k, n] with the operands read through
/// views (a transposed or sliced operand needs no copy). y is contiguous.
/// bf16 products go to oneDNN where the CPU has AVX512_BF16
/// (MatmulLibrary.h), others to BLAS on float or to loops.
template <typename T>
void matmulView(const Shape &sy, int64_t k, const T *a, const MatrixView &va,
                const T *b, const MatrixView &vb, T *y) {
  using namespace nndetail;
  int r = sy.rank;
  int64_t m = sy.dims[r - 2], n = sy.dims[r - 1];
  Shape batch = subShape(sy, 0, r - 2);
  int64_t numBatch = batch.numel();
  int64_t yStrides[kMaxRank];
  stridesOf(batch, yStrides);
  // Element offsets of each batch's matrices.
  std::vector<int64_t> aOffset(numBatch), bOffset(numBatch);
  bool bShared = true;
  for (int64_t bi = 0; bi < numBatch; ++bi) {
    int64_t ai = va.offset, bj = vb.offset, rest = bi;
    for (int d = 0; d < batch.rank; ++d) {
      int64_t coord = rest / yStrides[d];
      rest -= coord * yStrides[d];
      ai += coord * va.batch[d];
      bj += coord * vb.batch[d];
    }
    aOffset[bi] = ai;
    bOffset[bi] = bj;
    bShared = bShared && bj == vb.offset;
  }
  if constexpr (!isFloating<T>) {
    matmulLoops<uint64_t>(numBatch, m, n, k, aOffset.data(), bOffset.data(), a,
                          va.row, va.col, b, vb.row, vb.col, y);
  } else {
    // Small products by loops, except 16-bit ones: the BLAS path below
    // widens each operand element once, the loops once per use.
    if (m * n * k < (int64_t(1) << 15) && std::is_same_v<T, compute_t<T>>) {
      matmulLoops<compute_t<T>>(numBatch, m, n, k, aOffset.data(),
                                bOffset.data(), a, va.row, va.col, b, vb.row,
                                vb.col, y);
      return;
    }
    using B = BlasType<T>;
    // BLAS reads a matrix with one unit stride; other operands (and 16-bit
    // ones, widened to float) are first copied into contiguous matrices.
    auto blasReadable = [](const MatrixView &v) {
      return v.col == 1 || v.row == 1;
    };
    std::vector<B> aBuf, bBuf, yBuf;
    // The stride of a dimension of size 1 is free: pick one BLAS accepts.
    auto normalize = [](MatrixView v, int64_t rows, int64_t cols) {
      if (rows == 1)
        v.row = v.col == 1 ? cols : 1;
      if (cols == 1)
        v.col = v.row == 1 ? rows : 1;
      return v;
    };
    MatrixView ca = normalize(va, m, k), cb = normalize(vb, k, n);
    if constexpr (std::is_same_v<T, bf16>)
      if (bf16MatmulByLibrary(numBatch, m, n, k, a, ca, aOffset, b, cb, bOffset,
                              y))
        return;
    bool aStacked = true;
    for (int64_t bi = 0; bi < numBatch; ++bi)
      aStacked = aStacked && aOffset[bi] == aOffset[0] + bi * m * ca.row;
    auto gather = [&](const T *x, const MatrixView &v, int64_t rows,
                      int64_t cols, const std::vector<int64_t> &offsets,
                      std::vector<B> &buffer, MatrixView &out,
                      std::vector<int64_t> &outOffsets) {
      buffer.resize(numBatch * rows * cols);
      parallelFor(numBatch * rows * cols, numBatch,
                  [&](int64_t chunkBegin, int64_t chunkEnd) {
                    for (int64_t bi = chunkBegin; bi < chunkEnd; ++bi) {
                      for (int64_t i = 0; i < rows; ++i) {
                        for (int64_t j = 0; j < cols; ++j) {
                          buffer[(bi * rows + i) * cols + j] =
                              static_cast<B>(static_cast<compute_t<T>>(
                                  x[offsets[bi] + i * v.row + j * v.col]));
                        }
                      }
                    }
                  });
      out.row = cols;
      out.col = 1;
      for (int64_t bi = 0; bi < numBatch; ++bi)
        outOffsets[bi] = bi * rows * cols;
    };
    const B *as, *bs;
    if constexpr (std::is_same_v<T, B>) {
      as = a;
      bs = b;
    }
    bool copyA = !std::is_same_v<T, B> || !blasReadable(ca);
    bool copyB = !std::is_same_v<T, B> || !blasReadable(cb);
    if (copyA) {
      gather(a, va, m, k, aOffset, aBuf, ca, aOffset);
      as = aBuf.data();
      aStacked = true;
    }
    if (copyB) {
      // A shared b is copied once.
      std::vector<int64_t> offsets = bOffset;
      int64_t saved = numBatch;
      if (bShared)
        numBatch = 1;
      gather(b, vb, k, n, offsets, bBuf, cb, bOffset);
      numBatch = saved;
      if (bShared)
        std::fill(bOffset.begin(), bOffset.end(), 0);
      bs = bBuf.data();
    }
    B *ys = computeBuffer<B>(y, sy.numel(), yBuf);
    bool transA = ca.col != 1, transB = cb.col != 1;
    int64_t lda = transA ? ca.col : ca.row, ldb = transB ? cb.col : cb.row;
    if (bShared && aStacked && !transA) {
      // One product of the stacked rows of every batch with the shared b.
      parallelGemm<B>(false, transB, numBatch * m, n, k, B(1), as + aOffset[0],
                      lda, bs + bOffset[0], ldb, B(0), ys, n);
    } else {
      // Whole products per thread when there are enough of them, else each
      // product split across the threads.
      parallelTasks(
          numBatch > 1 && numBatch >= availableThreads(), 0, numBatch,
          [] { return 0; },
          [&](int, int64_t bi) {
            parallelGemm<B>(transA, transB, m, n, k, B(1), as + aOffset[bi],
                            lda, bs + bOffset[bi], ldb, B(0), ys + bi * m * n,
                            n);
          });
    }
    narrow(ys, sy.numel(), y);
  }
}

/// dtg.matmul: y[..., m, n] = a[..., m, k] x b[..., k, n] with NumPy
/// broadcasting of the batch dimensions.
template <typename T>
void matmul(const Shape &sa, const Shape &sb, const Shape &sy, const T *a,
            const T *b, T *y) {
  matmulView(sy, sa.dims[sa.rank - 1], a, contiguousView(sa, sy), b,
             contiguousView(sb, sy), y);
}

/// dtg.gemm: y = alpha op(a) op(b) + beta c, with c (optional: nullptr)
/// broadcast to [M, N].
template <typename T>
void gemm(const Shape &sa, const Shape &sb, const Shape &sc, const T *a,
          const T *b, const T *c, double alpha, double beta, bool transA,
          bool transB, T *y) {
  using namespace nndetail;
  using B = BlasType<T>;
  int64_t m = sa.dims[transA ? 1 : 0], k = sa.dims[transA ? 0 : 1];
  int64_t n = sb.dims[transB ? 0 : 1];
  std::vector<B> yBuf;
  B *ys = computeBuffer<B>(y, m * n, yBuf);
  int64_t cStrides[kMaxRank] = {0, 0};
  if (c)
    broadcastStrides(sc, Shape{2, {m, n}}, cStrides);
  if (alpha == 0.0) {
    // BLAS would skip op(a) op(b); the interpreter's 0 * acc keeps NaNs.
    parallelFor(m * n * k, m, [&](int64_t chunkBegin, int64_t chunkEnd) {
      for (int64_t i = chunkBegin; i < chunkEnd; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          double acc = 0.0;
          for (int64_t p = 0; p < k; ++p)
            acc += toDouble(a[transA ? p * m + i : i * k + p]) *
                   toDouble(b[transB ? j * k + p : p * n + j]);
          double value = alpha * acc;
          if (c)
            value += beta * toDouble(c[i * cStrides[0] + j * cStrides[1]]);
          ys[i * n + j] = B(value);
        }
      }
    });
  } else {
    if (c) {
      parallelFor(m * n, m, [&](int64_t chunkBegin, int64_t chunkEnd) {
        for (int64_t i = chunkBegin; i < chunkEnd; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            ys[i * n + j] =
                B(beta * toDouble(c[i * cStrides[0] + j * cStrides[1]]));
          }
        }
      });
    }
    // bf16 through oneDNN (MatmulLibrary.h): the product in float, then
    // alpha times it plus beta c, as sgemm computes them.
    DnnlMatmul *library = nullptr;
    if constexpr (std::is_same_v<T, bf16>)
      library = bf16MatmulFor(1, m, n, k, {0, transA ? 1 : k, transA ? m : 1},
                              {0, transB ? 1 : n, transB ? k : 1}, dnnl_f32);
    std::vector<B> product;
    if (library) {
      product.resize(m * n);
      library = library->run(a, b, product.data()) ? library : nullptr;
    }
    if (library) {
      parallelFor(m * n, m * n, [&](int64_t chunkBegin, int64_t chunkEnd) {
        for (int64_t i = chunkBegin; i < chunkEnd; ++i) {
          ys[i] = B(alpha) * product[i] + (c ? ys[i] : B(0));
        }
      });
    } else {
      std::vector<B> aBuf, bBuf;
      const B *as = widen<B>(a, sa.numel(), aBuf);
      const B *bs = widen<B>(b, sb.numel(), bBuf);
      parallelGemm<B>(transA, transB, m, n, k, B(alpha), as, sa.dims[1], bs,
                      sb.dims[1], c ? B(1) : B(0), ys, n);
    }
  }
  narrow(ys, m * n, y);
}

/// dtg.einsum over `numLetters` letters, the `numOutput` output letters
/// first: `sizes[l]` is letter l's size and `strides[i][l]` how far one step
/// of letter l moves through input i (0 where i lacks the letter or
/// broadcasts it). Floats accumulate in double, integers in wrapping 64-bit
/// arithmetic.
template <typename T, int N>
void einsum(int64_t numLetters, int64_t numOutput, const int64_t *sizes,
            const T *const (&inputs)[N], const int64_t *const (&strides)[N],
            T *y) {
  using Acc = std::conditional_t<isFloating<T>, double, uint64_t>;
  int64_t outCount = 1, sumCount = 1;
  for (int64_t l = 0; l < numLetters; ++l)
    (l < numOutput ? outCount : sumCount) *= sizes[l];
  auto value = [](T v) -> Acc {
    if constexpr (isFloating<T>)
      return nndetail::toDouble(v);
    else
      return static_cast<uint64_t>(static_cast<int64_t>(v));
  };
  parallelFor(outCount * sumCount, outCount,
              [&](int64_t chunkBegin, int64_t chunkEnd) {
                for (int64_t r = chunkBegin; r < chunkEnd; ++r) {
                  int64_t offset[N] = {};
                  for (int64_t l = numOutput - 1, rest = r; l >= 0; --l) {
                    int64_t index = rest % sizes[l];
                    rest /= sizes[l];
                    for (int i = 0; i < N; ++i)
                      offset[i] += index * strides[i][l];
                  }
                  int64_t index[64] =
                      {}; // summed letters' indices (52 letters at most)
                  Acc acc = 0;
                  for (int64_t t = 0; t < sumCount; ++t) {
                    Acc term = 1;
                    for (int i = 0; i < N; ++i)
                      term *= value(inputs[i][offset[i]]);
                    acc += term;
                    for (int64_t l = numLetters - 1; l >= numOutput; --l) {
                      int64_t s = l - numOutput;
                      for (int i = 0; i < N; ++i)
                        offset[i] += strides[i][l];
                      if (++index[s] < sizes[l])
                        break;
                      for (int i = 0; i < N; ++i)
                        offset[i] -= sizes[l] * strides[i][l];
                      index[s] = 0;
                    }
                  }
                  if constexpr (isFloating<T>)
                    y[r] = store<T>(acc);
                  else
                    y[r] = store<T>(static_cast<int64_t>(acc));
                }
              });
}
} // namespace dtck

#endif // DTCRT_KERNELS_MATMUL_H
