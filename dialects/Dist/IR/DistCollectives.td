//===- DistCollectives.td - collectives and point-to-point ------*- tablegen -*-===//
//
// Collectives over groups of mesh axes, their asynchronous forms, and
// point-to-point transfers along one axis. All of them act on per-rank
// (partitioned) tensors: shapes are local.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_DIALECTS_DIST_IR_DISTCOLLECTIVES_TD
#define DTC_DIALECTS_DIST_IR_DISTCOLLECTIVES_TD

include "dialects/Dist/IR/DistBase.td"
include "dialects/Dist/IR/DistAttrs.td"
include "dialects/Dist/IR/DistTypes.td"
include "mlir/IR/SymbolInterfaces.td"

/// The effects of ops that must run in program order on every rank.
defvar Dist_CommEffects =
    MemoryEffects<[MemRead<Dist_CommResource>, MemWrite<Dist_CommResource>]>;

/// A collective over the group of ranks that differ only in `mesh_axes`
/// (their coordinates on every other axis agree); the group size is the
/// product of those axes' sizes.
class Dist_CollectiveOp<string mnemonic, list<Trait> traits = []>
    : Dist_Op<mnemonic, !listconcat(traits, [
          DeclareOpInterfaceMethods<SymbolUserOpInterface>])> {
  dag commonArgs = (ins FlatSymbolRefAttr:$mesh, StrArrayAttr:$mesh_axes);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Synchronous collectives
//===----------------------------------------------------------------------===//

def Dist_AllReduceOp : Dist_CollectiveOp<"all_reduce",
    [Pure, SameOperandsAndResultType]> {
  let summary = "Combines a tensor elementwise across a group; every rank gets the result.";
  let description = [{
    Each rank of the group contributes its operand; each gets the elementwise
    sum, max, min or mean of all of them.

    ```mlir
    %g = dist.all_reduce sum %x on @mesh mesh_axes = ["dp"] : tensor<1024xf32>
    ```

    Constraints:
    - `@mesh` names a `dist.mesh`; `mesh_axes` is non-empty, without repeats,
      and names axes of that mesh;
    - `mean` needs a float element type.
  }];
  let arguments = !con((ins Dist_Tensor:$input, Dist_ReduceKind:$kind),
                       commonArgs);
  let results = (outs Dist_Tensor:$result);
  let assemblyFormat = [{
    $kind $input `on` $mesh `mesh_axes` `=` $mesh_axes attr-dict `:`
      type($result)
  }];
}

def Dist_AllGatherOp : Dist_CollectiveOp<"all_gather", [Pure]> {
  let summary = "Concatenates the group's tensors along one dimension on every rank.";
  let description = [{
    The result is the operands of the group's ranks, in group order (the
    order of the ranks' coordinates on `mesh_axes`, first axis major),
    concatenated along `gather_axis`: that dimension grows by the group size.

    ```mlir
    // tp has size 4.
    %y = dist.all_gather %x on @mesh mesh_axes = ["tp"] gather_axis = 1 : tensor<8x4xf32> -> tensor<8x16xf32>
    ```

    Constraints:
    - as `dist.all_reduce` for `@mesh` and `mesh_axes`;
    - `gather_axis` is in [0, rank); operand and result have the same element
      type and rank;
    - the result shape is the operand's with `gather_axis` multiplied by the
      group size.
  }];
  let arguments = !con((ins Dist_Tensor:$input, I64Attr:$gather_axis),
                       commonArgs);
  let results = (outs Dist_Tensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh `mesh_axes` `=` $mesh_axes `gather_axis` `=`
      $gather_axis attr-dict `:` type($input) `->` type($result)
  }];
}

def Dist_ReduceScatterOp : Dist_CollectiveOp<"reduce_scatter", [Pure]> {
  let summary = "Combines a tensor across a group and leaves each rank one block of it.";
  let description = [{
    The elementwise reduction of the group's operands is cut into
    group-size blocks along `scatter_axis`; rank i of the group (in group
    order, as in `dist.all_gather`) gets block i.

    ```mlir
    // dp has size 8.
    %y = dist.reduce_scatter sum %x on @mesh mesh_axes = ["dp"] scatter_axis = 0 : tensor<1024xf32> -> tensor<128xf32>
    ```

    Constraints:
    - as `dist.all_reduce` for `@mesh`, `mesh_axes` and `kind`;
    - `scatter_axis` is in [0, rank); operand and result have the same
      element type and rank;
    - the group size divides the operand's `scatter_axis` dimension, and the
      result shape is the operand's with that dimension divided by it.
  }];
  let arguments = !con((ins Dist_Tensor:$input, Dist_ReduceKind:$kind,
                            I64Attr:$scatter_axis),
                       commonArgs);
  let results = (outs Dist_Tensor:$result);
  let assemblyFormat = [{
    $kind $input `on` $mesh `mesh_axes` `=` $mesh_axes `scatter_axis` `=`
      $scatter_axis attr-dict `:` type($input) `->` type($result)
  }];
}

