//===- Kernels.h - the CUDA target's kernel library (namespace dtcg) ------===//
//
// What the generated CUDA step calls for an op that is not fused: the same
// names, arguments and semantics as the CPU target's dtck kernels, run on
// the device. Elementwise kernels are dtck's own over device loops
// (Loops.h); rows (softmax, layer norm, reductions, the loss) take one block
// each, reduced by warp shuffles and shared memory, in double where dtck
// accumulates in double; matrix products go to cuBLASLt (Device.h). The
// compiler knows this list (compiler/Target/CUDA/CUDAKernels.cpp): an op
// whose kernel is not here is refused at compile time, naming its node.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_CUDA_KERNELS_H
#define DTCRT_CUDA_KERNELS_H

#include "dtcrt/cuda/Conv.h"
#include "dtcrt/cuda/Loops.h"
#include "dtcrt/kernels/Elementwise.h"
#include "dtcrt/kernels/Reduction.h"
#include "dtcrt/kernels/Training.h"

#include <algorithm>
#include <initializer_list>
#include <type_traits>
#include <vector>

namespace dtcg {

using dtck::Shape;

// Elementwise: dtck's kernels, whose loops run on the device.
using dtck::abs;
using dtck::add;
using dtck::cast;
using dtck::castSaturating;
using dtck::castToInt4;
using dtck::div;
using dtck::equal;
using dtck::exp;
using dtck::gelu;
using dtck::greater;
using dtck::greaterEqual;
using dtck::less;
using dtck::lessEqual;
using dtck::log;
using dtck::logicalAnd;
using dtck::logicalNot;
using dtck::logicalOr;
using dtck::max;
using dtck::min;
using dtck::mul;
using dtck::neg;
using dtck::pow;
using dtck::reciprocal;
using dtck::relu;
using dtck::rsqrt;
using dtck::sigmoid;
using dtck::sqrt;
using dtck::sub;
using dtck::tanh;
using dtck::where;

namespace detail {
using dtck::detail::load;
using dtck::detail::product;
using dtck::detail::roundTo;
using dtck::detail::toDouble;

/// Threads per row of a row kernel: a warp for short rows, else a block.
inline unsigned rowThreads(int64_t size) {
  return size <= 32 ? 32u : size <= 128 ? 128u : kBlock;
}

/// Rows of up to kWarpRow elements take a warp each (8 rows per block of
/// (32, 8) threads), longer ones a block each.
constexpr int64_t kWarpRow = 1024;
struct RowLaunch {
  dim3 grid, block;
};
inline RowLaunch rowLaunch(int64_t rows, int64_t size) {
  if (size <= kWarpRow)
    return {dim3(unsigned((rows + 7) / 8)), dim3(32, 8)};
  return {dim3(unsigned(rows)), dim3(rowThreads(size))};
}
/// This thread's row under rowLaunch.
__device__ inline int64_t launchedRow() {
  return int64_t(blockIdx.x) * blockDim.y + threadIdx.y;
}
/// Combines `v` over a row's threads (its warp, or its block).
template <typename T> __device__ inline T rowReduce(T v, int op) {
  return blockDim.y > 1 ? warpReduce(v, op) : blockReduce(v, op);
}
} // namespace detail

//===----------------------------------------------------------------------===//
// Reductions over kept dimensions: one block per result
//===----------------------------------------------------------------------===//

/// The first element of result r of a reduction, and how many it reduces.
DTCK_HD inline int64_t reduceBase(const Shape &in, const Shape &kept, int64_t r,
                                  int64_t &count) {
  int64_t keptStrides[dtck::kMaxRank], inStrides[dtck::kMaxRank];
  dtck::stridesOf(kept, keptStrides);
  dtck::stridesOf(in, inStrides);
  int64_t base = 0, rest = r;
  count = 1;
  for (int d = 0; d < in.rank; ++d) {
    int64_t c = rest / keptStrides[d];
    rest -= c * keptStrides[d];
    base += c * inStrides[d];
    if (kept.dims[d] == 1)
      count *= in.dims[d];
  }
  return base;
}

/// The offset of reduced element q of a result from its first.
DTCK_HD inline int64_t reducedOffset(const Shape &in, const Shape &kept,
                                     int64_t q) {
  int64_t inStrides[dtck::kMaxRank];
  dtck::stridesOf(in, inStrides);
  int64_t offset = 0;
  for (int d = in.rank - 1; d >= 0; --d)
    if (kept.dims[d] == 1) {
      offset += (q % in.dims[d]) * inStrides[d];
      q /= in.dims[d];
    }
  return offset;
}

DTCK_HD inline double reduceStart(int op) {
  return op == 2 ? -HUGE_VAL : op == 3 ? HUGE_VAL : 0.0;
}

template <typename T>
DTCK_HD inline double reduceStep(int op, double acc, T v) {
  return op == 2   ? dtck::scalar::maxStep(acc, v)
         : op == 3 ? dtck::scalar::minStep(acc, v)
                   : dtck::scalar::sumStep(acc, v);
}

/// One block per result: its threads stride over the reduced elements.
template <typename T>
__global__ void reduceKernel(Shape in, Shape kept, const T *x, T *y,
                             int op /* 0 sum, 1 mean, 2 max, 3 min */) {
  int64_t r = blockIdx.x, count = 0;
  int64_t base = reduceBase(in, kept, r, count);
  double acc = reduceStart(op);
  for (int64_t q = threadIdx.x; q < count; q += blockDim.x)
    acc = reduceStep(op, acc, x[base + reducedOffset(in, kept, q)]);
  acc = blockReduce(acc, op < 2 ? 0 : op - 1);
  if (threadIdx.x == 0)
    y[r] = dtck::scalar::finish<T>(op == 1 ? acc / double(count) : acc);
}

/// One thread per result, for short reductions (a few elements each: a
/// block of threads per result would idle).
template <typename T>
__global__ void reduceShortKernel(int64_t results, Shape in, Shape kept,
                                  const T *x, T *y, int op) {
  DTCG_GRID_STRIDE(r, results) {
    int64_t count = 0;
    int64_t base = reduceBase(in, kept, r, count);
    double acc = reduceStart(op);
    for (int64_t q = 0; q < count; ++q)
      acc = reduceStep(op, acc, x[base + reducedOffset(in, kept, q)]);
    y[r] = dtck::scalar::finish<T>(op == 1 ? acc / double(count) : acc);
  }
}

/// Rows of `count` contiguous elements (the reduced dimensions trail):
/// one warp per row, 8 rows per block, indices in 32 bits.
template <typename T>
__global__ void reduceRowsKernel(int results, int count, const T *x, T *y,
                                 int op) {
  int r = int(blockIdx.x) * 8 + int(threadIdx.y);
  if (r >= results)
    return; // the whole warp: no shuffle waits for it
  const T *row = x + r * count;
  double acc = reduceStart(op);
  for (int q = int(threadIdx.x); q < count; q += 32)
    acc = reduceStep(op, acc, row[q]);
  acc = warpReduce(acc, op < 2 ? 0 : op - 1);
  if (threadIdx.x == 0)
    y[r] = dtck::scalar::finish<T>(op == 1 ? acc / double(count) : acc);
}

/// Columns (the reduced dimensions lead, the kept ones trail: a bias
/// gradient's sum over rows): 32 adjacent columns per block, coalesced, and
/// 8 rows of threads, each summing every 8th row of its part of the rows,
/// combined in order through shared memory; with several parts (grid y)
/// each writes its sums to `partial`, which reduceColumnPartsKernel
/// combines in order. Deterministic for a given shape.
template <typename T>
__global__ void reduceColumnsKernel(int rows, int cols, int part, const T *x,
                                    double *partial, T *y, int op) {
  DTCG_SHARED(double, sums, 8 * 32);
  int c = int(blockIdx.x) * 32 + int(threadIdx.x);
  int begin = int(blockIdx.y) * part;
  int end = rows - begin < part ? rows : begin + part;
  double acc = reduceStart(op);
  if (c < cols)
    for (int r = begin + int(threadIdx.y); r < end; r += 8)
      acc = reduceStep(op, acc, x[int64_t(r) * cols + c]);
  sums[threadIdx.y * 32 + threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y != 0 || c >= cols)
    return;
  for (int k = 1; k < 8; ++k)
    acc = reduceStep(op, acc, double(sums[k * 32 + threadIdx.x]));
  if (gridDim.y > 1)
    partial[int64_t(blockIdx.y) * cols + c] = acc;
  else
    y[c] = dtck::scalar::finish<T>(op == 1 ? acc / double(rows) : acc);
}

template <typename T>
__global__ void reduceColumnPartsKernel(int rows, int cols, int parts,
                                        const double *partial, T *y, int op) {
  DTCG_GRID_STRIDE_AS(int, c, cols) {
    double acc = reduceStart(op);
    for (int p = 0; p < parts; ++p)
      acc = reduceStep(op, acc, partial[int64_t(p) * cols + c]);
    y[c] = dtck::scalar::finish<T>(op == 1 ? acc / double(rows) : acc);
  }
}

/// Reductions of fewer than kShortReduction elements per result take a
/// thread per result; rows of contiguous elements up to kWarpRow long a
/// warp per row; columns (reduced dimensions leading) reduceColumnsKernel;
/// the rest a block per result, of 32, 128 or 256 threads by their length
/// (detail::rowThreads).
constexpr int64_t kShortReduction = 16;
using detail::kWarpRow;

/// Blocks a column reduction aims for (two per SM of the larger GPUs).
constexpr int64_t kColumnBlocks = 264;

template <typename T>
inline void reduce(const char *name, const Shape &in, const Shape &kept,
                   const T *x, T *y, int op) {
  int64_t results = kept.numel();
  if (results == 0)
    return;
  int64_t count = results ? in.numel() / results : 0;
  // Whether the reduced dimensions trail (after the kept ones), or lead.
  bool trailing = true, reduced = false, leading = true, keptSeen = false;
  for (int d = 0; d < in.rank; ++d) {
    if (in.dims[d] == 1)
      continue;
    if (kept.dims[d] == 1) {
      reduced = true;
      leading = leading && !keptSeen;
    } else {
      keptSeen = true;
      trailing = trailing && !reduced;
    }
  }
  if (count >= kShortReduction && leading && results > 1 &&
      in.numel() < (int64_t(1) << 31)) {
    int64_t colBlocks = (results + 31) / 32;
    int64_t parts = std::max<int64_t>(
        1, std::min((kColumnBlocks + colBlocks - 1) / colBlocks, count / 64));
    int64_t part = (count + parts - 1) / parts;
    parts = (count + part - 1) / part;
    double *partial = parts > 1
                          ? static_cast<double *>(growingScratch(
                                size_t(parts * results) * sizeof(double), 6))
                          : nullptr;
    launch(name, dim3(unsigned(colBlocks), unsigned(parts)), dim3(32, 8),
           reduceColumnsKernel<T>, int(count), int(results), int(part), x,
           partial, y, op);
    if (parts > 1)
      launch(name, gridFor(results), kBlock, reduceColumnPartsKernel<T>,
             int(count), int(results), int(parts), partial, y, op);
    return;
  }
  if (count < kShortReduction)
    launch(name, gridFor(results), kBlock, reduceShortKernel<T>, results, in,
           kept, x, y, op);
  else if (trailing && count <= kWarpRow && in.numel() < (int64_t(1) << 31))
    launch(name, unsigned((results + 7) / 8), dim3(32, 8), reduceRowsKernel<T>,
           int(results), int(count), x, y, op);
  else
    launch(name, unsigned(results), detail::rowThreads(count), reduceKernel<T>,
           in, kept, x, y, op);
}

template <typename T>
inline void reduceSum(const Shape &in, const Shape &kept, const T *x, T *y) {
  reduce("dtcg_reduce_sum", in, kept, x, y, 0);
}
template <typename T>
inline void reduceMean(const Shape &in, const Shape &kept, const T *x, T *y) {
  reduce("dtcg_reduce_mean", in, kept, x, y, 1);
}
/// Maximum and minimum in double, NaN propagating, as dtck's (floating
/// tensors: the vocabulary-parallel cross entropy's row maximum).
template <typename T>
inline void reduceMax(const Shape &in, const Shape &kept, const T *x, T *y) {
  reduce("dtcg_reduce_max", in, kept, x, y, 2);
}
template <typename T>
inline void reduceMin(const Shape &in, const Shape &kept, const T *x, T *y) {
  reduce("dtcg_reduce_min", in, kept, x, y, 3);
}

//===----------------------------------------------------------------------===//
// Softmax and layer norm: one block (or warp) per row
//===----------------------------------------------------------------------===//

/// Softmax or log-softmax of rows [outer, size, inner] along size; block
/// b takes row (b / inner, b % inner). Max in float, the sum in double, as
/// dtck's softmaxRow.
template <typename T>
__global__ void softmaxKernel(int64_t rows, int64_t size, int64_t inner,
                              const T *x, T *y, bool log) {
  int64_t b = detail::launchedRow();
  if (b >= rows)
    return; // a whole warp (rows of a block each never get here)
  int64_t o = b / inner, j = b % inner;
  const T *row = x + o * size * inner + j;
  T *out = y + o * size * inner + j;
  float max = -INFINITY;
  for (int64_t a = threadIdx.x; a < size; a += blockDim.x) {
    float v = float(detail::toDouble(row[a * inner]));
    max = v > max || v != v ? v : max;
  }
  max = detail::rowReduce(max, 1);
  if (max == -INFINITY)
    max = 0;
  double sum = 0;
  for (int64_t a = threadIdx.x; a < size; a += blockDim.x)
    sum += double(expf(float(detail::toDouble(row[a * inner])) - max));
  sum = detail::rowReduce(sum, 0);
  float logSum = float(::log(sum)), scale = float(1.0 / sum);
  for (int64_t a = threadIdx.x; a < size; a += blockDim.x) {
    float v = float(detail::toDouble(row[a * inner])) - max;
    out[a * inner] = dtck::store<T>(log ? v - logSum : expf(v) * scale);
  }
}

template <typename T>
inline void softmaxImpl(const Shape &sx, const T *x, int64_t axis, bool log,
                        T *y) {
  int64_t outer = detail::product(sx, 0, int(axis)), size = sx.dims[axis];
  int64_t inner = detail::product(sx, int(axis) + 1, sx.rank);
  detail::RowLaunch l = detail::rowLaunch(outer * inner, size);
  if (outer * inner > 0)
    launch(log ? "dtcg_log_softmax" : "dtcg_softmax", l.grid, l.block,
           softmaxKernel<T>, outer * inner, size, inner, x, y, log);
}
template <typename T>
inline void softmax(const Shape &sx, const T *x, int64_t axis, T *y) {
  softmaxImpl(sx, x, axis, false, y);
}
template <typename T>
inline void logSoftmax(const Shape &sx, const T *x, int64_t axis, T *y) {
  softmaxImpl(sx, x, axis, true, y);
}

/// Layer norm of row blockIdx.x: mean and biased variance in double.
template <typename T, typename S, typename B>
__global__ void layerNormKernel(int64_t rows, int64_t inner, const T *x,
                                const S *scale, int64_t scaleSize,
                                const B *bias, int64_t biasSize, double epsilon,
                                T *y) {
  int64_t r = detail::launchedRow();
  if (r >= rows)
    return; // a whole warp (rows of a block each never get here)
  const T *row = x + r * inner;
  T *out = y + r * inner;
  double sum = 0;
  for (int64_t j = threadIdx.x; j < inner; j += blockDim.x)
    sum += detail::toDouble(row[j]);
  double mean = detail::rowReduce(sum, 0) / double(inner);
  double squares = 0;
  for (int64_t j = threadIdx.x; j < inner; j += blockDim.x) {
    double d = detail::toDouble(row[j]) - mean;
    squares += d * d;
  }
  squares = detail::rowReduce(squares, 0);
  double invStd = 1.0 / ::sqrt(squares / double(inner) + epsilon);
  for (int64_t j = threadIdx.x; j < inner; j += blockDim.x) {
    // Scale and bias broadcast to the row: their trailing elements.
    // (No division where they are as long as the row, or one element.)
    int64_t s = scaleSize == inner ? j : scaleSize == 1 ? 0 : j % scaleSize;
    double v =
        (detail::toDouble(row[j]) - mean) * invStd * detail::toDouble(scale[s]);
    if (bias)
      v += detail::toDouble(bias[biasSize == inner ? j
                                 : biasSize == 1   ? 0
                                                   : j % biasSize]);
    out[j] = dtck::store<T>(v);
  }
}

template <typename T, typename S, typename B>
inline void layerNorm(const Shape &sx, const Shape &sscale, const Shape &sbias,
                      const T *x, const S *scale, const B *bias, int64_t axis,
                      double epsilon, T *y) {
  int64_t inner = detail::product(sx, int(axis), sx.rank);
  int64_t outer = detail::product(sx, 0, int(axis));
  detail::RowLaunch l = detail::rowLaunch(outer, inner);
  if (outer > 0)
    launch("dtcg_layer_norm", l.grid, l.block, layerNormKernel<T, S, B>, outer,
           inner, x, scale, sscale.numel(), bias,
           bias ? sbias.numel() : int64_t(1), epsilon, y);
}

//===----------------------------------------------------------------------===//
// The loss
//===----------------------------------------------------------------------===//

using dtck::Reduction;

/// Negative log-likelihood, one block: per-position losses, then the sum
/// (and weight) in double.
template <typename T, typename I>
__global__ void nllLossKernel(int64_t batch, int64_t classes, int64_t inner,
                              const T *x, const I *target, const T *weight,
                              Reduction reduction, bool hasIgnoreIndex,
                              int64_t ignoreIndex, T *y, int *error) {
  double total = 0, totalWeight = 0;
  for (int64_t position = threadIdx.x; position < batch * inner;
       position += blockDim.x) {
    int64_t n = position / inner, p = position % inner;
    int64_t t = int64_t(target[position]);
    double loss = 0;
    if (!hasIgnoreIndex || t != ignoreIndex) {
      if (t < 0 || t >= classes) {
        *error = 1;
        continue;
      }
      double w = weight ? detail::toDouble(weight[t]) : 1.0;
      loss = -w * detail::toDouble(x[(n * classes + t) * inner + p]);
      total += loss;
      totalWeight += w;
    }
    if (reduction == Reduction::None)
      y[position] = detail::roundTo<T>(loss);
  }
  total = blockReduce(total, 0);
  totalWeight = blockReduce(totalWeight, 0);
  if (threadIdx.x == 0) {
    if (reduction == Reduction::Sum)
      y[0] = detail::roundTo<T>(total);
    else if (reduction == Reduction::Mean)
      y[0] = detail::roundTo<T>(total / totalWeight);
  }
}

template <typename T, typename I>
inline void nllLoss(const Shape &input, const T *x, const I *target,
                    const dtck::detail::NonDeduced<T> *weight,
                    Reduction reduction, bool hasIgnoreIndex,
                    int64_t ignoreIndex, T *y) {
  launch("dtcg_nll_loss", 1, kBlock, nllLossKernel<T, I>, input.dims[0],
         input.dims[1], detail::product(input, 2, input.rank), x, target,
         weight, reduction, hasIgnoreIndex, ignoreIndex, y, errorFlag());
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

/// Up to eight inputs of a concatenation, which fill columns [first,
/// first + sum(rows)) of each of the result's rows.
struct ConcatInputs {
  const void *x[8];
  int64_t rows[8]; // each input's extent along the axis times inner
  int count;
  int64_t first, width;
};

template <typename T>
__global__ void concatKernel(int64_t n, ConcatInputs in, int64_t outRow, T *y) {
  DTCG_GRID_STRIDE(i, n) {
    int64_t o = i / in.width, c = i % in.width;
    int64_t at = o * outRow + in.first + c;
    int k = 0;
    while (k + 1 < in.count && c >= in.rows[k]) {
      c -= in.rows[k];
      ++k;
    }
    y[at] = static_cast<const T *>(in.x[k])[o * in.rows[k] + c];
  }
}

/// One launch per eight inputs (a gradient bucket concatenates many).
template <typename T>
inline void concat(std::initializer_list<Shape> ins, const Shape &out,
                   std::initializer_list<const T *> xs, int64_t axis, T *y) {
  int a = int(axis);
  int64_t inner = detail::product(out, a + 1, out.rank);
  int64_t outRow = out.dims[a] * inner;
  int64_t outer = outRow ? out.numel() / outRow : 0;
  std::vector<Shape> shapes(ins);
  std::vector<const T *> data(xs);
  int64_t first = 0;
  for (size_t from = 0; from < shapes.size(); from += 8) {
    ConcatInputs in{};
    in.first = first;
    for (size_t k = from; k < shapes.size() && k < from + 8; ++k) {
      in.rows[in.count] = shapes[k].dims[a] * inner;
      in.x[in.count++] = data[k];
      in.width += shapes[k].dims[a] * inner;
    }
    first += in.width;
    int64_t n = outer * in.width;
    if (n > 0)
      launch("dtcg_concat", gridFor(n), kBlock, concatKernel<T>, n, in, outRow,
             y);
  }
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

/// One element of a product's epilogue from the product's element `v` (in
/// float) at column `col`, offset `at` of the result: computed in float and
/// rounded once, as cuBLASLt's epilogues are.
template <typename Y>
DTCK_HD inline float epilogueAt(const Epilogue<Y> &ep, float v, int64_t col,
                                int64_t at) {
  float sum = v + float(ep.bias[col]);
  if (ep.aux)
    ep.aux[at] = Y(sum);
  if (ep.kind == EpilogueKind::ReluBias)
    return dtck::scalar::relu(sum);
  if (ep.kind == EpilogueKind::GeluBias)
    return dtck::scalar::gelu(sum, true);
  return sum;
}

/// An epilogue applied after its product `p` (float, or the result's own
/// type) into y[count], rows of n: where cuBLASLt could not take it.
template <typename Y, typename P>
__global__ void epilogueKernel(int64_t count, int64_t n, const P *p, Y *y,
                               Epilogue<Y> ep) {
  DTCG_GRID_STRIDE(i, count) {
    y[i] = Y(epilogueAt(ep, float(p[i]), i % n, i));
  }
}

/// The bias gradient `ep` of the product op(a) op(b) ([m, k] x [k, n],
/// rows `lda` and `ldb` apart) where cuBLASLt did not compute it: the sums
/// over k of op(a) (BiasGradA, m of them) or op(b) (BiasGradB, n), by the
/// library's reduction (in double, rounded once). That operand's rows must
/// be whole (dtc folds bias gradients of contiguous operands only).
template <typename T>
inline void biasGradient(const Epilogue<T> &ep, bool transA, bool transB,
                         int64_t m, int64_t n, int64_t k, const T *a,
                         int64_t lda, const T *b, int64_t ldb) {
  bool left = ep.kind == EpilogueKind::BiasGradA;
  // The operand is [k, count] (a sum per column) or [count, k] (per row).
  bool kMajor = left ? transA : !transB;
  int64_t count = left ? m : n, ld = left ? lda : ldb;
  if (ld != (kMajor ? count : k))
    fatal("a bias gradient over an operand with rows " + std::to_string(ld) +
          " elements apart (the CUDA target folds contiguous ones only)");
  Shape in = kMajor ? Shape{2, {k, count}} : Shape{2, {count, k}};
  Shape kept = kMajor ? Shape{2, {1, count}} : Shape{2, {count, 1}};
  dtcg::reduceSum(in, kept, left ? a : b, ep.biasGrad);
}

/// gemmBatched with an epilogue (or none), and contiguous results
/// (strideY = m * n, or one batch): cuBLASLt's where it takes it; otherwise
/// the product (in float, for a 16-bit result to round once) and then the
/// epilogue as a kernel of its own (a bias gradient: biasGradient).
template <typename T>
inline void gemmWithEpilogue(bool transA, bool transB, int64_t m, int64_t n,
                             int64_t k, float alpha, const T *a, int64_t lda,
                             int64_t strideA, const T *b, int64_t ldb,
                             int64_t strideB, T *y, int64_t batch,
                             Epilogue<T> ep) {
  int64_t strideY = batch == 1 ? 0 : m * n, count = batch * m * n;
  if (ep.isBiasGrad() && count == 0) {
    biasGradient(ep, transA, transB, m, n, k, a, lda, b, ldb);
    return;
  }
  if (gemmBatched<T>(transA, transB, m, n, k, alpha, a, lda, strideA, b, ldb,
                     strideB, 0.0f, y, strideY, batch, ep))
    return;
  if (ep.isBiasGrad()) {
    if (batch != 1 || alpha != 1.0f)
      fatal("a bias gradient of a scaled or batched product");
    gemmBatched<T>(transA, transB, m, n, k, alpha, a, lda, strideA, b, ldb,
                   strideB, 0.0f, y, strideY, batch);
    biasGradient(ep, transA, transB, m, n, k, a, lda, b, ldb);
    return;
  }
  if constexpr (std::is_same_v<T, float>) {
    gemmBatched<T>(transA, transB, m, n, k, alpha, a, lda, strideA, b, ldb,
                   strideB, 0.0f, y, strideY, batch);
    launch("dtcg_matmul_epilogue", gridFor(count), kBlock,
           epilogueKernel<T, float>, count, n, y, y, ep);
  } else {
    float *p =
        static_cast<float *>(growingScratch(size_t(count) * sizeof(float), 5));
    gemmBatched<T, float>(transA, transB, m, n, k, alpha, a, lda, strideA, b,
                          ldb, strideB, 0.0f, p, strideY, batch);
    launch("dtcg_matmul_epilogue", gridFor(count), kBlock,
           epilogueKernel<T, float>, count, n, p, y, ep);
  }
}

template <typename T>
__global__ void fillBroadcastKernel(int64_t m, int64_t n, const T *c,
                                    int64_t rowStride, int64_t colStride,
                                    float beta, T *y) {
  DTCG_GRID_STRIDE(i, m * n) {
    y[i] = T(beta * float(c[(i / n) * rowStride + (i % n) * colStride]));
  }
}

/// dtg.gemm: y = alpha op(a) op(b) + beta c, with c (optional) broadcast to
/// [M, N]; `ep` a bias gradient (of a product without c) or none.
template <typename T>
inline void gemm(const Shape &sa, const Shape &sb, const Shape &sc, const T *a,
                 const T *b, const T *c, double alpha, double beta, bool transA,
                 bool transB, T *y, Epilogue<T> ep = {}) {
  int64_t m = sa.dims[transA ? 1 : 0], k = sa.dims[transA ? 0 : 1];
  int64_t n = sb.dims[transB ? 0 : 1];
  if (ep.isBiasGrad() && c)
    fatal("a bias gradient of a product with C");
#ifndef DTCG_EMULATION
  // A bias (c of [N], or [1, N], added once) is cuBLASLt's epilogue. (The
  // emulation adds it as the CPU target's dtck::gemm does, as beta = 1 over
  // the broadcast bias, so that their sums round alike.)
  if (c && beta == 1.0 && sc.rank >= 1 && sc.numel() == n &&
      sc.dims[sc.rank - 1] == n)
    ep = Epilogue<T>{EpilogueKind::Bias, c, nullptr};
#endif
  if (ep.kind != EpilogueKind::None) {
    gemmWithEpilogue<T>(transA, transB, m, n, k, float(alpha), a, sa.dims[1], 0,
                        b, sb.dims[1], 0, y, 1, ep);
    return;
  }
  if (c) {
    int64_t strides[dtck::kMaxRank] = {0, 0};
    dtck::broadcastStrides(sc, Shape{2, {m, n}}, strides);
    launch("dtcg_gemm_bias", gridFor(m * n), kBlock, fillBroadcastKernel<T>, m,
           n, c, strides[0], strides[1], float(beta), y);
  }
  gemmBatched<T>(transA, transB, m, n, k, float(alpha), a, sa.dims[1], 0, b,
                 sb.dims[1], 0, c ? 1.0f : 0.0f, y, 0, 1);
}

//===----------------------------------------------------------------------===//
// Layout: transpose, slice, pad, gather
//===----------------------------------------------------------------------===//

/// A contiguous result read from `x` through strides (per result
/// dimension; 0 broadcasts).
struct StridedRead {
  int rank = 0;
  int64_t dims[dtck::kMaxRank] = {};
  int64_t strides[dtck::kMaxRank] = {};
};

/// The offset of element i of the contiguous side in the strided one, in
/// index type I (32 bits when every offset fits: a GPU divides 64-bit
/// integers in software).
template <typename I = int64_t>
DTCK_HD inline I stridedOffset(const StridedRead &view, I i) {
  I offset = 0;
  for (int d = view.rank - 1; d >= 0; --d) {
    I size = I(view.dims[d]);
    offset += (i % size) * I(view.strides[d]);
    i /= size;
  }
  return offset;
}

template <typename T, typename I>
__global__ void stridedCopyKernel(I n, StridedRead read, const T *x, T *y) {
  for (I i = I(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += I(gridDim.x) * blockDim.x)
    y[i] = x[stridedOffset<I>(read, i)];
}

namespace detail {
/// `read` with adjacent dimensions that it walks as one merged and those
/// of size 1 dropped (fewer divisions per element).
inline StridedRead mergedRead(const StridedRead &read) {
  StridedRead m;
  for (int d = read.rank - 1; d >= 0; --d) {
    if (read.dims[d] == 1)
      continue;
    if (m.rank > 0 &&
        read.strides[d] == m.strides[0] * m.dims[0]) { // continues it
      m.dims[0] *= read.dims[d];
      continue;
    }
    for (int e = m.rank; e > 0; --e) {
      m.dims[e] = m.dims[e - 1];
      m.strides[e] = m.strides[e - 1];
    }
    m.dims[0] = read.dims[d];
    m.strides[0] = read.strides[d];
    ++m.rank;
  }
  return m;
}

/// 16 bytes, copied as one access.
#ifdef DTCG_EMULATION
struct alignas(16) Vec16 {
  uint32_t w[4];
};
#else
using Vec16 = uint4;
#endif
} // namespace detail

/// The contiguous y = x read through `read`: adjacent dimensions merged,
/// and 16 bytes at a time where the innermost run is contiguous and every
/// row starts 16-byte aligned (an attention head's rows of 64 floats).
template <typename T>
inline void stridedCopy(const char *name, const StridedRead &original,
                        const T *x, T *y) {
  StridedRead read = detail::mergedRead(original);
  constexpr int64_t kVector = 16 / int64_t(sizeof(T));
  if (kVector > 1 && read.rank > 0 && read.strides[read.rank - 1] == 1 &&
      read.dims[read.rank - 1] % kVector == 0 &&
      reinterpret_cast<uintptr_t>(x) % 16 == 0 &&
      reinterpret_cast<uintptr_t>(y) % 16 == 0) {
    bool aligned = true;
    for (int d = 0; d + 1 < read.rank; ++d)
      aligned = aligned && read.strides[d] % kVector == 0;
    if (aligned) {
      StridedRead vectors = read;
      vectors.dims[read.rank - 1] /= kVector;
      for (int d = 0; d + 1 < read.rank; ++d)
        vectors.strides[d] /= kVector;
      stridedCopy(name, vectors, reinterpret_cast<const detail::Vec16 *>(x),
                  reinterpret_cast<detail::Vec16 *>(y));
      return;
    }
  }
  int64_t n = 1, extent = 1;
  for (int d = 0; d < read.rank; ++d) {
    n *= read.dims[d];
    extent += (read.dims[d] - 1) *
              (read.strides[d] < 0 ? -read.strides[d] : read.strides[d]);
  }
  if (n <= 0)
    return;
  // The grid-stride loop's last index must fit too.
  constexpr int64_t kFits = (int64_t(1) << 31) - 2 * 132 * 16 * 256;
  if (n < kFits && extent < kFits)
    launch(name, gridFor(n), kBlock, stridedCopyKernel<T, int>, int(n), read, x,
           y);
  else
    launch(name, gridFor(n), kBlock, stridedCopyKernel<T, int64_t>, n, read, x,
           y);
}

/// Result dimension d is operand dimension perm[d].
template <typename T>
inline void transpose(const Shape &in, const Shape &out, const T *x,
                      const int64_t *perm, T *y) {
  int64_t inStrides[dtck::kMaxRank];
  dtck::stridesOf(in, inStrides);
  StridedRead read;
  read.rank = out.rank;
  for (int d = 0; d < out.rank; ++d) {
    read.dims[d] = out.dims[d];
    read.strides[d] = inStrides[perm[d]];
  }
  stridedCopy("dtcg_transpose", read, x, y);
}

/// The elements a slice takes of `whole` (indices starts[d] + k *
/// steps[d], `part`'s shape) as a strided view, from element `offset`.
inline StridedRead sliceView(const Shape &whole, const Shape &part,
                             const int64_t *starts, const int64_t *steps,
                             int64_t &offset) {
  int64_t strides[dtck::kMaxRank];
  dtck::stridesOf(whole, strides);
  StridedRead view;
  view.rank = part.rank;
  offset = 0;
  for (int d = 0; d < part.rank; ++d) {
    view.dims[d] = part.dims[d];
    view.strides[d] = strides[d] * steps[d];
    offset += starts[d] * strides[d];
  }
  return view;
}

/// Takes indices starts[d] + k * steps[d] in each dimension, as dtck::slice
/// (a tensor-parallel rank's block of a weight, a fused projection's part).
template <typename T>
inline void slice(const Shape &in, const Shape &out, const T *x,
                  const int64_t *starts, const int64_t *steps, T *y) {
  int64_t offset = 0;
  StridedRead read = sliceView(in, out, starts, steps, offset);
  stridedCopy("dtcg_slice", read, x + offset, y);
}

/// Broadcasts (NumPy rules) to the result's shape, as dtck::broadcast.
template <typename T>
inline void broadcast(const Shape &in, const Shape &out, const T *x, T *y) {
  StridedRead read;
  read.rank = out.rank;
  dtck::broadcastStrides(in, out, read.strides);
  for (int d = 0; d < out.rank; ++d)
    read.dims[d] = out.dims[d];
  stridedCopy("dtcg_broadcast", read, x, y);
}

/// y[strided position of i] = g[i]: the scatter of a slice's gradient.
template <typename T>
__global__ void stridedWriteKernel(int64_t n, StridedRead write, const T *g,
                                   T *y) {
  DTCG_GRID_STRIDE(i, n) { y[stridedOffset(write, i)] = g[i]; }
}

/// The adjoint of slice, as dtck::sliceGrad: zeros but where the slice took
/// its elements, which get the gradient.
template <typename T>
inline void sliceGrad(const Shape &grad, const Shape &out, const T *g,
                      const int64_t *starts, const int64_t *steps, T *y) {
  int64_t offset = 0;
  StridedRead write = sliceView(out, grad, starts, steps, offset);
  check(cudaMemsetAsync(y, 0, size_t(out.numel()) * sizeof(T), stream()),
        "clearing a slice's gradient");
  int64_t n = grad.numel();
  if (n > 0)
    launch("dtcg_slice_grad", gridFor(n), kBlock, stridedWriteKernel<T>, n,
           write, g, y + offset);
}

} // namespace dtcg

namespace dtck {
/// As kernels/Shape.h's (which CUDA programs do not include).
enum class PadMode { Constant, Reflect, Edge };
} // namespace dtck

namespace dtcg {

using dtck::PadMode;

/// Pads by `low` before each dimension (negative crops), as dtck::pad.
struct PadGeometry {
  int rank = 0;
  int64_t outDims[dtck::kMaxRank] = {}, inDims[dtck::kMaxRank] = {};
  int64_t inStrides[dtck::kMaxRank] = {}, low[dtck::kMaxRank] = {};
};

template <typename T>
__global__ void padKernel(int64_t n, PadGeometry g, const T *x, PadMode mode,
                          T fill, T *y) {
  DTCG_GRID_STRIDE(i, n) {
    int64_t rest = i, offset = 0;
    bool filled = false;
    for (int d = g.rank - 1; d >= 0; --d) {
      int64_t c = rest % g.outDims[d] - g.low[d];
      rest /= g.outDims[d];
      int64_t size = g.inDims[d];
      if (c < 0 || c >= size) {
        if (mode == PadMode::Constant) {
          filled = true;
          break;
        }
        if (mode == PadMode::Edge || size == 1) {
          c = c < 0 ? 0 : size - 1;
        } else {
          int64_t period = 2 * (size - 1);
          c %= period;
          if (c < 0)
            c += period;
          c = c < size ? c : period - c;
        }
      }
      offset += c * g.inStrides[d];
    }
    y[i] = filled ? fill : x[offset];
  }
}

template <typename T>
inline void pad(const Shape &in, const Shape &out, const T *x,
                const int64_t *low, PadMode mode, double value, T *y) {
  PadGeometry g;
  g.rank = out.rank;
  dtck::stridesOf(in, g.inStrides);
  for (int d = 0; d < out.rank; ++d) {
    g.outDims[d] = out.dims[d];
    g.inDims[d] = in.dims[d];
    g.low[d] = low[d];
  }
  int64_t n = out.numel();
  if (n > 0)
    launch("dtcg_pad", gridFor(n), kBlock, padKernel<T>, n, g, x, mode,
           dtck::detail::fromDouble<T>(value), y);
}

namespace detail {
/// The data element that element e of a gather's result [outer, count,
/// inner] comes from (data viewed as [outer, size, inner]); -1, with the
/// error flag set, for an index out of range.
template <typename I>
__device__ inline int64_t gatheredFrom(int64_t e, int64_t size, int64_t count,
                                       int64_t inner, const I *idx,
                                       int *error) {
  int64_t k = e % inner, b = e / inner;
  int64_t o = b / count, j = b % count;
  int64_t i = int64_t(idx[j]);
  if (i < 0)
    i += size;
  if (i < 0 || i >= size) {
    *error = 1;
    return -1;
  }
  return (o * size + i) * inner + k;
}
} // namespace detail

/// ONNX Gather: result shape data[:axis] + indices + data[axis+1:]. An index
/// out of range sets the error flag.
template <typename T, typename I>
__global__ void gatherKernel(int64_t n, int64_t size, int64_t count,
                             int64_t inner, const T *x, const I *idx, T *y,
                             int *error) {
  DTCG_GRID_STRIDE(e, n) {
    int64_t from = detail::gatheredFrom(e, size, count, inner, idx, error);
    if (from >= 0)
      y[e] = x[from];
  }
}

template <typename T, typename I>
inline void gather(const Shape &data, const Shape &indices, const T *x,
                   const I *idx, int64_t axis, T *y) {
  int a = int(axis);
  int64_t outer = detail::product(data, 0, a), size = data.dims[a];
  int64_t inner = detail::product(data, a + 1, data.rank);
  int64_t count = indices.numel();
  int64_t n = outer * count * inner;
  if (n > 0)
    launch("dtcg_gather", gridFor(n), kBlock, gatherKernel<T, I>, n, size,
           count, inner, x, idx, y, errorFlag());
}

/// The adjoint of gather: y = 0, then each gathered row's gradient added
/// into the row it came from (atomically: rows taken twice meet; 16-bit
/// floats in a float buffer, rounded once).
template <typename T, typename I, typename A>
__global__ void gatherGradKernel(int64_t n, int64_t size, int64_t count,
                                 int64_t inner, const T *g, const I *idx, A *y,
                                 int *error) {
  DTCG_GRID_STRIDE(e, n) {
    int64_t from = detail::gatheredFrom(e, size, count, inner, idx, error);
    if (from >= 0)
      atomicAddValue(&y[from], A(g[e]));
  }
}

template <typename T, typename I>
inline void gatherGrad(const Shape &grad, const Shape &indices,
                       const Shape &out, const T *g, const I *idx, int64_t axis,
                       T *y) {
  int a = int(axis);
  int64_t outer = detail::product(out, 0, a), size = out.dims[a];
  int64_t inner = detail::product(out, a + 1, out.rank);
  int64_t count = indices.numel();
  AccumOf<T> *acc = accumulatorFor(y, out.numel());
  int64_t n = outer * count * inner;
  if (n > 0)
    launch("dtcg_gather_grad", gridFor(n), kBlock,
           gatherGradKernel<T, I, AccumOf<T>>, n, size, count, inner, g, idx,
           acc, errorFlag());
  finishAccumulator(acc, y, out.numel());
}

//===----------------------------------------------------------------------===//
// Batched matrix products through views
//===----------------------------------------------------------------------===//

/// As dtck::MatrixView: element (batch coordinates c, row i, column p) of
/// an operand is at offset + sum(c[d] * batch[d]) + i * row + p * col.
struct MatrixView {
  int64_t offset = 0;
  int64_t batch[dtck::kMaxRank] = {};
  int64_t row = 0, col = 0;
};

/// Any view, one thread per result element (fp32 accumulation): the
/// products cuBLASLt cannot read.
template <typename T>
__global__ void matmulViewKernel(int64_t n, StridedRead batch, int64_t m,
                                 int64_t cols, int64_t k, const T *a,
                                 MatrixView va, const T *b, MatrixView vb,
                                 T *y) {
  DTCG_GRID_STRIDE(e, n) {
    int64_t j = e % cols, i = (e / cols) % m, rest = e / (cols * m);
    int64_t oa = va.offset, ob = vb.offset;
    for (int d = batch.rank - 1; d >= 0; --d) {
      int64_t c = rest % batch.dims[d];
      rest /= batch.dims[d];
      oa += c * va.batch[d];
      ob += c * vb.batch[d];
    }
    float acc = 0;
    for (int64_t p = 0; p < k; ++p)
      acc += float(a[oa + i * va.row + p * va.col]) *
             float(b[ob + p * vb.row + j * vb.col]);
    y[e] = T(acc);
  }
}

namespace detail {
/// One stride for batch dimensions [begin, rank) of a view, if its strides
/// there are that stride times the trailing batch sizes.
inline bool flatBatchStride(const MatrixView &v, const Shape &batch, int begin,
                            int64_t &stride) {
  stride = 0;
  int64_t inner = 1;
  bool set = false;
  for (int d = batch.rank - 1; d >= begin; --d) {
    if (batch.dims[d] != 1) {
      if (!set) {
        if (v.batch[d] % inner != 0)
          return false;
        stride = v.batch[d] / inner;
        set = true;
      }
      if (v.batch[d] != stride * inner)
        return false;
    }
    inner *= batch.dims[d];
  }
  return true;
}

/// Copies the [batch..., rows, cols] operand `x` read through `v` (offset
/// already applied) into contiguous `to`.
template <typename T>
inline void packView(const Shape &batch, int64_t rows, int64_t cols, const T *x,
                     const MatrixView &v, T *to) {
  StridedRead read;
  read.rank = batch.rank + 2;
  for (int d = 0; d < batch.rank; ++d) {
    read.dims[d] = batch.dims[d];
    read.strides[d] = v.batch[d];
  }
  read.dims[batch.rank] = rows;
  read.strides[batch.rank] = v.row;
  read.dims[batch.rank + 1] = cols;
  read.strides[batch.rank + 1] = v.col;
  stridedCopy("dtcg_matmul_pack", read, x, to);
}
} // namespace detail

/// y[..., m, n] = a[..., m, k] x b[..., k, n] with the operands read
/// through views; y is contiguous. Operands with one unit stride go to
/// cuBLASLt: the trailing batch dimensions whose strides flatten into one
/// are one strided-batched product, the leading ones a loop of those (an
/// attention product over [batch, heads] views of a [B, T, 3C] tensor is B
/// products of H). Other views go to matmulViewKernel.
template <typename T>
inline void matmulView(const Shape &sy, int64_t k, const T *a,
                       const MatrixView &va, const T *b, const MatrixView &vb,
                       T *y, Epilogue<T> ep = {}) {
  int r = sy.rank;
  int64_t m = sy.dims[r - 2], n = sy.dims[r - 1];
  Shape batch{r - 2, {}};
  for (int d = 0; d < r - 2; ++d)
    batch.dims[d] = sy.dims[d];
  int64_t numBatch = batch.numel();
  // The stride of a dimension of size 1 is free: pick a unit one.
  auto normalize = [](MatrixView v, int64_t rows, int64_t cols) {
    if (rows == 1)
      v.row = v.col == 1 ? cols : 1;
    if (cols == 1)
      v.col = v.row == 1 ? rows : 1;
    return v;
  };
  MatrixView ca = normalize(va, m, k), cb = normalize(vb, k, n);
  // A bias gradient where the product is not one cuBLASLt call (an operand
  // it cannot read, or an empty result): the sums after the product.
  auto sums = [&] {
    if (numBatch != 1)
      fatal("a bias gradient of a batched product");
    bool transA = ca.col != 1, transB = cb.col != 1;
    biasGradient(ep, transA, transB, m, n, k, a + ca.offset,
                 transA ? ca.col : ca.row, b + cb.offset,
                 transB ? cb.col : cb.row);
  };
  if (numBatch * m * n == 0) {
    if (ep.isBiasGrad())
      sums();
    return;
  }
  bool readable = (ca.col == 1 || ca.row == 1) &&
                  (cb.col == 1 || cb.row == 1) &&
                  (ca.col == 1 ? ca.row >= k : ca.col >= m) &&
                  (cb.col == 1 ? cb.row >= n : cb.col >= k) && k > 0;
  // The first batch dimension of the strided-batched products.
  int split = 0;
  int64_t strideA = 0, strideB = 0;
  while (readable && split <= batch.rank &&
         !(detail::flatBatchStride(ca, batch, split, strideA) &&
           detail::flatBatchStride(cb, batch, split, strideB)))
    ++split;
  // Leading batch dimensions that do not flatten (an attention product
  // over [batch, heads] views of a [B, T, 3C] tensor): the operands that
  // need it are packed contiguously, so that one strided-batched product
  // takes every batch (a loop of B small products leaves the GPU idle).
  if (readable && split > 0 &&
      numBatch / detail::product(batch, split, batch.rank) > 1) {
    auto pack = [&](const T *&x, MatrixView &v, int64_t rows, int64_t cols,
                    int slot) {
      int64_t stride = 0;
      if (detail::flatBatchStride(v, batch, 0, stride))
        return;
      T *to = static_cast<T *>(
          growingScratch(size_t(numBatch * rows * cols) * sizeof(T), slot));
      detail::packView(batch, rows, cols, x + v.offset, v, to);
      x = to;
      v = MatrixView{};
      for (int d = batch.rank - 1, at = 1; d >= 0; --d) {
        v.batch[d] = at * rows * cols;
        at *= int(batch.dims[d]);
      }
      v.row = cols;
      v.col = 1;
    };
    pack(a, ca, m, k, 2);
    pack(b, cb, k, n, 3);
    split = 0;
    detail::flatBatchStride(ca, batch, 0, strideA);
    detail::flatBatchStride(cb, batch, 0, strideB);
  }
  if (readable && split <= batch.rank) {
    bool transA = ca.col != 1, transB = cb.col != 1;
    int64_t inner = 1;
    for (int d = split; d < batch.rank; ++d)
      inner *= batch.dims[d];
    int64_t outer = numBatch / inner;
    for (int64_t o = 0; o < outer; ++o) {
      int64_t offA = ca.offset, offB = cb.offset, rest = o;
      for (int d = split - 1; d >= 0; --d) {
        int64_t c = rest % batch.dims[d];
        rest /= batch.dims[d];
        offA += c * ca.batch[d];
        offB += c * cb.batch[d];
      }
      Epilogue<T> at = ep;
      if (at.aux)
        at.aux += o * inner * m * n;
      gemmWithEpilogue<T>(transA, transB, m, n, k, 1.0f, a + offA,
                          transA ? ca.col : ca.row, strideA, b + offB,
                          transB ? cb.col : cb.row, strideB,
                          y + o * inner * m * n, inner, at);
    }
    return;
  }
  StridedRead shape;
  shape.rank = batch.rank;
  for (int d = 0; d < batch.rank; ++d)
    shape.dims[d] = batch.dims[d];
  int64_t total = numBatch * m * n;
  launch("dtcg_matmul_view", gridFor(total), kBlock, matmulViewKernel<T>, total,
         shape, m, n, k, a, va, b, vb, y);
  if (ep.isBiasGrad())
    sums();
  else if (ep.kind != EpilogueKind::None)
    launch("dtcg_matmul_epilogue", gridFor(total), kBlock, epilogueKernel<T, T>,
           total, n, y, y, ep);
}

/// dtg.matmul: NumPy-broadcast batched product of contiguous operands.
template <typename T>
inline void matmul(const Shape &sa, const Shape &sb, const Shape &sy,
                   const T *a, const T *b, T *y) {
  auto view = [&](const Shape &s) {
    MatrixView v;
    int lead = (sy.rank - 2) - (s.rank - 2);
    int64_t rows = s.dims[s.rank - 2], cols = s.dims[s.rank - 1];
    int64_t stride = rows * cols;
    for (int d = s.rank - 3; d >= 0; --d) {
      v.batch[d + lead] = s.dims[d] == 1 ? 0 : stride;
      stride *= s.dims[d];
    }
    v.row = cols;
    v.col = 1;
    return v;
  };
  matmulView(sy, sa.dims[sa.rank - 1], a, view(sa), b, view(sb), y);
}

//===----------------------------------------------------------------------===//
// Training
//===----------------------------------------------------------------------===//

template <typename T>
__global__ void
adamWKernel(int64_t n, const T *param, const T *grad, const T *expAvg,
            const T *expAvgSq, const double *lr, const double *beta1,
            const double *beta2, const double *eps, const double *weightDecay,
            const int64_t *step, T *newParam, T *newExpAvg, T *newExpAvgSq) {
  double t = double(*step < 1 ? 1 : *step);
  double lrV = *lr, b1 = *beta1, b2 = *beta2, epsV = *eps, wd = *weightDecay;
  double bc1 = 1 - ::pow(b1, t), bc2 = 1 - ::pow(b2, t);
  double stepSize = lrV / bc1, bc2Sqrt = ::sqrt(bc2);
  DTCG_GRID_STRIDE(k, n) {
    dtck::scalar::adamWStep(param[k], grad[k], expAvg[k], expAvgSq[k], lrV, b1,
                            b2, epsV, wd, stepSize, bc2Sqrt, newParam[k],
                            newExpAvg[k], newExpAvgSq[k]);
  }
}

template <typename T>
inline void
adamWUpdate(const Shape &s, const T *param, const T *grad, const T *expAvg,
            const T *expAvgSq, const double *lr, const double *beta1,
            const double *beta2, const double *eps, const double *weightDecay,
            const int64_t *step, T *newParam, T *newExpAvg, T *newExpAvgSq) {
  int64_t n = s.numel();
  if (n > 0)
    launch("dtcg_adamw", gridFor(n), kBlock, adamWKernel<T>, n, param, grad,
           expAvg, expAvgSq, lr, beta1, beta2, eps, weightDecay, step, newParam,
           newExpAvg, newExpAvgSq);
}

template <typename T>
__global__ void sgdKernel(int64_t n, const T *param, const T *grad,
                          const T *buf, const double *lr,
                          const double *momentum, const double *dampening,
                          const double *weightDecay, const bool *nesterov,
                          const bool *firstStep, T *newParam, T *newBuf) {
  double lrV = *lr, mom = *momentum, damp = *dampening, wd = *weightDecay;
  bool nest = *nesterov, first = *firstStep;
  DTCG_GRID_STRIDE(k, n) {
    dtck::scalar::sgdStep(param[k], grad[k], buf[k], lrV, mom, damp, wd, nest,
                          first, newParam[k], newBuf[k]);
  }
}

template <typename T>
inline void sgdUpdate(const Shape &s, const T *param, const T *grad,
                      const T *buf, const double *lr, const double *momentum,
                      const double *dampening, const double *weightDecay,
                      const bool *nesterov, const bool *firstStep, T *newParam,
                      T *newBuf) {
  int64_t n = s.numel();
  if (n > 0)
    launch("dtcg_sgd", gridFor(n), kBlock, sgdKernel<T>, n, param, grad, buf,
           lr, momentum, dampening, weightDecay, nesterov, firstStep, newParam,
           newBuf);
}

//===----------------------------------------------------------------------===//
// Multi-tensor optimizer steps: one launch updates up to kMultiTensors
// tensors (the emitter batches a run of updates with the same
// hyperparameters). A tensor's gradient may come with a scale (the
// gradient clipping's coefficient, a device scalar): the update reads
// dtck::scalar::mul(grad, *scale), as the multiplication it replaces
// computed it.
//===----------------------------------------------------------------------===//

constexpr int kMultiTensors = 24;

template <typename T> struct SgdTensor {
  int64_t n;
  const T *param, *grad, *gradScale, *buf;
  T *newParam, *newBuf;
};
template <typename T> struct AdamWTensor {
  int64_t n;
  const T *param, *grad, *gradScale, *expAvg, *expAvgSq;
  T *newParam, *newExpAvg, *newExpAvgSq;
};

/// Tensors of one launch: entry t covers elements [end[t-1], end[t]) of
/// the launch's index space.
template <typename E> struct TensorTable {
  int count = 0;
  int64_t end[kMultiTensors];
  E tensor[kMultiTensors];
};

/// The entry that element i of the launch belongs to, and its index there.
template <typename E>
DTCK_HD inline int locate(const TensorTable<E> &table, int64_t i, int64_t &k) {
  int lo = 0, hi = table.count - 1;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (i < table.end[mid])
      hi = mid;
    else
      lo = mid + 1;
  }
  k = i - (lo ? table.end[lo - 1] : 0);
  return lo;
}

template <typename T>
DTCK_HD inline T scaledGrad(const T *grad, const T *scale, int64_t k) {
  return scale ? dtck::scalar::mul(grad[k], *scale) : grad[k];
}

template <typename T>
__global__ void multiSgdKernel(TensorTable<SgdTensor<T>> table,
                               const double *lr, const double *momentum,
                               const double *dampening,
                               const double *weightDecay, const bool *nesterov,
                               const bool *firstStep) {
  double lrV = *lr, mom = *momentum, damp = *dampening, wd = *weightDecay;
  bool nest = *nesterov, first = *firstStep;
  DTCG_GRID_STRIDE(i, table.end[table.count - 1]) {
    int64_t k = 0;
    const SgdTensor<T> &e = table.tensor[locate(table, i, k)];
    dtck::scalar::sgdStep(e.param[k], scaledGrad(e.grad, e.gradScale, k),
                          e.buf[k], lrV, mom, damp, wd, nest, first,
                          e.newParam[k], e.newBuf[k]);
  }
}

template <typename T>
__global__ void
multiAdamWKernel(TensorTable<AdamWTensor<T>> table, const double *lr,
                 const double *beta1, const double *beta2, const double *eps,
                 const double *weightDecay, const int64_t *step) {
  double t = double(*step < 1 ? 1 : *step);
  double lrV = *lr, b1 = *beta1, b2 = *beta2, epsV = *eps, wd = *weightDecay;
  double bc1 = 1 - ::pow(b1, t), bc2 = 1 - ::pow(b2, t);
  double stepSize = lrV / bc1, bc2Sqrt = ::sqrt(bc2);
  DTCG_GRID_STRIDE(i, table.end[table.count - 1]) {
    int64_t k = 0;
    const AdamWTensor<T> &e = table.tensor[locate(table, i, k)];
    dtck::scalar::adamWStep(e.param[k], scaledGrad(e.grad, e.gradScale, k),
                            e.expAvg[k], e.expAvgSq[k], lrV, b1, b2, epsV, wd,
                            stepSize, bc2Sqrt, e.newParam[k], e.newExpAvg[k],
                            e.newExpAvgSq[k]);
  }
}

/// Calls launchTable(table, total) for each kMultiTensors of `tensors`.
template <typename E, typename L>
inline void forTables(std::initializer_list<E> tensors, L launchTable) {
  TensorTable<E> table;
  int64_t total = 0;
  auto flush = [&] {
    if (table.count && total > 0)
      launchTable(table, total);
    table = TensorTable<E>();
    total = 0;
  };
  for (const E &e : tensors) {
    total += e.n;
    table.end[table.count] = total;
    table.tensor[table.count++] = e;
    if (table.count == kMultiTensors)
      flush();
  }
  flush();
}

template <typename T>
inline void multiSgdUpdate(std::initializer_list<SgdTensor<T>> tensors,
                           const double *lr, const double *momentum,
                           const double *dampening, const double *weightDecay,
                           const bool *nesterov, const bool *firstStep) {
  forTables(tensors, [&](const TensorTable<SgdTensor<T>> &table,
                         int64_t total) {
    launch("dtcg_multi_sgd", gridFor(total), kBlock, multiSgdKernel<T>, table,
           lr, momentum, dampening, weightDecay, nesterov, firstStep);
  });
}

template <typename T>
inline void multiAdamWUpdate(std::initializer_list<AdamWTensor<T>> tensors,
                             const double *lr, const double *beta1,
                             const double *beta2, const double *eps,
                             const double *weightDecay, const int64_t *step) {
  forTables(
      tensors, [&](const TensorTable<AdamWTensor<T>> &table, int64_t total) {
        launch("dtcg_multi_adamw", gridFor(total), kBlock, multiAdamWKernel<T>,
               table, lr, beta1, beta2, eps, weightDecay, step);
      });
}

__global__ inline void lrScheduleKernel(const double *lr, const int64_t *step,
                                        const int64_t *warmup,
                                        const int64_t *total,
                                        const double *minLr,
                                        const int64_t *kind, double *result) {
  if (threadIdx.x != 0)
    return;
  *result =
      dtck::scalar::scheduledLr(*lr, *minLr, *step, *warmup, *total, *kind);
}

/// The runtime checks the schedule's kind before a step (Options.cpp).
inline void lrSchedule(const double *lr, const int64_t *step,
                       const int64_t *warmup, const int64_t *total,
                       const double *minLr, const int64_t *kind,
                       double *result) {
  launch("dtcg_lr_schedule", 1, 32, lrScheduleKernel, lr, step, warmup, total,
         minLr, kind, result);
}

} // namespace dtcg

#endif // DTCRT_CUDA_KERNELS_H
