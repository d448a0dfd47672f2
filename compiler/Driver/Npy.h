//===- Npy.h - NumPy .npy files <-> interpreter tensors -------------*- C++
//-*-===//

#ifndef DTC_COMPILER_DRIVER_NPY_H
#define DTC_COMPILER_DRIVER_NPY_H

#include "dialects/DTG/Interp/Tensor.h"

#include <string>

namespace mlir::dtc {

/// Reads a little-endian, C-order .npy file (version 1-3) of bool, int8-64,
/// uint8-64, float16/32/64. On failure returns nullopt and sets `error`.
std::optional<dtg::interp::Tensor> readNpy(MLIRContext *context, StringRef path,
                                           std::string &error);

/// Writes `tensor` as a .npy file; false (with `error`) on failure.
bool writeNpy(const dtg::interp::Tensor &tensor, StringRef path,
              std::string &error);

} // namespace mlir::dtc

#endif // DTC_COMPILER_DRIVER_NPY_H
