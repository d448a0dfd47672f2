// The bias-gradient epilogue of the CUDA library's products
// (EpilogueKind::BiasGradA/B, emulation-bias-grad.test): dtcg::gemm and
// dtcg::matmulView compute the product and the sums over k of op(a) (one
// per row, [m]) or op(b) (one per column, [n]), for every transposition,
// against loops on the host; each line says which path ran. Built with the
// host compiler and -DDTCG_EMULATION, every product takes the library's
// fallback (the product, then dtcg_reduce_sum); built by nvcc and run on a
// GPU (scripts/gpu-check.sh), cuBLASLt's BGRADB/BGRADA where it has an
// algorithm. -DSTRIDED asks the fallback for the sums of an operand whose
// rows are not whole, which it refuses.
#include "dtcrt/cuda/Kernels.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace {

/// Whether cuBLASLt computed a bias gradient since the last call.
bool &epilogueRan() {
  static bool ran = false;
  return ran;
}
void markKernel(const char *name) {
  if (std::string(name) == "cublasLt matmul+bias gradient")
    epilogueRan() = true;
}
const char *path() {
  const char *name =
      epilogueRan() ? "cuBLASLt epilogue" : "product, then dtcg_reduce_sum";
  epilogueRan() = false;
  return name;
}

float *toDevice(const std::vector<float> &host) {
  void *p = nullptr;
  dtcg::check(cudaMalloc(&p, host.size() * sizeof(float)), "allocating");
  dtcg::check(cudaMemcpy(p, host.data(), host.size() * sizeof(float),
                         cudaMemcpyHostToDevice),
              "copying");
  return static_cast<float *>(p);
}

std::vector<float> toHost(const float *device, size_t count) {
  std::vector<float> host(count);
  dtcg::check(cudaMemcpy(host.data(), device, count * sizeof(float),
                         cudaMemcpyDeviceToHost),
              "copying back");
  return host;
}

/// Worst relative difference of `got` from `want` (in double).
double worst(const std::vector<float> &got, const std::vector<double> &want) {
  double w = 0;
  for (size_t i = 0; i < want.size(); ++i)
    w = std::max(w, std::fabs(got[i] - want[i]) /
                        std::max(1.0, std::fabs(want[i])));
  return w;
}

