//===- Diagnostics.cpp - how dtc prints errors ---------------------------===//

#include "compiler/Driver/Diagnostics.h"

#include "mlir/IR/Location.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::dtc;

/// "FILE: node 'NAME'" for NameLoc(name, FileLineColLoc(file, 0, 0)),
/// "FILE:LINE:COL" for a source position, "" if unknown.
static std::string describeLocation(Location loc) {
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (std::string s = describeLocation(inner); !s.empty())
        return s;
  if (auto name = dyn_cast<NameLoc>(loc)) {
    std::string file = describeLocation(name.getChildLoc());
    return (file.empty() ? "" : file + ": ") + "node '" + name.getName().str() +
           "'";
  }
  if (auto file = dyn_cast<FileLineColLoc>(loc)) {
    if (file.getLine() == 0)
      return file.getFilename().str();
    return file.getFilename().str() + ":" + std::to_string(file.getLine()) +
           ":" + std::to_string(file.getColumn());
  }
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    return describeLocation(callSite.getCallee());
  return "";
}

std::string mlir::dtc::formatDiagnostic(const Diagnostic &diag) {
  std::string text;
  llvm::raw_string_ostream os(text);
  std::string where = describeLocation(diag.getLocation());
  if (!where.empty())
    os << where << ": ";
  switch (diag.getSeverity()) {
  case DiagnosticSeverity::Error:
    os << "error: ";
    break;
  case DiagnosticSeverity::Warning:
    os << "warning: ";
    break;
  case DiagnosticSeverity::Note:
    os << "note: ";
    break;
  case DiagnosticSeverity::Remark:
    os << "remark: ";
    break;
  }
  os << diag.str();
  return text;
}

DriverDiagnostics::DriverDiagnostics(MLIRContext *context, bool print)
    : context(context), print(print) {
  // A whole function printed under a one-line message is noise to a user.
  context->printOpOnDiagnostic(false);
  id = context->getDiagEngine().registerHandler([this](Diagnostic &diag) {
    std::string text = formatDiagnostic(diag);
    if (diag.getSeverity() == DiagnosticSeverity::Error && first.empty())
      first = text;
    if (this->print) {
      llvm::errs() << text << "\n";
      for (const Diagnostic &note : diag.getNotes())
        llvm::errs() << formatDiagnostic(note) << "\n";
    }
    return success();
  });
}

DriverDiagnostics::~DriverDiagnostics() {
  context->getDiagEngine().eraseHandler(id);
}

int mlir::dtc::reportError(const Twine &message) {
  llvm::errs() << "dtc: error: " << message << "\n";
  return 1;
}

bool mlir::dtc::splitAssignment(StringRef text, std::string &name,
                                std::string &value) {
  auto [lhs, rhs] = text.split('=');
  if (!text.contains('=') || lhs.empty() || rhs.empty())
    return false;
  name = lhs.str();
  value = rhs.str();
  return true;
}

bool mlir::dtc::parseShapeOptions(const ShapeOptions &shapes,
                                  ImportOptions &options) {
  options.trainBatchNorm = shapes.trainBatchNorm;
  options.appendedLoss = shapes.appendedLoss;
  if (shapes.batch) {
    if (*shapes.batch <= 0) {
      reportError("--batch must be a positive integer, got " +
                  Twine(*shapes.batch));
      return false;
    }
    options.batch = shapes.batch;
  }
  for (const std::string &entry : shapes.inputShapes) {
    std::string name, dims;
    if (!splitAssignment(entry, name, dims)) {
      reportError("--input-shape expects NAME=DIMxDIM[:DTYPE], got '" + entry +
                  "'");
      return false;
    }
    if (size_t colon = dims.find(':'); colon != std::string::npos) {
      std::string dtype = dims.substr(colon + 1);
      dims = dims.substr(0, colon);
      if (!isElementTypeName(dtype)) {
        reportError("--input-shape " + entry + ": '" + dtype +
                    "' is not a dtype (float32, float64, float16, bfloat16, "
                    "int64, int32, bool)");
        return false;
      }
      options.inputTypes[name] = dtype;
    }
    SmallVector<int64_t> shape;
    if (dims != "scalar") {
      SmallVector<StringRef> parts;
      StringRef(dims).split(parts, 'x');
      for (StringRef part : parts) {
        int64_t d;
        if (part.getAsInteger(10, d) || d < 0 || d > (int64_t(1) << 31)) {
          reportError("--input-shape " + entry + ": '" + part +
                      "' is not a dimension size");
          return false;
        }
        shape.push_back(d);
      }
    }
    options.inputShapes[name] = shape;
  }
  return true;
}
