//===- SaveOnnx.cpp - the trained model as ONNX (--save-onnx) -------------===//

#include "runtime/src/Onnx/SaveOnnx.h"

#include "runtime/src/Core/Files.h"
#include "runtime/src/Data/Npy.h"

#ifdef DTCRT_NO_ONNX

bool dtcrt::saveOnnxAvailable(std::string &why) {
  why = "this runtime was built without protobuf and ONNX "
        "(DTCRT_WITH_ONNX=OFF), so it cannot write ONNX files; save a "
        "checkpoint (--checkpoint-dir) instead, or build the program where "
        "they are installed";
  return false;
}

bool dtcrt::saveOnnxWithWeights(const std::string &, const std::string &,
                                const std::vector<TrainedTensor> &,
                                std::string &error) {
  return saveOnnxAvailable(error);
}

#else

#include <onnx/onnx_pb.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <unistd.h>

using namespace dtcrt;

/// The DType of an ONNX TensorProto data type, or nullopt.
static std::optional<DType> dtypeOfOnnx(int type) {
  switch (type) {
  case onnx::TensorProto::FLOAT:
    return DType::F32;
  case onnx::TensorProto::DOUBLE:
    return DType::F64;
  case onnx::TensorProto::FLOAT16:
    return DType::F16;
  case onnx::TensorProto::BFLOAT16:
    return DType::BF16;
  case onnx::TensorProto::INT64:
    return DType::I64;
  case onnx::TensorProto::INT32:
    return DType::I32;
  case onnx::TensorProto::INT16:
    return DType::I16;
  case onnx::TensorProto::INT8:
    return DType::I8;
  case onnx::TensorProto::UINT8:
    return DType::U8;
  case onnx::TensorProto::BOOL:
    return DType::Bool;
  case onnx::TensorProto::UINT16:
    return DType::U16;
  case onnx::TensorProto::UINT32:
    return DType::U32;
  case onnx::TensorProto::UINT64:
    return DType::U64;
  default:
    return std::nullopt;
  }
}

/// Stores `bytes` as the tensor's only payload.
static void setRawData(onnx::TensorProto &t, std::string bytes) {
  t.clear_float_data();
  t.clear_int32_data();
  t.clear_string_data();
  t.clear_int64_data();
  t.clear_double_data();
  t.clear_uint64_data();
  t.clear_external_data();
  t.set_data_location(onnx::TensorProto::DEFAULT);
  t.set_raw_data(std::move(bytes));
}

/// Replaces initializer `t` by `trained`.
static bool replaceInitializer(onnx::TensorProto &t, const TrainedTensor &tr,
                               std::string &error) {
  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  std::optional<DType> type = dtypeOfOnnx(t.data_type());
  if (dims != tr.shape || !type) {
    error = "initializer '" + tr.name + "' is " + shapeString(dims) +
            " in the model but the trained tensor is " + shapeString(tr.shape);
    return false;
  }
  if (*type == tr.dtype) {
    setRawData(t, std::string(static_cast<const char *>(tr.data), tr.bytes));
    return true;
  }
  if (!isFloatDType(*type) || !isFloatDType(tr.dtype)) {
    error = std::string("initializer '") + tr.name + "' is " +
            dtypeNumpyName(*type) + " in the model but the trained tensor is " +
            dtypeNumpyName(tr.dtype);
    return false;
  }
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  std::string bytes(size_t(n) * dtypeSize(*type), '\0');
  for (int64_t i = 0; i < n; ++i)
    storeFromDouble(*type, bytes.data(), i, loadAsDouble(tr.dtype, tr.data, i));
  setRawData(t, std::move(bytes));
  return true;
}

/// Inlines initializer `t`, whose data lives in a file beside the model.
static bool inlineExternal(onnx::TensorProto &t, const std::string &modelDir,
                           std::string &error) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const onnx::StringStringEntryProto &e : t.external_data()) {
    char *end = nullptr;
    if (e.key() == "location")
      location = e.value();
    else if (e.key() == "offset")
      offset = std::strtoll(e.value().c_str(), &end, 10);
    else if (e.key() == "length")
      length = std::strtoll(e.value().c_str(), &end, 10);
  }
  std::string label = "initializer '" + t.name() + "'";
  if (location.empty() || location[0] == '/' ||
      location.find("..") != std::string::npos) {
    error = label + " points at external data '" + location +
            "' outside the model's folder";
    return false;
  }
  std::string path = joinPath(modelDir, location);
  MappedFile file;
  if (!file.open(path, error)) {
    error = label + ": " + error;
    return false;
  }
  if (length < 0)
    length = int64_t(file.size()) - offset;
  if (offset < 0 || length < 0 || uint64_t(offset) > file.size() ||
      uint64_t(length) > file.size() - uint64_t(offset)) {
    error = label + ": its external data runs past the end of '" + path + "'";
    return false;
  }
  setRawData(t,
             std::string(reinterpret_cast<const char *>(file.data()) + offset,
                         size_t(length)));
  return true;
}

bool dtcrt::saveOnnxWithWeights(const std::string &modelPath,
                                const std::string &outPath,
                                const std::vector<TrainedTensor> &trained,
                                std::string &error) {
  auto fail = [&](const std::string &message) {
    error = "--save-onnx: " + message;
    return false;
  };
  std::string bytes, why;
  if (!readFile(modelPath, bytes, why, size_t(INT_MAX)))
    return fail(why + " (compile leaves model.onnx next to train)");
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes))
    return fail("'" + modelPath + "' is not a valid ONNX model");
  bytes.clear();
  bytes.shrink_to_fit();

  std::map<std::string, const TrainedTensor *> byName;
  for (const TrainedTensor &t : trained)
    byName[t.name] = &t;
  std::map<std::string, bool> replaced;
  std::string modelDir = parentPath(modelPath);
  for (onnx::TensorProto &init :
       *model.mutable_graph()->mutable_initializer()) {
    auto it = byName.find(init.name());
    if (it != byName.end()) {
      if (!replaceInitializer(init, *it->second, why))
        return fail(why);
      replaced[init.name()] = true;
    } else if (init.data_location() == onnx::TensorProto::EXTERNAL) {
      if (!inlineExternal(init, modelDir, why))
        return fail(why);
    }
  }
  for (const TrainedTensor &t : trained)
    if (!replaced.count(t.name))
      return fail("'" + modelPath + "' has no initializer '" + t.name +
                  "' (is it the model this program was compiled from?)");

  if (model.ByteSizeLong() > size_t(INT_MAX))
    return fail("the trained model exceeds protobuf's 2 GiB limit");
  std::string out;
  if (!model.SerializeToString(&out))
    return fail("cannot serialize the model");
  std::string tmp = outPath + ".tmp-" + std::to_string(getpid());
  if (!writeFileDurably(tmp, out.data(), out.size(), why) ||
      !renamePath(tmp, outPath, why)) {
    std::remove(tmp.c_str());
    return fail(why);
  }
  return true;
}

bool dtcrt::saveOnnxAvailable(std::string &) { return true; }

#endif // DTCRT_NO_ONNX
