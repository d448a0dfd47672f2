//===- NNSupport.h - what the NN family's kernels share -------------------===//
//
// Shared by the kernels of the dtg NN family (NN.h): shape helpers, the
// split of work across OpenMP's threads, the GEMM behind contractions and
// convolutions, and the buffers that widen 16-bit operands to float.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_KERNELS_NNSUPPORT_H
#define DTCRT_KERNELS_NNSUPPORT_H

#include "dtcrt/kernels/Common.h"

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
    parallelFor(n, n, [&](int64_t chunkBegin, int64_t chunkEnd) {
      for (int64_t i = chunkBegin; i < chunkEnd; ++i) {
        buffer[i] = static_cast<B>(static_cast<compute_t<T>>(data[i]));
      }
    });
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
    parallelFor(n, n, [&](int64_t chunkBegin, int64_t chunkEnd) {
      for (int64_t i = chunkBegin; i < chunkEnd; ++i) {
        result[i] = store<T>(buffer[i]);
      }
    });
  }
}

} // namespace nndetail
} // namespace dtck

#endif // DTCRT_KERNELS_NNSUPPORT_H