/// One product y[m, n] = op(a) op(b) with the sums of op(a)'s rows (left)
/// or op(b)'s columns, through dtcg::gemm; prints the worst differences.
int check(int64_t m, int64_t n, int64_t k, bool transA, bool transB,
          bool left) {
  std::vector<float> a(size_t(m * k)), b(size_t(k * n));
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = float((i * 37 % 101) - 50) / 32.0f;
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = float((i * 53 % 89) - 44) / 16.0f;
  // op(a)[i][p] and op(b)[p][j] on the host.
  auto opA = [&](int64_t i, int64_t p) {
    return double(transA ? a[size_t(p * m + i)] : a[size_t(i * k + p)]);
  };
  auto opB = [&](int64_t p, int64_t j) {
    return double(transB ? b[size_t(j * k + p)] : b[size_t(p * n + j)]);
  };
  std::vector<double> y(size_t(m * n)), sums(size_t(left ? m : n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p)
        y[size_t(i * n + j)] += opA(i, p) * opB(p, j);
  for (size_t s = 0; s < sums.size(); ++s)
    for (int64_t p = 0; p < k; ++p)
      sums[s] += left ? opA(int64_t(s), p) : opB(p, int64_t(s));
  float *da = toDevice(a), *db = toDevice(b);
  float *dy = toDevice(std::vector<float>(y.size(), -1.0f));
  float *dg = toDevice(std::vector<float>(sums.size(), -1.0f));
  dtck::Shape sa = transA ? dtck::Shape{2, {k, m}} : dtck::Shape{2, {m, k}};
  dtck::Shape sb = transB ? dtck::Shape{2, {n, k}} : dtck::Shape{2, {k, n}};
  dtcg::Epilogue<float> ep{left ? dtcg::EpilogueKind::BiasGradA
                                : dtcg::EpilogueKind::BiasGradB,
                           nullptr, nullptr, dg};
  dtcg::gemm<float>(sa, sb, dtck::Shape{0, {}}, da, db, nullptr, 1.0, 0.0,
                    transA, transB, dy, ep);
  double dyWorst = worst(toHost(dy, y.size()), y);
  double dgWorst = worst(toHost(dg, sums.size()), sums);
  std::printf("%ldx%ldx%ld trans %d%d %s: product %.1e, sums %.1e (%s)\n",
              long(m), long(n), long(k), int(transA), int(transB),
              left ? "rows of op(a)" : "columns of op(b)", dyWorst, dgWorst,
              path());
  for (float *p : {da, db, dy, dg})
    cudaFree(p);
  return dyWorst > 1e-6 || dgWorst > 1e-6;
}

/// The GPT's q/k/v weight gradient: G [rows, width] read through a
/// transposed view (matmulView), G^T X, the sums of G's columns; `every`:
/// X read through a view of every other element of a wider matrix (no
/// unit stride: not cuBLASLt's).
int checkView(int64_t rows, int64_t width, int64_t cols, int64_t every) {
  std::vector<float> g(size_t(rows * width)), x(size_t(rows * cols * every));
  for (size_t i = 0; i < g.size(); ++i)
    g[i] = float((i * 29 % 97) - 48) / 64.0f;
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float((i * 31 % 83) - 41) / 32.0f;
  std::vector<double> y(static_cast<size_t>(width * cols));
  std::vector<double> sums(static_cast<size_t>(width));
  for (int64_t i = 0; i < width; ++i) {
    for (int64_t p = 0; p < rows; ++p)
      sums[size_t(i)] += g[size_t(p * width + i)];
    for (int64_t j = 0; j < cols; ++j)
      for (int64_t p = 0; p < rows; ++p)
        y[size_t(i * cols + j)] += double(g[size_t(p * width + i)]) *
                                   x[size_t((p * cols + j) * every)];
  }
  float *dg = toDevice(g), *dx = toDevice(x);
  float *dy = toDevice(std::vector<float>(y.size(), -1.0f));
  float *ds = toDevice(std::vector<float>(sums.size(), -1.0f));
  dtcg::MatrixView va = {0, {}, 1, width}, vb = {0, {}, cols * every, every};
  dtcg::matmulView<float>(dtck::Shape{2, {width, cols}}, rows, dg, va, dx, vb,
                          dy,
                          dtcg::Epilogue<float>{dtcg::EpilogueKind::BiasGradA,
                                                nullptr, nullptr, ds});
  double dyWorst = worst(toHost(dy, y.size()), y);
  double dsWorst = worst(toHost(ds, sums.size()), sums);
  std::printf("view G^T X, G %ldx%ld, X strided by %ld: product %.1e, sums "
              "%.1e (%s)\n",
              long(rows), long(width), long(every), dyWorst, dsWorst, path());
  return dyWorst > 1e-6 || dsWorst > 1e-6;
}

} // namespace

int main() {
#ifdef STRIDED
  // Rows of a 4 x 3 op(a) read from a [4, 5] buffer: not whole.
  std::vector<float> a(20, 1.0f), b(12, 1.0f);
  float *da = toDevice(a), *db = toDevice(b), *dy = toDevice(a),
        *dg = toDevice(a);
  dtcg::gemmWithEpilogue<float>(
      false, false, 4, 4, 3, 1.0f, da, 5, 0, db, 4, 0, dy, 1,
      dtcg::Epilogue<float>{dtcg::EpilogueKind::BiasGradA, nullptr, nullptr,
                            dg});
  return 0;
#else
  dtcg::kernelMark() = markKernel;
  int failures = 0;
  for (bool left : {true, false})
    for (bool transA : {false, true})
      for (bool transB : {false, true})
        failures += check(7, 5, 33, transA, transB, left);
  // The sums of an empty product's operand.
  failures += check(7, 0, 33, true, false, true);
  failures += checkView(128, 96, 32, 1);
  failures += checkView(128, 96, 32, 2);
  std::printf("%d wrong\n", failures);
  return failures != 0;
#endif
}
