//===- CalibrateCommand.cpp - `dtc calibrate` -----------------------------===//

#include "compiler/Driver/Commands.h"
#include "compiler/Driver/Diagnostics.h"
#include "compiler/Plan/Calibrate.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::dtc;

int mlir::dtc::runCalibrateCommand(const CalibrateCommandOptions &cmd) {
  if (cmd.threads < 0 || cmd.threads > 1024)
    return reportError("--threads expects a number of threads from 1 to "
                       "1024 (0: OpenMP's default), got " +
                       Twine(cmd.threads));
  SmallVector<int64_t> mpiRanks;
  bool mpiExplicit = !cmd.mpiRanks.empty();
  if (cmd.mpiRanks.empty()) {
    if (llvm::sys::findProgramByName("mpirun"))
      mpiRanks = {2, 4};
  } else if (cmd.mpiRanks != "none") {
    SmallVector<StringRef> parts;
    StringRef(cmd.mpiRanks).split(parts, ',');
    for (StringRef part : parts) {
      int64_t n = 0;
      if (part.trim().getAsInteger(10, n) || n < 2 || n > 1024)
        return reportError("--mpi-ranks expects rank counts from 2 to 1024 "
                           "separated by commas, or none, got '" +
                           cmd.mpiRanks + "'");
      mpiRanks.push_back(n);
    }
  }
  if (mpiExplicit && !mpiRanks.empty() &&
      !llvm::sys::findProgramByName("mpirun"))
    return reportError("--mpi-ranks: cannot find mpirun on PATH (OpenMPI); "
                       "give --mpi-ranks none to keep the built-in links");
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
  if (mpiRanks.empty() && !mpiExplicit)
    llvm::errs() << "  note: mpirun not found: the links stay the built-in "
                    "cpu profile's\n";
  if (!mpiRanks.empty()) {
    DeviceProfile measured = *profile;
    if (succeeded(calibrateMpi(mpiRanks, measured, llvm::errs(), error))) {
      std::string counts;
      for (int64_t n : mpiRanks)
        counts += (counts.empty() ? "" : ", ") + std::to_string(n);
      measured.source =
          StringRef(measured.source).split("; links not measured").first.str() +
          "; links fitted to MPI all-reduces over " + counts +
          " ranks of this machine (mpi_all_reduce)";
      *profile = std::move(measured);
    } else if (mpiExplicit) {
      return reportError(error);
    } else {
      // The default measurement is best effort: say why it was skipped
      // (the first line of the error and of mpirun's message).
      SmallVector<StringRef> lines;
      StringRef(error).split(lines, '\n', -1, false);
      StringRef reason;
      for (StringRef line : ArrayRef(lines).drop_front())
        if (llvm::any_of(line, [](char c) { return llvm::isAlpha(c); })) {
          reason = line.trim();
          break;
        }
      llvm::errs() << "  note: MPI not measured (--mpi-ranks none skips it): "
                   << lines.front()
                   << (reason.empty() ? "" : ": " + reason.str())
                   << "\n  note: the links stay the built-in cpu profile's\n";
    }
  }
  os << llvm::formatv("{0:2}", toJson(*profile)) << "\n";
  os.flush();
  if (os.has_error())
    return reportError("cannot write '" + cmd.output + "'");
  if (cmd.output != "-")
    llvm::errs() << "dtc: wrote " << cmd.output
                 << " (load it with --device-profile " << cmd.output << ")\n";
  return 0;
}
