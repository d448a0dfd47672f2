//===- CostModel.h - per-op FLOPs, bytes and roofline time ---------*- C++
//-*-===//
//
// The first cost model of dtc (DESIGN.md §2 item 12): what one dtg op costs
// (FLOPs and bytes moved), and how long it takes on a device described by a
// DeviceProfile, by a roofline with efficiency factors that microbenchmarks
// measure (`dtc calibrate`), never fitted to end-to-end runs.
//
// FLOP counting conventions (all per result or operand element, as stated):
// - contractions and convolutions: 2 FLOPs per multiply-add;
// - elementwise ops: a weight per result element, from a small table:
//   kArith (add, compare, select, ...) = 1, kDiv (div, sqrt, reciprocal) = 4,
//   kTranscendental (exp, log, tanh, erf, sin, ...) = 8; composite ops (gelu,
//   sigmoid, softplus, ...) add up their parts. The weights approximate the
//   relative throughput of these operations on vector units; they change
//   only the compute side of a roofline that memory usually bounds;
// - reductions, normalizations, softmax, losses and optimizer updates: the
//   operations of their textbook formula per element (see CostModel.cpp);
// - shape ops (transpose, slice, concat, gather, pad, ...): 0 FLOPs, but they
//   move bytes; dtg.reshape and dtg.constant move nothing.
// Bytes are the bytes of every operand read plus every result written. An op
// with a region (dtg.fusion: one kernel) costs its region's FLOPs and only
// its own operands' and results' bytes. func.call costs 0: callers sum their
// callees.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_PASSES_ANALYSIS_COSTMODEL_H
#define DTC_PASSES_ANALYSIS_COSTMODEL_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::dtc {

/// The kind of hardware work an op is, which selects its peak rate and
/// efficiency factor.
enum class OpClass {
  Gemm,        ///< matmul, gemm, einsum: the GEMM peak
  Conv,        ///< convolution and its gradients: the GEMM peak
  Elementwise, ///< elementwise arithmetic: the vector peak
  Reduction,   ///< reductions, norms, softmax, losses, optimizer updates
  DataMovement ///< shape ops: bytes only
};

/// What one op costs, independent of the device.
struct OpCost {
  /// Floating-point operations (2 per multiply-add).
  double flops = 0;
  /// Bytes of operands read plus results written.
  double bytes = 0;
  /// True for contractions and convolutions (and their gradients).
  bool gemmLike = false;
};

/// The cost of `op` (see the conventions above); 0 for ops that are not
/// kernels (constants, reshapes, calls, terminators).
OpCost estimateOpCost(Operation *op);

/// Model FLOPs of `op` (DESIGN.md's flops_per_step): 2 x the multiply-adds
/// of matmul, gemm, einsum, conv and the conv gradients, without epilogues
/// (bias, beta * c), including those inside a region; 0 for other ops.
double estimateModelFlops(Operation *op);

/// The class of `op`; ops with a region take the class of their costliest
/// inner op.
OpClass classifyOp(Operation *op);

/// True if `op` launches a kernel of its own: not a constant, an alias
/// (reshape), a call, a terminator or an op inside a kernel's region.
bool isKernelOp(Operation *op);

