//===- DistPipeline.td - pipeline stages ------------------------*- tablegen -*-===//

#ifndef DTC_DIALECTS_DIST_IR_DISTPIPELINE_TD
#define DTC_DIALECTS_DIST_IR_DISTPIPELINE_TD

include "dialects/Dist/IR/DistBase.td"

def Dist_StageOp : Dist_Op<"stage", [IsolatedFromAbove, SingleBlock,
                                     RecursiveMemoryEffects]> {
  let summary = "One pipeline stage's part of the program, run by that stage's ranks.";
  let description = [{
    The body computes the stage's results from its inputs, which arrive as
    the block arguments: values defined outside live on other ranks, so the
    body captures nothing (it is isolated from above) and every value that
    crosses a stage boundary is an operand or a result, where the pipeline
    pass puts its `dist.send` / `dist.recv`. Stage `index` runs on the ranks
    whose pipeline coordinate is `index mod pp` (with V virtual stages per
    rank under the interleaved schedule, indices go up to V * pp - 1).

    ```mlir
    %h = dist.stage 0 ins(%x, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> {
    ^bb0(%a: tensor<4x8xf32>, %b: tensor<8x8xf32>):
      %y = dtg.matmul %a, %b : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
      dist.yield %y : tensor<4x8xf32>
    }
    ```

    Constraints:
    - `index` is non-negative;
    - the body's arguments match the inputs in number and type, and it ends
      in a `dist.yield` of the result types;
    - stages do not nest.
  }];
  let arguments = (ins I64Attr:$index, Variadic<AnyType>:$inputs);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $index (`ins` `(` $inputs^ `)`)? attr-dict `:` functional-type($inputs, $results)
      $body
  }];
  let hasVerifier = 1;
}

def Dist_YieldOp : Dist_Op<"yield", [Pure, Terminator, HasParent<"StageOp">]> {
  let summary = "Ends a `dist.stage` body and gives the stage's results.";
  let description = [{
    ```mlir
    dist.yield %y, %z : tensor<4x8xf32>, tensor<8xf32>
    ```

    Constraints:
    - the operand types are the enclosing stage's result types.
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
  let hasVerifier = 1;
}

#endif // DTC_DIALECTS_DIST_IR_DISTPIPELINE_TD
