//===- RulesNN.cpp - sharding rules of contractions, convolutions, norms --===//

#include "passes/Sharding/ShardingRules.h"

#include "dialects/DTG/IR/DTGOps.h"

using namespace mlir;
using namespace mlir::dtc::sharding;
using namespace mlir::dtg;

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// Batched matmul [..., M, K] x [..., K, N] -> [..., M, N] with broadcast
/// batch dimensions (1-D operands as NumPy promotes them): batch, M and N
/// parallel, K a reduction (Megatron's row-parallel split leaves partial
/// sums).
static FailureOr<ShardingRule> matmulRule(Operation *op) {
  ArrayRef<int64_t> a = shapeOf(op->getOperand(0)),
                    b = shapeOf(op->getOperand(1)),
                    c = shapeOf(op->getResult(0));
  if (a.empty() || b.empty())
    return op->emitError("matmul of a scalar");
  ShardingRule rule;
  int64_t k = rule.addFactor(a.back(), FactorKind::Reduction);
  SmallVector<int64_t> ra(a.size(), -1), rb(b.size(), -1), rc(c.size(), -1);
  ra.back() = k;
  // (The 1-D cases: a vector lhs has no M, a vector rhs no N.)
  int64_t batchRank =
      int64_t(c.size()) - (a.size() > 1 ? 1 : 0) - (b.size() > 1 ? 1 : 0);
  if (a.size() > 1) {
    int64_t m = rule.addFactor(a[a.size() - 2], FactorKind::Parallel);
    ra[a.size() - 2] = m;
    rc[batchRank] = m;
  }
  if (b.size() > 1) {
    rb[b.size() - 2] = k;
    int64_t n = rule.addFactor(b.back(), FactorKind::Parallel);
    rb.back() = n;
    rc.back() = n;
  } else {
    rb[0] = k;
  }
  for (int64_t d = 0; d < batchRank; ++d) {
    int64_t f = rule.addFactor(c[d], FactorKind::Parallel);
    rc[d] = f;
    // Right-aligned batch dimensions of each operand, where not broadcast.
    int64_t da = d - (batchRank - (int64_t(a.size()) - 2));
    int64_t db = d - (batchRank - (int64_t(b.size()) - 2));
    if (a.size() > 2 && da >= 0 && a[da] == c[d])
      ra[da] = f;
    if (b.size() > 2 && db >= 0 && b[db] == c[d])
      rb[db] = f;
  }
  rule.operands = {ra, rb};
  rule.results = {rc};
  return rule;
}

/// gemm: op(A) [M, K] x op(B) [K, N] (+ C broadcast to [M, N]). (A split
/// K leaves partial sums; partitioning divides beta by the split, so that
/// the bias is added once in their sum.) Factors: M, N, K in that order.
static FailureOr<ShardingRule> gemmRule(Operation *op) {
  auto gemm = cast<GemmOp>(op);
  ArrayRef<int64_t> c = shapeOf(gemm.getResult());
  ShardingRule rule;
  int64_t m = rule.addFactor(c[0], FactorKind::Parallel);
  int64_t n = rule.addFactor(c[1], FactorKind::Parallel);
  int64_t kSize = shapeOf(gemm.getA())[gemm.getTransA() ? 0 : 1];
  int64_t k = rule.addFactor(kSize, FactorKind::Reduction);
  SmallVector<int64_t> a = gemm.getTransA() ? SmallVector<int64_t>{k, m}
                                            : SmallVector<int64_t>{m, k};
  SmallVector<int64_t> b = gemm.getTransB() ? SmallVector<int64_t>{n, k}
                                            : SmallVector<int64_t>{k, n};
  rule.operands = {a, b};
  if (Value bias = gemm.getC()) {
    ArrayRef<int64_t> s = shapeOf(bias);
    SmallVector<int64_t> dims(s.size(), -1);
    SmallVector<int64_t> out = {m, n};
    for (int64_t d = 0; d < int64_t(s.size()); ++d) {
      int64_t r = d + 2 - int64_t(s.size());
      if (r >= 0 && s[d] == c[r])
        dims[d] = out[r];
    }
    rule.operands.push_back(dims);
  }
  rule.results = {{m, n}};
  return rule;
}

