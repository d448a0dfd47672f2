//===- CppEmitter.cpp - the step as C++ over the kernel library ----------===//

#include "compiler/Target/CPU/CppEmitter.h"

#include "dialects/Dist/IR/DistOps.h"

#include "compiler/Import/ONNX/ONNXImporter.h"
#include "compiler/Target/CPU/KernelEmitter.h"
#include "compiler/Target/CPU/StepLoops.h"
#include "compiler/Target/CPU/UpdateRuns.h"
#include "dialects/DTG/IR/DTGOps.h"
#include "dialects/DTG/Interp/Tensor.h"
#include "dialects/Dist/IR/DistOps.h"
#include "passes/Memory/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

#include <map>

using namespace mlir;
using namespace mlir::dtc;
using namespace mlir::dtc::cpu;

//===----------------------------------------------------------------------===//
// Registry and literals
//===----------------------------------------------------------------------===//

const EmitRule *EmitRegistry::lookup(Operation *op) const {
  std::optional<RegisteredOperationName> name = op->getRegisteredInfo();
  if (!name)
    return nullptr;
  auto it = rules.find(name->getTypeID());
  return it == rules.end() ? nullptr : &it->second;
}

const EmitRegistry &mlir::dtc::cpu::getEmitRegistry() {
  static const EmitRegistry registry = [] {
    EmitRegistry r;
    registerElementwiseEmitters(r);
    registerShapeEmitters(r);
    registerNNEmitters(r);
    registerReductionEmitters(r);
    registerTrainingEmitters(r);
    registerFusionEmitters(r);
    registerDistEmitters(r);
    return r;
  }();
  return registry;
}

std::string KernelEmitter::literal(double value) {
  if (std::isnan(value))
    return "std::numeric_limits<double>::quiet_NaN()";
  if (std::isinf(value))
    return value > 0 ? "std::numeric_limits<double>::infinity()"
                     : "-std::numeric_limits<double>::infinity()";
  char text[64];
  std::snprintf(text, sizeof(text), "%.17g", value);
  std::string s = text;
  if (s.find_first_of(".en") == std::string::npos)
    s += ".0";
  return s;
}

std::string KernelEmitter::literal(int64_t value) {
  if (value == std::numeric_limits<int64_t>::min())
    return "INT64_MIN";
  return "int64_t(" + std::to_string(value) + ")";
}

LogicalResult KernelEmitter::checkTensors(Operation *op) {
  constexpr int64_t kMaxRank = 8; // dtck::kMaxRank
  auto check = [&](Type t) -> LogicalResult {
    if (auto future = dyn_cast<dist::FutureType>(t))
      t = future.getValueType();
    auto type = dyn_cast<RankedTensorType>(t);
    if (!type || !type.hasStaticShape())
      return op->emitError("the CPU target needs static shapes, got ") << t;
    if (type.getRank() > kMaxRank)
      return op->emitError("the CPU target holds tensors of rank at most ")
             << kMaxRank << ", got " << t;
    if (cType(type.getElementType()).empty())
      return op->emitError("the CPU target has no element type for ") << t;
    return success();
  };
  for (Type t : op->getOperandTypes())
    if (failed(check(t)))
      return failure();
  for (Type t : op->getResultTypes())
    if (failed(check(t)))
      return failure();
  return success();
}

std::string KernelEmitter::shapeInitializer(ArrayRef<int64_t> dims) {
  std::string text = "{" + std::to_string(dims.size()) + ", {";
  for (auto [i, d] : llvm::enumerate(dims))
    text += (i ? ", " : "") + std::to_string(d);
  return text + "}}";
}

std::string KernelEmitter::quoted(StringRef text) {
  std::string s = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      s += '\\';
    if (c == '\n') {
      s += "\\n";
      continue;
    }
    if (static_cast<unsigned char>(c) < 0x20) {
      // Octal: at most three digits, whatever follows.
      char octal[5];
      std::snprintf(octal, sizeof(octal), "\\%03o", unsigned(c));
      s += octal;
      continue;
    }
    s += c;
  }
  return s + "\"";
}

/// The name of an 8-bit float type, as dtck's type and as a dtype; empty
/// for other types.
static StringRef float8Name(Type type) {
  if (isa<Float8E4M3FNType>(type))
    return "f8e4m3fn";
  if (isa<Float8E4M3FNUZType>(type))
    return "f8e4m3fnuz";
  if (isa<Float8E5M2Type>(type))
    return "f8e5m2";
  if (isa<Float8E5M2FNUZType>(type))
    return "f8e5m2fnuz";
  return "";
}

std::string mlir::dtc::cpu::cTypeName(Type type) {
  if (type.isF32())
    return "float";
  if (type.isF64())
    return "double";
  if (type.isBF16())
    return "dtck::bf16";
  if (type.isF16())
    return "dtck::f16";
  if (StringRef name = float8Name(type); !name.empty())
    return ("dtck::" + name).str();
  if (type.isInteger(1))
    return "bool";
  if (auto i = dyn_cast<IntegerType>(type)) {
    // 4-bit integers are held one to a byte (casts keep them in range).
    unsigned width = i.getWidth() == 4 ? 8 : i.getWidth();
    if (width != 8 && width != 16 && width != 32 && width != 64)
      return "";
    return (i.isUnsigned() ? "uint" : "int") + std::to_string(width) + "_t";
  }
  return "";
}

