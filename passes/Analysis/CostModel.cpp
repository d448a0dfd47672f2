//===- CostModel.cpp - per-op FLOPs, bytes and roofline time --------------===//

#include "passes/Analysis/CostModel.h"

#include "dialects/DTG/IR/DTGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// FLOP weights of one scalar operation (see CostModel.h).
constexpr double kArith = 1, kDiv = 4, kTranscendental = 8;

/// Elements of a statically shaped tensor type; 0 for anything else.
double numElements(Type type) {
  auto t = dyn_cast<ShapedType>(type);
  if (!t || !t.hasStaticShape())
    return 0;
  return double(t.getNumElements());
}

/// Bytes of a statically shaped tensor type (sub-byte elements round up to
/// a byte); 0 for anything else.
double byteSize(Type type) {
  auto t = dyn_cast<ShapedType>(type);
  if (!t || !t.hasStaticShape())
    return 0;
  Type e = t.getElementType();
  unsigned bits = e.isIntOrIndexOrFloat() ? e.getIntOrFloatBitWidth() : 0;
  if (isa<IndexType>(e))
    bits = 64;
  return double(t.getNumElements()) * double((bits + 7) / 8);
}

double elems(Value v) { return numElements(v.getType()); }

/// Size of dimension `d` of `v` (negative counts from the back); 0 if not
/// a ranked static dimension.
double dimSize(Value v, int64_t d) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t || t.getRank() == 0)
    return 0;
  if (d < 0)
    d += t.getRank();
  if (d < 0 || d >= t.getRank() || t.isDynamicDim(d))
    return 0;
  return double(t.getDimSize(d));
}

/// Product of dims [1, rank) of a convolution weight [F, C/group, K...]:
/// multiply-adds per output element.
double kernelVolume(Value weight) {
  auto t = dyn_cast<RankedTensorType>(weight.getType());
  if (!t || t.getRank() < 2 || !t.hasStaticShape())
    return 0;
  double v = 1;
  for (int64_t d = 1; d < t.getRank(); ++d)
    v *= double(t.getDimSize(d));
  return v;
}

double product(ArrayRef<int64_t> values) {
  double p = 1;
  for (int64_t v : values)
    p *= double(std::max<int64_t>(v, 0));
  return p;
}

/// FLOPs per result element of an elementwise op; -1 if `op` is not one.
double elementwiseWeight(Operation *op) {
  return llvm::TypeSwitch<Operation *, double>(op)
      .Case<dtg::NegOp, dtg::AbsOp, dtg::SignOp, dtg::FloorOp, dtg::CeilOp,
            dtg::RoundOp, dtg::ReluOp, dtg::NotOp, dtg::IsNanOp, dtg::IsInfOp,
            dtg::AddOp, dtg::SubOp, dtg::MulOp, dtg::MaxOp, dtg::MinOp,
            dtg::AndOp, dtg::OrOp, dtg::XorOp, dtg::EqualOp, dtg::LessOp,
            dtg::LessEqualOp, dtg::GreaterOp, dtg::GreaterEqualOp, dtg::WhereOp,
            dtg::CastOp, dtg::ThresholdedReluOp>([](auto) { return kArith; })
      .Case<dtg::LeakyReluOp, dtg::ClipOp>([](auto) { return 2 * kArith; })
      .Case<dtg::HardSigmoidOp>([](auto) { return 4 * kArith; })
      .Case<dtg::DivOp, dtg::SqrtOp, dtg::RsqrtOp, dtg::ReciprocalOp>(
          [](auto) { return kDiv; })
      .Case<dtg::ModOp>([](auto) { return kDiv + 2 * kArith; })
      .Case<dtg::SoftsignOp>([](auto) { return kDiv + 2 * kArith; })
      .Case<dtg::ExpOp, dtg::LogOp, dtg::SinOp, dtg::CosOp, dtg::TanOp,
            dtg::AsinOp, dtg::AcosOp, dtg::AtanOp, dtg::SinhOp, dtg::CoshOp,
            dtg::AsinhOp, dtg::AcoshOp, dtg::AtanhOp, dtg::TanhOp, dtg::ErfOp>(
          [](auto) { return kTranscendental; })
      // 1 / (1 + exp(-x)).
      .Case<dtg::SigmoidOp>(
          [](auto) { return kTranscendental + kArith + kDiv; })
      // log(1 + exp(x)).
      .Case<dtg::SoftplusOp>([](auto) { return 2 * kTranscendental + kArith; })
      // x * 0.5 * (1 + erf(x / sqrt 2)) or the tanh form.
      .Case<dtg::GeluOp>([](auto) { return kTranscendental + 4 * kArith; })
      .Case<dtg::EluOp, dtg::CeluOp, dtg::SeluOp>(
          [](auto) { return kTranscendental + 3 * kArith; })
      // exp(y log x).
      .Case<dtg::PowOp>([](auto) { return 2 * kTranscendental + kArith; })
      .Default([](Operation *) { return -1.0; });
}