/// A device as the cost model sees it. All rates are per device (all of its
/// threads or SMs together).
struct DeviceProfile {
  /// Compute efficiency (achieved / peak) by op class, and the fraction of
  /// the memory bandwidth that kernels reach.
  struct Efficiency {
    double gemm = 1, conv = 1, elementwise = 1, reduction = 1, memory = 1;
  };
  std::string name;
  /// Where the figures come from (a citation or "measured by dtc
  /// calibrate on ...").
  std::string source;
  /// Peak FLOP/s of a GEMM in fp32.
  double peakGemmFlops = 0;
  /// Peak FLOP/s of a GEMM in bf16/fp16 (0: same as fp32).
  double peakGemmFlops16 = 0;
  /// Peak FLOP/s of elementwise (vector, non-GEMM) work.
  double peakVectorFlops = 0;
  /// Memory bandwidth in bytes/s.
  double memoryBandwidth = 0;
  /// Seconds each kernel costs besides its roofline time (launch, fork/join).
  double kernelOverheadS = 0;
  /// Threads the figures were measured with (1 for GPUs: one device).
  int64_t threads = 1;
  Efficiency efficiency;
  /// Memory of one device in bytes (0: not stated); `dtc plan` holds each
  /// rank's peak against it when no --memory-limit is given.
  double memoryCapacity = 0;
  /// One kind of link between devices, as the alpha-beta model sees it:
  /// the bandwidth a device sends at (one way), and each message's latency.
  struct Link {
    double bandwidth = 0;
    double latencyS = 0;
  };
  /// Links inside a node (NVLink; shared memory between CPU ranks) and
  /// between nodes (InfiniBand; Ethernet), and the devices of one node.
  /// Ranks are numbered tp fastest, then dp, then pp (DESIGN.md), node by
  /// node.
  Link intraNode, interNode;
  int64_t devicesPerNode = 1;
  /// Cores of a node (0: not stated; stated only for CPU hosts, whose
  /// devices are ranks on the cores). When a node's devices (ranks) times
  /// their threads exceed its cores, they share them: every kernel takes
  /// that many times longer (ranks oversubscribing a CPU host).
  int64_t coresPerNode = 0;
  /// The fraction of a link's bandwidth collectives reach (nccl-tests'
  /// bus bandwidth over the link's).
  double networkEfficiency = 1;
  /// Measured all-reduces (dtc calibrate --mpi-ranks): the median seconds
  /// of `bytes` over `ranks` ranks; the links above are fitted to them.
  struct AllReduceSample {
    int64_t ranks = 0;
    double bytes = 0, seconds = 0;
  };
  std::vector<AllReduceSample> allReduceSamples;
};

/// The kinds of collective the alpha-beta model prices.
enum class CollectiveKind { AllReduce, ReduceScatter, AllGather, Send };

/// Seconds of one collective in which a rank sends `bytesSent` bytes over a
/// group of `groupSize` ranks, as ring algorithms run it
/// (../shared/REFERENCE.md): 2(n - 1) latencies for an all-reduce, n - 1
/// for a reduce-scatter or an all-gather, one for a send, plus the bytes
/// over the link's bandwidth x the network efficiency. `link` is the
/// slowest link the group crosses.
double estimateCollectiveSeconds(CollectiveKind kind, int64_t groupSize,
                                 double bytesSent,
                                 const DeviceProfile::Link &link,
                                 double networkEfficiency);

/// How a collective's group lies on the nodes: `nodes` nodes holding
/// `ranksPerNode` of its ranks each (ranksPerNode 0: nodes hold different
/// counts).
struct GroupPlacement {
  int64_t ranksPerNode = 1, nodes = 1;
  /// True when the group spans nodes with more than one rank in each: NCCL
  /// then runs it hierarchically (see estimateCollectiveSeconds below).
  bool isHierarchical() const { return ranksPerNode > 1 && nodes > 1; }
};

/// Where the ranks `ranks` lie when each node holds `devicesPerNode`
/// consecutive ranks.
GroupPlacement placeGroup(llvm::ArrayRef<int64_t> ranks,
                          int64_t devicesPerNode);

/// What one rank sends in a ring `kind` over `groupSize` ranks on a buffer
/// of `bufferBytes` (an all-reduce's or reduce-scatter's operand, an
/// all-gather's result): (n - 1)/n of it, twice for an all-reduce.
double ringBytesSent(CollectiveKind kind, int64_t groupSize,
                     double bufferBytes);

