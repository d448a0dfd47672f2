//===- WeightsLayout.cpp - the initial values of a step, as one file -----===//

#include "compiler/Target/WeightsLayout.h"

#include "compiler/Support/MappedWeights.h"

#include "dialects/DTG/Interp/Tensor.h"
#include "passes/Memory/Passes.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::dtc;

static constexpr StringLiteral kInitial = "dtg.initial";

/// The little-endian bytes of `attr` as its type stores them (floats;
/// booleans pack differently).
static std::optional<ArrayRef<char>> rawBytes(ElementsAttr attr) {
  if (!attr)
    return std::nullopt;
  auto type = cast<RankedTensorType>(attr.getType());
  if (!isa<FloatType>(type.getElementType()))
    return std::nullopt;
  ArrayRef<char> data;
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return std::nullopt;
    data = blob->getData();
  } else if (auto dense = dyn_cast<DenseElementsAttr>(attr);
             dense && !dense.isSplat()) {
    data = dense.getRawData();
  } else {
    return std::nullopt;
  }
  if (static_cast<int64_t>(data.size()) != memory::byteSize(type))
    return std::nullopt;
  return data;
}

/// The bytes of argument `i`'s initial value: the whole tensor's, also
/// where the argument is one rank's block of it (ZeRO's master weights),
/// since every rank reads its block out of the one file.
static int64_t initialBytes(func::FuncOp func, unsigned i) {
  auto attr = func.getArgAttrOfType<ElementsAttr>(i, kInitial);
  return memory::byteSize(attr ? Type(attr.getType())
                               : func.getArgument(i).getType());
}

WeightsLayout::WeightsLayout(func::FuncOp func) : func(func) {
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    if (!func.getArgAttr(i, kInitial)) {
      offsets.push_back(-1);
      continue;
    }
    offsets.push_back(total);
    total += (initialBytes(func, i) + 63) / 64 * 64;
  }
}

LogicalResult WeightsLayout::write(StringRef path) const {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return func.emitError("cannot write '") << path << "': " << ec.message();
  int64_t written = 0;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    if (offsets[i] < 0)
      continue;
    os.write_zeros(offsets[i] - written);
    written = offsets[i];
    auto attr = func.getArgAttrOfType<ElementsAttr>(i, kInitial);
    // The bytes as they are, where the attribute holds them in the
    // argument's type (a model's weights, from the importer's resource
    // blobs): a stream, not a conversion per element.
    if (std::optional<ArrayRef<char>> raw = rawBytes(attr)) {
      os.write(raw->data(), raw->size());
      // Pages of a mapped weights file go back once written.
      os.flush();
      releaseMappedPages(*raw);
      written += initialBytes(func, i);
      continue;
    }
    FailureOr<dtg::interp::Tensor> t = dtg::interp::tensorFromAttr(attr);
    if (failed(t))
      return func.emitError("cannot serialize the initial value of argument #")
             << i;
    Type e = t->elementType;
    for (int64_t k = 0, n = t->numElements(); k < n; ++k) {
      if (e.isF32()) {
        float v = float(t->f[k]);
        os.write(reinterpret_cast<const char *>(&v), 4);
      } else if (e.isF64()) {
        os.write(reinterpret_cast<const char *>(&t->f[k]), 8);
      } else if (t->isFloat()) {
        APFloat v(t->f[k]);
        bool losesInfo;
        v.convert(cast<FloatType>(e).getFloatSemantics(),
                  APFloat::rmNearestTiesToEven, &losesInfo);
        uint16_t bits = uint16_t(v.bitcastToAPInt().getZExtValue());
        os.write(reinterpret_cast<const char *>(&bits), 2);
      } else {
        int64_t bytes = e.isInteger(1) ? 1 : e.getIntOrFloatBitWidth() / 8;
        uint64_t bits = uint64_t(t->i[k]);
        os.write(reinterpret_cast<const char *>(&bits), bytes);
      }
    }
    written += initialBytes(func, i);
  }
  os.write_zeros(total - written);
  return success();
}
