//===- DistOps.cpp - dist op verifiers -----------------------------------===//
//
// Verifiers of the dist ops. Checks that need only the op live in verify();
// those that need the mesh (axis names and sizes) live in verifySymbolUses,
// which MLIR runs once the enclosing symbol table has been verified.
//
//===----------------------------------------------------------------------===//

#include "dialects/Dist/IR/DistOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::dist;

#define GET_OP_CLASSES
#include "dialects/Dist/IR/DistOps.cpp.inc"

FailureOr<MeshAttr>
mlir::dist::lookupMesh(Operation *from, FlatSymbolRefAttr meshRef,
                       SymbolTableCollection *symbolTables) {
  Operation *symbol = symbolTables
                          ? symbolTables->lookupNearestSymbolFrom(from, meshRef)
                          : SymbolTable::lookupNearestSymbolFrom(from, meshRef);
  auto mesh = dyn_cast_or_null<MeshOp>(symbol);
  if (!mesh)
    return from->emitOpError() << meshRef << " does not name a dist.mesh";
  return mesh.getMesh();
}

static std::string shapeText(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? "," : "") + std::to_string(d);
  return s + "]";
}

/// The tensor a collective produces: its result, or what its future holds.
static RankedTensorType resultTensorType(Value result) {
  Type type = result.getType();
  if (auto future = dyn_cast<FutureType>(type))
    type = future.getValueType();
  return cast<RankedTensorType>(type);
}

//===----------------------------------------------------------------------===//
// Checks shared by the collectives
//===----------------------------------------------------------------------===//

/// Checks that a collective names at least one mesh axis and none twice.
static LogicalResult verifyMeshAxes(Operation *op, ArrayAttr axes) {
  if (axes.empty())
    return op->emitOpError("needs at least one mesh axis");
  llvm::SmallDenseSet<StringRef> seen;
  for (StringRef axis : axes.getAsValueRange<StringAttr>())
    if (!seen.insert(axis).second)
      return op->emitOpError() << "lists mesh axis \"" << axis << "\" twice";
  return success();
}

/// Checks that `mean` is only asked of float tensors.
static LogicalResult verifyReduceKind(Operation *op, ReduceKind kind,
                                      Type elementType) {
  if (kind == ReduceKind::Mean && !isa<FloatType>(elementType))
    return op->emitOpError()
           << "kind mean needs a float element type, not " << elementType;
  return success();
}

/// Checks that operand and result have the same element type and rank.
static LogicalResult verifySameElementTypeAndRank(Operation *op,
                                                  RankedTensorType input,
                                                  RankedTensorType result) {
  if (input.getElementType() != result.getElementType())
    return op->emitOpError()
           << "result element type " << result.getElementType()
           << " differs from the operand's " << input.getElementType();
  if (input.getRank() != result.getRank())
    return op->emitOpError()
           << "result rank " << result.getRank()
           << " differs from the operand rank " << input.getRank();
  return success();
}

/// Checks that the tensor dimension `axis` (the attribute `name`) exists.
static LogicalResult verifyTensorAxis(Operation *op, StringRef name,
                                      int64_t axis, int64_t rank) {
  if (axis < 0 || axis >= rank)
    return op->emitOpError()
           << name << " " << axis << " is out of range for rank " << rank;
  return success();
}

/// The size of mesh axis `axis`, or an error if the mesh lacks it.
static FailureOr<int64_t> meshAxisSize(Operation *op, MeshAttr mesh,
                                       FlatSymbolRefAttr meshRef,
                                       StringRef axis) {
  std::optional<int64_t> size = mesh.getAxisSize(axis);
  if (!size)
    return op->emitOpError()
           << "mesh " << meshRef << " has no axis \"" << axis << "\"";
  return *size;
}

/// The number of ranks in a group of `axes` (already free of repeats, so the
/// product is bounded by the mesh's size).
static FailureOr<int64_t> groupSize(Operation *op, FlatSymbolRefAttr meshRef,
                                    ArrayAttr axes,
                                    SymbolTableCollection &symbolTables) {
  FailureOr<MeshAttr> mesh = lookupMesh(op, meshRef, &symbolTables);
  if (failed(mesh))
    return failure();
  int64_t group = 1;
  for (StringRef axis : axes.getAsValueRange<StringAttr>()) {
    FailureOr<int64_t> size = meshAxisSize(op, *mesh, meshRef, axis);
    if (failed(size))
      return failure();
    group *= *size;
  }
  return group;
}