std::string mlir::dtc::cpu::dtypeName(Type type) {
  if (type.isF32())
    return "f32";
  if (type.isF64())
    return "f64";
  if (type.isBF16())
    return "bf16";
  if (type.isF16())
    return "f16";
  if (StringRef name = float8Name(type); !name.empty())
    return name.str();
  if (type.isInteger(1))
    return "bool";
  if (auto i = dyn_cast<IntegerType>(type))
    return (i.isUnsigned() ? "u" : "i") + std::to_string(i.getWidth());
  return "";
}

//===----------------------------------------------------------------------===//
// Program-wide declarations
//===----------------------------------------------------------------------===//

namespace {
/// Declarations shared by every function: shapes, integer arrays and
/// constants, each printed once and named in order of first use.
class ProgramDecls {
public:
  explicit ProgramDecls(const EmitOptions &options) : options(options) {}
  const EmitOptions &options;

  std::string shape(ArrayRef<int64_t> dims) {
    std::string key = std::to_string(dims.size());
    for (int64_t d : dims)
      key += "," + std::to_string(d);
    auto [it, inserted] = shapes.try_emplace(key, "");
    if (inserted) {
      it->second = "s" + std::to_string(shapes.size() - 1);
      os << "static constexpr dtck::Shape " << it->second
         << KernelEmitter::shapeInitializer(dims) << ";\n";
    }
    return it->second;
  }

  std::string array(ArrayRef<int64_t> values) {
    if (values.empty())
      return "nullptr";
    std::string key;
    for (int64_t v : values)
      key += std::to_string(v) + ",";
    auto [it, inserted] = arrays.try_emplace(key, "");
    if (inserted) {
      it->second = "a" + std::to_string(arrays.size() - 1);
      os << "static constexpr int64_t " << it->second << "[] = {";
      // Plain decimals (an int or a long, either converts): live-range
      // tables of deep models hold tens of thousands.
      for (auto [i, v] : llvm::enumerate(values))
        os << (i ? (i % 16 ? ", " : ",\n    ") : "")
           << (v == std::numeric_limits<int64_t>::min() ? "INT64_MIN"
                                                        : std::to_string(v));
      os << "};\n";
    }
    return it->second;
  }

  /// A pointer expression to a constant's data.
  FailureOr<std::string> constant(dtg::ConstantOp op) {
    auto type = cast<RankedTensorType>(op.getType());
    std::string cType = cTypeName(type.getElementType());
    FailureOr<dtg::interp::Tensor> value =
        dtg::interp::tensorFromAttr(op.getValue());
    if (cType.empty() || failed(value))
      return op.emitError("the CPU target cannot hold constants of type ")
             << type;
    int64_t n = value->numElements();
    bool splat =
        isa<SplatElementsAttr>(op.getValue()) ||
        (n > 0 && llvm::all_of(llvm::seq<int64_t>(0, n), [&](int64_t k) {
           return value->get(k) == value->get(0);
         }));
    auto element = [&](int64_t k) -> std::string {
      Type t = type.getElementType();
      if (t.isInteger(1))
        return value->i[k] ? "true" : "false";
      // Signed integers as plain decimals (an int or a long converts
      // without narrowing): a vocabulary's iota has 50,257.
      if (t.isSignedInteger() || t.isSignlessInteger())
        return value->i[k] == std::numeric_limits<int64_t>::min()
                   ? "INT64_MIN"
                   : std::to_string(value->i[k]);
      if (isa<IntegerType>(t))
        return KernelEmitter::literal(value->i[k]);
      std::string lit = KernelEmitter::literal(value->f[k]);
      return t.isF32() ? "float(" + lit + ")" : cType + "(" + lit + ")";
    };
    // The declaration after the name, and what fills it at start-up: equal
    // constants (every layer's causal mask) are printed once.
    std::string decl, fill;
    if (splat && n > 16) {
      // Static storage filled once.
      decl = "[" + std::to_string(n) + "];\n";
      fill = ", " + std::to_string(n) + ", " + element(0);
    } else {
      decl = "[" + std::to_string(std::max<int64_t>(n, 1)) + "] = {";
      for (int64_t k = 0; k < n; ++k)
        decl += (k ? ", " : "") + std::string(k % 16 == 15 ? "\n    " : "") +
                element(k);
      decl += "};\n";
    }
    auto [it, inserted] = constantsByText.try_emplace(
        cType + decl + fill, "c" + std::to_string(constantsByText.size()));
    std::string name = it->second;
    if (inserted) {
      if (!fill.empty()) {
        os << "static " << cType << " " << name << decl;
        init << "  std::fill(" << name << ", " << name << " + " << n << ", "
             << element(0) << ");\n";
      } else {
        os << "static " << (cType.rfind("dtck::", 0) == 0 ? "" : "const ")
           << cType << " " << name << decl;
      }
    }
    if (options.cuda) {
      // Kernels read a device copy, made once after the host values.
      if (inserted) {
        os << "static " << cType << " *" << name << "_d;\n";
        deviceInit << "  " << name << "_d = static_cast<" << cType
                   << " *>(dtcg::deviceCopy(" << name << ", sizeof(" << name
                   << ")));\n";
      }
      return name + "_d";
    }
    return "const_cast<" + cType + " *>(" + name + ")";
  }

