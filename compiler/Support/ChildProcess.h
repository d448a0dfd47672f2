//===- ChildProcess.h - run a function in a forked child --------*- C++ -*-===//
//
// Work that may crash (libonnx on a hostile model) or run too long (a whole
// plan of a large model) runs in a forked child; what it returns comes back
// to the parent through a pipe.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_COMPILER_SUPPORT_CHILDPROCESS_H
#define DTC_COMPILER_SUPPORT_CHILDPROCESS_H

#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>

namespace mlir::dtc {

/// How a child of runInChild ended.
struct ChildOutcome {
  /// What the child's function returned (as much of it as arrived).
  std::string output;
  /// Why no child ran (no pipe, no fork); empty when one did.
  std::string error;
  /// Stopped (SIGKILL) when its time ran out.
  bool timedOut = false;
  /// The signal that ended the child otherwise, 0 if none.
  int signal = 0;
  /// Its exit status when it exited.
  int exitCode = 0;

  /// It ran, returned, and sent all of its answer.
  bool finished() const {
    return error.empty() && !timedOut && signal == 0 && exitCode == 0;
  }
};

/// Runs `body` in a forked child and returns what it returned, stopping
/// the child after `seconds` (<= 0: no limit). With `quietCrashes` the
/// child's crash signals take their default action: a crash is the
/// parent's to report, without the stack dump, sanitizer report or fuzzer
/// artifact of inherited handlers. The child leaves with _exit: no atexit
/// handler or buffer of the parent's runs twice.
ChildOutcome runInChild(llvm::function_ref<std::string()> body, double seconds,
                        bool quietCrashes = false);

} // namespace mlir::dtc

#endif // DTC_COMPILER_SUPPORT_CHILDPROCESS_H
