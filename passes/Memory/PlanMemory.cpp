//===- PlanMemory.cpp - static offsets in one arena per rank -------------===//

#include "passes/Memory/Passes.h"

#include "dialects/DTG/IR/DTGOps.h"
#include "dialects/Dist/IR/DistOps.h"
#include "passes/Memory/InPlace.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Debug.h"

#include <tuple>

#define DEBUG_TYPE "dtc-plan-memory"

namespace mlir::dtc {
#define GEN_PASS_DEF_PLANMEMORYPASS
#include "passes/Memory/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

int64_t mlir::dtc::memory::byteSize(Type type) {
  // A collective's future holds the buffer its result is written into.
  if (auto future = dyn_cast<dist::FutureType>(type))
    type = future.getValueType();
  auto tensor = cast<RankedTensorType>(type);
  Type e = tensor.getElementType();
  int64_t bytes = e.isInteger(1) ? 1 : (e.getIntOrFloatBitWidth() + 7) / 8;
  return tensor.getNumElements() * bytes;
}

int64_t mlir::dtc::memory::ownResultBytes(func::FuncOp func) {
  int64_t bytes = 0;
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (!func.getResultAttr(i, kDonatedArg))
      bytes += byteSize(func.getResultTypes()[i]);
  return bytes;
}

Value mlir::dtc::memory::bufferOf(Value value) {
  while (true) {
    if (auto reshape = value.getDefiningOp<dtg::ReshapeOp>())
      value = reshape.getOperand();
    else if (auto wait = value.getDefiningOp<dist::WaitOp>())
      value = wait.getFuture(); // the result is in the future's buffer
    else
      return value;
  }
}

SmallVector<memory::LiveRange>
mlir::dtc::memory::computeLiveRanges(Block &block,
                                     function_ref<bool(Value)> skip) {
  llvm::DenseMap<Operation *, int64_t> position;
  int64_t pos = 0;
  for (Operation &op : block)
    position[&op] = pos++;
  llvm::DenseMap<Value, unsigned> index;
  SmallVector<LiveRange> ranges;
  // Only the block's own ops get buffers: values inside an op's regions are
  // the op's business (a dtg.fusion region becomes one kernel).
  for (Operation &op : block.without_terminator()) {
    if (isa<dtg::ConstantOp, dtg::ReshapeOp, dist::WaitOp>(op))
      continue;
    for (Value result : op.getResults()) {
      if (skip(result))
        continue;
      index[result] = ranges.size();
      ranges.push_back({result, position[&op], position[&op]});
    }
  }
  // A use inside an op's regions is a use by the op.
  for (Operation &op : block) {
    int64_t p = position[&op];
    op.walk([&](Operation *user) {
      for (Value operand : user->getOperands()) {
        auto it = index.find(bufferOf(operand));
        if (it != index.end())
          ranges[it->second].end = std::max(ranges[it->second].end, p);
      }
    });
  }
  return ranges;
}

namespace {
/// A buffer to place: a live range over op positions and a size.
struct Buffer {
  Value value;
  int64_t begin, end, bytes;
  int64_t offset = -1;
  /// The buffer whose place this one takes (itself unless written in place
  /// over an operand).
  unsigned owner;
};

/// True if `value` is written straight into a result buffer: defined by a
/// non-aliasing op of this function and returned exactly once, with no other
/// use after being returned.
bool writesResultDirectly(Value value, func::ReturnOp ret) {
  Operation *def = value.getDefiningOp();
  if (!def || isa<dtg::ConstantOp, dtg::ReshapeOp, dist::WaitOp>(def) ||
      def->getBlock() != ret->getBlock())
    return false;
  unsigned returned = 0;
  for (Value r : ret.getOperands())
    returned += r == value;
  return returned == 1;
}

/// True for the roles of the state a training step carries from one step to
/// the next (the runtime's TensorInfo::isCarried).
bool isCarriedRole(StringRef role) {
  return role == "parameter" || role == "state" || role == "optimizer_state";
}

/// True if nothing reads `arg` (through reshapes, its aliases, and inside
/// ops' regions) after `writer`, the op writing `result` over it, and reads
/// at `writer` only go through operands that memory::mayWriteOver allows.
/// Looks at the argument's uses only, not at the whole body.
bool onlyReadBefore(BlockArgument arg, OpResult result) {
  Block &body = *arg.getOwner();
  Operation *writer = result.getOwner();
  SmallVector<Value> aliases = {arg};
  while (!aliases.empty()) {
    Value value = aliases.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      Operation *top = body.findAncestorOpInBlock(*user);
      if (!top || isa<func::ReturnOp>(top))
        return false;
      if (user == writer) {
        if (!memory::mayWriteOver(writer, result.getResultNumber(),
                                  use.getOperandNumber()))
          return false;
        continue;
      }
      if (!top->isBeforeInBlock(writer))
        return false;
      if (auto reshape = dyn_cast<dtg::ReshapeOp>(user))
        aliases.push_back(reshape.getResult());
    }
  }
  return true;
}

/// Marks each carried result of `func` that may be written over the
/// argument it updates (memory::kDonatedArg), and counts the others
/// (memory::kUndonated). The result must be written directly by an op of
/// the body (writesResultDirectly), and the argument read only before
/// that op (onlyReadBefore).
void donateCarriedState(func::FuncOp func, func::ReturnOp ret) {
  auto attr = [](DictionaryAttr attrs, StringRef name) {
    auto s = attrs ? attrs.getAs<StringAttr>(name) : StringAttr();
    return s ? s.getValue() : StringRef();
  };
  Builder b(func.getContext());
  llvm::SmallDenseSet<unsigned> donated;
  int64_t undonated = 0;
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    func.removeResultAttr(i, b.getStringAttr(memory::kDonatedArg));
    DictionaryAttr resultAttrs = func.getResultAttrDict(i);
    StringRef role = attr(resultAttrs, "dtg.role");
    if (!isCarriedRole(role))
      continue;
    StringRef name = attr(resultAttrs, "dtg.name");
    std::optional<unsigned> arg;
    for (unsigned a = 0; a < func.getNumArguments() && !arg; ++a) {
      DictionaryAttr argAttrs = func.getArgAttrDict(a);
      if (attr(argAttrs, "dtg.role") == role &&
          attr(argAttrs, "dtg.name") == name)
        arg = a;
    }
    Value value = ret.getOperand(i);
    auto result = dyn_cast<OpResult>(value);
    if (!arg || donated.contains(*arg) || !result ||
        !writesResultDirectly(value, ret) ||
        !onlyReadBefore(func.getArgument(*arg), result)) {
      ++undonated;
      continue;
    }
    donated.insert(*arg);
    func.setResultAttr(i, memory::kDonatedArg, b.getI64IntegerAttr(*arg));
  }
  func->setAttr(memory::kUndonated, b.getI64IntegerAttr(undonated));
}