/// Multiplies dimension `axis` of `shape` by the group size.
static LogicalResult growDim(Operation *op, SmallVectorImpl<int64_t> &shape,
                             int64_t axis, int64_t group) {
  int64_t grown;
  if (llvm::MulOverflow(shape[axis], group, grown))
    return op->emitOpError()
           << "dimension " << axis << " of size " << shape[axis]
           << " times the group size " << group << " overflows";
  shape[axis] = grown;
  return success();
}

/// Divides dimension `axis` of `shape` by the group size, which must divide.
static LogicalResult shrinkDim(Operation *op, SmallVectorImpl<int64_t> &shape,
                               int64_t axis, int64_t group) {
  if (shape[axis] % group != 0)
    return op->emitOpError()
           << "dimension " << axis << " of size " << shape[axis]
           << " is not divisible by the group size " << group;
  shape[axis] /= group;
  return success();
}

/// Checks the result shape against the one the collective produces.
static LogicalResult verifyResultShape(Operation *op,
                                       ArrayRef<int64_t> expected,
                                       RankedTensorType result) {
  if (result.getShape() != expected)
    return op->emitOpError()
           << "result shape " << shapeText(result.getShape())
           << " differs from the expected " << shapeText(expected);
  return success();
}

/// True when `verify()` has accepted the axes these shape checks index with
/// (it has reported any problem, so callers fail without a second message).
static bool axesInRange(RankedTensorType input, RankedTensorType result,
                        ArrayRef<int64_t> axes) {
  return input.getRank() == result.getRank() &&
         llvm::all_of(axes, [&](int64_t axis) {
           return axis >= 0 && axis < input.getRank();
         });
}

//===----------------------------------------------------------------------===//
// Collectives, synchronous and asynchronous
//===----------------------------------------------------------------------===//

template <typename OpT> static LogicalResult verifyAllReduceLike(OpT op) {
  if (failed(verifyMeshAxes(op, op.getMeshAxes())))
    return failure();
  return verifyReduceKind(op, op.getKind(),
                          op.getInput().getType().getElementType());
}

template <typename OpT> static LogicalResult verifyAllGatherLike(OpT op) {
  auto input = cast<RankedTensorType>(op.getInput().getType());
  RankedTensorType result = resultTensorType(op.getResult());
  if (failed(verifyMeshAxes(op, op.getMeshAxes())) ||
      failed(verifySameElementTypeAndRank(op, input, result)))
    return failure();
  return verifyTensorAxis(op, "gather_axis", op.getGatherAxis(),
                          input.getRank());
}

template <typename OpT>
static LogicalResult verifyAllGatherShape(OpT op,
                                          SymbolTableCollection &tables) {
  FailureOr<int64_t> group =
      groupSize(op, op.getMeshAttr(), op.getMeshAxes(), tables);
  if (failed(group))
    return failure();
  auto input = cast<RankedTensorType>(op.getInput().getType());
  RankedTensorType result = resultTensorType(op.getResult());
  int64_t axis = op.getGatherAxis();
  if (!axesInRange(input, result, {axis}))
    return failure();
  SmallVector<int64_t> shape(input.getShape());
  if (failed(growDim(op, shape, axis, *group)))
    return failure();
  return verifyResultShape(op, shape, result);
}

template <typename OpT> static LogicalResult verifyReduceScatterLike(OpT op) {
  auto input = cast<RankedTensorType>(op.getInput().getType());
  RankedTensorType result = resultTensorType(op.getResult());
  if (failed(verifyMeshAxes(op, op.getMeshAxes())) ||
      failed(verifyReduceKind(op, op.getKind(), input.getElementType())) ||
      failed(verifySameElementTypeAndRank(op, input, result)))
    return failure();
  return verifyTensorAxis(op, "scatter_axis", op.getScatterAxis(),
                          input.getRank());
}

template <typename OpT>
static LogicalResult verifyReduceScatterShape(OpT op,
                                              SymbolTableCollection &tables) {
  FailureOr<int64_t> group =
      groupSize(op, op.getMeshAttr(), op.getMeshAxes(), tables);
  if (failed(group))
    return failure();
  auto input = cast<RankedTensorType>(op.getInput().getType());
  RankedTensorType result = resultTensorType(op.getResult());
  int64_t axis = op.getScatterAxis();
  if (!axesInRange(input, result, {axis}))
    return failure();
  SmallVector<int64_t> shape(input.getShape());
  if (failed(shrinkDim(op, shape, axis, *group)))
    return failure();
  return verifyResultShape(op, shape, result);
}

