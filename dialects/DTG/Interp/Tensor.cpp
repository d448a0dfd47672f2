//===- Tensor.cpp - tensors of the reference interpreter -----------------===//

#include "dialects/DTG/Interp/Tensor.h"

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/APFloat.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace mlir;
using namespace mlir::dtg::interp;

Tensor Tensor::zeros(Type elementType, ArrayRef<int64_t> shape) {
  Tensor t;
  t.elementType = elementType;
  t.shape.assign(shape.begin(), shape.end());
  if (t.isFloat())
    t.f.assign(t.numElements(), 0.0);
  else
    t.i.assign(t.numElements(), 0);
  return t;
}

int64_t Tensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

void Tensor::set(int64_t k, double value) {
  if (isFloat())
    f[k] = roundToFloatType(elementType, value);
  else if (std::isnan(value))
    i[k] = wrapToIntegerType(elementType, 0);
  else if (elementType.isInteger(1))
    i[k] = value != 0.0;
  else if (value >= 9223372036854775807.0) // saturate: the cast would be UB
    i[k] = wrapToIntegerType(elementType, INT64_MAX);
  else if (value <= -9223372036854775808.0)
    i[k] = wrapToIntegerType(elementType, INT64_MIN);
  else
    i[k] =
        wrapToIntegerType(elementType, static_cast<int64_t>(std::trunc(value)));
}

void Tensor::setInt(int64_t k, int64_t value) {
  if (isFloat())
    f[k] = roundToFloatType(elementType, static_cast<double>(value));
  else
    i[k] = wrapToIntegerType(elementType, value);
}

void Tensor::normalize() {
  if (isFloat()) {
    for (double &v : f)
      v = roundToFloatType(elementType, v);
  } else {
    for (int64_t &v : i)
      v = wrapToIntegerType(elementType, v);
  }
}

double mlir::dtg::interp::roundToFloatType(Type type, double value) {
  if (type.isF64())
    return value;
  if (type.isF32())
    return static_cast<double>(static_cast<float>(value));
  auto floatType = cast<FloatType>(type);
  APFloat v(value);
  bool losesInfo = false;
  v.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
            &losesInfo);
  v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &losesInfo);
  return v.convertToDouble();
}

int64_t mlir::dtg::interp::wrapToIntegerType(Type type, int64_t value) {
  auto intType = cast<IntegerType>(type);
  unsigned width = intType.getWidth();
  if (width == 1)
    return value != 0;
  if (width >= 64)
    return value;
  uint64_t mask = (uint64_t(1) << width) - 1;
  uint64_t bits = static_cast<uint64_t>(value) & mask;
  if (intType.isUnsigned())
    return static_cast<int64_t>(bits);
  // Sign-extend.
  uint64_t sign = uint64_t(1) << (width - 1);
  return static_cast<int64_t>((bits ^ sign) - sign);
}

SmallVector<int64_t> mlir::dtg::interp::stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

BroadcastIndexer::BroadcastIndexer(ArrayRef<int64_t> operandShape,
                                   ArrayRef<int64_t> resultShape)
    : resultStrides(stridesOf(resultShape)),
      operandStrides(resultShape.size(), 0) {
  SmallVector<int64_t> strides = stridesOf(operandShape);
  size_t lead = resultShape.size() - operandShape.size();
  for (size_t d = 0; d < operandShape.size(); ++d)
    operandStrides[lead + d] = operandShape[d] == 1 ? 0 : strides[d];
}

int64_t BroadcastIndexer::operator()(int64_t resultIndex) const {
  int64_t index = 0;
  for (size_t d = 0; d < resultStrides.size(); ++d) {
    int64_t coord = resultIndex / resultStrides[d];
    resultIndex -= coord * resultStrides[d];
    index += coord * operandStrides[d];
  }
  return index;
}

bool mlir::dtg::interp::isSupportedElementType(Type type) {
  if (auto intType = dyn_cast<IntegerType>(type))
    return intType.getWidth() <= 64 && !intType.isSigned();
  return type.isF16() || type.isBF16() || type.isF32() || type.isF64() ||
         isFloat8(type);
}

bool mlir::dtg::interp::isFloat8(Type type) {
  return isa<Float8E4M3FNType, Float8E4M3FNUZType, Float8E5M2Type,
             Float8E5M2FNUZType>(type);
}

bool mlir::dtg::interp::isInt4(Type type) {
  auto intType = dyn_cast<IntegerType>(type);
  return intType && intType.getWidth() == 4;
}

