//===- DType.cpp - element types of runtime tensors -----------------------===//

#include "runtime/src/Core/DType.h"

#include "dtcrt/kernels/Common.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace dtcrt;

namespace {
struct DTypeInfo {
  DType type;
  const char *name;
  const char *numpyName;
  size_t size;
  const char *descr;
};
} // namespace

static const DTypeInfo kTypes[] = {
    {DType::F32, "f32", "float32", 4, "<f4"},
    {DType::F64, "f64", "float64", 8, "<f8"},
    {DType::F16, "f16", "float16", 2, "<f2"},
    {DType::BF16, "bf16", "bfloat16", 2, "<u2"},
    {DType::I64, "i64", "int64", 8, "<i8"},
    {DType::I32, "i32", "int32", 4, "<i4"},
    {DType::I16, "i16", "int16", 2, "<i2"},
    {DType::I8, "i8", "int8", 1, "|i1"},
    {DType::U8, "u8", "uint8", 1, "|u1"},
    {DType::Bool, "bool", "bool", 1, "|b1"},
    {DType::U16, "u16", "uint16", 2, "<u2"},
    {DType::U32, "u32", "uint32", 4, "<u4"},
    {DType::U64, "u64", "uint64", 8, "<u8"},
};

static const DTypeInfo &info(DType t) { return kTypes[static_cast<int>(t)]; }

std::optional<DType> dtcrt::parseDType(const std::string &name) {
  for (const DTypeInfo &i : kTypes)
    if (name == i.name)
      return i.type;
  return std::nullopt;
}

const char *dtcrt::dtypeName(DType t) { return info(t).name; }
const char *dtcrt::dtypeNumpyName(DType t) { return info(t).numpyName; }
size_t dtcrt::dtypeSize(DType t) { return info(t).size; }
std::string dtcrt::npyDescr(DType t) { return info(t).descr; }

bool dtcrt::isFloatDType(DType t) {
  return t == DType::F32 || t == DType::F64 || t == DType::F16 ||
         t == DType::BF16;
}

bool dtcrt::isSignedIntDType(DType t) {
  return t == DType::I64 || t == DType::I32 || t == DType::I16 ||
         t == DType::I8;
}

std::optional<DType> dtcrt::parseNpyDescr(const std::string &descr,
                                          bool &bigEndian) {
  if (descr.size() != 3)
    return std::nullopt;
  char order = descr[0];
  if (order != '<' && order != '>' && order != '|' && order != '=')
    return std::nullopt;
  std::string kind = descr.substr(1);
  static const struct {
    const char *kind;
    DType type;
  } kKinds[] = {{"f2", DType::F16}, {"f4", DType::F32}, {"f8", DType::F64},
                {"i1", DType::I8},  {"i2", DType::I16}, {"i4", DType::I32},
                {"i8", DType::I64}, {"u1", DType::U8},  {"u2", DType::U16},
                {"u4", DType::U32}, {"u8", DType::U64}, {"b1", DType::Bool}};
  for (const auto &k : kKinds) {
    if (kind != k.kind)
      continue;
    // '|' (not applicable) is only valid for one-byte types; '=' is native,
    // which is little-endian on every machine dtc runs on.
    if (order == '|' && dtypeSize(k.type) != 1)
      return std::nullopt;
    bigEndian = order == '>' && dtypeSize(k.type) != 1;
    return k.type;
  }
  return std::nullopt;
}

template <typename T> static T loadRaw(const void *data, int64_t index) {
  T v;
  std::memcpy(&v, static_cast<const char *>(data) + index * sizeof(T),
              sizeof(T));
  return v;
}

template <typename T> static void storeRaw(void *data, int64_t index, T v) {
  std::memcpy(static_cast<char *>(data) + index * sizeof(T), &v, sizeof(T));
}

double dtcrt::loadAsDouble(DType t, const void *data, int64_t index) {
  switch (t) {
  case DType::F32:
    return loadRaw<float>(data, index);
  case DType::F64:
    return loadRaw<double>(data, index);
  case DType::F16:
    return float(loadRaw<dtck::f16>(data, index));
  case DType::BF16:
    return float(loadRaw<dtck::bf16>(data, index));
  case DType::I64:
    return double(loadRaw<int64_t>(data, index));
  case DType::I32:
    return loadRaw<int32_t>(data, index);
  case DType::I16:
    return loadRaw<int16_t>(data, index);
  case DType::I8:
    return loadRaw<int8_t>(data, index);
  case DType::U8:
    return loadRaw<uint8_t>(data, index);
  case DType::Bool:
    return loadRaw<uint8_t>(data, index) != 0 ? 1.0 : 0.0;
  case DType::U16:
    return loadRaw<uint16_t>(data, index);
  case DType::U32:
    return loadRaw<uint32_t>(data, index);
  case DType::U64:
    return double(loadRaw<uint64_t>(data, index));
  }
  return 0;
}

/// `value` truncated toward zero and clamped to [lo, hi] (NaN gives 0).
template <typename T> static T clampToInt(double value) {
  if (std::isnan(value))
    return T(0);
  double lo = double(std::numeric_limits<T>::lowest());
  double hi = double(std::numeric_limits<T>::max());
  if (value <= lo)
    return std::numeric_limits<T>::lowest();
  if (value >= hi)
    return std::numeric_limits<T>::max();
  return static_cast<T>(value);
}

void dtcrt::storeFromDouble(DType t, void *data, int64_t index, double value) {
  switch (t) {
  case DType::F32:
    return storeRaw<float>(data, index, float(value));
  case DType::F64:
    return storeRaw<double>(data, index, value);
  case DType::F16:
    return storeRaw<dtck::f16>(data, index, dtck::f16(float(value)));
  case DType::BF16:
    return storeRaw<dtck::bf16>(data, index, dtck::bf16(float(value)));
  case DType::I64:
    return storeRaw<int64_t>(data, index, clampToInt<int64_t>(value));
  case DType::I32:
    return storeRaw<int32_t>(data, index, clampToInt<int32_t>(value));
  case DType::I16:
    return storeRaw<int16_t>(data, index, clampToInt<int16_t>(value));
  case DType::I8:
    return storeRaw<int8_t>(data, index, clampToInt<int8_t>(value));
  case DType::U8:
    return storeRaw<uint8_t>(data, index, clampToInt<uint8_t>(value));
  case DType::Bool:
    return storeRaw<uint8_t>(data, index, value != 0 ? 1 : 0);
  case DType::U16:
    return storeRaw<uint16_t>(data, index, clampToInt<uint16_t>(value));
  case DType::U32:
    return storeRaw<uint32_t>(data, index, clampToInt<uint32_t>(value));
  case DType::U64:
    return storeRaw<uint64_t>(data, index, clampToInt<uint64_t>(value));
  }
}
