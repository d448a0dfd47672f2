//===- Report.cpp - how a failing run ends --------------------------------===//

#include "runtime/src/Core/Report.h"

#include "dtcrt/kernels/Common.h"
#include "runtime/src/Comm/Mesh.h"

#include <cstdio>
#include <cstdlib>

using namespace dtcrt;

namespace {
/// The step being run, for kernel failure messages.
struct RunningStep {
  dtcrt_step_ctx *ctx = nullptr;
  int64_t step = 0;
  const char *phase = "";
};
} // namespace

static RunningStep &running() {
  static RunningStep r;
  return r;
}

void dtcrt::fatalError(const std::string &message) {
  std::fflush(stdout);
  // Under MPI every rank ends, not only this one: the others would wait in
  // their next collective.
  abortRun(message);
}

void dtcrt::setRunningStep(dtcrt_step_ctx *ctx, int64_t step,
                           const char *phase) {
  running() = {ctx, step, phase ? phase : ""};
}

std::string dtcrt::runningStepSuffix(const dtcrt_step_ctx *ctx) {
  const RunningStep &r = running();
  std::string s;
  if (ctx && ctx->current_op && *ctx->current_op)
    s += " at op '" + std::string(ctx->current_op) + "'";
  if (r.ctx)
    s += std::string(" (") + r.phase + " step " + std::to_string(r.step) + ")";
  return s;
}

static void onKernelFailure(const char *message) {
  const RunningStep &r = running();
  std::string where = runningStepSuffix(r.ctx);
  fatalError("kernel failed" + where + ": " + (message ? message : ""));
}

void dtcrt::installKernelFailHandler() {
  dtck::failHandler() = &onKernelFailure;
}