/// Bytes of every operand and result of `op`.
double operandAndResultBytes(Operation *op) {
  double bytes = 0;
  for (Type t : op->getOperandTypes())
    bytes += byteSize(t);
  for (Type t : op->getResultTypes())
    bytes += byteSize(t);
  return bytes;
}

/// 2 x the multiply-adds of a contraction or convolution (the forward
/// convolution's, whose output is `grad` for both gradients), without
/// epilogues; -1 for other ops.
double contractionFlops(Operation *op) {
  double out = op->getNumResults() ? elems(op->getResult(0)) : 0;
  return llvm::TypeSwitch<Operation *, double>(op)
      .Case(
          [&](dtg::MatMulOp mm) { return 2 * out * dimSize(mm.getLhs(), -1); })
      .Case([&](dtg::GemmOp g) {
        return 2 * out * dimSize(g.getA(), g.getTransA() ? 0 : 1);
      })
      .Case([&](dtg::EinsumOp e) {
        // Product of every letter's size, times 2 for more than one operand.
        llvm::DenseMap<char, double> sizes;
        SmallVector<StringRef> terms;
        e.getEquation().split("->").first.split(terms, ',');
        for (auto [term, v] : llvm::zip(terms, e.getInputs())) {
          auto t = dyn_cast<RankedTensorType>(v.getType());
          if (!t || !t.hasStaticShape())
            continue;
          for (auto [k, c] : llvm::enumerate(term))
            if (int64_t(k) < t.getRank())
              sizes[c] = std::max(sizes[c], double(t.getDimSize(k)));
        }
        double f = terms.size() > 1 ? 2 : 1;
        for (auto &entry : sizes)
          f *= entry.second;
        return f;
      })
      .Case(
          [&](dtg::ConvOp c) { return 2 * out * kernelVolume(c.getWeight()); })
      .Case([&](dtg::ConvInputGradOp g) {
        return 2 * elems(g.getGrad()) * kernelVolume(g.getWeight());
      })
      .Case([&](dtg::ConvWeightGradOp g) {
        return 2 * elems(g.getGrad()) * kernelVolume(g.getResult());
      })
      .Default([](Operation *) { return -1.0; });
}

