//===- Explain.cpp - what `dtc compile --explain` prints ------------------===//

#include "compiler/Plan/PlanJson.h"

#include "compiler/Import/ONNX/ONNXImporter.h"
#include "dialects/Dist/IR/DistOps.h"
#include "passes/Memory/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FormatVariadic.h"

#include <functional>
#include <map>
#include <set>

using namespace mlir;
using namespace mlir::dtc;

namespace {
std::string shapeText(Type type) {
  auto t = cast<RankedTensorType>(type);
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(t.getShape()))
    s += (i ? "x" : "") + std::to_string(d);
  return s + "]";
}

/// "replicated", or "dim D over AXES" of a block (dtc.sharding).
std::string shardingText(DictionaryAttr attrs) {
  auto sharding = attrs ? attrs.getAs<dist::ShardingAttr>("dtc.sharding")
                        : dist::ShardingAttr();
  if (!sharding)
    return "replicated";
  std::string s;
  for (auto [d, list] : llvm::enumerate(sharding.getDims()))
    if (!list.getAxes().empty()) {
      std::string axes;
      for (StringAttr a : list.getAxes())
        axes += (axes.empty() ? "" : "+") + a.str();
      s += (s.empty() ? "" : ", ") +
           ("dim " + std::to_string(d) + " over " + axes);
    }
  return s.empty() ? "replicated" : s;
}

StringRef attrString(DictionaryAttr attrs, StringRef key) {
  auto s = attrs ? attrs.getAs<StringAttr>(key) : StringAttr();
  return s ? s.getValue() : "";
}
} // namespace

void mlir::dtc::printExplanation(ModuleOp module, llvm::raw_ostream &os) {
  auto step = module.lookupSymbol<func::FuncOp>("train_step");
  if (!step)
    return;
  std::array<int64_t, 3> sizes = dist::getStandardMeshSizes(module);
  int64_t origin[3] = {0, 0, 0};
  auto zero = module->getAttrOfType<IntegerAttr>("dtc.zero");
  os << llvm::formatv("mesh dp={0},tp={1},pp={2} ({3} ranks), ZeRO {4}\n",
                      sizes[1], sizes[2], sizes[0],
                      sizes[0] * sizes[1] * sizes[2], zero ? zero.getInt() : 0);

  // Parameters and their optimizer state, by name.
  std::map<std::string, std::string> stateOf;
  for (unsigned i = 0; i < step.getNumArguments(); ++i) {
    DictionaryAttr attrs = step.getArgAttrDict(i);
    if (attrString(attrs, "dtg.role") != "optimizer_state")
      continue;
    StringRef name = attrString(attrs, "dtg.name");
    std::string &entry = stateOf[name.rsplit('.').first.str()];
    std::string text = name.rsplit('.').second.str() + " " +
                       shardingText(attrs) + " " +
                       shapeText(step.getArgument(i).getType());
    entry += (entry.empty() ? "" : "; ") + text;
  }
  os << "parameters (sharding of the parameter; of its optimizer state, "
        "with each rank's shape):\n";
  for (unsigned i = 0; i < step.getNumArguments(); ++i) {
    DictionaryAttr attrs = step.getArgAttrDict(i);
    if (attrString(attrs, "dtg.role") != "parameter")
      continue;
    std::string name = attrString(attrs, "dtg.name").str();
    std::string state = stateOf.count(name) ? stateOf[name] : "";
    if (stateOf.count(name + ".master"))
      state = "master " + stateOf[name + ".master"] +
              (state.empty() ? "" : "; " + state);
    os << llvm::formatv("  {0,-36} {1,-12} {2}{3}\n", name,
                        shapeText(step.getArgument(i).getType()),
                        shardingText(attrs),
                        state.empty() ? "" : " | " + state);
  }

  // Collectives, in program order; a callee's once per call.
  os << "collectives of one step (bytes rank 0 sends):\n";
  std::map<std::string, int64_t> total;
  std::function<void(func::FuncOp, int64_t)> walk = [&](func::FuncOp f,
                                                        int64_t times) {
    std::map<std::string, int64_t> calls;
    f.walk([&](func::CallOp call) { ++calls[call.getCallee().str()]; });
    std::set<std::string> walked;
    f.walk([&](Operation *op) {
      if (auto call = dyn_cast<func::CallOp>(op)) {
        std::string callee = call.getCallee().str();
        if (walked.insert(callee).second)
          if (auto fn = module.lookupSymbol<func::FuncOp>(callee))
            walk(fn, times * calls[callee]);
        return;
      }
      std::optional<CollectiveBytes> c =
          collectiveBytes(op, sizes.data(), origin);
      if (!c)
        return;
      auto what = op->getAttrOfType<StringAttr>("dtc.explain");
      std::string node = onnxNodeName(op->getLoc());
      // An asynchronous collective under its synchronous name, marked.
      StringRef name = op->getName().stripDialect();
      bool async = name.consume_back("_start");
      os << llvm::formatv(
          "  {0,-15} over {1,-3} {2,-48} {3,10} B of {4,10} B"
          "{5}{6}{7}\n",
          name, c->axes, what ? what.str() : "-", c->bytes, c->tensorBytes,
          times > 1 ? llvm::formatv(" x{0} (@{1})", times, f.getSymName()).str()
                    : "",
          node.empty() ? "" : " at '" + node + "'",
          async ? " (overlapped)" : "");
      total[c->axes] += c->bytes * times;
    });
  };
  walk(step, 1);
  for (auto [axes, bytes] : total)
    os << llvm::formatv("  total over {0}: {1} B a step\n", axes, bytes);
  if (total.empty())
    os << "  none\n";
}
