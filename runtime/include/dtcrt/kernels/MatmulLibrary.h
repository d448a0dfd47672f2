//===- MatmulLibrary.h - bf16 matrix products through oneDNN --------------===//
//
// oneDNN's matmul primitive for products of bf16 operands on CPUs with
// AVX512_BF16 (its brgemm kernels multiply bf16 pairs into float sums with
// vdpbf16ps): Matmul.h's matmulView and gemm take it instead of widening
// both operands to float for sgemm. Measured on the GPT example's shapes at
// one thread (1024 x 1024 x 256 and the like): 2.5 ms against 5.5-6.5 ms
// widened (test/bench/README.md). The sums are float sums of exact
// products, as widened, in oneDNN's order (and with its denormals flushed),
// rounded once to the result's type.
//
// The operands are read through their strides (a transposed weight or a
// head of attention needs no copy); a batch whose matrices lie a constant
// stride apart is one primitive, others one product at a time. Where the
// CPU lacks AVX512_BF16, oneDNN has only a reference kernel for a layout,
// or DTCK_MATMUL=widen is set (for comparisons), the kernels widen as
// before. A primitive is built once per geometry and thread and kept for
// the process, as ConvLibrary.h's are.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_KERNELS_MATMULLIBRARY_H
#define DTCRT_KERNELS_MATMULLIBRARY_H

#include "dtcrt/kernels/Common.h"
#include "dtcrt/kernels/Dnnl.h"

#include <array>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace dtck::nndetail {

/// The strides (in elements) of a batch of matrices: from one matrix to
/// the next (0: every product reads the same one), a row and a column.
struct BatchStrides {
  int64_t batch = 0, row = 0, col = 0;
};

/// Multiply-adds below which a product runs on one thread: oneDNN would
/// split any product across all of them, and at 2 threads the example
/// GPT's small products (16 x 32 and the like) took longer than at one.
constexpr int64_t kLibraryParallelWork = int64_t(1) << 20;

/// OpenMP's thread count for the calling thread set to 1 while in scope
/// when `serial` (oneDNN sizes its work by it, when a primitive is made
/// and when it runs), then restored.
class SerialScope {
public:
  explicit SerialScope(bool serial) {
#ifdef _OPENMP
    if (serial && !omp_in_parallel()) {
      saved = omp_get_max_threads();
      omp_set_num_threads(1);
    }
#endif
  }
  ~SerialScope() {
#ifdef _OPENMP
    if (saved > 0)
      omp_set_num_threads(saved);
#endif
  }
  SerialScope(const SerialScope &) = delete;
  SerialScope &operator=(const SerialScope &) = delete;

private:
  int saved = 0;
};

