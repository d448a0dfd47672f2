//===- Fuse.cpp - group ops into dtg.fusion kernels -----------------------===//
//
// Greedy producer-to-consumer grouping on each function's top-level ops (see
// Passes.td). Groups are found first on the unchanged function, then each
// becomes one dtg.fusion placed where its last op was.
//
//===----------------------------------------------------------------------===//

#include "passes/Fusion/Passes.h"

#include "dialects/DTG/IR/DTGFusion.h"
#include "dialects/DTG/IR/DTGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#include <optional>

#define DEBUG_TYPE "dtc-fuse"

namespace mlir::dtc {
#define GEN_PASS_DEF_FUSEPASS
#include "passes/Fusion/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

/// True for a constant copied into the kernels that read it.
static bool isInlinedConstant(Value v);

namespace {

/// The parts of `pad(x) + pad(y)` when both pad one axis with zeros around a
/// part of it and the parts are adjacent: x, y in order along `axis` (a
/// concat of earlier parts along it, used only there, spliced in), with the
/// outer padding in `low` and `high`; `spliced` gets the concats spliced.
bool adjacentPads(dtg::AddOp add, SmallVectorImpl<Value> &parts, int64_t &axis,
                  SmallVectorImpl<int64_t> &low, SmallVectorImpl<int64_t> &high,
                  SmallVectorImpl<Operation *> &spliced) {
  auto lhs = add.getLhs().getDefiningOp<dtg::PadOp>();
  auto rhs = add.getRhs().getDefiningOp<dtg::PadOp>();
  if (!lhs || !rhs || lhs == rhs || lhs.getType() != add.getType() ||
      rhs.getType() != add.getType() || !lhs->hasOneUse() || !rhs->hasOneUse())
    return false;
  for (dtg::PadOp pad : {lhs, rhs})
    if (pad.getMode() != "constant" ||
        pad.getValueAttr().getValueAsDouble() != 0.0)
      return false;
  axis = -1;
  for (size_t d = 0; d < lhs.getLow().size(); ++d) {
    int64_t amounts[] = {lhs.getLow()[d], lhs.getHigh()[d], rhs.getLow()[d],
                         rhs.getHigh()[d]};
    if (llvm::any_of(amounts, [](int64_t a) { return a < 0; }))
      return false; // a crop
    if (llvm::all_of(amounts, [](int64_t a) { return a == 0; }))
      continue;
    if (axis >= 0)
      return false; // a second padded axis
    axis = static_cast<int64_t>(d);
  }
  if (axis < 0)
    return false;
  int64_t size = cast<RankedTensorType>(add.getType()).getDimSize(axis);
  dtg::PadOp first = lhs, second = rhs;
  if (size - rhs.getHigh()[axis] == lhs.getLow()[axis])
    std::swap(first, second);
  else if (size - lhs.getHigh()[axis] != rhs.getLow()[axis])
    return false;
  for (dtg::PadOp pad : {first, second}) {
    auto concat = pad.getOperand().getDefiningOp<dtg::ConcatOp>();
    if (concat && static_cast<int64_t>(concat.getAxis()) == axis &&
        concat->hasOneUse()) {
      llvm::append_range(parts, concat.getInputs());
      spliced.push_back(concat);
    } else {
      parts.push_back(pad.getOperand());
    }
  }
  low.assign(first.getLow().begin(), first.getLow().end());
  high.assign(first.getHigh().begin(), first.getHigh().end());
  high[axis] = second.getHigh()[axis];
  return true;
}

/// Sums of zero pads whose parts lie side by side along one axis become one
/// concat (padded, if the parts do not fill the axis): a split's gradient,
/// each part's gradient padded to the whole and then summed, is written
/// once instead of once per part and summed. The new ops keep the sum's
/// marks (dtg.backward).
void joinSplitGradients(Block &block) {
  SmallVector<dtg::AddOp> adds;
  for (Operation &op : block)
    if (auto add = dyn_cast<dtg::AddOp>(op))
      adds.push_back(add);
  // In order: a sum of three parts is a sum of the first two's join.
  for (dtg::AddOp add : adds) {
    SmallVector<Value> parts;
    SmallVector<int64_t> low, high;
    SmallVector<Operation *> spliced;
    int64_t axis = 0;
    if (!adjacentPads(add, parts, axis, low, high, spliced))
      continue;
    OpBuilder b(add);
    auto concat =
        b.create<dtg::ConcatOp>(add.getLoc(), parts, b.getI64IntegerAttr(axis));
    Value joined = concat.getResult();
    SmallVector<Operation *> made = {concat};
    if (llvm::any_of(low, [](int64_t a) { return a != 0; }) ||
        llvm::any_of(high, [](int64_t a) { return a != 0; })) {
      auto pad = b.create<dtg::PadOp>(
          add.getLoc(), add.getType(), joined, b.getDenseI64ArrayAttr(low),
          b.getDenseI64ArrayAttr(high), b.getStringAttr("constant"),
          b.getF64FloatAttr(0.0));
      made.push_back(pad);
      joined = pad.getResult();
    }
    for (Operation *op : made)
      for (NamedAttribute attr : add->getDiscardableAttrs())
        op->setAttr(attr.getName(), attr.getValue());
    // The pads, then the concats spliced into this one, go with the sum.
    SmallVector<Operation *> pads = {add.getLhs().getDefiningOp(),
                                     add.getRhs().getDefiningOp()};
    add.getResult().replaceAllUsesWith(joined);
    add.erase();
    for (Operation *op : llvm::concat<Operation *>(pads, spliced))
      op->erase();
  }
}

/// Where an op sits in a kernel: before the reductions (over their input
/// shape), the reductions or the matmul, or after them (over the kernel's
/// output shape; every op of a `loop` kernel).
enum class Phase { Prologue = 0, Core = 1, Epilogue = 2 };

enum class Kind { Loop, Reduction, Gemm };

StringRef kindName(Kind kind) {
  switch (kind) {
  case Kind::Loop:
    return "loop";
  case Kind::Reduction:
    return "reduction";
  case Kind::Gemm:
    return "gemm";
  }
  return "";
}

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// Element types the kernels of a fusion handle.
bool supportedType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape() || tensor.getRank() > 8)
    return false;
  Type e = tensor.getElementType();
  return e.isF32() || e.isF64() || e.isBF16() || e.isF16() || e.isInteger(1) ||
         e.isInteger(8) || e.isInteger(16) || e.isInteger(32) ||
         e.isInteger(64);
}

