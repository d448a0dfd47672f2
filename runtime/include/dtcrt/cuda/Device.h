//===- Device.h - what generated CUDA code needs of the device ------------===//
//
// One header for the real device (nvcc, the CUDA runtime and cuBLASLt) and
// its host emulation (DTCG_EMULATION: the host compiler, Emulation.h, and
// host loops in place of cuBLASLt with the same accumulation). Everything
// runs on one stream per rank, in program order.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_CUDA_DEVICE_H
#define DTCRT_CUDA_DEVICE_H

#ifdef DTCG_EMULATION
#include "dtcrt/cuda/Emulation.h"
#include <dnnl.h>
#include <type_traits>
#define DTCG_SHARED(T, name, n) static ::dtcemu::SharedArray<T, n> name
#else
#include <chrono>
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <thread>
#define DTCG_SHARED(T, name, n) __shared__ T name[n]
#endif

#include "dtcrt/kernels/Common.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace dtcg {

/// The op running (its ONNX node), for error messages.
inline const char *&currentOp() {
  static const char *op = nullptr;
  return op;
}

[[noreturn]] inline void fatal(const std::string &what) {
  std::fprintf(stderr, "error: CUDA: %s%s%s\n", what.c_str(),
               currentOp() ? " (at " : "", currentOp() ? currentOp() : "");
  if (currentOp())
    std::fprintf(stderr, ")\n");
  std::fflush(stderr);
  std::exit(1);
}

inline void check(cudaError_t status, const char *what) {
  if (status != cudaSuccess)
    fatal(std::string(what) + ": " + cudaGetErrorString(status));
}

/// Picks this process's GPU, once, before any other CUDA call: under a
/// launcher, the node-local rank modulo the GPUs the node has (one rank per
/// GPU, as `mpirun -np <GPUs per node * nodes>` starts them).
inline void selectDevice() {
  static const bool selected = [] {
    const char *vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                          "SLURM_LOCALID", "LOCAL_RANK"};
    int local = 0;
    for (const char *var : vars)
      if (const char *text = std::getenv(var)) {
        local = std::atoi(text);
        break;
      }
    int devices = 0;
    check(cudaGetDeviceCount(&devices), "counting the GPUs");
    if (devices < 1)
      fatal("no GPU is visible to this process");
    check(cudaSetDevice(local % devices), "selecting this rank's GPU");
    return true;
  }();
  (void)selected;
}

/// A new stream on this process's GPU; `what` names it in a failure.
inline cudaStream_t createStream(const char *what) {
  selectDevice();
  cudaStream_t created = nullptr;
  check(cudaStreamCreate(&created), what);
  return created;
}

inline cudaStream_t &stream() {
  static cudaStream_t s = createStream("creating the compute stream");
  return s;
}

/// Bytes per element of a descriptor dtype (dtcrt.h).
inline int64_t dtypeBytes(const char *dtype) {
  std::string d = dtype;
  if (d == "f64" || d == "i64")
    return 8;
  if (d == "f32" || d == "i32")
    return 4;
  if (d == "f16" || d == "bf16" || d == "i16")
    return 2;
  return 1;
}

/// A device word kernels set when their input is invalid (an index out of
/// range); the step reads it once at its end.
inline int *errorFlag() {
  static int *flag = [] {
    void *p = nullptr;
    check(cudaMalloc(&p, sizeof(int)), "allocating the error flag");
    check(cudaMemsetAsync(p, 0, sizeof(int), stream()), "clearing it");
    return static_cast<int *>(p);
  }();
  return flag;
}

/// A device buffer of `bytes` that lives as long as the program (a fused
/// kernel's intermediate product that is not one of its outputs).
inline void *deviceScratch(size_t bytes) {
  void *p = nullptr;
  check(cudaMalloc(&p, bytes ? bytes : 1), "allocating a kernel's scratch");
  return p;
}

