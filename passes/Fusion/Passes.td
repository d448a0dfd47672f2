//===- Passes.td - kernel fusion --------------------------------*- tablegen -*-===//

#ifndef DTC_PASSES_FUSION_PASSES_TD
#define DTC_PASSES_FUSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def FusePass : Pass<"dtc-fuse", "::mlir::func::FuncOp"> {
  let summary = "Groups elementwise chains, reductions and GEMM epilogues "
                "into dtg.fusion kernels.";
  let description = [{
    First, a sum of two zero pads whose parts lie side by side along one axis
    (each used only there) becomes a concat of the parts, padded if they do
    not fill the axis; a concat of earlier parts is extended. A split's
    gradient (each part's gradient padded to the whole, then summed) is thus
    written once. Then it walks each function's top-level ops from the last
    to the first; an
    elementwise op, a reduction or a matmul not yet in a group starts one,
    which then takes in producers of its operands greedily:

    - `loop`: elementwise ops whose result has the group's iteration shape;
    - `reduction`: a loop group whose shape is a reduction's result takes the
      reduction (same input shape and axes as any other in the group) and,
      before it, elementwise ops over the reduction's input shape;
    - `gemm`: a loop group whose shape is a matmul's result takes the matmul;
    - in every kind, `transpose`, `slice` and `reshape` of the group's inputs
      are copied in as strided views (the original stays for other users),
      and splat constants are copied in.

    A producer joins when every user is in the group, or else when its
    result has a shape the kernel writes (the iteration shape) and every
    outside user comes after the group, which then returns it as an extra
    result. An elementwise op of an input and a value at least 8 times
    smaller (`x - mean`) whose other users come earlier is copied in: the
    kernel computes it again, reading what it reads, and the original stays.

    Reductions over the same elements (input shape and axes) that read a
    tensor in common, neither computed from the other, are siblings: one
    pass computes them all (a batch norm gradient's variance, sum(g) and
    sum(g * centered)). A reduction group takes every sibling that nothing
    outside reads before the kernel, and a reduction joins an epilogue's
    group only if its siblings can join too; else it waits to seed a kernel
    with them. Ops of the forward and of the backward (`dtg.backward`) never
    share a group, and nothing joins across a call, a collective, an op with
    side effects or random keys, or an op of another kind. A group that
    would not save a kernel stays unfused.

    ```mlir
    // before
    %m = dtg.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
    %a = dtg.add %m, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
    %r = dtg.relu %a : tensor<4x16xf32>
    // after
    %r = dtg.fusion "gemm" (%x, %w, %b) : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32> {
    ^bb0(%x0: tensor<4x8xf32>, %w0: tensor<8x16xf32>, %b0: tensor<16xf32>):
      %m0 = dtg.matmul %x0, %w0 : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
      %a0 = dtg.add %m0, %b0 : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
      %r0 = dtg.relu %a0 : tensor<4x16xf32>
      dtg.yield %r0 : tensor<4x16xf32>
    }
    ```
  }];
  let dependentDialects = ["::mlir::dtg::DTGDialect"];
}

#endif // DTC_PASSES_FUSION_PASSES_TD
