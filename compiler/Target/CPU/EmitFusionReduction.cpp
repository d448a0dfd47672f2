//===- EmitFusionReduction.cpp - reduction kernels of dtg.fusion ----------===//
//
// A reduction kernel: its prologue at the input's shape, the reductions
// (sums in double, each result's elements in a fixed order), and the
// epilogue at the result's shape. On the CPU, column reductions take blocks
// of contiguous results; row reductions take kRowWays results at a time,
// long results in kRowLanes partial sums and long single runs in
// parts across the threads, adjacent reduced dimensions merged where every
// access walks them as one. On CUDA, one warp or block per result, or a
// split over blocks combined in order.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CPU/FusionPrinter.h"

using namespace mlir;
using namespace mlir::dtc::cpu;
using namespace mlir::dtc::cpu::fusion;

void FusionPrinter::addPartials(llvm::raw_ostream &hostOs, int64_t slots) {
  hostOs << "  static double *const partial = static_cast<double *>("
         << "dtcg::deviceScratch(" << slots << " * sizeof(double)));\n";
  params += ", double *__restrict partial";
  args += ", partial";
}

LogicalResult FusionPrinter::emitCombineParts(
    llvm::raw_ostream &hostOs, ArrayRef<Operation *> reductions,
    int64_t outCount, int64_t parts,
    function_ref<LogicalResult(StringRef)> emitResults) {
  // One thread per result combines its parts in order, then writes the
  // result and the epilogue.
  llvm::raw_ostream &os = kernels;
  int64_t numAcc = static_cast<int64_t>(reductions.size());
  std::string kernel = openKernel();
  hostOs << launch(kernel, std::to_string((outCount + 31) / 32), "32");
  os << "  const " << idx << " r = " << idx
     << "(blockIdx.x) * 32 + threadIdx.x;\n"
     << "  " << idx << " rest = r;\n  (void)rest;\n"
     << "  if (r < " << outCount << ") {\n";
  for (auto [i, r] : llvm::enumerate(reductions))
    os << "    double acc" << i << " = partial[r * " << parts * numAcc << " + "
       << i << "];\n"
       << "    for (" << idx << " p = 1; p < " << parts << "; ++p)\n      acc"
       << i << " = dtcg::combineOp(acc" << i << ", partial[(r * " << parts
       << " + p) * " << numAcc << " + " << i << "], " << reduceOpOf(r)
       << ");\n";
  if (failed(emitResults("")))
    return failure();
  os << "  }\n}\n\n";
  return success();
}

