//===- CostModel.cpp - per-op FLOPs, bytes and roofline time --------------===//

#include "passes/Analysis/CostModel.h"

#include "dialects/DTG/IR/DTGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

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
/// The bytes of `operand` that reading it through `uses` touches: a slice
/// reads only the elements it takes; any other use reads the whole operand.
template <typename Uses> double bytesRead(Value operand, Uses uses) {
  double sliced = 0;
  for (OpOperand &use : uses) {
    auto slice = dyn_cast<dtg::SliceOp>(use.getOwner());
    if (!slice)
      return byteSize(operand.getType());
    sliced += byteSize(slice.getResult().getType());
  }
  return std::min(sliced, byteSize(operand.getType()));
}

/// Bytes read plus bytes written. An operand read only through slices (a
/// gradient bucket cut back into gradients; a fused kernel's strided view
/// of part of an input) counts the elements the slices take.
double operandAndResultBytes(Operation *op) {
  double bytes = 0;
  if (auto slice = dyn_cast<dtg::SliceOp>(op))
    bytes += byteSize(slice.getResult().getType());
  else if (op->getNumRegions() == 1 && !op->getRegion(0).empty() &&
           op->getRegion(0).front().getNumArguments() == op->getNumOperands())
    for (BlockArgument arg : op->getRegion(0).front().getArguments())
      bytes += bytesRead(arg, arg.getUses());
  else
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
  return (std::max(compute, memory) + p.kernelOverheadS) * coreSharing(p);
}

double mlir::dtc::coreSharing(const DeviceProfile &p) {
  if (p.coresPerNode <= 0)
    return 1;
  return std::max(1.0, double(p.devicesPerNode * p.threads) /
                           double(p.coresPerNode));
}

bool mlir::dtc::collectivesTakeKernelTime(const DeviceProfile &p) {
  return p.coresPerNode > 0 &&
         p.devicesPerNode * std::max<int64_t>(1, p.threads) >= p.coresPerNode;
}

//===----------------------------------------------------------------------===//
// Device profiles
//===----------------------------------------------------------------------===//

namespace {

#include "passes/Analysis/Profiles.inc"

/// The folders of DTC_PROFILE_PATH (':'-separated), searched by name
/// before the profiles built in.
SmallVector<std::string> profileFolders() {
  SmallVector<std::string> folders;
  if (const char *path = std::getenv("DTC_PROFILE_PATH")) {
    SmallVector<StringRef> parts;
    StringRef(path).split(parts, ':', -1, false);
    for (StringRef part : parts)
      folders.push_back(part.str());
  }
  return folders;
}

/// A profile parsed from `text`, named `what` in messages.
FailureOr<DeviceProfile> parseProfileText(StringRef text, StringRef what,
                                          std::string &error) {
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(text);
  if (!json) {
    error = ("device profile file '" + what +
             "' is not valid JSON: " + llvm::toString(json.takeError()))
                .str();
    return failure();
  }
  std::string why;
  FailureOr<DeviceProfile> p = parseDeviceProfile(*json, why);
  if (failed(p)) {
    error = ("device profile file '" + what + "': " + why).str();
    return failure();
  }
  return p;
}

} // namespace

std::string mlir::dtc::builtinDeviceProfileNames() {
  std::vector<std::string> names;
  for (const std::string &folder : profileFolders()) {
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(folder, ec), end;
         it != end && !ec; it.increment(ec))
      if (llvm::sys::path::extension(it->path()) == ".json")
        names.push_back(llvm::sys::path::stem(it->path()).str());
  }
  for (const auto &[name, text] : kProfileFiles)
    names.push_back(name);
  llvm::sort(names);
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return llvm::join(names, ", ");
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
  if (p.coresPerNode > 0)
    o["cores_per_node"] = p.coresPerNode;
  // A link without a bandwidth (a profile that prices no communication)
  // is left out, as parseDeviceProfile reads it.
  for (auto [key, link] : {std::pair<StringRef, const DeviceProfile::Link *>{
                               "intra_node", &p.intraNode},
                           {"inter_node", &p.interNode}})
    if (link->bandwidth > 0)
      o[key] = Object{{"bandwidth_bytes_per_s", link->bandwidth},
                      {"latency_s", link->latencyS}};
  if (!p.allReduceSamples.empty()) {
    llvm::json::Array samples;
    for (const DeviceProfile::AllReduceSample &s : p.allReduceSamples)
      samples.push_back(llvm::json::Array{s.ranks, s.bytes, s.seconds});
    o["mpi_all_reduce"] = std::move(samples);
  }
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

double mlir::dtc::ringBytesSent(CollectiveKind kind, int64_t groupSize,
                                double bufferBytes) {
  return double(groupSize - 1) / double(std::max<int64_t>(1, groupSize)) *
         bufferBytes * (kind == CollectiveKind::AllReduce ? 2 : 1);
}

const DeviceProfile::Link &mlir::dtc::groupLink(const DeviceProfile &p,
                                                GroupPlacement placement) {
  return placement.nodes <= 1 ? p.intraNode : p.interNode;
}

