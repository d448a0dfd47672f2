//===- CalibrateCommand.cpp - `dtc calibrate` -----------------------------===//

#include "compiler/Driver/Commands.h"
#include "compiler/Driver/Diagnostics.h"
#include "compiler/Plan/Calibrate.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::dtc;

int mlir::dtc::runCalibrateCommand(const CalibrateCommandOptions &cmd) {
  if (cmd.threads < 0 || cmd.threads > 1024)
    return reportError("--threads expects a number of threads from 1 to "
                       "1024 (0: OpenMP's default), got " +
                       Twine(cmd.threads));
  // Open the output first: a bad path fails before the measurements.
  std::error_code ec;
  llvm::raw_fd_ostream os(cmd.output, ec, llvm::sys::fs::OF_None);
  if (ec)
    return reportError("cannot write '" + cmd.output + "': " + ec.message());
  std::string error;
  FailureOr<DeviceProfile> profile =
      calibrateCpu(int(cmd.threads), llvm::errs(), error);
  if (failed(profile))
    return reportError(error);
  os << llvm::formatv("{0:2}", toJson(*profile)) << "\n";
  os.flush();
  if (os.has_error())
    return reportError("cannot write '" + cmd.output + "'");
  if (cmd.output != "-")
    llvm::errs() << "dtc: wrote " << cmd.output
                 << " (load it with --device-profile " << cmd.output << ")\n";
  return 0;
}
