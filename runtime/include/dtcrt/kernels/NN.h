//===- NN.h - contractions, convolution, pooling, norms, dropout ----------===//
//
// The CPU kernels of the dtg NN family. Each computes what the reference
// interpreter computes (dialects/DTG/Interp/KernelsNN.cpp) for the same op:
//
// - GEMM-shaped work (matmul, gemm, convolution through im2col and its two
//   gradients) goes to OpenBLAS and accumulates in float for f32, bf16 and
//   f16 (16-bit operands are widened to float first) and in double for f64,
//   as PyTorch's CPU kernels do; small matmuls and integer matmuls run plain
//   loops (integers in wrapping 64-bit arithmetic, like the interpreter).
//   OpenBLAS is switched to one thread on first use: the kernels split the
//   work across OpenMP's threads themselves (whole products per thread, or
//   row/column blocks of one product), so that two thread pools never
//   compete for the cores. 2-D float convolutions with one group go to
//   oneDNN's convolution primitives where it has a JIT kernel for them
//   (ConvLibrary.h), depthwise ones to direct kernels below.
// - Einsum, pooling, pooling gradients, normalizations, softmax and dropout
//   compute in double and round once, so they agree with the interpreter to
//   the last bit up to the order of additions.
//
// Shapes are static (the emitter checks them against the attributes);
// results never overlap operands (the memory planner keeps them apart).
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_KERNELS_NN_H
#define DTCRT_KERNELS_NN_H

#include "dtcrt/kernels/Common.h"
#include "dtcrt/kernels/ConvLibrary.h"
#include "dtcrt/kernels/Philox.h"

#include <cblas.h>
#include <dnnl.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

namespace dtck {
namespace nndetail {

/// Product of `s.dims[from, to)`.
inline int64_t numelOf(const Shape &s, int from, int to) {
  int64_t n = 1;
  for (int d = from; d < to; ++d)
    n *= s.dims[d];
  return n;
}

/// The shape of `s.dims[from, to)`.
inline Shape subShape(const Shape &s, int from, int to) {
  Shape sub{to - from, {}};
  for (int d = from; d < to; ++d)
    sub.dims[d - from] = s.dims[d];
  return sub;
}

/// `v` as a double (16-bit floats through float).
template <typename T> inline double toDouble(T v) {
  return static_cast<double>(static_cast<compute_t<T>>(v));
}

/// The type BLAS computes T in: double for double, float for other floats.
template <typename T>
using BlasType = std::conditional_t<std::is_same_v<T, double>, double, float>;

/// Threads an OpenMP loop may use here (1 inside an active parallel region
/// or without OpenMP).
inline int availableThreads() {
#ifdef _OPENMP
  return omp_in_parallel() ? 1 : omp_get_max_threads();
#else
  return 1;
#endif
}

/// The calling thread's number in the innermost parallel region.
inline int threadNumber() {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

/// Runs task(state, t) for t in [0, count): shared among a team of
/// `threads` threads (0: all available) when `parallel`, each thread with
/// its own `state = init()` and a static schedule; else on this thread
/// alone, in order. Not `#pragma omp parallel if`: the region the if makes
/// inactive still opens a team of one, and a parallel region inside it (a
/// product split across the threads, oneDNN's own) would create and destroy
/// its threads at each call instead of taking them from the pool.
template <typename Init, typename Task>
inline void parallelTasks(bool parallel, int threads, int64_t count,
                          const Init &init, const Task &task) {
  auto run = [&](bool shared) {
    auto state = init();
    if (shared) {
#pragma omp for schedule(static)
      for (int64_t t = 0; t < count; ++t)
        task(state, t);
    } else {
      for (int64_t t = 0; t < count; ++t)
        task(state, t);
    }
  };
  if (!parallel) {
    run(false);
    return;
  }
#pragma omp parallel num_threads(threads > 0 ? threads : availableThreads())
  run(true);
}

/// Row-major C = alpha op(A) op(B) + beta C through one call: oneDNN's
/// dnnl_sgemm for float (its JIT kernels follow the CPU it runs on, and
/// measured 1.05x OpenBLAS's AVX-512 kernels on a GPT's shapes, 2x its
/// AVX2 ones; test/bench/README.md), OpenBLAS's cblas_dgemm for double.
/// Both run single-threaded inside the OpenMP loops around their calls
/// (OpenBLAS's own threads off; oneDNN's nested OpenMP region is one
/// thread there). Like BLAS, beta == 0 never reads C.
template <typename B>
inline void blasGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                     B alpha, const B *a, int64_t lda, const B *b, int64_t ldb,
                     B beta, B *c, int64_t ldc) {
  static const bool singleThreaded = (openblas_set_num_threads(1), true);
  (void)singleThreaded;
  if (m == 0 || n == 0)
    return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        c[i * ldc + j] = beta == B(0) ? B(0) : beta * c[i * ldc + j];
    return;
  }
  if (std::max({m, n, k, lda, ldb, ldc}) > INT_MAX)
    fail("matrix product too large for BLAS (a dimension exceeds 2^31 - 1)");
  auto ta = transA ? CblasTrans : CblasNoTrans;
  auto tb = transB ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<B, double>)
    cblas_dgemm(CblasRowMajor, ta, tb, int(m), int(n), int(k), alpha, a,
                int(lda), b, int(ldb), beta, c, int(ldc));
  else if (dnnl_sgemm(transA ? 'T' : 'N', transB ? 'T' : 'N', m, n, k, alpha, a,
                      lda, b, ldb, beta, c, ldc) != dnnl_success)
    cblas_sgemm(CblasRowMajor, ta, tb, int(m), int(n), int(k), alpha, a,
                int(lda), b, int(ldb), beta, c, int(ldc));
}

/// Multiply-adds above which a product is split across threads.
constexpr int64_t kParallelGemmWork = int64_t(1) << 20;