  std::string uniqueName(StringRef prefix) {
    return (prefix + "_" + Twine(functions++)).str();
  }

  std::string defineFunction(StringRef name, StringRef comment,
                             StringRef signatureAndBody) {
    auto [it, inserted] =
        functionsByBody.try_emplace(signatureAndBody, name.str());
    if (inserted) {
      // Device kernels before their launcher, which calls them
      // "@NAME@_<k>".
      std::string text = signatureAndBody.str();
      size_t split = text.find("@HOST@");
      std::string kernels =
          split == std::string::npos ? "" : text.substr(0, split);
      std::string host =
          split == std::string::npos ? text : text.substr(split + 6);
      auto named = [&](std::string t) {
        for (size_t at; (at = t.find("@NAME@")) != std::string::npos;)
          t.replace(at, 6, name.str());
        return t;
      };
      if (options.kernelDefinitions && kernels.empty()) {
        // An earlier stage's kernel of the same text, if there is one.
        if (options.sharedKernels) {
          auto [shared, first] = options.sharedKernels->try_emplace(
              signatureAndBody, options.kernelScope + name.str());
          if (!first)
            return it->second = shared->second;
        }
        // Defined in a file of kernels, declared here: the parameter list
        // is the text up to the body's brace.
        std::string signature = named(host);
        size_t body = signature.find(") {\n");
        os << "void " << name << signature.substr(0, body + 1) << ";\n";
        options.kernelDefinitions->push_back(
            (comment + "void " + name + signature).str());
      } else {
        os << comment << named(kernels) << "static void " << name
           << named(host);
      }
    }
    return it->second;
  }
  /// Fused kernels by their parameter list and body: the name of the first.
  llvm::StringMap<std::string> functionsByBody;
  /// Constants by their type, declaration and fill: the name of the first.
  llvm::StringMap<std::string> constantsByText;

  std::string str;
  llvm::raw_string_ostream os{str};
  std::string initStr;
  llvm::raw_string_ostream init{initStr};
  std::string deviceInitStr;
  llvm::raw_string_ostream deviceInit{deviceInitStr};

private:
  std::map<std::string, std::string> shapes, arrays;
  unsigned functions = 0;
};

/// Where a value's data is: a buffer the function reaches through a slot
/// (the arena, an argument, a result) or a constant's storage.
struct Home {
  BufferSlot slot{BufferSlot::Arena, 0};
  /// A constant's pointer expression; empty for a slot.
  std::string constant;
};

/// Prints one function.
class FunctionEmitter : public KernelEmitter {
public:
  FunctionEmitter(ProgramDecls &decls, llvm::raw_ostream &os)
      : decls(decls), os(os) {}

  bool cuda() const override { return decls.options.cuda; }

  /// Inside an op: a cast of a hole that the op's slot fills (so that ops
  /// the same up to their buffers print the same); elsewhere, and for the
  /// CUDA target (whose multi-tensor updates gather buffers across ops),
  /// the address itself.
  std::string buffer(Value value) override {
    auto it = homes.find(value);
    if (it == homes.end())
      return "/*undefined*/nullptr";
    if (!it->second.constant.empty())
      return it->second.constant;
    std::string address;
    if (current && !cuda()) {
      auto [slot, inserted] =
          currentSlots.try_emplace(value, current->slots.size());
      if (inserted)
        current->slots.push_back(it->second.slot);
      address = slotHole(slot->second);
    } else {
      address = it->second.slot.expression();
    }
    return "reinterpret_cast<" + cTypeOf(value) + " *>(" + address + ")";
  }
  std::string shape(Value value) override {
    return decls.shape(cast<RankedTensorType>(value.getType()).getShape());
  }
  std::string shapeOf(ArrayRef<int64_t> dims) override {
    return decls.shape(dims);
  }
  std::string i64Array(ArrayRef<int64_t> values) override {
    return decls.array(values);
  }
  std::string cType(Type elementType) override {
    return cTypeName(elementType);
  }
  void call(StringRef kernel, ArrayRef<std::string> args,
            ArrayRef<std::string> templateArgs) override {
    if (cuda() && !decls.options.hasKernel(kernel) && missing.empty())
      missing = kernel.str();
    code << (cuda() ? "  dtcg::" : "  dtck::") << kernel;
    if (!templateArgs.empty())
      code << "<" << llvm::join(templateArgs, ", ") << ">";
    code << "(" << llvm::join(args, ", ") << ");\n";
  }
  void statement(StringRef text) override { code << "  " << text << "\n"; }
  std::string uniqueName(StringRef prefix) override {
    return decls.uniqueName(prefix);
  }
  std::string defineFunction(StringRef name, StringRef comment,
                             StringRef signatureAndBody) override {
    return decls.defineFunction(name, comment, signatureAndBody);
  }
  const BiasGradFold *biasGradFold(Operation *gemm) override {
    auto it = biasGradFolds.find(gemm);
    return it == biasGradFolds.end() || it->second.gemm != gemm ? nullptr
                                                                : &it->second;
  }

