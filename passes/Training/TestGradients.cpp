//===- TestGradients.cpp - gradient rules against finite differences -----===//

#include "passes/Training/Passes.h"

#include "dialects/DTG/IR/DTGOps.h"
#include "dialects/DTG/Interp/Interpreter.h"
#include "passes/Training/Autodiff.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/Format.h"

#include <cmath>
#include <cstdio>

#define DEBUG_TYPE "dtc-test-gradients"

namespace mlir::dtc {
#define GEN_PASS_DEF_TESTGRADIENTSPASS
#include "passes/Training/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;
using dtg::interp::Tensor;

namespace {
/// A small deterministic generator of uniform doubles.
class Random {
public:
  explicit Random(uint64_t seed) : state(seed * 2654435761u + 1) {}
  double uniform(double lo, double hi) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return lo + (hi - lo) * double(state >> 11) / double(uint64_t(1) << 53);
  }

private:
  uint64_t state;
};

/// Clones `func` into `scratch` returning L = sum_k sum(r_k * y_k) over its
/// float results, and, with `withGradients`, the gradients of L with respect
/// to every float argument after it.
FailureOr<func::FuncOp> buildChecked(func::FuncOp func, ModuleOp scratch,
                                     bool withGradients) {
  func::FuncOp clone = func.clone();
  scratch.push_back(clone);
  Block &body = clone.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  OpBuilder builder(ret);
  Location loc = func.getLoc();
  GradientBuilder b(builder, loc);
  Random random(7);
  Value loss;
  for (Value y : ret.getOperands()) {
    auto type = cast<RankedTensorType>(y.getType());
    if (!isa<FloatType>(type.getElementType()))
      continue;
    Tensor r = Tensor::zeros(type.getElementType(), type.getShape());
    for (int64_t k = 0; k < r.numElements(); ++k)
      r.set(k, random.uniform(-1, 1));
    Value rv =
        builder.create<dtg::ConstantOp>(loc, dtg::interp::tensorToAttr(r));
    Value prod = b.create<dtg::MulOp>(y, rv);
    SmallVector<int64_t> axes =
        llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
    Value sum = b.create<dtg::ReduceSumOp>(
        prod, builder.getDenseI64ArrayAttr(axes), builder.getBoolAttr(false));
    loss = loss ? b.create<dtg::AddOp>(loss, sum) : sum;
  }
  if (!loss)
    return func.emitError("has no float result to differentiate");
  SmallVector<Value> results{loss};
  if (withGradients) {
    SmallVector<Value> wrt;
    for (BlockArgument arg : body.getArguments())
      if (isDifferentiable(arg.getType()))
        wrt.push_back(arg);
    FailureOr<SmallVector<Value>> grads = buildGradients(clone, loss, {}, wrt);
    if (failed(grads))
      return failure();
    llvm::append_range(results, *grads);
  }
  builder.create<func::ReturnOp>(loc, results);
  ret.erase();
  clone.setFunctionType(FunctionType::get(func.getContext(),
                                          clone.getArgumentTypes(),
                                          ValueRange(results).getTypes()));
  return clone;
}

struct TestGradientsPass
    : public dtc::impl::TestGradientsPassBase<TestGradientsPass> {
  using TestGradientsPassBase::TestGradientsPassBase;

  LogicalResult check(func::FuncOp func) {
    // Inputs.
    SmallVector<Tensor> args;
    Random random(11);
    for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
      auto type = cast<RankedTensorType>(arg.getType());
      if (auto value =
              func.getArgAttrOfType<ElementsAttr>(i, "dtc.test_value")) {
        FailureOr<Tensor> t = dtg::interp::tensorFromAttr(value);
        if (failed(t) || t->getType() != type)
          return func.emitError("dtc.test_value of argument #")
                 << i << " does not match its type";
        args.push_back(std::move(*t));
        continue;
      }
      if (!isa<FloatType>(type.getElementType()))
        return func.emitError("integer argument #")
               << i << " needs a dtc.test_value attribute";
      double lo = -1, hi = 1;
      if (auto range = func.getArgAttrOfType<ArrayAttr>(i, "dtc.test_range")) {
        if (range.size() != 2 || !isa<FloatAttr>(range[0]) ||
            !isa<FloatAttr>(range[1]))
          return func.emitError("dtc.test_range must be [lo, hi] floats");
        lo = cast<FloatAttr>(range[0]).getValueAsDouble();
        hi = cast<FloatAttr>(range[1]).getValueAsDouble();
      }
      Tensor t = Tensor::zeros(type.getElementType(), type.getShape());
      for (int64_t k = 0; k < t.numElements(); ++k)
        t.set(k, random.uniform(lo, hi));
      args.push_back(std::move(t));
    }

    OwningOpRef<ModuleOp> scratch = ModuleOp::create(func.getLoc());
    FailureOr<func::FuncOp> lossFn = buildChecked(func, *scratch, false);
    if (failed(lossFn))
      return failure();
    FailureOr<func::FuncOp> gradFn = buildChecked(func, *scratch, true);
    if (failed(gradFn))
      return failure();
    FailureOr<SmallVector<Tensor>> analytic =
        dtg::interp::interpretFunction(*gradFn, args);
    if (failed(analytic))
      return failure();

    unsigned g = 1;
    double worst = 0;
    for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
      if (!isDifferentiable(arg.getType()))
        continue;
      const Tensor &grad = (*analytic)[g++];
      for (int64_t k = 0; k < args[i].numElements(); ++k) {
        double saved = args[i].f[k];
        args[i].f[k] = saved + step;
        FailureOr<SmallVector<Tensor>> plus =
            dtg::interp::interpretFunction(*lossFn, args);
        args[i].f[k] = saved - step;
        FailureOr<SmallVector<Tensor>> minus =
            dtg::interp::interpretFunction(*lossFn, args);
        args[i].f[k] = saved;
        if (failed(plus) || failed(minus))
          return failure();
        double numeric = ((*plus)[0].f[0] - (*minus)[0].f[0]) / (2 * step);
        double error =
            std::fabs(grad.f[k] - numeric) / std::max(1.0, std::fabs(numeric));
        worst = std::max(worst, error);
        if (!(error <= tolerance))
          return func.emitError("gradient of argument #")
                 << i << " element " << k << " is " << grad.f[k]
                 << ", finite differences give " << numeric;
      }
    }
    char text[32];
    std::snprintf(text, sizeof(text), "%.1e", worst);
    func.emitRemark("gradients match (largest error ") << text << ")";
    return success();
  }

  void runOnOperation() override {
    SmallVector<func::FuncOp> funcs(getOperation().getOps<func::FuncOp>());
    for (func::FuncOp func : funcs)
      if (failed(check(func)))
        signalPassFailure();
  }
};
} // namespace
