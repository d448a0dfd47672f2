//===- Pooling.h - pooling and its gradients ------------------------------===//
//
// Max and average pooling and their gradients (NN.h), over Window.h's
// geometry.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_KERNELS_POOLING_H
#define DTCRT_KERNELS_POOLING_H

#include "dtcrt/kernels/NNSupport.h"
#include "dtcrt/kernels/Window.h"

namespace dtck {
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
  parallelFor(sy.numel() * win.kernelSize, planes,
              [&](int64_t chunkBegin, int64_t chunkEnd) {
                for (int64_t plane = chunkBegin; plane < chunkEnd; ++plane) {
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
              });
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
  parallelFor(sy.numel() * win.kernelSize, planes,
              [&](int64_t chunkBegin, int64_t chunkEnd) {
                for (int64_t plane = chunkBegin; plane < chunkEnd; ++plane) {
                  const T *xp = x + plane * win.inSize;
                  std::vector<double> sum(o, 0.0);
                  for (int64_t t = 0; t < win.kernelSize; ++t) {
                    const int64_t *taps = win.taps.data() + t * o;
                    for (int64_t p = 0; p < o; ++p)
                      if (taps[p] >= 0)
                        sum[p] += nndetail::toDouble(xp[taps[p]]);
                  }
                  for (int64_t p = 0; p < o; ++p)
                    y[plane * o + p] =
                        store<T>(sum[p] / static_cast<double>(count[p]));
                }
              });
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
  // Plane `plane` of dx: each window's gradient added, in double, to the
  // input element it selected (`best`, -1 for none).
  auto addToSelected = [&](int64_t plane, const int64_t *best,
                           std::vector<double> &acc) {
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int64_t p = 0; p < o; ++p)
      if (best[p] >= 0)
        acc[best[p]] += nndetail::toDouble(g[plane * o + p]);
    for (int64_t i = 0; i < in; ++i)
      dx[plane * in + i] = store<T>(acc[i]);
  };
  // Two spatial dimensions (every CNN's pooling): each tap reads a strided
  // run of each input row, a loop that vectorizes; the selection has no
  // branches (on data they mispredict half the time). Taps in order, as
  // below: the same choices. (The table-driven loop took 3.3 us a 32 x 32
  // plane.)
  if (sx.rank == 4) {
    int64_t height = sx.dims[2], width = sx.dims[3];
    int64_t outH = sg.dims[2], outW = sg.dims[3], step = strides[1];
    parallelFor(
        sg.numel() * win.kernelSize, planes,
        [&](int64_t chunkBegin, int64_t chunkEnd) {
          std::vector<C> maxBuf(o);
          std::vector<int64_t> bestBuf(o);
          std::vector<double> acc(in);
          for (int64_t plane = chunkBegin; plane < chunkEnd; ++plane) {
            const T *xp = x + plane * in;
            std::fill(bestBuf.begin(), bestBuf.end(), -1);
            for (int64_t a = 0; a < kernel[0]; ++a)
              for (int64_t b = 0; b < kernel[1]; ++b) {
                // Output columns whose input column ow * step + shift is
                // inside the row.
                int64_t shift = b * dilations[1] - pads[1];
                int64_t lo = shift >= 0 ? 0 : (step - 1 - shift) / step;
                int64_t last = width - 1 - shift;
                int64_t hi = last < 0 ? 0 : std::min(outW, last / step + 1);
                for (int64_t oh = 0; oh < outH; ++oh) {
                  int64_t r = oh * strides[0] - pads[0] + a * dilations[0];
                  if (r < 0 || r >= height)
                    continue;
                  int64_t base = r * width + shift;
                  const T *row = xp + base;
                  C *max = maxBuf.data() + oh * outW;
                  int64_t *best = bestBuf.data() + oh * outW;
                  const int64_t st = step;
                  for (int64_t ow = lo; ow < hi; ++ow) {
                    C v = static_cast<C>(row[ow * st]);
                    bool take = (best[ow] < 0) | (v > max[ow]) | (v != v);
                    max[ow] = take ? v : max[ow];
                    best[ow] = take ? base + ow * st : best[ow];
                  }
                }
              }
            addToSelected(plane, bestBuf.data(), acc);
          }
        });
    return;
  }
  parallelFor(sg.numel() * win.kernelSize, planes,
              [&](int64_t chunkBegin, int64_t chunkEnd) {
                for (int64_t plane = chunkBegin; plane < chunkEnd; ++plane) {
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
                  std::vector<double> acc(in);
                  addToSelected(plane, best.data(), acc);
                }
              });
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
  parallelFor(sg.numel() * win.kernelSize, planes,
              [&](int64_t chunkBegin, int64_t chunkEnd) {
                for (int64_t plane = chunkBegin; plane < chunkEnd; ++plane) {
                  std::vector<double> share(o), acc(in, 0.0);
                  for (int64_t p = 0; p < o; ++p)
                    share[p] = nndetail::toDouble(g[plane * o + p]) /
                               static_cast<double>(count[p]);
                  for (int64_t t = 0; t < win.kernelSize; ++t) {
                    const int64_t *taps = win.taps.data() + t * o;
                    for (int64_t p = 0; p < o; ++p)
                      if (taps[p] >= 0)
                        acc[taps[p]] += share[p];
                  }
                  for (int64_t i = 0; i < in; ++i)
                    dx[plane * in + i] = store<T>(acc[i]);
                }
              });
}
} // namespace dtck

#endif // DTCRT_KERNELS_POOLING_H
