//===- DTGFusion.cpp - dtg.fusion and dtg.yield
//----------------------------===//

#include "dialects/DTG/IR/DTGFusion.h"
#include "dialects/DTG/IR/DTGOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::dtg;

bool mlir::dtg::isFusibleElementwise(Operation *op) {
  if (isa<AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp, ModOp, AndOp, OrOp,
          XorOp, EqualOp, LessOp, LessEqualOp, GreaterOp, GreaterEqualOp,
          WhereOp, CastOp>(op))
    return true;
  return op->getDialect() && isa<DTGDialect>(op->getDialect()) &&
         op->hasTrait<OpTrait::Elementwise>() && op->getNumResults() == 1;
}

bool mlir::dtg::isFusibleView(Operation *op) {
  return isa<TransposeOp, SliceOp, ReshapeOp>(op);
}

bool mlir::dtg::isFusibleReduction(Operation *op) {
  return isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp>(op);
}

SmallVector<int64_t> mlir::dtg::contiguousStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

LogicalResult mlir::dtg::applyView(Operation *view, ArrayRef<int64_t> strides,
                                   int64_t offset,
                                   SmallVectorImpl<int64_t> &resultStrides,
                                   int64_t &resultOffset) {
  auto inType = cast<RankedTensorType>(view->getOperand(0).getType());
  auto outType = cast<RankedTensorType>(view->getResult(0).getType());
  ArrayRef<int64_t> in = inType.getShape(), out = outType.getShape();
  if (strides.size() != in.size())
    return failure();
  resultStrides.clear();
  resultOffset = offset;
  if (auto transpose = dyn_cast<TransposeOp>(view)) {
    ArrayRef<int64_t> perm = transpose.getPerm();
    if (perm.size() != in.size())
      return failure();
    for (int64_t p : perm) {
      if (p < 0 || p >= static_cast<int64_t>(in.size()))
        return failure();
      resultStrides.push_back(strides[p]);
    }
    return success();
  }
  if (auto slice = dyn_cast<SliceOp>(view)) {
    ArrayRef<int64_t> starts = slice.getStarts(), steps = slice.getSteps();
    if (starts.size() != in.size() || steps.size() != in.size())
      return failure();
    for (size_t d = 0; d < in.size(); ++d) {
      if (out[d] > 0 && (starts[d] < 0 || starts[d] >= in[d]))
        return failure();
      resultOffset += starts[d] * strides[d];
      resultStrides.push_back(strides[d] * steps[d]);
    }
    return success();
  }
  if (!isa<ReshapeOp>(view))
    return failure();
  if (llvm::is_contained(in, 0) || llvm::is_contained(out, 0)) {
    resultStrides = contiguousStrides(out);
    return success();
  }
  // Match groups of input and output dimensions with equal products; each
  // input group must be laid out as one run (PyTorch's view rule).
  size_t i = 0, o = 0;
  while (o < out.size() || i < in.size()) {
    if (o < out.size() && out[o] == 1) {
      resultStrides.push_back(1);
      ++o;
      continue;
    }
    if (i < in.size() && in[i] == 1) {
      ++i;
      continue;
    }
    if (i >= in.size() || o >= out.size())
      return failure();
    int64_t inProduct = in[i], outProduct = out[o];
    size_t iEnd = i + 1, oEnd = o + 1;
    while (inProduct != outProduct) {
      if (inProduct < outProduct) {
        if (iEnd >= in.size())
          return failure();
        inProduct *= in[iEnd++];
      } else {
        if (oEnd >= out.size())
          return failure();
        outProduct *= out[oEnd++];
      }
    }
    // The input group [i, iEnd) must be one run.
    for (size_t d = i; d + 1 < iEnd; ++d)
      if (in[d + 1] != 1 && strides[d] != strides[d + 1] * in[d + 1])
        return failure();
    int64_t stride = strides[iEnd - 1];
    SmallVector<int64_t> group;
    for (size_t d = oEnd; d-- > o;) {
      group.push_back(stride);
      stride *= out[d];
    }
    resultStrides.append(group.rbegin(), group.rend());
    i = iEnd;
    o = oEnd;
  }
  return success(resultStrides.size() == out.size());
}

void FusionOp::build(OpBuilder &builder, OperationState &state,
                     TypeRange resultTypes, StringRef kind, ValueRange inputs) {
  state.addOperands(inputs);
  state.addAttribute(getKindAttrName(state.name), builder.getStringAttr(kind));
  state.addTypes(resultTypes);
  Region *body = state.addRegion();
  Block *block = new Block;
  body->push_back(block);
  for (Value input : inputs)
    block->addArgument(input.getType(), input.getLoc());
}

LogicalResult FusionOp::verify() {
  StringRef kind = getKind();
  if (kind != "loop" && kind != "reduction" && kind != "gemm")
    return emitOpError("kind must be 'loop', 'reduction' or 'gemm', got '")
           << kind << "'";
  Block &block = getBody().front();
  if (block.getNumArguments() != getNumOperands())
    return emitOpError("has ")
           << getNumOperands() << " operands but its block takes "
           << block.getNumArguments() << " arguments";
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip(getOperandTypes(), block.getArgumentTypes())))
    if (std::get<0>(pair) != std::get<1>(pair))
      return emitOpError("block argument #")
             << i << " has type " << std::get<1>(pair) << ", operand has "
             << std::get<0>(pair);
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield)
    return emitOpError("body must end with dtg.yield");
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError("yields ")
           << yield.getValues().size()
           << " values whose types differ from the op's results";
  int64_t reductions = 0, matmuls = 0;
  for (Operation &op : block.without_terminator()) {
    if (op.getNumRegions() != 0 || !isa<DTGDialect>(op.getDialect()))
      return emitOpError("cannot hold '") << op.getName() << "'";
    bool allowed =
        isFusibleElementwise(&op) || isFusibleView(&op) || isa<ConstantOp>(op);
    if (isFusibleReduction(&op)) {
      ++reductions;
      allowed = kind == "reduction";
    }
    if (isa<MatMulOp>(op)) {
      ++matmuls;
      allowed = kind == "gemm";
    }
    if (!allowed)
      return emitOpError("of kind '")
             << kind << "' cannot hold '" << op.getName() << "'";
  }
  if (kind == "reduction" && reductions == 0)
    return emitOpError("of kind 'reduction' holds no reduction");
  if (kind == "gemm" && matmuls != 1)
    return emitOpError("of kind 'gemm' must hold exactly one dtg.matmul, "
                       "holds ")
           << matmuls;
  return success();
}
