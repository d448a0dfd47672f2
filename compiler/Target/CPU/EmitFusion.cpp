//===- EmitFusion.cpp - one C++ function per dtg.fusion -------------------===//
//
// Each dtg.fusion becomes one file-scope function `fused_<n>(inputs...,
// outputs...)` called once where the op stands. Elements are computed by
// the scalar functions the unfused kernels use (dtck::scalar::*, rounding to
// the element type after every op), reductions accumulate as dtck's
// reduction kernels (in double, in the order of the operand's elements), and
// a gemm kernel runs dtck::matmulView into its output, then its epilogue in
// place. Views (transpose, slice, reshape) of inputs are strided reads.
// This file prints loop and gemm kernels and the function around every
// kernel; reductions are in EmitFusionReduction.cpp, scalar expressions and
// tables in EmitFusionScalar.cpp.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CPU/FusionPrinter.h"

#include "compiler/Import/ONNX/ONNXImporter.h"
#include "passes/Memory/InPlace.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"

#include <optional>
#include <set>

using namespace mlir;
using namespace mlir::dtc::cpu;
using namespace mlir::dtc::cpu::fusion;

std::string FusionPrinter::openKernel() {
  std::string name = "@NAME@_" + std::to_string(numKernels++);
  kernels << "__global__ void " << name << "(" << params << ") {\n"
          << constantsText;
  return name;
}

std::string FusionPrinter::launch(StringRef kernel, StringRef grid,
                                  StringRef block) {
  return ("  dtcg::launch(\"" + kernel + "\", " + grid + ", " + block + ", " +
          kernel + ", " + args + ");\n")
      .str();
}

LogicalResult FusionPrinter::prepare(llvm::raw_ostream &os) {
  body = &op.getBody().front();
  for (BlockArgument arg : body->getArguments()) {
    Source s;
    s.pointer = "in" + std::to_string(arg.getArgNumber());
    s.strides = dtg::contiguousStrides(dimsOf(arg));
    sources[arg] = s;
  }
  auto yield = cast<dtg::YieldOp>(body->getTerminator());
  for (auto [i, v] : llvm::enumerate(yield.getValues())) {
    outputOf.try_emplace(v, i);
    if (isa<BlockArgument>(v) || sources.count(v))
      return op.emitError("the CPU target cannot fuse a kernel that returns "
                          "an input or a view");
  }
  for (Operation &inner : body->without_terminator()) {
    if (auto constant = dyn_cast<dtg::ConstantOp>(inner)) {
      auto splat = dyn_cast<SplatElementsAttr>(constant.getValue());
      Type t = constant.getType().getElementType();
      std::string type = e.cType(t);
      if (!splat || type.empty())
        return inner.emitError("the CPU target fuses splat constants only");
      std::string value;
      if (t.isInteger(1))
        value = KernelEmitter::literal(splat.getSplatValue<bool>());
      else if (isa<IntegerType>(t))
        value =
            KernelEmitter::literal(splat.getSplatValue<APInt>().getSExtValue());
      else
        value = KernelEmitter::literal(
            splat.getSplatValue<APFloat>().convertToDouble());
      std::string name = "k" + std::to_string(constants.size());
      os << "  const " << type << " " << name << " = " << type << "(" << value
         << ");\n";
      constants[constant.getResult()] = name;
      continue;
    }
    if (!dtg::isFusibleView(&inner))
      continue;
    auto it = sources.find(inner.getOperand(0));
    if (it == sources.end())
      return inner.emitError("the CPU target fuses views of inputs only");
    Source s;
    s.pointer = it->second.pointer;
    if (failed(dtg::applyView(&inner, it->second.strides, it->second.offset,
                              s.strides, s.offset)))
      return inner.emitError("the CPU target cannot read this view with "
                             "strides");
    sources[inner.getResult(0)] = s;
  }
  return success();
}

