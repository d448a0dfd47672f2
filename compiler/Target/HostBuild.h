//===- HostBuild.h - compile the emitted program, then link it -*- C++ -*-===//
//
// Builds OUTDIR/train in two steps, compiles of the sources to objects (in
// parallel) and a link, so that ccache (used when it is on PATH) can reuse
// the compiles: the same source and flags give the same object, and a link
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

/// Compiles each of `sources` to an object beside it (in the source's
/// folder, under ccache when it is on PATH; as many at once as the machine
/// has hardware threads, in the order given), links the objects to
/// `output` and removes them. False with `log` set on failure (the first
/// source that failed, or the link); `logFile` keeps the link's or the
/// first source's output.
bool buildHostProgram(const HostBuild &build,
                      llvm::ArrayRef<std::string> sources,
                      llvm::StringRef output, llvm::StringRef logFile,
                      std::string &log);

struct SourceFile;
/// Writes `sources` into `folder` (the first holds main), `paths` their
/// paths, after removing kernel files an earlier compile left there
/// (`<stem of the first>-kernels-*.cpp`). False with `error` set if a file
/// cannot be written.
bool writeProgramSources(llvm::StringRef folder,
                         llvm::ArrayRef<SourceFile> sources,
                         std::vector<std::string> &paths, std::string &error);

} // namespace mlir::dtc

#endif // DTC_COMPILER_TARGET_HOSTBUILD_H
