//===- DTGGradShape.cpp - type inference and verifiers of gradient ops -------===//

#include "dialects/DTG/IR/DTGOps.h"

using namespace mlir;
using namespace mlir::dtg;