FailureOr<std::string>
FusionPrinter::valueAt(Value v, ArrayRef<int64_t> space,
                       ArrayRef<std::string> index, llvm::raw_ostream &os,
                       llvm::DenseMap<Value, std::string> &names) {
  if (auto it = names.find(v); it != names.end())
    return it->second;
  if (auto it = constants.find(v); it != constants.end())
    return it->second;
  std::string name = fresh();
  if (v == preloadedValue) {
    os << "      const " << e.cTypeOf(v) << " " << name << " = "
       << preloadedPointer << "["
       << indexExpr(0, dtg::contiguousStrides(space), index) << "];\n";
    names[v] = name;
    return name;
  }
  auto it = sources.find(v);
  if (it == sources.end())
    return op.emitError("the CPU target cannot place a value of this kernel");
  auto merged = mergedStrides.find(v);
  SmallVector<int64_t> strides =
      space == ArrayRef(mergedSpace) && merged != mergedStrides.end()
          ? merged->second
          : broadcastTo(dimsOf(v), it->second.strides, space);
  os << "      const " << e.cTypeOf(v) << " " << name << " = "
     << loadExpression(it->second.pointer,
                       indexExpr(it->second.offset, strides, index), v)
     << ";\n";
  names[v] = name;
  return name;
}

LogicalResult
FusionPrinter::computeOps(ArrayRef<Operation *> ops, ArrayRef<int64_t> space,
                          ArrayRef<std::string> index, llvm::raw_ostream &os,
                          llvm::DenseMap<Value, std::string> &names) {
  for (Operation *inner : ops) {
    if (tabulatedOnly.contains(inner))
      continue;
    SmallVector<std::string> args;
    for (Value operand : operandsOf(inner)) {
      FailureOr<std::string> arg = valueAt(operand, space, index, os, names);
      if (failed(arg))
        return failure();
      args.push_back(*arg);
    }
    FailureOr<std::string> call = callOf(inner, args);
    if (failed(call))
      return failure();
    std::string name = fresh();
    os << "      const " << e.cTypeOf(inner->getResult(0)) << " " << name
       << " = " << *call << ";\n";
    names[inner->getResult(0)] = name;
    if (auto it = outputOf.find(inner->getResult(0)); it != outputOf.end())
      os << "      "
         << storeStatement(
                "out" + std::to_string(it->second) + "[" +
                    indexExpr(0, dtg::contiguousStrides(space), index) + "]",
                name, inner->getResult(0))
         << "\n";
  }
  return success();
}