bool allTypesSupported(Operation *op) {
  return llvm::all_of(op->getOperandTypes(), supportedType) &&
         llvm::all_of(op->getResultTypes(), supportedType);
}

bool isFloatTensor(Value v) {
  return isa<FloatType>(cast<RankedTensorType>(v.getType()).getElementType());
}

bool isBackward(Operation *op) { return op->hasAttr("dtg.backward"); }

/// A float matmul of matrices (operands of rank >= 2) a gemm kernel holds.
bool isFusibleMatMul(Operation *op) {
  return isa<dtg::MatMulOp>(op) && isFloatTensor(op->getResult(0)) &&
         shapeOf(op->getOperand(0)).size() >= 2 &&
         shapeOf(op->getOperand(1)).size() >= 2;
}

/// A float reduction that reduces (fewer result elements than operand
/// elements: the kernel tells its phases apart by shape).
bool isFusibleFloatReduction(Operation *op) {
  return dtg::isFusibleReduction(op) && isFloatTensor(op->getOperand(0)) &&
         dtg::numElements(shapeOf(op->getOperand(0))) !=
             dtg::numElements(shapeOf(op->getResult(0)));
}

/// The axes of a fusible reduction.
ArrayRef<int64_t> reductionAxes(Operation *op) {
  return cast<DenseI64ArrayAttr>(op->getAttr("axes")).asArrayRef();
}

/// The tensors of a reduction's input shape that it reads: its operand,
/// followed up through elementwise ops of that shape (x for both sum(x)
/// and sum(x * x)).
llvm::DenseSet<Value> reductionReads(Operation *reduction) {
  Value operand = reduction->getOperand(0);
  ArrayRef<int64_t> shape = shapeOf(operand);
  llvm::DenseSet<Value> reads, seen;
  SmallVector<Value> work{operand};
  while (!work.empty() && seen.size() < 64) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second || shapeOf(v) != shape)
      continue;
    Operation *def = v.getDefiningOp();
    if (!def || !dtg::isFusibleElementwise(def)) {
      reads.insert(v);
      continue;
    }
    llvm::append_range(work, def->getOperands());
  }
  return reads;
}

