// Kernels with planted bugs for the CUDA emulation's checks
// (emulation-checks.test). Built with the host compiler and
// -DDTCG_EMULATION; -DPLANT=oob writes one element past its buffer,
// -DPLANT=race drops the __syncthreads() between a shared-memory write and
// another thread's read of it, -DPLANT=none is correct.
#include "dtcrt/cuda/Device.h"

#include <cstdio>
#include <vector>

#define NONE 0
#define OOB 1
#define RACE 2

/// Each block reverses its 64 elements through shared memory.
__global__ void reverseBlocks(const float *x, float *y, int n) {
  DTCG_SHARED(float, tile, 64);
  int t = int(threadIdx.x), base = int(blockIdx.x) * 64;
  tile[t] = x[base + t];
#if PLANT != RACE
  __syncthreads();
#endif
  float v = tile[63 - t];
#if PLANT == OOB
  // The last thread of the last block writes y[n].
  if (blockIdx.x == gridDim.x - 1 && t == 63)
    y[n] = v;
  else
#endif
    y[base + t] = v;
}

int main() {
  const int n = 256;
  std::vector<float> host(n);
  for (int i = 0; i < n; ++i)
    host[i] = float(i);
  void *x = nullptr, *y = nullptr;
  dtcg::check(cudaMalloc(&x, n * sizeof(float)), "x");
  dtcg::check(cudaMalloc(&y, n * sizeof(float)), "y");
  dtcg::check(
      cudaMemcpy(x, host.data(), n * sizeof(float), cudaMemcpyHostToDevice),
      "copy");
  dtcg::launch("reverseBlocks", n / 64, 64, reverseBlocks,
               static_cast<const float *>(x), static_cast<float *>(y), n);
  std::vector<float> out(n);
  dtcg::check(
      cudaMemcpy(out.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost),
      "copy back");
  int wrong = 0;
  for (int i = 0; i < n; ++i)
    wrong += out[i] != float((i / 64) * 64 + 63 - i % 64);
  std::printf("reversed %d elements, %d wrong\n", n, wrong);
  return wrong != 0;
}
