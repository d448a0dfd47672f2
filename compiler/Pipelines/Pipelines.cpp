//===- Pipelines.cpp - the phases of dtc as pass pipelines ---------------===//

#include "compiler/Pipelines/Pipelines.h"

#include "passes/Cleanup/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::dtc::buildCleanupPipeline(OpPassManager &pm) {
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  funcPm.addPass(createFoldConstantsPass());
  funcPm.addPass(createCanonicalizerPass());
  funcPm.addPass(createRecognizeIdiomsPass());
  funcPm.addPass(createCSEPass());
  funcPm.addPass(createCanonicalizerPass());
}

void mlir::dtc::registerPipelines() {
  PassPipelineRegistration<>("dtc-cleanup-pipeline",
                             "Graph clean-up after import (what dtc runs)",
                             buildCleanupPipeline);
}
