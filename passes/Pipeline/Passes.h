//===- Passes.h - pipeline parallelism -----------------------------*- C++
//-*-===//

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
/// Under the interleaved schedule: the model chunk (0 .. V-1 of its rank)
/// of an op of a stage's forward, and of its activation arguments and
/// results.
constexpr StringLiteral kChunk = "dtc.chunk";
/// On the activation arguments and results of a stage: the location of the
/// op that made the value (LocationAttr); the transfers that carry it take
/// it as theirs.
constexpr StringLiteral kSource = "dtc.source";
/// On the module: the number of stages.
constexpr StringLiteral kStages = "dtc.pipeline_stages";
/// On a forward or backward call of the schedule: "F" or "B", and the
/// micro-batch.
constexpr StringLiteral kPipelineOp = "dtc.pipeline_op";
constexpr StringLiteral kMicroBatch = "dtc.micro_batch";
} // namespace pipeline

} // namespace mlir::dtc

#endif // DTC_PASSES_PIPELINE_PASSES_H