/// FLOPs and class of an op without a region.
std::pair<double, OpClass> flopsOf(Operation *op) {
  using R = std::pair<double, OpClass>;
  double out = op->getNumResults() ? elems(op->getResult(0)) : 0;
  double weight = elementwiseWeight(op);
  if (weight >= 0)
    return {weight * out, OpClass::Elementwise};
  double macs = contractionFlops(op);
  if (macs >= 0) {
    // gemm's `beta * c +` epilogue: 2 per result element; conv's bias: 1.
    if (auto g = dyn_cast<dtg::GemmOp>(op))
      return {macs + (g.getC() ? 2 * out : 0), OpClass::Gemm};
    if (auto c = dyn_cast<dtg::ConvOp>(op))
      return {macs + (c.getBias() ? out : 0), OpClass::Conv};
    return {macs, isa<dtg::MatMulOp, dtg::GemmOp, dtg::EinsumOp>(op)
                      ? OpClass::Gemm
                      : OpClass::Conv};
  }
  return llvm::TypeSwitch<Operation *, R>(op)
      // Pooling: one compare or add per window tap, plus the average's
      // divide; gradients visit the same taps and add once per output.
      .Case([&](dtg::MaxPoolOp p) {
        return R{out * product(p.getKernel()), OpClass::Reduction};
      })
      .Case([&](dtg::AvgPoolOp p) {
        return R{out * (product(p.getKernel()) + kDiv), OpClass::Reduction};
      })
      .Case([&](dtg::MaxPoolGradOp p) {
        return R{elems(p.getGrad()) * (product(p.getKernel()) + kArith),
                 OpClass::Reduction};
      })
      .Case([&](dtg::AvgPoolGradOp p) {
        return R{elems(p.getGrad()) * (product(p.getKernel()) + kDiv),
                 OpClass::Reduction};
      })
      // Normalizations, per element: mean 1, variance 3 (subtract, square,
      // accumulate), normalize 3 (subtract, times 1/std, times scale), bias 1.
      .Case([&](dtg::LayerNormOp n) {
        return R{elems(n.getInput()) * (7 + (n.getBias() ? 1 : 0)),
                 OpClass::Reduction};
      })
      .Case([&](dtg::BatchNormTrainingOp n) {
        return R{elems(n.getInput()) * 8, OpClass::Reduction};
      })
      // (x - mean) / std * scale + bias with std precomputed per channel.
      .Case([&](dtg::BatchNormInferenceOp n) {
        return R{elems(n.getInput()) * 4, OpClass::Reduction};
      })
      // max 1, subtract 1, exp, sum 1, divide (softmax) or subtract
      // (log_softmax: the log is per row) 1.
      .Case<dtg::SoftmaxOp, dtg::LogSoftmaxOp>([&](Operation *) {
        return R{out * (4 * kArith + kTranscendental), OpClass::Reduction};
      })
      // A random number, a compare and a multiply per element.
      .Case([&](dtg::DropoutOp d) {
        return R{elems(d.getOperand()) * (kTranscendental + 2 * kArith),
                 OpClass::Elementwise};
      })
      // Reductions: one operation per operand element (mean divides once
      // per result element; logsumexp takes an exp per element, a log per
      // result).
      .Case<dtg::ReduceSumOp, dtg::ReduceMaxOp, dtg::ReduceMinOp,
            dtg::ReduceProdOp, dtg::ArgMaxOp, dtg::ArgMinOp, dtg::CumSumOp>(
          [&](Operation *o) {
            return R{elems(o->getOperand(0)) * kArith, OpClass::Reduction};
          })
      .Case([&](dtg::ReduceMeanOp o) {
        return R{elems(o->getOperand(0)) * kArith + out * kDiv,
                 OpClass::Reduction};
      })
      .Case([&](dtg::ReduceLogSumExpOp o) {
        return R{elems(o->getOperand(0)) * (kTranscendental + 2 * kArith) +
                     out * kTranscendental,
                 OpClass::Reduction};
      })
      // A gather and an add per target (a multiply more with weights), one
      // divide for the mean.
      .Case([&](dtg::NllLossOp n) {
        return R{elems(n.getTarget()) * (n.getWeight() ? 3 : 1) * kArith + kDiv,
                 OpClass::Reduction};
      })
      // Scatter-add: one add per gradient element.
      .Case([&](dtg::GatherGradOp g) {
        return R{elems(g.getGrad()) * kArith, OpClass::DataMovement};
      })
      // SGD per element: weight decay 2, momentum 3, Nesterov 2, update 2.
      .Case([&](dtg::SgdUpdateOp u) {
        return R{elems(u.getParam()) * 9 * kArith, OpClass::Reduction};
      })
      // AdamW per element: decay 2, first moment 3, second moment 4, bias
      // corrections 2, sqrt, + eps 1, divide, update 2.
      .Case([&](dtg::AdamWUpdateOp u) {
        return R{elems(u.getParam()) * (14 * kArith + 2 * kDiv),
                 OpClass::Reduction};
      })
      // A handful of scalar operations and a cosine.
      .Case([&](dtg::LrScheduleOp) {
        return R{kTranscendental + 8 * kArith, OpClass::Elementwise};
      })
      .Default([](Operation *) {
        return R{0, OpClass::DataMovement};
      });
}

/// The ops of `op`'s regions that are counted (no terminators, no nested
/// region holders), in order.
SmallVector<Operation *> regionOps(Operation *op) {
  SmallVector<Operation *> ops;
  op->walk([&](Operation *inner) {
    if (inner == op || inner->getNumRegions() > 0 ||
        inner->hasTrait<OpTrait::IsTerminator>())
      return;
    ops.push_back(inner);
  });
  return ops;
}

bool isFree(Operation *op) {
  return isa<dtg::ConstantOp, dtg::ReshapeOp, func::CallOp, func::ReturnOp>(
             op) ||
         op->hasTrait<OpTrait::IsTerminator>();
}