LogicalResult FusionPrinter::emitLoop(llvm::raw_ostream &os,
                                      ArrayRef<Operation *> ops,
                                      ArrayRef<int64_t> space,
                                      Value preloaded) {
  // Whether an op of the loop reads `v`.
  auto readHere = [&](Value v) {
    return llvm::any_of(v.getUsers(), [&](Operation *user) {
      return llvm::is_contained(ops, user);
    });
  };
  // Every access over `space`: inputs and views (broadcast), the product.
  SmallVector<SmallVector<int64_t>> accesses;
  for (auto &[v, source] : sources)
    if (readHere(v))
      accesses.push_back(broadcastTo(dimsOf(v), source.strides, space));
  std::string text;
  llvm::raw_string_ostream bodyOs(text);
  // Merge adjacent dimensions that every access (and the contiguous
  // outputs) walks as one.
  SmallVector<SmallVector<int64_t>> all(accesses.begin(), accesses.end());
  all.push_back(dtg::contiguousStrides(space));
  SmallVector<int64_t> dims;
  SmallVector<SmallVector<int64_t>> merged(all.size());
  for (size_t d = 0; d < space.size(); ++d) {
    bool merge = !dims.empty();
    for (size_t a = 0; a < all.size() && merge; ++a)
      merge = merged[a].back() == all[a][d] * space[d];
    if (merge) {
      dims.back() *= space[d];
      for (size_t a = 0; a < all.size(); ++a)
        merged[a].back() = all[a][d];
      continue;
    }
    dims.push_back(space[d]);
    for (size_t a = 0; a < all.size(); ++a)
      merged[a].push_back(all[a][d]);
  }
  // Rewrite sources onto the merged space (a copy: other phases keep the
  // originals).
  llvm::DenseMap<Value, Source> saved = sources;
  {
    size_t a = 0;
    for (auto &[v, source] : sources)
      if (readHere(v))
        source.strides = merged[a++];
  }
  SmallVector<std::string> vars;
  for (size_t d = 0; d < dims.size(); ++d)
    vars.push_back("i" + std::to_string(d));
  // CUDA: vectorized when the innermost dimension takes whole vectors and
  // every access along it is contiguous from a vector boundary (or
  // broadcast): each thread then moves kVector elements as one access.
  int64_t total = numel(space);
  bool vector = e.cuda() && !dims.empty() && dims.back() % kVector == 0;
  for (auto &[v, source] : sources) {
    if (!vector || !readHere(v))
      continue;
    ArrayRef<int64_t> strides = source.strides;
    vector = strides.back() == 0 ||
             (strides.back() == 1 && source.offset % kVector == 0 &&
              llvm::all_of(strides.drop_back(), [](int64_t stride) {
                return stride % kVector == 0;
              }));
  }
  // CUDA: one thread per element (or vector) of a grid-stride loop, in a
  // kernel of its own; `hostOs` gets the launch.
  llvm::raw_ostream &hostOs = os;
  std::string kernel;
  if (e.cuda()) {
    kernel = openKernel();
    int64_t slots = vector ? total / kVector : total;
    kernels << "  DTCG_GRID_STRIDE_AS(" << idx << ", flat, " << slots << ") {\n"
            << "    " << idx << " rest = flat;\n    (void)rest;\n";
    for (size_t d = dims.size(); d-- > 0;) {
      int64_t size = dims[d];
      if (vector && d + 1 == dims.size()) {
        size /= kVector;
        kernels << "    const " << idx << " " << vars[d] << " = rest % " << size
                << " * " << kVector << ";\n    rest /= " << size << ";\n";
        continue;
      }
      kernels << "    const " << idx << " " << vars[d] << " = rest % " << size
              << ";\n    rest /= " << size << ";\n";
    }
    hostOs << launch(kernel, "dtcg::gridFor(" + std::to_string(slots) + ")",
                     "dtcg::kBlock");
  }
  // Vectorized: loads and the outputs' vectors stand before the loop over
  // a vector's lanes (bodyOs), stores after it.
  std::string vectorHead, vectorTail;
  llvm::raw_string_ostream headOs(vectorHead), tailOs(vectorTail);
  auto vecOf = [&](Value v) { return "dtcg::Vec<" + e.cTypeOf(v) + ">"; };
  llvm::raw_ostream &loopOs = e.cuda() ? kernels : os;
  if (!e.cuda()) {
    if (numel(space) >= kParallelThreshold && !dims.empty())
      os << "#pragma omp parallel for\n";
    for (size_t d = 0; d < dims.size(); ++d)
      os << "  for (int64_t " << vars[d] << " = 0; " << vars[d] << " < "
         << dims[d] << "; ++" << vars[d] << ")\n";
  }
  loopOs << "  {\n";
  // Sources now hold merged strides of rank dims.size(): read them over
  // the merged space directly.
  llvm::DenseMap<Value, std::string> names;
  preloadedValue = preloaded;
  for (Operation *inner : ops) {
    if (tabulatedOnly.contains(inner))
      continue;
    SmallVector<std::string> args;
    for (Value operand : operandsOf(inner)) {
      if (auto it = names.find(operand); it != names.end()) {
        args.push_back(it->second);
        continue;
      }
      if (auto it = constants.find(operand); it != constants.end()) {
        args.push_back(it->second);
        continue;
      }
      std::string name = fresh();
      std::string pointer, index;
      bool broadcast = false;
      if (operand == preloaded) {
        pointer = preloadedPointer;
        index = indexExpr(0, merged.back(), vars);
      } else {
        auto it = sources.find(operand);
        if (it == sources.end())
          return op.emitError("the CPU target cannot place a value of this "
                              "kernel");
        pointer = it->second.pointer;
        index = indexExpr(it->second.offset, it->second.strides, vars);
        broadcast = it->second.strides.back() == 0;
      }
      std::string type = e.cTypeOf(operand);
      if (!vector || broadcast) {
        (vector ? headOs : bodyOs)
            << "    const " << type << " " << name << " = "
            << loadExpression(pointer, index, operand) << ";\n";
      } else {
        headOs << "    const " << vecOf(operand) << " v" << name
               << " = *reinterpret_cast<const " << vecOf(operand) << " *>(&"
               << pointer << "[" << index << "]);\n";
        bodyOs << "    const " << type << " " << name << " = v" << name
               << ".v[lane];\n";
      }
      names[operand] = name;
      args.push_back(name);
    }
    FailureOr<std::string> call = callOf(inner, args);
    if (failed(call))
      return failure();
    std::string name = fresh();
    bodyOs << "    const " << e.cTypeOf(inner->getResult(0)) << " " << name
           << " = " << *call << ";\n";
    names[inner->getResult(0)] = name;
  }
  // Outputs written by this loop, in output order (outputOf is keyed by
  // pointer: its order would change the source, and ccache's hits, from
  // run to run).
  SmallVector<std::pair<unsigned, Value>> outputs;
  for (auto &[v, number] : outputOf)
    outputs.push_back({number, v});
  llvm::sort(outputs,
             [](const auto &a, const auto &b) { return a.first < b.first; });
  for (auto &[number, v] : outputs) {
    if (!names.count(v) || v == preloaded)
      continue;
    if (dimsOf(v) != space)
      continue;
    std::string at = indexExpr(0, merged.back(), vars);
    if (!vector) {
      bodyOs << "    "
             << storeStatement("out" + std::to_string(number) + "[" + at + "]",
                               names[v], v)
             << "\n";
      continue;
    }
    headOs << "    " << vecOf(v) << " vout" << number << ";\n";
    bodyOs << "    vout" << number << ".v[lane] = " << names[v] << ";\n";
    tailOs << "    *reinterpret_cast<" << vecOf(v) << " *>(&out" << number
           << "[" << at << "]) = vout" << number << ";\n";
  }
  if (vector)
    loopOs << vectorHead << "    #pragma unroll\n"
           << "    for (int lane = 0; lane < " << kVector << "; ++lane) {\n"
           << text << "    }\n"
           << vectorTail << "  }\n";
  else
    loopOs << text << "  }\n";
  if (e.cuda())
    kernels << "  }\n}\n\n";
  sources = std::move(saved);
  return success();
}

