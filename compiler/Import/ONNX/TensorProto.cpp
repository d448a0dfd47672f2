//===- TensorProto.cpp - ONNX TensorProto <-> interpreter tensors --------===//

#include "compiler/Import/ONNX/TensorProto.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "compiler/Import/ONNX/ONNXImporter.h"
#include "compiler/Support/MappedWeights.h"
#include "dialects/DTG/IR/DTGShapeInference.h"

#include <cstring>
#include <set>

using namespace mlir;
using namespace mlir::dtc::onnx_import;
using mlir::dtc::MappedFile;
using mlir::dtc::mapWeightsFile;
using mlir::dtg::interp::Tensor;

Type mlir::dtc::onnx_import::convertDataType(MLIRContext *context,
                                             int32_t dataType) {
  Builder b(context);
  switch (dataType) {
  case onnx::TensorProto::FLOAT:
    return b.getF32Type();
  case onnx::TensorProto::DOUBLE:
    return b.getF64Type();
  case onnx::TensorProto::FLOAT16:
    return b.getF16Type();
  case onnx::TensorProto::BFLOAT16:
    return b.getBF16Type();
  case onnx::TensorProto::INT64:
    return b.getI64Type();
  case onnx::TensorProto::INT32:
    return b.getI32Type();
  case onnx::TensorProto::INT16:
    return b.getI16Type();
  case onnx::TensorProto::INT8:
    return b.getI8Type();
  case onnx::TensorProto::UINT8:
    return IntegerType::get(context, 8, IntegerType::Unsigned);
  case onnx::TensorProto::UINT16:
    return IntegerType::get(context, 16, IntegerType::Unsigned);
  case onnx::TensorProto::UINT32:
    return IntegerType::get(context, 32, IntegerType::Unsigned);
  case onnx::TensorProto::UINT64:
    return IntegerType::get(context, 64, IntegerType::Unsigned);
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  // Types after Debian's onnx 1.12, which does not name them.
  case kFloat8E4M3FN:
    return b.getType<Float8E4M3FNType>();
  case kFloat8E4M3FNUZ:
    return b.getType<Float8E4M3FNUZType>();
  case kFloat8E5M2:
    return b.getType<Float8E5M2Type>();
  case kFloat8E5M2FNUZ:
    return b.getType<Float8E5M2FNUZType>();
  case kUInt4:
    return IntegerType::get(context, 4, IntegerType::Unsigned);
  case kInt4:
    return IntegerType::get(context, 4);
  default:
    return Type();
  }
}

bool mlir::dtc::onnx_import::exceedsElementLimit(ArrayRef<int64_t> shape,
                                                 int64_t limit) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return true;
    if (d > 0 && n > limit / d)
      return true;
    n *= d;
  }
  return false;
}

std::string mlir::dtc::onnx_import::elementLimitText(int64_t limit) {
  return "2^" + std::to_string(llvm::Log2_64(limit));
}

std::string mlir::dtc::onnx_import::shapeText(ArrayRef<int64_t> shape) {
  std::string s;
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? "x" : "") + std::to_string(d);
  return s.empty() ? "scalar" : s;
}

std::string mlir::dtc::onnx_import::dataTypeName(int32_t dataType) {
  static const char *const newer[] = {"FLOAT8E4M3FN", "FLOAT8E4M3FNUZ",
                                      "FLOAT8E5M2",   "FLOAT8E5M2FNUZ",
                                      "UINT4",        "INT4"};
  if (dataType >= kFloat8E4M3FN && dataType <= kInt4)
    return newer[dataType - kFloat8E4M3FN];
  if (onnx::TensorProto_DataType_IsValid(dataType))
    return onnx::TensorProto_DataType_Name(
        static_cast<onnx::TensorProto_DataType>(dataType));
  return "data type " + std::to_string(dataType);
}

/// Bytes per element in raw_data (4-bit integers: see rawByteCount).
static int64_t rawElementSize(Type type) {
  return type.isInteger(1) ? 1 : (type.getIntOrFloatBitWidth() + 7) / 8;
}

/// Bytes that `n` elements of `type` take in raw_data: 4-bit integers are
/// packed two to a byte, the first in the low nibble.
static int64_t rawByteCount(Type type, int64_t n) {
  return dtg::interp::isInt4(type) ? (n + 1) / 2 : n * rawElementSize(type);
}

/// Element `k` of 4-bit integers packed two to a byte, from its byte.
static int64_t unpackInt4(Type type, uint8_t byte, int64_t k) {
  return dtg::interp::wrapToIntegerType(type, k % 2 ? byte >> 4 : byte & 15);
}

