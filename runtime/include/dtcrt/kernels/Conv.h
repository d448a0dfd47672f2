//===- Conv.h - convolution and its gradients -----------------------------===//
//
// dtg.conv and its gradients (NN.h): oneDNN's primitives for 2-D float
// and bf16 convolutions of one group and depthwise ones (ConvLibrary.h),
// direct kernels for depthwise ones oneDNN has no JIT kernel for, im2col
// and a GEMM for the rest.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_KERNELS_CONV_H
#define DTCRT_KERNELS_CONV_H

#include "dtcrt/kernels/ConvLibrary.h"
#include "dtcrt/kernels/NNSupport.h"
#include "dtcrt/kernels/Window.h"

namespace dtck {
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

/// Depthwise forward: each output plane is the sum over the taps, in tap
/// order, of the tap's weight times the input plane it reads (padding
/// adds nothing), one output row at a time.
template <typename B>
void depthwiseConvByPlanes(const Planar &g, int64_t planes, int64_t channels,
                           const B *x, const B *w, B *y) {
  int64_t taps = g.kernelH * g.kernelW;
  int64_t inSize = g.inH * g.inW, outSize = g.outH * g.outW;
  if (g.unitStrides()) {
    // Over the padded plane, one run per tap (padding taps add w * 0).
    int64_t pw = g.paddedW(), run = g.paddedRun();
    parallelFor(planes * outSize * taps, planes,
                [&](int64_t chunkBegin, int64_t chunkEnd) {
                  for (int64_t plane = chunkBegin; plane < chunkEnd; ++plane) {
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
                      std::copy(ypad + oh * pw, ypad + oh * pw + g.outW,
                                yp + oh * g.outW);
                  }
                });
    return;
  }
  parallelFor(planes * outSize * taps, planes,
              [&](int64_t chunkBegin, int64_t chunkEnd) {
                for (int64_t plane = chunkBegin; plane < chunkEnd; ++plane) {
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
              });
}

/// Depthwise input gradient: each tap's weight times the output gradient,
/// added to the input elements the tap read, taps in order (im2col's
/// adjoint in its order).
template <typename B>
void depthwiseConvInputGradByPlanes(const Planar &g, int64_t planes,
                                    int64_t channels, const B *grad, const B *w,
                                    B *dx) {
  int64_t taps = g.kernelH * g.kernelW;
  int64_t inSize = g.inH * g.inW, outSize = g.outH * g.outW;
  if (g.unitStrides()) {
    // The gradient laid out with the padded plane's rows (zeros past
    // outW), each tap adding its products to the padded plane in one run;
    // then the input's part of it.
    int64_t pw = g.paddedW(), ph = g.paddedH(), run = g.paddedRun();
    parallelFor(planes * outSize * taps, planes,
                [&](int64_t chunkBegin, int64_t chunkEnd) {
                  for (int64_t plane = chunkBegin; plane < chunkEnd; ++plane) {
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
                        xp[ih * g.inW + iw] =
                            r < ph && c < pw ? dxpad[r * pw + c] : B(0);
                      }
                  }
                });
    return;
  }
  parallelFor(planes * outSize * taps, planes,
              [&](int64_t chunkBegin, int64_t chunkEnd) {
                for (int64_t plane = chunkBegin; plane < chunkEnd; ++plane) {
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
              });
}

/// Channels the channel-blocked depthwise kernels below take at a time
/// (one vector of floats with AVX-512, two with AVX2).
constexpr int64_t kDepthwiseLanes = 16;

/// The padded plane of a depthwise convolution with its channels last, for
/// the channel-blocked kernels: rows and columns from -pad to the last one
/// a tap reads, kDepthwiseLanes channels at each position.
struct ChannelBlocked {
  const Planar &g;
  int64_t rows, cols;
  explicit ChannelBlocked(const Planar &g)
      : g(g),
        rows((g.outH - 1) * g.strideH + (g.kernelH - 1) * g.dilationH + 1),
        cols((g.outW - 1) * g.strideW + (g.kernelW - 1) * g.dilationW + 1) {}
  int64_t size() const { return rows * cols * kDepthwiseLanes; }
  /// Where input element (ih, iw) is, or -1 if no tap reads it.
  int64_t inputAt(int64_t ih, int64_t iw) const {
    int64_t r = ih + g.padH, c = iw + g.padW;
    return r < rows && c < cols ? (r * cols + c) * kDepthwiseLanes : -1;
  }
  /// Where tap (kh, kw) of output (oh, ow) reads.
  int64_t tapAt(int64_t oh, int64_t ow, int64_t kh, int64_t kw) const {
    return ((oh * g.strideH + kh * g.dilationH) * cols + ow * g.strideW +
            kw * g.dilationW) *
           kDepthwiseLanes;
  }
  /// The blocks of `channels`, a job per block of each image.
  static int64_t blocks(int64_t channels) {
    return (channels + kDepthwiseLanes - 1) / kDepthwiseLanes;
  }
  /// Job `job`'s image `n` and channels [c0, c0 + lanes).
  static void job(int64_t job, int64_t channels, int64_t &n, int64_t &c0,
                  int64_t &lanes) {
    n = job / blocks(channels);
    c0 = job % blocks(channels) * kDepthwiseLanes;
    lanes = std::min(kDepthwiseLanes, channels - c0);
  }
  /// The weights of channels [c0, c0 + lanes) of `w` ([C, 1, kH, kW]),
  /// tap-major with the channels last, into `ws` (taps x kDepthwiseLanes).
  template <typename B>
  void weights(const B *w, int64_t c0, int64_t lanes, B *ws) const {
    int64_t taps = g.kernelH * g.kernelW;
    for (int64_t j = 0; j < lanes; ++j)
      for (int64_t t = 0; t < taps; ++t)
        ws[t * kDepthwiseLanes + j] = w[(c0 + j) * taps + t];
  }
};

/// Short output rows (fewer than 16 columns: MobileNet's late 7x7 to 2x2
/// planes) leave the plane-by-plane kernels a vector's worth of work or
/// less per loop; the channel-blocked kernels take those.
inline bool depthwiseByChannels(const Planar &g) { return g.outW < 16; }

/// Depthwise forward over blocks of kDepthwiseLanes channels of one image,
/// channels last: each output is one vector operation per tap across the
/// block. Each output is the sum over its taps in tap order from 0, as
/// depthwiseConvByPlanes computes it (a tap over the padding adds w * 0,
/// which changes no sum that starts at +0): the same bits.
template <typename B>
void depthwiseConvByChannels(const Planar &g, int64_t batch, int64_t channels,
                             const B *x, const B *w, B *y) {
  constexpr int64_t L = kDepthwiseLanes;
  ChannelBlocked p(g);
  int64_t taps = g.kernelH * g.kernelW;
  int64_t inSize = g.inH * g.inW, outSize = g.outH * g.outW;
  parallelFor(batch * channels * outSize * taps, batch * p.blocks(channels),
              [&](int64_t chunkBegin, int64_t chunkEnd) {
                for (int64_t job = chunkBegin; job < chunkEnd; ++job) {
                  int64_t n, c0, lanes;
                  p.job(job, channels, n, c0, lanes);
                  thread_local std::vector<B> scratch;
                  scratch.assign(p.size() + taps * L, B(0));
                  B *xs = scratch.data(), *ws = xs + p.size();
                  p.weights(w, c0, lanes, ws);
                  for (int64_t j = 0; j < lanes; ++j) {
                    const B *plane = x + (n * channels + c0 + j) * inSize;
                    for (int64_t ih = 0; ih < g.inH; ++ih)
                      for (int64_t iw = 0; iw < g.inW; ++iw)
                        if (int64_t at = p.inputAt(ih, iw); at >= 0)
                          xs[at + j] = plane[ih * g.inW + iw];
                  }
                  for (int64_t oh = 0; oh < g.outH; ++oh)
                    for (int64_t ow = 0; ow < g.outW; ++ow) {
                      B acc[L] = {};
                      for (int64_t kh = 0; kh < g.kernelH; ++kh)
                        for (int64_t kw = 0; kw < g.kernelW; ++kw) {
                          const B *src = xs + p.tapAt(oh, ow, kh, kw);
                          const B *wt = ws + (kh * g.kernelW + kw) * L;
                          for (int64_t j = 0; j < L; ++j)
                            acc[j] += wt[j] * src[j];
                        }
                      B *out =
                          y + (n * channels + c0) * outSize + oh * g.outW + ow;
                      for (int64_t j = 0; j < lanes; ++j)
                        out[j * outSize] = acc[j];
                    }
                }
              });
}

/// Depthwise input gradient over blocks of channels, channels last: taps
/// in order, each adding its weight times every output's gradient to the
/// input element it read, as depthwiseConvInputGradByPlanes does (each
/// input element's sum in tap order from 0): the same bits.
template <typename B>
void depthwiseConvInputGradByChannels(const Planar &g, int64_t batch,
                                      int64_t channels, const B *grad,
                                      const B *w, B *dx) {
  constexpr int64_t L = kDepthwiseLanes;
  ChannelBlocked p(g);
  int64_t taps = g.kernelH * g.kernelW;
  int64_t inSize = g.inH * g.inW, outSize = g.outH * g.outW;
  parallelFor(batch * channels * outSize * taps, batch * p.blocks(channels),
              [&](int64_t chunkBegin, int64_t chunkEnd) {
                for (int64_t job = chunkBegin; job < chunkEnd; ++job) {
                  int64_t n, c0, lanes;
                  p.job(job, channels, n, c0, lanes);
                  thread_local std::vector<B> scratch;
                  scratch.assign(p.size() + outSize * L + taps * L, B(0));
                  B *dxs = scratch.data(), *gs = dxs + p.size(),
                    *ws = gs + outSize * L;
                  p.weights(w, c0, lanes, ws);
                  for (int64_t j = 0; j < lanes; ++j) {
                    const B *plane = grad + (n * channels + c0 + j) * outSize;
                    for (int64_t o = 0; o < outSize; ++o)
                      gs[o * L + j] = plane[o];
                  }
                  for (int64_t kh = 0; kh < g.kernelH; ++kh)
                    for (int64_t kw = 0; kw < g.kernelW; ++kw) {
                      const B *wt = ws + (kh * g.kernelW + kw) * L;
                      for (int64_t oh = 0; oh < g.outH; ++oh)
                        for (int64_t ow = 0; ow < g.outW; ++ow) {
                          B *dst = dxs + p.tapAt(oh, ow, kh, kw);
                          const B *src = gs + (oh * g.outW + ow) * L;
                          for (int64_t j = 0; j < L; ++j)
                            dst[j] += wt[j] * src[j];
                        }
                    }
                  for (int64_t j = 0; j < lanes; ++j) {
                    B *plane = dx + (n * channels + c0 + j) * inSize;
                    for (int64_t ih = 0; ih < g.inH; ++ih)
                      for (int64_t iw = 0; iw < g.inW; ++iw) {
                        int64_t at = p.inputAt(ih, iw);
                        plane[ih * g.inW + iw] = at >= 0 ? dxs[at + j] : B(0);
                      }
                  }
                }
              });
}

/// Depthwise forward: channel-blocked for short output rows, plane by
/// plane otherwise (the same bits either way).
template <typename B>
void depthwiseConv(const Planar &g, int64_t planes, int64_t channels,
                   const B *x, const B *w, B *y) {
  if (depthwiseByChannels(g))
    depthwiseConvByChannels(g, planes / channels, channels, x, w, y);
  else
    depthwiseConvByPlanes(g, planes, channels, x, w, y);
}

/// Depthwise input gradient, chosen as depthwiseConv is.
template <typename B>
void depthwiseConvInputGrad(const Planar &g, int64_t planes, int64_t channels,
                            const B *grad, const B *w, B *dx) {
  if (depthwiseByChannels(g))
    depthwiseConvInputGradByChannels(g, planes / channels, channels, grad, w,
                                     dx);
  else
    depthwiseConvInputGradByPlanes(g, planes, channels, grad, w, dx);
}

/// Depthwise planes of at most this many output elements take the
/// channel-blocked weight gradient below.
constexpr int64_t kSmallPlane = 64;
/// Channels a small-plane weight gradient takes together, one to a SIMD
/// lane.
constexpr int64_t kChannelLanes = 16;

/// The depthwise weight gradient on small planes (MobileNetV2's 2 x 2 to
/// 8 x 8): kChannelLanes channels at a time, one to a lane, each image's
/// planes transposed so that a position's channels are contiguous. Per
/// channel, image and tap, the products over the valid output positions are
/// summed in float in row-major order, and those sums in double over the
/// images: an order that does not depend on the blocking or the threads.
/// (Channel by channel, padding the plane and reducing each tap's short run
/// cost 0.87 ms for 960 channels of 2 x 2 planes.)
template <typename B>
void depthwiseWeightGradSmallPlanes(const Planar &g, int64_t batch,
                                    int64_t channels, const B *grad, const B *x,
                                    B *dw) {
  constexpr int64_t L = kChannelLanes;
  int64_t taps = g.kernelH * g.kernelW;
  int64_t inSize = g.inH * g.inW, outSize = g.outH * g.outW;
  int64_t blocks = (channels + L - 1) / L;
  parallelFor(batch * channels * outSize * taps, blocks,
              [&](int64_t chunkBegin, int64_t chunkEnd) {
                thread_local std::vector<B> scratch;
                thread_local std::vector<double> sums;
                scratch.assign((inSize + outSize) * L, B(0));
                sums.resize(taps * L);
                B *xT = scratch.data(), *gT = xT + inSize * L;
                for (int64_t blk = chunkBegin; blk < chunkEnd; ++blk) {
                  int64_t c0 = blk * L, lanes = std::min(L, channels - c0);
                  std::fill(sums.begin(), sums.end(), 0.0);
                  for (int64_t n = 0; n < batch; ++n) {
                    for (int64_t l = 0; l < lanes; ++l) {
                      const B *xp = x + (n * channels + c0 + l) * inSize;
                      const B *gp = grad + (n * channels + c0 + l) * outSize;
                      for (int64_t q = 0; q < inSize; ++q)
                        xT[q * L + l] = xp[q];
                      for (int64_t p = 0; p < outSize; ++p)
                        gT[p * L + l] = gp[p];
                    }
                    for (int64_t t = 0; t < taps; ++t) {
                      int64_t kh = t / g.kernelW, kw = t % g.kernelW;
                      int64_t begin, end, first;
                      g.columns(kw, begin, end, first);
                      B acc[L] = {};
                      for (int64_t oh = 0; oh < g.outH; ++oh) {
                        int64_t ih = g.inputRow(oh, kh);
                        if (ih < 0 || ih >= g.inH)
                          continue;
                        for (int64_t ow = begin; ow < end; ++ow) {
                          const B *gv = gT + (oh * g.outW + ow) * L;
                          const B *xv =
                              xT + (ih * g.inW + ow * g.strideW + first) * L;
                          for (int64_t l = 0; l < L; ++l)
                            acc[l] += gv[l] * xv[l];
                        }
                      }
                      for (int64_t l = 0; l < L; ++l)
                        sums[t * L + l] += static_cast<double>(acc[l]);
                    }
                  }
                  for (int64_t l = 0; l < lanes; ++l)
                    for (int64_t t = 0; t < taps; ++t)
                      dw[(c0 + l) * taps + t] = static_cast<B>(sums[t * L + l]);
                }
              });
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
  if (outSize <= kSmallPlane && channels >= kChannelLanes) {
    depthwiseWeightGradSmallPlanes(g, batch, channels, grad, x, dw);
    return;
  }
  if (g.unitStrides()) {
    // Per channel: each image's padded plane and its gradient laid out with
    // the padded rows (zeros past outW), one run per tap.
    int64_t pw = g.paddedW(), ph = g.paddedH(), run = g.paddedRun();
    parallelFor(
        batch * channels * outSize * taps, channels,
        [&](int64_t chunkBegin, int64_t chunkEnd) {
          for (int64_t c = chunkBegin; c < chunkEnd; ++c) {
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
                _Pragma("omp simd reduction(+ : acc)") for (int64_t p = 0;
                                                            p < run; ++p) acc +=
                    gpad[p] * src[p];
                sums[t] += static_cast<double>(acc);
              }
            }
            for (int64_t t = 0; t < taps; ++t)
              dw[c * taps + t] = static_cast<B>(sums[t]);
          }
        });
    return;
  }
  parallelFor(
      batch * channels * outSize * taps, channels * taps,
      [&](int64_t chunkBegin, int64_t chunkEnd) {
        for (int64_t ct = chunkBegin; ct < chunkEnd; ++ct) {
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
                _Pragma("omp simd reduction(+ : acc)") for (int64_t ow = begin;
                                                            ow < end; ++ow)
                    acc += row[ow] * src[ow];
              } else {
                _Pragma("omp simd reduction(+ : acc)") for (int64_t ow = begin;
                                                            ow < end; ++ow)
                    acc += row[ow] * src[ow * g.strideW];
              }
              sum += static_cast<double>(acc);
            }
          }
          dw[ct] = static_cast<B>(sum);
        }
      });
}

