//===- Passes.td - training-step construction passes ------------*- tablegen -*-===//

#ifndef DTC_PASSES_TRAINING_PASSES_TD
#define DTC_PASSES_TRAINING_PASSES_TD

include "mlir/Pass/PassBase.td"

def TestGradientsPass : Pass<"dtc-test-gradients", "ModuleOp"> {
  let summary = "Checks every gradient rule against central finite differences.";
  let description = [{
    For each function of the module, differentiates `L = sum(r * f(x))` (with a
    fixed pseudo-random cotangent `r`) with respect to every float argument,
    runs the gradient through the reference interpreter on pseudo-random
    inputs, and compares each element with the central difference
    `(L(x + h) - L(x - h)) / 2h`. It emits a remark `gradients match` per
    function, or an error naming the argument and element that differ.

    Float arguments are drawn uniformly from [-1, 1], or from the range given
    by the argument attribute `dtc.test_range = [lo, hi]` (for log, sqrt).
    Integer arguments (indices, labels) take their value from the argument
    attribute `dtc.test_value = dense<...>`. Write tests in f64 so the
    differences are accurate; the functions are left unchanged.

    ```mlir
    // expected-remark @+1 {{gradients match}}
    func.func @exp(%x: tensor<3xf64>) -> tensor<3xf64> {
      %y = dtg.exp %x : tensor<3xf64>
      return %y : tensor<3xf64>
    }
    ```
  }];
  let options = [
    Option<"step", "step", "double", /*default=*/"1e-6",
           "Finite-difference step h">,
    Option<"tolerance", "tolerance", "double", /*default=*/"1e-5",
           "Largest accepted |analytic - numeric| / max(1, |numeric|)">,
  ];
  let dependentDialects = ["::mlir::dtg::DTGDialect"];
}

#endif // DTC_PASSES_TRAINING_PASSES_TD