/// The most buffers one kernel reads.
constexpr size_t kMaxInputs = 16;

/// One group under construction.
struct Group {
  Kind kind = Kind::Loop;
  /// The shape every epilogue op has (the kernel's output shape).
  SmallVector<int64_t> shape;
  /// Reductions: their input shape and axes.
  SmallVector<int64_t> inShape, axes;
  Operation *seed = nullptr;
  bool backward = false;
  /// Ops in the group (views included), with their phase.
  llvm::MapVector<Operation *, Phase> ops;
  /// Members the kernel recomputes from their operands while the original
  /// stays for its other users (earlier than the kernel): an input's
  /// elementwise op with a per-channel or scalar value, which costs the
  /// kernel no more to read than its result.
  llvm::DenseSet<Operation *> copies;
};

/// The phase an elementwise producer of `shape` takes in `group` for a
/// consumer of phase `consumerPhase`: the epilogue at the kernel's output
/// shape, a reduction's prologue at its input shape; none otherwise.
std::optional<Phase> elementwisePhase(const Group &group, Phase consumerPhase,
                                      ArrayRef<int64_t> shape) {
  if (consumerPhase == Phase::Epilogue && shape == ArrayRef(group.shape))
    return Phase::Epilogue;
  if (group.kind == Kind::Reduction && consumerPhase != Phase::Epilogue &&
      shape == ArrayRef(group.inShape))
    return Phase::Prologue;
  return std::nullopt;
}

/// True for an elementwise op a kernel can recompute at about the cost of
/// reading its result: two operands, one of its own shape and the other at
/// least 8 times smaller (broadcast along it), neither a view
/// (`x - mean(x)`, `g * scale`).
bool isCheapCopy(Operation *op) {
  if (!dtg::isFusibleElementwise(op) || op->getNumResults() != 1 ||
      op->getNumOperands() != 2)
    return false;
  ArrayRef<int64_t> shape = shapeOf(op->getResult(0));
  int64_t full = 0;
  for (Value operand : op->getOperands()) {
    if (Operation *def = operand.getDefiningOp();
        def && dtg::isFusibleView(def))
      return false;
    if (shapeOf(operand) == shape)
      ++full;
    else if (dtg::numElements(shapeOf(operand)) * 8 > dtg::numElements(shape))
      return false;
  }
  return full == 1;
}

/// Finds the groups of one block.
class GroupFinder {
public:
  explicit GroupFinder(Block &block) : block(block) {
    int64_t p = 0;
    for (Operation &op : block) {
      if (isa<func::CallOp>(op))
        callPositions.push_back(p);
      position[&op] = p++;
    }
  }

  /// Groups that save at least one kernel, in the order found.
  SmallVector<Group, 0> run();

private:
  /// Starts a group at `op`, or returns false.
  bool seed(Operation *op, Group &group);
  /// Grows `group` from its seed.
  void grow(Group &group);
  /// Tries to add `producer` (the defining op of an operand of `consumer`).
  bool tryAdd(Group &group, Operation *producer, Operation *consumer);
  /// Adds to a reduction group the siblings of its reductions that may
  /// join it; true if any joined.
  bool addSiblings(Group &group);
  /// Adds to a grown group, as copies, the cheap producers of its members
  /// that stayed out because something outside reads them before the
  /// kernel.
  void addCopies(Group &group);
  /// The reductions not yet in a group over the same elements (input shape
  /// and axes) as `reduction` that read a tensor in common with it, neither
  /// depending on the other, in the block's order: one pass over the
  /// tensors can compute them all (a batch norm gradient's sum(g),
  /// sum(g * centered) and its variance).
  SmallVector<Operation *> siblingsOf(Operation *reduction) const;
  /// True if `sibling` may join `group`: before its seed, and nothing
  /// outside reads it before the kernel.
  bool siblingMayJoin(Group &group, Operation *sibling);
  /// True if `ancestor` (earlier in the block) is among what `op` is
  /// computed from.
  bool dependsOn(Operation *op, Operation *ancestor) const;
  /// True if every user of `op`'s results is in the group or after its
  /// seed (or anywhere, for a `copy`), and the in-group users can consume
  /// a value of phase `phase`.
  bool usersAllow(Group &group, Operation *op, Phase phase, bool copy = false);
  /// Kernels the group saves.
  int64_t saved(const Group &group) const;
  /// Drops from a reduction group the epilogue ops its reductions do not
  /// feed, and what only they read.
  void dropUnfed(Group &group) const;

