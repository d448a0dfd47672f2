//===- EmitFusion.cpp - one C++ function per dtg.fusion -------------------===//
//
// Each dtg.fusion becomes one file-scope function `fused_<n>(inputs...,
// outputs...)` called once where the op stands. Elements are computed by
// the scalar functions the unfused kernels use (dtck::scalar::*, rounding to
// the element type after every op), reductions accumulate as dtck's
// reduction kernels (in double, in the order of the operand's elements), and
// a gemm kernel runs dtck::matmulView into its output, then its epilogue in
// place. Views (transpose, slice, reshape) of inputs are strided reads.
// On the CPU, a chain of ops that is a function of one 16-bit float and holds
// a costly op (erf, exp, tanh...) is read from a table of that function at
// the 65536 values (dtck::Table16, built once): the same bits, a gather
// instead of the chain.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CPU/KernelEmitter.h"

#include "compiler/Import/ONNX/ONNXImporter.h"
#include "dialects/DTG/IR/DTGFusion.h"
#include "dialects/DTG/IR/DTGOps.h"
#include "passes/Memory/InPlace.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <optional>
#include <set>

using namespace mlir;
using namespace mlir::dtc::cpu;

namespace {

ArrayRef<int64_t> dimsOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

int64_t numel(ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

/// `target = name;` for a value of `v`'s element type. A 16-bit float is
/// stored by its bits: GCC keeps a dtck::bf16 that is only stored as an
/// object in memory inside a loop nest, and such a copy ("more than one
/// data ref") keeps the loop scalar.
std::string storeStatement(StringRef target, StringRef name, Value v) {
  Type element = cast<RankedTensorType>(v.getType()).getElementType();
  if (element.isBF16() || element.isF16())
    return (target + ".bits = " + name + ".bits;").str();
  return (target + " = " + name + ";").str();
}

/// `pointer[index]`, an element of `v`'s type. A bool is read through its
/// byte (dtck::loadBool): GCC does not vectorize a loop that loads bools
/// beside wider elements.
std::string loadExpression(StringRef pointer, StringRef index, Value v) {
  if (cast<RankedTensorType>(v.getType()).getElementType().isInteger(1))
    return ("dtck::loadBool(" + pointer + " + (" + index + "))").str();
  return (pointer + "[" + index + "]").str();
}

/// The combining op of a reduction in the CUDA library's numbering (0 sum,
/// 1 max, 2 min).
int reduceOpOf(Operation *r) {
  return isa<dtg::ReduceMaxOp>(r) ? 1 : isa<dtg::ReduceMinOp>(r) ? 2 : 0;
}

/// Elements above which a loop runs across OpenMP threads
/// (dtck::kParallelThreshold).
constexpr int64_t kParallelThreshold = 1 << 14;

/// Elements a CUDA elementwise kernel's thread moves as one access
/// (dtcg::Vec): 16 bytes of 32-bit elements.
constexpr int64_t kVector = 4;

/// Results of a column reduction (last dimension kept) one task accumulates
/// at once.
constexpr int64_t kColumnBlock = 64;

/// Results of a row reduction (last dimension reduced) one task accumulates
/// at once, and the elements of a row it buffers at a time.
constexpr int64_t kRowWays = 8;
constexpr int64_t kRowBlock = 1024;

/// Partial sums a result of fewer than kRowWays takes (one SIMD register of
/// doubles, or two), and the elements a result needs to take them.
constexpr int64_t kRowLanes = 8;
constexpr int64_t kRowLanesFrom = 4096;

/// Elements of one part of such a result: a result of two parts or more
/// sums its parts across threads (each in lanes), then the parts in order.
constexpr int64_t kRowPart = 64 * kRowBlock;

/// A strided read of an input (a block argument, possibly through views).
struct Source {
  std::string pointer;
  SmallVector<int64_t> strides;
  int64_t offset = 0;
};

/// The call of the scalar function computing `op` from `args`.
FailureOr<std::string> scalarCall(Operation *op, ArrayRef<std::string> args,
                                  KernelEmitter &e) {
  auto lit = [](const APFloat &v) {
    return KernelEmitter::literal(v.convertToDouble());
  };
  auto call = [&](StringRef name, ArrayRef<std::string> extra = {}) {
    SmallVector<std::string> all(args.begin(), args.end());
    all.append(extra.begin(), extra.end());
    return ("dtck::scalar::" + name + "(" + llvm::join(all, ", ") + ")").str();
  };
  std::string result =
      llvm::TypeSwitch<Operation *, std::string>(op)
          .Case([&](dtg::NegOp) { return call("neg"); })
          .Case([&](dtg::AbsOp) { return call("abs"); })
          .Case([&](dtg::SignOp) { return call("sign"); })
          .Case([&](dtg::ExpOp) { return call("exp"); })
          .Case([&](dtg::LogOp) { return call("log"); })
          .Case([&](dtg::SqrtOp) { return call("sqrt"); })
          .Case([&](dtg::RsqrtOp) { return call("rsqrt"); })
          .Case([&](dtg::ReciprocalOp) { return call("reciprocal"); })
          .Case([&](dtg::FloorOp) { return call("floor"); })
          .Case([&](dtg::CeilOp) { return call("ceil"); })
          .Case([&](dtg::RoundOp) { return call("round"); })
          .Case([&](dtg::SinOp) { return call("sin"); })
          .Case([&](dtg::CosOp) { return call("cos"); })
          .Case([&](dtg::TanOp) { return call("tan"); })
          .Case([&](dtg::AsinOp) { return call("asin"); })
          .Case([&](dtg::AcosOp) { return call("acos"); })
          .Case([&](dtg::AtanOp) { return call("atan"); })
          .Case([&](dtg::SinhOp) { return call("sinh"); })
          .Case([&](dtg::CoshOp) { return call("cosh"); })
          .Case([&](dtg::AsinhOp) { return call("asinh"); })
          .Case([&](dtg::AcoshOp) { return call("acosh"); })
          .Case([&](dtg::AtanhOp) { return call("atanh"); })
          .Case([&](dtg::TanhOp) { return call("tanh"); })
          .Case([&](dtg::ErfOp) { return call("erf"); })
          .Case([&](dtg::SigmoidOp) { return call("sigmoid"); })
          .Case([&](dtg::ReluOp) { return call("relu"); })
          .Case([&](dtg::SoftplusOp) { return call("softplus"); })
          .Case([&](dtg::SoftsignOp) { return call("softsign"); })
          .Case([&](dtg::NotOp) { return call("logicalNot"); })
          .Case([&](dtg::IsNanOp) { return call("isNan"); })
          .Case([&](dtg::GeluOp g) {
            return call("gelu", {KernelEmitter::literal(g.getApproximate())});
          })
          .Case([&](dtg::LeakyReluOp g) {
            return call("leakyRelu", {lit(g.getAlpha())});
          })
          .Case([&](dtg::EluOp g) { return call("elu", {lit(g.getAlpha())}); })
          .Case(
              [&](dtg::CeluOp g) { return call("celu", {lit(g.getAlpha())}); })
          .Case([&](dtg::SeluOp g) {
            return call("selu", {lit(g.getAlpha()), lit(g.getGamma())});
          })
          .Case([&](dtg::HardSigmoidOp g) {
            return call("hardSigmoid", {lit(g.getAlpha()), lit(g.getBeta())});
          })
          .Case([&](dtg::ThresholdedReluOp g) {
            return call("thresholdedRelu", {lit(g.getAlpha())});
          })
          .Case([&](dtg::ClipOp g) {
            std::optional<APFloat> min = g.getMin(), max = g.getMax();
            return call(
                "clip",
                {KernelEmitter::literal(min.has_value()),
                 KernelEmitter::literal(min ? min->convertToDouble() : 0.0),
                 KernelEmitter::literal(max.has_value()),
                 KernelEmitter::literal(max ? max->convertToDouble() : 0.0)});
          })
          .Case([&](dtg::IsInfOp g) {
            return call("isInf",
                        {KernelEmitter::literal(g.getDetectNegative()),
                         KernelEmitter::literal(g.getDetectPositive())});
          })
          .Case([&](dtg::AddOp) { return call("add"); })
          .Case([&](dtg::SubOp) { return call("sub"); })
          .Case([&](dtg::MulOp) { return call("mul"); })
          .Case([&](dtg::DivOp) { return call("div"); })
          .Case([&](dtg::PowOp) { return call("pow"); })
          .Case([&](dtg::MaxOp) { return call("max"); })
          .Case([&](dtg::MinOp) { return call("min"); })
          .Case([&](dtg::ModOp g) {
            return call("mod", {KernelEmitter::literal(g.getFmod())});
          })
          .Case([&](dtg::AndOp) { return call("logicalAnd"); })
          .Case([&](dtg::OrOp) { return call("logicalOr"); })
          .Case([&](dtg::XorOp) { return call("logicalXor"); })
          .Case([&](dtg::EqualOp) { return call("equal"); })
          .Case([&](dtg::LessOp) { return call("less"); })
          .Case([&](dtg::LessEqualOp) { return call("lessEqual"); })
          .Case([&](dtg::GreaterOp) { return call("greater"); })
          .Case([&](dtg::GreaterEqualOp) { return call("greaterEqual"); })
          .Case([&](dtg::WhereOp) { return call("where"); })
          .Case([&](dtg::CastOp c) {
            CastKernel kernel = castKernel(c);
            SmallVector<std::string> all = {args[0]};
            all.append(kernel.attrs);
            return "dtck::scalar::" + kernel.name + "<" +
                   e.cTypeOf(c.getResult()) + ">(" + llvm::join(all, ", ") +
                   ")";
          })
          .Default([](Operation *) { return std::string(); });
  if (result.empty())
    return op->emitError("the CPU target cannot fuse '")
           << op->getName() << "'";
  return result;
}

/// Whether `op` costs more per element than a table lookup: the
/// transcendental functions and the activations made of them.
bool isCostly(Operation *op) {
  return isa<dtg::ExpOp, dtg::LogOp, dtg::ErfOp, dtg::TanhOp, dtg::SigmoidOp,
             dtg::SoftplusOp, dtg::GeluOp, dtg::EluOp, dtg::CeluOp, dtg::SeluOp,
             dtg::PowOp, dtg::SinOp, dtg::CosOp, dtg::TanOp, dtg::AsinOp,
             dtg::AcosOp, dtg::AtanOp, dtg::SinhOp, dtg::CoshOp, dtg::AsinhOp,
             dtg::AcoshOp, dtg::AtanhOp>(op);
}

/// Whether `v` holds 16-bit floats (a table's argument).
bool isHalfWidth(Value v) {
  Type t = getElementTypeOrSelf(v.getType());
  return t.isBF16() || t.isF16();
}

/// Whether a table may hold `v`'s values (dtck::Table16's result types).
bool isTabulable(Value v) {
  Type t = getElementTypeOrSelf(v.getType());
  return t.isBF16() || t.isF16() || t.isF32();
}

/// Strides of a value of shape `dims` (read with `strides`) broadcast to
/// `space` (NumPy rules: 0 along broadcast and missing dimensions).
SmallVector<int64_t> broadcastTo(ArrayRef<int64_t> dims,
                                 ArrayRef<int64_t> strides,
                                 ArrayRef<int64_t> space) {
  SmallVector<int64_t> result(space.size(), 0);
  size_t lead = space.size() - dims.size();
  for (size_t d = 0; d < dims.size(); ++d)
    if (dims[d] != 1)
      result[lead + d] = strides[d];
  return result;
}

/// The index expression `offset + sum(index[d] * strides[d])`.
std::string indexExpr(int64_t offset, ArrayRef<int64_t> strides,
                      ArrayRef<std::string> index) {
  std::string s;
  if (offset != 0)
    s = std::to_string(offset);
  for (auto [d, stride] : llvm::enumerate(strides)) {
    if (stride == 0)
      continue;
    if (!s.empty())
      s += " + ";
    s += stride == 1 ? index[d] : index[d] + " * " + std::to_string(stride);
  }
  return s.empty() ? "0" : s;
}

/// Prints one fused kernel.
class FusionPrinter {
public:
  FusionPrinter(dtg::FusionOp op, KernelEmitter &e) : op(op), e(e) {}

  LogicalResult emit();

private:
  /// Sets up sources (inputs and views) and constants.
  LogicalResult prepare(llvm::raw_ostream &os);
  /// CPU: finds the chains of elementwise ops that are functions of one
  /// 16-bit float and hold a costly op, and declares a table of each
  /// (dtck::Table16) on `os`; fills `lookups` and `tabulatedOnly`.
  LogicalResult planTables(llvm::raw_ostream &os);
  /// The operands `op` is computed from: its own, or a table's argument.
  SmallVector<Value> operandsOf(Operation *op);
  /// The expression of `op`'s result from `args` (operandsOf's names).
  FailureOr<std::string> callOf(Operation *op, ArrayRef<std::string> args);
  /// The expression of `v` at the current element of iteration space
  /// `space` with index variables `index`; loads are declared in `os`.
  FailureOr<std::string> valueAt(Value v, ArrayRef<int64_t> space,
                                 ArrayRef<std::string> index,
                                 llvm::raw_ostream &os,
                                 llvm::DenseMap<Value, std::string> &names);
  /// Emits the elementwise `ops` at one element.
  LogicalResult computeOps(ArrayRef<Operation *> ops, ArrayRef<int64_t> space,
                           ArrayRef<std::string> index, llvm::raw_ostream &os,
                           llvm::DenseMap<Value, std::string> &names);
  LogicalResult emitLoop(llvm::raw_ostream &os, ArrayRef<Operation *> ops,
                         ArrayRef<int64_t> space, Value preloaded);
  LogicalResult emitReduction(llvm::raw_ostream &hostOs);
  /// CUDA: the reduction kernel (emitReduction's parts, printed into
  /// `kernels`) and its launch on `hostOs`.
  /// CUDA: the kernel combining the parts of each of `outCount` results
  /// left in `partial` by a reduction split over blocks.
  LogicalResult
  emitCombineParts(llvm::raw_ostream &hostOs, ArrayRef<Operation *> reductions,
                   int64_t outCount, int64_t parts,
                   function_ref<LogicalResult(StringRef)> emitResults);
  /// CUDA: a scratch buffer `partial` of `slots` doubles, of the
  /// launcher's, which the kernels opened next take as one more parameter.
  void addPartials(llvm::raw_ostream &hostOs, int64_t slots);
  LogicalResult emitDeviceReduction(
      llvm::raw_ostream &hostOs, ArrayRef<int64_t> in, ArrayRef<int64_t> axes,
      ArrayRef<int64_t> keptDims, ArrayRef<Operation *> reductions,
      ArrayRef<std::string> acc,
      function_ref<void(ArrayRef<int64_t>, SmallVectorImpl<std::string> &,
                        StringRef)>
          emitKept,
      function_ref<LogicalResult(ArrayRef<std::string>, StringRef)> emitUpdates,
      function_ref<LogicalResult(StringRef)> emitResults);
  LogicalResult emitGemm(llvm::raw_ostream &os);
  /// CUDA: how many leading ops of a gemm kernel's `epilogue` cuBLASLt
  /// applies (0, or a bias add, possibly followed by a ReLU or the tanh
  /// GELU), with the matmulView argument that asks for them and the output
  /// its GELU input goes to.
  size_t matchLtEpilogue(Value product, ArrayRef<Operation *> epilogue,
                         std::string &arg, std::optional<unsigned> &auxOutput);

  std::string fresh() { return "t" + std::to_string(counter++); }

  /// CUDA: starts a __global__ kernel (the next "@NAME@_<k>") taking the
  /// function's parameters, with the constants; returns its name.
  std::string openKernel();
  /// CUDA: a launch of `kernel` over `grid` blocks of `block` threads.
  std::string launch(StringRef kernel, StringRef grid, StringRef block);

  dtg::FusionOp op;
  KernelEmitter &e;
  Block *body = nullptr;
  llvm::DenseMap<Value, Source> sources;
  llvm::DenseMap<Value, std::string> constants;
  /// CPU: an op whose value is read from a table of a function of one
  /// 16-bit float (`leaf`), and the table's name.
  struct Lookup {
    Value leaf;
    std::string table;
  };
  llvm::DenseMap<Operation *, Lookup> lookups;
  /// CPU: ops whose values only tables need: not computed in the loops.
  llvm::DenseSet<Operation *> tabulatedOnly;
  /// CPU: a reduction's input space with adjacent reduced dimensions that
  /// every access walks as one merged, and the strides of the inputs it
  /// reads over it.
  SmallVector<int64_t> mergedSpace;
  llvm::DenseMap<Value, SmallVector<int64_t>> mergedStrides;
  /// Output number of each yielded value (the first, if yielded twice).
  llvm::DenseMap<Value, unsigned> outputOf;
  /// A value whose element is read from an output (the gemm's product).
  Value preloadedValue;
  std::string preloadedPointer;
  unsigned counter = 0;
  /// CUDA: the kernels (printed before the host function), the parameter
  /// list and arguments they share, and the constants' declarations.
  std::string kernelsText;
  llvm::raw_string_ostream kernels{kernelsText};
  std::string params, args, constantsText;
  unsigned numKernels = 0;
  /// The C type of the kernels' index arithmetic: CUDA kernels whose every
  /// tensor and iteration space has fewer than 2^31 elements use `int` (a
  /// GPU divides 64-bit integers in software).
  std::string idx = "int64_t";
};

} // namespace

std::string FusionPrinter::openKernel() {
  std::string name = "@NAME@_" + std::to_string(numKernels++);
  kernels << "__global__ void " << name << "(" << params << ") {\n"
          << constantsText;
  return name;
}

std::string FusionPrinter::launch(StringRef kernel, StringRef grid,
                                  StringRef block) {
  return ("  dtcg::launch(\"" + kernel + "\", " + grid + ", " + block + ", " +
          kernel + ", " + args + ");\n")
      .str();
}

LogicalResult FusionPrinter::prepare(llvm::raw_ostream &os) {
  body = &op.getBody().front();
  for (BlockArgument arg : body->getArguments()) {
    Source s;
    s.pointer = "in" + std::to_string(arg.getArgNumber());
    s.strides = dtg::contiguousStrides(dimsOf(arg));
    sources[arg] = s;
  }
  auto yield = cast<dtg::YieldOp>(body->getTerminator());
  for (auto [i, v] : llvm::enumerate(yield.getValues())) {
    outputOf.try_emplace(v, i);
    if (isa<BlockArgument>(v) || sources.count(v))
      return op.emitError("the CPU target cannot fuse a kernel that returns "
                          "an input or a view");
  }
  for (Operation &inner : body->without_terminator()) {
    if (auto constant = dyn_cast<dtg::ConstantOp>(inner)) {
      auto splat = dyn_cast<SplatElementsAttr>(constant.getValue());
      Type t = constant.getType().getElementType();
      std::string type = e.cType(t);
      if (!splat || type.empty())
        return inner.emitError("the CPU target fuses splat constants only");
      std::string value;
      if (t.isInteger(1))
        value = KernelEmitter::literal(splat.getSplatValue<bool>());
      else if (isa<IntegerType>(t))
        value =
            KernelEmitter::literal(splat.getSplatValue<APInt>().getSExtValue());
      else
        value = KernelEmitter::literal(
            splat.getSplatValue<APFloat>().convertToDouble());
      std::string name = "k" + std::to_string(constants.size());
      os << "  const " << type << " " << name << " = " << type << "(" << value
         << ");\n";
      constants[constant.getResult()] = name;
      continue;
    }
    if (!dtg::isFusibleView(&inner))
      continue;
    auto it = sources.find(inner.getOperand(0));
    if (it == sources.end())
      return inner.emitError("the CPU target fuses views of inputs only");
    Source s;
    s.pointer = it->second.pointer;
    if (failed(dtg::applyView(&inner, it->second.strides, it->second.offset,
                              s.strides, s.offset)))
      return inner.emitError("the CPU target cannot read this view with "
                             "strides");
    sources[inner.getResult(0)] = s;
  }
  return success();
}

LogicalResult FusionPrinter::planTables(llvm::raw_ostream &os) {
  SmallVector<Operation *> ops;
  for (Operation &inner : body->without_terminator())
    if (!isa<dtg::ConstantOp, dtg::MatMulOp>(inner) &&
        !dtg::isFusibleView(&inner) && !dtg::isFusibleReduction(&inner))
      ops.push_back(&inner);
  llvm::DenseSet<Operation *> elementwise(ops.begin(), ops.end());
  // The 16-bit value each result is a function of (with constants), if
  // one, and whether a costly op lies on the way.
  llvm::DenseMap<Value, Value> leafOf;
  llvm::DenseSet<Value> costly;
  for (Operation *inner : ops) {
    Value leaf;
    bool single = true, cost = isCostly(inner);
    for (Value operand : inner->getOperands()) {
      if (constants.count(operand))
        continue;
      auto it = leafOf.find(operand);
      Value l = it != leafOf.end()     ? it->second
                : isHalfWidth(operand) ? operand
                                       : Value();
      if (!l || (leaf && l != leaf)) {
        single = false;
        break;
      }
      leaf = l;
      cost = cost || costly.contains(operand);
    }
    if (!single || !leaf)
      continue;
    leafOf[inner->getResult(0)] = leaf;
    if (cost)
      costly.insert(inner->getResult(0));
  }
  // A table for each costly chain at its end: the last value of the chain
  // that something other than the chain reads.
  for (Operation *inner : ops) {
    Value v = inner->getResult(0);
    auto it = leafOf.find(v);
    if (it == leafOf.end() || !costly.contains(v) || !isTabulable(v))
      continue;
    Value leaf = it->second;
    bool end = llvm::any_of(v.getUsers(), [&](Operation *user) {
      if (!elementwise.contains(user))
        return true;
      auto u = leafOf.find(user->getResult(0));
      return u == leafOf.end() || u->second != leaf;
    });
    if (!end)
      continue;
    // The chain's ops from the leaf to `v`, in body order.
    llvm::DenseSet<Operation *> chain;
    SmallVector<Value> work = {v};
    while (!work.empty()) {
      Value w = work.pop_back_val();
      Operation *def = w.getDefiningOp();
      if (w == leaf || !def || !elementwise.contains(def) ||
          !chain.insert(def).second)
        continue;
      for (Value operand : def->getOperands())
        if (!constants.count(operand))
          work.push_back(operand);
    }
    std::string table = "table" + std::to_string(lookups.size());
    llvm::DenseMap<Value, std::string> names = {{leaf, "x"}};
    os << "  static const dtck::Table16<" << e.cTypeOf(v) << ", "
       << e.cTypeOf(leaf) << "> " << table << "([&](" << e.cTypeOf(leaf)
       << " x) {\n";
    for (Operation *link : ops) {
      if (!chain.contains(link))
        continue;
      SmallVector<std::string> args;
      for (Value operand : link->getOperands())
        args.push_back(constants.count(operand) ? constants[operand]
                                                : names[operand]);
      FailureOr<std::string> call = scalarCall(link, args, e);
      if (failed(call))
        return failure();
      std::string name = "u" + std::to_string(names.size() - 1);
      os << "    const " << e.cTypeOf(link->getResult(0)) << " " << name
         << " = " << *call << ";\n";
      names[link->getResult(0)] = name;
    }
    os << "    return " << names[v] << ";\n  });\n";
    lookups[inner] = {leaf, table};
  }
  // Ops no longer computed: those whose values only tables read.
  llvm::DenseSet<Operation *> needed;
  for (Operation *inner : llvm::reverse(ops)) {
    Value v = inner->getResult(0);
    bool need = llvm::any_of(v.getUsers(), [&](Operation *user) {
      if (!elementwise.contains(user))
        return true;
      if (!needed.contains(user))
        return false;
      auto it = lookups.find(user);
      return it == lookups.end() || it->second.leaf == v;
    });
    if (need)
      needed.insert(inner);
    else if (!lookups.empty())
      tabulatedOnly.insert(inner);
  }
  return success();
}

SmallVector<Value> FusionPrinter::operandsOf(Operation *op) {
  if (auto it = lookups.find(op); it != lookups.end())
    return {it->second.leaf};
  return SmallVector<Value>(op->getOperands());
}

FailureOr<std::string> FusionPrinter::callOf(Operation *op,
                                             ArrayRef<std::string> args) {
  if (auto it = lookups.find(op); it != lookups.end())
    return it->second.table + "(" + args[0] + ")";
  return scalarCall(op, args, e);
}

FailureOr<std::string>
FusionPrinter::valueAt(Value v, ArrayRef<int64_t> space,
                       ArrayRef<std::string> index, llvm::raw_ostream &os,
                       llvm::DenseMap<Value, std::string> &names) {
  if (auto it = names.find(v); it != names.end())
    return it->second;
  if (auto it = constants.find(v); it != constants.end())
    return it->second;
  std::string name = fresh();
  if (v == preloadedValue) {
    os << "      const " << e.cTypeOf(v) << " " << name << " = "
       << preloadedPointer << "["
       << indexExpr(0, dtg::contiguousStrides(space), index) << "];\n";
    names[v] = name;
    return name;
  }
  auto it = sources.find(v);
  if (it == sources.end())
    return op.emitError("the CPU target cannot place a value of this kernel");
  auto merged = mergedStrides.find(v);
  SmallVector<int64_t> strides =
      space == ArrayRef(mergedSpace) && merged != mergedStrides.end()
          ? merged->second
          : broadcastTo(dimsOf(v), it->second.strides, space);
  os << "      const " << e.cTypeOf(v) << " " << name << " = "
     << loadExpression(it->second.pointer,
                       indexExpr(it->second.offset, strides, index), v)
     << ";\n";
  names[v] = name;
  return name;
}

LogicalResult
FusionPrinter::computeOps(ArrayRef<Operation *> ops, ArrayRef<int64_t> space,
                          ArrayRef<std::string> index, llvm::raw_ostream &os,
                          llvm::DenseMap<Value, std::string> &names) {
  for (Operation *inner : ops) {
    if (tabulatedOnly.contains(inner))
      continue;
    SmallVector<std::string> args;
    for (Value operand : operandsOf(inner)) {
      FailureOr<std::string> arg = valueAt(operand, space, index, os, names);
      if (failed(arg))
        return failure();
      args.push_back(*arg);
    }
    FailureOr<std::string> call = callOf(inner, args);
    if (failed(call))
      return failure();
    std::string name = fresh();
    os << "      const " << e.cTypeOf(inner->getResult(0)) << " " << name
       << " = " << *call << ";\n";
    names[inner->getResult(0)] = name;
    if (auto it = outputOf.find(inner->getResult(0)); it != outputOf.end())
      os << "      "
         << storeStatement(
                "out" + std::to_string(it->second) + "[" +
                    indexExpr(0, dtg::contiguousStrides(space), index) + "]",
                name, inner->getResult(0))
         << "\n";
  }
  return success();
}

LogicalResult FusionPrinter::emitLoop(llvm::raw_ostream &os,
                                      ArrayRef<Operation *> ops,
                                      ArrayRef<int64_t> space,
                                      Value preloaded) {
  // Whether an op of the loop reads `v`.
  auto readHere = [&](Value v) {
    return llvm::any_of(v.getUsers(), [&](Operation *user) {
      return llvm::is_contained(ops, user);
    });
  };
  // Every access over `space`: inputs and views (broadcast), the product.
  SmallVector<SmallVector<int64_t>> accesses;
  for (auto &[v, source] : sources)
    if (readHere(v))
      accesses.push_back(broadcastTo(dimsOf(v), source.strides, space));
  std::string text;
  llvm::raw_string_ostream bodyOs(text);
  // Merge adjacent dimensions that every access (and the contiguous
  // outputs) walks as one.
  SmallVector<SmallVector<int64_t>> all(accesses.begin(), accesses.end());
  all.push_back(dtg::contiguousStrides(space));
  SmallVector<int64_t> dims;
  SmallVector<SmallVector<int64_t>> merged(all.size());
  for (size_t d = 0; d < space.size(); ++d) {
    bool merge = !dims.empty();
    for (size_t a = 0; a < all.size() && merge; ++a)
      merge = merged[a].back() == all[a][d] * space[d];
    if (merge) {
      dims.back() *= space[d];
      for (size_t a = 0; a < all.size(); ++a)
        merged[a].back() = all[a][d];
      continue;
    }
    dims.push_back(space[d]);
    for (size_t a = 0; a < all.size(); ++a)
      merged[a].push_back(all[a][d]);
  }
  // Rewrite sources onto the merged space (a copy: other phases keep the
  // originals).
  llvm::DenseMap<Value, Source> saved = sources;
  {
    size_t a = 0;
    for (auto &[v, source] : sources)
      if (readHere(v))
        source.strides = merged[a++];
  }
  SmallVector<std::string> vars;
  for (size_t d = 0; d < dims.size(); ++d)
    vars.push_back("i" + std::to_string(d));
  // CUDA: vectorized when the innermost dimension takes whole vectors and
  // every access along it is contiguous from a vector boundary (or
  // broadcast): each thread then moves kVector elements as one access.
  int64_t total = numel(space);
  bool vector = e.cuda() && !dims.empty() && dims.back() % kVector == 0;
  for (auto &[v, source] : sources) {
    if (!vector || !readHere(v))
      continue;
    ArrayRef<int64_t> strides = source.strides;
    vector = strides.back() == 0 ||
             (strides.back() == 1 && source.offset % kVector == 0 &&
              llvm::all_of(strides.drop_back(), [](int64_t stride) {
                return stride % kVector == 0;
              }));
  }
  // CUDA: one thread per element (or vector) of a grid-stride loop, in a
  // kernel of its own; `hostOs` gets the launch.
  llvm::raw_ostream &hostOs = os;
  std::string kernel;
  if (e.cuda()) {
    kernel = openKernel();
    int64_t slots = vector ? total / kVector : total;
    kernels << "  DTCG_GRID_STRIDE_AS(" << idx << ", flat, " << slots << ") {\n"
            << "    " << idx << " rest = flat;\n    (void)rest;\n";
    for (size_t d = dims.size(); d-- > 0;) {
      int64_t size = dims[d];
      if (vector && d + 1 == dims.size()) {
        size /= kVector;
        kernels << "    const " << idx << " " << vars[d] << " = rest % " << size
                << " * " << kVector << ";\n    rest /= " << size << ";\n";
        continue;
      }
      kernels << "    const " << idx << " " << vars[d] << " = rest % " << size
              << ";\n    rest /= " << size << ";\n";
    }
    hostOs << launch(kernel, "dtcg::gridFor(" + std::to_string(slots) + ")",
                     "dtcg::kBlock");
  }
  // Vectorized: loads and the outputs' vectors stand before the loop over
  // a vector's lanes (bodyOs), stores after it.
  std::string vectorHead, vectorTail;
  llvm::raw_string_ostream headOs(vectorHead), tailOs(vectorTail);
  auto vecOf = [&](Value v) { return "dtcg::Vec<" + e.cTypeOf(v) + ">"; };
  llvm::raw_ostream &loopOs = e.cuda() ? kernels : os;
  if (!e.cuda()) {
    if (numel(space) >= kParallelThreshold && !dims.empty())
      os << "#pragma omp parallel for\n";
    for (size_t d = 0; d < dims.size(); ++d)
      os << "  for (int64_t " << vars[d] << " = 0; " << vars[d] << " < "
         << dims[d] << "; ++" << vars[d] << ")\n";
  }
  loopOs << "  {\n";
  // Sources now hold merged strides of rank dims.size(): read them over
  // the merged space directly.
  llvm::DenseMap<Value, std::string> names;
  preloadedValue = preloaded;
  for (Operation *inner : ops) {
    if (tabulatedOnly.contains(inner))
      continue;
    SmallVector<std::string> args;
    for (Value operand : operandsOf(inner)) {
      if (auto it = names.find(operand); it != names.end()) {
        args.push_back(it->second);
        continue;
      }
      if (auto it = constants.find(operand); it != constants.end()) {
        args.push_back(it->second);
        continue;
      }
      std::string name = fresh();
      std::string pointer, index;
      bool broadcast = false;
      if (operand == preloaded) {
        pointer = preloadedPointer;
        index = indexExpr(0, merged.back(), vars);
      } else {
        auto it = sources.find(operand);
        if (it == sources.end())
          return op.emitError("the CPU target cannot place a value of this "
                              "kernel");
        pointer = it->second.pointer;
        index = indexExpr(it->second.offset, it->second.strides, vars);
        broadcast = it->second.strides.back() == 0;
      }
      std::string type = e.cTypeOf(operand);
      if (!vector || broadcast) {
        (vector ? headOs : bodyOs)
            << "    const " << type << " " << name << " = "
            << loadExpression(pointer, index, operand) << ";\n";
      } else {
        headOs << "    const " << vecOf(operand) << " v" << name
               << " = *reinterpret_cast<const " << vecOf(operand) << " *>(&"
               << pointer << "[" << index << "]);\n";
        bodyOs << "    const " << type << " " << name << " = v" << name
               << ".v[lane];\n";
      }
      names[operand] = name;
      args.push_back(name);
    }
    FailureOr<std::string> call = callOf(inner, args);
    if (failed(call))
      return failure();
    std::string name = fresh();
    bodyOs << "    const " << e.cTypeOf(inner->getResult(0)) << " " << name
           << " = " << *call << ";\n";
    names[inner->getResult(0)] = name;
  }
  // Outputs written by this loop, in output order (outputOf is keyed by
  // pointer: its order would change the source, and ccache's hits, from
  // run to run).
  SmallVector<std::pair<unsigned, Value>> outputs;
  for (auto &[v, number] : outputOf)
    outputs.push_back({number, v});
  llvm::sort(outputs,
             [](const auto &a, const auto &b) { return a.first < b.first; });
  for (auto &[number, v] : outputs) {
    if (!names.count(v) || v == preloaded)
      continue;
    if (dimsOf(v) != space)
      continue;
    std::string at = indexExpr(0, merged.back(), vars);
    if (!vector) {
      bodyOs << "    "
             << storeStatement("out" + std::to_string(number) + "[" + at + "]",
                               names[v], v)
             << "\n";
      continue;
    }
    headOs << "    " << vecOf(v) << " vout" << number << ";\n";
    bodyOs << "    vout" << number << ".v[lane] = " << names[v] << ";\n";
    tailOs << "    *reinterpret_cast<" << vecOf(v) << " *>(&out" << number
           << "[" << at << "]) = vout" << number << ";\n";
  }
  if (vector)
    loopOs << vectorHead << "    #pragma unroll\n"
           << "    for (int lane = 0; lane < " << kVector << "; ++lane) {\n"
           << text << "    }\n"
           << vectorTail << "  }\n";
  else
    loopOs << text << "  }\n";
  if (e.cuda())
    kernels << "  }\n}\n\n";
  sources = std::move(saved);
  return success();
}

void FusionPrinter::addPartials(llvm::raw_ostream &hostOs, int64_t slots) {
  hostOs << "  static double *const partial = static_cast<double *>("
         << "dtcg::deviceScratch(" << slots << " * sizeof(double)));\n";
  params += ", double *__restrict partial";
  args += ", partial";
}

LogicalResult FusionPrinter::emitCombineParts(
    llvm::raw_ostream &hostOs, ArrayRef<Operation *> reductions,
    int64_t outCount, int64_t parts,
    function_ref<LogicalResult(StringRef)> emitResults) {
  // One thread per result combines its parts in order, then writes the
  // result and the epilogue.
  llvm::raw_ostream &os = kernels;
  int64_t numAcc = static_cast<int64_t>(reductions.size());
  std::string kernel = openKernel();
  hostOs << launch(kernel, std::to_string((outCount + 31) / 32), "32");
  os << "  const " << idx << " r = " << idx
     << "(blockIdx.x) * 32 + threadIdx.x;\n"
     << "  " << idx << " rest = r;\n  (void)rest;\n"
     << "  if (r < " << outCount << ") {\n";
  for (auto [i, r] : llvm::enumerate(reductions))
    os << "    double acc" << i << " = partial[r * " << parts * numAcc << " + "
       << i << "];\n"
       << "    for (" << idx << " p = 1; p < " << parts << "; ++p)\n      acc"
       << i << " = dtcg::combineOp(acc" << i << ", partial[(r * " << parts
       << " + p) * " << numAcc << " + " << i << "], " << reduceOpOf(r)
       << ");\n";
  if (failed(emitResults("")))
    return failure();
  os << "  }\n}\n\n";
  return success();
}

LogicalResult FusionPrinter::emitDeviceReduction(
    llvm::raw_ostream &hostOs, ArrayRef<int64_t> in, ArrayRef<int64_t> axes,
    ArrayRef<int64_t> keptDims, ArrayRef<Operation *> reductions,
    ArrayRef<std::string> acc,
    function_ref<void(ArrayRef<int64_t>, SmallVectorImpl<std::string> &,
                      StringRef)>
        emitKept,
    function_ref<LogicalResult(ArrayRef<std::string>, StringRef)> emitUpdates,
    function_ref<LogicalResult(StringRef)> emitResults) {
  llvm::raw_ostream &os = kernels;
  auto initOf = [&](Operation *r) -> StringRef {
    int op = reduceOpOf(r);
    return op == 1 ? "-HUGE_VAL" : op == 2 ? "HUGE_VAL" : "0.0";
  };
  int64_t total = numel(in);
  int64_t outCount = 1;
  for (int64_t d : keptDims)
    outCount *= in[d];
  int64_t count = total / std::max<int64_t>(outCount, 1);
  SmallVector<std::string> inIndex(in.size());
  // The reduced coordinates of `q` (the last reduced axis fastest).
  auto emitReduced = [&] {
    os << "      " << idx << " left = q;\n      (void)left;\n";
    for (int64_t a : llvm::reverse(axes)) {
      inIndex[a] = "j" + std::to_string(a);
      os << "      const " << idx << " " << inIndex[a] << " = left % " << in[a]
         << ";\n      left /= " << in[a] << ";\n";
    }
  };
  auto combine = [&](StringRef function) {
    for (auto [r, name] : llvm::zip(reductions, acc))
      os << "    " << name << " = dtcg::" << function << "(" << name << ", "
         << reduceOpOf(r) << ");\n";
  };
  int64_t last = static_cast<int64_t>(in.size()) - 1;
  bool column = !keptDims.empty() && keptDims.back() == last && in[last] >= 8 &&
                count > 1;
  int64_t numAcc = static_cast<int64_t>(acc.size());
  // The accumulators, then a loop (`header` in C) over reduced elements
  // updating them.
  auto emitAccumulation = [&](const std::string &header) -> LogicalResult {
    for (auto [r, name] : llvm::zip(reductions, acc))
      os << "    double " << name << " = " << initOf(r) << ";\n";
    os << "    for (" << header << ") {\n";
    emitReduced();
    if (failed(emitUpdates(inIndex, "")))
      return failure();
    os << "    }\n";
    return success();
  };
  // The reduced elements [begin, end) of part `part` of `chunk` each.
  auto emitPartBounds = [&](StringRef part, int64_t chunk) {
    os << "  const " << idx << " begin = " << part << " * " << chunk << ";\n"
       << "  const " << idx << " end = begin + " << chunk << " < " << count
       << " ? begin + " << chunk << " : " << count << ";\n";
  };
  if (!column && count > 1024 && outCount < 264 && count >= 16384) {
    // Few long rows (a gradient's sum of squares for clipping): each row's
    // parts go to blocks of their own, which leave partial results in a
    // scratch buffer; a second kernel combines each row's parts in order.
    int64_t parts = std::min<int64_t>((count + 4095) / 4096,
                                      std::max<int64_t>(2, 2048 / outCount));
    int64_t chunk = (count + parts - 1) / parts;
    addPartials(hostOs, outCount * parts * numAcc);
    // Block b takes part b % parts of row b / parts.
    std::string kernel = openKernel();
    hostOs << launch(kernel, std::to_string(outCount * parts), "dtcg::kBlock");
    os << "  const " << idx << " b = blockIdx.x;\n"
       << "  const " << idx << " r = b / " << parts << ";\n";
    emitPartBounds("b % " + std::to_string(parts), chunk);
    emitKept(keptDims, inIndex, "r");
    if (failed(emitAccumulation(
            idx + " q = begin + threadIdx.x; q < end; q += blockDim.x")))
      return failure();
    combine("blockReduce");
    for (auto [i, name] : llvm::enumerate(acc))
      os << "    if (threadIdx.x == 0)\n      partial[b * " << numAcc << " + "
         << i << "] = " << name << ";\n";
    os << "}\n\n";
    return emitCombineParts(hostOs, reductions, outCount, parts, emitResults);
  }
  if (column) {
    // The last dimension is kept (a bias gradient): a block takes 32
    // adjacent results (one per lane: every read of a warp is one
    // contiguous run) and its 8 rows of threads stride over the reduced
    // elements; the rows combine through shared memory, in order. With
    // few such blocks, the reduced elements are split in `parts` (grid
    // y) whose results another kernel combines in order.
    int64_t inner = in[last];
    int64_t groups = (inner + 31) / 32;
    int64_t blocks = outCount / inner * groups;
    int64_t parts = 1;
    if (blocks < 132 && count >= 512)
      parts =
          std::min<int64_t>((264 + blocks - 1) / blocks, (count + 255) / 256);
    int64_t chunk = (count + parts - 1) / parts;
    if (parts > 1)
      addPartials(hostOs, outCount * parts * numAcc);
    std::string kernel = openKernel();
    hostOs << launch(kernel,
                     "dim3(" + std::to_string(blocks) + ", " +
                         std::to_string(parts) + ")",
                     "dim3(32, 8)");
    os << "  const " << idx << " g = blockIdx.x;\n"
       << "  const " << idx << " row = g / " << groups << ", col = g % "
       << groups << " * 32 + threadIdx.x;\n"
       << "  const bool live = col < " << inner << ";\n";
    emitPartBounds(idx + "(blockIdx.y)", chunk);
    emitKept(keptDims.drop_back(), inIndex, "row");
    inIndex[last] = "col";
    if (failed(emitAccumulation(
            idx +
            " q = begin + threadIdx.y; live && q < end; q += blockDim.y")))
      return failure();
    combine("columnReduce");
    os << "    if (threadIdx.y == 0 && live) {\n"
       << "    const " << idx << " r = row * " << inner << " + col;\n";
    if (parts > 1) {
      for (auto [i, name] : llvm::enumerate(acc))
        os << "      partial[(r * " << parts << " + blockIdx.y) * " << numAcc
           << " + " << i << "] = " << name << ";\n";
      os << "    }\n}\n\n";
      return emitCombineParts(hostOs, reductions, outCount, parts, emitResults);
    }
    if (failed(emitResults("")))
      return failure();
    os << "    }\n}\n\n";
    return success();
  }
  std::string kernel = openKernel();
  // Rows: short ones (layer norm, softmax over a head) one warp per
  // result, 8 results per block, combined by shuffles; long ones one block
  // per result, combined by warp shuffles and shared memory. Lane or thread
  // 0 writes the result and the epilogue.
  bool warp = count <= 1024;
  hostOs << launch(kernel, std::to_string(warp ? (outCount + 7) / 8 : outCount),
                   warp ? "dim3(32, 8)"
                        : "dtcg::detail::rowThreads(" + std::to_string(count) +
                              ")");
  os << "  const " << idx << " r = "
     << (warp ? idx + "(blockIdx.x) * 8 + threadIdx.y" : "blockIdx.x") << ";\n"
     << "  const bool live = r < " << outCount << ";\n";
  emitKept(keptDims, inIndex, "r");
  if (failed(emitAccumulation(idx + " q = threadIdx.x; live && q < " +
                              std::to_string(count) + "; q += blockDim.x")))
    return failure();
  combine(warp ? "warpReduce" : "blockReduce");
  os << "    if (threadIdx.x == 0 && live) {\n";
  if (failed(emitResults("")))
    return failure();
  os << "    }\n}\n\n";
  return success();
}

LogicalResult FusionPrinter::emitReduction(llvm::raw_ostream &hostOs) {
  // The CUDA target prints the loops into a kernel, the launch on the host.
  llvm::raw_ostream &os =
      e.cuda() ? static_cast<llvm::raw_ostream &>(kernels) : hostOs;
  SmallVector<Operation *> prologue, reductions, epilogue;
  Operation *first = nullptr;
  for (Operation &inner : body->without_terminator()) {
    if (isa<dtg::ConstantOp>(inner) || dtg::isFusibleView(&inner))
      continue;
    if (dtg::isFusibleReduction(&inner)) {
      if (!first)
        first = &inner;
      reductions.push_back(&inner);
    }
  }
  if (!first)
    return op.emitError("a reduction kernel holds no reduction");
  ArrayRef<int64_t> in = dimsOf(first->getOperand(0));
  ArrayRef<int64_t> out = dimsOf(first->getResult(0));
  auto axes = cast<DenseI64ArrayAttr>(first->getAttr("axes")).asArrayRef();
  for (Operation *r : reductions)
    if (dimsOf(r->getOperand(0)) != in || dimsOf(r->getResult(0)) != out ||
        cast<DenseI64ArrayAttr>(r->getAttr("axes")).asArrayRef() != axes)
      return r->emitError("the reductions of a kernel must share their "
                          "shapes and axes");
  if (numel(in) == numel(out))
    return op.emitError("a reduction kernel must reduce");
  for (int64_t a : axes)
    if (a < 0 || a >= static_cast<int64_t>(in.size()))
      return first->emitError("reduction axis out of range");
  for (Operation &inner : body->without_terminator()) {
    if (isa<dtg::ConstantOp>(inner) || dtg::isFusibleView(&inner) ||
        dtg::isFusibleReduction(&inner))
      continue;
    ArrayRef<int64_t> shape = dimsOf(inner.getResult(0));
    if (shape == in)
      prologue.push_back(&inner);
    else if (shape == out)
      epilogue.push_back(&inner);
    else
      return inner.emitError("an op of a reduction kernel must have the "
                             "reduction's input or result shape");
  }
  // Accumulator declarations and updates, shared by both loop orders.
  auto initOf = [](Operation *r) -> StringRef {
    return isa<dtg::ReduceMaxOp>(r)   ? "-HUGE_VAL"
           : isa<dtg::ReduceMinOp>(r) ? "HUGE_VAL"
                                      : "0.0";
  };
  auto stepOf = [](Operation *r) -> StringRef {
    return isa<dtg::ReduceMaxOp>(r)   ? "maxStep"
           : isa<dtg::ReduceMinOp>(r) ? "minStep"
                                      : "sumStep";
  };
  // The reduced coordinates, in increasing order of the input's elements.
  auto openReducedLoops = [&](SmallVectorImpl<std::string> &inIndex,
                              StringRef indent) {
    for (int64_t a : axes) {
      inIndex[a] = "j" + std::to_string(a);
      os << indent << "for (int64_t " << inIndex[a] << " = 0; " << inIndex[a]
         << " < " << in[a] << "; ++" << inIndex[a] << ")\n";
    }
  };
  // The reductions' results and the epilogue at result element `r`, whose
  // accumulators are `acc` (with `suffix`, such as "[q]").
  int64_t outCount = numel(out);
  int64_t count = numel(in) / std::max<int64_t>(outCount, 1);
  SmallVector<std::string> acc;
  for (size_t i = 0; i < reductions.size(); ++i)
    acc.push_back("acc" + std::to_string(i));
  auto emitResults = [&](StringRef suffix) -> LogicalResult {
    SmallVector<std::string> outIndex(out.size());
    os << "    rest = r;\n";
    for (int64_t d = static_cast<int64_t>(out.size()) - 1; d >= 0; --d) {
      outIndex[d] = "e" + std::to_string(d);
      os << "    const " << idx << " " << outIndex[d] << " = rest % " << out[d]
         << ";\n    rest /= " << out[d] << ";\n";
    }
    llvm::DenseMap<Value, std::string> outNames;
    for (auto [r, name] : llvm::zip(reductions, acc)) {
      std::string type = e.cTypeOf(r->getResult(0));
      std::string value = name + suffix.str();
      if (isa<dtg::ReduceMeanOp>(r))
        value += " / " + KernelEmitter::literal(double(count));
      std::string result = fresh();
      os << "      const " << type << " " << result
         << " = dtck::scalar::finish<" << type << ">(" << value << ");\n";
      outNames[r->getResult(0)] = result;
      if (auto it = outputOf.find(r->getResult(0)); it != outputOf.end())
        os << "      "
           << storeStatement("out" + std::to_string(it->second) + "[r]", result,
                             r->getResult(0))
           << "\n";
    }
    return computeOps(epilogue, out, outIndex, os, outNames);
  };
  // The prologue and, for each reduction, its accumulator's update at one
  // input element (`acc` with `suffix`), or where `buffered`, the value it
  // would add, as accumulators take it, into its buffer (`buf` + `acc`
  // with `suffix`).
  auto emitElement = [&](ArrayRef<std::string> inIndex, StringRef suffix,
                         bool buffered) -> LogicalResult {
    llvm::DenseMap<Value, std::string> names;
    std::string text;
    llvm::raw_string_ostream bodyOs(text);
    if (failed(computeOps(prologue, in, inIndex, bodyOs, names)))
      return failure();
    for (auto [r, name] : llvm::zip(reductions, acc)) {
      FailureOr<std::string> v =
          valueAt(r->getOperand(0), in, inIndex, bodyOs, names);
      if (failed(v))
        return failure();
      std::string slot = name + suffix.str();
      if (buffered)
        bodyOs << "      buf" << slot << " = dtck::scalar::accumulated(" << *v
               << ");\n";
      else
        bodyOs << "      " << slot << " = dtck::scalar::" << stepOf(r) << "("
               << slot << ", " << *v << ");\n";
    }
    os << text;
    return success();
  };
  auto emitUpdates = [&](ArrayRef<std::string> inIndex, StringRef suffix) {
    return emitElement(inIndex, suffix, /*buffered=*/false);
  };
  // Decomposes `var` into the kept input coordinates of `dims` (the
  // dimensions not reduced, last first).
  auto emitKept = [&](ArrayRef<int64_t> dims,
                      SmallVectorImpl<std::string> &inIndex, StringRef var) {
    os << "    " << idx << " rest = " << var << ";\n    (void)rest;\n";
    for (int64_t d : llvm::reverse(dims)) {
      inIndex[d] = "c" + std::to_string(d);
      os << "    const " << idx << " " << inIndex[d] << " = rest % " << in[d]
         << ";\n    rest /= " << in[d] << ";\n";
    }
  };
  // CPU: adjacent reduced dimensions that every access walks as one are
  // merged (a whole gradient's sum of squares, [512, 512, 3, 3], is one
  // run of 2359296 elements, not 262144 runs of 9). The elements and their
  // order stay the same.
  SmallVector<int64_t> mergedAxes;
  if (!e.cuda()) {
    auto readHere = [&](Value v) {
      return llvm::any_of(v.getUsers(), [&](Operation *user) {
        return llvm::is_contained(prologue, user) ||
               llvm::is_contained(reductions, user);
      });
    };
    SmallVector<Value> read;
    SmallVector<SmallVector<int64_t>> strides;
    for (auto &[v, source] : sources)
      if (readHere(v)) {
        read.push_back(v);
        strides.push_back(broadcastTo(dimsOf(v), source.strides, in));
      }
    SmallVector<SmallVector<int64_t>> mergedOf(read.size());
    for (int64_t d = 0; d < static_cast<int64_t>(in.size()); ++d) {
      bool reduced = llvm::is_contained(axes, d);
      bool merge = reduced && d > 0 && llvm::is_contained(axes, d - 1);
      for (size_t a = 0; a < read.size() && merge; ++a)
        merge = mergedOf[a].back() == strides[a][d] * in[d];
      if (merge) {
        mergedSpace.back() *= in[d];
        for (size_t a = 0; a < read.size(); ++a)
          mergedOf[a].back() = strides[a][d];
        continue;
      }
      if (reduced)
        mergedAxes.push_back(static_cast<int64_t>(mergedSpace.size()));
      mergedSpace.push_back(in[d]);
      for (size_t a = 0; a < read.size(); ++a)
        mergedOf[a].push_back(strides[a][d]);
    }
    for (auto [v, merged] : llvm::zip(read, mergedOf))
      mergedStrides[v] = merged;
    in = mergedSpace;
    axes = mergedAxes;
  }
  SmallVector<int64_t> keptDims;
  for (int64_t d = 0; d < static_cast<int64_t>(in.size()); ++d)
    if (!llvm::is_contained(axes, d))
      keptDims.push_back(d);
  SmallVector<std::string> inIndex(in.size());
  bool parallel = numel(in) >= kParallelThreshold;

  if (e.cuda())
    return emitDeviceReduction(hostOs, in, axes, keptDims, reductions, acc,
                               emitKept, emitUpdates, emitResults);

  // The last dimension is kept (a column reduction, such as a bias
  // gradient): each task takes a block of contiguous results of one row and
  // walks the reduced coordinates outside, the block inside, so that reads
  // are contiguous and vectorize. Every result still accumulates its
  // operand elements in increasing order.
  int64_t last = static_cast<int64_t>(in.size()) - 1;
  if (!keptDims.empty() && keptDims.back() == last && in[last] > 1) {
    int64_t inner = in[last];
    int64_t block = std::min<int64_t>(inner, kColumnBlock);
    int64_t chunks = (inner + block - 1) / block;
    int64_t tasks = (outCount / inner) * chunks;
    std::string len = inner % block == 0 ? std::to_string(block) : "len";
    if (parallel && tasks > 1)
      os << "#pragma omp parallel for\n";
    os << "  for (int64_t b = 0; b < " << tasks << "; ++b) {\n"
       << "    const int64_t row = b / " << chunks << ", n0 = (b % " << chunks
       << ") * " << block << ";\n";
    if (len == "len")
      os << "    const int64_t len = std::min<int64_t>(" << block << ", "
         << inner << " - n0);\n";
    emitKept(ArrayRef(keptDims).drop_back(), inIndex, "row");
    for (auto [r, name] : llvm::zip(reductions, acc))
      os << "    double " << name << "[" << block << "];\n"
         << "    for (int64_t q = 0; q < " << len << "; ++q)\n      " << name
         << "[q] = " << initOf(r) << ";\n";
    openReducedLoops(inIndex, "    ");
    inIndex[last] = "c" + std::to_string(last);
    os << "    for (int64_t q = 0; q < " << len << "; ++q) {\n"
       << "      const int64_t " << inIndex[last] << " = n0 + q;\n";
    if (failed(emitUpdates(inIndex, "[q]")))
      return failure();
    os << "    }\n";
    os << "    for (int64_t q = 0; q < " << len << "; ++q) {\n"
       << "    const int64_t r = row * " << inner << " + n0 + q;\n";
    if (failed(emitResults("[q]")))
      return failure();
    os << "    }\n  }\n";
    return success();
  }

  // The last dimension is reduced (a row reduction: LayerNorm's and
  // softmax's sums, BatchNorm's per-channel ones): each task takes
  // kRowWays results. For each block of their elements (the innermost
  // reduced dimensions, up to kRowBlock elements, else a block of the last
  // one) it computes the prologue and the values to reduce into a buffer,
  // one result's block at a time (contiguous reads that vectorize and
  // stream), then adds the buffer into the accumulators, the results
  // interleaved (independent chains instead of one waiting on each
  // addition). Every result still accumulates its operand elements in
  // increasing order: the same sums as one element at a time.
  if (in[last] > 1 && llvm::is_contained(axes, last)) {
    // The trailing reduced dimensions a block spans whole.
    SmallVector<int64_t> trailing = {last};
    int64_t span = in[last];
    for (int64_t d = last - 1; d >= 0; --d) {
      // (Kept dimensions between are one result's constants.)
      if (!llvm::is_contained(axes, d))
        continue;
      if (span * in[d] > kRowBlock)
        break;
      trailing.insert(trailing.begin(), d);
      span *= in[d];
    }
    int64_t run = in[last];
    int64_t block = std::min<int64_t>(span, kRowBlock);
    bool chunked = span > kRowBlock; // blocks of the last dimension
    int64_t ways = std::min<int64_t>(kRowWays, outCount);
    int64_t groups = (outCount + ways - 1) / ways;
    // Fewer results than kRowWays, of many elements each (a gradient's sum
    // of squares for the norm): each result takes kRowLanes partial sums,
    // the element at place q of a block going to q % kRowLanes, added in
    // lane order at the end (independent chains that vectorize, instead of
    // one waiting on each addition). The shapes fix the order: the same at
    // every thread count.
    int64_t lanes = ways < kRowWays && count >= kRowLanesFrom ? kRowLanes : 1;
    std::string lane = lanes > 1 ? "[q % " + std::to_string(lanes) + "]" : "";
    // One run of many elements (a whole gradient's, its dimensions merged)
    // sums in parts of kRowPart elements across the threads: a fixed
    // order, as the lanes.
    int64_t parts = (run + kRowPart - 1) / kRowPart;
    bool split = parallel && groups == 1 && lanes > 1 && chunked &&
                 trailing.size() == axes.size() && parts > 1;
    std::string lanesText = std::to_string(lanes);
    if (parallel && groups > 1)
      os << "#pragma omp parallel for\n";
    os << "  for (int64_t g = 0; g < " << groups << "; ++g) {\n"
       << "    const int64_t ways = std::min<int64_t>(" << ways << ", "
       << outCount << " - g * " << ways << ");\n";
    if (split) {
      for (const std::string &name : acc)
        os << "    std::vector<double> parts" << name << "(" << parts * ways
           << " * " << lanesText << ");\n";
      os << "#pragma omp parallel for\n"
         << "    for (int64_t part = 0; part < " << parts << "; ++part) {\n";
    }
    for (auto [r, name] : llvm::zip(reductions, acc)) {
      os << "    double " << name << "[" << ways << "]"
         << (lanes > 1 ? "[" + std::to_string(lanes) + "]" : "") << ", buf"
         << name << "[" << ways << "][" << block << "];\n"
         << "    for (int64_t k = 0; k < " << ways << "; ++k)\n";
      if (lanes > 1)
        os << "      for (int64_t q = 0; q < " << lanes << "; ++q)\n"
           << "        " << name << "[k][q] = " << initOf(r) << ";\n";
      else
        os << "      " << name << "[k] = " << initOf(r) << ";\n";
    }
    for (int64_t a : axes) {
      if (llvm::is_contained(trailing, a))
        continue;
      inIndex[a] = "j" + std::to_string(a);
      os << "    for (int64_t " << inIndex[a] << " = 0; " << inIndex[a] << " < "
         << in[a] << "; ++" << inIndex[a] << ")\n";
    }
    if (split)
      os << "    for (int64_t q0 = part * " << kRowPart
         << "; q0 < std::min<int64_t>(" << run << ", (part + 1) * " << kRowPart
         << "); q0 += " << block << ") {\n"
         << "    const int64_t len = std::min<int64_t>(" << block << ", " << run
         << " - q0);\n";
    else if (chunked)
      os << "    for (int64_t q0 = 0; q0 < " << run << "; q0 += " << block
         << ") {\n"
         << "    const int64_t len = std::min<int64_t>(" << block << ", " << run
         << " - q0);\n";
    else
      os << "    {\n    const int64_t len = " << block << ";\n";
    os << "    for (int64_t k = 0; k < ways; ++k) {\n"
       << "    const int64_t r = g * " << ways << " + k;\n";
    emitKept(keptDims, inIndex, "r");
    // The element's place in the block: its trailing coordinates, row-major.
    std::string place;
    for (int64_t d : ArrayRef(trailing).drop_back()) {
      inIndex[d] = "j" + std::to_string(d);
      os << "    for (int64_t " << inIndex[d] << " = 0; " << inIndex[d] << " < "
         << in[d] << "; ++" << inIndex[d] << ")\n";
      place = (place.empty() ? inIndex[d]
                             : "(" + place + ") * " + std::to_string(in[d]) +
                                   " + " + inIndex[d]);
    }
    inIndex[last] = "j" + std::to_string(last);
    place = place.empty() ? "q"
                          : "(" + place + ") * " + std::to_string(run) + " + q";
    os << "    for (int64_t q = 0; q < "
       << (chunked ? "len" : std::to_string(run)) << "; ++q) {\n"
       << "      const int64_t " << inIndex[last] << " = "
       << (chunked ? "q0 + q" : "q") << ";\n";
    if (failed(emitElement(inIndex, "[k][" + place + "]", /*buffered=*/true)))
      return failure();
    os << "    }\n    }\n";
    if (lanes > 1) {
      // Whole runs of lanes first (a loop GCC vectorizes), then the rest.
      std::string n = std::to_string(lanes);
      os << "    for (int64_t k = 0; k < ways; ++k) {\n"
         << "      int64_t q = 0;\n"
         << "      for (; q + " << n << " <= len; q += " << n << ")\n"
         << "        for (int64_t l = 0; l < " << n << "; ++l) {\n";
      for (auto [r, name] : llvm::zip(reductions, acc))
        os << "          " << name << "[k][l] = dtck::scalar::" << stepOf(r)
           << "(" << name << "[k][l], buf" << name << "[k][q + l]);\n";
      os << "        }\n      for (; q < len; ++q) {\n";
      for (auto [r, name] : llvm::zip(reductions, acc))
        os << "        " << name << "[k]" << lane
           << " = dtck::scalar::" << stepOf(r) << "(" << name << "[k]" << lane
           << ", buf" << name << "[k][q]);\n";
      os << "      }\n    }\n";
    } else {
      os << "    for (int64_t q = 0; q < len; ++q)\n"
         << "      for (int64_t k = 0; k < ways; ++k) {\n";
      for (auto [r, name] : llvm::zip(reductions, acc))
        os << "      " << name << "[k] = dtck::scalar::" << stepOf(r) << "("
           << name << "[k], buf" << name << "[k][q]);\n";
      os << "      }\n";
    }
    os << "    }\n";
    if (split) {
      // Each part's sums, then the parts added in order into part 0's.
      std::string at =
          "(part * " + std::to_string(ways) + " + k) * " + lanesText + " + l";
      os << "    for (int64_t k = 0; k < ways; ++k)\n"
         << "      for (int64_t l = 0; l < " << lanesText << "; ++l) {\n";
      for (const std::string &name : acc)
        os << "        parts" << name << "[" << at << "] = " << name
           << "[k][l];\n";
      os << "      }\n    }\n";
      for (const std::string &name : acc)
        os << "    double " << name << "[" << ways << "][" << lanesText
           << "];\n";
      os << "    for (int64_t k = 0; k < ways; ++k)\n"
         << "      for (int64_t l = 0; l < " << lanesText << "; ++l) {\n";
      for (const std::string &name : acc)
        os << "        " << name << "[k][l] = parts" << name << "[k * "
           << lanesText << " + l];\n";
      os << "        for (int64_t part = 1; part < " << parts
         << "; ++part) {\n";
      for (auto [r, name] : llvm::zip(reductions, acc))
        os << "          " << name << "[k][l] = dtck::scalar::" << stepOf(r)
           << "(" << name << "[k][l], parts" << name << "[" << at << "]);\n";
      os << "        }\n      }\n";
    }
    os << "    for (int64_t k = 0; k < ways; ++k) {\n"
       << "    const int64_t r = g * " << ways << " + k;\n"
       << "    " << idx << " rest = r;\n    (void)rest;\n";
    if (lanes > 1)
      for (auto [r, name] : llvm::zip(reductions, acc))
        os << "    for (int64_t q = 1; q < " << lanes << "; ++q)\n"
           << "      " << name << "[k][0] = dtck::scalar::" << stepOf(r) << "("
           << name << "[k][0], " << name << "[k][q]);\n";
    if (failed(emitResults(lanes > 1 ? "[k][0]" : "[k]")))
      return failure();
    os << "    }\n  }\n";
    return success();
  }

  // Otherwise r walks the results, each reducing its elements in an inner
  // loop.
  if (parallel && outCount > 1)
    os << "#pragma omp parallel for\n";
  os << "  for (int64_t r = 0; r < " << outCount << "; ++r) {\n";
  emitKept(keptDims, inIndex, "r");
  for (auto [r, name] : llvm::zip(reductions, acc))
    os << "    double " << name << " = " << initOf(r) << ";\n";
  openReducedLoops(inIndex, "    ");
  os << "    {\n";
  if (failed(emitUpdates(inIndex, "")))
    return failure();
  os << "    }\n";
  if (failed(emitResults("")))
    return failure();
  os << "  }\n";
  return success();
}

size_t FusionPrinter::matchLtEpilogue(Value product,
                                      ArrayRef<Operation *> epilogue,
                                      std::string &arg,
                                      std::optional<unsigned> &auxOutput) {
  // The product feeds only `add(product, bias)`, bias being an input of the
  // product's type read along the last dimension only.
  if (epilogue.empty() || !product.hasOneUse() || outputOf.count(product))
    return 0;
  auto add = dyn_cast<dtg::AddOp>(epilogue.front());
  if (!add || *product.getUsers().begin() != add)
    return 0;
  Value bias = add.getLhs() == product ? add.getRhs() : add.getLhs();
  auto source = sources.find(bias);
  ArrayRef<int64_t> sy = dimsOf(product);
  if (bias == product || source == sources.end() ||
      cast<RankedTensorType>(bias.getType()).getElementType() !=
          cast<RankedTensorType>(product.getType()).getElementType())
    return 0;
  SmallVector<int64_t> strides =
      broadcastTo(dimsOf(bias), source->second.strides, sy);
  for (size_t d = 0; d < strides.size(); ++d)
    if (strides[d] != (d + 1 == strides.size() ? 1 : 0))
      return 0;
  std::string kind = "Bias", aux = "nullptr";
  size_t fused = 1;
  Value sum = add.getResult();
  if (epilogue.size() > 1 && epilogue[1]->getOperand(0) == sum &&
      llvm::all_of(sum.getUsers(), [&](Operation *user) {
        return user == epilogue[1] || isa<dtg::YieldOp>(user);
      })) {
    auto gelu = dyn_cast<dtg::GeluOp>(epilogue[1]);
    // ReLU without an aux (cuBLASLt's keeps a bit mask, not the values).
    if (isa<dtg::ReluOp>(epilogue[1]) && !outputOf.count(sum)) {
      kind = "ReluBias";
      fused = 2;
    } else if (gelu && gelu.getApproximate()) {
      kind = "GeluBias";
      fused = 2;
      if (auto it = outputOf.find(sum); it != outputOf.end()) {
        auxOutput = it->second;
        aux = "out" + std::to_string(it->second);
      }
    }
  }
  std::string type = e.cTypeOf(product);
  arg = ", dtcg::Epilogue<" + type + ">{dtcg::EpilogueKind::" + kind + ", " +
        source->second.pointer + " + " + std::to_string(source->second.offset) +
        ", " + aux + "}";
  return fused;
}

LogicalResult FusionPrinter::emitGemm(llvm::raw_ostream &os) {
  dtg::MatMulOp matmul;
  SmallVector<Operation *> epilogue;
  for (Operation &inner : body->without_terminator()) {
    if (auto m = dyn_cast<dtg::MatMulOp>(inner)) {
      matmul = m;
      continue;
    }
    if (isa<dtg::ConstantOp>(inner) || dtg::isFusibleView(&inner))
      continue;
    epilogue.push_back(&inner);
  }
  if (!matmul)
    return op.emitError("a gemm kernel holds no matmul");
  Value result = matmul.getResult();
  ArrayRef<int64_t> sy = dimsOf(result);
  int r = static_cast<int>(sy.size());
  for (Operation *inner : epilogue)
    if (dimsOf(inner->getResult(0)) != sy)
      return inner->emitError("an op of a gemm kernel must have the "
                              "product's shape");
  // The operands as matrix views.
  auto view = [&](Value v, std::string &pointer) -> FailureOr<std::string> {
    auto it = sources.find(v);
    ArrayRef<int64_t> dims = dimsOf(v);
    if (it == sources.end() || dims.size() < 2 || r < 2)
      return matmul.emitError("the CPU target fuses matmuls of inputs and "
                              "their views of rank >= 2 only");
    pointer = it->second.pointer;
    ArrayRef<int64_t> strides = it->second.strides;
    size_t rank = dims.size();
    SmallVector<int64_t> batch = broadcastTo(
        dims.drop_back(2), ArrayRef(strides).drop_back(2), sy.drop_back(2));
    std::string text = "{" + std::to_string(it->second.offset) + ", {";
    for (auto [i, s] : llvm::enumerate(batch))
      text += (i ? ", " : "") + std::to_string(s);
    text += "}, " + std::to_string(strides[rank - 2]) + ", " +
            std::to_string(strides[rank - 1]) + "}";
    return text;
  };
  std::string pa, pb;
  FailureOr<std::string> va = view(matmul.getLhs(), pa);
  FailureOr<std::string> vb = view(matmul.getRhs(), pb);
  if (failed(va) || failed(vb))
    return failure();
  std::string type = e.cTypeOf(result);
  // CUDA: a leading bias add, with the ReLU or tanh GELU after it, is
  // cuBLASLt's epilogue; the rest of the epilogue reads its result.
  std::string epilogueArg;
  std::optional<unsigned> auxOutput;
  if (e.cuda()) {
    size_t fused = matchLtEpilogue(result, epilogue, epilogueArg, auxOutput);
    if (fused > 0) {
      result = epilogue[fused - 1]->getResult(0);
      epilogue.erase(epilogue.begin(), epilogue.begin() + fused);
    }
  }
  // Where the product goes: its own output, an output of its type (not the
  // epilogue's aux), or a scratch buffer.
  std::string target;
  if (auto it = outputOf.find(result); it != outputOf.end()) {
    target = "out" + std::to_string(it->second);
  } else {
    for (auto &[v, number] : outputOf)
      if (v.getType() == result.getType() && number != auxOutput &&
          (target.empty() || number < unsigned(std::stoi(target.substr(3)))))
        target = "out" + std::to_string(number);
  }
  if (target.empty() && e.cuda()) {
    // A device buffer of the launcher's own (outside the arena), which the
    // epilogue kernel takes as one more parameter.
    os << "  static " << type << " *const product = static_cast<" << type
       << " *>(dtcg::deviceScratch(" << numel(sy) << " * sizeof(" << type
       << ")));\n";
    params += ", " + type + " *__restrict product";
    args += ", product";
    target = "product";
  } else if (target.empty()) {
    os << "  std::vector<" << type << "> product(" << numel(sy) << ");\n";
    target = "product.data()";
  }
  StringRef lib = e.cuda() ? "dtcg" : "dtck";
  os << "  static constexpr " << lib << "::MatrixView va = " << *va << ";\n";
  os << "  static constexpr " << lib << "::MatrixView vb = " << *vb << ";\n";
  // The product's shape in the body, not among the program's shared
  // declarations: the kernel may be built in a file of its own.
  os << "  static constexpr dtck::Shape productShape"
     << KernelEmitter::shapeInitializer(sy) << ";\n";
  os << "  " << lib << "::matmulView(productShape, "
     << dimsOf(matmul.getLhs()).back() << ", " << pa << ", va, " << pb
     << ", vb, " << target << epilogueArg << ");\n";
  if (epilogue.empty())
    return success();
  preloadedPointer = target;
  return emitLoop(os, epilogue, sy, result);
}

LogicalResult FusionPrinter::emit() {
  if (failed(e.checkTensors(op)))
    return failure();
  for (Operation &inner : op.getBody().front().without_terminator())
    if (failed(e.checkTensors(&inner)))
      return failure();
  std::string name = e.uniqueName("fused");
  // CUDA: kernels carry the first ONNX node's name (profilers show it).
  if (e.cuda())
    for (Operation &inner : op.getBody().front().without_terminator())
      if (std::string node = dtc::onnxNodeName(inner.getLoc()); !node.empty()) {
        std::string suffix;
        for (char c : node)
          suffix += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
        while (!suffix.empty() && suffix[0] == '_')
          suffix.erase(0, 1);
        if (suffix.size() > 40)
          suffix.resize(40);
        if (!suffix.empty())
          name += "_" + suffix;
        break;
      }
  // The comment (the ONNX nodes it came from), then the function from its
  // parameter list on: a kernel with the same parameters and body is
  // emitted once (KernelEmitter::defineFunction).
  std::string comment, text;
  llvm::raw_string_ostream commentOs(comment), os(text);
  llvm::SetVector<std::string, std::vector<std::string>, std::set<std::string>>
      nodes;
  for (Operation &inner : op.getBody().front().without_terminator())
    if (!isa<dtg::ConstantOp>(inner))
      if (std::string node = dtc::onnxNodeName(inner.getLoc()); !node.empty())
        nodes.insert(node);
  commentOs << "// " << op.getKind() << " kernel";
  if (!nodes.empty()) {
    commentOs << " of";
    for (auto [i, node] : llvm::enumerate(nodes)) {
      if (i == 8) {
        commentOs << " and " << nodes.size() - 8 << " more";
        break;
      }
      commentOs << (i ? ", " : " ") << node;
    }
  }
  commentOs << "\n";
  SmallVector<std::string> params, args;
  // An output the memory plan may place over an input (memory::mayWriteOver)
  // shares its storage: neither pointer of such a pair is __restrict.
  llvm::SmallDenseSet<unsigned> sharedIn, sharedOut;
  for (unsigned r = 0; r < op->getNumResults(); ++r)
    for (unsigned k = 0; k < op->getNumOperands(); ++k)
      if (mlir::dtc::memory::mayWriteOver(op, r, k)) {
        sharedIn.insert(k);
        sharedOut.insert(r);
      }
  for (auto [i, v] : llvm::enumerate(op.getInputs())) {
    params.push_back("const " + e.cTypeOf(v) +
                     (sharedIn.contains(i) ? " *in" : " *__restrict in") +
                     std::to_string(i));
    args.push_back(e.buffer(v));
  }
  for (auto [i, v] : llvm::enumerate(op.getResults())) {
    params.push_back(e.cTypeOf(v) +
                     (sharedOut.contains(i) ? " *out" : " *__restrict out") +
                     std::to_string(i));
    args.push_back(e.buffer(v));
  }
  this->params = llvm::join(params, ", ");
  for (auto [i, v] : llvm::enumerate(op.getInputs()))
    this->args += (i ? ", in" : "in") + std::to_string(i);
  for (unsigned i = 0; i < op->getNumResults(); ++i)
    this->args += ", out" + std::to_string(i);
  if (e.cuda()) {
    // Kernels and launcher: "@NAME@_<k>" kernels, then the launcher's
    // parameters and body after "@HOST@" (KernelEmitter::defineFunction).
    os << "@HOST@";
  }
  os << "(" << llvm::join(params, ", ") << ") {\n";
  if (e.cuda()) {
    // Every value the kernels index: the operands, results and each
    // iteration space (a reduction's input may be larger than them all).
    constexpr int64_t kFits = (int64_t(1) << 31) - 2 * 132 * 16 * 256;
    auto fits = [&](Value v) {
      auto type = dyn_cast<RankedTensorType>(v.getType());
      return !type || numel(type.getShape()) < kFits;
    };
    bool small = llvm::all_of(op->getOperands(), fits) &&
                 llvm::all_of(op->getResults(), fits);
    for (Operation &inner : op.getBody().front().without_terminator())
      small = small && llvm::all_of(inner.getResults(), fits);
    if (small)
      idx = "int";
  }
  {
    llvm::raw_string_ostream constantsOs(constantsText);
    if (failed(prepare(e.cuda() ? constantsOs : os)))
      return failure();
  }
  if (!e.cuda() && failed(planTables(os)))
    return failure();
  StringRef kind = op.getKind();
  LogicalResult status = failure();
  if (kind == "loop") {
    SmallVector<Operation *> ops;
    for (Operation &inner : body->without_terminator())
      if (!isa<dtg::ConstantOp>(inner) && !dtg::isFusibleView(&inner))
        ops.push_back(&inner);
    if (ops.empty())
      return op.emitError("a loop kernel computes nothing");
    ArrayRef<int64_t> space = dimsOf(ops.back()->getResult(0));
    for (Operation *inner : ops)
      if (dimsOf(inner->getResult(0)) != space)
        return inner->emitError("the ops of a loop kernel must share their "
                                "result shape");
    status = emitLoop(os, ops, space, Value());
  } else if (kind == "reduction") {
    status = emitReduction(os);
  } else if (kind == "gemm") {
    status = emitGemm(os);
  } else {
    return op.emitError("the CPU target has no kernel of kind '")
           << kind << "'";
  }
  if (failed(status))
    return failure();
  os << "}\n\n";
  if (e.cuda())
    text = kernelsText + text;
  std::string callee = e.defineFunction(name, comment, text);
  e.statement(callee + "(" + llvm::join(args, ", ") + ");");
  return success();
}

void mlir::dtc::cpu::registerFusionEmitters(EmitRegistry &registry) {
  registry.add<dtg::FusionOp>([](Operation *op, KernelEmitter &e) {
    return FusionPrinter(cast<dtg::FusionOp>(op), e).emit();
  });
}
