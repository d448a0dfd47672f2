//===- DistOps.td - dist ops ------------------------------------*- tablegen -*-===//
//
// The mesh declaration and sharding annotations; the collectives and pipeline
// ops live in their own files.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_DIALECTS_DIST_IR_DISTOPS_TD
#define DTC_DIALECTS_DIST_IR_DISTOPS_TD

include "dialects/Dist/IR/DistBase.td"
include "dialects/Dist/IR/DistAttrs.td"
include "dialects/Dist/IR/DistTypes.td"
include "mlir/IR/SymbolInterfaces.td"

def Dist_MeshOp : Dist_Op<"mesh", [Symbol]> {
  let summary = "Declares a named device mesh that shardings and collectives refer to.";
  let description = [{
    A symbol (usually at module level) holding a `#dist.mesh`; see that
    attribute for the axis order.

    ```mlir
    dist.mesh @mesh = <["pp" = 2, "dp" = 8, "tp" = 4]>
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, Dist_MeshAttr:$mesh);
  let assemblyFormat = "$sym_name `=` $mesh attr-dict";
}

// The op descriptions paste `}] # "}]" # [{` where a sharding's dimension list
// closes: a TableGen code block ends at the first `}]`.
class Dist_ShardingAnnotationOp<string mnemonic>
    : Dist_Op<mnemonic, [Pure, SameOperandsAndResultType,
                         DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let arguments = (ins Dist_Tensor:$input, Dist_ShardingAttr:$sharding);
  let results = (outs Dist_Tensor:$result);
  let assemblyFormat = "$input $sharding attr-dict `:` type($result)";
}

def Dist_ShardingConstraintOp
    : Dist_ShardingAnnotationOp<"sharding_constraint"> {
  let summary = "Pins the sharding of a value; sharding propagation must respect it.";
  let description = [{
    The result is the operand (the op computes nothing); propagation treats
    the sharding as fixed at this point and spreads it to producers and
    users. It comes from the plan or from the user (`--shard NAME=AXES`).
    Shapes are global (before partitioning).

    ```mlir
    %y = dist.sharding_constraint %x <@mesh, [{"dp"}, {"tp"}] # "}]" # [{> : tensor<16x64xf32>
    ```

    Constraints:
    - the sharding's mesh is a `dist.mesh`, every axis is one of its axes;
    - one sharding entry per operand dimension, each dimension divisible by
      the product of its axes' sizes.
  }];
}

def Dist_ReshardOp : Dist_ShardingAnnotationOp<"reshard"> {
  let summary = "Moves a value to another sharding: an explicit communication point.";
  let description = [{
    The result holds the operand's value with the given sharding, whatever
    the operand's own sharding is; propagation inserts reshards where a
    producer's sharding and a user's disagree, and partitioning turns each
    into collectives. Shapes are global (before partitioning).

    ```mlir
    %y = dist.reshard %x <@mesh, [{}, {"tp"}] # "}]" # [{> : tensor<16x64xf32>
    ```

    Constraints:
    - as `dist.sharding_constraint`.
  }];
}

include "dialects/Dist/IR/DistCollectives.td"
include "dialects/Dist/IR/DistPipeline.td"

#endif // DTC_DIALECTS_DIST_IR_DISTOPS_TD
