//===- Report.h - how a failing run ends ----------------------------------===//
//
// The runtime's own code returns errors as messages; only the points where
// a run cannot go on (a kernel failure, a guard violation, an arena
// overflow) end the process, through fatalError, naming the op and step.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_CORE_REPORT_H
#define DTCRT_CORE_REPORT_H

#include "dtcrt/dtcrt.h"

#include <cstdint>
#include <string>

namespace dtcrt {

/// Prints "train: error: <message>" to stderr and ends the process with
/// exit status 1; under MPI it names this rank and ends every rank.
[[noreturn]] void fatalError(const std::string &message);

/// Records the step being run, for messages from kernels (dtck::fail);
/// `ctx` may be null between steps.
void setRunningStep(dtcrt_step_ctx *ctx, int64_t step, const char *phase);

/// " at op 'X' (step N)" for the step being run, or "".
std::string runningStepSuffix(const dtcrt_step_ctx *ctx);

/// Installs dtck::failHandler() so kernel failures name the op and step.
void installKernelFailHandler();

} // namespace dtcrt

#endif // DTCRT_CORE_REPORT_H