/// Host memory that the GPU copies from and to without a bounce buffer.
struct PinnedBuffer {
  void *data = nullptr;
  size_t bytes = 0;
  void *reserve(size_t n) {
    if (n > bytes) {
      if (data)
        check(cudaFreeHost(data), "freeing pinned host memory");
      check(cudaMallocHost(&data, n ? n : 1), "allocating pinned host memory");
      bytes = n;
    }
    return data;
  }
  PinnedBuffer() = default;
  PinnedBuffer(const PinnedBuffer &) = delete;
  PinnedBuffer &operator=(const PinnedBuffer &) = delete;
  ~PinnedBuffer() {
    if (data)
      cudaFreeHost(data);
  }
};

/// A device buffer of at least `bytes` that grows as needed, reused by
/// every call on the stream (which runs them in order): slot 0 holds
/// im2col's columns, slot 1 the float sums of a 16-bit gradient, slots 2
/// and 3 a batched product's packed operands, slot 4 cuDNN's workspace,
/// slot 5 a 16-bit product's float values before its epilogue, slot 6 a
/// column reduction's partial sums.
inline void *growingScratch(size_t bytes, int slot = 0) {
  static std::array<std::pair<void *, size_t>, 7> buffers{};
  auto &[p, size] = buffers.at(size_t(slot));
  if (bytes > size) {
    if (p) {
      check(cudaStreamSynchronize(stream()), "freeing a scratch buffer");
      check(cudaFree(p), "freeing a scratch buffer");
    }
    p = deviceScratch(bytes);
    size = bytes;
  }
  return p;
}

/// Four elements that a vectorized elementwise kernel moves as one access
/// (16 bytes of 32-bit elements): generated code uses it where every access
/// starts on a multiple of 4 elements from a buffer's start, and buffers
/// are aligned to 64 bytes (the memory planner) or more (cudaMalloc).
template <typename T> struct alignas(4 * sizeof(T)) Vec { T v[4]; };

/// Threads per block of the library's kernels.
constexpr unsigned kBlock = 256;