/// Decodes little-endian raw bytes of element `k`.
static void decodeRaw(Tensor &t, const char *data, int64_t k) {
  Type type = t.elementType;
  if (dtg::interp::isInt4(type)) {
    t.i[k] = unpackInt4(type, static_cast<uint8_t>(data[k / 2]), k);
    return;
  }
  int64_t size = rawElementSize(type);
  const char *p = data + k * size;
  if (type.isF32()) {
    float v;
    std::memcpy(&v, p, 4);
    t.f[k] = v;
  } else if (type.isF64()) {
    std::memcpy(&t.f[k], p, 8);
  } else {
    uint64_t bits = 0;
    std::memcpy(&bits, p, size);
    if (t.isFloat())
      t.f[k] = dtg::interp::floatFromBits(type, bits);
    else
      t.i[k] = dtg::interp::wrapToIntegerType(type, static_cast<int64_t>(bits));
  }
}

TensorOrError mlir::dtc::onnx_import::readTensorProtoType(
    MLIRContext *context, const onnx::TensorProto &proto,
    SmallVectorImpl<int64_t> &shape, Type &type, int64_t limit) {
  TensorOrError result;
  std::string name = proto.name().empty() ? "tensor" : "'" + proto.name() + "'";
  type = convertDataType(context, proto.data_type());
  if (!type) {
    result.error = name + " has " + dataTypeName(proto.data_type()) +
                   " elements, which dtc does not support";
    result.unsupportedType = true;
    return result;
  }
  int64_t n = 1;
  for (int64_t d : proto.dims()) {
    if (d < 0) {
      result.error = name + " has a negative dimension";
      return result;
    }
    if (d > 0 && n > limit / d) {
      result.error =
          name + " has more than " + elementLimitText(limit) + " elements";
      return result;
    }
    n *= d;
    shape.push_back(d);
  }
  return result;
}

/// Finds the external data of `proto` (checked against `expected` bytes):
/// `data` points into the file's mapping, which `file` keeps alive.
static std::string readExternal(const onnx::TensorProto &proto,
                                const TensorSource &source, int64_t expected,
                                ArrayRef<char> &data,
                                std::shared_ptr<MappedFile> &file,
                                bool &missing) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto &entry : proto.external_data()) {
    if (entry.key() == "location")
      location = entry.value();
    else if (entry.key() == "offset" || entry.key() == "length") {
      char *end = nullptr;
      long long v = std::strtoll(entry.value().c_str(), &end, 10);
      if (entry.value().empty() || *end != '\0' || v < 0)
        return "external data " + entry.key() + " '" + entry.value() +
               "' is not a non-negative integer";
      (entry.key() == "offset" ? offset : length) = v;
    }
  }
  if (location.empty())
    return "external data has no location";
  // Confine paths to the model's folder: relative, no '..' components.
  if (llvm::sys::path::is_absolute(location))
    return "external data path '" + location + "' is absolute";
  for (auto it = llvm::sys::path::begin(location),
            end = llvm::sys::path::end(location);
       it != end; ++it)
    if (*it == "..")
      return "external data path '" + location + "' leaves the model's folder";
  SmallString<256> path(source.modelDir);
  llvm::sys::path::append(path, location);
  SmallString<256> real, realDir;
  if (llvm::sys::fs::real_path(path, real) ||
      llvm::sys::fs::real_path(source.modelDir, realDir)) {
    missing = true;
    return "external data file '" + location + "' is absent";
  }
  if (!StringRef(real).starts_with(StringRef(realDir).str() + "/"))
    return "external data path '" + location + "' leaves the model's folder";
  std::string mapError;
  file = mapWeightsFile(real, mapError);
  if (!file) {
    missing = true;
    return "cannot read external data file '" + location + "'";
  }
  int64_t size = static_cast<int64_t>(file->data().size());
  if (offset > size)
    return "external data offset " + std::to_string(offset) +
           " is beyond the end of file '" + location + "' (" +
           std::to_string(size) + " bytes)";
  if (length < 0)
    length = size - offset;
  if (length > size - offset)
    return "external data range [" + std::to_string(offset) + ", +" +
           std::to_string(length) + ") exceeds file '" + location + "' (" +
           std::to_string(size) + " bytes)";
  if (length != expected)
    return "external data holds " + std::to_string(length) +
           " bytes where the dims need " + std::to_string(expected);
  data = file->data().slice(offset, length);
  return "";
}

