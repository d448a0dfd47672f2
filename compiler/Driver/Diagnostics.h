//===- Diagnostics.h - how dtc prints errors ------------------------*- C++
//-*-===//

#ifndef DTC_COMPILER_DRIVER_DIAGNOSTICS_H
#define DTC_COMPILER_DRIVER_DIAGNOSTICS_H

#include "compiler/Driver/Commands.h"
#include "compiler/Import/ONNX/ONNXImporter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

namespace mlir::dtc {

/// Prints diagnostics as "FILE: node 'NAME': error: MESSAGE" for ONNX nodes
/// and "FILE:LINE:COL: error: MESSAGE" for source locations, and remembers
/// the first error's text.
class DriverDiagnostics {
public:
  explicit DriverDiagnostics(MLIRContext *context, bool print = true);
  ~DriverDiagnostics();
  /// The first error reported, as printed (without a trailing newline).
  const std::string &firstError() const { return first; }

private:
  MLIRContext *context;
  DiagnosticEngine::HandlerID id;
  bool print;
  std::string first;
};

/// Formats `diag` the way DriverDiagnostics prints it.
std::string formatDiagnostic(const Diagnostic &diag);

/// Parses --batch / --input-shape into importer options; prints an error
/// naming the flag and returns false on a malformed entry.
bool parseShapeOptions(const ShapeOptions &shapes, ImportOptions &options);

/// Splits "NAME=VALUE"; false if there is no '=' or either side is empty.
bool splitAssignment(StringRef text, std::string &name, std::string &value);

/// Prints "dtc: error: MESSAGE" to stderr and returns 1.
int reportError(const Twine &message);

} // namespace mlir::dtc

#endif // DTC_COMPILER_DRIVER_DIAGNOSTICS_H
