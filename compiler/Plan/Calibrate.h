//===- Calibrate.h - measure this machine into a device profile ----*- C++
//-*-===//

#ifndef DTC_COMPILER_PLAN_CALIBRATE_H
#define DTC_COMPILER_PLAN_CALIBRATE_H

#include "passes/Analysis/CostModel.h"

#include "llvm/Support/raw_ostream.h"

namespace mlir::dtc {

/// Measures the CPU this runs on with `threads` OpenMP threads (0: OpenMP's
/// default) into a `cpu` device profile, by microbenchmarks of the CPU
/// target's own kernels (runtime/include/dtcrt/kernels) and of plain loops,
/// built as the CPU target builds a generated program (cpuHostBuild at
/// -march=native: dtcrt/calibrate/Microbench.h) and run in a child process:
///
/// - GEMM peak: the best rate of dtck::matmul over square products of 64 to
///   1024; efficiency.gemm the median over those sizes of rate / peak (how
///   far from its peak a GEMM of a typical small model runs);
/// - conv: dtck::conv of a 3x3 convolution, rate / GEMM peak;
/// - vector peak: a multiply-add loop on registers across the threads;
///   efficiency.elementwise: dtck::exp on cache-resident data, the cost
///   model's counted FLOPs per second / vector peak;
/// - efficiency.reduction: dtck::layerNorm and dtck::softmax likewise
///   (their mean);
/// - memory bandwidth: a streaming triad over arrays far larger than the
///   caches (efficiency.memory = 1: the triad is what kernels reach);
/// - kernel overhead: the mean time of six kernels (add, reduce_sum,
///   transpose, layer_norm, softmax, matmul) on 4x8 tensors, plus the fork
///   and join of an empty OpenMP parallel region.
///
/// Every rate counts FLOPs as estimateOpCost does, so the profile and the
/// cost model agree by construction. `log` gets one line per measurement.
FailureOr<DeviceProfile> calibrateCpu(int threads, llvm::raw_ostream &log,
                                      std::string &error);

/// Times the runtime's all-reduce between processes of this machine:
/// `mpirun --oversubscribe -np N dtc-comm-bench` (the tool beside this
/// executable, over the channels and ring collectives generated programs
/// use) for each N of `ranks`, from 8 B to 16 MiB. Records the medians in
/// `p.allReduceSamples` and fits each N's alpha-beta link to them (the
/// ring's t = 2(N-1) latency + 2(N-1)/N bytes / bandwidth, least squares in
/// relative error): the largest N within p.devicesPerNode sets
/// p.intraNode, the largest N beyond it (ranks sharing cores) p.interNode;
/// the network efficiency becomes 1 (the bandwidth is what collectives
/// reach). `log` gets one line per N.
LogicalResult calibrateMpi(ArrayRef<int64_t> ranks, DeviceProfile &p,
                           llvm::raw_ostream &log, std::string &error);

} // namespace mlir::dtc

#endif // DTC_COMPILER_PLAN_CALIBRATE_H
