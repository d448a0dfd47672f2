//===- Npy.cpp - NumPy .npy files <-> interpreter tensors ----------------===//

#include "compiler/Driver/Npy.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace mlir;
using namespace mlir::dtc;
using dtg::interp::Tensor;

/// The element type of a NumPy dtype descriptor such as '<f4'.
static Type typeOfDescr(MLIRContext *context, StringRef descr) {
  Builder b(context);
  if (descr.size() < 2 ||
      (descr[0] != '<' && descr[0] != '|' && descr[0] != '='))
    return Type();
  StringRef kind = descr.drop_front();
  if (kind == "b1")
    return b.getI1Type();
  if (kind == "f2")
    return b.getF16Type();
  if (kind == "f4")
    return b.getF32Type();
  if (kind == "f8")
    return b.getF64Type();
  unsigned bytes = 0;
  if (kind.size() == 2 && (kind[0] == 'i' || kind[0] == 'u') &&
      !kind.drop_front().getAsInteger(10, bytes) &&
      (bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8))
    return IntegerType::get(context, bytes * 8,
                            kind[0] == 'i' ? IntegerType::Signless
                                           : IntegerType::Unsigned);
  return Type();
}

static std::string descrOf(Type type) {
  if (type.isInteger(1))
    return "|b1";
  if (type.isF16())
    return "<f2";
  if (type.isF32())
    return "<f4";
  if (type.isF64())
    return "<f8";
  if (auto intType = dyn_cast<IntegerType>(type))
    return std::string(intType.getWidth() == 8 ? "|" : "<") +
           (intType.isUnsigned() ? "u" : "i") +
           std::to_string(intType.getWidth() / 8);
  return "";
}

/// Extracts the value text of `key` in a Python dict literal header.
static StringRef headerField(StringRef header, StringRef key) {
  size_t pos = header.find(("'" + key + "'").str());
  if (pos == StringRef::npos)
    return "";
  StringRef rest = header.drop_front(pos + key.size() + 2).ltrim(" :");
  if (rest.starts_with("(")) {
    size_t end = rest.find(')');
    return end == StringRef::npos ? "" : rest.substr(0, end + 1);
  }
  size_t end = rest.find_first_of(",}");
  return rest.substr(0, end).trim();
}

std::optional<Tensor> mlir::dtc::readNpy(MLIRContext *context, StringRef path,
                                         std::string &error) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    error = "cannot read '" + path.str() + "': " + buffer.getError().message();
    return std::nullopt;
  }
  StringRef data = (*buffer)->getBuffer();
  if (data.size() < 10 || !data.starts_with("\x93NUMPY")) {
    error = "'" + path.str() + "' is not a .npy file";
    return std::nullopt;
  }
  uint8_t major = data[6];
  size_t headerLen, offset;
  if (major == 1) {
    headerLen = uint8_t(data[8]) | (uint8_t(data[9]) << 8);
    offset = 10;
  } else if ((major == 2 || major == 3) && data.size() >= 12) {
    headerLen = uint32_t(uint8_t(data[8])) | (uint32_t(uint8_t(data[9])) << 8) |
                (uint32_t(uint8_t(data[10])) << 16) |
                (uint32_t(uint8_t(data[11])) << 24);
    offset = 12;
  } else {
    error = "'" + path.str() + "' has an unknown .npy version";
    return std::nullopt;
  }
  if (offset + headerLen > data.size()) {
    error = "'" + path.str() + "' is truncated";
    return std::nullopt;
  }
  StringRef header = data.substr(offset, headerLen);
  StringRef descr = headerField(header, "descr").trim("'\"");
  Type type = typeOfDescr(context, descr);
  if (!type) {
    error = "'" + path.str() + "' has dtype '" + descr.str() +
            "', which dtc does not read (use bool, int, uint or float)";
    return std::nullopt;
  }
  if (headerField(header, "fortran_order") != "False") {
    error = "'" + path.str() + "' is in Fortran order; save it C-ordered";
    return std::nullopt;
  }
  StringRef shapeText = headerField(header, "shape").trim("()");
  SmallVector<int64_t> shape;
  SmallVector<StringRef> parts;
  shapeText.split(parts, ',', -1, /*KeepEmpty=*/false);
  int64_t n = 1;
  for (StringRef part : parts) {
    int64_t d;
    if (part.trim().getAsInteger(10, d) || d < 0) {
      error = "'" + path.str() + "' has a malformed shape";
      return std::nullopt;
    }
    if (d > 0 && n > (int64_t(1) << 31) / d) {
      error = "'" + path.str() + "' is too large";
      return std::nullopt;
    }
    n *= d;
    shape.push_back(d);
  }
  size_t elementSize = type.isInteger(1) ? 1 : type.getIntOrFloatBitWidth() / 8;
  StringRef payload = data.drop_front(offset + headerLen);
  if (payload.size() != n * elementSize) {
    error = "'" + path.str() + "' holds " + std::to_string(payload.size()) +
            " data bytes where shape and dtype need " +
            std::to_string(n * elementSize);
    return std::nullopt;
  }
  Tensor t = Tensor::zeros(type, shape);
  for (int64_t k = 0; k < n; ++k) {
    const char *p = payload.data() + k * elementSize;
    if (type.isF32()) {
      float v;
      std::memcpy(&v, p, 4);
      t.f[k] = v;
    } else if (type.isF64()) {
      std::memcpy(&t.f[k], p, 8);
    } else if (type.isF16()) {
      uint16_t bits;
      std::memcpy(&bits, p, 2);
      APFloat v(APFloat::IEEEhalf(), APInt(16, bits));
      bool losesInfo;
      v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                &losesInfo);
      t.f[k] = v.convertToDouble();
    } else {
      uint64_t bits = 0;
      std::memcpy(&bits, p, elementSize);
      t.i[k] = dtg::interp::wrapToIntegerType(type, static_cast<int64_t>(bits));
    }
  }
  return t;
}

bool mlir::dtc::writeNpy(const Tensor &tensor, StringRef path,
                         std::string &error) {
  std::string descr = descrOf(tensor.elementType);
  if (descr.empty()) {
    error = "cannot write element type to .npy";
    return false;
  }
  std::string shape = "(";
  for (int64_t d : tensor.shape)
    shape += std::to_string(d) + ",";
  if (tensor.shape.size() > 1)
    shape.pop_back();
  shape += ")";
  std::string header = "{'descr': '" + descr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec) {
    error = "cannot write '" + path.str() + "': " + ec.message();
    return false;
  }
  os << "\x93NUMPY" << char(1) << char(0) << char(header.size() & 0xff)
     << char(header.size() >> 8) << header;
  Type type = tensor.elementType;
  for (int64_t k = 0, n = tensor.numElements(); k < n; ++k) {
    if (type.isF32()) {
      float v = tensor.f[k];
      os.write(reinterpret_cast<const char *>(&v), 4);
    } else if (type.isF64()) {
      os.write(reinterpret_cast<const char *>(&tensor.f[k]), 8);
    } else if (type.isF16()) {
      APFloat v(tensor.f[k]);
      bool losesInfo;
      v.convert(APFloat::IEEEhalf(), APFloat::rmNearestTiesToEven, &losesInfo);
      uint16_t bits = v.bitcastToAPInt().getZExtValue();
      os.write(reinterpret_cast<const char *>(&bits), 2);
    } else {
      size_t size = type.isInteger(1) ? 1 : type.getIntOrFloatBitWidth() / 8;
      uint64_t bits = static_cast<uint64_t>(tensor.i[k]);
      os.write(reinterpret_cast<const char *>(&bits), size);
    }
  }
  return true;
}