/// The common start of reading `proto`'s values: its shape, type and
/// display name, and its data where it holds them as little-endian bytes
/// (external data, `file` keeping the mapping alive, or raw_data), checked
/// against what its dims and type need. `raw` stays empty where the typed
/// fields hold the values. False with `status` set on an error.
static bool locateData(MLIRContext *context, const onnx::TensorProto &proto,
                       const TensorSource &source, ReadStatus &status,
                       SmallVectorImpl<int64_t> &shape, Type &type,
                       std::string &name, std::optional<ArrayRef<char>> &raw,
                       std::shared_ptr<MappedFile> &file,
                       int64_t limit = kMaxTensorElements) {
  TensorOrError typed = readTensorProtoType(context, proto, shape, type, limit);
  if (!typed.error.empty()) {
    status = typed;
    return false;
  }
  name = proto.name().empty() ? "tensor" : "'" + proto.name() + "'";
  if (proto.has_segment()) {
    status.error = name + " is segmented, which dtc does not support";
    status.unsupportedType = true;
    return false;
  }
  int64_t bytes = rawByteCount(type, dtg::numElements(shape));
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    bool missing = false;
    ArrayRef<char> data;
    std::string error = readExternal(proto, source, bytes, data, file, missing);
    if (!error.empty()) {
      status.error = name + ": " + error;
      status.externalDataMissing = missing;
      return false;
    }
    raw = data;
  } else if (proto.has_raw_data()) {
    raw = ArrayRef<char>(proto.raw_data().data(), proto.raw_data().size());
    if (static_cast<int64_t>(raw->size()) != bytes) {
      status.error = name + " holds " + std::to_string(raw->size()) +
                     " bytes of raw data but its dims and type need " +
                     std::to_string(bytes);
      return false;
    }
  }
  return true;
}

TensorOrError
mlir::dtc::onnx_import::readTensorProto(MLIRContext *context,
                                        const onnx::TensorProto &proto,
                                        const TensorSource &source) {
  TensorOrError result;
  SmallVector<int64_t> shape;
  Type type;
  std::string name;
  std::optional<ArrayRef<char>> raw;
  std::shared_ptr<MappedFile> file;
  if (!locateData(context, proto, source, result, shape, type, name, raw, file))
    return result;
  int64_t n = dtg::numElements(shape);
  // Check the amount of data before allocating: the dims alone may ask for
  // up to 2^31 elements (raw bytes were checked by locateData).
  int64_t have;
  if (raw)
    have = n;
  else if (proto.data_type() == onnx::TensorProto::FLOAT)
    have = proto.float_data_size();
  else if (proto.data_type() == onnx::TensorProto::DOUBLE)
    have = proto.double_data_size();
  else if (proto.data_type() == onnx::TensorProto::INT64)
    have = proto.int64_data_size();
  else if (proto.data_type() == onnx::TensorProto::UINT32 ||
           proto.data_type() == onnx::TensorProto::UINT64)
    have = proto.uint64_data_size();
  else // int32_data holds the rest: 8- and 16-bit floats as their bits,
       // 4-bit integers packed two to a value.
    have = proto.int32_data_size();
  int64_t need = dtg::interp::isInt4(type) && !raw ? (n + 1) / 2 : n;
  if (have != need) {
    result.error = name + " holds " + std::to_string(have) +
                   " values but its dims need " + std::to_string(need);
    return result;
  }

  Tensor t = Tensor::zeros(type, shape);
  if (raw) {
    for (int64_t k = 0; k < n; ++k)
      decodeRaw(t, raw->data(), k);
  } else {
    switch (proto.data_type()) {
    case onnx::TensorProto::FLOAT:
      for (int64_t k = 0; k < n; ++k)
        t.f[k] = proto.float_data(k);
      break;
    case onnx::TensorProto::DOUBLE:
      for (int64_t k = 0; k < n; ++k)
        t.f[k] = proto.double_data(k);
      break;
    case onnx::TensorProto::INT64:
      for (int64_t k = 0; k < n; ++k)
        t.i[k] = proto.int64_data(k);
      break;
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT64:
      for (int64_t k = 0; k < n; ++k)
        t.i[k] = dtg::interp::wrapToIntegerType(
            type, static_cast<int64_t>(proto.uint64_data(k)));
      break;
    default:
      for (int64_t k = 0; k < n; ++k) {
        if (t.isFloat())
          t.f[k] = dtg::interp::floatFromBits(
              type, static_cast<uint32_t>(proto.int32_data(k)) &
                        ((1u << type.getIntOrFloatBitWidth()) - 1));
        else if (dtg::interp::isInt4(type))
          t.i[k] = unpackInt4(type,
                              static_cast<uint8_t>(proto.int32_data(k / 2)), k);
        else
          t.i[k] = dtg::interp::wrapToIntegerType(type, proto.int32_data(k));
      }
    }
  }
  if (t.isFloat() && (type.isF32()))
    t.normalize();
  result.tensor = std::move(t);
  return result;
}