double mlir::dtg::interp::floatFromBits(Type type, uint64_t bits) {
  auto floatType = cast<FloatType>(type);
  APFloat v(floatType.getFloatSemantics(), APInt(floatType.getWidth(), bits));
  bool losesInfo = false;
  v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &losesInfo);
  return v.convertToDouble();
}

double mlir::dtg::interp::castToFloatType(Type type, double value,
                                          bool saturate) {
  if (saturate && isFloat8(type) && !std::isnan(value)) {
    APFloat largest =
        APFloat::getLargest(cast<FloatType>(type).getFloatSemantics());
    bool losesInfo = false;
    largest.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                    &losesInfo);
    double max = largest.convertToDouble();
    value = std::clamp(value, -max, max);
  }
  return roundToFloatType(type, value);
}

int64_t mlir::dtg::interp::castToInt4(Type type, double value) {
  if (std::isnan(value))
    return 0;
  bool isUnsigned = cast<IntegerType>(type).isUnsigned();
  double low = isUnsigned ? 0 : -8, high = isUnsigned ? 15 : 7;
  return static_cast<int64_t>(std::nearbyint(std::clamp(value, low, high)));
}

FailureOr<Tensor> mlir::dtg::interp::tensorFromAttr(ElementsAttr attr) {
  auto type = dyn_cast<RankedTensorType>(attr.getType());
  if (!type || !isSupportedElementType(type.getElementType()))
    return failure();
  Tensor t = Tensor::zeros(type.getElementType(), type.getShape());
  int64_t n = t.numElements();
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    if (t.isFloat()) {
      int64_t k = 0;
      for (const APFloat &v : dense.getValues<APFloat>()) {
        APFloat d = v;
        bool losesInfo = false;
        d.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                  &losesInfo);
        t.f[k++] = d.convertToDouble();
      }
    } else {
      bool isUnsigned = cast<IntegerType>(t.elementType).isUnsigned();
      int64_t k = 0;
      for (const APInt &v : dense.getValues<APInt>())
        t.i[k++] = t.elementType.isInteger(1) ? v.getBoolValue()
                   : isUnsigned               ? int64_t(v.getZExtValue())
                                              : v.getSExtValue();
    }
    return t;
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return failure();
    ArrayRef<char> data = blob->getData();
    Type et = t.elementType;
    unsigned bytes = (et.getIntOrFloatBitWidth() + 7) / 8;
    if (static_cast<int64_t>(data.size()) != n * bytes)
      return failure();
    for (int64_t k = 0; k < n; ++k) {
      const char *p = data.data() + k * bytes;
      if (et.isF32()) {
        float v;
        std::memcpy(&v, p, 4);
        t.f[k] = v;
      } else if (et.isF64()) {
        std::memcpy(&t.f[k], p, 8);
      } else if (t.isFloat()) {
        uint64_t bits = 0;
        std::memcpy(&bits, p, bytes);
        t.f[k] = floatFromBits(et, bits);
      } else {
        uint64_t bits = 0;
        std::memcpy(&bits, p, bytes);
        t.i[k] = wrapToIntegerType(et, static_cast<int64_t>(bits));
      }
    }
    return t;
  }
  return failure();
}

DenseElementsAttr mlir::dtg::interp::tensorToAttr(const Tensor &tensor) {
  RankedTensorType type = tensor.getType();
  Type et = tensor.elementType;
  if (et.isF32()) {
    std::vector<float> values(tensor.f.begin(), tensor.f.end());
    return DenseElementsAttr::get(type, ArrayRef<float>(values));
  }
  if (et.isF64())
    return DenseElementsAttr::get(type, ArrayRef<double>(tensor.f));
  if (tensor.isFloat()) {
    SmallVector<APFloat> values;
    values.reserve(tensor.f.size());
    for (double v : tensor.f) {
      APFloat a(v);
      bool losesInfo = false;
      a.convert(cast<FloatType>(et).getFloatSemantics(),
                APFloat::rmNearestTiesToEven, &losesInfo);
      values.push_back(a);
    }
    return DenseElementsAttr::get(type, values);
  }
  if (et.isInteger(1)) {
    SmallVector<bool> values(tensor.i.begin(), tensor.i.end());
    return DenseElementsAttr::get(type, values);
  }
  unsigned width = et.getIntOrFloatBitWidth();
  SmallVector<APInt> values;
  values.reserve(tensor.i.size());
  for (int64_t v : tensor.i)
    values.push_back(APInt(width, static_cast<uint64_t>(v), /*isSigned=*/true));
  return DenseElementsAttr::get(type, values);
}
