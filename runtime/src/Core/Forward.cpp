//===- Forward.cpp - dtcrt_forward_main: run a forward program once ------===//
//
// A forward-only program (`dtc test-onnx --target cpu` builds one per test
// model) reads its data inputs from .npy files, takes parameters from
// weights.bin beside it, runs the step once and writes every result as
// NAME.npy. Usage: PROGRAM --input NAME=FILE.npy ... --output-dir DIR.
//
//===----------------------------------------------------------------------===//

#include "dtcrt/dtcrt.h"

#include "runtime/src/Core/Arena.h"
#include "runtime/src/Core/DType.h"
#include "runtime/src/Core/Files.h"
#include "runtime/src/Data/Npy.h"

#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

using namespace dtcrt;

static int fail(const std::string &message) {
  std::fprintf(stderr, "forward: error: %s\n", message.c_str());
  return 1;
}

static std::vector<int64_t> shapeOf(const dtcrt_tensor_desc &d) {
  return std::vector<int64_t>(d.dims, d.dims + d.rank);
}

static size_t bytesOf(const dtcrt_tensor_desc &d, DType t) {
  size_t n = 1;
  for (int k = 0; k < d.rank; ++k)
    n *= size_t(d.dims[k]);
  return n * dtypeSize(t);
}

extern "C" int dtcrt_forward_main(int argc, char **argv,
                                  const dtcrt_model_desc *model) {
  std::map<std::string, std::string> inputs;
  std::string outDir;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if ((arg == "--input" || arg == "--output-dir") && i + 1 < argc) {
      std::string value = argv[++i];
      if (arg == "--output-dir") {
        outDir = value;
        continue;
      }
      size_t eq = value.find('=');
      if (eq == std::string::npos || eq == 0)
        return fail("--input expects NAME=FILE.npy, got '" + value + "'");
      inputs[value.substr(0, eq)] = value.substr(eq + 1);
      continue;
    }
    return fail("unknown or incomplete option '" + arg + "'");
  }
  if (outDir.empty())
    return fail("--output-dir is required");

  std::string error, folder;
  MappedFile weights;
  bool haveWeights = false;
  std::vector<std::vector<uint8_t>> args(model->num_args);
  std::vector<void *> argPtrs(model->num_args);
  for (int i = 0; i < model->num_args; ++i) {
    const dtcrt_tensor_desc &d = model->args[i];
    std::optional<DType> t = parseDType(d.dtype);
    if (!t)
      return fail(std::string("argument '") + d.name + "' has dtype " +
                  d.dtype);
    args[i].assign(bytesOf(d, *t) + 1, 0);
    argPtrs[i] = args[i].data();
    if (d.weights_offset >= 0) {
      if (!haveWeights) {
        if (!executableFolder(folder, error) ||
            !weights.open(joinPath(folder, "weights.bin"), error))
          return fail(error);
        haveWeights = true;
      }
      if (uint64_t(d.weights_offset) + bytesOf(d, *t) > weights.size())
        return fail("weights.bin ends before '" + std::string(d.name) + "'");
      std::memcpy(args[i].data(), weights.data() + d.weights_offset,
                  bytesOf(d, *t));
      weights.release(size_t(d.weights_offset), bytesOf(d, *t));
      continue;
    }
    auto it = inputs.find(d.name);
    if (it == inputs.end())
      return fail(std::string("no --input for '") + d.name + "'");
    NpyArray array;
    if (!readNpy(it->second, array, error))
      return fail(error);
    if (array.dtype != *t || array.shape != shapeOf(d))
      return fail("--input " + it->first + ": '" + it->second + "' is " +
                  dtypeName(array.dtype) + shapeString(array.shape) +
                  ", expected " + d.dtype + shapeString(shapeOf(d)));
    std::memcpy(args[i].data(), array.data, array.bytes);
  }
  std::vector<std::vector<uint8_t>> results(model->num_results);
  std::vector<void *> resultPtrs(model->num_results);
  for (int i = 0; i < model->num_results; ++i) {
    std::optional<DType> t = parseDType(model->results[i].dtype);
    if (!t)
      return fail(std::string("result has dtype ") + model->results[i].dtype);
    results[i].assign(bytesOf(model->results[i], *t) + 1, 0);
    resultPtrs[i] = results[i].data();
  }
  std::vector<uint8_t> arena(size_t(model->arena_bytes) + 64);
  uint8_t *base = reinterpret_cast<uint8_t *>(
      (reinterpret_cast<uintptr_t>(arena.data()) + 63) & ~uintptr_t(63));
  dtcrt_step_ctx ctx{};
  ctx.arena = base;
  ctx.arena_bytes = model->arena_bytes;
  model->step(argPtrs.data(), resultPtrs.data(), &ctx);
  if (model->finish_step)
    model->finish_step();
  if (!createFolders(outDir, error))
    return fail(error);
  for (int i = 0; i < model->num_results; ++i) {
    const dtcrt_tensor_desc &d = model->results[i];
    DType t = *parseDType(d.dtype);
    if (!writeNpyFile(joinPath(outDir, std::string(d.name) + ".npy"), t,
                      shapeOf(d), results[i].data(), bytesOf(d, t), error))
      return fail(error);
  }
  return 0;
}
