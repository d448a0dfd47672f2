//===- Npy.h - NumPy .npy files
//--------------------------------------------===//
//
// Reads .npy files of format versions 1 to 3 (bool, signed and unsigned
// integers, float16/32/64, either byte order, C order) through a memory
// mapping, and writes version 1 files.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_DATA_NPY_H
#define DTCRT_DATA_NPY_H

#include "runtime/src/Core/DType.h"
#include "runtime/src/Core/Files.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dtcrt {

/// An array read from a .npy file: little-endian elements in C order.
struct NpyArray {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  /// The elements: inside `file`, or in `swapped` for big-endian files.
  const uint8_t *data = nullptr;
  size_t bytes = 0;
  MappedFile file;
  std::vector<uint8_t> swapped;

  int64_t numElements() const;
};

/// Parses a .npy image held in memory (`what` names it in messages). The
/// result points into `image`, except for big-endian data, which is copied.
bool parseNpy(const uint8_t *image, size_t size, const std::string &what,
              NpyArray &out, std::string &error);

/// Reads `path` (mapped, not copied).
bool readNpy(const std::string &path, NpyArray &out, std::string &error);

/// The version 1 .npy header (magic to newline) of an array of `dtype` and
/// `shape`; the elements follow it.
std::string npyHeader(DType dtype, const std::vector<int64_t> &shape);

/// A whole .npy image: npyHeader and the `size` bytes of elements.
std::string encodeNpy(DType dtype, const std::vector<int64_t> &shape,
                      const void *bytes, size_t size);

/// Writes a .npy file durably (flushed to disk).
bool writeNpyFile(const std::string &path, DType dtype,
                  const std::vector<int64_t> &shape, const void *bytes,
                  size_t size, std::string &error);

/// "(2, 3)" as NumPy prints shapes.
std::string shapeString(const std::vector<int64_t> &shape);

} // namespace dtcrt

#endif // DTCRT_DATA_NPY_H
