//===- DistAttrs.cpp - dist attributes and types -------------------------===//
//
// Parsing, printing and verification of #dist.mesh, #dist.axes,
// #dist.sharding, #dist.schedule and !dist.future.
//
//===----------------------------------------------------------------------===//

#include "dialects/Dist/IR/DistOps.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::dist;

#include "dialects/Dist/IR/DistEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Dist/IR/DistAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/Dist/IR/DistTypes.cpp.inc"

/// The most ranks a mesh may have (MPI ranks are `int`).
static constexpr int64_t kMaxDevices = 2147483647;

void DistDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/Dist/IR/DistAttrs.cpp.inc"
      >();
}

void DistDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/Dist/IR/DistTypes.cpp.inc"
      >();
}

/// Parses `{` (string (`,` string)*)? `}` into `names`.
static ParseResult parseAxisNames(AsmParser &parser,
                                  SmallVectorImpl<StringAttr> &names) {
  return parser.parseCommaSeparatedList(
      AsmParser::Delimiter::Braces, [&]() -> ParseResult {
        std::string name;
        if (parser.parseString(&name))
          return failure();
        names.push_back(StringAttr::get(parser.getContext(), name));
        return success();
      });
}

/// Prints `names` as `{"a", "b"}`.
static void printAxisNames(AsmPrinter &printer, ArrayRef<StringAttr> names) {
  printer << '{';
  llvm::interleaveComma(names, printer, [&](StringAttr name) {
    printer.printString(name.getValue());
  });
  printer << '}';
}

//===----------------------------------------------------------------------===//
// MeshAttr
//===----------------------------------------------------------------------===//

Attribute MeshAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<MeshAxis> axes;
  auto parseAxis = [&]() -> ParseResult {
    std::string name;
    int64_t size;
    if (parser.parseString(&name) || parser.parseEqual() ||
        parser.parseInteger(size))
      return failure();
    axes.push_back({StringAttr::get(parser.getContext(), name), size});
    return success();
  };
  if (parser.parseLess() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseAxis) ||
      parser.parseGreater())
    return {};
  return parser.getChecked<MeshAttr>(loc, parser.getContext(), axes);
}

void MeshAttr::print(AsmPrinter &printer) const {
  printer << "<[";
  llvm::interleaveComma(getAxes(), printer, [&](const MeshAxis &axis) {
    printer.printString(axis.name.getValue());
    printer << " = " << axis.size;
  });
  printer << "]>";
}

LogicalResult MeshAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<MeshAxis> axes) {
  if (axes.empty())
    return emitError() << "mesh needs at least one axis";
  llvm::SmallDenseSet<StringAttr> seen;
  int64_t devices = 1;
  for (auto [index, axis] : llvm::enumerate(axes)) {
    if (!axis.name || axis.name.getValue().empty())
      return emitError() << "mesh axis " << index << " has an empty name";
    if (!seen.insert(axis.name).second)
      return emitError() << "mesh axis \"" << axis.name.getValue()
                         << "\" is declared twice";
    if (axis.size <= 0)
      return emitError() << "mesh axis \"" << axis.name.getValue()
                         << "\" has size " << axis.size
                         << "; sizes must be positive";
    if (axis.size > kMaxDevices / devices)
      return emitError() << "mesh has more than " << kMaxDevices << " devices";
    devices *= axis.size;
  }
  return success();
}

std::optional<unsigned> MeshAttr::getAxisIndex(StringRef name) const {
  for (auto [index, axis] : llvm::enumerate(getAxes()))
    if (axis.name.getValue() == name)
      return index;
  return std::nullopt;
}

std::optional<int64_t> MeshAttr::getAxisSize(StringRef name) const {
  if (std::optional<unsigned> index = getAxisIndex(name))
    return getAxes()[*index].size;
  return std::nullopt;
}

int64_t MeshAttr::getNumDevices() const {
  int64_t devices = 1;
  for (const MeshAxis &axis : getAxes())
    devices *= axis.size;
  return devices;
}

//===----------------------------------------------------------------------===//
// AxisListAttr
//===----------------------------------------------------------------------===//

Attribute AxisListAttr::parse(AsmParser &parser, Type) {
  SmallVector<StringAttr> names;
  if (parser.parseLess() || parseAxisNames(parser, names) ||
      parser.parseGreater())
    return {};
  return AxisListAttr::get(parser.getContext(), names);
}

void AxisListAttr::print(AsmPrinter &printer) const {
  printer << '<';
  printAxisNames(printer, getAxes());
  printer << '>';
}

//===----------------------------------------------------------------------===//
// ShardingAttr
//===----------------------------------------------------------------------===//

Attribute ShardingAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  MLIRContext *context = parser.getContext();
  FlatSymbolRefAttr mesh;
  SmallVector<AxisListAttr> dims;
  SmallVector<StringAttr> partial;
  auto parseDim = [&]() -> ParseResult {
    SmallVector<StringAttr> names;
    if (parseAxisNames(parser, names))
      return failure();
    dims.push_back(AxisListAttr::get(context, names));
    return success();
  };
  if (parser.parseLess() || parser.parseAttribute(mesh) ||
      parser.parseComma() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseDim))
    return {};
  if (succeeded(parser.parseOptionalComma()) &&
      (parser.parseKeyword("partial") || parser.parseEqual() ||
       parseAxisNames(parser, partial)))
    return {};
  if (parser.parseGreater())
    return {};
  return parser.getChecked<ShardingAttr>(loc, context, mesh, dims, partial);
}