AttrOrError mlir::dtc::onnx_import::readTensorProtoResource(
    MLIRContext *context, const onnx::TensorProto &proto,
    const TensorSource &source, int64_t limit) {
  AttrOrError result;
  SmallVector<int64_t> shape;
  Type type;
  std::string name;
  std::optional<ArrayRef<char>> raw;
  std::shared_ptr<MappedFile> file;
  if (!locateData(context, proto, source, result, shape, type, name, raw, file,
                  limit))
    return result;
  if (!isa<FloatType>(type)) {
    result.error = name + " is not floating-point";
    return result;
  }
  int64_t n = dtg::numElements(shape);
  int64_t size = rawElementSize(type);
  int64_t bytes = n * size;
  AsmResourceBlob blob;
  auto allocate = [&](size_t length) {
    blob = HeapAsmResourceBlob::allocate(length, size, /*dataIsMutable=*/true);
    return blob.getMutableData().data();
  };
  // Bytes that outlive the import (a mapped file, the parsed model) become
  // the blob without a copy, the blob keeping their owner alive; a copy
  // where there is no owner or they are not aligned for the element type.
  std::shared_ptr<const void> owner =
      file ? std::shared_ptr<const void>(file) : source.owner;
  if (raw && owner && reinterpret_cast<uintptr_t>(raw->data()) % size == 0) {
    blob = UnmanagedAsmResourceBlob::allocateWithAlign(
        *raw, size, [owner = std::move(owner)](void *, size_t, size_t) {});
  } else if (raw) {
    std::memcpy(allocate(bytes), raw->data(), bytes);
  } else {
    int64_t have = type.isF32()   ? proto.float_data_size()
                   : type.isF64() ? proto.double_data_size()
                                  : proto.int32_data_size();
    if (have != n) {
      result.error = name + " holds " + std::to_string(have) +
                     " values but its dims need " + std::to_string(n);
      return result;
    }
    char *out = allocate(bytes);
    if (type.isF32())
      std::memcpy(out, proto.float_data().data(), bytes);
    else if (type.isF64())
      std::memcpy(out, proto.double_data().data(), bytes);
    else // 8- and 16-bit floats as their bits (little-endian).
      for (int64_t k = 0; k < n; ++k) {
        uint32_t bits = static_cast<uint32_t>(proto.int32_data(int(k)));
        std::memcpy(out + size * k, &bits, size);
      }
  }
  // A resource name the printer can show as it is.
  std::string key = "onnx_";
  for (char c : proto.name())
    key += llvm::isAlnum(c) ? c : '_';
  result.attr = DenseResourceElementsAttr::get(
      RankedTensorType::get(shape, type), key, std::move(blob));
  return result;
}

std::optional<std::pair<std::string, Tensor>>
mlir::dtc::readTensorFile(MLIRContext *context, StringRef path,
                          std::string &error, bool &unsupported) {
  unsupported = false;
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    error = "cannot read '" + path.str() + "'";
    return std::nullopt;
  }
  onnx::TensorProto proto;
  if ((*buffer)->getBufferSize() >= (size_t(1) << 31) ||
      !proto.ParseFromArray((*buffer)->getBufferStart(),
                            static_cast<int>((*buffer)->getBufferSize()))) {
    error = "'" + path.str() + "' is not a TensorProto";
    return std::nullopt;
  }
  TensorSource source;
  source.modelDir = llvm::sys::path::parent_path(path).str();
  TensorOrError read = readTensorProto(context, proto, source);
  if (!read.tensor) {
    error = read.error;
    unsupported = read.unsupportedType;
    return std::nullopt;
  }
  return std::make_pair(proto.name(), std::move(*read.tensor));
}

std::optional<std::vector<std::string>>
mlir::dtc::readGraphInputNames(StringRef path, std::string &error) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  onnx::ModelProto model;
  if (!buffer || (*buffer)->getBufferSize() >= (size_t(1) << 31) ||
      !model.ParseFromArray((*buffer)->getBufferStart(),
                            static_cast<int>((*buffer)->getBufferSize()))) {
    error = "cannot read '" + path.str() + "' as an ONNX model";
    return std::nullopt;
  }
  std::set<std::string> initializers;
  for (const auto &init : model.graph().initializer())
    initializers.insert(init.name());
  std::vector<std::string> names;
  for (const auto &input : model.graph().input())
    if (!initializers.count(input.name()))
      names.push_back(input.name());
  return names;
}
