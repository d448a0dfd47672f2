//===- Loops.h - the elementwise kernels' loops, on the device ------------===//
//
// The CPU target's elementwise kernels (kernels/Elementwise.h) are written
// as a scalar function per element and a loop that applies it. With
// DTCK_DEVICE_LOOPS defined that header leaves the loops to this one, which
// runs them as grid-stride CUDA kernels: the CUDA target computes each
// element with the very scalar functions the CPU target does.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_CUDA_LOOPS_H
#define DTCRT_CUDA_LOOPS_H

#define DTCK_DEVICE_LOOPS 1

#include "dtcrt/cuda/Device.h"

namespace dtck::detail {

/// Up to four arrays broadcast over a contiguous result of `rank` dims.
template <int N> struct Broadcast {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t strides[N][kMaxRank] = {};

  /// The offset of each array's element at result element `i`.
  DTCK_HD void offsets(int64_t i, int64_t (&out)[N]) const {
    for (int k = 0; k < N; ++k)
      out[k] = 0;
    for (int d = rank - 1; d >= 0; --d) {
      int64_t c = i % dims[d];
      i /= dims[d];
      for (int k = 0; k < N; ++k)
        out[k] += c * strides[k][d];
    }
  }
};

template <int N>
inline Broadcast<N> broadcastOf(const Shape (&operands)[N], const Shape &r) {
  Broadcast<N> b;
  b.rank = r.rank;
  for (int d = 0; d < r.rank; ++d)
    b.dims[d] = r.dims[d];
  for (int k = 0; k < N; ++k)
    broadcastStrides(operands[k], r, b.strides[k]);
  return b;
}

template <typename T, typename R, typename F>
__global__ void mapKernel(int64_t n, const T *x, R *y, F f) {
  DTCG_GRID_STRIDE(i, n) { y[i] = f(x[i]); }
}

template <typename T, typename R, typename F>
inline void mapEach(const Shape &s, const T *x, R *y, F f) {
  int64_t n = s.numel();
  if (n > 0)
    dtcg::launch("dtck_map", dtcg::gridFor(n), dtcg::kBlock, mapKernel<T, R, F>,
                 n, x, y, f);
}

template <typename T, typename R, typename F>
__global__ void binaryKernel(int64_t n, Broadcast<2> b, const T *x, const T *z,
                             R *y, F f) {
  DTCG_GRID_STRIDE(i, n) {
    int64_t o[2];
    b.offsets(i, o);
    y[i] = f(x[o[0]], z[o[1]]);
  }
}

template <typename T, typename R, typename F>
inline void binaryMap(const Shape &sa, const Shape &sb, const Shape &sr,
                      const T *a, const T *b, R *r, F f) {
  int64_t n = sr.numel();
  if (n > 0)
    dtcg::launch("dtck_binary", dtcg::gridFor(n), dtcg::kBlock,
                 binaryKernel<T, R, F>, n, broadcastOf<2>({sa, sb}, sr), a, b,
                 r, f);
}

template <typename T>
__global__ void whereKernel(int64_t n, Broadcast<3> b, const bool *c,
                            const T *t, const T *f, T *y) {
  DTCG_GRID_STRIDE(i, n) {
    int64_t o[3];
    b.offsets(i, o);
    y[i] = c[o[0]] ? t[o[1]] : f[o[2]];
  }
}

template <typename T>
inline void ternaryMap(const Shape &sc, const Shape &st, const Shape &sf,
                       const Shape &sr, const bool *c, const T *t, const T *f,
                       T *r) {
  int64_t n = sr.numel();
  if (n > 0)
    dtcg::launch("dtck_where", dtcg::gridFor(n), dtcg::kBlock, whereKernel<T>,
                 n, broadcastOf<3>({sc, st, sf}, sr), c, t, f, r);
}

} // namespace dtck::detail

#endif // DTCRT_CUDA_LOOPS_H