/// blasGemm split across the available threads into row blocks of C (or
/// column blocks when C has fewer rows than threads); each element of C
/// stays one dot product over the whole of K.
template <typename B>
void parallelGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                  B alpha, const B *a, int64_t lda, const B *b, int64_t ldb,
                  B beta, B *c, int64_t ldc) {
  int64_t threads = availableThreads();
  if (threads == 1 || m * n * k < kParallelGemmWork) {
    blasGemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  bool byRows = m >= threads || m >= n;
  int64_t extent = byRows ? m : n, parts = std::min(threads, extent);
#pragma omp parallel for num_threads(int(parts))
  for (int64_t part = 0; part < parts; ++part) {
    int64_t lo = extent * part / parts, hi = extent * (part + 1) / parts;
    if (byRows)
      blasGemm(transA, transB, hi - lo, n, k, alpha,
               transA ? a + lo : a + lo * lda, lda, b, ldb, beta, c + lo * ldc,
               ldc);
    else
      blasGemm(transA, transB, m, hi - lo, k, alpha, a, lda,
               transB ? b + lo * ldb : b + lo, ldb, beta, c + lo, ldc);
  }
}

/// `data` as an array of B: itself when T is B, else widened into `buffer`.
template <typename B, typename T>
const B *widen(const T *data, int64_t n, std::vector<B> &buffer) {
  if constexpr (std::is_same_v<T, B>) {
    return data;
  } else {
    buffer.resize(n);
    DTCK_PARALLEL_FOR(n)
    for (int64_t i = 0; i < n; ++i)
      buffer[i] = static_cast<B>(static_cast<compute_t<T>>(data[i]));
    return buffer.data();
  }
}

/// Where a kernel computes a result of T in B: the result itself when T is
/// B, else `buffer` (then `narrow` stores it).
template <typename B, typename T>
B *computeBuffer(T *result, int64_t n, std::vector<B> &buffer) {
  if constexpr (std::is_same_v<T, B>) {
    return result;
  } else {
    buffer.assign(n, B(0));
    return buffer.data();
  }
}

/// Stores a result computed in `buffer` (by computeBuffer) into `result`.
template <typename B, typename T>
void narrow(const B *buffer, int64_t n, T *result) {
  if constexpr (!std::is_same_v<T, B>) {
    DTCK_PARALLEL_FOR(n)
    for (int64_t i = 0; i < n; ++i)
      result[i] = store<T>(buffer[i]);
  }
}

/// The geometry of a window op (conv, pooling, their gradients) over the
/// spatial dimensions of an [N, C, D1..Dk] input and its [N, F, O1..Ok]
/// output: for each kernel tap t and output position p, the row-major offset
/// `taps[t * outSize + p]` of the input element the tap reads inside one
/// plane, or -1 where it reads padding; and for each output position how
/// many taps lie inside the input and inside the padded input.
struct Window {
  int64_t inSize = 1, outSize = 1, kernelSize = 1;
  std::vector<int64_t> taps, inputCount, paddedCount;
  /// True if tap 0 at position p reads element p (a 1x1 convolution with
  /// unit strides and no padding): im2col is the input itself.
  bool identity = false;

  Window(const Shape &input, const Shape &output, const int64_t *kernel,
         const int64_t *strides, const int64_t *pads,
         const int64_t *dilations) {
    int k = input.rank - 2;
    for (int d = 0; d < k; ++d) {
      inSize *= input.dims[2 + d];
      outSize *= output.dims[2 + d];
      kernelSize *= kernel[d];
    }
    int64_t inStride[kMaxRank];
    stridesOf(subShape(input, 2, input.rank), inStride);
    taps.resize(kernelSize * outSize);
    if (k == 2)
      planarTaps(input, output, kernel, strides, pads, dilations);
    else
      generalTaps(input, output, kernel, strides, pads, dilations, inStride);
    // Tap counts factor over the dimensions: count per dimension and
    // position, then multiply.
    std::vector<int64_t> inDim, padDim; // [d][position along d]
    std::vector<int64_t> base(k + 1, 0);
    for (int d = 0; d < k; ++d)
      base[d + 1] = base[d] + output.dims[2 + d];
    inDim.resize(base[k]);
    padDim.resize(base[k]);
    for (int d = 0; d < k; ++d) {
      int64_t size = input.dims[2 + d], padEnd = pads[k + d];
      for (int64_t o = 0; o < output.dims[2 + d]; ++o) {
        int64_t inside = 0, padded = 0;
        for (int64_t j = 0; j < kernel[d]; ++j) {
          int64_t i = o * strides[d] - pads[d] + j * dilations[d];
          inside += (i >= 0 && i < size);
          padded += (i < size + padEnd);
        }
        inDim[base[d] + o] = inside;
        padDim[base[d] + o] = padded;
      }
    }
    inputCount.assign(outSize, 1);
    paddedCount.assign(outSize, 1);
    int64_t pos[kMaxRank] = {};
    for (int64_t p = 0; p < outSize; ++p) {
      for (int d = 0; d < k; ++d) {
        inputCount[p] *= inDim[base[d] + pos[d]];
        paddedCount[p] *= padDim[base[d] + pos[d]];
      }
      for (int d = k - 1; d >= 0; --d) {
        if (++pos[d] < output.dims[2 + d])
          break;
        pos[d] = 0;
      }
    }
    identity = kernelSize == 1 && outSize == inSize;
    for (int64_t p = 0; identity && p < outSize; ++p)
      identity = taps[p] == p;
  }

  /// The tap table of any number of spatial dimensions.
  void generalTaps(const Shape &input, const Shape &output,
                   const int64_t *kernel, const int64_t *strides,
                   const int64_t *pads, const int64_t *dilations,
                   const int64_t *inStride) {
    int k = input.rank - 2;
    DTCK_PARALLEL_FOR(kernelSize * outSize)
    for (int64_t t = 0; t < kernelSize; ++t) {
      int64_t tap[kMaxRank], pos[kMaxRank] = {};
      int64_t r = t;
      for (int d = k - 1; d >= 0; --d) {
        tap[d] = r % kernel[d];
        r /= kernel[d];
      }
      for (int64_t p = 0; p < outSize; ++p) {
        int64_t offset = 0;
        for (int d = 0; d < k && offset >= 0; ++d) {
          int64_t i = pos[d] * strides[d] - pads[d] + tap[d] * dilations[d];
          offset =
              (i < 0 || i >= input.dims[2 + d]) ? -1 : offset + i * inStride[d];
        }
        taps[t * outSize + p] = offset;
        for (int d = k - 1; d >= 0; --d) { // next output position
          if (++pos[d] < output.dims[2 + d])
            break;
          pos[d] = 0;
        }
      }
    }
  }

  /// The tap table of two spatial dimensions: a tap's offset at (oh, ow)
  /// is its row's offset plus its column's, each computed once per kernel
  /// row and output row (column), -1 if either reads padding.
  void planarTaps(const Shape &input, const Shape &output,
                  const int64_t *kernel, const int64_t *strides,
                  const int64_t *pads, const int64_t *dilations) {
    int64_t inH = input.dims[2], inW = input.dims[3];
    int64_t outH = output.dims[2], outW = output.dims[3];
    std::vector<int64_t> rowOffset(kernel[0] * outH), column(kernel[1] * outW);
    for (int64_t kh = 0; kh < kernel[0]; ++kh)
      for (int64_t oh = 0; oh < outH; ++oh) {
        int64_t i = oh * strides[0] - pads[0] + kh * dilations[0];
        rowOffset[kh * outH + oh] = i < 0 || i >= inH ? -1 : i * inW;
      }
    for (int64_t kw = 0; kw < kernel[1]; ++kw)
      for (int64_t ow = 0; ow < outW; ++ow) {
        int64_t j = ow * strides[1] - pads[1] + kw * dilations[1];
        column[kw * outW + ow] = j < 0 || j >= inW ? -1 : j;
      }
    for (int64_t t = 0; t < kernelSize; ++t) {
      int64_t kh = t / kernel[1], kw = t % kernel[1];
      const int64_t *cols = column.data() + kw * outW;
      for (int64_t oh = 0; oh < outH; ++oh) {
        int64_t row = rowOffset[kh * outH + oh];
        int64_t *dst = taps.data() + t * outSize + oh * outW;
        for (int64_t ow = 0; ow < outW; ++ow)
          dst[ow] = row < 0 || cols[ow] < 0 ? -1 : row + cols[ow];
      }
    }
  }
};

/// The im2col columns of `channels` channels (none when the window reads the
/// input as it is).
template <typename B>
std::vector<B> im2colBuffer(const Window &w, int64_t channels) {
  return std::vector<B>(w.identity ? 0 : channels * w.kernelSize * w.outSize);
}

/// im2col of one group of one image: `col[(c * K + t) * O + p]` is channel
/// c's element that tap t reads at output position p (0 in padding).
template <typename B>
void im2col(const Window &w, const B *x, int64_t channels, B *col) {
  int64_t rows = channels * w.kernelSize, o = w.outSize;
  DTCK_PARALLEL_FOR(rows * o)
  for (int64_t r = 0; r < rows; ++r) {
    const B *plane = x + (r / w.kernelSize) * w.inSize;
    const int64_t *taps = w.taps.data() + (r % w.kernelSize) * o;
    B *out = col + r * o;
    for (int64_t p = 0; p < o; ++p)
      out[p] = taps[p] >= 0 ? plane[taps[p]] : B(0);
  }
}

/// The adjoint of im2col: adds each column entry to the input element it
/// was read from.
template <typename B>
void col2imAdd(const Window &w, const B *col, int64_t channels, B *x) {
  int64_t o = w.outSize;
  DTCK_PARALLEL_FOR(channels * w.kernelSize * o)
  for (int64_t c = 0; c < channels; ++c) {
    B *plane = x + c * w.inSize;
    for (int64_t t = 0; t < w.kernelSize; ++t) {
      const int64_t *taps = w.taps.data() + t * o;
      const B *row = col + (c * w.kernelSize + t) * o;
      for (int64_t p = 0; p < o; ++p)
        if (taps[p] >= 0)
          plane[taps[p]] += row[p];
    }
  }
}

/// One row of y = a x b with N (a compile-time constant) columns, the sums
/// held in registers: y[j] = sum over p of a[p * aCol] * b[p * bRow + j *
/// bCol], p in order.
template <int N, typename A, typename T, typename Widen, typename Store>
inline void matmulRowOf(int64_t k, const T *a, int64_t aCol, const T *b,
                        int64_t bRow, int64_t bCol, T *y, Widen widen,
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
template <int N, typename A, typename T, typename Widen, typename Store>
inline void matmulRowsOf(int64_t k, const T *a, int64_t aRow, int64_t aCol,
                         const T *b, int64_t bRow, int64_t bCol, T *y,
                         Widen widen, Store store) {
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
  auto fixedRows = [&](auto columns) {
    constexpr int N = decltype(columns)::value;
    if (m % kRowsAtOnce == 0) {
      int64_t groups = rows / kRowsAtOnce;
#pragma omp parallel for if (rows * n * k >= kParallelThreshold)
      for (int64_t group = 0; group < groups; ++group) {
        int64_t row = group * kRowsAtOnce, bi = row / m, i = row % m;
        matmulRowsOf<N, A>(k, a + aOffset[bi] + i * aRow, aRow, aCol,
                           b + bOffset[bi], bRow, bCol, y + row * n, widenValue,
                           storeValue);
      }
      return;
    }
#pragma omp parallel for if (rows * n * k >= kParallelThreshold)
    for (int64_t row = 0; row < rows; ++row) {
      int64_t bi = row / m, i = row % m;
      matmulRowOf<N, A>(k, a + aOffset[bi] + i * aRow, aCol, b + bOffset[bi],
                        bRow, bCol, y + row * n, widenValue, storeValue);
    }
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
#pragma omp parallel if (rows * n * k >= kParallelThreshold)
  {
    std::vector<A> acc(n);
#pragma omp for
    for (int64_t row = 0; row < rows; ++row) {
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
    }
  }
}

/// Softmax (or its logarithm) of the rows `x[o, :, j]` for j in
/// [j0, j0 + count), in double as the interpreter computes it.
template <typename T>
void softmaxTile(const T *x, T *y, int64_t size, int64_t inner, int64_t count,
                 bool log) {
  constexpr int64_t kTile = 64;
  double max[kTile], sum[kTile];
  std::fill(max, max + count, -std::numeric_limits<double>::infinity());
  std::fill(sum, sum + count, 0.0);
  for (int64_t a = 0; a < size; ++a)
    for (int64_t j = 0; j < count; ++j)
      max[j] = std::max(max[j], toDouble(x[a * inner + j]));
  for (int64_t a = 0; a < size; ++a)
    for (int64_t j = 0; j < count; ++j)
      sum[j] += std::exp(toDouble(x[a * inner + j]) - max[j]);
  if (log)
    for (int64_t j = 0; j < count; ++j)
      sum[j] = std::log(sum[j]);
  for (int64_t a = 0; a < size; ++a) {
    for (int64_t j = 0; j < count; ++j) {
      double shifted = toDouble(x[a * inner + j]) - max[j];
      y[a * inner + j] =
          store<T>(log ? shifted - sum[j] : std::exp(shifted) / sum[j]);
    }
  }
}

/// exp(x) in float for x <= 0 (0 below -87.3, where exp leaves the normal
/// floats; NaN stays NaN): 2^n exp(r) with n = round(x / ln 2) and a
/// degree-6 Taylor polynomial on |r| <= ln(2) / 2 (relative error below
/// 2e-7). Branch-free, so that loops over it vectorize.
inline float expNonPositive(float x) {
  float n = std::floor(x * 1.44269504088896341f + 0.5f);
  // min(max(n, -126), 0) with NaN -> -126, as selects: std::fmin and
  // std::fmax are calls into libm unless NaNs are ruled out, which keeps
  // the loops around this function scalar.
  float low = n > -126.0f ? n : -126.0f;
  float c = low < 0.0f ? low : 0.0f;
  float r = x - c * 0.693145751953125f - c * 1.428606765330187e-06f;
  float p =
      1.0f +
      r * (1.0f + r * (0.5f + r * (1.0f / 6 +
                                   r * (1.0f / 24 +
                                        r * (1.0f / 120 + r * (1.0f / 720))))));
  int32_t bits = (static_cast<int32_t>(c) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return x < -87.3f ? 0.0f : p * scale;
}

/// Softmax (or its logarithm) of one contiguous row of a 16- or 32-bit float
/// tensor: the maximum, one exp per element kept in `e` while summing (in
/// double), then one scale. Float arithmetic: within a few float ulps of
/// the interpreter's double result.
template <typename T>
void softmaxRow(const T *x, T *y, int64_t size, bool log, float *e) {
  // The maximum over 16 lanes, then over the lanes: a loop that vectorizes
  // (the same maximum: NaNs are skipped either way, and a zero of either
  // sign subtracts alike).
  constexpr int kLanes = 16;
  float lanes[kLanes];
  for (float &lane : lanes)
    lane = -std::numeric_limits<float>::infinity();
  int64_t a = 0;
  for (; a + kLanes <= size; a += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      float v = static_cast<float>(toDouble(x[a + l]));
      lanes[l] = lanes[l] < v ? v : lanes[l];
    }
  float max = -std::numeric_limits<float>::infinity();
  for (; a < size; ++a)
    max = std::max(max, static_cast<float>(toDouble(x[a])));
  for (float lane : lanes)
    max = std::max(max, lane);
  if (max == -std::numeric_limits<float>::infinity())
    max = 0; // every element -inf: NaN below, as exp(-inf - -inf)
  double sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t a = 0; a < size; ++a) {
    float v = static_cast<float>(toDouble(x[a])) - max;
    e[a] = expNonPositive(v);
    sum += e[a];
  }
  if (log) {
    // (x - max) - log(sum): folding max + log(sum) first would lose a small
    // log(sum) against a large max.
    float logSum = static_cast<float>(std::log(sum));
    for (int64_t a = 0; a < size; ++a)
      y[a] = store<T>((static_cast<float>(toDouble(x[a])) - max) - logSum);
    return;
  }
  float scale = static_cast<float>(1.0 / sum);
#pragma omp simd
  for (int64_t a = 0; a < size; ++a)
    y[a] = store<T>(e[a] * scale);
}

/// Softmax (or its logarithm) of kRowLanes contiguous rows of `size`
/// elements at once, one row per vector lane: the rows transposed into `t`
/// (size x kRowLanes floats), softmaxRow's arithmetic on each (its maximum,
/// its exps, their sum in double in element order, one scale), transposed
/// back. For short rows (attention's over a short sequence), where
/// softmaxRow's loops, reductions across lanes and remainders per row cost
/// more than the arithmetic.
constexpr int kRowLanes = 16;
/// The longest rows softmaxRowsAcross takes.
constexpr int64_t kAcrossRowsMax = 32;
template <typename T>
void softmaxRowsAcross(const T *x, T *y, int64_t size, bool log, float *t) {
  for (int l = 0; l < kRowLanes; ++l)
    for (int64_t a = 0; a < size; ++a)
      t[a * kRowLanes + l] = static_cast<float>(toDouble(x[l * size + a]));
  float max[kRowLanes];
  for (float &m : max)
    m = -std::numeric_limits<float>::infinity();
  // NaNs are skipped here as in softmaxRow (and poison the sum below).
  for (int64_t a = 0; a < size; ++a)
    for (int l = 0; l < kRowLanes; ++l) {
      float v = t[a * kRowLanes + l];
      max[l] = max[l] < v ? v : max[l];
    }
  for (float &m : max)
    if (m == -std::numeric_limits<float>::infinity())
      m = 0; // every element -inf: NaN below, as exp(-inf - -inf)
  double sum[kRowLanes] = {};
  float *e = t + size * kRowLanes;
  for (int64_t a = 0; a < size; ++a)
    for (int l = 0; l < kRowLanes; ++l) {
      float v = expNonPositive(t[a * kRowLanes + l] - max[l]);
      e[a * kRowLanes + l] = v;
      sum[l] += v;
    }
  if (log) {
    float logSum[kRowLanes];
    for (int l = 0; l < kRowLanes; ++l)
      logSum[l] = static_cast<float>(std::log(sum[l]));
    for (int l = 0; l < kRowLanes; ++l)
      for (int64_t a = 0; a < size; ++a)
        y[l * size + a] = store<T>((t[a * kRowLanes + l] - max[l]) - logSum[l]);
    return;
  }
  float scale[kRowLanes];
  for (int l = 0; l < kRowLanes; ++l)
    scale[l] = static_cast<float>(1.0 / sum[l]);
  for (int l = 0; l < kRowLanes; ++l)
    for (int64_t a = 0; a < size; ++a)
      y[l * size + a] = store<T>(e[a * kRowLanes + l] * scale[l]);
}

/// Softmax or log-softmax along `axis`.
template <typename T>
void softmaxImpl(const Shape &sx, const T *x, int64_t axis, bool log, T *y) {
  constexpr int64_t kTile = 64;
  int64_t outer = numelOf(sx, 0, int(axis)), size = sx.dims[axis];
  int64_t inner = numelOf(sx, int(axis) + 1, sx.rank);
  if constexpr (!std::is_same_v<T, double>) {
    if (inner == 1) {
      // Rows along the last axis: contiguous, in float; short ones
      // kRowLanes at a time across the lanes, the rest one by one.
      int64_t across = size <= kAcrossRowsMax ? outer / kRowLanes : 0;
      DTCK_PARALLEL_FOR(across * kRowLanes * size)
      for (int64_t b = 0; b < across; ++b) {
        thread_local std::vector<float> scratch;
        if (static_cast<int64_t>(scratch.size()) < 2 * kRowLanes * size)
          scratch.resize(2 * kRowLanes * size);
        int64_t first = b * kRowLanes * size;
        softmaxRowsAcross(x + first, y + first, size, log, scratch.data());
      }
      DTCK_PARALLEL_FOR((outer - across * kRowLanes) * size)
      for (int64_t o = across * kRowLanes; o < outer; ++o) {
        thread_local std::vector<float> scratch;
        if (static_cast<int64_t>(scratch.size()) < size)
          scratch.resize(size);
        softmaxRow(x + o * size, y + o * size, size, log, scratch.data());
      }
      return;
    }
  }
  int64_t tiles = (inner + kTile - 1) / kTile;
  DTCK_PARALLEL_FOR(sx.numel())
  for (int64_t task = 0; task < outer * tiles; ++task) {
    int64_t o = task / tiles, j0 = (task % tiles) * kTile;
    int64_t base = o * size * inner + j0;
    softmaxTile(x + base, y + base, size, inner, std::min(kTile, inner - j0),
                log);
  }
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

/// y[..., m, n] = a[..., m, k] x b[..., k, n] with the operands read through
/// views (a transposed or sliced operand needs no copy). y is contiguous.
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
    bool aStacked = true;
    for (int64_t bi = 0; bi < numBatch; ++bi)
      aStacked = aStacked && aOffset[bi] == aOffset[0] + bi * m * ca.row;
    auto gather = [&](const T *x, const MatrixView &v, int64_t rows,
                      int64_t cols, const std::vector<int64_t> &offsets,
                      std::vector<B> &buffer, MatrixView &out,
                      std::vector<int64_t> &outOffsets) {
      buffer.resize(numBatch * rows * cols);
      DTCK_PARALLEL_FOR(numBatch * rows * cols)
      for (int64_t bi = 0; bi < numBatch; ++bi)
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j)
            buffer[(bi * rows + i) * cols + j] =
                static_cast<B>(static_cast<compute_t<T>>(
                    x[offsets[bi] + i * v.row + j * v.col]));
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
    DTCK_PARALLEL_FOR(m * n * k)
    for (int64_t i = 0; i < m; ++i) {
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
  } else {
    if (c) {
      DTCK_PARALLEL_FOR(m * n)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
          ys[i * n + j] =
              B(beta * toDouble(c[i * cStrides[0] + j * cStrides[1]]));
    }
    std::vector<B> aBuf, bBuf;
    const B *as = widen<B>(a, sa.numel(), aBuf);
    const B *bs = widen<B>(b, sb.numel(), bBuf);
    parallelGemm<B>(transA, transB, m, n, k, B(alpha), as, sa.dims[1], bs,
                    sb.dims[1], c ? B(1) : B(0), ys, n);
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
  DTCK_PARALLEL_FOR(outCount * sumCount)
  for (int64_t r = 0; r < outCount; ++r) {
    int64_t offset[N] = {};
    for (int64_t l = numOutput - 1, rest = r; l >= 0; --l) {
      int64_t index = rest % sizes[l];
      rest /= sizes[l];
      for (int i = 0; i < N; ++i)
        offset[i] += index * strides[i][l];
    }
    int64_t index[64] = {}; // summed letters' indices (52 letters at most)
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
}

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

namespace nndetail {

/// The geometry of a convolution over two spatial dimensions, for the
/// direct depthwise kernels below.
struct Planar {
  int64_t inH, inW, outH, outW, kernelH, kernelW, strideH, strideW, padH, padW,
      dilationH, dilationW;

  Planar(const Shape &in, const Shape &out, const int64_t *kernel,
         const int64_t *strides, const int64_t *pads, const int64_t *dilations)
      : inH(in.dims[2]), inW(in.dims[3]), outH(out.dims[2]), outW(out.dims[3]),
        kernelH(kernel[0]), kernelW(kernel[1]), strideH(strides[0]),
        strideW(strides[1]), padH(pads[0]), padW(pads[1]),
        dilationH(dilations[0]), dilationW(dilations[1]) {}

  /// The input row kernel row `kh` reads at output row `oh` (maybe outside
  /// [0, inH)).
  int64_t inputRow(int64_t oh, int64_t kh) const {
    return oh * strideH - padH + kh * dilationH;
  }

  /// Unit strides: the convolution then reads a padded plane of
  /// paddedH() x paddedW() elements, and tap (kh, kw) of output (oh, ow) is
  /// element (oh + kh * dilationH, ow + kw * dilationW) of it.
  bool unitStrides() const { return strideH == 1 && strideW == 1; }
  int64_t paddedH() const { return outH + dilationH * (kernelH - 1); }
  int64_t paddedW() const { return outW + dilationW * (kernelW - 1); }
  /// Outputs laid out with the padded plane's row length: output (oh, ow)
  /// at oh * paddedW() + ow, and every tap reads the padded plane at that
  /// position plus its offset, so that a tap covers the plane in one run
  /// of this length (the columns past outW are computed and dropped).
  int64_t paddedRun() const { return (outH - 1) * paddedW() + outW; }
  int64_t tapOffset(int64_t t) const {
    return (t / kernelW) * dilationH * paddedW() + (t % kernelW) * dilationW;
  }
  /// Copies input plane `x` into the padded plane `xp` (zeros around).
  template <typename B> void pad(const B *x, B *xp) const {
    int64_t pw = paddedW();
    for (int64_t r = 0; r < paddedH(); ++r) {
      int64_t ih = r - padH;
      B *row = xp + r * pw;
      if (ih < 0 || ih >= inH) {
        std::fill(row, row + pw, B(0));
        continue;
      }
      for (int64_t c = 0; c < pw; ++c) {
        int64_t iw = c - padW;
        row[c] = iw >= 0 && iw < inW ? x[ih * inW + iw] : B(0);
      }
    }
  }

  /// Copies output plane `y` (outH x outW) into `ypad`, laid out with the
  /// padded plane's rows (outH x paddedW(), zeros past outW).
  template <typename B> void spreadRows(const B *y, B *ypad) const {
    int64_t pw = paddedW();
    for (int64_t oh = 0; oh < outH; ++oh) {
      std::copy(y + oh * outW, y + (oh + 1) * outW, ypad + oh * pw);
      std::fill(ypad + oh * pw + outW, ypad + (oh + 1) * pw, B(0));
    }
  }

  /// The output columns [begin, end) at which kernel column `kw` reads
  /// inside an input row, and the input column output column 0 reads
  /// (`first`, maybe negative): output column ow reads ow * strideW + first.
  void columns(int64_t kw, int64_t &begin, int64_t &end, int64_t &first) const {
    first = kw * dilationW - padW;
    begin = first >= 0 ? 0 : (-first + strideW - 1) / strideW;
    end = first >= inW ? 0 : (inW - first + strideW - 1) / strideW;
    end = std::min(end, outW);
    begin = std::min(begin, end);
  }
};

/// True for a depthwise convolution over two spatial dimensions (one input
/// channel and one filter per group), which the direct kernels below take
/// instead of im2col and a product per channel.
inline bool isDepthwise2d(const Shape &sx, const Shape &sw, int64_t group) {
  return sx.rank == 4 && group > 1 && group == sx.dims[1] &&
         group == sw.dims[0] && sw.dims[1] == 1;
}

/// Depthwise forward: each output plane is the sum over the taps, in tap
/// order, of the tap's weight times the input plane it reads (padding
/// adds nothing), one output row at a time.
template <typename B>
void depthwiseConv(const Planar &g, int64_t planes, int64_t channels,
                   const B *x, const B *w, B *y) {
  int64_t taps = g.kernelH * g.kernelW;
  int64_t inSize = g.inH * g.inW, outSize = g.outH * g.outW;
  if (g.unitStrides()) {
    // Over the padded plane, one run per tap (padding taps add w * 0).
    int64_t pw = g.paddedW(), run = g.paddedRun();
    DTCK_PARALLEL_FOR(planes * outSize * taps)
    for (int64_t plane = 0; plane < planes; ++plane) {
      thread_local std::vector<B> scratch;
      scratch.resize(g.paddedH() * pw + g.outH * pw);
      B *xpad = scratch.data(), *ypad = xpad + g.paddedH() * pw;
      g.pad(x + plane * inSize, xpad);
      const B *wp = w + (plane % channels) * taps;
      std::fill(ypad, ypad + run, B(0));
      for (int64_t t = 0; t < taps; ++t) {
        const B *src = xpad + g.tapOffset(t);
        B weight = wp[t];
        for (int64_t p = 0; p < run; ++p)
          ypad[p] += weight * src[p];
      }
      B *yp = y + plane * outSize;
      for (int64_t oh = 0; oh < g.outH; ++oh)
        std::copy(ypad + oh * pw, ypad + oh * pw + g.outW, yp + oh * g.outW);
    }
    return;
  }
  DTCK_PARALLEL_FOR(planes * outSize * taps)
  for (int64_t plane = 0; plane < planes; ++plane) {
    const B *xp = x + plane * inSize;
    const B *wp = w + (plane % channels) * taps;
    B *yp = y + plane * outSize;
    std::fill(yp, yp + outSize, B(0));
    for (int64_t oh = 0; oh < g.outH; ++oh) {
      B *row = yp + oh * g.outW;
      for (int64_t kh = 0; kh < g.kernelH; ++kh) {
        int64_t ih = g.inputRow(oh, kh);
        if (ih < 0 || ih >= g.inH)
          continue;
        for (int64_t kw = 0; kw < g.kernelW; ++kw) {
          int64_t begin, end, first;
          g.columns(kw, begin, end, first);
          const B *src = xp + ih * g.inW + first;
          B weight = wp[kh * g.kernelW + kw];
          if (g.strideW == 1)
            for (int64_t ow = begin; ow < end; ++ow)
              row[ow] += weight * src[ow];
          else
            for (int64_t ow = begin; ow < end; ++ow)
              row[ow] += weight * src[ow * g.strideW];
        }
      }
    }
  }
}

/// Depthwise input gradient: each tap's weight times the output gradient,
/// added to the input elements the tap read, taps in order (im2col's
/// adjoint in its order).
template <typename B>
void depthwiseConvInputGrad(const Planar &g, int64_t planes, int64_t channels,
                            const B *grad, const B *w, B *dx) {
  int64_t taps = g.kernelH * g.kernelW;
  int64_t inSize = g.inH * g.inW, outSize = g.outH * g.outW;
  if (g.unitStrides()) {
    // The gradient laid out with the padded plane's rows (zeros past
    // outW), each tap adding its products to the padded plane in one run;
    // then the input's part of it.
    int64_t pw = g.paddedW(), ph = g.paddedH(), run = g.paddedRun();
    DTCK_PARALLEL_FOR(planes * outSize * taps)
    for (int64_t plane = 0; plane < planes; ++plane) {
      thread_local std::vector<B> scratch;
      scratch.resize(ph * pw + g.outH * pw);
      B *dxpad = scratch.data(), *gpad = dxpad + ph * pw;
      const B *gp = grad + plane * outSize;
      g.spreadRows(gp, gpad);
      std::fill(dxpad, dxpad + ph * pw, B(0));
      const B *wp = w + (plane % channels) * taps;
      for (int64_t t = 0; t < taps; ++t) {
        B *dst = dxpad + g.tapOffset(t);
        B weight = wp[t];
        for (int64_t p = 0; p < run; ++p)
          dst[p] += weight * gpad[p];
      }
      B *xp = dx + plane * inSize;
      for (int64_t ih = 0; ih < g.inH; ++ih)
        for (int64_t iw = 0; iw < g.inW; ++iw) {
          int64_t r = ih + g.padH, c = iw + g.padW;
          xp[ih * g.inW + iw] = r < ph && c < pw ? dxpad[r * pw + c] : B(0);
        }
    }
    return;
  }
  DTCK_PARALLEL_FOR(planes * outSize * taps)
  for (int64_t plane = 0; plane < planes; ++plane) {
    const B *gp = grad + plane * outSize;
    const B *wp = w + (plane % channels) * taps;
    B *xp = dx + plane * inSize;
    std::fill(xp, xp + inSize, B(0));
    for (int64_t kh = 0; kh < g.kernelH; ++kh)
      for (int64_t kw = 0; kw < g.kernelW; ++kw) {
        int64_t begin, end, first;
        g.columns(kw, begin, end, first);
        B weight = wp[kh * g.kernelW + kw];
        for (int64_t oh = 0; oh < g.outH; ++oh) {
          int64_t ih = g.inputRow(oh, kh);
          if (ih < 0 || ih >= g.inH)
            continue;
          B *dst = xp + ih * g.inW + first;
          const B *src = gp + oh * g.outW;
          if (g.strideW == 1)
            for (int64_t ow = begin; ow < end; ++ow)
              dst[ow] += weight * src[ow];
          else
            for (int64_t ow = begin; ow < end; ++ow)
              dst[ow * g.strideW] += weight * src[ow];
        }
      }
  }
}

/// Depthwise weight gradient: for each channel and tap, the sum over the
/// images (in order) of the output gradient's products with the input
/// elements the tap read, each row's products summed in float lanes and
/// the rows in double.
template <typename B>
void depthwiseConvWeightGrad(const Planar &g, int64_t batch, int64_t channels,
                             const B *grad, const B *x, B *dw) {
  int64_t taps = g.kernelH * g.kernelW;
  int64_t inSize = g.inH * g.inW, outSize = g.outH * g.outW;
  if (g.unitStrides()) {
    // Per channel: each image's padded plane and its gradient laid out with
    // the padded rows (zeros past outW), one run per tap.
    int64_t pw = g.paddedW(), ph = g.paddedH(), run = g.paddedRun();
    DTCK_PARALLEL_FOR(batch * channels * outSize * taps)
    for (int64_t c = 0; c < channels; ++c) {
      thread_local std::vector<B> scratch;
      scratch.resize(ph * pw + g.outH * pw);
      B *xpad = scratch.data(), *gpad = xpad + ph * pw;
      thread_local std::vector<double> sums;
      sums.assign(taps, 0.0);
      for (int64_t n = 0; n < batch; ++n) {
        g.pad(x + (n * channels + c) * inSize, xpad);
        const B *gp = grad + (n * channels + c) * outSize;
        g.spreadRows(gp, gpad);
        for (int64_t t = 0; t < taps; ++t) {
          const B *src = xpad + g.tapOffset(t);
          B acc = 0;
#pragma omp simd reduction(+ : acc)
          for (int64_t p = 0; p < run; ++p)
            acc += gpad[p] * src[p];
          sums[t] += static_cast<double>(acc);
        }
      }
      for (int64_t t = 0; t < taps; ++t)
        dw[c * taps + t] = static_cast<B>(sums[t]);
    }
    return;
  }
  DTCK_PARALLEL_FOR(batch * channels * outSize * taps)
  for (int64_t ct = 0; ct < channels * taps; ++ct) {
    int64_t c = ct / taps, t = ct % taps;
    int64_t kh = t / g.kernelW, kw = t % g.kernelW;
    int64_t begin, end, first;
    g.columns(kw, begin, end, first);
    double sum = 0;
    for (int64_t n = 0; n < batch; ++n) {
      const B *gp = grad + (n * channels + c) * outSize;
      const B *xp = x + (n * channels + c) * inSize;
      for (int64_t oh = 0; oh < g.outH; ++oh) {
        int64_t ih = g.inputRow(oh, kh);
        if (ih < 0 || ih >= g.inH)
          continue;
        const B *src = xp + ih * g.inW + first;
        const B *row = gp + oh * g.outW;
        B acc = 0;
        if (g.strideW == 1) {
#pragma omp simd reduction(+ : acc)
          for (int64_t ow = begin; ow < end; ++ow)
            acc += row[ow] * src[ow];
        } else {
#pragma omp simd reduction(+ : acc)
          for (int64_t ow = begin; ow < end; ++ow)
            acc += row[ow] * src[ow * g.strideW];
        }
        sum += static_cast<double>(acc);
      }
    }
    dw[ct] = static_cast<B>(sum);
  }
}

} // namespace nndetail

/// dtg.conv: x [N, C, D...] with w [F, C/group, K...] and optional bias [F]
/// (nullptr if none) into y [N, F, O...], by im2col and one GEMM per image
/// and group.
template <typename T>
void conv(const Shape &sx, const Shape &sw, const Shape &sy, const T *x,
          const T *w, const T *bias, const int64_t *strides,
          const int64_t *pads, const int64_t *dilations, int64_t group, T *y) {
  using namespace nndetail;
  using B = BlasType<T>;
  std::vector<B> xBuf, wBuf, yBuf;
  const B *xs = widen<B>(x, sx.numel(), xBuf);
  const B *ws = widen<B>(w, sw.numel(), wBuf);
  B *ys = computeBuffer<B>(y, sy.numel(), yBuf);
  int64_t batch = sx.dims[0], channels = sx.dims[1], filters = sw.dims[0];
  if (isDepthwise2d(sx, sw, group)) {
    depthwiseConv(Planar(sx, sy, sw.dims + 2, strides, pads, dilations),
                  batch * channels, channels, xs, ws, ys);
    if (bias) {
      int64_t o = sy.numel() / (batch * filters);
      DTCK_PARALLEL_FOR(sy.numel())
      for (int64_t nf = 0; nf < batch * filters; ++nf) {
        B value = static_cast<B>(static_cast<compute_t<T>>(bias[nf % filters]));
        for (int64_t p = 0; p < o; ++p)
          ys[nf * o + p] += value;
      }
    }
    narrow(ys, sy.numel(), y);
    return;
  }
  int64_t o = sy.numel() / (batch * filters);
  auto addBias = [&] {
    if (!bias)
      return;
    DTCK_PARALLEL_FOR(sy.numel())
    for (int64_t nf = 0; nf < batch * filters; ++nf) {
      B value = static_cast<B>(static_cast<compute_t<T>>(bias[nf % filters]));
      for (int64_t p = 0; p < o; ++p)
        ys[nf * o + p] += value;
    }
  };
  if constexpr (std::is_same_v<B, float>) {
    DnnlConv *library = convLibraryFor(ConvPass::Forward, sx, sw, sy, strides,
                                       pads, dilations, group);
    if (library && library->run(xs, ws, ys)) {
      addBias();
      narrow(ys, sy.numel(), y);
      return;
    }
  }
  Window win(sx, sy, sw.dims + 2, strides, pads, dilations);
  int64_t cg = channels / group, fg = filters / group;
  int64_t rows = cg * win.kernelSize;
  // One task per image and group: across threads when there are enough,
  // else one after the other with each product split across the threads.
  int64_t tasks = batch * group;
  auto columns = [&] { return im2colBuffer<B>(win, cg); };
  parallelTasks(tasks > 1 && tasks >= availableThreads() &&
                    sy.numel() * rows >= kParallelThreshold,
                0, tasks, columns, [&](std::vector<B> &col, int64_t task) {
                  int64_t n = task / group, g = task % group;
                  const B *xg = xs + (n * channels + g * cg) * win.inSize;
                  if (!win.identity)
                    im2col(win, xg, cg, col.data());
                  parallelGemm<B>(false, false, fg, o, rows, B(1),
                                  ws + g * fg * rows, rows,
                                  win.identity ? xg : col.data(), o, B(0),
                                  ys + (n * filters + g * fg) * o, o);
                });
  addBias();
  narrow(ys, sy.numel(), y);
}

/// dtg.conv_input_grad: the gradient dx [N, C, D...] of a convolution's
/// input from its output gradient g [N, F, O...] and weight w.
template <typename T>
void convInputGrad(const Shape &sg, const Shape &sw, const Shape &sx,
                   const T *g, const T *w, const int64_t *strides,
                   const int64_t *pads, const int64_t *dilations, int64_t group,
                   T *dx) {
  using namespace nndetail;
  using B = BlasType<T>;
  std::vector<B> gBuf, wBuf, xBuf;
  const B *gs = widen<B>(g, sg.numel(), gBuf);
  const B *ws = widen<B>(w, sw.numel(), wBuf);
  B *xs = computeBuffer<B>(dx, sx.numel(), xBuf);
  int64_t batch = sx.dims[0], channels = sx.dims[1], filters = sw.dims[0];
  if (isDepthwise2d(sx, sw, group)) {
    depthwiseConvInputGrad(
        Planar(sx, sg, sw.dims + 2, strides, pads, dilations), batch * channels,
        channels, gs, ws, xs);
    narrow(xs, sx.numel(), dx);
    return;
  }
  if constexpr (std::is_same_v<B, float>) {
    DnnlConv *library = convLibraryFor(ConvPass::InputGrad, sx, sw, sg, strides,
                                       pads, dilations, group);
    if (library && library->run(gs, ws, xs)) {
      narrow(xs, sx.numel(), dx);
      return;
    }
  }
  Window win(sx, sg, sw.dims + 2, strides, pads, dilations);
  int64_t cg = channels / group, fg = filters / group;
  int64_t rows = cg * win.kernelSize, o = win.outSize;
  // Tasks as in conv; each writes its own block of dx.
  int64_t tasks = batch * group;
  auto columns = [&] { return im2colBuffer<B>(win, cg); };
  parallelTasks(tasks > 1 && tasks >= availableThreads() &&
                    sg.numel() * rows >= kParallelThreshold,
                0, tasks, columns, [&](std::vector<B> &col, int64_t task) {
                  int64_t n = task / group, gr = task % group;
                  B *xg = xs + (n * channels + gr * cg) * win.inSize;
                  parallelGemm<B>(true, false, rows, o, fg, B(1),
                                  ws + gr * fg * rows, rows,
                                  gs + (n * filters + gr * fg) * o, o, B(0),
                                  win.identity ? xg : col.data(), o);
                  if (!win.identity) {
                    std::fill(xg, xg + cg * win.inSize, B(0));
                    col2imAdd(win, col.data(), cg, xg);
                  }
                });
  narrow(xs, sx.numel(), dx);
}

/// dtg.conv_weight_grad: the gradient dw [F, C/group, K...] of a
/// convolution's weight from its output gradient g [N, F, O...] and input x.
template <typename T>
void convWeightGrad(const Shape &sg, const Shape &sx, const Shape &sw,
                    const T *g, const T *x, const int64_t *strides,
                    const int64_t *pads, const int64_t *dilations,
                    int64_t group, T *dw) {
  using namespace nndetail;
  using B = BlasType<T>;
  int64_t size = sw.numel();
  std::vector<B> gBuf, xBuf, wBuf;
  const B *gs = widen<B>(g, sg.numel(), gBuf);
  const B *xs = widen<B>(x, sx.numel(), xBuf);
  B *wsum = computeBuffer<B>(dw, size, wBuf);
  int64_t batch = sx.dims[0], channels = sx.dims[1], filters = sw.dims[0];
  if (isDepthwise2d(sx, sw, group)) {
    depthwiseConvWeightGrad(
        Planar(sx, sg, sw.dims + 2, strides, pads, dilations), batch, channels,
        gs, xs, wsum);
    narrow(wsum, size, dw);
    return;
  }
  if constexpr (std::is_same_v<B, float>) {
    DnnlConv *library = convLibraryFor(ConvPass::WeightGrad, sx, sw, sg,
                                       strides, pads, dilations, group);
    if (library && library->run(gs, xs, wsum)) {
      narrow(wsum, size, dw);
      return;
    }
  }
  Window win(sx, sg, sw.dims + 2, strides, pads, dilations);
  int64_t cg = channels / group, fg = filters / group;
  int64_t rows = cg * win.kernelSize, o = win.outSize;
  std::fill(wsum, wsum + size, B(0));
  // Images across threads when there are enough, each thread summing into
  // its own partial gradient (added up in thread order: deterministic for a
  // given thread count); else one after the other, each product split
  // across the threads.
  bool perImage = batch > 1 && batch >= availableThreads() &&
                  sg.numel() * rows >= kParallelThreshold;
  int threads = perImage ? availableThreads() : 1;
  std::vector<B> partial(threads > 1 ? threads * size : 0, B(0));
  // Each thread's partial gradient (or the gradient itself, alone) and
  // im2col columns.
  struct Scratch {
    B *acc;
    std::vector<B> col;
  };
  auto scratch = [&] {
    return Scratch{threads > 1 ? partial.data() + threadNumber() * size : wsum,
                   im2colBuffer<B>(win, cg)};
  };
  parallelTasks(threads > 1, threads, batch, scratch,
                [&](Scratch &own, int64_t n) {
                  for (int64_t gr = 0; gr < group; ++gr) {
                    const B *xg = xs + (n * channels + gr * cg) * win.inSize;
                    if (!win.identity)
                      im2col(win, xg, cg, own.col.data());
                    parallelGemm<B>(false, true, fg, rows, o, B(1),
                                    gs + (n * filters + gr * fg) * o, o,
                                    win.identity ? xg : own.col.data(), o, B(1),
                                    own.acc + gr * fg * rows, rows);
                  }
                });
  if (threads > 1) {
    DTCK_PARALLEL_FOR(size * threads)
    for (int64_t i = 0; i < size; ++i) {
      B sum = 0;
      for (int t = 0; t < threads; ++t)
        sum += partial[t * size + i];
      wsum[i] = sum;
    }
  }
  narrow(wsum, sw.numel(), dw);
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

/// dtg.max_pool: the maximum of each window's input elements (a NaN wins;
/// a window of padding only gives -inf).
template <typename T>
void maxPool(const Shape &sx, const Shape &sy, const T *x,
             const int64_t *kernel, const int64_t *strides, const int64_t *pads,
             const int64_t *dilations, T *y) {
  using C = compute_t<T>;
  nndetail::Window win(sx, sy, kernel, strides, pads, dilations);
  int64_t planes = sx.dims[0] * sx.dims[1], o = win.outSize;
  DTCK_PARALLEL_FOR(sy.numel() * win.kernelSize)
  for (int64_t plane = 0; plane < planes; ++plane) {
    const T *xp = x + plane * win.inSize;
    std::vector<C> acc(o, -std::numeric_limits<C>::infinity());
    for (int64_t t = 0; t < win.kernelSize; ++t) {
      const int64_t *taps = win.taps.data() + t * o;
      for (int64_t p = 0; p < o; ++p) {
        if (taps[p] < 0)
          continue;
        C v = static_cast<C>(xp[taps[p]]);
        acc[p] = std::isnan(v) ? v : std::max(acc[p], v);
      }
    }
    for (int64_t p = 0; p < o; ++p)
      y[plane * o + p] = store<T>(acc[p]);
  }
}

/// dtg.avg_pool: the sum of each window's input elements divided by their
/// number, or with `countIncludePad` by its taps inside the padded input.
template <typename T>
void avgPool(const Shape &sx, const Shape &sy, const T *x,
             const int64_t *kernel, const int64_t *strides, const int64_t *pads,
             const int64_t *dilations, bool countIncludePad, T *y) {
  nndetail::Window win(sx, sy, kernel, strides, pads, dilations);
  const std::vector<int64_t> &count =
      countIncludePad ? win.paddedCount : win.inputCount;
  int64_t planes = sx.dims[0] * sx.dims[1], o = win.outSize;
  DTCK_PARALLEL_FOR(sy.numel() * win.kernelSize)
  for (int64_t plane = 0; plane < planes; ++plane) {
    const T *xp = x + plane * win.inSize;
    std::vector<double> sum(o, 0.0);
    for (int64_t t = 0; t < win.kernelSize; ++t) {
      const int64_t *taps = win.taps.data() + t * o;
      for (int64_t p = 0; p < o; ++p)
        if (taps[p] >= 0)
          sum[p] += nndetail::toDouble(xp[taps[p]]);
    }
    for (int64_t p = 0; p < o; ++p)
      y[plane * o + p] = store<T>(sum[p] / static_cast<double>(count[p]));
  }
}

/// dtg.max_pool_grad: each window's gradient g goes to the input element of
/// x that PyTorch selects: the first strict maximum in tap order, a NaN over
/// any number, a later NaN over an earlier one.
template <typename T>
void maxPoolGrad(const Shape &sg, const Shape &sx, const T *g, const T *x,
                 const int64_t *kernel, const int64_t *strides,
                 const int64_t *pads, const int64_t *dilations, T *dx) {
  using C = compute_t<T>;
  nndetail::Window win(sx, sg, kernel, strides, pads, dilations);
  int64_t planes = sx.dims[0] * sx.dims[1], o = win.outSize;
  int64_t in = win.inSize;
  DTCK_PARALLEL_FOR(sg.numel() * win.kernelSize)
  for (int64_t plane = 0; plane < planes; ++plane) {
    const T *xp = x + plane * in;
    std::vector<C> max(o);
    std::vector<int64_t> best(o, -1);
    for (int64_t t = 0; t < win.kernelSize; ++t) {
      const int64_t *taps = win.taps.data() + t * o;
      for (int64_t p = 0; p < o; ++p) {
        if (taps[p] < 0)
          continue;
        C v = static_cast<C>(xp[taps[p]]);
        if (best[p] < 0 || v > max[p] || std::isnan(v)) {
          max[p] = v;
          best[p] = taps[p];
        }
      }
    }
    std::vector<double> acc(in, 0.0);
    for (int64_t p = 0; p < o; ++p)
      if (best[p] >= 0)
        acc[best[p]] += nndetail::toDouble(g[plane * o + p]);
    for (int64_t i = 0; i < in; ++i)
      dx[plane * in + i] = store<T>(acc[i]);
  }
}

/// dtg.avg_pool_grad: each window's gradient divided by the forward op's
/// divisor, added to every input element the window covers.
template <typename T>
void avgPoolGrad(const Shape &sg, const Shape &sx, const T *g,
                 const int64_t *kernel, const int64_t *strides,
                 const int64_t *pads, const int64_t *dilations,
                 bool countIncludePad, T *dx) {
  nndetail::Window win(sx, sg, kernel, strides, pads, dilations);
  const std::vector<int64_t> &count =
      countIncludePad ? win.paddedCount : win.inputCount;
  int64_t planes = sx.dims[0] * sx.dims[1], o = win.outSize;
  int64_t in = win.inSize;
  DTCK_PARALLEL_FOR(sg.numel() * win.kernelSize)
  for (int64_t plane = 0; plane < planes; ++plane) {
    std::vector<double> share(o), acc(in, 0.0);
    for (int64_t p = 0; p < o; ++p)
      share[p] =
          nndetail::toDouble(g[plane * o + p]) / static_cast<double>(count[p]);
    for (int64_t t = 0; t < win.kernelSize; ++t) {
      const int64_t *taps = win.taps.data() + t * o;
      for (int64_t p = 0; p < o; ++p)
        if (taps[p] >= 0)
          acc[taps[p]] += share[p];
    }
    for (int64_t i = 0; i < in; ++i)
      dx[plane * in + i] = store<T>(acc[i]);
  }
}

//===----------------------------------------------------------------------===//
// Normalization and softmax
//===----------------------------------------------------------------------===//

/// dtg.batch_norm_inference: y = scale (x - mean) / sqrt(var + epsilon) +
/// bias per channel (axis 1), in double.
template <typename T, typename S, typename B, typename M, typename V>
void batchNormInference(const Shape &sx, const T *x, const S *scale,
                        const B *bias, const M *mean, const V *var,
                        double epsilon, T *y) {
  using nndetail::toDouble;
  int64_t channels = sx.dims[1], inner = nndetail::numelOf(sx, 2, sx.rank);
  DTCK_PARALLEL_FOR(sx.numel())
  for (int64_t nc = 0; nc < sx.dims[0] * channels; ++nc) {
    int64_t c = nc % channels;
    double invStd = 1.0 / std::sqrt(toDouble(var[c]) + epsilon);
    double s = toDouble(scale[c]), m = toDouble(mean[c]), b = toDouble(bias[c]);
    for (int64_t j = 0; j < inner; ++j)
      y[nc * inner + j] =
          store<T>(s * (toDouble(x[nc * inner + j]) - m) * invStd + b);
  }
}

/// dtg.batch_norm_training: normalizes with the batch statistics of each
/// channel (over every axis but 1) and updates the running statistics,
/// new = momentum * running + (1 - momentum) * batch, with the batch
/// variance Bessel-corrected when `unbiasedRunningVar` is set. The emitter
/// guarantees N * D1 * ... >= 2 (>= 1 when biased).
template <typename T, typename S, typename B, typename M, typename V>
void batchNormTraining(const Shape &sx, const T *x, const S *scale,
                       const B *bias, const M *runningMean, const V *runningVar,
                       double epsilon, double momentum, bool unbiasedRunningVar,
                       T *y, M *newMean, V *newVar) {
  using nndetail::toDouble;
  int64_t batch = sx.dims[0], channels = sx.dims[1];
  int64_t inner = nndetail::numelOf(sx, 2, sx.rank), count = batch * inner;
  // Channels go kWays at a time with their sums interleaved: each channel
  // sums in its own order (the same bits), and the independent chains
  // overlap instead of each addition waiting for the one before.
  constexpr int64_t kWays = 4;
  int64_t ways = channels % kWays == 0 ? kWays : 1;
  DTCK_PARALLEL_FOR(sx.numel())
  for (int64_t c0 = 0; c0 < channels; c0 += ways) {
    double sums[kWays] = {}, means[kWays], squaresOf[kWays] = {};
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t j = 0; j < inner; ++j)
        for (int64_t k = 0; k < ways; ++k)
          sums[k] += toDouble(x[(n * channels + c0 + k) * inner + j]);
    for (int64_t k = 0; k < ways; ++k)
      means[k] = sums[k] / static_cast<double>(count);
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t j = 0; j < inner; ++j)
        for (int64_t k = 0; k < ways; ++k) {
          double d =
              toDouble(x[(n * channels + c0 + k) * inner + j]) - means[k];
          squaresOf[k] += d * d;
        }
    for (int64_t k = 0; k < ways; ++k) {
      int64_t c = c0 + k;
      double mean = means[k], squares = squaresOf[k];
      double biasedVar = squares / static_cast<double>(count);
      double sampleVar = unbiasedRunningVar
                             ? squares / static_cast<double>(count - 1)
                             : biasedVar;
      double invStd = 1.0 / std::sqrt(biasedVar + epsilon);
      double s = toDouble(scale[c]), b = toDouble(bias[c]);
      for (int64_t n = 0; n < batch; ++n) {
        int64_t base = (n * channels + c) * inner;
        for (int64_t j = 0; j < inner; ++j)
          y[base + j] =
              store<T>(s * (toDouble(x[base + j]) - mean) * invStd + b);
      }
      newMean[c] = store<M>(momentum * toDouble(runningMean[c]) +
                            (1.0 - momentum) * mean);
      newVar[c] = store<V>(momentum * toDouble(runningVar[c]) +
                           (1.0 - momentum) * sampleVar);
    }
  }
}

/// dtg.layer_norm: normalizes each row of the dimensions [axis, rank) by its
/// mean and biased variance, times scale plus bias (nullptr if none), both
/// broadcast to the normalized shape; in double.
template <typename T, typename S, typename B>
void layerNorm(const Shape &sx, const Shape &sscale, const Shape &sbias,
               const T *x, const S *scale, const B *bias, int64_t axis,
               double epsilon, T *y) {
  using nndetail::toDouble;
  Shape normalized = nndetail::subShape(sx, int(axis), sx.rank);
  int64_t inner = normalized.numel();
  int64_t outer = nndetail::numelOf(sx, 0, int(axis));
  // Element j of the normalized shape reads scale[scaleIndex[j]].
  auto indexOf = [&](const Shape &s) {
    std::vector<int64_t> index(inner);
    int64_t strides[kMaxRank], own[kMaxRank];
    broadcastStrides(s, normalized, strides);
    stridesOf(normalized, own);
    for (int64_t j = 0; j < inner; ++j) {
      int64_t offset = 0, rest = j;
      for (int d = 0; d < normalized.rank; ++d) {
        offset += (rest / own[d]) * strides[d];
        rest %= own[d];
      }
      index[j] = offset;
    }
    return index;
  };
  std::vector<int64_t> scaleIndex = indexOf(sscale);
  std::vector<int64_t> biasIndex = bias ? indexOf(sbias) : scaleIndex;
  DTCK_PARALLEL_FOR(sx.numel())
  for (int64_t o = 0; o < outer; ++o) {
    const T *row = x + o * inner;
    double sum = 0.0;
    for (int64_t j = 0; j < inner; ++j)
      sum += toDouble(row[j]);
    double mean = sum / static_cast<double>(inner);
    double squares = 0.0;
    for (int64_t j = 0; j < inner; ++j) {
      double d = toDouble(row[j]) - mean;
      squares += d * d;
    }
    double invStd =
        1.0 / std::sqrt(squares / static_cast<double>(inner) + epsilon);
    for (int64_t j = 0; j < inner; ++j) {
      double value =
          (toDouble(row[j]) - mean) * invStd * toDouble(scale[scaleIndex[j]]);
      if (bias)
        value += toDouble(bias[biasIndex[j]]);
      y[o * inner + j] = store<T>(value);
    }
  }
}

/// dtg.softmax: exp(x - max) / sum(exp(x - max)) along `axis`, in double.
template <typename T>
void softmax(const Shape &sx, const T *x, int64_t axis, T *y) {
  nndetail::softmaxImpl(sx, x, axis, /*log=*/false, y);
}

/// dtg.log_softmax: x - max - log(sum(exp(x - max))) along `axis`.
template <typename T>
void logSoftmax(const Shape &sx, const T *x, int64_t axis, T *y) {
  nndetail::softmaxImpl(sx, x, axis, /*log=*/true, y);
}

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
  DTCK_PARALLEL_FOR(n)
  for (int64_t c = 0; c < chunks; ++c) {
    int64_t begin = head + c * chunk, count = std::min(chunk, n - begin);
    nndetail::dropoutRun(opKey, threshold, keptScale, x + begin, count,
                         offset + begin, y + begin, mask + begin);
  }
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
  DTCK_PARALLEL_FOR(sx.numel())
  for (int64_t row = 0; row < rows; ++row) {
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
}

} // namespace dtck

#endif // DTCRT_KERNELS_NN_H
