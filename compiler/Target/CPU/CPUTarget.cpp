//===- CPUTarget.cpp - C++ with OpenMP and OpenBLAS, built by the host compiler
//-===//

#include "compiler/Target/CPU/CppEmitter.h"
#include "compiler/Target/CPU/CppTarget.h"
#include "compiler/Target/CPU/KernelEmitter.h"
#include "compiler/Target/CPU/RuntimeConfig.h"
#include "compiler/Target/HostBuild.h"
#include "compiler/Target/TargetInfo.h"
#include "compiler/Target/WeightsLayout.h"

#include "dialects/DTG/Interp/Tensor.h"
#include "dialects/Dist/IR/DistOps.h"
#include "passes/Memory/Passes.h"

#include "llvm/ADT/StringExtras.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// The strings of the tensor descriptors (names, roles, dtypes), each once,
/// in one array `kText`: a deep model's results repeat its arguments' names.
class DescText {
public:
  /// `text` as an address constant into kText.
  std::string ref(StringRef text) {
    auto [it, inserted] = offsets.try_emplace(text, pool.size());
    if (inserted) {
      pool += text;
      pool += '\0';
    }
    return "kText + " + std::to_string(it->second);
  }
  void print(llvm::raw_ostream &os) const {
    os << "static const char kText[] =";
    for (size_t at = 0; at < pool.size(); at += 96)
      os << "\n    "
         << cpu::KernelEmitter::quoted(StringRef(pool).substr(at, 96));
    os << (pool.empty() ? " \"\"" : "") << ";\n";
  }

private:
  std::string pool;
  llvm::StringMap<size_t> offsets;
};

/// The members of the tensor descriptor of argument or result `i` of
/// `func`, as C++ (kDesc* name their places).
SmallVector<std::string> descMembers(func::FuncOp func, unsigned i, bool isArg,
                                     const WeightsLayout &weights,
                                     DescText &text) {
  DictionaryAttr attrs =
      isArg ? func.getArgAttrDict(i) : func.getResultAttrDict(i);
  auto type = cast<RankedTensorType>(isArg ? func.getArgument(i).getType()
                                           : func.getResultTypes()[i]);
  auto str = [&](StringRef key) {
    auto s = attrs ? attrs.getAs<StringAttr>(key) : StringAttr();
    return s ? s.getValue() : StringRef("");
  };
  double defaultValue = 0;
  if (attrs)
    if (Attribute d = attrs.get("dtg.default")) {
      if (auto f = dyn_cast<FloatAttr>(d))
        defaultValue = f.getValueAsDouble();
      else if (auto n = dyn_cast<IntegerAttr>(d))
        // A boolean (i1) true is 1, not its sign-extended -1.
        defaultValue = n.getType().isInteger(1)
                           ? double(!n.getValue().isZero())
                           : double(n.getValue().getSExtValue());
    }
  int64_t offset = isArg ? weights.offsetOf(i) : -1;
  bool inPlace = !isArg && attrs && attrs.get(memory::kDonatedArg);
  std::string dims = "{";
  for (auto [k, d] : llvm::enumerate(type.getShape()))
    dims += (k ? ", " : "") + std::to_string(d);
  // A block of a split tensor: its split dimension and the axes (mask of
  // DTCRT_AXIS_*: pp 1, dp 2, tp 4) that split it.
  // Axes after the first cut each block of the first's again (ZeRO's dp
  // inside a tensor-parallel block).
  int shardDim = 0, shardAxes = 0, innerAxes = 0;
  if (auto sharding =
          attrs ? attrs.getAs<dist::ShardingAttr>("dtc.sharding") : nullptr)
    if (str("dtg.role") != "input")
      for (auto [d, list] : llvm::enumerate(sharding.getDims()))
        if (!list.getAxes().empty()) {
          shardDim = int(d);
          shardAxes = cpu::meshAxesMask(list.getAxes());
          innerAxes = cpu::meshAxesMask(list.getAxes().drop_front());
        }
  SmallVector<std::string> members = {
      text.ref(str("dtg.name")),
      text.ref(str("dtg.role")),
      text.ref(cpu::dtypeName(type.getElementType())),
      std::to_string(type.getRank()),
      dims + "}",
      std::to_string(offset),
      cpu::KernelEmitter::literal(defaultValue),
      "0",
      inPlace ? "1" : "0",
      std::to_string(shardDim),
      std::to_string(shardAxes),
      std::to_string(innerAxes)};
  // The model file's shape of a tensor held in another (a fused
  // projection by its parts).
  if (auto shape =
          attrs ? attrs.getAs<DenseI64ArrayAttr>("dtg.model_shape") : nullptr) {
    members.push_back(std::to_string(shape.size()));
    std::string modelDims = "{";
    for (auto [k, d] : llvm::enumerate(shape.asArrayRef()))
      modelDims += (k ? ", " : "") + std::to_string(d);
    members.push_back(modelDims + "}");
  }
  return members;
}