  LogicalResult emit(func::FuncOp func);

private:
  /// `value`'s slot as one number (slotAddress's code).
  int64_t slotCode(Value value) {
    const BufferSlot &slot = homes.lookup(value).slot;
    return slot.index * 4 + slot.kind;
  }
  /// Starts printing `op` into `codes`.
  void beginOp(OpCode op) {
    codes.push_back(std::move(op));
    current = &codes.back();
    currentSlots.clear();
  }
  /// Ends the op begun: its text is what `code` holds.
  void endOp() {
    code << endText;
    endText.clear();
    current->text = std::move(codeText);
    codeText.clear();
    current = nullptr;
  }

  /// Adds update `i` of `run` to `entries` (dtcg::SgdTensor or AdamWTensor:
  /// size, parameter, gradient, its scale, state, results); after the
  /// run's last update, emits the multi-tensor launch.
  void emitRunEntry(const UpdateRun &run, size_t i, std::string &entries) {
    Operation *update = run.updates[i];
    unsigned states = isa<dtg::SgdUpdateOp>(update) ? 1 : 2;
    auto type = cast<RankedTensorType>(update->getOperand(0).getType());
    std::string grad = buffer(update->getOperand(1)), scale = "nullptr";
    if (Operation *mul = run.scales[i]) {
      auto [unscaled, factor] = scaledOperands(mul);
      grad = buffer(unscaled);
      scale = buffer(factor);
    }
    entries += (entries.empty() ? "{" : ", {") +
               std::to_string(type.getNumElements()) + ", " +
               buffer(update->getOperand(0)) + ", " + grad + ", " + scale;
    for (unsigned s = 0; s < states; ++s)
      entries += ", " + buffer(update->getOperand(2 + s));
    for (Value r : update->getResults())
      entries += ", " + buffer(r);
    entries += "}";
    if (i + 1 < run.updates.size())
      return;
    code << "  dtcg::"
         << (isa<dtg::SgdUpdateOp>(update) ? "multiSgdUpdate<"
                                           : "multiAdamWUpdate<")
         << cTypeOf(update->getOperand(0)) << ">({" << entries << "}";
    for (Value v : update->getOperands().drop_front(2 + states))
      code << ", " << buffer(v);
    code << ");\n";
  }

  ProgramDecls &decls;
  llvm::raw_ostream &os;
  llvm::DenseMap<Value, Home> homes;
  /// The ops printed so far, and the one being printed (its statements go
  /// to `code`; its buffers get slots in order of first use).
  std::vector<OpCode> codes;
  OpCode *current = nullptr;
  llvm::DenseMap<Value, unsigned> currentSlots;
  std::string codeText;
  llvm::raw_string_ostream code{codeText};
  /// Statements that end the op being printed, after its own.
  std::string endText;
  /// A kernel the CUDA target's library lacks, called by the op emitted.
  std::string missing;
  /// CUDA: each bias-gradient fold, by its reduce_sum and by its gemm.
  llvm::DenseMap<Operation *, BiasGradFold> biasGradFolds;
};
} // namespace

/// A buffer as planned: its size rounded up to the plan's alignment.
static int64_t plannedBytes(Value value) {
  return (memory::byteSize(value.getType()) + 63) / 64 * 64;
}

/// `text` fit for a `//` comment (a node's name may hold anything).
static std::string commentText(StringRef text) {
  std::string s = text.str();
  for (char &c : s)
    if (static_cast<unsigned char>(c) < 0x20)
      c = ' ';
  return s;
}

/// The timeline mark of a pipeline schedule's forward or backward call
/// ("kind, micro, chunk" of dtcrt_pipeline_mark), with `kind` in place of
/// the call's own where given; empty for any other op.
static std::string pipelineMark(Operation *op, int kind = -1) {
  auto stepKind = op->getAttrOfType<StringAttr>("dtc.pipeline_op");
  auto micro = op->getAttrOfType<IntegerAttr>("dtc.micro_batch");
  auto chunk = op->getAttrOfType<IntegerAttr>("dtc.chunk");
  if (!isa<func::CallOp>(op) || !stepKind || !micro)
    return "";
  if (kind < 0)
    kind = stepKind.getValue() == "F" ? 0 : 1;
  return std::to_string(kind) + ", " + std::to_string(micro.getInt()) + ", " +
         std::to_string(chunk ? chunk.getInt() : 0);
}

/// The gradient accumulations of a pipeline's backward calls in `body`: the
/// adds after a backward (after its sends, say) that read its gradients, or
/// the sums of earlier ones, up to the next op of any other kind (a
/// transfer, a collective, a call, another kernel). The first of each
/// stretch maps to `begin`, the last to `end`, with the backward's mark as
/// kind 2: the runtime's timeline records when the stage summed, so that
/// the time is not taken for idle.
static void findAccumulations(Block &body,
                              llvm::DenseMap<Operation *, std::string> &begin,
                              llvm::DenseMap<Operation *, std::string> &end) {
  llvm::DenseSet<Value> gradients;
  std::string mark;
  Operation *first = nullptr, *last = nullptr;
  auto close = [&] {
    if (first) {
      begin[first] = mark;
      end[last] = mark;
    }
    first = last = nullptr;
    mark.clear();
  };
  for (Operation &op : body.without_terminator()) {
    if (isa<func::CallOp>(op)) {
      close();
      if (auto b = op.getAttrOfType<StringAttr>("dtc.pipeline_op");
          b && b.getValue() == "B") {
        mark = pipelineMark(&op, /*kind=*/2);
        gradients.insert(op.result_begin(), op.result_end());
      }
      continue;
    }
    if (mark.empty() || isa<dtg::ConstantOp>(op))
      continue;
    bool sum = isa<dtg::AddOp>(op) &&
               llvm::any_of(op.getOperands(),
                            [&](Value v) { return gradients.contains(v); });
    if (sum) {
      gradients.insert(op.result_begin(), op.result_end());
      first = first ? first : &op;
      last = &op;
    } else if (first) {
      close();
    }
  }
  close();
}