LogicalResult FusionPrinter::emitDeviceReduction(
    llvm::raw_ostream &hostOs, ArrayRef<int64_t> in, ArrayRef<int64_t> axes,
    ArrayRef<int64_t> keptDims, ArrayRef<Operation *> reductions,
    ArrayRef<std::string> acc,
    function_ref<void(ArrayRef<int64_t>, SmallVectorImpl<std::string> &,
                      StringRef)>
        emitKept,
    function_ref<LogicalResult(ArrayRef<std::string>, StringRef)> emitUpdates,
    function_ref<LogicalResult(StringRef)> emitResults) {
  llvm::raw_ostream &os = kernels;
  auto initOf = [&](Operation *r) -> StringRef {
    int op = reduceOpOf(r);
    return op == 1 ? "-HUGE_VAL" : op == 2 ? "HUGE_VAL" : "0.0";
  };
  int64_t total = numel(in);
  int64_t outCount = 1;
  for (int64_t d : keptDims)
    outCount *= in[d];
  int64_t count = total / std::max<int64_t>(outCount, 1);
  SmallVector<std::string> inIndex(in.size());
  // The reduced coordinates of `q` (the last reduced axis fastest).
  auto emitReduced = [&] {
    os << "      " << idx << " left = q;\n      (void)left;\n";
    for (int64_t a : llvm::reverse(axes)) {
      inIndex[a] = "j" + std::to_string(a);
      os << "      const " << idx << " " << inIndex[a] << " = left % " << in[a]
         << ";\n      left /= " << in[a] << ";\n";
    }
  };
  auto combine = [&](StringRef function) {
    for (auto [r, name] : llvm::zip(reductions, acc))
      os << "    " << name << " = dtcg::" << function << "(" << name << ", "
         << reduceOpOf(r) << ");\n";
  };
  int64_t last = static_cast<int64_t>(in.size()) - 1;
  bool column = !keptDims.empty() && keptDims.back() == last && in[last] >= 8 &&
                count > 1;
  int64_t numAcc = static_cast<int64_t>(acc.size());
  // The accumulators, then a loop (`header` in C) over reduced elements
  // updating them.
  auto emitAccumulation = [&](const std::string &header) -> LogicalResult {
    for (auto [r, name] : llvm::zip(reductions, acc))
      os << "    double " << name << " = " << initOf(r) << ";\n";
    os << "    for (" << header << ") {\n";
    emitReduced();
    if (failed(emitUpdates(inIndex, "")))
      return failure();
    os << "    }\n";
    return success();
  };
  // The reduced elements [begin, end) of part `part` of `chunk` each.
  auto emitPartBounds = [&](StringRef part, int64_t chunk) {
    os << "  const " << idx << " begin = " << part << " * " << chunk << ";\n"
       << "  const " << idx << " end = begin + " << chunk << " < " << count
       << " ? begin + " << chunk << " : " << count << ";\n";
  };
  if (!column && count > 1024 && outCount < 264 && count >= 16384) {
    // Few long rows (a gradient's sum of squares for clipping): each row's
    // parts go to blocks of their own, which leave partial results in a
    // scratch buffer; a second kernel combines each row's parts in order.
    int64_t parts = std::min<int64_t>((count + 4095) / 4096,
                                      std::max<int64_t>(2, 2048 / outCount));
    int64_t chunk = (count + parts - 1) / parts;
    addPartials(hostOs, outCount * parts * numAcc);
    // Block b takes part b % parts of row b / parts.
    std::string kernel = openKernel();
    hostOs << launch(kernel, std::to_string(outCount * parts), "dtcg::kBlock");
    os << "  const " << idx << " b = blockIdx.x;\n"
       << "  const " << idx << " r = b / " << parts << ";\n";
    emitPartBounds("b % " + std::to_string(parts), chunk);
    emitKept(keptDims, inIndex, "r");
    if (failed(emitAccumulation(
            idx + " q = begin + threadIdx.x; q < end; q += blockDim.x")))
      return failure();
    combine("blockReduce");
    for (auto [i, name] : llvm::enumerate(acc))
      os << "    if (threadIdx.x == 0)\n      partial[b * " << numAcc << " + "
         << i << "] = " << name << ";\n";
    os << "}\n\n";
    return emitCombineParts(hostOs, reductions, outCount, parts, emitResults);
  }
  if (column) {
    // The last dimension is kept (a bias gradient): a block takes 32
    // adjacent results (one per lane: every read of a warp is one
    // contiguous run) and its 8 rows of threads stride over the reduced
    // elements; the rows combine through shared memory, in order. With
    // few such blocks, the reduced elements are split in `parts` (grid
    // y) whose results another kernel combines in order.
    int64_t inner = in[last];
    int64_t groups = (inner + 31) / 32;
    int64_t blocks = outCount / inner * groups;
    int64_t parts = 1;
    if (blocks < 132 && count >= 512)
      parts =
          std::min<int64_t>((264 + blocks - 1) / blocks, (count + 255) / 256);
    int64_t chunk = (count + parts - 1) / parts;
    if (parts > 1)
      addPartials(hostOs, outCount * parts * numAcc);
    std::string kernel = openKernel();
    hostOs << launch(kernel,
                     "dim3(" + std::to_string(blocks) + ", " +
                         std::to_string(parts) + ")",
                     "dim3(32, 8)");
    os << "  const " << idx << " g = blockIdx.x;\n"
       << "  const " << idx << " row = g / " << groups << ", col = g % "
       << groups << " * 32 + threadIdx.x;\n"
       << "  const bool live = col < " << inner << ";\n";
    emitPartBounds(idx + "(blockIdx.y)", chunk);
    emitKept(keptDims.drop_back(), inIndex, "row");
    inIndex[last] = "col";
    if (failed(emitAccumulation(
            idx +
            " q = begin + threadIdx.y; live && q < end; q += blockDim.y")))
      return failure();
    combine("columnReduce");
    os << "    if (threadIdx.y == 0 && live) {\n"
       << "    const " << idx << " r = row * " << inner << " + col;\n";
    if (parts > 1) {
      for (auto [i, name] : llvm::enumerate(acc))
        os << "      partial[(r * " << parts << " + blockIdx.y) * " << numAcc
           << " + " << i << "] = " << name << ";\n";
      os << "    }\n}\n\n";
      return emitCombineParts(hostOs, reductions, outCount, parts, emitResults);
    }
    if (failed(emitResults("")))
      return failure();
    os << "    }\n}\n\n";
    return success();
  }
  std::string kernel = openKernel();
  // Rows: short ones (layer norm, softmax over a head) one warp per
  // result, 8 results per block, combined by shuffles; long ones one block
  // per result, combined by warp shuffles and shared memory. Lane or thread
  // 0 writes the result and the epilogue.
  bool warp = count <= 1024;
  hostOs << launch(kernel, std::to_string(warp ? (outCount + 7) / 8 : outCount),
                   warp ? "dim3(32, 8)"
                        : "dtcg::detail::rowThreads(" + std::to_string(count) +
                              ")");
  os << "  const " << idx << " r = "
     << (warp ? idx + "(blockIdx.x) * 8 + threadIdx.y" : "blockIdx.x") << ";\n"
     << "  const bool live = r < " << outCount << ";\n";
  emitKept(keptDims, inIndex, "r");
  if (failed(emitAccumulation(idx + " q = threadIdx.x; live && q < " +
                              std::to_string(count) + "; q += blockDim.x")))
    return failure();
  combine(warp ? "warpReduce" : "blockReduce");
  os << "    if (threadIdx.x == 0 && live) {\n";
  if (failed(emitResults("")))
    return failure();
  os << "    }\n}\n\n";
  return success();
}