/// Places in descMembers' list.
enum : size_t { kDescName, kDescRole, kDescOffset = 5, kDescInPlace = 8 };

/// Prints a descriptor from its members (those left out are zero).
void printDesc(llvm::raw_ostream &os, SmallVector<std::string> members) {
  while (members.size() > kDescOffset + 1 &&
         (members.back() == "0" || members.back() == "0.0"))
    members.pop_back();
  os << "    {" << llvm::join(members, ", ") << "},\n";
}

/// Prints the descriptors of the results of `func`: one the same as an
/// argument of its name and role but for its initial value and donation (a
/// parameter, an optimizer state) as a copy of that argument's
/// (`argMembers`: those of kArgs).
void printResultDescs(llvm::raw_ostream &os, func::FuncOp func,
                      const WeightsLayout &weights, DescText &text,
                      ArrayRef<SmallVector<std::string>> argMembers) {
  llvm::StringMap<size_t> argOf;
  for (auto [j, members] : llvm::enumerate(argMembers))
    argOf.try_emplace(members[kDescName] + members[kDescRole], j);
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    SmallVector<std::string> members =
        descMembers(func, i, /*isArg=*/false, weights, text);
    auto it = argOf.find(members[kDescName] + members[kDescRole]);
    if (it != argOf.end()) {
      SmallVector<std::string> copy = argMembers[it->second];
      copy[kDescOffset] = "-1";
      copy[kDescInPlace] = members[kDescInPlace];
      if (copy == members) {
        os << "    asResult(kArgs[" << it->second << "], "
           << members[kDescInPlace] << "),\n";
        continue;
      }
    }
    printDesc(os, std::move(members));
  }
}

} // namespace

void CppProgramTarget::emitHeader(llvm::raw_ostream &os) {
  os << "// Generated by dtc (CPU target). Deterministic: regenerate, do "
        "not edit.\n";
  os << "#include \"dtcrt/dtcrt.h\"\n";
  for (StringRef family :
       {"Elementwise", "Shape", "Reduction", "NN", "Training"})
    os << "#include \"dtcrt/kernels/" << family << ".h\"\n";
  os << "#include <algorithm>\n#include <cstring>\n#include <limits>\n"
        "#include <string>\n#include <vector>\n\n";
}

/// Fused kernels go to files of their own, of about this many bytes each,
/// compiled in parallel with the step's file (MobileNetV2's 150 KB of
/// kernels took 4.3 s of the 16 s one file took on one core); fewer than
/// half that stay in the step's file, where a file's headers would cost
/// more than the kernels.
constexpr size_t kKernelFileBytes = 40 << 10;

/// The start of a file of fused kernels that `mainFile` declares: only the
/// headers they use (the elementwise and reduction scalar functions; the
/// products' where one calls matmulView), half the parse time of the
/// step's.
static std::string kernelFileHeader(StringRef mainFile,
                                    ArrayRef<const std::string *> kernels) {
  bool products = llvm::any_of(kernels, [](const std::string *kernel) {
    return StringRef(*kernel).contains("matmulView(");
  });
  return "// Generated by dtc (CPU target): fused kernels that " +
         mainFile.str() +
         " declares. Deterministic: regenerate, do not edit.\n"
         "#include \"dtcrt/kernels/Elementwise.h\"\n"
         "#include \"dtcrt/kernels/Reduction.h\"\n" +
         (products ? "#include \"dtcrt/kernels/Matmul.h\"\n" : "") +
         "#include <algorithm>\n#include <vector>\n\n";
}