/// Blocks of a grid-stride loop over n elements: enough to fill the device,
/// 16 per multiprocessor (the emulation runs a few: its loops cover every
/// element anyway). Elementwise results do not depend on it.
inline unsigned gridFor(int64_t n) {
#ifdef DTCG_EMULATION
  constexpr int64_t kMaxBlocks = 2;
#else
  static const int64_t kMaxBlocks = [] {
    selectDevice();
    int device = 0, processors = 0;
    check(cudaGetDevice(&device), "asking for this process's GPU");
    check(cudaDeviceGetAttribute(&processors, cudaDevAttrMultiProcessorCount,
                                 device),
          "asking for the GPU's multiprocessor count");
    return int64_t(processors > 0 ? processors : 132) * 16;
  }();
#endif
  int64_t blocks = (n + kBlock - 1) / kBlock;
  if (blocks < 1)
    blocks = 1;
  return unsigned(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

/// Called with the name of every kernel and library call about to be
/// queued (DTCG_PROFILE_BY=kernel: Profile.h); null otherwise.
inline void (*&kernelMark())(const char *) {
  static void (*mark)(const char *) = nullptr;
  return mark;
}

/// Launches `kernel` on the compute stream.
template <typename... P, typename... A>
inline void launch(const char *name, dim3 grid, dim3 block,
                   void (*kernel)(P...), A... args) {
  if (kernelMark())
    kernelMark()(name);
#ifdef DTCG_EMULATION
  dtcemu::run(name, grid, block, [&] { kernel(P(args)...); });
#else
  kernel<<<grid, block, 0, stream()>>>(P(args)...);
  cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess)
    fatal(std::string("launching ") + name + ": " + cudaGetErrorString(status));
#endif
}

/// The index of this thread in a one-dimensional grid, and the grid's size.
#define DTCG_GRID_STRIDE(i, n) DTCG_GRID_STRIDE_AS(int64_t, i, n)
/// The same loop with index type I (`int` where n and the grid's size fit).
#define DTCG_GRID_STRIDE_AS(I, i, n)                                           \
  for (I i = I(blockIdx.x) * I(blockDim.x) + I(threadIdx.x); i < (n);          \
       i += I(gridDim.x) * I(blockDim.x))

/// Device memory to device memory, on the stream.
inline void copy(void *to, const void *from, int64_t bytes) {
  if (bytes > 0 && to != from)
    check(cudaMemcpyAsync(to, from, size_t(bytes), cudaMemcpyDeviceToDevice,
                          stream()),
          "copying on the device");
}

/// *address += value, atomically: CUDA's atomicAdd for float and double; a
/// compare-and-swap of the enclosing 32-bit word for the 16-bit floats (the
/// sum rounded once, from float).
template <typename T>
__device__ inline void atomicAddValue(T *address, T value) {
  if constexpr (sizeof(T) == 2) {
    auto at = reinterpret_cast<uintptr_t>(address);
    auto *word = reinterpret_cast<unsigned int *>(at & ~uintptr_t(3));
    unsigned shift = unsigned(at & 2) * 8;
    unsigned old = *word, assumed;
    do {
      assumed = old;
      uint16_t bits = uint16_t(assumed >> shift);
      T current;
      memcpy(&current, &bits, 2);
      T sum = T(float(current) + float(value));
      memcpy(&bits, &sum, 2);
      unsigned next =
          (assumed & ~(0xffffu << shift)) | (unsigned(bits) << shift);
      old = atomicCAS(word, assumed, next);
    } while (assumed != old);
  } else {
    atomicAdd(address, value);
  }
}

//===----------------------------------------------------------------------===//
// Reductions inside a block
//===----------------------------------------------------------------------===//

/// The sum of `v` over a warp (every lane gets it).
template <typename T> __device__ inline T warpSum(T v) {
  for (int offset = 16; offset > 0; offset /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}
template <typename T> __device__ inline T warpMax(T v) {
  for (int offset = 16; offset > 0; offset /= 2) {
    T o = __shfl_xor_sync(0xffffffffu, v, offset);
    v = o > v || o != o ? o : v;
  }
  return v;
}
template <typename T> __device__ inline T warpMin(T v) {
  for (int offset = 16; offset > 0; offset /= 2) {
    T o = __shfl_xor_sync(0xffffffffu, v, offset);
    v = o < v || o != o ? o : v;
  }
  return v;
}

/// Combines `v` over a warp with `op` (0 sum, 1 max, 2 min); every lane
/// gets the result.
template <typename T> __device__ inline T warpReduce(T v, int op) {
  return op == 0 ? warpSum(v) : op == 1 ? warpMax(v) : warpMin(v);
}

/// `v` combined with `o` by `op` (0 sum, 1 max, 2 min; NaN wins).
template <typename T> __device__ inline T combineOp(T v, T o, int op) {
  return op == 0   ? v + o
         : op == 1 ? (o > v || o != o ? o : v)
                   : (o < v || o != o ? o : v);
}

/// Combines `v` over threadIdx.y of a (32, Y <= 32) block, per column
/// threadIdx.x, with `op` (0 sum, 1 max, 2 min), in order of y; the threads
/// with y = 0 get the results.
template <typename T> __device__ inline T columnReduce(T v, int op) {
  DTCG_SHARED(T, part, 1024);
  __syncthreads(); // a previous call's readers are done with `part`
  part[threadIdx.y * 32 + threadIdx.x] = v;
  __syncthreads();
  if (threadIdx.y == 0)
    for (unsigned y = 1; y < blockDim.y; ++y)
      v = combineOp(v, T(part[y * 32 + threadIdx.x]), op);
  return v;
}

/// Combines every thread's `v` of a block (blockDim.x a multiple of 32, at
/// most 1024) with `op` (0 sum, 1 max, 2 min); every thread gets the result.
/// Warps reduce by shuffles, then the first warp reduces the warps' results
/// through shared memory.
template <typename T> __device__ inline T blockReduce(T v, int op) {
  // partial[w]: warp w's result; partial[32]: the block's.
  DTCG_SHARED(T, partial, 33);
  int lane = int(threadIdx.x % 32), warp = int(threadIdx.x / 32);
  int warps = int(blockDim.x / 32);
  v = op == 0 ? warpSum(v) : op == 1 ? warpMax(v) : warpMin(v);
  __syncthreads(); // a previous call's readers are done with `partial`
  if (lane == 0)
    partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    // Lanes past the last warp repeat a warp's result (harmless for max
    // and min) or add zero.
    T w = partial[lane < warps ? lane : lane % warps];
    if (op == 0 && lane >= warps)
      w = T(0);
    w = op == 0 ? warpSum(w) : op == 1 ? warpMax(w) : warpMin(w);
    if (lane == 0)
      partial[32] = w;
  }
  __syncthreads();
  return partial[32];
}

//===----------------------------------------------------------------------===//
// Matrix products (cuBLASLt; the emulation's host loops)
//===----------------------------------------------------------------------===//

/// Element type of a product.
enum class GemmType { F32, BF16, F16 };
template <typename T> constexpr GemmType gemmTypeOf();
template <> constexpr GemmType gemmTypeOf<float>() { return GemmType::F32; }
template <> constexpr GemmType gemmTypeOf<dtck::bf16>() {
  return GemmType::BF16;
}
template <> constexpr GemmType gemmTypeOf<dtck::f16>() { return GemmType::F16; }

/// What a product applies to its [m, n] result before storing it, as
/// cuBLASLt's epilogues do (in float, rounded once): `bias` ([n], the
/// result's type, broadcast over rows and batches) added, then ReLU or the
/// tanh-approximated GELU. `aux`, when set (GeluBias only), receives the
/// values before the GELU (product + bias), laid out as the result.
/// Or, one product (batch 1) besides its result: `biasGrad` receives the
/// sums over k of an operand, a bias's gradient where the product is its
/// weight's (X^T G, G^T X): of op(a)'s rows ([m], BiasGradA: cuBLASLt's
/// BGRADB, its B being our a) or of op(b)'s columns ([n], BiasGradB:
/// BGRADA).
enum class EpilogueKind {
  None,
  Bias,
  ReluBias,
  GeluBias,
  BiasGradA,
  BiasGradB
};
template <typename Y> struct Epilogue {
  EpilogueKind kind = EpilogueKind::None;
  const Y *bias = nullptr;
  Y *aux = nullptr;
  Y *biasGrad = nullptr;
  bool isBiasGrad() const {
    return kind == EpilogueKind::BiasGradA || kind == EpilogueKind::BiasGradB;
  }
  const char *name() const {
    return kind == EpilogueKind::Bias       ? "cublasLt matmul+bias"
           : kind == EpilogueKind::ReluBias ? "cublasLt matmul+bias+relu"
           : kind == EpilogueKind::GeluBias ? "cublasLt matmul+bias+gelu"
           : isBiasGrad()                   ? "cublasLt matmul+bias gradient"
                                            : "cublasLt matmul";
  }
};

/// Row-major strided batched product: for each b < batch,
/// y_b[m, n] = alpha * op(a_b) op(b_b) + beta * y_b, where op(x) is x or its
/// transpose, a_b = a + b * strideA (rows of lda elements), and so on; fp32
/// accumulation. y_b is contiguous (ldy = n); its type Y is T or float (a
/// 16-bit product kept in float, as dtck's kernels keep it). `ep` (with
/// beta 0 only) is applied to every y_b, its aux at y_b's offsets, where
/// cuBLASLt can; where it cannot (the emulation never does) nothing is
/// done and the result is false: the caller computes the plain product and
/// applies the epilogue itself (Kernels.h: gemmWithEpilogue).
template <typename T, typename Y = T>
bool gemmBatched(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                 float alpha, const T *a, int64_t lda, int64_t strideA,
                 const T *b, int64_t ldb, int64_t strideB, float beta, Y *y,
                 int64_t strideY, int64_t batch, Epilogue<Y> ep = {});

#ifdef DTCG_EMULATION
/// The emulation's cuBLASLt: oneDNN's sgemm on the host, the library the
/// CPU target's products call (16-bit operands widened to float first, the
/// result rounded once), so emulated and CPU programs sum alike.
template <typename T, typename Y>
bool gemmBatched(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                 float alpha, const T *a, int64_t lda, int64_t strideA,
                 const T *b, int64_t ldb, int64_t strideB, float beta, Y *y,
                 int64_t strideY, int64_t batch, Epilogue<Y> ep) {
  if (ep.kind != EpilogueKind::None)
    return false;
  if (kernelMark())
    kernelMark()("cublasLt matmul");
  auto widen = [](const auto *x, int64_t count, std::vector<float> &buffer) {
    buffer.resize(size_t(count));
    for (int64_t i = 0; i < count; ++i)
      buffer[size_t(i)] = float(x[i]);
    return buffer.data();
  };
  std::vector<float> aBuf, bBuf, yBuf;
  // The elements one product reads, from its first.
  int64_t aCount = transA ? (k - 1) * lda + m : (m - 1) * lda + k;
  int64_t bCount = transB ? (n - 1) * ldb + k : (k - 1) * ldb + n;
  for (int64_t bi = 0; bi < batch; ++bi) {
    const T *ab = a + bi * strideA, *bb = b + bi * strideB;
    Y *yb = y + bi * strideY;
    if (m == 0 || n == 0)
      continue;
    const float *af, *bf;
    if constexpr (std::is_same_v<T, float>) {
      af = ab;
      bf = bb;
    } else {
      af = widen(ab, aCount, aBuf);
      bf = widen(bb, bCount, bBuf);
    }
    float *yf;
    if constexpr (std::is_same_v<Y, float>)
      yf = yb;
    else
      yf = widen(yb, m * n, yBuf);
    if (k == 0) {
      for (int64_t i = 0; i < m * n; ++i)
        yf[i] = beta == 0 ? 0.0f : beta * yf[i];
    } else if (dnnl_sgemm(transA ? 'T' : 'N', transB ? 'T' : 'N', m, n, k,
                          alpha, af, lda, bf, ldb, beta, yf,
                          n) != dnnl_success) {
      fatal("the emulation's matrix product (oneDNN's sgemm) failed");
    }
    if constexpr (!std::is_same_v<Y, float>)
      for (int64_t i = 0; i < m * n; ++i)
        yb[i] = Y(yf[i]);
  }
  return true;
}
#else
inline cublasLtHandle_t ltHandle() {
  static cublasLtHandle_t handle = [] {
    cublasLtHandle_t h = nullptr;
    if (cublasLtCreate(&h) != CUBLAS_STATUS_SUCCESS)
      fatal("cublasLtCreate failed");
    return h;
  }();
  return handle;
}

/// cuBLASLt's workspace: 32 MiB, allocated once.
inline void *ltWorkspace(size_t &bytes) {
  bytes = size_t(32) << 20;
  static void *w = [] {
    void *p = nullptr;
    check(cudaMalloc(&p, size_t(32) << 20), "allocating cuBLASLt's workspace");
    return p;
  }();
  return w;
}

inline void checkLt(cublasStatus_t status, const char *what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    fatal(std::string("cuBLASLt ") + what + " failed (status " +
          std::to_string(int(status)) + ")");
}

/// A product's cuBLASLt descriptors and algorithm, made once per shape.
struct LtPlan {
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t lb, la, ly;
  cublasLtMatmulAlgo_t algo;
};

/// cuBLASLt's epilogue for `kind` (with `aux`: GELU_AUX_BIAS).
inline cublasLtEpilogue_t ltEpilogue(EpilogueKind kind, bool aux) {
  switch (kind) {
  case EpilogueKind::None:
    return CUBLASLT_EPILOGUE_DEFAULT;
  case EpilogueKind::Bias:
    return CUBLASLT_EPILOGUE_BIAS;
  case EpilogueKind::ReluBias:
    return CUBLASLT_EPILOGUE_RELU_BIAS;
  case EpilogueKind::GeluBias:
    return aux ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS : CUBLASLT_EPILOGUE_GELU_BIAS;
  // (cuBLASLt's operands are ours swapped: see makeLtPlan.)
  case EpilogueKind::BiasGradA:
    return CUBLASLT_EPILOGUE_BGRADB;
  case EpilogueKind::BiasGradB:
    return CUBLASLT_EPILOGUE_BGRADA;
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
}

/// The plan of a product; with an epilogue other than the default, `found`
/// is false when cuBLASLt has no algorithm for it (the caller applies the
/// epilogue itself), where a plain product without one is fatal.
inline LtPlan makeLtPlan(cudaDataType_t type, cudaDataType_t outType,
                         bool transA, bool transB, int64_t m, int64_t n,
                         int64_t k, int64_t lda, int64_t strideA, int64_t ldb,
                         int64_t strideB, int64_t strideY, int64_t batch,
                         cublasLtEpilogue_t epilogue, bool &found) {
  // Row-major y = op(a) op(b) is column-major y^T = op(b)^T op(a)^T:
  // cuBLASLt computes (n x m) = op'(b) (n x k) times op'(a) (k x m).
  LtPlan p;
  checkLt(cublasLtMatmulDescCreate(&p.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F),
          "matmul descriptor");
  cublasOperation_t opB = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opA = transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  checkLt(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA,
                                         &opB, sizeof(opB)),
          "transposition");
  checkLt(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB,
                                         &opA, sizeof(opA)),
          "transposition");
  checkLt(cublasLtMatrixLayoutCreate(&p.lb, type, transB ? k : n,
                                     transB ? n : k, ldb),
          "layout");
  checkLt(cublasLtMatrixLayoutCreate(&p.la, type, transA ? m : k,
                                     transA ? k : m, lda),
          "layout");
  checkLt(cublasLtMatrixLayoutCreate(&p.ly, outType, n, m, n), "layout");
  if (epilogue != CUBLASLT_EPILOGUE_DEFAULT) {
    checkLt(cublasLtMatmulDescSetAttribute(p.desc,
                                           CUBLASLT_MATMUL_DESC_EPILOGUE,
                                           &epilogue, sizeof(epilogue)),
            "epilogue");
    // The bias or its gradient (and the GELU's input kept for the
    // backward) in the result's type.
    checkLt(cublasLtMatmulDescSetAttribute(p.desc,
                                           CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                           &outType, sizeof(outType)),
            "bias type");
    if (epilogue == CUBLASLT_EPILOGUE_GELU_AUX_BIAS) {
      int64_t ld = n;
      checkLt(
          cublasLtMatmulDescSetAttribute(
              p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &ld, sizeof(ld)),
          "epilogue aux leading dimension");
      checkLt(cublasLtMatmulDescSetAttribute(
                  p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE,
                  &strideY, sizeof(strideY)),
              "epilogue aux batch stride");
      checkLt(cublasLtMatmulDescSetAttribute(
                  p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, &outType,
                  sizeof(outType)),
              "epilogue aux type");
    }
  }
  int32_t count = int32_t(batch);
  for (auto [layout, stride] :
       {std::pair{p.lb, strideB}, std::pair{p.la, strideA},
        std::pair{p.ly, strideY}}) {
    checkLt(cublasLtMatrixLayoutSetAttribute(layout,
                                             CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                             &count, sizeof(count)),
            "batch count");
    checkLt(cublasLtMatrixLayoutSetAttribute(
                layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                sizeof(stride)),
            "batch stride");
  }
  size_t workspaceBytes = 0;
  ltWorkspace(workspaceBytes);
  cublasLtMatmulPreference_t pref;
  checkLt(cublasLtMatmulPreferenceCreate(&pref), "preference");
  checkLt(cublasLtMatmulPreferenceSetAttribute(
              pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspaceBytes,
              sizeof(workspaceBytes)),
          "workspace preference");
  cublasLtMatmulHeuristicResult_t heuristic{};
  int algorithms = 0;
  cublasStatus_t status =
      cublasLtMatmulAlgoGetHeuristic(ltHandle(), p.desc, p.lb, p.la, p.ly, p.ly,
                                     pref, 1, &heuristic, &algorithms);
  cublasLtMatmulPreferenceDestroy(pref);
  found = status == CUBLAS_STATUS_SUCCESS && algorithms > 0;
  if (!found && epilogue == CUBLASLT_EPILOGUE_DEFAULT)
    fatal("cuBLASLt has no algorithm for a " + std::to_string(m) + "x" +
          std::to_string(n) + "x" + std::to_string(k) + " product (status " +
          std::to_string(int(status)) + ")");
  p.algo = heuristic.algo;
  return p;
}

