//===- DType.h - element types of runtime tensors -------------------------===//
//
// The element types a dtcrt_tensor_desc names ("f32", "bool", ...) plus the
// unsigned types a .npy file may hold, with their sizes, NumPy descriptors
// and conversions to and from double.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_CORE_DTYPE_H
#define DTCRT_CORE_DTYPE_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace dtcrt {

/// An element type. The first ten are the ones a step's tensors use; the
/// unsigned 16/32/64-bit ones appear only in .npy files.
enum class DType {
  F32,
  F64,
  F16,
  BF16,
  I64,
  I32,
  I16,
  I8,
  U8,
  Bool,
  U16,
  U32,
  U64
};

/// Parses a descriptor dtype name ("f32", "bool", ...); nullopt if unknown.
std::optional<DType> parseDType(const std::string &name);

/// The descriptor name of `t` ("f32", "bool", ...).
const char *dtypeName(DType t);

/// A name a NumPy user recognizes ("float32", "int64", "bool", ...).
const char *dtypeNumpyName(DType t);

/// Bytes of one element.
size_t dtypeSize(DType t);

/// True for f16, bf16, f32 and f64.
bool isFloatDType(DType t);

/// True for signed integer types.
bool isSignedIntDType(DType t);

/// The little-endian NumPy descriptor ("<f4", "|b1", ...); bf16, which NumPy
/// lacks, is written as its 16 bits ("<u2").
std::string npyDescr(DType t);

/// The type of a NumPy descriptor ("<f4", ">i8", "|b1", "<u2", ...) and
/// whether it is big-endian; nullopt if dtcrt does not read it.
std::optional<DType> parseNpyDescr(const std::string &descr, bool &bigEndian);

/// Reads element `index` of `data` (of type `t`) as a double.
double loadAsDouble(DType t, const void *data, int64_t index);

/// Writes `value` as element `index` of `data` (of type `t`), rounding to
/// nearest for floats and truncating toward zero for integers.
void storeFromDouble(DType t, void *data, int64_t index, double value);

} // namespace dtcrt

#endif // DTCRT_CORE_DTYPE_H