  /// True if a call lies between `producer` and the group's seed: fusing
  /// would move the producer's work (and keep its operands alive) past the
  /// call, whose own memory then comes on top (the sum of every
  /// micro-step's gradients, fused into one kernel after the last
  /// micro-step, kept all of their gradients at once).
  bool crossesCall(Operation *producer, const Group &group) const {
    auto next = llvm::upper_bound(callPositions, position.lookup(producer));
    return next != callPositions.end() && *next < position.lookup(group.seed);
  }

  Block &block;
  llvm::DenseMap<Operation *, int64_t> position;
  /// Positions of the block's calls, in order.
  SmallVector<int64_t> callPositions;
  /// Non-view ops already in a group.
  llvm::DenseSet<Operation *> assigned;
};

} // namespace

static bool viewsExpressible(const Group &group);

bool GroupFinder::seed(Operation *op, Group &group) {
  if (op->getBlock() != &block || assigned.count(op) ||
      !allTypesSupported(op) || op->getNumResults() != 1)
    return false;
  group = Group();
  group.seed = op;
  group.backward = isBackward(op);
  Value result = op->getResult(0);
  group.shape.assign(shapeOf(result).begin(), shapeOf(result).end());
  if (dtg::isFusibleElementwise(op)) {
    group.kind = Kind::Loop;
    group.ops.insert({op, Phase::Epilogue});
    return true;
  }
  if (isFusibleFloatReduction(op)) {
    group.kind = Kind::Reduction;
    ArrayRef<int64_t> in = shapeOf(op->getOperand(0));
    group.inShape.assign(in.begin(), in.end());
    group.axes.assign(reductionAxes(op).begin(), reductionAxes(op).end());
    group.ops.insert({op, Phase::Core});
    return true;
  }
  if (isFusibleMatMul(op)) {
    group.kind = Kind::Gemm;
    group.ops.insert({op, Phase::Core});
    return true;
  }
  return false;
}

bool GroupFinder::usersAllow(Group &group, Operation *op, Phase phase,
                             bool copy) {
  for (Operation *user : op->getUsers()) {
    auto it = group.ops.find(user);
    if (it == group.ops.end()) {
      // An outside user must come after the kernel (which sits at the seed),
      // or read the original of a copy.
      if (!copy && (user->getBlock() != &block ||
                    position.lookup(user) <= position.lookup(group.seed)))
        return false;
      continue;
    }
    if (dtg::isFusibleView(user) || group.copies.contains(user))
      return false; // views and copies read only the kernel's inputs
    Phase consumer = it->second;
    bool ok = consumer == phase ||
              (phase == Phase::Prologue && consumer == Phase::Core) ||
              (phase == Phase::Core && consumer == Phase::Epilogue);
    if (!ok)
      return false;
  }
  return true;
}