struct PlanMemoryPass : public dtc::impl::PlanMemoryPassBase<PlanMemoryPass> {
  using PlanMemoryPassBase::PlanMemoryPassBase;

  llvm::DenseMap<func::FuncOp, int64_t> peaks;

  int64_t align(int64_t n) const {
    return (n + alignment - 1) / alignment * alignment;
  }

  /// Lets results take the buffers of operands that die at their op, as
  /// memory::mayWriteOver allows: the result's buffer then joins its owner,
  /// whose live range grows to cover both.
  void reuseInPlace(Block &body, const llvm::DenseMap<Value, unsigned> &index,
                    SmallVector<Buffer> &buffers) {
    int64_t pos = -1;
    unsigned reused = 0;
    for (Operation &op : body) {
      ++pos;
      // Owners taken by this op's results (one result each).
      SmallVector<unsigned> taken;
      for (OpResult result : op.getResults()) {
        auto r = index.find(result);
        if (r == index.end())
          continue;
        unsigned resultNumber = result.getResultNumber();
        auto canWriteOver = [&](OpOperand &use) {
          return memory::mayWriteOver(&op, resultNumber,
                                      use.getOperandNumber());
        };
        for (OpOperand &use : op.getOpOperands()) {
          Value source = memory::bufferOf(use.get());
          auto s = index.find(source);
          if (s == index.end())
            continue; // an argument, a constant, or a result buffer
          unsigned owner = buffers[s->second].owner;
          // The buffer must die here (no later use, aliases included) and
          // every operand reading it must allow the overwrite.
          if (buffers[owner].end != pos || llvm::is_contained(taken, owner) ||
              buffers[owner].bytes != buffers[r->second].bytes ||
              !canWriteOver(use) ||
              llvm::any_of(op.getOpOperands(), [&](OpOperand &other) {
                return memory::bufferOf(other.get()) == source &&
                       !canWriteOver(other);
              }))
            continue;
          buffers[r->second].owner = owner;
          buffers[owner].end =
              std::max(buffers[owner].end, buffers[r->second].end);
          taken.push_back(owner);
          ++reused;
          break;
        }
      }
    }
    LLVM_DEBUG(llvm::dbgs() << reused << " results written in place\n");
    (void)reused;
  }

