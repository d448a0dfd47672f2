//===- EmitFusionScalar.cpp - scalar expressions and 16-bit tables --------===//
//
// The dtck::scalar call computing each elementwise op of a fused kernel, and
// on the CPU the tables of chains of ops that are a function of one 16-bit
// float and hold a costly op (erf, exp, tanh...): such a chain is read from
// a table of its 65536 values (dtck::Table16, built once), the same bits as
// computing it, a gather instead of the chain.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CPU/FusionPrinter.h"

#include "mlir/IR/TypeUtilities.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::dtc::cpu;
using namespace mlir::dtc::cpu::fusion;

FailureOr<std::string>
mlir::dtc::cpu::fusion::scalarCall(Operation *op, ArrayRef<std::string> args,
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

namespace {

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
} // namespace

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
  // Ops no longer computed: those whose values only tables read. (A leaf
  // the kernel computes, `bias + x` copied in, is read by its lookups,
  // which need not be its users.)
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
    need = need || llvm::any_of(lookups, [&](const auto &entry) {
             return entry.second.leaf == v && needed.contains(entry.first);
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