bool GroupFinder::tryAdd(Group &group, Operation *producer,
                         Operation *consumer) {
  if (!producer || producer->getBlock() != &block ||
      group.ops.count(producer) || !allTypesSupported(producer) ||
      crossesCall(producer, group))
    return false;
  Phase consumerPhase = group.ops.lookup(consumer);
  bool consumerIsView = dtg::isFusibleView(consumer);
  if (dtg::isFusibleView(producer)) {
    // A view reads the kernel's inputs only (copied in: the original stays
    // for other users).
    Operation *source = producer->getOperand(0).getDefiningOp();
    if (source && group.ops.count(source) && !dtg::isFusibleView(source))
      return false;
    group.ops.insert({producer, consumerPhase});
    return true;
  }
  if (consumerIsView || assigned.count(producer) ||
      isBackward(producer) != group.backward || producer->getNumResults() != 1)
    return false;
  Value result = producer->getResult(0);
  ArrayRef<int64_t> shape = shapeOf(result);
  if (dtg::isFusibleElementwise(producer)) {
    std::optional<Phase> phase = elementwisePhase(group, consumerPhase, shape);
    if (!phase)
      return false;
    if (isa<dtg::MatMulOp>(consumer))
      return false; // matmul operands are inputs or views of them
    if (!usersAllow(group, producer, *phase))
      return false;
    group.ops.insert({producer, *phase});
    return true;
  }
  if (consumerPhase != Phase::Epilogue || shape != ArrayRef(group.shape))
    return false;
  if (isFusibleFloatReduction(producer)) {
    ArrayRef<int64_t> in = shapeOf(producer->getOperand(0));
    if (group.kind == Kind::Gemm)
      return false;
    if (group.kind == Kind::Reduction &&
        (in != ArrayRef(group.inShape) ||
         reductionAxes(producer) != ArrayRef(group.axes)))
      return false;
    // Reductions share a kernel when they read a tensor in common (a batch
    // norm's sum(x) and sum(x * x)), not merely a shape (every parameter's
    // sum of squares for the gradient norm).
    if (group.kind == Kind::Reduction) {
      llvm::DenseSet<Value> reads = reductionReads(producer);
      bool shared = false;
      for (auto [member, phase] : group.ops)
        if (phase == Phase::Core && isFusibleFloatReduction(member))
          for (Value v : reductionReads(member))
            shared |= reads.contains(v);
      if (!shared)
        return false;
    }
    if (!usersAllow(group, producer, Phase::Core))
      return false;
    // A reduction whose siblings cannot come too waits to seed a kernel of
    // its own with them: one pass over the tensors instead of one each is
    // worth more than an epilogue over the reduced values.
    for (Operation *sibling : siblingsOf(producer))
      if (!group.ops.count(sibling) && !siblingMayJoin(group, sibling))
        return false;
    group.kind = Kind::Reduction;
    group.inShape.assign(in.begin(), in.end());
    group.axes.assign(reductionAxes(producer).begin(),
                      reductionAxes(producer).end());
    group.ops.insert({producer, Phase::Core});
    return true;
  }
  if (isFusibleMatMul(producer) && group.kind == Kind::Loop) {
    if (!usersAllow(group, producer, Phase::Core))
      return false;
    group.kind = Kind::Gemm;
    group.ops.insert({producer, Phase::Core});
    return true;
  }
  return false;
}

/// What the kernel of `ops` reads from outside them, in order of first use:
/// its inputs, and apart (into `constants`, where given) the constants
/// copied into it.
static llvm::SetVector<Value>
kernelInputs(ArrayRef<Operation *> ops,
             function_ref<bool(Operation *)> isMember,
             SmallVectorImpl<Operation *> *constants = nullptr) {
  llvm::SetVector<Value> inputs;
  for (Operation *op : ops)
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (def && isMember(def))
        continue;
      if (isInlinedConstant(operand)) {
        if (constants && !llvm::is_contained(*constants, def))
          constants->push_back(def);
        continue;
      }
      inputs.insert(operand);
    }
  return inputs;
}

/// The buffers a kernel of `group` reads (constants copied in aside).
static size_t countInputs(const Group &group) {
  SmallVector<Operation *> ops;
  for (auto [op, phase] : group.ops)
    ops.push_back(op);
  return kernelInputs(ops,
                      [&](Operation *op) { return group.ops.count(op) > 0; })
      .size();
}

bool GroupFinder::dependsOn(Operation *op, Operation *ancestor) const {
  int64_t floor = position.lookup(ancestor);
  llvm::DenseSet<Operation *> seen;
  SmallVector<Operation *> work{op};
  while (!work.empty()) {
    Operation *next = work.pop_back_val();
    if (next == ancestor || seen.size() > 256)
      return true; // (or too far to tell)
    for (Value operand : next->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (def && def->getBlock() == &block && position.lookup(def) >= floor &&
          seen.insert(def).second)
        work.push_back(def);
    }
  }
  return false;
}