LogicalResult FunctionEmitter::emit(func::FuncOp func) {
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  for (Type t : func.getArgumentTypes())
    if (!isa<RankedTensorType>(t) ||
        cTypeName(cast<RankedTensorType>(t).getElementType()).empty())
      return func.emitError("the CPU target cannot pass arguments of type ")
             << t;
  os << "// " << func.getSymName() << "\n";
  bool async =
      func->getParentOfType<ModuleOp>()
          .walk([](Operation *op) {
            return isa<dist::AllReduceStartOp, dist::ReduceScatterStartOp,
                       dist::AllGatherStartOp>(op)
                       ? WalkResult::interrupt()
                       : WalkResult::advance();
          })
          .wasInterrupted();
  // The step is a sequence of kernel calls, one per op, with no loops of
  // its own: optimizing it saves nothing measurable (nanoseconds a call)
  // and costs most of the host compiler's time (the 8-layer example GPT at
  // 2 pipeline stages: 22.3 s for the file at -O1, 15.8 s at -O0; at -O3
  // GPT-2 small's took 10.5 s and 0.9 GB). The kernels keep the build's
  // -O3.
  // (CUDA: host code, which nvcc hands to the host compiler.)
  os << "__attribute__((optimize(\"O0\"))) ";
  os << "static void fn_" << func.getSymName()
     << "(void *const *args, void *const *results, dtcrt_step_ctx *ctx, "
        "int64_t base) {\n";
  os << "  uint8_t *arena = ctx->arena + base;\n";
  os << "  (void)arena;\n";
  // (The arguments' names are in the manifest.)
  for (BlockArgument arg : body.getArguments())
    homes[arg].slot = {BufferSlot::Arg, arg.getArgNumber()};
  // Results written directly by the op that defines them.
  llvm::DenseMap<Value, unsigned> direct;
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    Operation *def = v.getDefiningOp();
    if (!def || def->hasAttr(memory::kAlias) || isa<dtg::ConstantOp>(def))
      continue;
    auto offsets = def->getAttrOfType<DenseI64ArrayAttr>(memory::kOffsets);
    unsigned r = cast<OpResult>(v).getResultNumber();
    if (offsets && offsets[r] < 0)
      direct[v] = i;
  }

  // CUDA: runs of optimizer updates become one multi-tensor launch each.
  std::vector<UpdateRun> runs;
  llvm::DenseMap<Operation *, std::pair<size_t, size_t>> inRun;
  llvm::DenseSet<Operation *> folded;
  if (cuda())
    runs = findUpdateRuns(body, [&](Value v) { return direct.count(v) > 0; });
  for (auto [r, run] : llvm::enumerate(runs))
    for (auto [i, update] : llvm::enumerate(run.updates)) {
      inRun[update] = {r, i};
      if (run.scales[i])
        folded.insert(run.scales[i]);
    }
  std::vector<std::string> runEntries(runs.size());
  // CUDA: bias gradients that their weight's product computes.
  if (cuda())
    for (const BiasGradFold &fold : findBiasGradFolds(body)) {
      biasGradFolds[fold.reduce] = fold;
      biasGradFolds[fold.gemm] = fold;
    }

  SmallVector<memory::LiveRange> ranges = memory::computeLiveRanges(
      body, [&](Value v) { return direct.count(v) > 0; });
  llvm::DenseMap<Operation *, int64_t> position;
  int64_t pos = 0;
  for (Operation &op : body)
    position[&op] = pos++;
  auto own = func->getAttrOfType<IntegerAttr>(memory::kOwnArenaBytes);
  int64_t ownArena = own ? own.getInt() : 0;
  // Every buffer's (offset, bytes, first op, last op), once per function:
  // guard mode's record of what each kernel may touch. (One list per op
  // would grow with ops times live buffers: most of the source of a deep
  // model.)
  SmallVector<int64_t> table;
  for (const memory::LiveRange &range : ranges) {
    Operation *def = range.value.getDefiningOp();
    auto defOffsets = def->getAttrOfType<DenseI64ArrayAttr>(memory::kOffsets);
    table.push_back(defOffsets[cast<OpResult>(range.value).getResultNumber()]);
    table.push_back(memory::byteSize(range.value.getType()));
    table.push_back(range.begin);
    table.push_back(range.end);
  }
  // Printed shorter (a deep model's lists hold tens of thousands): the
  // offsets in units of the largest power of two (to 64) dividing them all,
  // that unit first; each first op after the previous entry's, and each last
  // op after its first.
  int64_t unit = 64;
  for (size_t k = 0; k < table.size(); k += 4)
    while (unit > 1 && table[k] % unit)
      unit /= 2;
  int64_t previous = 0;
  for (size_t k = 0; k < table.size(); k += 4) {
    table[k] /= unit;
    table[k + 3] -= table[k + 2];
    std::swap(previous, table[k + 2]);
    table[k + 2] = previous - table[k + 2];
  }
  table.insert(table.begin(), unit);
  std::string liveTable = decls.array(table);
  // The arena the function's own buffers span, as planned: checked against the
  // arena and recorded as its high-water mark once, on entry, rather than
  // buffer by buffer.
  if (!cuda()) {
    int64_t extent = 0;
    for (Operation &op : body.without_terminator()) {
      auto offsets = op.getAttrOfType<DenseI64ArrayAttr>(memory::kOffsets);
      if (!offsets || isa<dtg::ConstantOp>(op) || op.hasAttr(memory::kAlias))
        continue;
      for (auto [r, result] : llvm::enumerate(op.getResults()))
        if (!direct.count(result) && offsets[r] >= 0)
          extent = std::max(extent, offsets[r] + plannedBytes(result));
    }
    if (extent > 0)
      os << "  dtcrt_arena_note(ctx, base, " << extent << ");\n";
  }

  llvm::DenseMap<Operation *, std::string> accumulationBegin, accumulationEnd;
  findAccumulations(body, accumulationBegin, accumulationEnd);

  for (Operation &op : body.without_terminator()) {
    std::string node = onnxNodeName(op.getLoc());
    // A fused kernel made by dtc (a gradient, an update) is known by the
    // first ONNX node fused into it, as its kernel's name is.
    // One with no ONNX node at all (a gradient's sum of squares for
    // clipping) is labelled by its kind and ops ("fusion reduction: mul,
    // reduce_sum").
    std::string unnamed;
    if (auto fusion = dyn_cast<dtg::FusionOp>(op); fusion && node.empty()) {
      llvm::SetVector<StringRef> ops;
      for (Operation &inner : fusion.getBody().front().without_terminator()) {
        if (node = onnxNodeName(inner.getLoc()); !node.empty())
          break;
        if (!isa<dtg::ConstantOp>(inner))
          ops.insert(inner.getName().stripDialect());
      }
      if (node.empty())
        unnamed = ("fusion " + fusion.getKind() + ": " +
                   llvm::join(ops.getArrayRef().take_front(4), ", "))
                      .str();
    }
    std::string comment =
        op.getName().getStringRef().str() +
        (node.empty() ? "" : " from '" + commentText(node) + "'");
    if (auto constant = dyn_cast<dtg::ConstantOp>(op)) {
      FailureOr<std::string> data = decls.constant(constant);
      if (failed(data))
        return failure();
      homes[constant.getResult()].constant = *data;
      continue;
    }
    // A collective is known by what it carries where dtc said so (a
    // gradient bucket, a ZeRO-3 gather), a pipeline transfer by its message
    // and the ONNX node that made the activation ("stage0.out1@2
    // /h.3/Add_1"), else by its ONNX node or op.
    auto explain = op.getAttrOfType<StringAttr>("dtc.explain");
    auto message = op.getAttrOfType<StringAttr>("dtc.message");
    bool isDist = isa<dist::DistDialect>(op.getDialect());
    std::string label =
        explain && isDist ? explain.getValue().str()
        : message && isDist
            ? message.getValue().str() + (node.empty() ? "" : " " + node)
        : !node.empty()    ? node
        : !unnamed.empty() ? unnamed
                           : op.getName().getStringRef().str();
    // (Waits first: their results alias their futures' buffers too.)
    if (op.hasAttr(memory::kAlias) && !isa<dist::WaitOp>(op) &&
        !folded.contains(&op)) {
      // (Copy first: inserting the new key may move the map's entries.)
      Home source = homes.lookup(op.getOperand(0));
      homes[op.getResult(0)] = source;
      continue;
    }
    OpCode opCode;
    opCode.comment = comment;
    opCode.opName = op.getName().getStringRef().str();
    opCode.label = label;
    opCode.position = position[&op];
    beginOp(std::move(opCode));
    if (auto it = accumulationBegin.find(&op); it != accumulationBegin.end())
      code << "  dtcrt_pipeline_mark(ctx, " << it->second << ", 1);\n";
    if (auto it = accumulationEnd.find(&op); it != accumulationEnd.end())
      endText = "  dtcrt_pipeline_mark(ctx, " + it->second + ", 0);\n";
    if (folded.contains(&op)) {
      current->comment += ": folded into the multi-tensor update below";
      endOp();
      continue;
    }
    if (auto wait = dyn_cast<dist::WaitOp>(op)) {
      // The result is in the future's buffer once the collective is done.
      Home source = homes.lookup(wait.getFuture());
      homes[wait.getResult()] = source;
      code << (cuda() ? "  dtcg_comm_wait(ctx, " : "  dtcrt_comm_wait(ctx, ")
           << asyncSlot(wait.getFuture().getDefiningOp()) << ");\n";
      endOp();
      continue;
    }
    // The results' buffers; a product that computes a later bias
    // gradient (BiasGradFolds.h) writes that one's too.
    auto place = [&](Operation *owner) -> LogicalResult {
      auto offsets = owner->getAttrOfType<DenseI64ArrayAttr>(memory::kOffsets);
      for (auto [r, result] : llvm::enumerate(owner->getResults())) {
        if (auto it = direct.find(result); it != direct.end()) {
          homes[result].slot = {BufferSlot::Result, it->second};
          continue;
        }
        int64_t offset = offsets ? offsets[r] : -1;
        if (offset < 0)
          return owner->emitError("the CPU target needs planned memory (run "
                                  "dtc-plan-memory first)");
        homes[result].slot = {BufferSlot::Arena, offset};
        if (cuda())
          code << "  dtcrt_arena_note(ctx, base + " << offset << ", "
               << plannedBytes(result) << ");\n";
      }
      return success();
    };
    if (failed(place(&op)))
      return failure();
    if (auto it = biasGradFolds.find(&op);
        it != biasGradFolds.end() && it->second.gemm == &op &&
        it->second.early && failed(place(it->second.reduce)))
      return failure();
    code << "  ctx->current_op = " << labelHole() << ";\n";
    // Guard mode: the buffers live across this kernel, as planned (the
    // function's table of live ranges, filtered at run time by position).
    bool guarded = !cuda() && !isa<func::CallOp>(op) && !inRun.count(&op);
    std::string guardArgs = "ctx, base, " + std::to_string(ownArena) + ", " +
                            liveTable + ", " + std::to_string(ranges.size()) +
                            ", " + positionHole();
    std::string kind = quoted(op.getName().getStringRef()) + ", " +
                       (isa<dist::DistDialect>(op.getDialect()) ? "1" : "0");
    if (!cuda()) {
      // Collectives in flight move on only inside MPI calls: between
      // kernels. One test of the hooks that are on, one call (opHooks).
      code << "  if (ctx->trace" << (guarded ? " | ctx->guard" : "")
           << (async ? " | ctx->comm_pending" : "") << ") opHooks("
           << (guarded ? guardArgs : "ctx, base, 0, nullptr, 0, 0") << ", "
           << kind << ");\n";
    } else {
      if (async)
        code << "  if (ctx->comm_pending) dtcrt_comm_progress(ctx);\n";
      code << "  if (ctx->trace) dtcrt_trace_op(ctx, " << labelHole() << ", "
           << kind << ");\n";
    }
    if (auto call = dyn_cast<func::CallOp>(op)) {
      auto calleeBase = call->getAttrOfType<IntegerAttr>(memory::kCalleeBase);
      if (!calleeBase)
        return call.emitError("the CPU target needs planned memory");
      // The callee's buffers, as slot codes (a pipeline stage's call
      // passes every parameter: one number each).
      SmallVector<int64_t> slotCodes;
      for (Value v : call.getOperands())
        slotCodes.push_back(slotCode(v));
      for (Value v : call.getResults())
        slotCodes.push_back(slotCode(v));
      code << "  {\n    void *callArgs["
           << std::max<size_t>(call.getNumOperands(), 1) << "], *callResults["
           << std::max<size_t>(call.getNumResults(), 1) << "];\n"
           << "    fillSlots(arena, args, results, " << decls.array(slotCodes)
           << ", " << call.getNumOperands() << ", callArgs, "
           << call.getNumResults() << ", callResults);\n";
      // (A constant has no slot: its storage.)
      for (auto [k, v] : llvm::enumerate(call.getOperands()))
        if (!homes.lookup(v).constant.empty())
          code << "    callArgs[" << k << "] = " << buffer(v) << ";\n";
      // A forward or backward of the pipeline schedule: recorded in the
      // runtime's timeline.
      std::string mark = pipelineMark(call);
      if (!mark.empty())
        code << "    dtcrt_pipeline_mark(ctx, " << mark << ", 1);\n";
      code << "    fn_" << call.getCallee()
           << "(callArgs, callResults, ctx, base + " << calleeBase.getInt()
           << ");\n";
      if (!mark.empty())
        code << "    dtcrt_pipeline_mark(ctx, " << mark << ", 0);\n";
      code << "  }\n";
      endOp();
      continue;
    }
    if (auto it = inRun.find(&op); it != inRun.end()) {
      auto [r, i] = it->second;
      emitRunEntry(runs[r], i, runEntries[r]);
      endOp();
      continue;
    }
    if (auto it = biasGradFolds.find(&op);
        it != biasGradFolds.end() && it->second.reduce == &op) {
      current->comment += std::string(": computed ") +
                          (it->second.early ? "above" : "below") +
                          " by its weight's product (a bias-gradient epilogue)";
      endOp();
      continue;
    }
    const EmitRule *rule = getEmitRegistry().lookup(&op);
    if (!rule)
      return op.emitError("the CPU target has no kernel for '")
             << op.getName() << "'";
    if (cuda())
      code << "  dtcg::beginOp(" << labelHole() << ");\n";
    if (failed((*rule)(&op, *this)))
      return failure();
    if (!missing.empty())
      return op.emitError("the CUDA target has no kernel for '")
             << op.getName() << "'"
             << (node.empty() ? std::string() : " (ONNX node '" + node + "')")
             << " (dtcg::" << missing << ")";
    if (!cuda())
      code << "  if (ctx->guard) guardRegion(" << guardArgs << ", "
           << labelHole() << ", true);\n";
    endOp();
  }
  // The CUDA target's multi-tensor updates gather buffers across ops: it
  // prints straight.
  printSteps(codes, !cuda(), os);
  // Results not written in place: (result, slot code, bytes) each.
  SmallVector<int64_t> copies;
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    if (direct.count(v) && direct[v] == i)
      continue;
    if (!homes.lookup(v).constant.empty()) {
      os << (cuda() ? "  dtcg::copy(results[" : "  std::memcpy(results[") << i
         << "], " << buffer(v) << ", " << memory::byteSize(v.getType())
         << ");\n";
      continue;
    }
    copies.append({int64_t(i), slotCode(v), memory::byteSize(v.getType())});
  }
  if (!copies.empty()) {
    std::string table = decls.array(copies);
    os << "  for (const int64_t *c = " << table << "; c < " << table << " + "
       << copies.size() << "; c += 3)\n"
       << (cuda() ? "    dtcg::copy(" : "    std::memcpy(")
       << "results[c[0]], slotAddress(arena, args, results, c[1]), c[2]);\n";
  }
  os << "}\n\n";
  return success();
}