/// Seconds of compute of an op without a region.
double computeSeconds(Operation *op, const DeviceProfile &p) {
  auto [flops, cls] = flopsOf(op);
  if (flops <= 0)
    return 0;
  unsigned bits = 32;
  if (op->getNumResults())
    if (auto t = dyn_cast<ShapedType>(op->getResult(0).getType()))
      if (t.getElementType().isIntOrFloat())
        bits = t.getElementType().getIntOrFloatBitWidth();
  double rate = 0;
  switch (cls) {
  case OpClass::Gemm:
    rate = peakGemmFlopsFor(p, bits) * p.efficiency.gemm;
    break;
  case OpClass::Conv:
    rate = peakGemmFlopsFor(p, bits) * p.efficiency.conv;
    break;
  case OpClass::Elementwise:
  case OpClass::DataMovement:
    rate = p.peakVectorFlops * p.efficiency.elementwise;
    break;
  case OpClass::Reduction:
    rate = p.peakVectorFlops * p.efficiency.reduction;
    break;
  }
  return rate > 0 ? flops / rate : 0;
}

} // namespace

bool mlir::dtc::isKernelOp(Operation *op) {
  if (isFree(op))
    return false;
  Operation *parent = op->getParentOp();
  return !parent || isa<func::FuncOp, ModuleOp>(parent);
}

OpCost mlir::dtc::estimateOpCost(Operation *op) {
  OpCost cost;
  if (isFree(op))
    return cost;
  if (op->getNumRegions() > 0) {
    for (Operation *inner : regionOps(op)) {
      auto [flops, cls] = flopsOf(inner);
      cost.flops += flops;
      cost.gemmLike |= cls == OpClass::Gemm || cls == OpClass::Conv;
    }
    cost.bytes = operandAndResultBytes(op);
    return cost;
  }
  auto [flops, cls] = flopsOf(op);
  cost.flops = flops;
  cost.gemmLike = cls == OpClass::Gemm || cls == OpClass::Conv;
  cost.bytes = operandAndResultBytes(op);
  return cost;
}

double mlir::dtc::estimateModelFlops(Operation *op) {
  if (op->getNumRegions() == 0)
    return std::max(0.0, contractionFlops(op));
  double flops = 0;
  for (Operation *inner : regionOps(op))
    flops += std::max(0.0, contractionFlops(inner));
  return flops;
}

OpClass mlir::dtc::classifyOp(Operation *op) {
  if (op->getNumRegions() == 0)
    return flopsOf(op).second;
  OpClass best = OpClass::DataMovement;
  double bestFlops = 0;
  for (Operation *inner : regionOps(op)) {
    auto [flops, cls] = flopsOf(inner);
    if (flops > bestFlops) {
      bestFlops = flops;
      best = cls;
    }
  }
  return best;
}

double mlir::dtc::peakGemmFlopsFor(const DeviceProfile &p, unsigned bitWidth) {
  if (bitWidth <= 16 && p.peakGemmFlops16 > 0)
    return p.peakGemmFlops16;
  return p.peakGemmFlops;
}

double mlir::dtc::estimateOpSeconds(Operation *op, const DeviceProfile &p) {
  if (isFree(op))
    return 0;
  double compute = 0;
  if (op->getNumRegions() > 0) {
    for (Operation *inner : regionOps(op))
      compute += computeSeconds(inner, p);
  } else {
    compute = computeSeconds(op, p);
  }
  double bandwidth = p.memoryBandwidth * p.efficiency.memory;
  double memory = bandwidth > 0 ? operandAndResultBytes(op) / bandwidth : 0;
  return std::max(compute, memory) + p.kernelOverheadS;
}

//===----------------------------------------------------------------------===//
// Device profiles
//===----------------------------------------------------------------------===//

