//===- Window.h - window geometry, im2col ---------------------------------===//
//
// The geometry of a window op (convolution, pooling, their gradients) and
// the im2col columns a convolution's GEMM reads (NN.h).
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_KERNELS_WINDOW_H
#define DTCRT_KERNELS_WINDOW_H

#include "dtcrt/kernels/NNSupport.h"

namespace dtck {
namespace nndetail {

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
    parallelFor(kernelSize * outSize, kernelSize,
                [&](int64_t chunkBegin, int64_t chunkEnd) {
                  for (int64_t t = chunkBegin; t < chunkEnd; ++t) {
                    int64_t tap[kMaxRank], pos[kMaxRank] = {};
                    int64_t r = t;
                    for (int d = k - 1; d >= 0; --d) {
                      tap[d] = r % kernel[d];
                      r /= kernel[d];
                    }
                    for (int64_t p = 0; p < outSize; ++p) {
                      int64_t offset = 0;
                      for (int d = 0; d < k && offset >= 0; ++d) {
                        int64_t i = pos[d] * strides[d] - pads[d] +
                                    tap[d] * dilations[d];
                        offset = (i < 0 || i >= input.dims[2 + d])
                                     ? -1
                                     : offset + i * inStride[d];
                      }
                      taps[t * outSize + p] = offset;
                      for (int d = k - 1; d >= 0; --d) { // next output position
                        if (++pos[d] < output.dims[2 + d])
                          break;
                        pos[d] = 0;
                      }
                    }
                  }
                });
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
  parallelFor(rows * o, rows, [&](int64_t chunkBegin, int64_t chunkEnd) {
    for (int64_t r = chunkBegin; r < chunkEnd; ++r) {
      const B *plane = x + (r / w.kernelSize) * w.inSize;
      const int64_t *taps = w.taps.data() + (r % w.kernelSize) * o;
      B *out = col + r * o;
      for (int64_t p = 0; p < o; ++p)
        out[p] = taps[p] >= 0 ? plane[taps[p]] : B(0);
    }
  });
}

/// The adjoint of im2col: adds each column entry to the input element it
/// was read from.
template <typename B>
void col2imAdd(const Window &w, const B *col, int64_t channels, B *x) {
  int64_t o = w.outSize;
  parallelFor(channels * w.kernelSize * o, channels,
              [&](int64_t chunkBegin, int64_t chunkEnd) {
                for (int64_t c = chunkBegin; c < chunkEnd; ++c) {
                  B *plane = x + c * w.inSize;
                  for (int64_t t = 0; t < w.kernelSize; ++t) {
                    const int64_t *taps = w.taps.data() + t * o;
                    const B *row = col + (c * w.kernelSize + t) * o;
                    for (int64_t p = 0; p < o; ++p)
                      if (taps[p] >= 0)
                        plane[taps[p]] += row[p];
                  }
                }
              });
}

/// im2col of every image of a batch side by side (one group of `channels`
/// channels, images `stride` elements apart): `col[r * (N * O) + n * O + p]`
/// is im2col's `[r * O + p]` of image n, so that one product takes the
/// whole batch.
template <typename B>
void im2colBatch(const Window &w, const B *x, int64_t batch, int64_t stride,
                 int64_t channels, B *col) {
  int64_t rows = channels * w.kernelSize, o = w.outSize, width = batch * o;
  parallelFor(rows * width, rows, [&](int64_t chunkBegin, int64_t chunkEnd) {
    for (int64_t r = chunkBegin; r < chunkEnd; ++r) {
      const int64_t *taps = w.taps.data() + (r % w.kernelSize) * o;
      for (int64_t n = 0; n < batch; ++n) {
        const B *plane = x + n * stride + (r / w.kernelSize) * w.inSize;
        B *out = col + r * width + n * o;
        for (int64_t p = 0; p < o; ++p)
          out[p] = taps[p] >= 0 ? plane[taps[p]] : B(0);
      }
    }
  });
}

/// The adjoint of im2colBatch: adds each column entry to the element of
/// its image it was read from (each element's entries in tap order, as
/// col2imAdd).
template <typename B>
void col2imAddBatch(const Window &w, const B *col, int64_t batch,
                    int64_t stride, int64_t channels, B *x) {
  int64_t o = w.outSize, width = batch * o;
  parallelFor(batch * channels * w.kernelSize * o, batch * channels,
              [&](int64_t chunkBegin, int64_t chunkEnd) {
                for (int64_t nc = chunkBegin; nc < chunkEnd; ++nc) {
                  int64_t n = nc / channels, c = nc % channels;
                  B *plane = x + n * stride + c * w.inSize;
                  for (int64_t t = 0; t < w.kernelSize; ++t) {
                    const int64_t *taps = w.taps.data() + t * o;
                    const B *row = col + (c * w.kernelSize + t) * width + n * o;
                    for (int64_t p = 0; p < o; ++p)
                      if (taps[p] >= 0)
                        plane[taps[p]] += row[p];
                  }
                }
              });
}

} // namespace nndetail
} // namespace dtck

#endif // DTCRT_KERNELS_WINDOW_H