/// Whether cuBLASLt's bias-gradient epilogue for `kind` sums what dtc
/// means by it (BiasGradA: op(a)'s rows; BiasGradB: op(b)'s columns) with
/// these element types and transpositions. Its mapping onto BGRADB and
/// BGRADA through the row-major swap (ltEpilogue) follows cuBLASLt's
/// documentation; each combination is checked once on the GPU, at its
/// first use, with a small product whose sums are integers (exact in every
/// type). Where the sums are not those, the run says so once and its
/// products leave their sums to gemmWithEpilogue (after the product), as
/// where cuBLASLt has no algorithm for the epilogue.
template <typename T, typename Y>
bool biasGradChecked(bool transA, bool transB, EpilogueKind kind) {
  enum State { Checking, Right, Wrong };
  static std::map<std::array<int, 3>, State> states;
  auto [it, first] =
      states.try_emplace({int(transA), int(transB), int(kind)}, Checking);
  if (!first)
    return it->second != Wrong; // (Checking: the check's own product)
  constexpr int64_t m = 24, n = 16, k = 40;
  bool left = kind == EpilogueKind::BiasGradA;
  std::vector<T> a(size_t(m * k)), b(size_t(k * n));
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = T(float(int(i * 7 % 9) - 4));
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = T(float(int(i * 5 % 7) - 3));
  std::vector<float> want(size_t(left ? m : n));
  for (int64_t s = 0; s < int64_t(want.size()); ++s)
    for (int64_t p = 0; p < k; ++p)
      want[size_t(s)] += left
                             ? float(a[size_t(transA ? p * m + s : s * k + p)])
                             : float(b[size_t(transB ? s * k + p : p * n + s)]);
  // (Device buffers kept: one check per combination.)
  T *da = nullptr, *db = nullptr;
  Y *dy = nullptr, *dg = nullptr;
  check(cudaMalloc(&da, a.size() * sizeof(T)), "checking cuBLASLt");
  check(cudaMalloc(&db, b.size() * sizeof(T)), "checking cuBLASLt");
  check(cudaMalloc(&dy, size_t(m * n) * sizeof(Y)), "checking cuBLASLt");
  check(cudaMalloc(&dg, want.size() * sizeof(Y)), "checking cuBLASLt");
  check(cudaMemcpyAsync(da, a.data(), a.size() * sizeof(T),
                        cudaMemcpyHostToDevice, stream()),
        "checking cuBLASLt");
  check(cudaMemcpyAsync(db, b.data(), b.size() * sizeof(T),
                        cudaMemcpyHostToDevice, stream()),
        "checking cuBLASLt");
  // (Not a kernel of the program: profiles do not see it.)
  auto mark = kernelMark();
  kernelMark() = nullptr;
  bool ran = gemmBatched<T, Y>(
      transA, transB, m, n, k, 1.0f, da, transA ? m : k, 0, db, transB ? k : n,
      0, 0.0f, dy, 0, 1, Epilogue<Y>{kind, nullptr, nullptr, dg});
  kernelMark() = mark;
  if (!ran) {
    it->second = Wrong; // no algorithm: no message
    return false;
  }
  // Waits for the compute stream (every collective before it was issued,
  // so peers get there), polling, with a limit rather than a hang.
  cudaEvent_t done = nullptr;
  check(cudaEventCreateWithFlags(&done, cudaEventDisableTiming),
        "checking cuBLASLt");
  check(cudaEventRecord(done, stream()), "checking cuBLASLt");
  auto start = std::chrono::steady_clock::now();
  for (cudaError_t status; (status = cudaEventQuery(done)) != cudaSuccess;) {
    if (status != cudaErrorNotReady)
      check(status, "checking cuBLASLt's bias gradient");
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(300))
      fatal("checking cuBLASLt's bias gradient: the compute stream did not "
            "finish within 300 s (is every rank alive?)");
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  cudaEventDestroy(done);
  std::vector<Y> got(want.size());
  check(cudaMemcpy(got.data(), dg, got.size() * sizeof(Y),
                   cudaMemcpyDeviceToHost),
        "checking cuBLASLt");
  bool right = true;
  for (size_t s = 0; s < want.size(); ++s)
    right = right && float(got[s]) == want[s];
  it->second = right ? Right : Wrong;
  if (!right)
    std::fprintf(stderr,
                 "dtcg: cuBLASLt's bias-gradient epilogue (%s, transposes "
                 "%d%d) did not give the sums expected on this GPU: bias "
                 "gradients are summed after their products instead\n",
                 left ? "BGRADB" : "BGRADA", int(transA), int(transB));
  return right;
}

