//===- LayerCut.cpp - a model's repeated layers, and the model cut to few
//--===//

#include "compiler/Plan/LayerCut.h"

#include "passes/Memory/Passes.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::dtc;

namespace {
/// The body's ops (no terminator), their positions, and what each op is
/// regardless of which values it reads: its name, attributes, operand and
/// result types, and whether each operand is an argument, a value from
/// before or an op's result.
struct Body {
  explicit Body(func::FuncOp func) {
    for (Operation &op : func.getBody().front().without_terminator()) {
      index[&op] = ops.size();
      ops.push_back(&op);
    }
    for (Operation *op : ops) {
      llvm::hash_code h = llvm::hash_combine(
          op->getName().getAsOpaquePointer(),
          op->getAttrDictionary().getAsOpaquePointer(), op->getNumResults());
      for (Type t : op->getResultTypes())
        h = llvm::hash_combine(h, t.getAsOpaquePointer());
      for (Value v : op->getOperands())
        h = llvm::hash_combine(h, v.getType().getAsOpaquePointer(),
                               isa<BlockArgument>(v));
      signature.push_back(size_t(h));
    }
  }

  /// The position of the op defining `v`, or -1 (an argument).
  int64_t positionOf(Value v) const {
    Operation *def = v.getDefiningOp();
    if (!def)
      return -1;
    auto it = index.find(def);
    return it == index.end() ? -1 : int64_t(it->second);
  }

  SmallVector<Operation *> ops;
  SmallVector<size_t> signature;
  DenseMap<Operation *, size_t> index;
};

/// Where an operand of block `j` of a run comes from, relative to the
/// block: an op of the same block or of the one before (its offset and
/// result), an argument, a value from before the run that only this block
/// reads (a parameter's transpose hoisted out of its layer: compared by
/// what it is, in `offset`), or another value from before the run
/// (itself).
struct Source {
  enum Kind {
    SameBlock,
    PreviousBlock,
    Argument,
    Private,
    Before,
    Invalid
  } kind;
  size_t offset = 0;
  unsigned result = 0;
  Value value;
  bool operator==(const Source &o) const {
    if (kind != o.kind)
      return false;
    if (kind == SameBlock || kind == PreviousBlock || kind == Private)
      return offset == o.offset && result == o.result;
    if (kind == Before)
      return value == o.value;
    return true;
  }
};

Source sourceOf(const Body &body, size_t begin, size_t period, int64_t block,
                Value v) {
  if (isa<BlockArgument>(v))
    return {Source::Argument};
  int64_t pos = body.positionOf(v);
  if (pos < int64_t(begin)) {
    bool onlyThisBlock = llvm::all_of(v.getUsers(), [&](Operation *user) {
      int64_t at = body.positionOf(user->getResult(0));
      return user->getNumResults() > 0 && at >= int64_t(begin) &&
             (at - int64_t(begin)) / int64_t(period) == block;
    });
    if (onlyThisBlock && pos >= 0)
      return {Source::Private, body.signature[size_t(pos)],
              cast<OpResult>(v).getResultNumber()};
    return {Source::Before, 0, 0, v};
  }
  int64_t from = (pos - int64_t(begin)) / int64_t(period);
  size_t offset = size_t(pos - int64_t(begin)) % period;
  unsigned result = cast<OpResult>(v).getResultNumber();
  if (from == block)
    return {Source::SameBlock, offset, result};
  if (from == block - 1)
    return {Source::PreviousBlock, offset, result};
  return {Source::Invalid};
}

/// Whether blocks 1 .. count - 1 from `begin` read their predecessors as
/// block 1 reads block 0 (block 0 reads the run's input from before it).
bool chained(const Body &body, size_t begin, size_t period, int64_t count) {
  for (int64_t j = 1; j < count; ++j)
    for (size_t o = 0; o < period; ++o) {
      Operation *op = body.ops[begin + size_t(j) * period + o];
      Operation *prev = body.ops[begin + size_t(j - 1) * period + o];
      for (unsigned q = 0; q < op->getNumOperands(); ++q) {
        Source s = sourceOf(body, begin, period, j, op->getOperand(q));
        Source p = sourceOf(body, begin, period, j - 1, prev->getOperand(q));
        if (s.kind == Source::Invalid || p.kind == Source::Invalid)
          return false;
        if (s == p)
          continue;
        // Block 1 reads from block 0 what block 0 read from before the run.
        if (j == 1 && s.kind == Source::PreviousBlock &&
            (p.kind == Source::Before || p.kind == Source::Private))
          continue;
        return false;
      }
    }
  return true;
}

/// Bytes of block 0's values that block 1 reads.
int64_t carriedBytes(const Body &body, size_t begin, size_t period) {
  llvm::SetVector<Value> carried;
  for (size_t o = 0; o < period; ++o)
    for (Value v : body.ops[begin + period + o]->getOperands()) {
      int64_t pos = body.positionOf(v);
      if (pos >= int64_t(begin) && pos < int64_t(begin + period))
        carried.insert(v);
    }
  int64_t bytes = 0;
  for (Value v : carried)
    bytes += memory::byteSize(v.getType());
  return bytes;
}
} // namespace

