//===- DTGBase.td - dtg dialect definition and op base classes -*- tablegen -*-===//
//
// The `dtg` (distributed training graph) dialect: value-semantics tensor ops on
// static shapes. Every op here has a reference-interpreter kernel
// (compiler/Interp) and, where it comes from ONNX, an import handler.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_DIALECTS_DTG_IR_DTGBASE_TD
#define DTC_DIALECTS_DTG_IR_DTGBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def DTG_Dialect : Dialect {
  let name = "dtg";
  let cppNamespace = "::mlir::dtg";
  let summary = "Value-semantics tensor ops for whole-step training graphs.";
  let description = [{
    `dtg` holds the model as imported (from ONNX) and, later, the whole training
    step. Every tensor has a static shape; shapes that ONNX computes at run time
    are folded at import. One `dtg` op may serve several ONNX ops (Flatten,
    Squeeze and Unsqueeze are all `dtg.reshape`).
  }];
  let hasConstantMaterializer = 1;
}

/// A ranked tensor with a static shape, of any element type.
def DTG_Tensor : StaticShapeTensorOf<[AnyType]>;
def DTG_FloatTensor : StaticShapeTensorOf<[AnyFloat]>;
def DTG_IntTensor : StaticShapeTensorOf<[AnySignlessInteger]>;
def DTG_IndexTensor : StaticShapeTensorOf<[I32, I64]>;
def DTG_BoolTensor : StaticShapeTensorOf<[I1]>;
def DTG_BitsTensor
    : StaticShapeTensorOf<[AnySignlessInteger, AnyUnsignedInteger]>;

class DTG_Op<string mnemonic, list<Trait> traits = []>
    : Op<DTG_Dialect, mnemonic, !listconcat(traits, [Pure])>;

/// An elementwise op of one operand whose result has the operand's type.
class DTG_UnaryOp<string mnemonic, string summaryText,
                  Type operandType = DTG_FloatTensor, list<Trait> traits = []>
    : DTG_Op<mnemonic, !listconcat(traits, [SameOperandsAndResultType,
                                            Elementwise])> {
  let summary = summaryText;
  let description = [{
    Applies the function to each element; the result has the operand's type.

    ```mlir
    %y = dtg.}] # mnemonic # [{ %x : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins operandType:$operand);
  let results = (outs operandType:$result);
  let assemblyFormat = "$operand attr-dict `:` type($result)";
}

/// An elementwise op of two operands with NumPy (multidirectional) broadcasting.
class DTG_BinaryOp<string mnemonic, string summaryText,
                   Type operandType = DTG_Tensor, list<Trait> traits = []>
    : DTG_Op<mnemonic, !listconcat(traits, [
          InferTypeOpAdaptor])> {
  let summary = summaryText;
  let description = [{
    Applies the function to pairs of elements after NumPy broadcasting of the
    operands; the result has the broadcast shape and the operands' element type.

    ```mlir
    %z = dtg.}] # mnemonic # [{ %x, %y : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
    ```

    Constraints:
    - both operands have the same element type;
    - the shapes broadcast.
  }];
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs DTG_Tensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)";
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, std::optional<::mlir::Location> location,
        $cppClass::Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &inferredReturnTypes) {
      return ::mlir::dtg::inferBroadcastResult(location, adaptor.getOperands(),
          /*resultElementType=*/::mlir::Type(), inferredReturnTypes);
    }
  }];
}

/// A comparison with broadcasting; the result is a tensor of i1.
class DTG_CompareOp<string mnemonic, string summaryText,
                    Type operandType = DTG_Tensor>
    : DTG_Op<mnemonic, [InferTypeOpAdaptor]> {
  let summary = summaryText;
  let description = [{
    Compares pairs of elements after NumPy broadcasting; the result is `i1`.

    ```mlir
    %c = dtg.}] # mnemonic # [{ %x, %y : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
    ```

    Constraints:
    - both operands have the same element type;
    - the shapes broadcast.
  }];
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs DTG_BoolTensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)";
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, std::optional<::mlir::Location> location,
        $cppClass::Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &inferredReturnTypes) {
      return ::mlir::dtg::inferBroadcastResult(location, adaptor.getOperands(),
          ::mlir::IntegerType::get(context, 1), inferredReturnTypes);
    }
  }];
}

/// A reduction over a set of axes.
class DTG_ReduceOp<string mnemonic, string summaryText>
    : DTG_Op<mnemonic, [InferTypeOpAdaptor]> {
  let summary = summaryText;
  let description = [{
    Reduces the operand over `axes` (sorted, non-negative, unique); with
    `keepdims` the reduced dimensions stay with size 1. An empty `axes` reduces
    nothing (the result equals the operand).

    ```mlir
    %s = dtg.}] # mnemonic # [{ %x {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
    ```

    Constraints:
    - every axis is in [0, rank) and `axes` is strictly increasing.
  }];
  let arguments = (ins DTG_Tensor:$operand, DenseI64ArrayAttr:$axes,
                       BoolAttr:$keepdims);
  let results = (outs DTG_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, std::optional<::mlir::Location> location,
        $cppClass::Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &inferredReturnTypes) {
      return ::mlir::dtg::inferReduceResult(location, adaptor.getOperand(),
          adaptor.getAxes(), adaptor.getKeepdims(), inferredReturnTypes);
    }
  }];
}

#endif // DTC_DIALECTS_DTG_IR_DTGBASE_TD