double mlir::dtc::sharedCoreBubbleSeconds(double stageSeconds,
                                          double idealBubbleSeconds,
                                          double sharing) {
  if (sharing <= 1)
    return idealBubbleSeconds;
  return std::max(0.0,
                  (stageSeconds + idealBubbleSeconds) / sharing - stageSeconds);
}

GroupPlacement mlir::dtc::placeGroup(ArrayRef<int64_t> ranks,
                                     int64_t devicesPerNode) {
  llvm::SmallDenseMap<int64_t, int64_t> perNode;
  for (int64_t rank : ranks)
    ++perNode[rank / std::max<int64_t>(1, devicesPerNode)];
  GroupPlacement g;
  g.nodes = std::max<int64_t>(1, int64_t(perNode.size()));
  g.ranksPerNode = perNode.empty() ? 1 : perNode.begin()->second;
  for (auto &[node, count] : perNode)
    if (count != g.ranksPerNode)
      g.ranksPerNode = 0;
  return g;
}

double mlir::dtc::estimateHierarchicalCollectiveSeconds(
    CollectiveKind kind, GroupPlacement placement, double bufferBytes,
    const DeviceProfile &p) {
  int64_t k = placement.ranksPerNode, nodes = placement.nodes;
  // One ring of n ranks over `link` on a buffer of `buffer` bytes.
  auto ring = [&](CollectiveKind ringKind, int64_t n, double buffer,
                  const DeviceProfile::Link &link) {
    return estimateCollectiveSeconds(ringKind, n,
                                     ringBytesSent(ringKind, n, buffer), link,
                                     p.networkEfficiency);
  };
  // The reduce-scatter and the all-gather inside a node move the same.
  double inside =
      ring(CollectiveKind::ReduceScatter, k, bufferBytes, p.intraNode);
  double block = bufferBytes / double(k);
  switch (kind) {
  case CollectiveKind::AllReduce:
    return 2 * inside +
           ring(CollectiveKind::AllReduce, nodes, block, p.interNode);
  case CollectiveKind::ReduceScatter:
  case CollectiveKind::AllGather:
    return inside + ring(kind, nodes, block, p.interNode);
  case CollectiveKind::Send:
    break;
  }
  return estimateCollectiveSeconds(kind, 2, bufferBytes, p.interNode,
                                   p.networkEfficiency);
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
  double cores = 0;
  if (failed(number(*o, "cores_per_node", "", cores, false, false)))
    return failure();
  if (cores != std::floor(cores) || cores > 1e7) {
    error = "field \"cores_per_node\" must be a positive integer";
    return failure();
  }
  p.coresPerNode = int64_t(cores);
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
  // Measured all-reduces: [ranks, bytes, seconds] triples.
  if (const llvm::json::Value *v = o->get("mpi_all_reduce")) {
    const llvm::json::Array *rows = v->getAsArray();
    if (!rows) {
      error = "field \"mpi_all_reduce\" must be an array of [ranks, bytes, "
              "seconds]";
      return failure();
    }
    for (const llvm::json::Value &row : *rows) {
      const llvm::json::Array *r = row.getAsArray();
      std::optional<double> ranks, bytes, seconds;
      if (r && r->size() == 3) {
        ranks = (*r)[0].getAsNumber();
        bytes = (*r)[1].getAsNumber();
        seconds = (*r)[2].getAsNumber();
      }
      if (!ranks || !bytes || !seconds || *ranks < 2 ||
          *ranks != std::floor(*ranks) || *bytes <= 0 || *seconds <= 0) {
        error = "field \"mpi_all_reduce\" must be an array of [ranks (2 or "
                "more), bytes, seconds] with positive bytes and seconds";
        return failure();
      }
      p.allReduceSamples.push_back({int64_t(*ranks), *bytes, *seconds});
    }
  }
  return p;
}

FailureOr<DeviceProfile> mlir::dtc::loadDeviceProfile(StringRef nameOrFile,
                                                      std::string &error) {
  bool looksLikeFile =
      nameOrFile.contains('/') || nameOrFile.ends_with(".json");
  std::string path = nameOrFile.str();
  if (!looksLikeFile) {
    // By name: a folder of DTC_PROFILE_PATH, else the profiles built in.
    path.clear();
    for (const std::string &folder : profileFolders()) {
      SmallString<256> candidate(folder);
      llvm::sys::path::append(candidate, nameOrFile + ".json");
      if (llvm::sys::fs::exists(candidate)) {
        path = candidate.str().str();
        break;
      }
    }
    if (path.empty()) {
      for (const auto &[name, text] : kProfileFiles)
        if (nameOrFile == name)
          return parseProfileText(
              text, ("profiles/" + nameOrFile + ".json").str(), error);
      error = ("unknown device profile '" + nameOrFile +
               "' (known: " + builtinDeviceProfileNames() +
               "; or a JSON file, as dtc calibrate writes)")
                  .str();
      return failure();
    }
  }
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    error = "cannot read device profile file '" + path +
            "': " + buffer.getError().message();
    return failure();
  }
  return parseProfileText((*buffer)->getBuffer(), path, error);
}
