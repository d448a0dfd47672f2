//===- Passes.td - graph clean-up passes ------------------------*- tablegen -*-===//

#ifndef DTC_PASSES_CLEANUP_PASSES_TD
#define DTC_PASSES_CLEANUP_PASSES_TD

include "mlir/Pass/PassBase.td"

def FoldConstantsPass : Pass<"dtc-fold-constants", "func::FuncOp"> {
  let summary = "Evaluates dtg ops whose operands are all constants.";
  let description = [{
    Runs each op whose operands are all `dtg.constant` through the reference
    interpreter and replaces it with a `dtg.constant` of the result, so folding
    has exactly the semantics the op executes with. Results larger than
    `max-elements` are left alone (folding would only grow the program), and
    so is `dtg.dropout` (its mask belongs to the step).

    Before:
    ```mlir
    %a = dtg.constant dense<[1, 2]> : tensor<2xi64>
    %b = dtg.constant dense<3> : tensor<i64>
    %c = dtg.mul %a, %b : tensor<2xi64>, tensor<i64> -> tensor<2xi64>
    ```
    After:
    ```mlir
    %c = dtg.constant dense<[3, 6]> : tensor<2xi64>
    ```
  }];
  let options = [
    Option<"maxElements", "max-elements", "int64_t", /*default=*/"1 << 20",
           "Largest result (in elements) that is folded">,
  ];
  let dependentDialects = ["::mlir::dtg::DTGDialect"];
}

def RecognizeIdiomsPass : Pass<"dtc-recognize-idioms", "func::FuncOp"> {
  let summary = "Rebuilds gelu and layer_norm from the arithmetic PyTorch exports.";
  let description = [{
    PyTorch exports GELU as Erf (or Tanh) arithmetic and, below opset 17,
    LayerNorm as ReduceMean/Sub/Pow/Sqrt/Div/Mul/Add. This pass matches those
    patterns (in any operand order of the commutative ops, with constants
    within 1e-6 relative) and replaces them with `dtg.gelu` and
    `dtg.layer_norm`.

    Before:
    ```mlir
    %s = dtg.div %x, %sqrt2 ...
    %e = dtg.erf %s ...
    %p = dtg.add %e, %one ...
    %m = dtg.mul %x, %p ...
    %y = dtg.mul %m, %half ...
    ```
    After:
    ```mlir
    %y = dtg.gelu %x {approximate = false} : tensor<4x8xf32>
    ```
  }];
  let dependentDialects = ["::mlir::dtg::DTGDialect"];
}

#endif // DTC_PASSES_CLEANUP_PASSES_TD
