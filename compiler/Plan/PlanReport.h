//===- PlanReport.h - `dtc plan`'s readable report ------------------*- C++
//-*-===//
//
// What `dtc plan` prints from a plan (plan.json's form): the layout, the
// memory of each stage's largest rank by kind with the largest saved
// tensors, the predicted step time split into compute, exposed
// communication, bubble and recompute, MFU and throughput, and whether the
// plan fits a memory limit.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_COMPILER_PLAN_PLANREPORT_H
#define DTC_COMPILER_PLAN_PLANREPORT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

namespace mlir::dtc {

/// How a plan's largest rank stands against a memory limit.
struct PlanFit {
  /// The rank with the largest peak, its peak, and the limit (0: none).
  int64_t rank = 0;
  double peakBytes = 0, limitBytes = 0;
  bool fits() const { return limitBytes <= 0 || peakBytes <= limitBytes; }
};

/// The fit of `plan` under `limitBytes` (0: no limit).
PlanFit checkPlanFit(const llvm::json::Object &plan, double limitBytes);

/// Bytes as "1.23 GiB (1.32 GB)" (GiB, and the papers' 10^9 bytes).
std::string formatGiB(double bytes);

/// Prints the report of `plan`; `model` names the model file and
/// `limitSource` says where the limit comes from ("--memory-limit", or the
/// profile's memory).
void printPlanReport(const llvm::json::Object &plan, llvm::StringRef model,
                     const PlanFit &fit, llvm::StringRef limitSource,
                     llvm::raw_ostream &os);

} // namespace mlir::dtc

#endif // DTC_COMPILER_PLAN_PLANREPORT_H