/// einsum: a letter in the output is parallel, one summed over a reduction.
static FailureOr<ShardingRule> einsumRule(Operation *op) {
  auto equation = op->getAttrOfType<StringAttr>("equation");
  if (!equation)
    return op->emitError("einsum without an equation");
  auto [lhs, out] = equation.getValue().split("->");
  SmallVector<StringRef> terms;
  lhs.split(terms, ',');
  if (terms.size() != op->getNumOperands())
    return op->emitError("einsum terms do not match its operands");
  ShardingRule rule;
  llvm::DenseMap<char, int64_t> factorOf;
  auto factor = [&](char letter, int64_t size) {
    auto it = factorOf.find(letter);
    if (it != factorOf.end())
      return it->second;
    int64_t f =
        rule.addFactor(size, out.contains(letter) ? FactorKind::Parallel
                                                  : FactorKind::Reduction);
    factorOf[letter] = f;
    return f;
  };
  for (auto [term, v] : llvm::zip(terms, op->getOperands())) {
    ArrayRef<int64_t> s = shapeOf(v);
    if (term.size() != s.size())
      return op->emitError("einsum term '")
             << term << "' does not match " << v.getType();
    SmallVector<int64_t> dims;
    for (auto [c, size] : llvm::zip(term, s))
      dims.push_back(factor(c, size));
    rule.operands.push_back(dims);
  }
  ArrayRef<int64_t> r = shapeOf(op->getResult(0));
  SmallVector<int64_t> dims;
  for (auto [c, size] : llvm::zip(out, r))
    dims.push_back(factor(c, size));
  rule.results.push_back(dims);
  return rule;
}

/// Convolution-shaped ops over [N, C, spatial...] tensors: `layout` names,
/// per operand and result, which of N (batch), I (input channels), O
/// (output channels) each leading dimension is ('-' for none); trailing
/// dimensions are spatial or kernel ones, blocked. I is a reduction where
/// no result has it.
static ShardingRule channelsRule(Operation *op, ArrayRef<StringRef> layouts) {
  ShardingRule rule;
  llvm::DenseMap<char, int64_t> factorOf;
  std::string results;
  for (unsigned r = 0; r < op->getNumResults(); ++r)
    results += layouts[op->getNumOperands() + r].str();
  auto dims = [&](Value v, StringRef layout) {
    ArrayRef<int64_t> s = shapeOf(v);
    SmallVector<int64_t> out;
    for (int64_t d = 0; d < int64_t(s.size()); ++d) {
      char c = d < int64_t(layout.size()) ? layout[d] : '-';
      if (c == '-') {
        out.push_back(rule.addFactor(s[d], FactorKind::Blocked));
        continue;
      }
      auto it = factorOf.find(c);
      if (it == factorOf.end())
        it = factorOf
                 .insert({c, rule.addFactor(s[d],
                                            results.find(c) != std::string::npos
                                                ? FactorKind::Parallel
                                                : FactorKind::Reduction)})
                 .first;
      out.push_back(it->second);
    }
    return out;
  };
  unsigned i = 0;
  for (Value v : op->getOperands())
    rule.operands.push_back(dims(v, layouts[i++]));
  for (Value v : op->getResults())
    rule.results.push_back(dims(v, layouts[i++]));
  return rule;
}