  LogicalResult planFunction(func::FuncOp func) {
    if (peaks.count(func))
      return success();
    peaks[func] = 0; // guards recursion
    if (!func.getBody().hasOneBlock())
      return func.emitError("memory planning needs a function of one block");
    Block &body = func.getBody().front();
    auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
    if (!ret)
      return func.emitError("memory planning needs a function ending in "
                            "func.return");
    if (donate)
      donateCarriedState(func, ret);
    SmallVector<memory::LiveRange> ranges = memory::computeLiveRanges(
        body, [&](Value v) { return writesResultDirectly(v, ret); });
    llvm::DenseMap<Value, unsigned> index;
    SmallVector<Buffer> buffers;
    for (const memory::LiveRange &range : ranges) {
      index[range.value] = buffers.size();
      buffers.push_back(
          {range.value, range.begin, range.end,
           align(std::max<int64_t>(memory::byteSize(range.value.getType()), 1)),
           /*offset=*/-1, /*owner=*/unsigned(buffers.size())});
    }
    for (Operation &op : body.without_terminator())
      if (isa<dtg::ReshapeOp, dist::WaitOp>(op))
        op.setAttr(memory::kAlias, UnitAttr::get(&getContext()));
    if (inPlace)
      reuseInPlace(body, index, buffers);

    // The results of one call that live over the same span (what a
    // micro-batch's forward saves for its backward) are placed as one
    // block: a step of many micro-batches has tens of thousands of them.
    // placeBytes: the bytes a buffer (or its call's block) is placed with;
    // within[i]: where buffer i lies in its block, led by leader[i].
    SmallVector<int64_t> placeBytes = llvm::to_vector(
        llvm::map_range(buffers, [](const Buffer &b) { return b.bytes; }));
    SmallVector<int64_t> within(buffers.size(), 0);
    SmallVector<unsigned> leader =
        llvm::to_vector(llvm::seq<unsigned>(0, buffers.size()));
    {
      llvm::DenseMap<std::tuple<Operation *, int64_t, int64_t>, unsigned>
          blocks;
      for (unsigned i = 0; i < buffers.size(); ++i) {
        Operation *def = buffers[i].value.getDefiningOp();
        if (!def || !isa<func::CallOp>(def) || buffers[i].owner != i)
          continue;
        auto [it, inserted] = blocks.try_emplace(
            std::make_tuple(def, buffers[i].begin, buffers[i].end), i);
        if (inserted)
          continue;
        unsigned head = it->second;
        leader[i] = head;
        within[i] = placeBytes[head];
        placeBytes[head] += buffers[i].bytes;
      }
    }

    // Largest first, lowest non-conflicting offset.
    SmallVector<unsigned> order =
        llvm::to_vector(llvm::seq<unsigned>(0, buffers.size()));
    llvm::stable_sort(order, [&](unsigned a, unsigned b) {
      return placeBytes[a] > placeBytes[b];
    });
    // The placed buffers by the spans of the program they live in (spans
    // of `span` positions), so that a buffer is checked against those that
    // live near it only.
    int64_t positions = 1;
    for (const Buffer &buf : buffers)
      positions = std::max(positions, buf.end + 1);
    int64_t span = std::max<int64_t>(32, positions / 1024);
    std::vector<SmallVector<unsigned, 4>> placedIn(
        size_t((positions + span - 1) / span));
    SmallVector<unsigned> seen(buffers.size(), ~0u);
    int64_t peak = 0;
    for (unsigned i : order) {
      Buffer &buf = buffers[i];
      if (buf.owner != i || leader[i] != i)
        continue; // placed with its owner, or with its call's block
      int64_t bytes = placeBytes[i];
      SmallVector<std::pair<int64_t, int64_t>> busy;
      for (int64_t s = buf.begin / span; s <= buf.end / span; ++s)
        for (unsigned j : placedIn[s]) {
          const Buffer &other = buffers[j];
          if (seen[j] == i)
            continue;
          seen[j] = i;
          if (other.begin <= buf.end && buf.begin <= other.end)
            busy.push_back({other.offset, other.offset + placeBytes[j]});
        }
      llvm::sort(busy);
      int64_t offset = 0;
      for (auto [lo, hi] : busy) {
        if (offset + bytes <= lo)
          break;
        offset = std::max(offset, hi);
      }
      buf.offset = offset;
      peak = std::max(peak, offset + bytes);
      for (int64_t s = buf.begin / span; s <= buf.end / span; ++s)
        placedIn[s].push_back(i);
    }
    for (unsigned i = 0; i < buffers.size(); ++i)
      if (leader[i] != i)
        buffers[i].offset = buffers[leader[i]].offset + within[i];
    // Record offsets; callees go above the caller's buffers.
    Builder b(&getContext());
    int64_t total = peak;
    for (Operation &op : body.without_terminator()) {
      if (op.hasAttr(memory::kAlias) || isa<dtg::ConstantOp>(op))
        continue;
      SmallVector<int64_t> offsets;
      for (Value result : op.getResults()) {
        auto it = index.find(result);
        offsets.push_back(
            it == index.end() ? -1 : buffers[buffers[it->second].owner].offset);
      }
      op.setAttr(memory::kOffsets, b.getDenseI64ArrayAttr(offsets));
      if (auto call = dyn_cast<func::CallOp>(op)) {
        auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
            call, call.getCalleeAttr());
        if (!callee || callee.isExternal())
          return call.emitError("cannot plan memory across a call to '")
                 << call.getCallee() << "'";
        if (failed(planFunction(callee)))
          return failure();
        call->setAttr(memory::kCalleeBase, b.getI64IntegerAttr(peak));
        total = std::max(total, peak + peaks[callee]);
      }
    }
    peaks[func] = total;
    func->setAttr(memory::kArenaBytes, b.getI64IntegerAttr(total));
    func->setAttr(memory::kOwnArenaBytes, b.getI64IntegerAttr(peak));
    LLVM_DEBUG(llvm::dbgs() << func.getSymName() << ": " << buffers.size()
                            << " buffers, arena " << total << " bytes\n");
    return success();
  }

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && failed(planFunction(func)))
        return signalPassFailure();
  }
};
} // namespace