template <typename T, typename Y>
bool gemmBatched(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                 float alpha, const T *a, int64_t lda, int64_t strideA,
                 const T *b, int64_t ldb, int64_t strideB, float beta, Y *y,
                 int64_t strideY, int64_t batch, Epilogue<Y> ep) {
  auto typeOf = [](GemmType t) {
    return t == GemmType::F32 ? CUDA_R_32F
           : t == GemmType::BF16 ? CUDA_R_16BF
                                 : CUDA_R_16F;
  };
  cudaDataType_t type = typeOf(gemmTypeOf<T>());
  cudaDataType_t outType = typeOf(gemmTypeOf<Y>());
  // cuBLASLt reads the bias (writes its gradient) and writes the aux
  // 16-byte aligned, the aux in rows of a multiple of 8 elements; a bias
  // gradient is of one unscaled product; otherwise (or with beta) the
  // epilogue runs as a kernel of its own after the product.
  auto aligned = [](const void *p) { return uintptr_t(p) % 16 == 0; };
  bool fuse = ep.kind != EpilogueKind::None;
  const void *biasPointer = ep.isBiasGrad() ? ep.biasGrad : ep.bias;
  if (fuse &&
      !(beta == 0.0f && aligned(biasPointer) &&
        (!ep.aux || (aligned(ep.aux) && n % 8 == 0 && strideY % 8 == 0)) &&
        (!ep.isBiasGrad() || (batch == 1 && alpha == 1.0f))))
    return false;
  if (ep.isBiasGrad() && !biasGradChecked<T, Y>(transA, transB, ep.kind))
    return false;
  cublasLtEpilogue_t epilogue =
      fuse ? ltEpilogue(ep.kind, ep.aux != nullptr) : CUBLASLT_EPILOGUE_DEFAULT;
  // Plans by everything they depend on: a step's products repeat every
  // step (and every layer), and a plan takes longer to make than to run.
  using Key = std::array<int64_t, 14>;
  static std::map<Key, std::pair<LtPlan, bool>> plans;
  Key key = {int64_t(type),
             int64_t(outType),
             transA,
             transB,
             m,
             n,
             k,
             lda,
             strideA,
             ldb,
             strideB,
             strideY,
             batch,
             int64_t(epilogue)};
  auto it = plans.find(key);
  if (it == plans.end()) {
    bool found = false;
    LtPlan plan =
        makeLtPlan(type, outType, transA, transB, m, n, k, lda, strideA, ldb,
                   strideB, strideY, batch, epilogue, found);
    it = plans.emplace(key, std::pair{plan, found}).first;
  }
  if (!it->second.second)
    return false; // no algorithm with this epilogue
  if (kernelMark())
    kernelMark()(ep.name());
  const LtPlan &p = it->second.first;
  if (fuse) {
    checkLt(cublasLtMatmulDescSetAttribute(p.desc,
                                           CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                           &biasPointer, sizeof(biasPointer)),
            "bias pointer");
    if (ep.aux)
      checkLt(cublasLtMatmulDescSetAttribute(
                  p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &ep.aux,
                  sizeof(ep.aux)),
              "epilogue aux pointer");
  }
  size_t workspaceBytes = 0;
  void *workspace = ltWorkspace(workspaceBytes);
  checkLt(cublasLtMatmul(ltHandle(), p.desc, &alpha, b, p.lb, a, p.la, &beta, y,
                         p.ly, y, p.ly, &p.algo, workspace, workspaceBytes,
                         stream()),
          "matmul");
  return true;
}
#endif

} // namespace dtcg

#endif // DTCRT_CUDA_DEVICE_H
