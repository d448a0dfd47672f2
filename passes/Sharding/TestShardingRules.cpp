//===- TestShardingRules.cpp - every dtg op has a sharding rule -----------===//

#include "passes/Sharding/Passes.h"

#include "passes/Sharding/ShardingRules.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::dtc {
#define GEN_PASS_DEF_TESTSHARDINGRULESPASS
#include "passes/Sharding/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;
using namespace mlir::dtc::sharding;

namespace {
/// Factor f's name: a, b, ..., z, f26, f27, ...
std::string letter(int64_t f) {
  return f < 26 ? std::string(1, char('a' + f)) : "f" + std::to_string(f);
}

std::string printRule(const ShardingRule &rule) {
  std::string s = "[";
  for (auto [f, factor] : llvm::enumerate(rule.factors))
    s += (f ? ", " : "") + letter(int64_t(f)) + ":" +
         (factor.kind == FactorKind::Parallel    ? "p"
          : factor.kind == FactorKind::Reduction ? "r"
                                                 : "b") +
         std::to_string(factor.size);
  s += "] ";
  auto list = [](ArrayRef<SmallVector<int64_t>> values) {
    std::string t;
    for (auto [i, dims] : llvm::enumerate(values)) {
      t += (i ? ", (" : "(");
      for (auto [d, f] : llvm::enumerate(dims))
        t += (d ? ", " : "") + (f < 0 ? std::string("-") : letter(f));
      t += ")";
    }
    return t;
  };
  return s + list(rule.operands) + " -> " + list(rule.results);
}

struct TestShardingRulesPass
    : public dtc::impl::TestShardingRulesPassBase<TestShardingRulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool missing = false;
    for (RegisteredOperationName name :
         getContext().getRegisteredOperations()) {
      if (name.getDialectNamespace() != "dtg")
        continue;
      if (!getShardingRuleRegistry().lookup(name.getTypeID())) {
        module.emitError("no sharding rule for '")
            << name.getStringRef() << "'";
        missing = true;
      }
    }
    if (missing)
      return signalPassFailure();
    WalkResult walk = module.walk([&](Operation *op) {
      if (!op->getDialect() || op->getDialect()->getNamespace() != "dtg")
        return WalkResult::advance();
      FailureOr<ShardingRule> rule =
          (*getShardingRuleRegistry().lookup(op))(op);
      if (failed(rule))
        return WalkResult::interrupt();
      op->setAttr("dtc.sharding_rule",
                  StringAttr::get(&getContext(), printRule(*rule)));
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
