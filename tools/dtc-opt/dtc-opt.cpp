//===- dtc-opt.cpp - pass driver for dtc's dialects and passes -----------===//
//
// Replays anything dtc does on a .mlir file; the driver of the lit tests.
//
//===----------------------------------------------------------------------===//

#include "compiler/Pipelines/Pipelines.h"
#include "dialects/DTG/IR/DTGOps.h"
#include "dialects/Dist/IR/DistOps.h"
#include "passes/Cleanup/Passes.h"
#include "passes/CommScheduling/Passes.h"
#include "passes/Fusion/Passes.h"
#include "passes/Memory/Passes.h"
#include "passes/MixedPrecision/Passes.h"
#include "passes/Pipeline/Passes.h"
#include "passes/Recompute/Passes.h"
#include "passes/Sharding/Passes.h"
#include "passes/Training/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::dtg::DTGDialect, mlir::dist::DistDialect,
                  mlir::func::FuncDialect, mlir::arith::ArithDialect,
                  mlir::scf::SCFDialect>();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerSymbolDCEPass();
  mlir::dtc::registerCleanupPasses();
  mlir::dtc::registerTrainingPasses();
  mlir::dtc::registerMemoryPasses();
  mlir::dtc::registerMixedPrecisionPasses();
  mlir::dtc::registerFusionPasses();
  mlir::dtc::registerCommSchedulingPasses();
  mlir::dtc::registerPipelinePasses();
  mlir::dtc::registerRecomputePasses();
  mlir::dtc::registerShardingPasses();
  mlir::dtc::registerPipelines();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "dtc pass driver\n", registry));
}