/// A float convolution whose weight is much larger than its output (ResNet's
/// 512-channel 3 x 3 convolutions on 2 x 2 planes: 2.4M weights, 16K
/// outputs at batch 8) takes one product over the whole batch, the images'
/// im2col columns side by side, instead of oneDNN, whose reorders of the
/// weight into and out of its blocked layouts cost more than the product
/// there (one thread: 2.1 / 2.5 / 4.6 ms for the forward, input gradient
/// and weight gradient, against 1.5 / 1.6 / 1.7 ms for the products), or
/// one product per image (which reads the weight once per image). At 18
/// weights an output (256 channels on 4 x 4 planes) only the weight
/// gradient gains (1.9 -> 1.7 ms; the forward 1.2 -> 1.6 ms), so the
/// forward and the input gradient take it from 32.
template <typename T>
bool batchedColumns(ConvPass pass, const Shape &sw, const Shape &sy,
                    int64_t group) {
  int64_t ratio = pass == ConvPass::WeightGrad ? 16 : 32;
  return std::is_same_v<T, float> && group == 1 && sy.dims[0] > 1 &&
         sw.numel() >= ratio * sy.numel();
}

/// The output's layout, [N, F, O], from the batched product's, [F, N * O]
/// (or back, `toProduct`).
template <typename B>
void swapBatchAndFilters(const B *from, int64_t batch, int64_t filters,
                         int64_t o, bool toProduct, B *to) {
  int64_t width = batch * o;
  parallelFor(batch * filters * o, batch * filters,
              [&](int64_t chunkBegin, int64_t chunkEnd) {
                for (int64_t nf = chunkBegin; nf < chunkEnd; ++nf) {
                  int64_t n = nf / filters, f = nf % filters;
                  const B *src =
                      toProduct ? from + nf * o : from + f * width + n * o;
                  B *dst = toProduct ? to + f * width + n * o : to + nf * o;
                  std::copy(src, src + o, dst);
                }
              });
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
  B *ys = computeBuffer<B>(y, sy.numel(), yBuf);
  int64_t batch = sx.dims[0], channels = sx.dims[1], filters = sw.dims[0];
  int64_t o = batch * filters > 0 ? sy.numel() / (batch * filters) : 0;
  auto addBias = [&] {
    if (!bias)
      return;
    parallelFor(
        sy.numel(), batch * filters, [&](int64_t chunkBegin, int64_t chunkEnd) {
          for (int64_t nf = chunkBegin; nf < chunkEnd; ++nf) {
            B value =
                static_cast<B>(static_cast<compute_t<T>>(bias[nf % filters]));
            for (int64_t p = 0; p < o; ++p)
              ys[nf * o + p] += value;
          }
        });
  };
  bool depthwise = isDepthwise2d(sx, sw, group);
  if (batchedColumns<T>(ConvPass::Forward, sw, sy, group)) {
    const B *xs = widen<B>(x, sx.numel(), xBuf);
    const B *ws = widen<B>(w, sw.numel(), wBuf);
    Window win(sx, sy, sw.dims + 2, strides, pads, dilations);
    int64_t rows = channels * win.kernelSize, width = batch * o;
    std::vector<B> col(rows * width), product(filters * width);
    im2colBatch(win, xs, batch, channels * win.inSize, channels, col.data());
    parallelGemm<B>(false, false, filters, width, rows, B(1), ws, rows,
                    col.data(), width, B(0), product.data(), width);
    swapBatchAndFilters(product.data(), batch, filters, o, false, ys);
    addBias();
    narrow(ys, sy.numel(), y);
    return;
  }
  // float and bf16 operands go to oneDNN as they are (bf16 unwidened).
  if (DnnlConv *library = convLibraryOf<T>(ConvPass::Forward, sx, sw, sy,
                                           strides, pads, dilations, group);
      library && library->run(x, w, ys)) {
    addBias();
    narrow(ys, sy.numel(), y);
    return;
  }
  const B *xs = widen<B>(x, sx.numel(), xBuf);
  const B *ws = widen<B>(w, sw.numel(), wBuf);
  if (depthwise) {
    depthwiseConv(Planar(sx, sy, sw.dims + 2, strides, pads, dilations),
                  batch * channels, channels, xs, ws, ys);
    addBias();
    narrow(ys, sy.numel(), y);
    return;
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
  B *xs = computeBuffer<B>(dx, sx.numel(), xBuf);
  int64_t batch = sx.dims[0], channels = sx.dims[1], filters = sw.dims[0];
  bool depthwise = isDepthwise2d(sx, sw, group);
  if (batchedColumns<T>(ConvPass::InputGrad, sw, sg, group)) {
    const B *gs = widen<B>(g, sg.numel(), gBuf);
    const B *ws = widen<B>(w, sw.numel(), wBuf);
    Window win(sx, sg, sw.dims + 2, strides, pads, dilations);
    int64_t rows = channels * win.kernelSize, o = win.outSize;
    int64_t width = batch * o;
    std::vector<B> product(filters * width), col(rows * width);
    swapBatchAndFilters(gs, batch, filters, o, true, product.data());
    parallelGemm<B>(true, false, rows, width, filters, B(1), ws, rows,
                    product.data(), width, B(0), col.data(), width);
    std::fill(xs, xs + sx.numel(), B(0));
    col2imAddBatch(win, col.data(), batch, channels * win.inSize, channels, xs);
    narrow(xs, sx.numel(), dx);
    return;
  }
  if (DnnlConv *library = convLibraryOf<T>(ConvPass::InputGrad, sx, sw, sg,
                                           strides, pads, dilations, group);
      library && library->run(g, w, xs)) {
    narrow(xs, sx.numel(), dx);
    return;
  }
  const B *gs = widen<B>(g, sg.numel(), gBuf);
  const B *ws = widen<B>(w, sw.numel(), wBuf);
  if (depthwise) {
    depthwiseConvInputGrad(
        Planar(sx, sg, sw.dims + 2, strides, pads, dilations), batch * channels,
        channels, gs, ws, xs);
    narrow(xs, sx.numel(), dx);
    return;
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
  B *wsum = computeBuffer<B>(dw, size, wBuf);
  int64_t batch = sx.dims[0], channels = sx.dims[1], filters = sw.dims[0];
  bool depthwise = isDepthwise2d(sx, sw, group);
  if (batchedColumns<T>(ConvPass::WeightGrad, sw, sg, group)) {
    const B *gs = widen<B>(g, sg.numel(), gBuf);
    const B *xs = widen<B>(x, sx.numel(), xBuf);
    Window win(sx, sg, sw.dims + 2, strides, pads, dilations);
    int64_t rows = channels * win.kernelSize, o = win.outSize;
    int64_t width = batch * o;
    std::vector<B> product(filters * width), col(rows * width);
    swapBatchAndFilters(gs, batch, filters, o, true, product.data());
    im2colBatch(win, xs, batch, channels * win.inSize, channels, col.data());
    parallelGemm<B>(false, true, filters, rows, width, B(1), product.data(),
                    width, col.data(), width, B(0), wsum, rows);
    narrow(wsum, size, dw);
    return;
  }
  if (DnnlConv *library = convLibraryOf<T>(ConvPass::WeightGrad, sx, sw, sg,
                                           strides, pads, dilations, group);
      library && library->run(g, x, wsum)) {
    narrow(wsum, size, dw);
    return;
  }
  const B *gs = widen<B>(g, sg.numel(), gBuf);
  const B *xs = widen<B>(x, sx.numel(), xBuf);
  if (depthwise) {
    depthwiseConvWeightGrad(
        Planar(sx, sg, sw.dims + 2, strides, pads, dilations), batch, channels,
        gs, xs, wsum);
    narrow(wsum, size, dw);
    return;
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
    parallelFor(size * threads, size,
                [&](int64_t chunkBegin, int64_t chunkEnd) {
                  for (int64_t i = chunkBegin; i < chunkEnd; ++i) {
                    B sum = 0;
                    for (int t = 0; t < threads; ++t)
                      sum += partial[t * size + i];
                    wsum[i] = sum;
                  }
                });
  }
  narrow(wsum, sw.numel(), dw);
}
} // namespace dtck

#endif // DTCRT_KERNELS_CONV_H