/// Adds `kernels` (definitions, in emission order) to `sources` after the
/// step's file: appended to it when they are few, else as
/// `<stem>-kernels-<k>.cpp` files of about kKernelFileBytes.
static void addKernelFiles(ArrayRef<std::string> kernels,
                           std::vector<SourceFile> &sources) {
  size_t total = 0;
  for (const std::string &kernel : kernels)
    total += kernel.size();
  if (total < kKernelFileBytes / 2) {
    for (const std::string &kernel : kernels)
      sources.front().text += kernel;
    return;
  }
  // Each kernel in the file whose share of the bytes it starts in.
  size_t files = (total + kKernelFileBytes - 1) / kKernelFileBytes;
  SmallVector<SmallVector<const std::string *>> groups;
  size_t done = 0;
  for (const std::string &kernel : kernels) {
    if (groups.empty() || done * files / total >= groups.size())
      groups.emplace_back();
    groups.back().push_back(&kernel);
    done += kernel.size();
  }
  std::string mainFile = sources.front().name;
  std::string stem = llvm::sys::path::stem(mainFile).str();
  for (auto [k, group] : llvm::enumerate(groups)) {
    SourceFile file{(stem + "-kernels-" + Twine(k) + ".cpp").str(),
                    kernelFileHeader(mainFile, group)};
    for (const std::string *kernel : group)
      file.text += *kernel;
    sources.push_back(std::move(file));
  }
}

LogicalResult CppProgramTarget::emitProgram(ModuleOp module, ProgramKind kind,
                                            StringRef mainFile,
                                            std::vector<SourceFile> &sources) {
  std::string text;
  llvm::raw_string_ostream os(text);
  emitHeader(os);
  std::vector<std::string> kernels;
  if (failed(emitModel(module, kind, /*stage=*/0, "", os,
                       splitsKernels() ? &kernels : nullptr)))
    return failure();
  os << "int main(int argc, char **argv) {\n  return "
     << (kind == ProgramKind::Training ? "dtcrt_train_main"
                                       : "dtcrt_forward_main")
     << "(argc, argv, &kModel);\n}\n";
  sources = {{mainFile.str(), std::move(text)}};
  addKernelFiles(kernels, sources);
  return success();
}

LogicalResult CppProgramTarget::emitPipelinedProgram(
    ArrayRef<ModuleOp> stages, ArrayRef<std::string> weightsFiles,
    StringRef mainFile, std::vector<SourceFile> &sources) {
  std::string text;
  llvm::raw_string_ostream os(text);
  emitHeader(os);
  std::vector<std::string> kernels;
  llvm::StringMap<std::string> sharedKernels;
  for (auto [s, module] : llvm::enumerate(stages)) {
    std::string space = "namespace stage" + std::to_string(s) + " {\n";
    os << space << "\n";
    std::vector<std::string> stageKernels;
    if (failed(emitModel(
            module, ProgramKind::Training, int64_t(s), weightsFiles[s], os,
            splitsKernels() ? &stageKernels : nullptr, &sharedKernels)))
      return failure();
    os << "} // namespace stage" << s << "\n\n";
    // Each kernel in its stage's namespace, wherever it is defined.
    for (std::string &kernel : stageKernels)
      kernels.push_back(space + kernel + "} // namespace stage" +
                        std::to_string(s) + "\n\n");
  }
  os << "static const dtcrt_model_desc *const kStages[] = {";
  for (size_t s = 0; s < stages.size(); ++s)
    os << (s ? ", " : "") << "&stage" << s << "::kModel";
  os << "};\n\nint main(int argc, char **argv) {\n"
     << "  return dtcrt_train_main_stages(argc, argv, kStages, "
     << stages.size() << ");\n}\n";
  sources = {{mainFile.str(), std::move(text)}};
  addKernelFiles(kernels, sources);
  return success();
}

