//===- DTGShape.td - constants, data movement and shape dtg ops -*- tablegen -*-===//

#ifndef DTC_DIALECTS_DTG_IR_DTGSHAPE_TD
#define DTC_DIALECTS_DTG_IR_DTGSHAPE_TD

include "dialects/DTG/IR/DTGBase.td"

def DTG_ConstantOp : DTG_Op<"constant", [ConstantLike,
    InferTypeOpAdaptor]> {
  let summary = "A tensor known at compile time.";
  let description = [{
    ```mlir
    %c = dtg.constant dense<[1, 2]> : tensor<2xi64>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs DTG_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
  let hasVerifier = 1;
}

def DTG_ReshapeOp : DTG_Op<"reshape"> {
  let summary = "Reinterprets the elements (row-major) with the result's shape.";
  let description = [{
    Serves ONNX Reshape, Flatten, Squeeze and Unsqueeze.

    ```mlir
    %y = dtg.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
    ```

    Constraints:
    - operand and result have the same element type and element count.
  }];
  let arguments = (ins DTG_Tensor:$operand);
  let results = (outs DTG_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def DTG_TransposeOp : DTG_Op<"transpose",
    [InferTypeOpAdaptor]> {
  let summary = "Permutes the dimensions: result dim i is operand dim perm[i].";
  let description = [{
    ```mlir
    %y = dtg.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
    ```

    Constraints:
    - `perm` is a permutation of [0, rank).
  }];
  let arguments = (ins DTG_Tensor:$operand, DenseI64ArrayAttr:$perm);
  let results = (outs DTG_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def DTG_ConcatOp : DTG_Op<"concat",
    [InferTypeOpAdaptor]> {
  let summary = "Joins tensors along one axis.";
  let description = [{
    ```mlir
    %y = dtg.concat %a, %b {axis = 0 : i64} : tensor<2x3xf32>, tensor<1x3xf32> -> tensor<3x3xf32>
    ```

    Constraints:
    - at least one operand; all have the same rank and element type;
    - all dimensions other than `axis` agree; `axis` is in [0, rank).
  }];
  let arguments = (ins Variadic<DTG_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs DTG_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs) `->` type($result)";
  let hasFolder = 1;
}

def DTG_SliceOp : DTG_Op<"slice", [InferTypeOpAdaptor]> {
  let summary = "Takes a strided box of the operand.";
  let description = [{
    In dimension d the result takes the indices `starts[d] + k * steps[d]` for
    k = 0, 1, ... while they are before `limits[d]` (below it for positive
    steps, above it for negative ones). Bounds are already clamped, so every
    index taken lies in the operand.

    ```mlir
    %y = dtg.slice %x {starts = array<i64: 0, 1>, limits = array<i64: 2, 3>, steps = array<i64: 1, 1>} : tensor<2x3xf32> -> tensor<2x2xf32>
    ```

    Constraints:
    - `starts`, `limits`, `steps` have one entry per dimension; no step is 0;
    - every index taken is in range.
  }];
  let arguments = (ins DTG_Tensor:$operand, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$limits, DenseI64ArrayAttr:$steps);
  let results = (outs DTG_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
  let hasFolder = 1;
}

def DTG_GatherOp : DTG_Op<"gather", [InferTypeOpAdaptor]> {
  let summary = "Takes slices of `data` along `axis` at the given indices.";
  let description = [{
    ONNX Gather: the result shape is `data.shape[:axis] + indices.shape +
    data.shape[axis+1:]`. Negative indices count from the end; an index out of
    range is an error at run time. An embedding lookup is a gather on axis 0.

    ```mlir
    %y = dtg.gather %table, %ids {axis = 0 : i64} : tensor<100x8xf32>, tensor<4x5xi64> -> tensor<4x5x8xf32>
    ```

    Constraints:
    - `axis` is in [0, rank of data).
  }];
  let arguments = (ins DTG_Tensor:$data, DTG_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs DTG_Tensor:$result);
  let assemblyFormat = "$data `,` $indices attr-dict `:` type($data) `,` type($indices) `->` type($result)";
}

def DTG_GatherElementsOp : DTG_Op<"gather_elements",
    [InferTypeOpAdaptor]> {
  let summary = "Takes one element of `data` along `axis` per index (torch.gather).";
  let description = [{
    `result[i0..in] = data[i0.., indices[i0..in], ..in]` with the index replacing
    coordinate `axis`; the result has the shape of `indices`.

    ```mlir
    %y = dtg.gather_elements %x, %i {axis = 1 : i64} : tensor<2x3xf32>, tensor<2x2xi64> -> tensor<2x2xf32>
    ```

    Constraints:
    - `data` and `indices` have the same rank; `axis` is in [0, rank).
  }];
  let arguments = (ins DTG_Tensor:$data, DTG_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs DTG_Tensor:$result);
  let assemblyFormat = "$data `,` $indices attr-dict `:` type($data) `,` type($indices) `->` type($result)";
}

def DTG_ScatterElementsOp : DTG_Op<"scatter_elements",
    [InferTypeOpAdaptor]> {
  let summary = "Writes (or combines) updates into a copy of `data` along `axis`.";
  let description = [{
    The inverse of `dtg.gather_elements`: `result = data`, then for every index
    position in order `t = result[.., indices[..], ..]` becomes `updates[..]`
    (`reduction = "none"`), or `t + updates[..]`, `t * updates[..]`,
    `max(t, updates[..])`, `min(t, updates[..])` (`add`, `mul`, `max`, `min`:
    ONNX's ScatterElements and ScatterND reductions). It is the gradient of
    `gather_elements` (with `reduction = "add"`).

    ```mlir
    %y = dtg.scatter_elements %x, %i, %u {axis = 1 : i64, reduction = "none"} : tensor<2x3xf32>, tensor<2x2xi64>, tensor<2x2xf32> -> tensor<2x3xf32>
    ```

    Constraints:
    - `indices` and `updates` have the same shape and the rank of `data`;
    - `reduction` is one of none, add, mul, max, min.
  }];
  let arguments = (ins DTG_Tensor:$data, DTG_IndexTensor:$indices,
                       DTG_Tensor:$updates, I64Attr:$axis, StrAttr:$reduction);
  let results = (outs DTG_Tensor:$result);
  let assemblyFormat = "$data `,` $indices `,` $updates attr-dict `:` type($data) `,` type($indices) `,` type($updates) `->` type($result)";
  let hasVerifier = 1;
}

def DTG_BroadcastOp : DTG_Op<"broadcast"> {
  let summary = "Broadcasts the operand (NumPy rules) to the result's shape.";
  let description = [{
    Serves ONNX Expand once the target shape is known.

    ```mlir
    %y = dtg.broadcast %x : tensor<3x1xf32> -> tensor<2x3x4xf32>
    ```

    Constraints:
    - the operand's shape broadcasts to the result's; same element type.
  }];
  let arguments = (ins DTG_Tensor:$operand);
  let results = (outs DTG_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def DTG_TileOp : DTG_Op<"tile", [InferTypeOpAdaptor]> {
  let summary = "Repeats the operand `repeats[d]` times along each dimension d.";
  let description = [{
    ```mlir
    %y = dtg.tile %x {repeats = array<i64: 2, 1>} : tensor<2x3xf32> -> tensor<4x3xf32>
    ```

    Constraints:
    - one non-negative repeat per dimension.
  }];
  let arguments = (ins DTG_Tensor:$operand, DenseI64ArrayAttr:$repeats);
  let results = (outs DTG_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
}

def DTG_PadOp : DTG_Op<"pad", [InferTypeOpAdaptor]> {
  let summary = "Pads (or, with negative amounts, crops) each dimension.";
  let description = [{
    `mode` is `constant` (fill with `value`), `reflect` (mirror without the edge)
    or `edge` (repeat the edge).

    ```mlir
    %y = dtg.pad %x {low = array<i64: 0, 1>, high = array<i64: 0, 1>, mode = "constant", value = 0.0 : f64} : tensor<2x3xf32> -> tensor<2x5xf32>
    ```

    Constraints:
    - one `low` and one `high` amount per dimension; no resulting size negative;
    - `mode` is one of constant, reflect, edge.
  }];
  let arguments = (ins DTG_Tensor:$operand, DenseI64ArrayAttr:$low,
                       DenseI64ArrayAttr:$high, StrAttr:$mode, F64Attr:$value);
  let results = (outs DTG_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
}

def DTG_TriluOp : DTG_Op<"trilu", [SameOperandsAndResultType]> {
  let summary = "Keeps the upper or lower triangle of the last two dimensions.";
  let description = [{
    With `upper`, keeps elements with `col - row >= k`; otherwise those with
    `col - row <= k`; the rest become zero.

    ```mlir
    %y = dtg.trilu %x {upper = true, k = 0 : i64} : tensor<4x4xf32>
    ```

    Constraints:
    - rank at least 2.
  }];
  let arguments = (ins DTG_Tensor:$operand, BoolAttr:$upper, I64Attr:$k);
  let results = (outs DTG_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($result)";
  let hasVerifier = 1;
}

#endif // DTC_DIALECTS_DTG_IR_DTGSHAPE_TD
