//===- EmitDist.cpp - CPU emission rules of dist collectives --------------===//
//
// Each collective becomes one call into the runtime's C ABI
// (dtcrt_comm_*, runtime/include/dtcrt/dtcrt.h), which runs it over the
// channel of the op's mesh-axis group and counts the bytes it sends; the
// CUDA target calls dtcg_comm_* instead (NCCL, dtcrt/cuda/Nccl.h). A split
// dimension is passed as [outer, dim, inner] around it.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CPU/CppEmitter.h"
#include "compiler/Target/CPU/KernelEmitter.h"

#include "dialects/Dist/IR/DistOps.h"
#include "passes/Memory/Passes.h"

using namespace mlir;
using namespace mlir::dtc::cpu;

namespace {

/// "outer, dim, inner" of `type` around dimension `axis`.
std::string around(RankedTensorType type, int64_t axis) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= type.getDimSize(d);
  for (int64_t d = axis + 1; d < type.getRank(); ++d)
    inner *= type.getDimSize(d);
  return std::to_string(outer) + ", " + std::to_string(type.getDimSize(axis)) +
         ", " + std::to_string(inner);
}

/// Emits `dtcrt_comm_<name>(ctx, [slot,] mask, "dtype", [kind,] in, out,
/// rest)`; the slot for an asynchronous collective's start.
LogicalResult emitComm(Operation *op, KernelEmitter &e, StringRef name,
                       ArrayAttr axes, std::optional<int> kind,
                       StringRef rest) {
  bool start = name.ends_with("_start");
  if (failed(e.checkTensors(op)))
    return failure();
  int mask = meshAxesMask(llvm::to_vector(axes.getAsRange<StringAttr>()));
  if (mask < 0)
    return op->emitError("the CPU runtime has channels for the mesh axes pp, "
                         "dp and tp only, not ")
           << axes;
  auto type = cast<RankedTensorType>(op->getOperand(0).getType());
  // The CUDA target's collectives run in NCCL on device memory
  // (runtime/include/dtcrt/cuda/Nccl.h), with the same arguments.
  std::string call = (e.cuda() ? "dtcg_comm_" : "dtcrt_comm_") + name.str() +
                     "(ctx, " +
                     (start ? std::to_string(asyncSlot(op)) + ", " : "") +
                     std::to_string(mask) + ", " +
                     KernelEmitter::quoted(dtypeName(type.getElementType()));
  if (kind)
    call += ", " + std::to_string(*kind);
  call += ", " + e.buffer(op->getOperand(0)) + ", " +
          e.buffer(op->getResult(0)) + ", " + rest.str() + ");";
  e.statement(call);
  return success();
}

} // namespace

int mlir::dtc::cpu::asyncSlot(Operation *start) {
  // Numbers are never reused: ops alive together get different ones.
  static llvm::DenseMap<Operation *, int> slots;
  return slots.try_emplace(start, int(slots.size())).first->second;
}

int mlir::dtc::cpu::meshAxesMask(ArrayRef<StringAttr> axes) {
  int mask = 0;
  for (StringAttr axis : axes) {
    if (axis.getValue() == "pp")
      mask |= 1;
    else if (axis.getValue() == "dp")
      mask |= 2;
    else if (axis.getValue() == "tp")
      mask |= 4;
    else
      return -1;
  }
  return mask;
}

void mlir::dtc::cpu::registerDistEmitters(EmitRegistry &registry) {
  registry.add<dist::AllReduceOp>([](Operation *op, KernelEmitter &e) {
    auto ar = cast<dist::AllReduceOp>(op);
    int64_t count = ar.getInput().getType().getNumElements();
    return emitComm(op, e, "all_reduce", ar.getMeshAxes(), int(ar.getKind()),
                    std::to_string(count));
  });
  registry.add<dist::AllReduceStartOp>([](Operation *op, KernelEmitter &e) {
    auto ar = cast<dist::AllReduceStartOp>(op);
    int64_t count = ar.getInput().getType().getNumElements();
    return emitComm(op, e, "all_reduce_start", ar.getMeshAxes(),
                    int(ar.getKind()), std::to_string(count));
  });
  registry.add<dist::ReduceScatterStartOp>([](Operation *op, KernelEmitter &e) {
    auto rs = cast<dist::ReduceScatterStartOp>(op);
    auto result = cast<RankedTensorType>(
        cast<dist::FutureType>(rs.getResult().getType()).getValueType());
    return emitComm(op, e, "reduce_scatter_start", rs.getMeshAxes(),
                    int(rs.getKind()), around(result, rs.getScatterAxis()));
  });
  registry.add<dist::AllGatherStartOp>([](Operation *op, KernelEmitter &e) {
    auto ag = cast<dist::AllGatherStartOp>(op);
    return emitComm(op, e, "all_gather_start", ag.getMeshAxes(), std::nullopt,
                    around(ag.getInput().getType(), ag.getGatherAxis()));
  });
  registry.add<dist::ReduceScatterOp>([](Operation *op, KernelEmitter &e) {
    auto rs = cast<dist::ReduceScatterOp>(op);
    return emitComm(op, e, "reduce_scatter", rs.getMeshAxes(),
                    int(rs.getKind()),
                    around(rs.getResult().getType(), rs.getScatterAxis()));
  });
  registry.add<dist::AllGatherOp>([](Operation *op, KernelEmitter &e) {
    auto ag = cast<dist::AllGatherOp>(op);
    return emitComm(op, e, "all_gather", ag.getMeshAxes(), std::nullopt,
                    around(ag.getInput().getType(), ag.getGatherAxis()));
  });
  // Pipeline transfers: bytes to or from the rank `shift` along the axis.
  auto pointToPoint = [](Operation *op, KernelEmitter &e, StringRef name,
                         Value data, StringRef axis,
                         int64_t shift) -> LogicalResult {
    if (failed(e.checkTensors(op)))
      return failure();
    int mask = meshAxesMask({StringAttr::get(op->getContext(), axis)});
    if (mask < 0)
      return op->emitError("the CPU runtime has channels for the mesh axes "
                           "pp, dp and tp only, not ")
             << axis;
    auto type = cast<RankedTensorType>(data.getType());
    int64_t bytes = memory::byteSize(type);
    // The CUDA target's go through host memory (runtime/include/dtcrt/cuda/
    // Nccl.h), with the same arguments.
    e.statement((e.cuda() ? "dtcg_comm_" : "dtcrt_comm_") + name.str() +
                "(ctx, " + std::to_string(mask) + ", " + std::to_string(shift) +
                ", " + e.buffer(data) + ", " + std::to_string(bytes) + ");");
    return success();
  };
  registry.add<dist::SendOp>([=](Operation *op, KernelEmitter &e) {
    auto send = cast<dist::SendOp>(op);
    return pointToPoint(op, e, "send", send.getInput(), send.getMeshAxis(),
                        send.getShift());
  });
  registry.add<dist::RecvOp>([=](Operation *op, KernelEmitter &e) {
    auto recv = cast<dist::RecvOp>(op);
    return pointToPoint(op, e, "recv", recv.getResult(), recv.getMeshAxis(),
                        recv.getShift());
  });
  registry.add<dist::LocalBlockOp>([](Operation *op, KernelEmitter &e) {
    auto lb = cast<dist::LocalBlockOp>(op);
    return emitComm(op, e, "local_block", lb.getMeshAxes(), std::nullopt,
                    around(lb.getResult().getType(), lb.getSliceAxis()));
  });
}