/// y[b] = a[b] x b[b] for `batch` products of [m, k] by [k, n] bf16
/// matrices read through strides, into a contiguous y of `yType` (bf16 or
/// f32), as one oneDNN matmul primitive (on one thread when small).
class DnnlMatmul {
public:
  DnnlMatmul(int64_t batch, int64_t m, int64_t n, int64_t k, BatchStrides sa,
             BatchStrides sb, dnnl_data_type_t yType)
      : serial(batch * m * n * k < kLibraryParallelWork) {
    if (!dnnlEngine() || !dnnlStream())
      return;
    SerialScope scope(serial);
    int rank = batch > 1 ? 3 : 2;
    int64_t bBatch = sb.batch == 0 ? 1 : batch;
    dnnl_dims_t aDims = {batch, m, k}, bDims = {bBatch, k, n},
                yDims = {batch, m, n};
    dnnl_dims_t aStrides = {sa.batch, sa.row, sa.col},
                bStrides = {sb.batch, sb.row, sb.col}, yStrides = {m * n, n, 1};
    // Two dimensions: the matrices' (the batch's entries dropped).
    int first = rank == 3 ? 0 : 1;
    dnnl_memory_desc_t aDesc, bDesc, yDesc;
    if (dnnl_memory_desc_init_by_strides(&aDesc, rank, aDims + first, dnnl_bf16,
                                         aStrides + first) != dnnl_success ||
        dnnl_memory_desc_init_by_strides(&bDesc, rank, bDims + first, dnnl_bf16,
                                         bStrides + first) != dnnl_success ||
        dnnl_memory_desc_init_by_strides(&yDesc, rank, yDims + first, yType,
                                         yStrides + first) != dnnl_success)
      return;
    dnnl_matmul_desc_t desc;
    if (dnnl_matmul_desc_init(&desc, &aDesc, &bDesc, nullptr, &yDesc) !=
            dnnl_success ||
        dnnl_primitive_desc_create(&pd, &desc, nullptr, dnnlEngine(),
                                   nullptr) != dnnl_success) {
      pd = nullptr;
      return;
    }
    // A reference kernel would be slower than widening.
    const char *impl = nullptr;
    if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) !=
            dnnl_success ||
        !impl || std::strstr(impl, "ref"))
      return;
    if (dnnl_primitive_create(&primitive, pd) != dnnl_success) {
      primitive = nullptr;
      return;
    }
    const dnnl_memory_desc_t *descs[3] = {&aDesc, &bDesc, &yDesc};
    for (int i = 0; i < 3; ++i)
      if (dnnl_memory_create(&memory[i], descs[i], dnnlEngine(),
                             DNNL_MEMORY_NONE) != dnnl_success) {
        memory[i] = nullptr;
        return;
      }
    ready = true;
  }

  ~DnnlMatmul() {
    for (dnnl_memory_t m : memory)
      if (m)
        dnnl_memory_destroy(m);
    if (primitive)
      dnnl_primitive_destroy(primitive);
    if (pd)
      dnnl_primitive_desc_destroy(pd);
  }
  DnnlMatmul(const DnnlMatmul &) = delete;
  DnnlMatmul &operator=(const DnnlMatmul &) = delete;

  /// True when oneDNN has a kernel (not a reference one) for this product.
  bool ok() const { return ready; }

  /// Runs the product of the matrices at `a` and `b` into `y`; false if
  /// oneDNN failed (then `y` is unspecified and the caller computes it).
  bool run(const void *a, const void *b, void *y) {
    SerialScope scope(serial);
    const void *data[3] = {a, b, y};
    for (int i = 0; i < 3; ++i)
      if (dnnl_memory_set_data_handle(memory[i], const_cast<void *>(data[i])) !=
          dnnl_success)
        return false;
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, memory[0]},
                               {DNNL_ARG_WEIGHTS, memory[1]},
                               {DNNL_ARG_DST, memory[2]}};
    return dnnl_primitive_execute(primitive, dnnlStream(), 3, args) ==
               dnnl_success &&
           dnnl_stream_wait(dnnlStream()) == dnnl_success;
  }

private:
  bool serial;
  bool ready = false;
  dnnl_primitive_desc_t pd = nullptr;
  dnnl_primitive_t primitive = nullptr;
  dnnl_memory_t memory[3] = {nullptr, nullptr, nullptr};
};

/// True when bf16 products go to oneDNN: the CPU has AVX512_BF16 (as
/// oneDNN sees it) and DTCK_MATMUL=widen is not set.
inline bool bf16MatmulLibraryEnabled() {
  static const bool enabled = [] {
    const char *choice = std::getenv("DTCK_MATMUL");
    return !(choice && std::strcmp(choice, "widen") == 0) && dnnlHasBf16();
  }();
  return enabled;
}

/// This thread's primitive for `batch` bf16 products of [m, k] by [k, n]
/// through the strides `sa` and `sb` into a contiguous y of `yType`, or
/// nullptr where the kernels widen instead (see the file comment).
inline DnnlMatmul *bf16MatmulFor(int64_t batch, int64_t m, int64_t n, int64_t k,
                                 BatchStrides sa, BatchStrides sb,
                                 dnnl_data_type_t yType) {
  if (!bf16MatmulLibraryEnabled() || m == 0 || n == 0 || k == 0 ||
      sa.batch < 0 || sb.batch < 0 || sa.row < 0 || sa.col < 0 || sb.row < 0 ||
      sb.col < 0)
    return nullptr;
  using Key = std::array<int64_t, 11>;
  Key key = {batch,
             m,
             n,
             k,
             sa.batch,
             sa.row,
             sa.col,
             sb.batch,
             sb.row,
             sb.col,
             static_cast<int64_t>(yType)};
  // Never freed: see ConvLibrary.h.
  thread_local auto *cache = new std::map<Key, std::unique_ptr<DnnlMatmul>>();
  std::unique_ptr<DnnlMatmul> &entry = (*cache)[key];
  if (!entry)
    entry = std::make_unique<DnnlMatmul>(batch, m, n, k, sa, sb, yType);
  return entry->ok() ? entry.get() : nullptr;
}

} // namespace dtck::nndetail

#endif // DTCRT_KERNELS_MATMULLIBRARY_H
