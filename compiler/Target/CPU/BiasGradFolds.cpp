//===- BiasGradFolds.cpp - bias gradients a weight's product computes -----===//

#include "compiler/Target/CPU/BiasGradFolds.h"
#include "compiler/Target/CPU/FusionPrinter.h"

#include "dialects/DTG/IR/DTGFusion.h"
#include "dialects/DTG/IR/DTGOps.h"
#include "dialects/Dist/IR/DistOps.h"
#include "passes/Memory/Passes.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::dtc::cpu;

namespace {

using fusion::dimsOf;
using fusion::numel;
using mlir::dtc::memory::bufferOf;

/// Whether `op` is a view of its operand's buffer that emits no code (a
/// reshape the memory plan left in place; not a wait).
bool isBufferView(Operation *op) {
  return op->hasAttr(mlir::dtc::memory::kAlias) && op->getNumOperands() == 1 &&
         op->getNumResults() == 1 && !isa<dist::WaitOp>(op);
}

/// Whether an op other than a view reads `v` (or a view of it): else its
/// buffer is free after its definition.
bool isRead(Value v) {
  return llvm::any_of(v.getUsers(), [](Operation *user) {
    return !isBufferView(user) || isRead(user->getResult(0));
  });
}

/// `reduce` sums its operand over every dimension but the last.
bool isBiasGradient(dtg::ReduceSumOp reduce) {
  ArrayRef<int64_t> dims = dimsOf(reduce.getOperand());
  ArrayRef<int64_t> axes = reduce.getAxes();
  if (dims.size() < 2 || axes.size() + 1 != dims.size())
    return false;
  for (auto [i, axis] : llvm::enumerate(axes))
    if (axis != int64_t(i))
      return false;
  return true;
}

/// Whether `operand` ([rows, cols], in the gemm kernel's body) reads block
/// argument `arg`'s contiguous memory so that element (i, p) of the sum's
/// side is flat[p * width + i] over all `total` elements: `left`, op(a)
/// [width, k] with strides (1, width); else op(b) [k, width], (width, 1).
bool readsAsSums(Value operand, BlockArgument arg, bool left, int64_t width,
                 int64_t total) {
  // The views from the argument to the operand, last first.
  SmallVector<Operation *> views;
  Value v = operand;
  while (v != arg) {
    Operation *def = v.getDefiningOp();
    if (!def || !dtg::isFusibleView(def))
      return false;
    views.push_back(def);
    v = def->getOperand(0);
  }
  SmallVector<int64_t> strides = dtg::contiguousStrides(dimsOf(arg));
  int64_t offset = 0;
  for (Operation *view : llvm::reverse(views)) {
    SmallVector<int64_t> next;
    int64_t nextOffset = 0;
    if (failed(dtg::applyView(view, strides, offset, next, nextOffset)))
      return false;
    strides = std::move(next);
    offset = nextOffset;
  }
  ArrayRef<int64_t> dims = dimsOf(operand);
  if (dims.size() != 2 || offset != 0 || dims[0] * dims[1] != total)
    return false;
  if (left)
    return dims[0] == width && strides[0] == 1 && strides[1] == width;
  return dims[1] == width && strides[0] == width && strides[1] == 1;
}

/// The fold of `reduce` into `gemm`, if the kernel's product is its only
/// output and reads G as the sum needs.
std::optional<BiasGradFold> foldInto(dtg::ReduceSumOp reduce,
                                     dtg::FusionOp gemm) {
  if (gemm.getKind() != "gemm")
    return std::nullopt;
  Block &body = gemm.getBody().front();
  auto yield = cast<dtg::YieldOp>(body.getTerminator());
  dtg::MatMulOp matmul;
  for (Operation &inner : body.without_terminator()) {
    if (auto m = dyn_cast<dtg::MatMulOp>(inner); m && !matmul)
      matmul = m;
    else if (!isa<dtg::ConstantOp>(inner) && !dtg::isFusibleView(&inner))
      return std::nullopt; // an epilogue, or a second product
  }
  Value sum = reduce.getResult();
  if (!matmul || yield.getValues().size() != 1 ||
      yield.getValues()[0] != matmul.getResult() ||
      dimsOf(matmul.getResult()).size() != 2 ||
      getElementTypeOrSelf(sum.getType()) !=
          getElementTypeOrSelf(matmul.getResult().getType()))
    return std::nullopt;
  Value g = bufferOf(reduce.getOperand());
  ArrayRef<int64_t> dims = dimsOf(reduce.getOperand());
  for (auto [i, input] : llvm::enumerate(gemm.getInputs())) {
    if (bufferOf(input) != g)
      continue;
    BlockArgument arg = body.getArgument(unsigned(i));
    for (bool left : {true, false})
      if (readsAsSums(left ? matmul.getLhs() : matmul.getRhs(), arg, left,
                      dims.back(), numel(dims)))
        return BiasGradFold{reduce, gemm, left};
  }
  return std::nullopt;
}

/// The fold of `reduce` into dtg.gemm `gemm`: an unscaled product without
/// C that reads G (the matrix [elements / width, width] of its buffer) as
/// op(a) = G^T or op(b) = G.
std::optional<BiasGradFold> foldInto(dtg::ReduceSumOp reduce,
                                     dtg::GemmOp gemm) {
  Value sum = reduce.getResult(), g = bufferOf(reduce.getOperand());
  ArrayRef<int64_t> dims = dimsOf(reduce.getOperand());
  auto isG = [&](Value operand) {
    ArrayRef<int64_t> matrix = dimsOf(operand);
    return bufferOf(operand) == g && matrix.size() == 2 &&
           matrix[1] == dims.back() && numel(matrix) == numel(dims);
  };
  if (gemm.getC() || gemm.getAlpha().convertToDouble() != 1.0 ||
      getElementTypeOrSelf(sum.getType()) !=
          getElementTypeOrSelf(gemm.getResult().getType()))
    return std::nullopt;
  if (gemm.getTransA() && isG(gemm.getA()))
    return BiasGradFold{reduce, gemm, true};
  if (!gemm.getTransB() && isG(gemm.getB()))
    return BiasGradFold{reduce, gemm, false};
  return std::nullopt;
}

/// The fold of `reduce` into `op`, a gemm kernel or dtg.gemm, if it takes it.
std::optional<BiasGradFold> foldInto(dtg::ReduceSumOp reduce, Operation *op) {
  if (auto fusion = dyn_cast<dtg::FusionOp>(op))
    return foldInto(reduce, fusion);
  if (auto gemm = dyn_cast<dtg::GemmOp>(op))
    return foldInto(reduce, gemm);
  return std::nullopt;
}

/// Ops that emit no code.
bool isSilent(Operation &op) {
  return isBufferView(&op) || isa<dtg::ConstantOp>(op);
}

/// The bytes [begin, end) of the arena that `v`'s buffer takes as planned;
/// none for a function's argument, or a result written straight into the
/// caller's buffer (which may be a donated argument's); false where the
/// plan does not say.
bool arenaBytes(Value v, std::optional<std::pair<int64_t, int64_t>> &bytes) {
  bytes.reset();
  Value root = bufferOf(v);
  Operation *def = root.getDefiningOp();
  if (!def)
    return true; // an argument
  auto offsets =
      def->getAttrOfType<DenseI64ArrayAttr>(mlir::dtc::memory::kOffsets);
  unsigned r = cast<OpResult>(root).getResultNumber();
  if (!offsets || int64_t(r) >= offsets.size())
    return false;
  if (offsets[r] < 0)
    return true; // written straight into a result
  bytes = {offsets[r],
           offsets[r] + mlir::dtc::memory::byteSize(root.getType())};
  return true;
}

/// Whether `op` may write the sum of `reduce` (the next op that emits code
/// after `op`) early: the sum is in the arena (a result written straight
/// into the caller's buffer may be over a donated argument that `op`
/// reads), and no buffer `op` reads or writes shares a byte with it (the
/// plan may have placed it over one that dies at `op`).
bool mayWriteEarly(Operation *op, dtg::ReduceSumOp reduce) {
  std::optional<std::pair<int64_t, int64_t>> sum, other;
  if (!arenaBytes(reduce.getResult(), sum) || !sum)
    return false;
  SmallVector<Value> buffers(op->getOperands());
  llvm::append_range(buffers, op->getResults());
  return llvm::all_of(buffers, [&](Value v) {
    return arenaBytes(v, other) && (!other || other->second <= sum->first ||
                                    sum->second <= other->first);
  });
}

} // namespace