std::optional<RepeatedLayers> mlir::dtc::findRepeatedLayers(func::FuncOp func) {
  if (!func.getBody().hasOneBlock())
    return std::nullopt;
  Body body(func);
  size_t n = body.ops.size();
  std::optional<RepeatedLayers> best;
  size_t bestCover = 0;
  for (size_t period = 1; period <= n / 2; ++period) {
    // Runs of positions i where op i and op i + period are alike: a run of
    // length len covers len + period ops, (len + period) / period blocks.
    size_t i = 0;
    while (i + period < n) {
      if (body.signature[i] != body.signature[i + period]) {
        ++i;
        continue;
      }
      size_t start = i;
      while (i + period < n && body.signature[i] == body.signature[i + period])
        ++i;
      size_t len = i - start;
      int64_t count = int64_t((len + period) / period);
      size_t cover = size_t(count) * period;
      if (count < 2 || cover <= bestCover)
        continue;
      // Of the starts that give as many blocks, the one whose blocks chain
      // and pass the fewest bytes from block to block.
      std::optional<RepeatedLayers> found;
      for (size_t begin = start; begin + cover <= start + len + period;
           ++begin) {
        if (!chained(body, begin, period, count))
          continue;
        int64_t bytes = carriedBytes(body, begin, period);
        if (!found || bytes < found->carriedBytes)
          found = RepeatedLayers{begin, period, count, bytes};
      }
      if (found) {
        best = found;
        bestCover = cover;
      }
    }
  }
  return best;
}

LogicalResult mlir::dtc::keepLayers(func::FuncOp func,
                                    const RepeatedLayers &layers,
                                    int64_t keep) {
  if (keep < 1 || keep > layers.count)
    return failure();
  if (keep == layers.count)
    return success();
  Body body(func);
  size_t begin = layers.begin, period = layers.period;
  size_t end = begin + size_t(layers.count) * period;
  size_t lastBlock = begin + size_t(layers.count - 1) * period;
  size_t keptBlock = begin + size_t(keep - 1) * period;
  // Uses after the run: each must read the last block.
  SmallVector<std::pair<OpOperand *, Value>> remap;
  for (size_t i = begin; i < end; ++i)
    for (OpResult r : body.ops[i]->getResults())
      for (OpOperand &use : r.getUses()) {
        auto it = body.index.find(use.getOwner());
        size_t user =
            it == body.index.end() ? body.ops.size() : it->second; // return
        if (user < end)
          continue;
        if (i < lastBlock)
          return failure();
        Operation *kept = body.ops[keptBlock + (i - lastBlock)];
        remap.push_back({&use, kept->getResult(r.getResultNumber())});
      }
  for (auto [use, value] : remap)
    use->set(value);
  for (size_t i = end; i-- > begin + size_t(keep) * period;) {
    body.ops[i]->dropAllUses();
    body.ops[i]->erase();
  }
  // What only the dropped layers read (their parameters' transposes).
  for (size_t i = begin; i-- > 0;)
    if (isOpTriviallyDead(body.ops[i]))
      body.ops[i]->erase();
  llvm::BitVector unused(func.getNumArguments());
  for (BlockArgument arg : func.getArguments())
    if (arg.use_empty())
      unused.set(arg.getArgNumber());
  func.eraseArguments(unused);
  return success();
}
