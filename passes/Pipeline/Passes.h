//===- Passes.h - pipeline parallelism -----------------------------*- C++ -*-===//

#ifndef DTC_PASSES_PIPELINE_PASSES_H
#define DTC_PASSES_PIPELINE_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::dtc {

#define GEN_PASS_DECL
#include "passes/Pipeline/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Pipeline/Passes.h.inc"

/// Attribute names of the pipeline passes.
namespace pipeline {
/// On a stage's function: its index (IntegerAttr) and its forward time by
/// the cost model (FloatAttr, seconds).
constexpr StringLiteral kStage = "dtc.stage";
constexpr StringLiteral kStageSeconds = "dtc.stage_seconds";
/// On the module: the number of stages.
constexpr StringLiteral kStages = "dtc.pipeline_stages";
/// On a forward or backward call of the schedule: "F" or "B", and the
/// micro-batch.
constexpr StringLiteral kPipelineOp = "dtc.pipeline_op";
constexpr StringLiteral kMicroBatch = "dtc.micro_batch";
} // namespace pipeline

} // namespace mlir::dtc

#endif // DTC_PASSES_PIPELINE_PASSES_H