SmallVector<Operation *> GroupFinder::siblingsOf(Operation *reduction) const {
  ArrayRef<int64_t> inShape = shapeOf(reduction->getOperand(0));
  llvm::DenseSet<Value> reads = reductionReads(reduction);
  // The reductions that read the same tensors, through elementwise ops of
  // the input shape.
  SmallVector<Operation *> found;
  llvm::DenseSet<Value> seen;
  SmallVector<Value> work(reads.begin(), reads.end());
  while (!work.empty() && seen.size() < 64) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    for (Operation *user : v.getUsers()) {
      if (user->getBlock() != &block || user == reduction)
        continue;
      if (isFusibleFloatReduction(user)) {
        if (!llvm::is_contained(found, user))
          found.push_back(user);
      } else if (dtg::isFusibleElementwise(user) &&
                 user->getNumResults() == 1 &&
                 shapeOf(user->getResult(0)) == inShape) {
        work.push_back(user->getResult(0));
      }
    }
  }
  llvm::erase_if(found, [&](Operation *other) {
    if (assigned.count(other) || isBackward(other) != isBackward(reduction) ||
        !allTypesSupported(other) || shapeOf(other->getOperand(0)) != inShape ||
        reductionAxes(other) != reductionAxes(reduction))
      return true;
    bool before = position.lookup(other) < position.lookup(reduction);
    return before ? dependsOn(reduction, other) : dependsOn(other, reduction);
  });
  llvm::sort(found, [&](Operation *a, Operation *b) {
    return position.lookup(a) < position.lookup(b);
  });
  return found;
}

bool GroupFinder::siblingMayJoin(Group &group, Operation *sibling) {
  return position.lookup(sibling) < position.lookup(group.seed) &&
         !crossesCall(sibling, group) &&
         usersAllow(group, sibling, Phase::Core);
}

bool GroupFinder::addSiblings(Group &group) {
  if (group.kind != Kind::Reduction)
    return false;
  SmallVector<Operation *> reductions;
  for (auto [member, phase] : group.ops)
    if (phase == Phase::Core && isFusibleFloatReduction(member))
      reductions.push_back(member);
  bool added = false;
  for (Operation *reduction : reductions)
    for (Operation *sibling : siblingsOf(reduction)) {
      if (group.ops.count(sibling) || !siblingMayJoin(group, sibling))
        continue;
      group.ops.insert({sibling, Phase::Core});
      if (countInputs(group) > kMaxInputs) {
        group.ops.pop_back();
        continue;
      }
      added = true;
    }
  return added;
}

void GroupFinder::addCopies(Group &group) {
  size_t members = group.ops.size();
  for (size_t next = 0; next < members; ++next) {
    auto [op, consumerPhase] = group.ops.begin()[next];
    if (dtg::isFusibleView(op) || isa<dtg::MatMulOp>(op))
      continue;
    for (Value operand : op->getOperands()) {
      Operation *producer = operand.getDefiningOp();
      if (!producer || producer->getBlock() != &block ||
          group.ops.count(producer) || assigned.count(producer) ||
          isBackward(producer) != group.backward ||
          !allTypesSupported(producer) || crossesCall(producer, group) ||
          !isCheapCopy(producer))
        continue;
      std::optional<Phase> phase = elementwisePhase(
          group, consumerPhase, shapeOf(producer->getResult(0)));
      if (!phase || !usersAllow(group, producer, *phase, /*copy=*/true))
        continue;
      group.ops.insert({producer, *phase});
      group.copies.insert(producer);
      if (countInputs(group) > kMaxInputs) {
        group.ops.pop_back();
        group.copies.erase(producer);
      }
    }
  }
}

void GroupFinder::grow(Group &group) {
  // Breadth-first over operands of the ops added.
  for (size_t next = 0; next < group.ops.size(); ++next) {
    Operation *op = group.ops.begin()[next].first;
    for (Value operand : op->getOperands()) {
      Kind kind = group.kind;
      SmallVector<int64_t> inShape = group.inShape, axes = group.axes;
      if (!tryAdd(group, operand.getDefiningOp(), op))
        continue;
      // A kernel reads at most kMaxInputs buffers: the gradient norm's sum
      // over every parameter would otherwise be one kernel whose code grows
      // with the model's depth. A view that strides cannot express (a
      // reshape merging dimensions a transpose separated) stays outside:
      // the kernel reads its result. (The producer was added last and not
      // grown from yet.)
      Operation *added = group.ops.back().first;
      if (countInputs(group) > kMaxInputs ||
          (dtg::isFusibleView(added) && !viewsExpressible(group))) {
        group.ops.pop_back();
        group.kind = kind;
        group.inShape = std::move(inShape);
        group.axes = std::move(axes);
      }
    }
  }
}