void mlir::dtc::sharding::registerNNShardingRules(
    ShardingRuleRegistry &registry) {
  registry.add<MatMulOp>(matmulRule);
  registry.add<GemmOp>(gemmRule);
  registry.add<EinsumOp>(einsumRule);
  // conv(input [N, I, ...], weight [O, I/groups, ...], bias [O]) -> [N, O].
  // Grouped convolutions keep their channels whole.
  registry.add<ConvOp>([](Operation *op) -> FailureOr<ShardingRule> {
    if (cast<ConvOp>(op).getGroup() != 1)
      return rules::blocked(op);
    SmallVector<StringRef> layout = {"NI", "OI"};
    if (op->getNumOperands() == 3)
      layout.push_back("O");
    layout.push_back("NO");
    ShardingRule rule = channelsRule(op, layout);
    // With a bias, a split of the input channels would add it on every
    // rank: they stay whole.
    if (op->getNumOperands() == 3)
      rule.factors[rule.operands[0][1]].kind = FactorKind::Blocked;
    return rule;
  });
  // conv_input_grad(grad [N, O], weight [O, I]) -> [N, I];
  // conv_weight_grad(grad [N, O], input [N, I]) -> [O, I] (N summed).
  registry.add<ConvInputGradOp>([](Operation *op) -> FailureOr<ShardingRule> {
    if (auto g = op->getAttrOfType<IntegerAttr>("group"); g && g.getInt() != 1)
      return rules::blocked(op);
    return channelsRule(op, {"NO", "OI", "NI"});
  });
  registry.add<ConvWeightGradOp>([](Operation *op) -> FailureOr<ShardingRule> {
    if (auto g = op->getAttrOfType<IntegerAttr>("group"); g && g.getInt() != 1)
      return rules::blocked(op);
    return channelsRule(op, {"NO", "NI", "OI"});
  });
  // Pooling and its gradients: batch and channels parallel, the window's
  // dimensions whole.
  auto pool = [](Operation *op) -> FailureOr<ShardingRule> {
    SmallVector<StringRef> layout(op->getNumOperands() + op->getNumResults(),
                                  "NC");
    return channelsRule(op, layout);
  };
  registry.add<MaxPoolOp>(pool);
  registry.add<AvgPoolOp>(pool);
  registry.add<MaxPoolGradOp>(pool);
  registry.add<AvgPoolGradOp>(pool);
  // Batch norm: channels parallel (scale, bias, statistics are [C]); with
  // running statistics every other dimension is parallel too; batch
  // statistics need the whole batch and spatial extent (the data-parallel
  // partitioning synchronizes them instead: dtc-build-train-step's
  // sync-batch-norm-dp).
  registry.add<BatchNormInferenceOp>(
      [](Operation *op) -> FailureOr<ShardingRule> {
        return channelsRule(op, {"NC", "C", "C", "C", "C", "NC"});
      });
  registry.add<BatchNormTrainingOp>(
      [](Operation *op) -> FailureOr<ShardingRule> {
        ShardingRule rule =
            channelsRule(op, {"NC", "C", "C", "C", "C", "NC", "C", "C"});
        // N is not in the results' statistics: block it, not sum it.
        for (Factor &f : rule.factors)
          if (f.kind == FactorKind::Reduction)
            f.kind = FactorKind::Blocked;
        int64_t n = rule.operands[0][0];
        rule.factors[n].kind = FactorKind::Blocked;
        return rule;
      });
  // Normalizations and softmax over trailing dimensions or an axis: those
  // stay whole.
  registry.add<LayerNormOp>([](Operation *op) -> FailureOr<ShardingRule> {
    int64_t axis = cast<LayerNormOp>(op).getAxis();
    int64_t rank = int64_t(shapeOf(op->getResult(0)).size());
    SmallVector<int64_t> blocked;
    for (int64_t d = axis; d < rank; ++d)
      blocked.push_back(d);
    return rules::elementwise(op, blocked);
  });
  // Softmax over a split axis reduces its maximum and sum across the
  // blocks (dtc-partition, SplitLowering.h): every dimension may split.
  registry.add<SoftmaxOp>([](Operation *op) -> FailureOr<ShardingRule> {
    return rules::elementwise(op);
  });
  registry.add<LogSoftmaxOp>([](Operation *op) -> FailureOr<ShardingRule> {
    return rules::elementwise(op);
  });
  // Dropout: elementwise (its key is no tensor dimension; partitioning
  // offsets each block's element indices so masks do not change).
  registry.add<DropoutOp>([](Operation *op) -> FailureOr<ShardingRule> {
    ShardingRule rule = rules::elementwise(op);
    rule.operands[1].assign(rule.operands[1].size(), -1);
    return rule;
  });
}