def Dist_LocalBlockOp : Dist_CollectiveOp<"local_block", [Pure]> {
  let summary = "Keeps this rank's block of a value every rank of a group holds whole.";
  let description = [{
    No communication: the operand, the same on every rank of the group, is
    cut into group-size blocks along `slice_axis`, and rank i of the group
    (in group order, as in `dist.all_gather`) keeps block i. It is how a
    replicated value meets a sharded one (ZeRO's optimizer update takes its
    shard of the replicated parameter), and the inverse of `dist.all_gather`.

    ```mlir
    // dp has size 8.
    %y = dist.local_block %x on @mesh mesh_axes = ["dp"] slice_axis = 0 : tensor<1024xf32> -> tensor<128xf32>
    ```

    Constraints:
    - as `dist.all_reduce` for `@mesh` and `mesh_axes`;
    - `slice_axis` is in [0, rank); operand and result have the same
      element type and rank;
    - the group size divides the operand's `slice_axis` dimension, and the
      result shape is the operand's with that dimension divided by it.
  }];
  let arguments = !con((ins Dist_Tensor:$input, I64Attr:$slice_axis),
                       commonArgs);
  let results = (outs Dist_Tensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh `mesh_axes` `=` $mesh_axes `slice_axis` `=`
      $slice_axis attr-dict `:` type($input) `->` type($result)
  }];
}

