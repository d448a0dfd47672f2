//===- DTGElementwise.td - elementwise dtg ops -----------------*- tablegen -*-===//

#ifndef DTC_DIALECTS_DTG_IR_DTGELEMENTWISE_TD
#define DTC_DIALECTS_DTG_IR_DTGELEMENTWISE_TD

include "dialects/DTG/IR/DTGBase.td"

//===----------------------------------------------------------------------===//
// Unary math on floats.
//===----------------------------------------------------------------------===//

def DTG_NegOp : DTG_UnaryOp<"neg", "Negates each element.", DTG_Tensor>;
def DTG_AbsOp : DTG_UnaryOp<"abs", "Absolute value of each element.", DTG_Tensor>;
def DTG_SignOp : DTG_UnaryOp<"sign", "Sign (-1, 0 or 1) of each element.", DTG_Tensor>;
def DTG_ExpOp : DTG_UnaryOp<"exp", "Natural exponential of each element.">;
def DTG_LogOp : DTG_UnaryOp<"log", "Natural logarithm of each element.">;
def DTG_SqrtOp : DTG_UnaryOp<"sqrt", "Square root of each element.">;
def DTG_RsqrtOp : DTG_UnaryOp<"rsqrt", "Reciprocal square root of each element.">;
def DTG_ReciprocalOp : DTG_UnaryOp<"reciprocal", "1/x for each element.">;
def DTG_FloorOp : DTG_UnaryOp<"floor", "Rounds each element down.">;
def DTG_CeilOp : DTG_UnaryOp<"ceil", "Rounds each element up.">;
def DTG_RoundOp : DTG_UnaryOp<"round", "Rounds each element half to even.">;
def DTG_SinOp : DTG_UnaryOp<"sin", "Sine of each element.">;
def DTG_CosOp : DTG_UnaryOp<"cos", "Cosine of each element.">;
def DTG_TanOp : DTG_UnaryOp<"tan", "Tangent of each element.">;
def DTG_AsinOp : DTG_UnaryOp<"asin", "Arcsine of each element.">;
def DTG_AcosOp : DTG_UnaryOp<"acos", "Arccosine of each element.">;
def DTG_AtanOp : DTG_UnaryOp<"atan", "Arctangent of each element.">;
def DTG_SinhOp : DTG_UnaryOp<"sinh", "Hyperbolic sine of each element.">;
def DTG_CoshOp : DTG_UnaryOp<"cosh", "Hyperbolic cosine of each element.">;
def DTG_AsinhOp : DTG_UnaryOp<"asinh", "Inverse hyperbolic sine of each element.">;
def DTG_AcoshOp : DTG_UnaryOp<"acosh", "Inverse hyperbolic cosine of each element.">;
def DTG_AtanhOp : DTG_UnaryOp<"atanh", "Inverse hyperbolic tangent of each element.">;
def DTG_TanhOp : DTG_UnaryOp<"tanh", "Hyperbolic tangent of each element.">;
def DTG_ErfOp : DTG_UnaryOp<"erf", "Gauss error function of each element.">;
def DTG_SigmoidOp : DTG_UnaryOp<"sigmoid", "Logistic sigmoid 1/(1+exp(-x)) of each element.">;
def DTG_ReluOp : DTG_UnaryOp<"relu", "max(x, 0) of each element.", DTG_Tensor>;
def DTG_SoftplusOp : DTG_UnaryOp<"softplus", "log(1 + exp(x)) of each element.">;
def DTG_SoftsignOp : DTG_UnaryOp<"softsign", "x / (1 + |x|) of each element.">;
def DTG_NotOp : DTG_UnaryOp<"not",
    "Logical negation of booleans, bitwise of other integers.", DTG_BitsTensor>;

//===----------------------------------------------------------------------===//
// Unary activations with parameters.
//===----------------------------------------------------------------------===//

