//===- BiasGradFolds.h - bias gradients a weight's product computes -------===//
//
// The CUDA target: a bias's gradient is the sum of the output gradient G
// over every dimension but the last, and its weight's gradient a product
// that contracts G over those same dimensions (X^T G, or G^T X). cuBLASLt
// computes the first as an epilogue of the second (BGRADA/BGRADB), reading
// G once instead of twice. A fold pairs such a dtg.reduce_sum with the
// first later product (a gemm kernel, or dtg.gemm) that reads G that way,
// where nothing in between reads the sum, or else with the product just
// before it (the order autodiff leaves), where none of that product's
// buffers shares memory with the sum's: the reduce_sum emits no code, and
// the product writes the sum too (Device.h: EpilogueKind::BiasGradA/B).
//
//===----------------------------------------------------------------------===//

#ifndef DTC_TARGET_CPU_BIASGRADFOLDS_H
#define DTC_TARGET_CPU_BIASGRADFOLDS_H

#include "mlir/IR/Block.h"

#include <string>
#include <vector>

namespace mlir::dtc::cpu {

struct BiasGradFold {
  /// The dtg.reduce_sum, and the product that computes it (a dtg.fusion of
  /// kind gemm, or a dtg.gemm).
  Operation *reduce = nullptr;
  Operation *gemm = nullptr;
  /// Whether the product's left operand is G (op(a) = [m, k], a sum per
  /// row) or its right one (op(b) = [k, n], a sum per column).
  bool left = false;
  /// Whether the product comes before the reduce_sum (the sum is written
  /// before its op's place in the plan).
  bool early = false;
};

/// The folds of `body`: G contiguous in memory (through views that keep
/// its buffer), the product of rank 2, unscaled and all of its op's
/// result (no epilogue, no C), the sum of the product's element type.
std::vector<BiasGradFold> findBiasGradFolds(Block &body);

/// The dtcg::Epilogue<`type`> that has the product write `fold`'s sum to
/// `pointer`.
std::string biasGradEpilogue(const BiasGradFold &fold, StringRef type,
                             StringRef pointer);

} // namespace mlir::dtc::cpu

#endif // DTC_TARGET_CPU_BIASGRADFOLDS_H