std::string mlir::dtc::cpu::biasGradEpilogue(const BiasGradFold &fold,
                                             StringRef type,
                                             StringRef pointer) {
  return ("dtcg::Epilogue<" + type +
          ">{dtcg::EpilogueKind::" + (fold.left ? "BiasGradA" : "BiasGradB") +
          ", nullptr, nullptr, " + pointer + "}")
      .str();
}

std::vector<BiasGradFold> mlir::dtc::cpu::findBiasGradFolds(Block &body) {
  std::vector<BiasGradFold> folds;
  llvm::DenseSet<Operation *> taken;
  for (Operation &op : body.without_terminator()) {
    auto reduce = dyn_cast<dtg::ReduceSumOp>(op);
    // (A sum nothing reads has a buffer only at its own op.)
    if (!reduce || !isBiasGradient(reduce) || !isRead(reduce.getResult()))
      continue;
    // The sum must not be read before the product writes it (views that
    // keep its buffer read nothing; what reads them does).
    llvm::SmallDenseSet<Value, 4> sumViews = {reduce.getResult()};
    for (Operation *next = op.getNextNode();
         next && next != body.getTerminator(); next = next->getNextNode()) {
      bool reads = llvm::any_of(next->getOperands(),
                                [&](Value v) { return sumViews.contains(v); });
      if (reads && isBufferView(next)) {
        sumViews.insert(next->getResult(0));
        continue;
      }
      if (reads)
        break;
      if (taken.contains(next))
        continue;
      if (std::optional<BiasGradFold> fold = foldInto(reduce, next)) {
        folds.push_back(*fold);
        taken.insert(next);
        break;
      }
    }
    if (!folds.empty() && folds.back().reduce == &op)
      continue;
    // Or the product just before (autodiff puts a weight's gradient before
    // its bias's), where it may write the sum early.
    Operation *prev = op.getPrevNode();
    while (prev && isSilent(*prev))
      prev = prev->getPrevNode();
    if (!prev || taken.contains(prev) || !mayWriteEarly(prev, reduce))
      continue;
    if (std::optional<BiasGradFold> fold = foldInto(reduce, prev)) {
      fold->early = true;
      folds.push_back(*fold);
      taken.insert(prev);
    }
  }
  return folds;
}