/// Fails on an argument or result of `func` that the runtime cannot read or
/// write: 8-bit floats and 4-bit integers live only inside the step.
static LogicalResult checkBoundaryTypes(func::FuncOp func) {
  auto check = [&](Type type, DictionaryAttr attrs, StringRef what,
                   unsigned i) -> LogicalResult {
    Type element = cast<RankedTensorType>(type).getElementType();
    if (!dtg::interp::isFloat8(element) && !dtg::interp::isInt4(element))
      return success();
    auto name = attrs ? attrs.getAs<StringAttr>("dtg.name") : StringAttr();
    return func.emitError("the runtime reads and writes no 8-bit floats or "
                          "4-bit integers, but ")
           << what << " " << i << (name ? " ('" + name.str() + "')" : "")
           << " of @" << func.getSymName() << " is " << type
           << " (cast it to a wider type inside the model)";
  };
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (failed(check(func.getArgument(i).getType(), func.getArgAttrDict(i),
                     "argument", i)))
      return failure();
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (failed(check(func.getResultTypes()[i], func.getResultAttrDict(i),
                     "result", i)))
      return failure();
  return success();
}

LogicalResult
CppProgramTarget::emitModel(ModuleOp module, ProgramKind kind, int64_t stage,
                            StringRef weightsFile, llvm::raw_ostream &os,
                            std::vector<std::string> *kernels,
                            llvm::StringMap<std::string> *sharedKernels) {
  cpu::EmitOptions options = emitOptions();
  options.kernelDefinitions = kernels;
  options.sharedKernels = sharedKernels;
  options.kernelScope = "stage" + std::to_string(stage) + "::";
  if (failed(cpu::emitFunctions(module, os, options)))
    return failure();
  StringRef entry = kind == ProgramKind::Training ? "train_step" : "main";
  auto func = module.lookupSymbol<func::FuncOp>(entry);
  if (!func)
    return module.emitError("no @") << entry << " to emit";
  if (failed(checkBoundaryTypes(func)))
    return failure();
  WeightsLayout weights(func);
  // The descriptors after the strings they point into.
  DescText text;
  std::string descs;
  llvm::raw_string_ostream dos(descs);
  SmallVector<SmallVector<std::string>> argMembers;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    argMembers.push_back(descMembers(func, i, /*isArg=*/true, weights, text));
  // (constexpr: results copy their arguments' descriptors.)
  dos << "static constexpr dtcrt_tensor_desc kArgs[] = {\n";
  for (const SmallVector<std::string> &members : argMembers)
    printDesc(dos, members);
  dos << "};\n";
  dos << "// A result's descriptor from its argument's: no initial value.\n"
         "static constexpr dtcrt_tensor_desc asResult(dtcrt_tensor_desc d,\n"
         "                                            int inPlace) {\n"
         "  d.weights_offset = -1;\n"
         "  d.in_place = inPlace;\n"
         "  return d;\n"
         "}\n";
  dos << "static const dtcrt_tensor_desc kResults[] = {\n";
  printResultDescs(dos, func, weights, text, argMembers);
  dos << "};\n";
  // The forward-only step of a training program (--eval-data): the
  // arguments of @train_step, its own results.
  auto eval = kind == ProgramKind::Training
                  ? module.lookupSymbol<func::FuncOp>("eval_step")
                  : func::FuncOp();
  if (eval) {
    if (eval.getFunctionType().getInputs() !=
        func.getFunctionType().getInputs())
      return eval.emitError("@eval_step must take the arguments of @") << entry;
    if (failed(checkBoundaryTypes(eval)))
      return failure();
    dos << "static const dtcrt_tensor_desc kEvalResults[] = {\n";
    printResultDescs(dos, eval, weights, text, argMembers);
    dos << "};\n";
  }
  text.print(os);
  os << descs << "\n";
  // One arena serves both steps: the larger plan.
  int64_t arenaBytes = 0;
  for (func::FuncOp f : {func, eval})
    if (f)
      if (auto a = f->getAttrOfType<IntegerAttr>(memory::kArenaBytes))
        arenaBytes = std::max(arenaBytes, a.getInt());
  emitWrappers(os, entry, bool(eval), arenaBytes);
  auto batch = [&](StringRef key) {
    auto v = module->getAttrOfType<IntegerAttr>(key);
    return v ? v.getInt() : 0;
  };
  os << "static const dtcrt_model_desc kModel = {\n"
     << "    " << cpu::KernelEmitter::quoted(entry) << ", "
     << func.getNumArguments() << ", kArgs, " << func.getNumResults()
     << ", kResults, " << arenaBytes << ", " << batch("dtc.global_batch")
     << ", " << batch("dtc.micro_batch") << ", step";
  if (eval)
    os << ", evalStep, " << eval.getNumResults() << ", kEvalResults";
  else
    os << ", nullptr, 0, nullptr";
  // The mesh (pp, dp, tp) the program is one rank of.
  std::array<int64_t, 3> sizes = dist::getStandardMeshSizes(module);
  os << ", " << sizes[0] << ", " << sizes[1] << ", " << sizes[2];
  os << ", " << stage << ", "
     << (weightsFile.empty() ? std::string("nullptr")
                             : cpu::KernelEmitter::quoted(weightsFile))
     << extraModelFields() << "};\n\n";
  return success();
}