LogicalResult mlir::dtc::cpu::emitFunctions(ModuleOp module,
                                            llvm::raw_ostream &os,
                                            const EmitOptions &options) {
  ProgramDecls decls(options);
  std::string functions;
  llvm::raw_string_ostream fos(functions);
  // Callees first (C++ needs declarations before use): private functions.
  SmallVector<func::FuncOp> order;
  for (auto func : module.getOps<func::FuncOp>())
    if (func.isPrivate())
      order.push_back(func);
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isPrivate())
      order.push_back(func);
  for (func::FuncOp func : order) {
    FunctionEmitter emitter(decls, fos);
    if (failed(emitter.emit(func)))
      return failure();
  }
  os << decls.str << "\n";
  // A buffer by its slot code (BufferSlot: index * 4 + kind).
  os << R"(static void *slotAddress(uint8_t *arena, void *const *args,
                         void *const *results, int64_t code) {
  int64_t k = code / 4;
  return code % 4 == 0 ? static_cast<void *>(arena + k)
         : code % 4 == 1 ? args[k] : results[k];
}

// A call's arguments and results from their slot codes.
static void fillSlots(uint8_t *arena, void *const *args, void *const *results,
                      const int64_t *codes, int nArgs, void **callArgs,
                      int nResults, void **callResults) {
  for (int k = 0; k < nArgs; ++k)
    callArgs[k] = slotAddress(arena, args, results, codes[k]);
  for (int k = 0; k < nResults; ++k)
    callResults[k] = slotAddress(arena, args, results, codes[nArgs + k]);
}

)";
  if (options.cuda) {
    os << "static void initConstants() {\n"
       << decls.initStr << decls.deviceInitStr << "}\n\n";
    os << functions;
    return success();
  }
  // Guard mode: poison (before) and check (after) every byte of this
  // function's region of the arena that no live buffer owns.
  os << R"(static void guardRegion(dtcrt_step_ctx *ctx, int64_t base, int64_t own,
                        const int64_t *ranges, int n, int64_t at,
                        const char *op, bool check) {
  std::vector<int64_t> all = {0, base, base + own,
                              ctx->arena_bytes - base - own};
  // (offset / unit, bytes, first op - the previous first op, last op -
  // first op), after the unit.
  int64_t unit = ranges[0], first = 0;
  for (int i = 0; i < n; ++i) {
    const int64_t *r = ranges + 1 + 4 * i;
    first += r[2];
    if (first <= at && at <= first + r[3]) {
      all.push_back(base + r[0] * unit);
      all.push_back(r[1]);
    }
  }
  int pairs = int(all.size() / 2);
  if (check)
    dtcrt_guard_check(ctx, all.data(), pairs, op);
  else
    dtcrt_guard_fill(ctx, all.data(), pairs);
}