LogicalResult FusionPrinter::emitReduction(llvm::raw_ostream &hostOs) {
  // The CUDA target prints the loops into a kernel, the launch on the host.
  llvm::raw_ostream &os =
      e.cuda() ? static_cast<llvm::raw_ostream &>(kernels) : hostOs;
  SmallVector<Operation *> prologue, reductions, epilogue;
  Operation *first = nullptr;
  for (Operation &inner : body->without_terminator()) {
    if (isa<dtg::ConstantOp>(inner) || dtg::isFusibleView(&inner))
      continue;
    if (dtg::isFusibleReduction(&inner)) {
      if (!first)
        first = &inner;
      reductions.push_back(&inner);
    }
  }
  if (!first)
    return op.emitError("a reduction kernel holds no reduction");
  ArrayRef<int64_t> in = dimsOf(first->getOperand(0));
  ArrayRef<int64_t> out = dimsOf(first->getResult(0));
  auto axes = cast<DenseI64ArrayAttr>(first->getAttr("axes")).asArrayRef();
  for (Operation *r : reductions)
    if (dimsOf(r->getOperand(0)) != in || dimsOf(r->getResult(0)) != out ||
        cast<DenseI64ArrayAttr>(r->getAttr("axes")).asArrayRef() != axes)
      return r->emitError("the reductions of a kernel must share their "
                          "shapes and axes");
  if (numel(in) == numel(out))
    return op.emitError("a reduction kernel must reduce");
  for (int64_t a : axes)
    if (a < 0 || a >= static_cast<int64_t>(in.size()))
      return first->emitError("reduction axis out of range");
  for (Operation &inner : body->without_terminator()) {
    if (isa<dtg::ConstantOp>(inner) || dtg::isFusibleView(&inner) ||
        dtg::isFusibleReduction(&inner))
      continue;
    ArrayRef<int64_t> shape = dimsOf(inner.getResult(0));
    if (shape == in)
      prologue.push_back(&inner);
    else if (shape == out)
      epilogue.push_back(&inner);
    else
      return inner.emitError("an op of a reduction kernel must have the "
                             "reduction's input or result shape");
  }
  // Accumulator declarations and updates, shared by both loop orders.
  auto initOf = [](Operation *r) -> StringRef {
    return isa<dtg::ReduceMaxOp>(r)   ? "-HUGE_VAL"
           : isa<dtg::ReduceMinOp>(r) ? "HUGE_VAL"
                                      : "0.0";
  };
  auto stepOf = [](Operation *r) -> StringRef {
    return isa<dtg::ReduceMaxOp>(r)   ? "maxStep"
           : isa<dtg::ReduceMinOp>(r) ? "minStep"
                                      : "sumStep";
  };
  // The reduced coordinates, in increasing order of the input's elements.
  auto openReducedLoops = [&](SmallVectorImpl<std::string> &inIndex,
                              StringRef indent) {
    for (int64_t a : axes) {
      inIndex[a] = "j" + std::to_string(a);
      os << indent << "for (int64_t " << inIndex[a] << " = 0; " << inIndex[a]
         << " < " << in[a] << "; ++" << inIndex[a] << ")\n";
    }
  };
  // The reductions' results and the epilogue at result element `r`, whose
  // accumulators are `acc` (with `suffix`, such as "[q]").
  int64_t outCount = numel(out);
  int64_t count = numel(in) / std::max<int64_t>(outCount, 1);
  SmallVector<std::string> acc;
  for (size_t i = 0; i < reductions.size(); ++i)
    acc.push_back("acc" + std::to_string(i));
  auto emitResults = [&](StringRef suffix) -> LogicalResult {
    SmallVector<std::string> outIndex(out.size());
    os << "    rest = r;\n";
    for (int64_t d = static_cast<int64_t>(out.size()) - 1; d >= 0; --d) {
      outIndex[d] = "e" + std::to_string(d);
      os << "    const " << idx << " " << outIndex[d] << " = rest % " << out[d]
         << ";\n    rest /= " << out[d] << ";\n";
    }
    llvm::DenseMap<Value, std::string> outNames;
    for (auto [r, name] : llvm::zip(reductions, acc)) {
      std::string type = e.cTypeOf(r->getResult(0));
      std::string value = name + suffix.str();
      if (isa<dtg::ReduceMeanOp>(r))
        value += " / " + KernelEmitter::literal(double(count));
      std::string result = fresh();
      os << "      const " << type << " " << result
         << " = dtck::scalar::finish<" << type << ">(" << value << ");\n";
      outNames[r->getResult(0)] = result;
      if (auto it = outputOf.find(r->getResult(0)); it != outputOf.end())
        os << "      "
           << storeStatement("out" + std::to_string(it->second) + "[r]", result,
                             r->getResult(0))
           << "\n";
    }
    return computeOps(epilogue, out, outIndex, os, outNames);
  };
  // The prologue and, for each reduction, its accumulator's update at one
  // input element (`acc` with `suffix`), or where `buffered`, the value it
  // would add, as accumulators take it, into its buffer (`buf` + `acc`
  // with `suffix`).
  auto emitElement = [&](ArrayRef<std::string> inIndex, StringRef suffix,
                         bool buffered) -> LogicalResult {
    llvm::DenseMap<Value, std::string> names;
    std::string text;
    llvm::raw_string_ostream bodyOs(text);
    if (failed(computeOps(prologue, in, inIndex, bodyOs, names)))
      return failure();
    for (auto [r, name] : llvm::zip(reductions, acc)) {
      FailureOr<std::string> v =
          valueAt(r->getOperand(0), in, inIndex, bodyOs, names);
      if (failed(v))
        return failure();
      std::string slot = name + suffix.str();
      if (buffered)
        bodyOs << "      buf" << slot << " = dtck::scalar::accumulated(" << *v
               << ");\n";
      else
        bodyOs << "      " << slot << " = dtck::scalar::" << stepOf(r) << "("
               << slot << ", " << *v << ");\n";
    }
    os << text;
    return success();
  };
  auto emitUpdates = [&](ArrayRef<std::string> inIndex, StringRef suffix) {
    return emitElement(inIndex, suffix, /*buffered=*/false);
  };
  // Decomposes `var` into the kept input coordinates of `dims` (the
  // dimensions not reduced, last first).
  auto emitKept = [&](ArrayRef<int64_t> dims,
                      SmallVectorImpl<std::string> &inIndex, StringRef var) {
    os << "    " << idx << " rest = " << var << ";\n    (void)rest;\n";
    for (int64_t d : llvm::reverse(dims)) {
      inIndex[d] = "c" + std::to_string(d);
      os << "    const " << idx << " " << inIndex[d] << " = rest % " << in[d]
         << ";\n    rest /= " << in[d] << ";\n";
    }
  };
  // CPU: adjacent reduced dimensions that every access walks as one are
  // merged (a whole gradient's sum of squares, [512, 512, 3, 3], is one
  // run of 2359296 elements, not 262144 runs of 9). The elements and their
  // order stay the same.
  SmallVector<int64_t> mergedAxes;
  if (!e.cuda()) {
    auto readHere = [&](Value v) {
      return llvm::any_of(v.getUsers(), [&](Operation *user) {
        return llvm::is_contained(prologue, user) ||
               llvm::is_contained(reductions, user);
      });
    };
    SmallVector<Value> read;
    SmallVector<SmallVector<int64_t>> strides;
    for (auto &[v, source] : sources)
      if (readHere(v)) {
        read.push_back(v);
        strides.push_back(broadcastTo(dimsOf(v), source.strides, in));
      }
    SmallVector<SmallVector<int64_t>> mergedOf(read.size());
    for (int64_t d = 0; d < static_cast<int64_t>(in.size()); ++d) {
      bool reduced = llvm::is_contained(axes, d);
      bool merge = reduced && d > 0 && llvm::is_contained(axes, d - 1);
      for (size_t a = 0; a < read.size() && merge; ++a)
        merge = mergedOf[a].back() == strides[a][d] * in[d];
      if (merge) {
        mergedSpace.back() *= in[d];
        for (size_t a = 0; a < read.size(); ++a)
          mergedOf[a].back() = strides[a][d];
        continue;
      }
      if (reduced)
        mergedAxes.push_back(static_cast<int64_t>(mergedSpace.size()));
      mergedSpace.push_back(in[d]);
      for (size_t a = 0; a < read.size(); ++a)
        mergedOf[a].push_back(strides[a][d]);
    }
    for (auto [v, merged] : llvm::zip(read, mergedOf))
      mergedStrides[v] = merged;
    in = mergedSpace;
    axes = mergedAxes;
  }
  SmallVector<int64_t> keptDims;
  for (int64_t d = 0; d < static_cast<int64_t>(in.size()); ++d)
    if (!llvm::is_contained(axes, d))
      keptDims.push_back(d);
  SmallVector<std::string> inIndex(in.size());
  bool parallel = numel(in) >= kParallelThreshold;

  if (e.cuda())
    return emitDeviceReduction(hostOs, in, axes, keptDims, reductions, acc,
                               emitKept, emitUpdates, emitResults);

  // The last dimension is kept (a column reduction, such as a bias
  // gradient): each task takes a block of contiguous results of one row and
  // walks the reduced coordinates outside, the block inside, so that reads
  // are contiguous and vectorize. Every result still accumulates its
  // operand elements in increasing order.
  int64_t last = static_cast<int64_t>(in.size()) - 1;
  if (!keptDims.empty() && keptDims.back() == last && in[last] > 1) {
    int64_t inner = in[last];
    int64_t block = std::min<int64_t>(inner, kColumnBlock);
    int64_t chunks = (inner + block - 1) / block;
    int64_t tasks = (outCount / inner) * chunks;
    std::string len = inner % block == 0 ? std::to_string(block) : "len";
    if (parallel && tasks > 1)
      os << "#pragma omp parallel for\n";
    os << "  for (int64_t b = 0; b < " << tasks << "; ++b) {\n"
       << "    const int64_t row = b / " << chunks << ", n0 = (b % " << chunks
       << ") * " << block << ";\n";
    if (len == "len")
      os << "    const int64_t len = std::min<int64_t>(" << block << ", "
         << inner << " - n0);\n";
    emitKept(ArrayRef(keptDims).drop_back(), inIndex, "row");
    for (auto [r, name] : llvm::zip(reductions, acc))
      os << "    double " << name << "[" << block << "];\n"
         << "    for (int64_t q = 0; q < " << len << "; ++q)\n      " << name
         << "[q] = " << initOf(r) << ";\n";
    openReducedLoops(inIndex, "    ");
    inIndex[last] = "c" + std::to_string(last);
    os << "    for (int64_t q = 0; q < " << len << "; ++q) {\n"
       << "      const int64_t " << inIndex[last] << " = n0 + q;\n";
    if (failed(emitUpdates(inIndex, "[q]")))
      return failure();
    os << "    }\n";
    os << "    for (int64_t q = 0; q < " << len << "; ++q) {\n"
       << "    const int64_t r = row * " << inner << " + n0 + q;\n";
    if (failed(emitResults("[q]")))
      return failure();
    os << "    }\n  }\n";
    return success();
  }

  // The last dimension is reduced (a row reduction: LayerNorm's and
  // softmax's sums, BatchNorm's per-channel ones): each task takes
  // kRowWays results. For each block of their elements (the innermost
  // reduced dimensions, up to kRowBlock elements, else a block of the last
  // one) it computes the prologue and the values to reduce into a buffer,
  // one result's block at a time (contiguous reads that vectorize and
  // stream), then adds the buffer into the accumulators, the results
  // interleaved (independent chains instead of one waiting on each
  // addition). Every result still accumulates its operand elements in
  // increasing order: the same sums as one element at a time.
  if (in[last] > 1 && llvm::is_contained(axes, last)) {
    // The trailing reduced dimensions a block spans whole.
    SmallVector<int64_t> trailing = {last};
    int64_t span = in[last];
    for (int64_t d = last - 1; d >= 0; --d) {
      // (Kept dimensions between are one result's constants.)
      if (!llvm::is_contained(axes, d))
        continue;
      if (span * in[d] > kRowBlock)
        break;
      trailing.insert(trailing.begin(), d);
      span *= in[d];
    }
    int64_t run = in[last];
    int64_t block = std::min<int64_t>(span, kRowBlock);
    bool chunked = span > kRowBlock; // blocks of the last dimension
    int64_t ways = std::min<int64_t>(kRowWays, outCount);
    int64_t groups = (outCount + ways - 1) / ways;
    // Fewer results than kRowWays, of many elements each (a gradient's sum
    // of squares for the norm): each result takes kRowLanes partial sums,
    // the element at place q of a block going to q % kRowLanes, added in
    // lane order at the end (independent chains that vectorize, instead of
    // one waiting on each addition). The shapes fix the order: the same at
    // every thread count.
    // kRowWays results of long rows (a batch norm's sums per channel over
    // N x H x W) take them too, from kRowLanesFromMany elements: their
    // chains are independent already, but one scalar addition per element
    // and result would be the loop's cost, where lanes add a vector of them.
    int64_t lanesFrom = ways < kRowWays ? kRowLanesFrom : kRowLanesFromMany;
    int64_t lanes = count >= lanesFrom ? kRowLanes : 1;
    std::string lane = lanes > 1 ? "[q % " + std::to_string(lanes) + "]" : "";
    // One run of many elements (a whole gradient's, its dimensions merged)
    // sums in parts of kRowPart elements across the threads: a fixed
    // order, as the lanes.
    int64_t parts = (run + kRowPart - 1) / kRowPart;
    bool split = parallel && groups == 1 && lanes > 1 && chunked &&
                 trailing.size() == axes.size() && parts > 1;
    std::string lanesText = std::to_string(lanes);
    if (parallel && groups > 1)
      os << "#pragma omp parallel for\n";
    os << "  for (int64_t g = 0; g < " << groups << "; ++g) {\n"
       << "    const int64_t ways = std::min<int64_t>(" << ways << ", "
       << outCount << " - g * " << ways << ");\n";
    if (split) {
      for (const std::string &name : acc)
        os << "    std::vector<double> parts" << name << "(" << parts * ways
           << " * " << lanesText << ");\n";
      os << "#pragma omp parallel for\n"
         << "    for (int64_t part = 0; part < " << parts << "; ++part) {\n";
    }
    for (auto [r, name] : llvm::zip(reductions, acc)) {
      os << "    double " << name << "[" << ways << "]"
         << (lanes > 1 ? "[" + std::to_string(lanes) + "]" : "") << ", buf"
         << name << "[" << ways << "][" << block << "];\n"
         << "    for (int64_t k = 0; k < " << ways << "; ++k)\n";
      if (lanes > 1)
        os << "      for (int64_t q = 0; q < " << lanes << "; ++q)\n"
           << "        " << name << "[k][q] = " << initOf(r) << ";\n";
      else
        os << "      " << name << "[k] = " << initOf(r) << ";\n";
    }
    for (int64_t a : axes) {
      if (llvm::is_contained(trailing, a))
        continue;
      inIndex[a] = "j" + std::to_string(a);
      os << "    for (int64_t " << inIndex[a] << " = 0; " << inIndex[a] << " < "
         << in[a] << "; ++" << inIndex[a] << ")\n";
    }
    if (split)
      os << "    for (int64_t q0 = part * " << kRowPart
         << "; q0 < std::min<int64_t>(" << run << ", (part + 1) * " << kRowPart
         << "); q0 += " << block << ") {\n"
         << "    const int64_t len = std::min<int64_t>(" << block << ", " << run
         << " - q0);\n";
    else if (chunked)
      os << "    for (int64_t q0 = 0; q0 < " << run << "; q0 += " << block
         << ") {\n"
         << "    const int64_t len = std::min<int64_t>(" << block << ", " << run
         << " - q0);\n";
    else
      os << "    {\n    const int64_t len = " << block << ";\n";
    os << "    for (int64_t k = 0; k < ways; ++k) {\n"
       << "    const int64_t r = g * " << ways << " + k;\n";
    emitKept(keptDims, inIndex, "r");
    // The element's place in the block: its trailing coordinates, row-major.
    std::string place;
    for (int64_t d : ArrayRef(trailing).drop_back()) {
      inIndex[d] = "j" + std::to_string(d);
      os << "    for (int64_t " << inIndex[d] << " = 0; " << inIndex[d] << " < "
         << in[d] << "; ++" << inIndex[d] << ")\n";
      place = (place.empty() ? inIndex[d]
                             : "(" + place + ") * " + std::to_string(in[d]) +
                                   " + " + inIndex[d]);
    }
    inIndex[last] = "j" + std::to_string(last);
    place = place.empty() ? "q"
                          : "(" + place + ") * " + std::to_string(run) + " + q";
    os << "    for (int64_t q = 0; q < "
       << (chunked ? "len" : std::to_string(run)) << "; ++q) {\n"
       << "      const int64_t " << inIndex[last] << " = "
       << (chunked ? "q0 + q" : "q") << ";\n";
    if (failed(emitElement(inIndex, "[k][" + place + "]", /*buffered=*/true)))
      return failure();
    os << "    }\n    }\n";
    if (lanes > 1) {
      // Whole runs of lanes first (a loop GCC vectorizes), then the rest.
      std::string n = std::to_string(lanes);
      os << "    for (int64_t k = 0; k < ways; ++k) {\n"
         << "      int64_t q = 0;\n"
         << "      for (; q + " << n << " <= len; q += " << n << ")\n"
         << "        for (int64_t l = 0; l < " << n << "; ++l) {\n";
      for (auto [r, name] : llvm::zip(reductions, acc))
        os << "          " << name << "[k][l] = dtck::scalar::" << stepOf(r)
           << "(" << name << "[k][l], buf" << name << "[k][q + l]);\n";
      os << "        }\n      for (; q < len; ++q) {\n";
      for (auto [r, name] : llvm::zip(reductions, acc))
        os << "        " << name << "[k]" << lane
           << " = dtck::scalar::" << stepOf(r) << "(" << name << "[k]" << lane
           << ", buf" << name << "[k][q]);\n";
      os << "      }\n    }\n";
    } else {
      os << "    for (int64_t q = 0; q < len; ++q)\n"
         << "      for (int64_t k = 0; k < ways; ++k) {\n";
      for (auto [r, name] : llvm::zip(reductions, acc))
        os << "      " << name << "[k] = dtck::scalar::" << stepOf(r) << "("
           << name << "[k], buf" << name << "[k][q]);\n";
      os << "      }\n";
    }
    os << "    }\n";
    if (split) {
      // Each part's sums, then the parts added in order into part 0's.
      std::string at =
          "(part * " + std::to_string(ways) + " + k) * " + lanesText + " + l";
      os << "    for (int64_t k = 0; k < ways; ++k)\n"
         << "      for (int64_t l = 0; l < " << lanesText << "; ++l) {\n";
      for (const std::string &name : acc)
        os << "        parts" << name << "[" << at << "] = " << name
           << "[k][l];\n";
      os << "      }\n    }\n";
      for (const std::string &name : acc)
        os << "    double " << name << "[" << ways << "][" << lanesText
           << "];\n";
      os << "    for (int64_t k = 0; k < ways; ++k)\n"
         << "      for (int64_t l = 0; l < " << lanesText << "; ++l) {\n";
      for (const std::string &name : acc)
        os << "        " << name << "[k][l] = parts" << name << "[k * "
           << lanesText << " + l];\n";
      os << "        for (int64_t part = 1; part < " << parts
         << "; ++part) {\n";
      for (auto [r, name] : llvm::zip(reductions, acc))
        os << "          " << name << "[k][l] = dtck::scalar::" << stepOf(r)
           << "(" << name << "[k][l], parts" << name << "[" << at << "]);\n";
      os << "        }\n      }\n";
    }
    os << "    for (int64_t k = 0; k < ways; ++k) {\n"
       << "    const int64_t r = g * " << ways << " + k;\n"
       << "    " << idx << " rest = r;\n    (void)rest;\n";
    if (lanes > 1)
      for (auto [r, name] : llvm::zip(reductions, acc))
        os << "    for (int64_t q = 1; q < " << lanes << "; ++q)\n"
           << "      " << name << "[k][0] = dtck::scalar::" << stepOf(r) << "("
           << name << "[k][0], " << name << "[k][q]);\n";
    if (failed(emitResults(lanes > 1 ? "[k][0]" : "[k]")))
      return failure();
    os << "    }\n  }\n";
    return success();
  }

  // Otherwise r walks the results, each reducing its elements in an inner
  // loop.
  if (parallel && outCount > 1)
    os << "#pragma omp parallel for\n";
  os << "  for (int64_t r = 0; r < " << outCount << "; ++r) {\n";
  emitKept(keptDims, inIndex, "r");
  for (auto [r, name] : llvm::zip(reductions, acc))
    os << "    double " << name << " = " << initOf(r) << ";\n";
  openReducedLoops(inIndex, "    ");
  os << "    {\n";
  if (failed(emitUpdates(inIndex, "")))
    return failure();
  os << "    }\n";
  if (failed(emitResults("")))
    return failure();
  os << "  }\n";
  return success();
}
