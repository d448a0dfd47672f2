//===- HostBuild.h - compile the emitted program, then link it -*- C++ -*-===//
//
// Builds OUTDIR/train in two steps, a compile of the source to an object
// and a link, so that ccache (used when it is on PATH) can reuse the
// compile: the same source and flags give the same object, and a link
// step is never cached.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_COMPILER_TARGET_HOSTBUILD_H
#define DTC_COMPILER_TARGET_HOSTBUILD_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace mlir::dtc {

/// How one program is built.
struct HostBuild {
  /// The compiler (a path or a name on PATH).
  std::string compiler;
  /// The compile's flags; the source follows them.
  std::vector<std::string> compileFlags;
  /// The link's flags; the object follows them.
  std::vector<std::string> linkFlags;
  /// Libraries and archives after the object.
  std::vector<std::string> libraries;
};

/// Compiles `source` to an object beside it (in the source's folder, under
/// ccache when it is on PATH), links
/// that to `output` and removes the object. False with `log` set on
/// failure; `logFile` keeps the tools' output.
bool buildHostProgram(const HostBuild &build, llvm::StringRef source,
                      llvm::StringRef output, llvm::StringRef logFile,
                      std::string &log);

} // namespace mlir::dtc

#endif // DTC_COMPILER_TARGET_HOSTBUILD_H