/// The link a group placed as `placement` is priced on when it runs as one
/// ring: the intra-node link inside one node, the inter-node one otherwise.
const DeviceProfile::Link &groupLink(const DeviceProfile &p,
                                     GroupPlacement placement);

/// Seconds of one collective over a group that spans nodes with k =
/// placement.ranksPerNode of its ranks in each of G = placement.nodes, on a
/// buffer of `bufferBytes` (an all-reduce's or a reduce-scatter's operand,
/// an all-gather's result), as ../shared/REFERENCE.md's hierarchical
/// all-reduce runs it: a ring reduce-scatter over the k ranks inside each
/// node (the intra-node link), a ring all-reduce across the G nodes of the
/// 1/k block each rank holds, the k ranks of a node each on its own
/// inter-node link at once, and a ring all-gather inside the node. A
/// reduce-scatter is the first two phases (a reduce-scatter across nodes),
/// an all-gather the last two (an all-gather across nodes first). Each ring
/// is priced by estimateCollectiveSeconds above.
double estimateHierarchicalCollectiveSeconds(CollectiveKind kind,
                                             GroupPlacement placement,
                                             double bufferBytes,
                                             const DeviceProfile &p);

/// How many times longer kernels take because a node's devices share its
/// cores: devicesPerNode x threads / coresPerNode, at least 1.
double coreSharing(const DeviceProfile &p);

/// The time a pipeline's schedule adds to its slowest stage's
/// `stageSeconds` (priced at the shared speed `sharing` = coreSharing):
/// `idealBubbleSeconds`, REFERENCE.md's (p - 1)/m of the stage, where no
/// cores are shared; where they are, a waiting stage yields its core to the
/// others' work, so only what the critical path at unshared speed, (stage
/// + ideal bubble) / sharing, takes beyond the stage.
double sharedCoreBubbleSeconds(double stageSeconds, double idealBubbleSeconds,
                               double sharing);

/// True when `p` is a CPU host whose ranks keep every core busy
/// (coresPerNode stated, devicesPerNode x threads >= coresPerNode): the CPU
/// runtime moves a collective on, asynchronous or not, on its rank's own
/// kernel thread (between kernels: runtime/src/Comm/Collectives.h), so a
/// collective's copies and reductions take that thread's time, and no core
/// is left over to run them beside the kernels.
bool collectivesTakeKernelTime(const DeviceProfile &p);

/// Roofline time of `op` on `p`: max(compute seconds, bytes / (bandwidth x
/// memory efficiency)) + the kernel overhead for kernel ops, times
/// coreSharing(p). Compute seconds
/// are FLOPs over peak x efficiency of the op's class; a region's ops each
/// count at their own class's rate.
double estimateOpSeconds(Operation *op, const DeviceProfile &p);

/// The peak GEMM FLOP/s of `p` for an element type of `bitWidth` bits.
double peakGemmFlopsFor(const DeviceProfile &p, unsigned bitWidth);

/// A profile from its JSON form (toJson's); on failure `error` says which
/// field is missing or wrong.
FailureOr<DeviceProfile> parseDeviceProfile(const llvm::json::Value &value,
                                            std::string &error);

/// The JSON form of `p`.
llvm::json::Value toJson(const DeviceProfile &p);

/// A profile by name or file. A name (no '/', no ".json") is a file
/// NAME.json of a folder of DTC_PROFILE_PATH (':'-separated), else one of
/// the profiles dtc is built with (profiles/*.json of the source tree: cpu,
/// a100-40g, a100-80g, h100-sxm, h200); anything else is a file.
FailureOr<DeviceProfile> loadDeviceProfile(llvm::StringRef nameOrFile,
                                           std::string &error);

/// The names loadDeviceProfile knows (DTC_PROFILE_PATH's and the built-in
/// ones), sorted, comma-separated.
std::string builtinDeviceProfileNames();

} // namespace mlir::dtc

#endif // DTC_PASSES_ANALYSIS_COSTMODEL_H
