//===- RecognizeIdioms.cpp - gelu and layer_norm from exported arithmetic -===//

#include "passes/Cleanup/Passes.h"

#include "dialects/DTG/IR/DTGOps.h"

#define DEBUG_TYPE "dtc-recognize-idioms"

namespace mlir::dtc {
#define GEN_PASS_DEF_RECOGNIZEIDIOMSPASS
#include "passes/Cleanup/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {
struct RecognizeIdiomsPass
    : public dtc::impl::RecognizeIdiomsPassBase<RecognizeIdiomsPass> {
  using RecognizeIdiomsPassBase::RecognizeIdiomsPassBase;
  void runOnOperation() override {}
};
} // namespace