namespace {

/// The built-in profiles.
///
/// `cpu` was measured by `dtc calibrate --threads 2` on the development
/// machine (2 vCPUs of an AMD EPYC with AVX-512 at 2.6 GHz, Debian 12,
/// OpenBLAS 0.3.21, shared with concurrent builds) on 2026-11-22: the best
/// of five runs for each figure, since contention only ever slows a run
/// down. The kernels are built with -O2 and no -march, like the generated
/// code, so the vector peak is SSE2's (16 FLOPs per cycle per thread).
///
/// The GPU figures are the vendors' published dense peaks:
/// - NVIDIA A100 Tensor Core GPU datasheet (2021): fp32 GEMM through TF32
///   tensor cores 156 TFLOP/s, bf16/fp16 312 TFLOP/s, fp32 vector 19.5
///   TFLOP/s; HBM2 1,555 GB/s (40 GB) and HBM2e 2,039 GB/s (80 GB SXM).
/// - NVIDIA H100 Tensor Core GPU datasheet (SXM5): TF32 494.7, bf16/fp16
///   989.4 TFLOP/s dense (the 1,979 figure is with sparsity), fp32 vector
///   66.9 TFLOP/s, HBM3 3.35 TB/s.
/// - NVIDIA H200 Tensor Core GPU datasheet (SXM): the H100's compute, HBM3e
///   4.8 TB/s.
/// Their efficiency factors are typical published values, not measurements:
/// large-model training reaches 50-60% of the dense GEMM peak per GEMM
/// (Megatron-LM and PaLM report 40-57% MFU end to end, so GEMMs themselves
/// run at ~0.7), cuDNN convolutions ~0.6, memory-bound kernels ~80-90% of
/// HBM bandwidth (STREAM-like copies on A100/H100), and a kernel launch
/// costs ~5 us.
///
/// Memory and links, from the same datasheets and the DGX system guides:
/// A100 40 or 80 GiB with NVLink 3 (600 GB/s both ways: 300 GB/s one way),
/// DGX A100 nodes of 8 GPUs with one 200 Gb/s HDR InfiniBand port per GPU
/// (25 GB/s); H100 80 GiB with NVLink 4 (450 GB/s one way), DGX H100 nodes
/// of 8 with one 400 Gb/s NDR port per GPU (50 GB/s); H200 141 GB, links as
/// the H100's. Collectives reach ~80% of a link (nccl-tests' bus bandwidth
/// on DGX systems); a message costs ~2 us inside a node (NVLink) and ~5 us
/// across nodes (InfiniBand), typical small-message figures.
DeviceProfile gpuProfile(StringRef name, StringRef source, double gemm,
                         double gemm16, double vector, double bandwidth,
                         double memory, double nvlink, double infiniband) {
  DeviceProfile p;
  p.memoryCapacity = memory;
  p.intraNode = {nvlink, 2e-6};
  p.interNode = {infiniband, 5e-6};
  p.devicesPerNode = 8;
  p.networkEfficiency = 0.8;
  p.name = name.str();
  p.source = source.str();
  p.peakGemmFlops = gemm;
  p.peakGemmFlops16 = gemm16;
  p.peakVectorFlops = vector;
  p.memoryBandwidth = bandwidth;
  p.kernelOverheadS = 5e-6;
  p.threads = 1;
  p.efficiency = {/*gemm=*/0.7, /*conv=*/0.6, /*elementwise=*/0.5,
                  /*reduction=*/0.4, /*memory=*/0.85};
  return p;
}

DeviceProfile cpuProfile() {
  DeviceProfile p;
  p.name = "cpu";
  p.source = "dtc calibrate --threads 2 on 2 vCPUs of an AMD EPYC (AVX-512, "
             "2.6 GHz), 2026-11-22; best of five runs per figure";
  p.peakGemmFlops = 207.5e9;
  p.peakVectorFlops = 89.9e9;
  p.memoryBandwidth = 25.1e9;
  p.kernelOverheadS = 0.97e-6;
  p.threads = 2;
  p.efficiency = {/*gemm=*/0.887, /*conv=*/0.567, /*elementwise=*/0.0594,
                  /*reduction=*/0.0446, /*memory=*/1};
  // Not measured by calibrate yet: the development machine's 24 GiB, MPI
  // over shared memory between the ranks of one host (a copy through
  // memory: about a quarter of the bandwidth above, ~1 us a message), and
  // 10 Gb/s Ethernet between hosts.
  p.memoryCapacity = 24.0 * (1 << 30);
  p.intraNode = {6e9, 1e-6};
  p.interNode = {1.25e9, 30e-6};
  p.devicesPerNode = 2;
  return p;
}

std::optional<DeviceProfile> builtinProfile(StringRef name) {
  if (name == "cpu")
    return cpuProfile();
  if (name == "a100-40g")
    return gpuProfile(name, "NVIDIA A100 40GB datasheet", 156e12, 312e12,
                      19.5e12, 1555e9, 40.0 * (1 << 30), 300e9, 25e9);
  if (name == "a100-80g")
    return gpuProfile(name, "NVIDIA A100 80GB SXM datasheet", 156e12, 312e12,
                      19.5e12, 2039e9, 80.0 * (1 << 30), 300e9, 25e9);
  if (name == "h100-sxm")
    return gpuProfile(name, "NVIDIA H100 SXM5 datasheet (dense)", 494.7e12,
                      989.4e12, 66.9e12, 3350e9, 80.0 * (1 << 30), 450e9, 50e9);
  if (name == "h200")
    return gpuProfile(name, "NVIDIA H200 SXM datasheet (dense)", 494.7e12,
                      989.4e12, 66.9e12, 4800e9, 141e9, 450e9, 50e9);
  return std::nullopt;
}

} // namespace