LogicalResult AllReduceOp::verify() { return verifyAllReduceLike(*this); }

LogicalResult
AllReduceOp::verifySymbolUses(SymbolTableCollection &symbolTables) {
  return groupSize(*this, getMeshAttr(), getMeshAxes(), symbolTables);
}

LogicalResult AllReduceStartOp::verify() { return verifyAllReduceLike(*this); }

LogicalResult
AllReduceStartOp::verifySymbolUses(SymbolTableCollection &symbolTables) {
  return groupSize(*this, getMeshAttr(), getMeshAxes(), symbolTables);
}

LogicalResult AllGatherOp::verify() { return verifyAllGatherLike(*this); }

LogicalResult
AllGatherOp::verifySymbolUses(SymbolTableCollection &symbolTables) {
  return verifyAllGatherShape(*this, symbolTables);
}

LogicalResult AllGatherStartOp::verify() { return verifyAllGatherLike(*this); }

LogicalResult
AllGatherStartOp::verifySymbolUses(SymbolTableCollection &symbolTables) {
  return verifyAllGatherShape(*this, symbolTables);
}

LogicalResult ReduceScatterOp::verify() {
  return verifyReduceScatterLike(*this);
}

LogicalResult
ReduceScatterOp::verifySymbolUses(SymbolTableCollection &symbolTables) {
  return verifyReduceScatterShape(*this, symbolTables);
}

LogicalResult ReduceScatterStartOp::verify() {
  return verifyReduceScatterLike(*this);
}

LogicalResult
ReduceScatterStartOp::verifySymbolUses(SymbolTableCollection &symbolTables) {
  return verifyReduceScatterShape(*this, symbolTables);
}

LogicalResult LocalBlockOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  RankedTensorType result = resultTensorType(getResult());
  if (failed(verifyMeshAxes(*this, getMeshAxes())) ||
      failed(verifySameElementTypeAndRank(*this, input, result)))
    return failure();
  return verifyTensorAxis(*this, "slice_axis", getSliceAxis(), input.getRank());
}

LogicalResult
LocalBlockOp::verifySymbolUses(SymbolTableCollection &symbolTables) {
  FailureOr<int64_t> group =
      groupSize(*this, getMeshAttr(), getMeshAxes(), symbolTables);
  if (failed(group))
    return failure();
  auto input = cast<RankedTensorType>(getInput().getType());
  RankedTensorType result = resultTensorType(getResult());
  int64_t axis = getSliceAxis();
  if (!axesInRange(input, result, {axis}))
    return failure();
  SmallVector<int64_t> shape(input.getShape());
  if (failed(shrinkDim(*this, shape, axis, *group)))
    return failure();
  return verifyResultShape(*this, shape, result);
}

LogicalResult AllToAllOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (failed(verifyMeshAxes(*this, getMeshAxes())) ||
      failed(verifySameElementTypeAndRank(*this, input, result)) ||
      failed(verifyTensorAxis(*this, "split_axis", getSplitAxis(),
                              input.getRank())))
    return failure();
  return verifyTensorAxis(*this, "concat_axis", getConcatAxis(),
                          input.getRank());
}

