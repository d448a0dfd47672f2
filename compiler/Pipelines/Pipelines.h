//===- Pipelines.h - the phases of dtc as pass pipelines ------------*- C++
//-*-===//

#ifndef DTC_COMPILER_PIPELINES_PIPELINES_H
#define DTC_COMPILER_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"

namespace mlir::dtc {

/// Graph clean-up after import: folding, idiom recognition, CSE, DCE.
void buildCleanupPipeline(OpPassManager &pm);

/// Registers the pipelines with the pass registry (`dtc-opt
/// --dtc-cleanup-pipeline` runs exactly what `dtc` runs).
void registerPipelines();

} // namespace mlir::dtc

#endif // DTC_COMPILER_PIPELINES_PIPELINES_H