std::string mlir::dtc::builtinDeviceProfileNames() {
  return "cpu, a100-40g, a100-80g, h100-sxm, h200";
}

llvm::json::Value mlir::dtc::toJson(const DeviceProfile &p) {
  using llvm::json::Object;
  const DeviceProfile::Efficiency &e = p.efficiency;
  Object o{{"name", p.name},
           {"source", p.source},
           {"peak_gemm_flops", p.peakGemmFlops},
           {"peak_gemm_flops_16bit", p.peakGemmFlops16},
           {"peak_vector_flops", p.peakVectorFlops},
           {"memory_bandwidth_bytes_per_s", p.memoryBandwidth},
           {"kernel_overhead_s", p.kernelOverheadS},
           {"threads", p.threads},
           {"efficiency", Object{{"gemm", e.gemm},
                                 {"conv", e.conv},
                                 {"elementwise", e.elementwise},
                                 {"reduction", e.reduction},
                                 {"memory", e.memory},
                                 {"network", p.networkEfficiency}}},
           {"memory_bytes", p.memoryCapacity},
           {"devices_per_node", p.devicesPerNode}};
  // A link without a bandwidth (a profile that prices no communication)
  // is left out, as parseDeviceProfile reads it.
  for (auto [key, link] : {std::pair<StringRef, const DeviceProfile::Link *>{
                               "intra_node", &p.intraNode},
                           {"inter_node", &p.interNode}})
    if (link->bandwidth > 0)
      o[key] = Object{{"bandwidth_bytes_per_s", link->bandwidth},
                      {"latency_s", link->latencyS}};
  return o;
}

double mlir::dtc::estimateCollectiveSeconds(CollectiveKind kind,
                                            int64_t groupSize, double bytesSent,
                                            const DeviceProfile::Link &link,
                                            double networkEfficiency) {
  if (groupSize <= 1 && kind != CollectiveKind::Send)
    return 0;
  double messages = 1;
  switch (kind) {
  case CollectiveKind::AllReduce:
    messages = 2.0 * double(groupSize - 1);
    break;
  case CollectiveKind::ReduceScatter:
  case CollectiveKind::AllGather:
    messages = double(groupSize - 1);
    break;
  case CollectiveKind::Send:
    break;
  }
  double rate = link.bandwidth * networkEfficiency;
  return messages * link.latencyS + (rate > 0 ? bytesSent / rate : 0);
}