def Dist_AllToAllOp : Dist_CollectiveOp<"all_to_all", [Pure]> {
  let summary = "Sends block i of each rank's tensor to rank i of the group.";
  let description = [{
    Each operand is cut into group-size blocks along `split_axis`; block i
    goes to rank i of the group (group order as in `dist.all_gather`), which
    concatenates the blocks it receives, in group order, along
    `concat_axis`. With `split_axis == concat_axis` the shape is unchanged.

    ```mlir
    // tp has size 4.
    %y = dist.all_to_all %x on @mesh mesh_axes = ["tp"] split_axis = 0 concat_axis = 1 : tensor<8x4xf32> -> tensor<2x16xf32>
    ```

    Constraints:
    - as `dist.all_reduce` for `@mesh` and `mesh_axes`;
    - `split_axis` and `concat_axis` are in [0, rank); operand and result
      have the same element type and rank;
    - the group size divides the `split_axis` dimension; the result shape is
      the operand's with `split_axis` divided and then `concat_axis`
      multiplied by the group size.
  }];
  let arguments = !con((ins Dist_Tensor:$input, I64Attr:$split_axis,
                            I64Attr:$concat_axis),
                       commonArgs);
  let results = (outs Dist_Tensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh `mesh_axes` `=` $mesh_axes `split_axis` `=` $split_axis
      `concat_axis` `=` $concat_axis attr-dict `:` type($input) `->`
      type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Asynchronous collectives
//===----------------------------------------------------------------------===//

def Dist_AllReduceStartOp : Dist_CollectiveOp<"all_reduce_start", [
    Dist_CommEffects,
    TypesMatchWith<"result is a future of the operand type", "input", "result",
                   "::mlir::dist::FutureType::get($_self.getContext(), $_self)">]> {
  let summary = "Starts a `dist.all_reduce`; `dist.wait` gives its result.";
  let description = [{
    The operand is read when the op runs; the reduction proceeds while later
    ops run, until `dist.wait` on the future.

    ```mlir
    %f = dist.all_reduce_start sum %x on @mesh mesh_axes = ["dp"] : tensor<1024xf32>
    %g = dist.wait %f : !dist.future<tensor<1024xf32>>
    ```

    Constraints:
    - as `dist.all_reduce`.
  }];
  let arguments = !con((ins Dist_Tensor:$input, Dist_ReduceKind:$kind),
                       commonArgs);
  let results = (outs Dist_FutureType:$result);
  let assemblyFormat = [{
    $kind $input `on` $mesh `mesh_axes` `=` $mesh_axes attr-dict `:`
      type($input)
  }];
}

def Dist_AllGatherStartOp : Dist_CollectiveOp<"all_gather_start",
    [Dist_CommEffects]> {
  let summary = "Starts a `dist.all_gather`; `dist.wait` gives its result.";
  let description = [{
    ```mlir
    %f = dist.all_gather_start %x on @mesh mesh_axes = ["dp"] gather_axis = 0 : tensor<128xf32> -> !dist.future<tensor<1024xf32>>
    %w = dist.wait %f : !dist.future<tensor<1024xf32>>
    ```

    Constraints:
    - as `dist.all_gather`, for the future's tensor.
  }];
  let arguments = !con((ins Dist_Tensor:$input, I64Attr:$gather_axis),
                       commonArgs);
  let results = (outs Dist_FutureType:$result);
  let assemblyFormat = [{
    $input `on` $mesh `mesh_axes` `=` $mesh_axes `gather_axis` `=`
      $gather_axis attr-dict `:` type($input) `->` qualified(type($result))
  }];
}

def Dist_ReduceScatterStartOp : Dist_CollectiveOp<"reduce_scatter_start",
    [Dist_CommEffects]> {
  let summary = "Starts a `dist.reduce_scatter`; `dist.wait` gives its result.";
  let description = [{
    ```mlir
    %f = dist.reduce_scatter_start sum %x on @mesh mesh_axes = ["dp"] scatter_axis = 0 : tensor<1024xf32> -> !dist.future<tensor<128xf32>>
    %g = dist.wait %f : !dist.future<tensor<128xf32>>
    ```

    Constraints:
    - as `dist.reduce_scatter`, for the future's tensor.
  }];
  let arguments = !con((ins Dist_Tensor:$input, Dist_ReduceKind:$kind,
                            I64Attr:$scatter_axis),
                       commonArgs);
  let results = (outs Dist_FutureType:$result);
  let assemblyFormat = [{
    $kind $input `on` $mesh `mesh_axes` `=` $mesh_axes `scatter_axis` `=`
      $scatter_axis attr-dict `:` type($input) `->` qualified(type($result))
  }];
}

def Dist_WaitOp : Dist_Op<"wait", [
    Dist_CommEffects,
    TypesMatchWith<"result is the future's value type", "future", "result",
                   "::llvm::cast<::mlir::dist::FutureType>($_self).getValueType()">]> {
  let summary = "Waits for an asynchronous collective and returns its tensor.";
  let description = [{
    ```mlir
    %g = dist.wait %f : !dist.future<tensor<1024xf32>>
    ```
  }];
  let arguments = (ins Dist_FutureType:$future);
  let results = (outs Dist_Tensor:$result);
  let assemblyFormat = "$future attr-dict `:` qualified(type($future))";
}

//===----------------------------------------------------------------------===//
// Point-to-point
//===----------------------------------------------------------------------===//

/// A transfer between each rank and its peer `shift` steps along one mesh
/// axis, cyclically: the peer's coordinate on `mesh_axis` is
/// (own + shift) mod size, its other coordinates are the rank's own.
class Dist_PointToPointOp<string mnemonic, list<Trait> traits = []>
    : Dist_Op<mnemonic, !listconcat(traits, [
          Dist_CommEffects,
          DeclareOpInterfaceMethods<SymbolUserOpInterface>])> {
  dag commonArgs = (ins FlatSymbolRefAttr:$mesh, StrAttr:$mesh_axis,
                        I64Attr:$shift);
  let hasVerifier = 1;
}

def Dist_SendOp : Dist_PointToPointOp<"send"> {
  let summary = "Sends a tensor to the rank `shift` steps along a mesh axis.";
  let description = [{
    Matched, in program order, by a `dist.recv` with the opposite shift on
    the peer. A pipeline stage sends its activations to the next stage:

    ```mlir
    dist.send %h on @mesh mesh_axis = "pp" shift = 1 : tensor<4x64xf32>
    ```

    The shift is cyclic, so with `pp` of size 2 the last stage's `shift = 1`
    reaches stage 0 (the interleaved schedule's next model chunk).

    Constraints:
    - `@mesh` names a `dist.mesh` that has `mesh_axis`;
    - `shift` is nonzero and in (-size, size) for that axis's size.
  }];
  let arguments = !con((ins Dist_Tensor:$input), commonArgs);
  let assemblyFormat = [{
    $input `on` $mesh `mesh_axis` `=` $mesh_axis `shift` `=` $shift attr-dict
      `:` type($input)
  }];
}

def Dist_RecvOp : Dist_PointToPointOp<"recv"> {
  let summary = "Receives a tensor from the rank `shift` steps along a mesh axis.";
  let description = [{
    Matched, in program order, by a `dist.send` with the opposite shift on
    the peer; the result type is the sent tensor's. A pipeline stage receives
    its input from the previous stage:

    ```mlir
    %h = dist.recv on @mesh mesh_axis = "pp" shift = -1 : tensor<4x64xf32>
    ```

    Constraints:
    - as `dist.send`.
  }];
  let arguments = commonArgs;
  let results = (outs Dist_Tensor:$result);
  let assemblyFormat = [{
    `on` $mesh `mesh_axis` `=` $mesh_axis `shift` `=` $shift attr-dict `:`
      type($result)
  }];
}

#endif // DTC_DIALECTS_DIST_IR_DISTCOLLECTIVES_TD