size_t FusionPrinter::matchLtEpilogue(Value product,
                                      ArrayRef<Operation *> epilogue,
                                      std::string &arg,
                                      std::optional<unsigned> &auxOutput) {
  // The product feeds only `add(product, bias)`, bias being an input of the
  // product's type read along the last dimension only.
  if (epilogue.empty() || !product.hasOneUse() || outputOf.count(product))
    return 0;
  auto add = dyn_cast<dtg::AddOp>(epilogue.front());
  if (!add || *product.getUsers().begin() != add)
    return 0;
  Value bias = add.getLhs() == product ? add.getRhs() : add.getLhs();
  auto source = sources.find(bias);
  ArrayRef<int64_t> sy = dimsOf(product);
  if (bias == product || source == sources.end() ||
      cast<RankedTensorType>(bias.getType()).getElementType() !=
          cast<RankedTensorType>(product.getType()).getElementType())
    return 0;
  SmallVector<int64_t> strides =
      broadcastTo(dimsOf(bias), source->second.strides, sy);
  for (size_t d = 0; d < strides.size(); ++d)
    if (strides[d] != (d + 1 == strides.size() ? 1 : 0))
      return 0;
  std::string kind = "Bias", aux = "nullptr";
  size_t fused = 1;
  Value sum = add.getResult();
  if (epilogue.size() > 1 && epilogue[1]->getOperand(0) == sum &&
      llvm::all_of(sum.getUsers(), [&](Operation *user) {
        return user == epilogue[1] || isa<dtg::YieldOp>(user);
      })) {
    auto gelu = dyn_cast<dtg::GeluOp>(epilogue[1]);
    // ReLU without an aux (cuBLASLt's keeps a bit mask, not the values).
    if (isa<dtg::ReluOp>(epilogue[1]) && !outputOf.count(sum)) {
      kind = "ReluBias";
      fused = 2;
    } else if (gelu && gelu.getApproximate()) {
      kind = "GeluBias";
      fused = 2;
      if (auto it = outputOf.find(sum); it != outputOf.end()) {
        auxOutput = it->second;
        aux = "out" + std::to_string(it->second);
      }
    }
  }
  std::string type = e.cTypeOf(product);
  arg = ", dtcg::Epilogue<" + type + ">{dtcg::EpilogueKind::" + kind + ", " +
        source->second.pointer + " + " + std::to_string(source->second.offset) +
        ", " + aux + "}";
  return fused;
}