LogicalResult
AllToAllOp::verifySymbolUses(SymbolTableCollection &symbolTables) {
  FailureOr<int64_t> group =
      groupSize(*this, getMeshAttr(), getMeshAxes(), symbolTables);
  if (failed(group))
    return failure();
  auto input = cast<RankedTensorType>(getInput().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  int64_t splitAxis = getSplitAxis(), concatAxis = getConcatAxis();
  if (!axesInRange(input, result, {splitAxis, concatAxis}))
    return failure();
  SmallVector<int64_t> shape(input.getShape());
  if (failed(shrinkDim(*this, shape, splitAxis, *group)) ||
      failed(growDim(*this, shape, concatAxis, *group)))
    return failure();
  return verifyResultShape(*this, shape, result);
}

//===----------------------------------------------------------------------===//
// Point-to-point
//===----------------------------------------------------------------------===//

/// Checks that a transfer's shift reaches another rank.
static LogicalResult verifyShift(Operation *op, int64_t shift) {
  if (shift == 0)
    return op->emitOpError("shift must be nonzero (a rank does not send to "
                           "itself)");
  return success();
}

/// Checks that the mesh has the transfer's axis and the shift fits it.
template <typename OpT>
static LogicalResult verifyPeer(OpT op, SymbolTableCollection &tables) {
  FailureOr<MeshAttr> mesh = lookupMesh(op, op.getMeshAttr(), &tables);
  if (failed(mesh))
    return failure();
  FailureOr<int64_t> size =
      meshAxisSize(op, *mesh, op.getMeshAttr(), op.getMeshAxis());
  if (failed(size))
    return failure();
  int64_t shift = op.getShift();
  if (shift <= -*size || shift >= *size)
    return op.emitOpError()
           << "shift " << shift << " is out of range for mesh axis \""
           << op.getMeshAxis() << "\" of size " << *size << "; it must lie in ("
           << -*size << ", " << *size << ")";
  return success();
}

LogicalResult SendOp::verify() { return verifyShift(*this, getShift()); }

LogicalResult SendOp::verifySymbolUses(SymbolTableCollection &symbolTables) {
  return verifyPeer(*this, symbolTables);
}

LogicalResult RecvOp::verify() { return verifyShift(*this, getShift()); }

LogicalResult RecvOp::verifySymbolUses(SymbolTableCollection &symbolTables) {
  return verifyPeer(*this, symbolTables);
}

//===----------------------------------------------------------------------===//
// Sharding annotations
//===----------------------------------------------------------------------===//

/// Checks an annotation's sharding against its mesh and the value's type.
static LogicalResult verifyAnnotation(Operation *op, ShardingAttr sharding,
                                      Type type,
                                      SymbolTableCollection &tables) {
  FailureOr<MeshAttr> mesh = lookupMesh(op, sharding.getMesh(), &tables);
  if (failed(mesh))
    return failure();
  return sharding.verifyFor(*mesh, type, [&] { return op->emitOpError(); });
}

LogicalResult
ShardingConstraintOp::verifySymbolUses(SymbolTableCollection &symbolTables) {
  return verifyAnnotation(*this, getSharding(), getType(), symbolTables);
}

LogicalResult ReshardOp::verifySymbolUses(SymbolTableCollection &symbolTables) {
  return verifyAnnotation(*this, getSharding(), getType(), symbolTables);
}

//===----------------------------------------------------------------------===//
// Pipeline
//===----------------------------------------------------------------------===//

LogicalResult StageOp::verify() {
  // I64Attr accessors return uint64_t; the sign matters here.
  int64_t index = getIndex();
  if (index < 0)
    return emitOpError() << "index " << index << " is negative";
  if ((*this)->getParentOfType<StageOp>())
    return emitOpError("is nested in another dist.stage");
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError() << "body has " << body.getNumArguments()
                         << " arguments for " << getInputs().size()
                         << " inputs";
  for (auto [index, pair] :
       llvm::enumerate(llvm::zip(body.getArgumentTypes(), getInputs()))) {
    auto [argType, input] = pair;
    if (argType != input.getType())
      return emitOpError() << "body argument " << index << " has type "
                           << argType << " but input " << index << " has type "
                           << input.getType();
  }
  if (body.empty() || !isa<YieldOp>(body.back()))
    return emitOpError("body must end in dist.yield");
  return success();
}

LogicalResult YieldOp::verify() {
  auto stage = cast<StageOp>((*this)->getParentOp());
  if (getValues().size() != stage.getNumResults())
    return emitOpError() << "yields " << getValues().size()
                         << " values for a stage with " << stage.getNumResults()
                         << " results";
  for (auto [index, pair] : llvm::enumerate(
           llvm::zip(getValues().getTypes(), stage.getResultTypes()))) {
    auto [valueType, resultType] = pair;
    if (valueType != resultType)
      return emitOpError() << "yielded value " << index << " has type "
                           << valueType << " but stage result " << index
                           << " has type " << resultType;
  }
  return success();
}

std::array<int64_t, 3> mlir::dist::getStandardMeshSizes(Operation *module) {
  std::array<int64_t, 3> sizes = {1, 1, 1};
  for (Region &region : module->getRegions())
    for (MeshOp op : region.getOps<MeshOp>()) {
      MeshAttr mesh = op.getMesh();
      sizes = {mesh.getAxisSize("pp").value_or(1),
               mesh.getAxisSize("dp").value_or(1),
               mesh.getAxisSize("tp").value_or(1)};
      return sizes;
    }
  return sizes;
}