/// An activation with float attributes; the result has the operand's type.
class DTG_ActivationOp<string mnemonic, string summaryText, dag attrs>
    : DTG_Op<mnemonic, [SameOperandsAndResultType, Elementwise]> {
  let summary = summaryText;
  let description = [{
    Applies the activation to each element; the result has the operand's type.
    The float attributes are the ONNX operator's attributes of the same name.
  }];
  let arguments = !con((ins DTG_FloatTensor:$operand), attrs);
  let results = (outs DTG_FloatTensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($result)";
}

def DTG_GeluOp : DTG_Op<"gelu", [SameOperandsAndResultType, Elementwise]> {
  let summary = "Gaussian error linear unit, exact (erf) or tanh-approximated.";
  let description = [{
    `x * 0.5 * (1 + erf(x / sqrt(2)))`, or with `approximate = true`
    `0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))`. PyTorch exports
    both as arithmetic; `dtc-recognize-idioms` rebuilds this op from it.

    ```mlir
    %y = dtg.gelu %x {approximate = false} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins DTG_FloatTensor:$operand, BoolAttr:$approximate);
  let results = (outs DTG_FloatTensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($result)";
}

def DTG_LeakyReluOp : DTG_ActivationOp<"leaky_relu",
    "x if x >= 0, else alpha * x.", (ins F64Attr:$alpha)>;
def DTG_EluOp : DTG_ActivationOp<"elu",
    "x if x > 0, else alpha * (exp(x) - 1).", (ins F64Attr:$alpha)>;
def DTG_CeluOp : DTG_ActivationOp<"celu",
    "max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).", (ins F64Attr:$alpha)>;
def DTG_SeluOp : DTG_ActivationOp<"selu",
    "gamma * x if x > 0, else gamma * alpha * (exp(x) - 1).",
    (ins F64Attr:$alpha, F64Attr:$gamma)>;
def DTG_HardSigmoidOp : DTG_ActivationOp<"hard_sigmoid",
    "max(0, min(1, alpha * x + beta)).", (ins F64Attr:$alpha, F64Attr:$beta)>;
def DTG_ThresholdedReluOp : DTG_ActivationOp<"thresholded_relu",
    "x if x > alpha, else 0.", (ins F64Attr:$alpha)>;

def DTG_ClipOp : DTG_Op<"clip", [SameOperandsAndResultType, Elementwise]> {
  let summary = "Clamps each element into [min, max].";
  let description = [{
    Either bound may be absent. Bounds are compile-time values (ONNX's optional
    `min`/`max` inputs must be constants).

    ```mlir
    %y = dtg.clip %x {min = 0.0 : f64, max = 6.0 : f64} : tensor<4xf32>
    ```
  }];
  let arguments = (ins DTG_Tensor:$operand, OptionalAttr<F64Attr>:$min,
                       OptionalAttr<F64Attr>:$max);
  let results = (outs DTG_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($result)";
}

def DTG_IsNanOp : DTG_Op<"is_nan", [Elementwise]> {
  let summary = "True where an element is NaN.";
  let description = [{
    ```mlir
    %m = dtg.is_nan %x : tensor<4xf32> -> tensor<4xi1>
    ```
  }];
  let arguments = (ins DTG_FloatTensor:$operand);
  let results = (outs DTG_BoolTensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
}

def DTG_IsInfOp : DTG_Op<"is_inf", [Elementwise]> {
  let summary = "True where an element is an infinity of a selected sign.";
  let description = [{
    ```mlir
    %m = dtg.is_inf %x {detect_negative = true, detect_positive = true} : tensor<4xf32> -> tensor<4xi1>
    ```
  }];
  let arguments = (ins DTG_FloatTensor:$operand, BoolAttr:$detect_negative,
                       BoolAttr:$detect_positive);
  let results = (outs DTG_BoolTensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
}

//===----------------------------------------------------------------------===//
// Binary arithmetic and logic with broadcasting.
//===----------------------------------------------------------------------===//

def DTG_AddOp : DTG_BinaryOp<"add", "Elementwise sum with broadcasting.",
                             DTG_Tensor, [Commutative]> {
  let hasFolder = 1;
}
def DTG_SubOp : DTG_BinaryOp<"sub", "Elementwise difference with broadcasting.">;
def DTG_MulOp : DTG_BinaryOp<"mul", "Elementwise product with broadcasting.",
                             DTG_Tensor, [Commutative]> {
  let hasFolder = 1;
}
def DTG_DivOp : DTG_BinaryOp<"div",
    "Elementwise quotient with broadcasting (integers truncate toward zero).">;
def DTG_PowOp : DTG_BinaryOp<"pow", "Elementwise power with broadcasting."> {
  let arguments = (ins DTG_Tensor:$lhs, DTG_Tensor:$rhs);
}
def DTG_MaxOp : DTG_BinaryOp<"max", "Elementwise maximum with broadcasting.",
                             DTG_Tensor, [Commutative]>;
def DTG_MinOp : DTG_BinaryOp<"min", "Elementwise minimum with broadcasting.",
                             DTG_Tensor, [Commutative]>;
def DTG_ModOp : DTG_BinaryOp<"mod",
    "Elementwise remainder; sign of the divisor, or of the dividend with fmod."> {
  let arguments = (ins DTG_Tensor:$lhs, DTG_Tensor:$rhs, BoolAttr:$fmod);
}
// On booleans logical, on other integers bitwise (ONNX's And and
// BitwiseAnd, ...): the same on 0 and 1.
def DTG_AndOp : DTG_BinaryOp<"and", "And (logical or bitwise) with broadcasting.",
                             DTG_BitsTensor, [Commutative]>;
def DTG_OrOp : DTG_BinaryOp<"or", "Or (logical or bitwise) with broadcasting.",
                            DTG_BitsTensor, [Commutative]>;
def DTG_XorOp : DTG_BinaryOp<"xor",
    "Exclusive or (logical or bitwise) with broadcasting.", DTG_BitsTensor,
    [Commutative]>;

def DTG_EqualOp : DTG_CompareOp<"equal", "True where elements are equal.">;
def DTG_LessOp : DTG_CompareOp<"less", "True where lhs < rhs.">;
def DTG_LessEqualOp : DTG_CompareOp<"less_equal", "True where lhs <= rhs.">;
def DTG_GreaterOp : DTG_CompareOp<"greater", "True where lhs > rhs.">;
def DTG_GreaterEqualOp : DTG_CompareOp<"greater_equal", "True where lhs >= rhs.">;

def DTG_WhereOp : DTG_Op<"where", [InferTypeOpAdaptor]> {
  let summary = "Selects from two tensors by a boolean condition, with broadcasting.";
  let description = [{
    `result[i] = condition[i] ? on_true[i] : on_false[i]` after broadcasting all
    three operands.

    ```mlir
    %r = dtg.where %c, %a, %b : tensor<4xi1>, tensor<4xf32>, tensor<f32> -> tensor<4xf32>
    ```

    Constraints:
    - `on_true` and `on_false` have the same element type;
    - the three shapes broadcast.
  }];
  let arguments = (ins DTG_BoolTensor:$condition, DTG_Tensor:$on_true,
                       DTG_Tensor:$on_false);
  let results = (outs DTG_Tensor:$result);
  let assemblyFormat = "$condition `,` $on_true `,` $on_false attr-dict `:` "
      "type($condition) `,` type($on_true) `,` type($on_false) `->` type($result)";
}

def DTG_CastOp : DTG_Op<"cast", [Elementwise]> {
  let summary = "Converts each element to the result's element type.";
  let description = [{
    Float to integer truncates toward zero; to `i1` is `x != 0`; float to
    narrower float rounds to nearest even. As ONNX's Cast: to a 4-bit
    integer rounds to nearest even and saturates; to an 8-bit float
    (`f8E4M3FN`, `f8E4M3FNUZ`, `f8E5M2`, `f8E5M2FNUZ`) takes values beyond
    the largest finite one, infinities included, to it (of their sign)
    unless `saturate` is false, when they become what the type has
    (infinity for `f8E5M2`, NaN for the others). `saturate` (absent: true)
    means nothing for other result types.

    ```mlir
    %y = dtg.cast %x : tensor<4xf32> -> tensor<4xi64>
    %z = dtg.cast %x {saturate = false} : tensor<4xf32> -> tensor<4xf8E5M2>
    ```

    Constraints:
    - operand and result have the same shape (the Elementwise trait).
  }];
  let arguments = (ins DTG_Tensor:$operand, OptionalAttr<BoolAttr>:$saturate);
  let results = (outs DTG_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
  let hasFolder = 1;
}

#endif // DTC_DIALECTS_DTG_IR_DTGELEMENTWISE_TD
