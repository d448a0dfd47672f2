//===- Shapes.h - what dtc calibrate's microbenchmarks time -----*- C++ -*-===//
//
// The sizes the microbenchmarks (Microbench.h) run at, which dtc's
// calibrate also prices (the FLOPs its cost model counts for the same ops
// at the same shapes), apart from the kernels so that dtc need not parse
// them.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_CALIBRATE_SHAPES_H
#define DTCRT_CALIBRATE_SHAPES_H

#include <cstdint>

namespace dtcrt::calibrate {

/// The shapes timed; dtc's calibrate prices the same ops at these shapes.
constexpr int64_t kGemmSizes[] = {64, 128, 256, 512, 1024};
constexpr int64_t kExpSize = 1 << 16;
constexpr int64_t kRows = 256, kCols = 256;
/// Iterations of the multiply-add loop (128 FLOPs each, per thread) and
/// elements of each triad array.
constexpr int64_t kVectorIters = 1 << 20;
constexpr int64_t kTriadSize = int64_t(1) << 24;

} // namespace dtcrt::calibrate

#endif // DTCRT_CALIBRATE_SHAPES_H