LogicalResult FusionPrinter::emitGemm(llvm::raw_ostream &os) {
  dtg::MatMulOp matmul;
  SmallVector<Operation *> epilogue;
  for (Operation &inner : body->without_terminator()) {
    if (auto m = dyn_cast<dtg::MatMulOp>(inner)) {
      matmul = m;
      continue;
    }
    if (isa<dtg::ConstantOp>(inner) || dtg::isFusibleView(&inner))
      continue;
    epilogue.push_back(&inner);
  }
  if (!matmul)
    return op.emitError("a gemm kernel holds no matmul");
  Value result = matmul.getResult();
  ArrayRef<int64_t> sy = dimsOf(result);
  int r = static_cast<int>(sy.size());
  for (Operation *inner : epilogue)
    if (dimsOf(inner->getResult(0)) != sy)
      return inner->emitError("an op of a gemm kernel must have the "
                              "product's shape");
  // The operands as matrix views.
  auto view = [&](Value v, std::string &pointer) -> FailureOr<std::string> {
    auto it = sources.find(v);
    ArrayRef<int64_t> dims = dimsOf(v);
    if (it == sources.end() || dims.size() < 2 || r < 2)
      return matmul.emitError("the CPU target fuses matmuls of inputs and "
                              "their views of rank >= 2 only");
    pointer = it->second.pointer;
    ArrayRef<int64_t> strides = it->second.strides;
    size_t rank = dims.size();
    SmallVector<int64_t> batch = broadcastTo(
        dims.drop_back(2), ArrayRef(strides).drop_back(2), sy.drop_back(2));
    std::string text = "{" + std::to_string(it->second.offset) + ", {";
    for (auto [i, s] : llvm::enumerate(batch))
      text += (i ? ", " : "") + std::to_string(s);
    text += "}, " + std::to_string(strides[rank - 2]) + ", " +
            std::to_string(strides[rank - 1]) + "}";
    return text;
  };
  std::string pa, pb;
  FailureOr<std::string> va = view(matmul.getLhs(), pa);
  FailureOr<std::string> vb = view(matmul.getRhs(), pb);
  if (failed(va) || failed(vb))
    return failure();
  std::string type = e.cTypeOf(result);
  // CUDA: a leading bias add, with the ReLU or tanh GELU after it, is
  // cuBLASLt's epilogue; the rest of the epilogue reads its result.
  std::string epilogueArg;
  std::optional<unsigned> auxOutput;
  if (biasGrad)
    epilogueArg = ", " + biasGradEpilogue(*biasGrad, type, "bgrad");
  else if (e.cuda()) {
    size_t fused = matchLtEpilogue(result, epilogue, epilogueArg, auxOutput);
    if (fused > 0) {
      result = epilogue[fused - 1]->getResult(0);
      epilogue.erase(epilogue.begin(), epilogue.begin() + fused);
    }
  }
  // Where the product goes: its own output, an output of its type (not the
  // epilogue's aux), or a scratch buffer.
  std::string target;
  if (auto it = outputOf.find(result); it != outputOf.end()) {
    target = "out" + std::to_string(it->second);
  } else {
    for (auto &[v, number] : outputOf)
      if (v.getType() == result.getType() && number != auxOutput &&
          (target.empty() || number < unsigned(std::stoi(target.substr(3)))))
        target = "out" + std::to_string(number);
  }
  if (target.empty() && e.cuda()) {
    // A device buffer of the launcher's own (outside the arena), which the
    // epilogue kernel takes as one more parameter.
    os << "  static " << type << " *const product = static_cast<" << type
       << " *>(dtcg::deviceScratch(" << numel(sy) << " * sizeof(" << type
       << ")));\n";
    params += ", " + type + " *__restrict product";
    args += ", product";
    target = "product";
  } else if (target.empty()) {
    os << "  std::vector<" << type << "> product(" << numel(sy) << ");\n";
    target = "product.data()";
  }
  StringRef lib = e.cuda() ? "dtcg" : "dtck";
  os << "  static constexpr " << lib << "::MatrixView va = " << *va << ";\n";
  os << "  static constexpr " << lib << "::MatrixView vb = " << *vb << ";\n";
  // The product's shape in the body, not among the program's shared
  // declarations: the kernel may be built in a file of its own.
  os << "  static constexpr dtck::Shape productShape"
     << KernelEmitter::shapeInitializer(sy) << ";\n";
  os << "  " << lib << "::matmulView(productShape, "
     << dimsOf(matmul.getLhs()).back() << ", " << pa << ", va, " << pb
     << ", vb, " << target << epilogueArg << ");\n";
  if (epilogue.empty())
    return success();
  preloadedPointer = target;
  return emitLoop(os, epilogue, sy, result);
}