int64_t GroupFinder::saved(const Group &group) const {
  int64_t kernels = 0;
  for (auto [op, phase] : group.ops) {
    if (group.copies.contains(op))
      continue; // computed again; the original stays
    if (!dtg::isFusibleView(op)) {
      ++kernels;
      continue;
    }
    if (isa<dtg::ReshapeOp>(op))
      continue;
    // A copied-in view saves its kernel when nothing else reads it.
    if (llvm::all_of(op->getUsers(), [&](Operation *user) {
          return group.ops.count(user) > 0;
        }))
      ++kernels;
  }
  return kernels - 1;
}

void GroupFinder::dropUnfed(Group &group) const {
  // A running sum's earlier terms, each with a reduction of its own (the
  // gradient norm's sum over every parameter), would make one kernel whose
  // code grows with the model's depth; dropped, each term is a kernel of
  // its own, the same for every layer.
  if (group.kind != Kind::Reduction)
    return;
  SmallVector<Operation *> members;
  for (auto [op, phase] : group.ops)
    members.push_back(op);
  llvm::sort(members, [&](Operation *a, Operation *b) {
    return position.lookup(a) < position.lookup(b);
  });
  llvm::DenseSet<Operation *> fed, dropped;
  for (Operation *op : members)
    if (group.ops.lookup(op) == Phase::Core ||
        llvm::any_of(op->getOperands(),
                     [&](Value v) { return fed.contains(v.getDefiningOp()); }))
      fed.insert(op);
  if (!fed.contains(group.seed))
    return;
  for (Operation *op : members)
    if (group.ops.lookup(op) == Phase::Epilogue && !fed.contains(op) &&
        !dtg::isFusibleView(op))
      dropped.insert(op);
  if (dropped.empty())
    return;
  // What a dropped op reads from the group must exist before it, outside
  // the kernel (which runs at the seed): dropped too. (Users come after
  // their producers.)
  for (Operation *op : llvm::reverse(members))
    if (llvm::any_of(op->getUsers(),
                     [&](Operation *user) { return dropped.contains(user); }))
      dropped.insert(op);
  llvm::MapVector<Operation *, Phase> kept;
  for (auto [op, phase] : group.ops)
    if (!dropped.contains(op))
      kept.insert({op, phase});
  // (Core ops are fed and what a dropped op reads is unfed: the group keeps
  // its reductions.)
  group.ops = std::move(kept);
}

SmallVector<Group, 0> GroupFinder::run() {
  SmallVector<Operation *> order;
  for (Operation &op : block)
    order.push_back(&op);
  SmallVector<Group, 0> groups;
  for (Operation *op : llvm::reverse(order)) {
    Group group;
    if (!seed(op, group))
      continue;
    grow(group);
    while (addSiblings(group))
      grow(group);
    dropUnfed(group);
    addCopies(group);
    if (saved(group) < 1 || !viewsExpressible(group))
      continue;
    for (auto [member, phase] : group.ops)
      if (!dtg::isFusibleView(member) && !group.copies.contains(member))
        assigned.insert(member);
    groups.push_back(std::move(group));
  }
  return groups;
}

