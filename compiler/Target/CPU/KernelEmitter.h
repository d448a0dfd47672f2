//===- KernelEmitter.h - what a per-op C++ emission rule sees -------*- C++
//-*-===//
//
// The CPU target prints each function of the step as C++: every value lives
// at a static offset of the rank's arena (passes/Memory plans them), and
// every dtg op becomes one call into the header-only kernel library
// runtime/include/dtcrt/kernels (namespace dtck), specialized by static
// shapes. Emission rules are grouped by op family (Emit*.cpp) like the
// interpreter's kernels, and registered by op.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_COMPILER_TARGET_CPU_KERNELEMITTER_H
#define DTC_COMPILER_TARGET_CPU_KERNELEMITTER_H

#include "compiler/Target/CPU/BiasGradFolds.h"
#include "dialects/Dist/IR/DistOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <string>

namespace mlir::dtc::cpu {

/// Prints the C++ of one function's ops. Rules call its helpers to name
/// buffers, shapes and constants, and `call` to emit the kernel call.
class KernelEmitter {
public:
  virtual ~KernelEmitter() = default;

  /// Whether the program is CUDA C++ (kernels launched on the device; the
  /// library is dtcg) rather than the CPU target's C++.
  virtual bool cuda() const { return false; }

  /// A C++ expression for the data pointer of `value` (typed: `float *`,
  /// `int64_t *`, `bool *`, ...). Operands are `const`-correct by use.
  virtual std::string buffer(Value value) = 0;
  /// The name of a `static constexpr dtck::Shape` holding `value`'s shape.
  virtual std::string shape(Value value) = 0;
  /// The name of a `static constexpr dtck::Shape` of an explicit shape.
  virtual std::string shapeOf(ArrayRef<int64_t> dims) = 0;
  /// The name of a `static constexpr int64_t[]` holding `values` (an empty
  /// array is spelled `nullptr`).
  virtual std::string i64Array(ArrayRef<int64_t> values) = 0;
  /// The C++ element type of a tensor type's elements ("float", "double",
  /// "int64_t", "int32_t", "int16_t", "int8_t", "uint8_t", ..., "bool",
  /// "dtck::bf16", "dtck::f16").
  virtual std::string cType(Type elementType) = 0;
  /// The C++ element type of `value`'s elements.
  std::string cTypeOf(Value value) {
    Type type = value.getType();
    if (auto future = dyn_cast<dist::FutureType>(type))
      type = future.getValueType(); // the buffer its result goes to
    return cType(cast<RankedTensorType>(type).getElementType());
  }
  /// A C++ literal of a double (exact: hexadecimal float when needed).
  static std::string literal(double value);
  static std::string literal(int64_t value);
  static std::string literal(bool value) { return value ? "true" : "false"; }
  /// A C++ string literal.
  static std::string quoted(StringRef text);
  /// The braced initializer of a dtck::Shape: "{rank, {d0, d1, ...}}".
  static std::string shapeInitializer(ArrayRef<int64_t> dims);

  /// Emits `dtck::<kernel>(<args>);` (with `templateArgs` inside <> when
  /// given) as one statement of the current op.
  virtual void call(StringRef kernel, ArrayRef<std::string> args,
                    ArrayRef<std::string> templateArgs = {}) = 0;
  /// Checks that every operand and result of `op` is a static tensor that
  /// fits a dtck::Shape (rank <= 8) and has a C++ element type; an error at
  /// the op otherwise.
  LogicalResult checkTensors(Operation *op);

  /// CUDA: the bias gradient that product `gemm` (a gemm kernel or a
  /// dtg.gemm) computes besides its result (BiasGradFolds.h), or null.
  virtual const BiasGradFold *biasGradFold(Operation *gemm) { return nullptr; }

  /// Emits a raw statement (rarely needed: prefer a kernel call).
  virtual void statement(StringRef text) = 0;

  /// A name for a new file-scope function ("<prefix>_<n>", unique in the
  /// program).
  virtual std::string uniqueName(StringRef prefix) = 0;
  /// Adds a file-scope function (a fused kernel) to the program, after the
  /// shapes and arrays it uses: `comment`, then `static void NAME` and
  /// `signatureAndBody` (from its parameter list on). Returns the name to
  /// call: that of an earlier function with the same signature and body
  /// where there is one (every layer of a transformer has the same kernels
  /// up to their buffers), so the source does not grow with depth.
  virtual std::string defineFunction(StringRef name, StringRef comment,
                                     StringRef signatureAndBody) = 0;
};

/// Emits the C++ of one op; fails with an error at the op if it cannot
/// (an attribute value the kernel does not handle).
using EmitRule = std::function<LogicalResult(Operation *op, KernelEmitter &e)>;

/// Emission rules by op.
class EmitRegistry {
public:
  template <typename OpTy> void add(EmitRule rule) {
    rules[TypeID::get<OpTy>()] = std::move(rule);
  }
  const EmitRule *lookup(Operation *op) const;

private:
  llvm::DenseMap<TypeID, EmitRule> rules;
};

/// The registry holding every family's rules.
const EmitRegistry &getEmitRegistry();

/// How a dtg.cast converts, the same unfused and fused: the dtck kernel
/// (and scalar function) and the arguments after the operand.
/// `castToInt4` with the 4-bit range, `castSaturating` for a saturating
/// cast to an 8-bit float (ONNX's default), `cast` otherwise.
struct CastKernel {
  std::string name;
  SmallVector<std::string> attrs;
};
CastKernel castKernel(Operation *cast);

void registerElementwiseEmitters(EmitRegistry &registry);
void registerShapeEmitters(EmitRegistry &registry);
void registerNNEmitters(EmitRegistry &registry);
void registerReductionEmitters(EmitRegistry &registry);
void registerTrainingEmitters(EmitRegistry &registry);
void registerFusionEmitters(EmitRegistry &registry);
void registerDistEmitters(EmitRegistry &registry);

} // namespace mlir::dtc::cpu

#endif // DTC_COMPILER_TARGET_CPU_KERNELEMITTER_H