// The labels of a loop's `n` ops over `count` repetitions, made once:
// patterns[j] with each \001 replaced by a number, first + i * step of the
// next (first, step) pair of `fields`.
static const char *const *expandLabels(int64_t count, int n,
                                       const char *const *patterns,
                                       const int64_t *fields) {
  auto *labels = new const char *[count * n];
  for (int64_t i = 0; i < count; ++i) {
    const int64_t *field = fields;
    for (int j = 0; j < n; ++j) {
      std::string label;
      for (const char *p = patterns[j]; *p; ++p) {
        if (*p != '\001') {
          label += *p;
          continue;
        }
        label += std::to_string(field[0] + i * field[1]);
        field += 2;
      }
      labels[i * n + j] = strdup(label.c_str());
    }
  }
  return labels;
}

// Before an op (ctx->current_op), whichever is on: progress of the
// collectives in flight, the trace, guard mode's poison (where `ranges`).
static void opHooks(dtcrt_step_ctx *ctx, int64_t base, int64_t own,
                    const int64_t *ranges, int n, int64_t at, const char *name,
                    int comm) {
  if (ctx->comm_pending)
    dtcrt_comm_progress(ctx);
  if (ctx->trace)
    dtcrt_trace_op(ctx, ctx->current_op, name, comm);
  if (ctx->guard && ranges)
    guardRegion(ctx, base, own, ranges, n, at, ctx->current_op, false);
}

)";
  os << "static void initConstants() {\n" << decls.initStr << "}\n\n";
  os << functions;
  return success();
}