void CppProgramTarget::emitWrappers(llvm::raw_ostream &os, StringRef entry,
                                    bool eval, int64_t arenaBytes) {
  (void)arenaBytes;
  auto emitWrapper = [&](StringRef wrapper, StringRef callee) {
    os << "static void " << wrapper
       << "(void *const *args, void *const *results, "
          "dtcrt_step_ctx *ctx) {\n"
       << "  static const bool initialized = (initConstants(), true);\n"
       << "  (void)initialized;\n"
       << "  fn_" << callee << "(args, results, ctx, 0);\n}\n\n";
  };
  emitWrapper("step", entry);
  if (eval)
    emitWrapper("evalStep", "eval_step");
}

HostBuild mlir::dtc::cpuHostBuild(StringRef arch) {
  HostBuild build;
  build.compiler = DTC_HOST_CXX;
  // -ffp-contract=off: no fused multiply-adds the source does not ask
  // for, so results do not depend on -march. -fno-trapping-math: nothing
  // reads the floating-point exception flags, so a select between two
  // computed values (a clamp, a branch-free exp or erf) may run as a
  // vector blend; without it GCC keeps such loops scalar on AVX2.
  // -fno-math-errno: nothing reads errno after a math function either, so
  // a square root is one instruction instead of a test and a libm call
  // for negative operands, and loops with one (AdamW's) vectorize.
  // Results are the same bits.
  build.compileFlags = {"-std=c++17",
                        "-O3",
                        "-ffp-contract=off",
                        "-fno-trapping-math",
                        "-fno-math-errno",
                        "-fopenmp",
                        "-w",
                        "-march=" + arch.str(),
                        "-I" DTC_RUNTIME_INCLUDE_DIR};
  build.linkFlags = {"-fopenmp"};
  build.libraries = {DTC_RUNTIME_LIBRARY};
  SmallVector<StringRef> libs;
  StringRef(DTC_RUNTIME_LINK_LIBRARIES).split(libs, ' ', -1, false);
  for (StringRef lib : libs)
    build.libraries.push_back(lib.str());
  return build;
}

namespace {
class CPUTargetInfo : public CppProgramTarget {
  CPUTargetOptions options;

public:
  explicit CPUTargetInfo(const CPUTargetOptions &options) : options(options) {}

  StringRef name() const override { return "cpu"; }

  bool buildExecutable(ArrayRef<std::string> sources, StringRef output,
                       std::string &log) override {
    HostBuild build = cpuHostBuild(options.arch);
    // The tools' output, kept when the build fails.
    SmallString<128> logFile;
    llvm::sys::fs::createTemporaryFile("dtc-build", "log", logFile);
    if (!buildHostProgram(build, sources, output, logFile, log))
      return false;
    llvm::sys::fs::remove(logFile);
    return true;
  }
};
} // namespace

std::unique_ptr<TargetInfo>
mlir::dtc::createCPUTargetInfo(const CPUTargetOptions &options) {
  return std::make_unique<CPUTargetInfo>(options);
}
