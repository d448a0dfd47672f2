//===- DTGFusion.td - fused kernels as regions -----------------*- tablegen -*-===//
//
// dtg.fusion holds a group of dtg ops that a target emits as one kernel
// (passes/Fusion forms them). Its region is its semantics: the reference
// interpreter runs the region.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_DIALECTS_DTG_IR_DTGFUSION_TD
#define DTC_DIALECTS_DTG_IR_DTGFUSION_TD

include "dialects/DTG/IR/DTGBase.td"

def DTG_FusionOp : DTG_Op<"fusion", [IsolatedFromAbove]> {
  let summary = "A group of ops emitted as one kernel.";
  let description = [{
    The operands are the kernel's inputs and the results its outputs. The one
    block's arguments stand for the operands; its ops compute the results,
    which `dtg.yield` returns. `kind` says how a target emits the group:

    - `loop`: elementwise ops (with broadcasting) over one iteration shape,
      the shape of every result; `transpose`, `slice` and `reshape` of block
      arguments are strided views of the inputs;
    - `reduction`: an elementwise prologue over the reductions' common input
      shape, one or more `reduce_sum` / `reduce_mean` / `reduce_max` /
      `reduce_min` over the same axes, and an elementwise epilogue over the
      reduced shape;
    - `gemm`: one `matmul` (its operands possibly views of block arguments)
      and an elementwise epilogue over its result.

    ```mlir
    %y = dtg.fusion "loop" (%x, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
    ^bb0(%a: tensor<4x8xf32>, %c: tensor<8xf32>):
      %s = dtg.add %a, %c : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
      %r = dtg.relu %s : tensor<4x8xf32>
      dtg.yield %r : tensor<4x8xf32>
    }
    ```

    Constraints:
    - `kind` is `loop`, `reduction` or `gemm`;
    - the block's argument types are the operand types, and the yielded
      types the result types;
    - the body holds only side-effect-free dtg ops without regions that the
      kind allows (a `reduction` holds at least one reduction, a `gemm`
      exactly one `matmul`).
  }];
  let arguments = (ins StrAttr:$kind, Variadic<DTG_Tensor>:$inputs);
  let results = (outs Variadic<DTG_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $kind `(` $inputs `)` attr-dict `:` functional-type($inputs, $results) $body
  }];
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "TypeRange":$resultTypes, "StringRef":$kind,
                   "ValueRange":$inputs)>
  ];
}

def DTG_YieldOp : DTG_Op<"yield", [Terminator, HasParent<"FusionOp">]> {
  let summary = "Returns the results of a dtg.fusion body.";
  let description = [{
    ```mlir
    dtg.yield %r, %s : tensor<4x8xf32>, tensor<4xf32>
    ```
  }];
  let arguments = (ins Variadic<DTG_Tensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

#endif // DTC_DIALECTS_DTG_IR_DTGFUSION_TD