/// True if every view of the group is a strided view of an input.
static bool viewsExpressible(const Group &group) {
  SmallVector<Operation *> views;
  for (auto [op, phase] : group.ops)
    if (dtg::isFusibleView(op))
      views.push_back(op);
  llvm::sort(views,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  llvm::DenseMap<Operation *, std::pair<SmallVector<int64_t>, int64_t>> done;
  for (Operation *view : views) {
    Value source = view->getOperand(0);
    SmallVector<int64_t> strides = dtg::contiguousStrides(shapeOf(source));
    int64_t offset = 0;
    if (auto it = done.find(source.getDefiningOp()); it != done.end()) {
      strides = it->second.first;
      offset = it->second.second;
    }
    SmallVector<int64_t> resultStrides;
    int64_t resultOffset;
    if (failed(
            dtg::applyView(view, strides, offset, resultStrides, resultOffset)))
      return false;
    done[view] = {resultStrides, resultOffset};
  }
  return true;
}

/// True for a constant copied into the kernels that read it.
static bool isInlinedConstant(Value v) {
  auto constant = v.getDefiningOp<dtg::ConstantOp>();
  return constant && isa<SplatElementsAttr>(constant.getValue());
}

/// Replaces `group`'s ops with one dtg.fusion at its seed.
static void materialize(Group &group) {
  // A copy's original stays for its other users: the kernel computes the
  // value again and does not return it.
  SmallVector<Operation *> ops;
  for (auto [op, phase] : group.ops)
    ops.push_back(op);
  llvm::sort(ops,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  llvm::DenseSet<Operation *> members(ops.begin(), ops.end());

  SmallVector<Operation *> constants;
  llvm::SetVector<Value> inputs = kernelInputs(
      ops, [&](Operation *op) { return members.count(op) > 0; }, &constants);
  SmallVector<Value> outputs;
  for (Operation *op : ops) {
    if (dtg::isFusibleView(op) || group.copies.contains(op))
      continue;
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(),
                       [&](Operation *user) { return !members.count(user); }))
        outputs.push_back(result);
  }

  SmallVector<Location> locations;
  for (Operation *op : ops)
    if (!dtg::isFusibleView(op))
      locations.push_back(op->getLoc());
  OpBuilder builder(group.seed);
  Location loc = builder.getFusedLoc(locations);
  SmallVector<Type> resultTypes;
  for (Value v : outputs)
    resultTypes.push_back(v.getType());
  auto fusion = builder.create<dtg::FusionOp>(
      loc, resultTypes, kindName(group.kind), inputs.getArrayRef());
  if (group.backward)
    fusion->setAttr("dtg.backward", builder.getUnitAttr());
  Block &body = fusion.getBody().front();
  IRMapping mapping;
  for (auto [input, arg] : llvm::zip(inputs, body.getArguments()))
    mapping.map(input, arg);
  OpBuilder inner = OpBuilder::atBlockEnd(&body);
  for (Operation *constant : constants)
    inner.clone(*constant, mapping);
  for (Operation *op : ops)
    inner.clone(*op, mapping);
  SmallVector<Value> yielded;
  for (Value v : outputs)
    yielded.push_back(mapping.lookup(v));
  inner.create<dtg::YieldOp>(loc, yielded);

  for (auto [output, result] : llvm::zip(outputs, fusion.getResults()))
    output.replaceUsesWithIf(
        result, [&](OpOperand &use) { return !members.count(use.getOwner()); });
  // (A copy's original is not the group's to erase: a later group may hold
  // it as a member; the pass erases the originals nothing reads at the end.)
  for (Operation *op : llvm::reverse(ops))
    if (op->use_empty() && !group.copies.contains(op))
      op->erase();
}

namespace {
struct FusePass : public mlir::dtc::impl::FusePassBase<FusePass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Block &block = func.getBody().front();
    joinSplitGradients(block);
    SmallVector<Group, 0> groups = GroupFinder(block).run();
    LLVM_DEBUG(llvm::dbgs() << "dtc-fuse: " << groups.size() << " groups in "
                            << func.getSymName() << "\n");
    llvm::DenseSet<Operation *> copies;
    for (Group &group : groups)
      copies.insert(group.copies.begin(), group.copies.end());
    for (Group &group : groups)
      materialize(group);
    // Originals of copies that nothing reads any more (every reader now in
    // a kernel that computes its own), walking the live ops only (a later
    // group may have erased an original it held).
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
      if (copies.contains(&op) && !isa<dtg::FusionOp>(op) && op.use_empty())
        op.erase();
    // Constants every reader of which now holds a copy.
    for (Operation &op : llvm::make_early_inc_range(block))
      if (isa<dtg::ConstantOp>(op) && op.use_empty())
        op.erase();
  }
};
} // namespace