FailureOr<DeviceProfile>
mlir::dtc::parseDeviceProfile(const llvm::json::Value &value,
                              std::string &error) {
  const llvm::json::Object *o = value.getAsObject();
  if (!o) {
    error = "a device profile must be a JSON object";
    return failure();
  }
  DeviceProfile p;
  auto number = [&](const llvm::json::Object &obj, StringRef key,
                    StringRef where, double &field, bool required,
                    bool allowZero) -> LogicalResult {
    const llvm::json::Value *v = obj.get(key);
    if (!v) {
      if (!required)
        return success();
      error = ("missing field \"" + where + key + "\"").str();
      return failure();
    }
    std::optional<double> d = v->getAsNumber();
    if (!d || !std::isfinite(*d) || *d < 0 || (!allowZero && *d == 0)) {
      error = ("field \"" + where + key + "\" must be a " +
               (allowZero ? "non-negative" : "positive") + " number")
                  .str();
      return failure();
    }
    field = *d;
    return success();
  };
  std::optional<StringRef> name = o->getString("name");
  if (!name || name->empty()) {
    error = "missing field \"name\" (a non-empty string)";
    return failure();
  }
  p.name = name->str();
  if (std::optional<StringRef> source = o->getString("source"))
    p.source = source->str();
  double threads = 1;
  if (failed(number(*o, "peak_gemm_flops", "", p.peakGemmFlops, true, false)) ||
      failed(number(*o, "peak_gemm_flops_16bit", "", p.peakGemmFlops16, false,
                    true)) ||
      failed(number(*o, "peak_vector_flops", "", p.peakVectorFlops, true,
                    false)) ||
      failed(number(*o, "memory_bandwidth_bytes_per_s", "", p.memoryBandwidth,
                    true, false)) ||
      failed(
          number(*o, "kernel_overhead_s", "", p.kernelOverheadS, true, true)) ||
      failed(number(*o, "threads", "", threads, false, false)))
    return failure();
  if (threads != std::floor(threads) || threads > 1e6) {
    error = "field \"threads\" must be a positive integer";
    return failure();
  }
  p.threads = int64_t(threads);
  if (const llvm::json::Value *e = o->get("efficiency")) {
    const llvm::json::Object *eo = e->getAsObject();
    if (!eo) {
      error = "field \"efficiency\" must be an object";
      return failure();
    }
    DeviceProfile::Efficiency &eff = p.efficiency;
    for (auto [key, field] : {std::pair<StringRef, double *>{"gemm", &eff.gemm},
                              {"conv", &eff.conv},
                              {"elementwise", &eff.elementwise},
                              {"reduction", &eff.reduction},
                              {"memory", &eff.memory},
                              {"network", &p.networkEfficiency}}) {
      if (failed(number(*eo, key, "efficiency.", *field, false, false)))
        return failure();
      if (*field > 1) {
        error = ("field \"efficiency." + key + "\" must be at most 1").str();
        return failure();
      }
    }
  }
  // The memory and the links (optional: profiles written before they were
  // part of the form price no communication and check no capacity).
  double perNode = 1;
  if (failed(number(*o, "memory_bytes", "", p.memoryCapacity, false, true)) ||
      failed(number(*o, "devices_per_node", "", perNode, false, false)))
    return failure();
  if (perNode != std::floor(perNode) || perNode > 1e6) {
    error = "field \"devices_per_node\" must be a positive integer";
    return failure();
  }
  p.devicesPerNode = int64_t(perNode);
  for (auto [key, link] :
       {std::pair<StringRef, DeviceProfile::Link *>{"intra_node", &p.intraNode},
        {"inter_node", &p.interNode}}) {
    const llvm::json::Value *v = o->get(key);
    if (!v)
      continue;
    const llvm::json::Object *lo = v->getAsObject();
    if (!lo) {
      error = ("field \"" + key + "\" must be an object").str();
      return failure();
    }
    std::string where = (key + ".").str();
    if (failed(number(*lo, "bandwidth_bytes_per_s", where, link->bandwidth,
                      true, false)) ||
        failed(number(*lo, "latency_s", where, link->latencyS, true, true)))
      return failure();
  }
  return p;
}

FailureOr<DeviceProfile> mlir::dtc::loadDeviceProfile(StringRef nameOrFile,
                                                      std::string &error) {
  if (std::optional<DeviceProfile> p = builtinProfile(nameOrFile))
    return *p;
  bool looksLikeFile =
      nameOrFile.contains('/') || nameOrFile.ends_with(".json");
  auto buffer = llvm::MemoryBuffer::getFile(nameOrFile);
  if (!buffer) {
    if (looksLikeFile)
      error = ("cannot read device profile file '" + nameOrFile +
               "': " + buffer.getError().message())
                  .str();
    else
      error = ("unknown device profile '" + nameOrFile +
               "' (known: " + builtinDeviceProfileNames() + "; or a JSON file)")
                  .str();
    return failure();
  }
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json) {
    error = ("device profile file '" + nameOrFile +
             "' is not valid JSON: " + llvm::toString(json.takeError()))
                .str();
    return failure();
  }
  std::string why;
  FailureOr<DeviceProfile> p = parseDeviceProfile(*json, why);
  if (failed(p)) {
    error = ("device profile file '" + nameOrFile + "': " + why).str();
    return failure();
  }
  return p;
}