LogicalResult FusionPrinter::emit() {
  if (failed(e.checkTensors(op)))
    return failure();
  for (Operation &inner : op.getBody().front().without_terminator())
    if (failed(e.checkTensors(&inner)))
      return failure();
  std::string name = e.uniqueName("fused");
  // CUDA: kernels carry the first ONNX node's name (profilers show it).
  if (e.cuda())
    for (Operation &inner : op.getBody().front().without_terminator())
      if (std::string node = dtc::onnxNodeName(inner.getLoc()); !node.empty()) {
        std::string suffix;
        for (char c : node)
          suffix += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
        while (!suffix.empty() && suffix[0] == '_')
          suffix.erase(0, 1);
        if (suffix.size() > 40)
          suffix.resize(40);
        if (!suffix.empty())
          name += "_" + suffix;
        break;
      }
  // The comment (the ONNX nodes it came from), then the function from its
  // parameter list on: a kernel with the same parameters and body is
  // emitted once (KernelEmitter::defineFunction).
  std::string comment, text;
  llvm::raw_string_ostream commentOs(comment), os(text);
  llvm::SetVector<std::string, std::vector<std::string>, std::set<std::string>>
      nodes;
  for (Operation &inner : op.getBody().front().without_terminator())
    if (!isa<dtg::ConstantOp>(inner))
      if (std::string node = dtc::onnxNodeName(inner.getLoc()); !node.empty())
        nodes.insert(node);
  commentOs << "// " << op.getKind() << " kernel";
  if (!nodes.empty()) {
    commentOs << " of";
    for (auto [i, node] : llvm::enumerate(nodes)) {
      if (i == 8) {
        commentOs << " and " << nodes.size() - 8 << " more";
        break;
      }
      commentOs << (i ? ", " : " ") << node;
    }
  }
  commentOs << "\n";
  SmallVector<std::string> params, args;
  // An output the memory plan may place over an input (memory::mayWriteOver)
  // shares its storage: neither pointer of such a pair is __restrict.
  llvm::SmallDenseSet<unsigned> sharedIn, sharedOut;
  for (unsigned r = 0; r < op->getNumResults(); ++r)
    for (unsigned k = 0; k < op->getNumOperands(); ++k)
      if (mlir::dtc::memory::mayWriteOver(op, r, k)) {
        sharedIn.insert(k);
        sharedOut.insert(r);
      }
  for (auto [i, v] : llvm::enumerate(op.getInputs())) {
    params.push_back("const " + e.cTypeOf(v) +
                     (sharedIn.contains(i) ? " *in" : " *__restrict in") +
                     std::to_string(i));
    args.push_back(e.buffer(v));
  }
  for (auto [i, v] : llvm::enumerate(op.getResults())) {
    params.push_back(e.cTypeOf(v) +
                     (sharedOut.contains(i) ? " *out" : " *__restrict out") +
                     std::to_string(i));
    args.push_back(e.buffer(v));
  }
  this->params = llvm::join(params, ", ");
  for (auto [i, v] : llvm::enumerate(op.getInputs()))
    this->args += (i ? ", in" : "in") + std::to_string(i);
  for (unsigned i = 0; i < op->getNumResults(); ++i)
    this->args += ", out" + std::to_string(i);
  // CUDA: a bias gradient folded into this kernel's product
  // (BiasGradFolds.h) is one more output of the launcher (not of its
  // kernels), which the product writes.
  if ((biasGrad = e.biasGradFold(op))) {
    Value sum = biasGrad->reduce->getResult(0);
    params.push_back(e.cTypeOf(sum) + " *__restrict bgrad");
    args.push_back(e.buffer(sum));
  }
  if (e.cuda()) {
    // Kernels and launcher: "@NAME@_<k>" kernels, then the launcher's
    // parameters and body after "@HOST@" (KernelEmitter::defineFunction).
    os << "@HOST@";
  }
  os << "(" << llvm::join(params, ", ") << ") {\n";
  if (e.cuda()) {
    // Every value the kernels index: the operands, results and each
    // iteration space (a reduction's input may be larger than them all).
    constexpr int64_t kFits = (int64_t(1) << 31) - 2 * 132 * 16 * 256;
    auto fits = [&](Value v) {
      auto type = dyn_cast<RankedTensorType>(v.getType());
      return !type || numel(type.getShape()) < kFits;
    };
    bool small = llvm::all_of(op->getOperands(), fits) &&
                 llvm::all_of(op->getResults(), fits);
    for (Operation &inner : op.getBody().front().without_terminator())
      small = small && llvm::all_of(inner.getResults(), fits);
    if (small)
      idx = "int";
  }
  {
    llvm::raw_string_ostream constantsOs(constantsText);
    if (failed(prepare(e.cuda() ? constantsOs : os)))
      return failure();
  }
  if (!e.cuda() && failed(planTables(os)))
    return failure();
  StringRef kind = op.getKind();
  LogicalResult status = failure();
  if (kind == "loop") {
    SmallVector<Operation *> ops;
    for (Operation &inner : body->without_terminator())
      if (!isa<dtg::ConstantOp>(inner) && !dtg::isFusibleView(&inner))
        ops.push_back(&inner);
    if (ops.empty())
      return op.emitError("a loop kernel computes nothing");
    ArrayRef<int64_t> space = dimsOf(ops.back()->getResult(0));
    for (Operation *inner : ops)
      if (dimsOf(inner->getResult(0)) != space)
        return inner->emitError("the ops of a loop kernel must share their "
                                "result shape");
    status = emitLoop(os, ops, space, Value());
  } else if (kind == "reduction") {
    status = emitReduction(os);
  } else if (kind == "gemm") {
    status = emitGemm(os);
  } else {
    return op.emitError("the CPU target has no kernel of kind '")
           << kind << "'";
  }
  if (failed(status))
    return failure();
  os << "}\n\n";
  if (e.cuda())
    text = kernelsText + text;
  std::string callee = e.defineFunction(name, comment, text);
  e.statement(callee + "(" + llvm::join(args, ", ") + ");");
  return success();
}

void mlir::dtc::cpu::registerFusionEmitters(EmitRegistry &registry) {
  registry.add<dtg::FusionOp>([](Operation *op, KernelEmitter &e) {
    return FusionPrinter(cast<dtg::FusionOp>(op), e).emit();
  });
}