void ShardingAttr::print(AsmPrinter &printer) const {
  printer << '<';
  printer.printAttributeWithoutType(getMesh());
  printer << ", [";
  llvm::interleaveComma(getDims(), printer, [&](AxisListAttr dim) {
    printAxisNames(printer, dim.getAxes());
  });
  printer << ']';
  if (!getPartial().empty()) {
    printer << ", partial = ";
    printAxisNames(printer, getPartial());
  }
  printer << '>';
}

LogicalResult ShardingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   FlatSymbolRefAttr,
                                   ArrayRef<AxisListAttr> dims,
                                   ArrayRef<StringAttr> partial) {
  llvm::SmallDenseSet<StringAttr> seen;
  auto check = [&](StringAttr axis) -> LogicalResult {
    if (!seen.insert(axis).second)
      return emitError() << "axis \"" << axis.getValue()
                         << "\" appears twice in the sharding";
    return success();
  };
  for (AxisListAttr dim : dims)
    for (StringAttr axis : dim.getAxes())
      if (failed(check(axis)))
        return failure();
  for (StringAttr axis : partial)
    if (failed(check(axis)))
      return failure();
  return success();
}

int64_t ShardingAttr::getNumShards(int64_t dim, MeshAttr mesh) const {
  if (dim < 0 || dim >= static_cast<int64_t>(getDims().size()))
    return 1;
  int64_t shards = 1;
  for (StringAttr axis : getDims()[dim].getAxes())
    shards *= mesh.getAxisSize(axis.getValue()).value_or(1);
  return shards;
}

LogicalResult
ShardingAttr::verifyFor(MeshAttr mesh, Type type,
                        function_ref<InFlightDiagnostic()> emitError) const {
  auto tensor = llvm::dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return emitError() << "a sharding applies to a statically shaped tensor, "
                          "not "
                       << type;
  auto checkAxis = [&](StringAttr axis) -> LogicalResult {
    if (!mesh.getAxisSize(axis.getValue()))
      return emitError() << "sharding names axis \"" << axis.getValue()
                         << "\", which mesh " << getMesh() << " does not have";
    return success();
  };
  for (AxisListAttr dim : getDims())
    for (StringAttr axis : dim.getAxes())
      if (failed(checkAxis(axis)))
        return failure();
  for (StringAttr axis : getPartial())
    if (failed(checkAxis(axis)))
      return failure();
  if (static_cast<int64_t>(getDims().size()) != tensor.getRank())
    return emitError() << "sharding has " << getDims().size()
                       << " dimension entries for a tensor of rank "
                       << tensor.getRank();
  for (auto [dim, size] : llvm::enumerate(tensor.getShape())) {
    int64_t shards = getNumShards(dim, mesh);
    if (size % shards != 0)
      return emitError() << "dimension " << dim << " of size " << size
                         << " does not divide into " << shards << " shards";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// ScheduleAttr
//===----------------------------------------------------------------------===//

Attribute ScheduleAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  std::string kindName;
  if (parser.parseLess())
    return {};
  SMLoc kindLoc = parser.getCurrentLocation();
  if (parser.parseString(&kindName))
    return {};
  std::optional<ScheduleKind> kind = symbolizeScheduleKind(kindName);
  if (!kind) {
    parser.emitError(kindLoc)
        << "unknown schedule \"" << kindName
        << "\"; expected \"gpipe\", \"1f1b\" or \"interleaved\"";
    return {};
  }
  int64_t microBatches = 0, virtualStages = 1;
  if (parser.parseComma() || parser.parseKeyword("micro_batches") ||
      parser.parseEqual() || parser.parseInteger(microBatches))
    return {};
  if (succeeded(parser.parseOptionalComma()) &&
      (parser.parseKeyword("virtual_stages") || parser.parseEqual() ||
       parser.parseInteger(virtualStages)))
    return {};
  if (parser.parseGreater())
    return {};
  return parser.getChecked<ScheduleAttr>(loc, parser.getContext(), *kind,
                                         microBatches, virtualStages);
}

void ScheduleAttr::print(AsmPrinter &printer) const {
  printer << '<';
  printer.printString(stringifyScheduleKind(getKind()));
  printer << ", micro_batches = " << getMicroBatches();
  if (getVirtualStages() != 1)
    printer << ", virtual_stages = " << getVirtualStages();
  printer << '>';
}

LogicalResult ScheduleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   ScheduleKind kind, int64_t microBatches,
                                   int64_t virtualStages) {
  if (microBatches <= 0)
    return emitError() << "micro_batches must be positive, got "
                       << microBatches;
  if (kind == ScheduleKind::Interleaved) {
    if (virtualStages < 2)
      return emitError() << "the interleaved schedule needs virtual_stages "
                            ">= 2, got "
                         << virtualStages;
  } else if (virtualStages != 1) {
    return emitError() << "the " << stringifyScheduleKind(kind)
                       << " schedule takes virtual_stages = 1, not "
                       << virtualStages;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// FutureType
//===----------------------------------------------------------------------===//

LogicalResult FutureType::verify(function_ref<InFlightDiagnostic()> emitError,
                                 Type valueType) {
  auto tensor = llvm::dyn_cast<RankedTensorType>(valueType);
  if (!tensor || !tensor.hasStaticShape())
    return emitError() << "a future holds a statically shaped tensor, not "
                       << valueType;
  return success();
}
