//===- DistBase.td - dist dialect definition --------------------*- tablegen -*-===//
//
// The `dist` dialect: device meshes, tensor shardings, collectives,
// point-to-point transfers and pipeline stages.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_DIALECTS_DIST_IR_DISTBASE_TD
#define DTC_DIALECTS_DIST_IR_DISTBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Dist_Dialect : Dialect {
  let name = "dist";
  let cppNamespace = "::mlir::dist";
  let summary = "Device meshes, tensor shardings and collective communication.";
  let description = [{
    `dist` describes how a `dtg` program is spread over a device mesh: the mesh
    itself (`dist.mesh` holding a `#dist.mesh`), how each tensor is split over
    its axes (`#dist.sharding`), the collectives and point-to-point transfers
    that move data between ranks, and the pipeline stages and schedule.

    Two discardable attributes are understood, and checked, on other ops:
    - `dist.sharding = #dist.sharding<...>` on a function argument or result
      (the sharding of that value; its rank and sizes must fit the value);
    - `dist.schedule = #dist.schedule<...>` on any op (typically the
      `func.func` holding the `dist.stage`s): the pipeline schedule.
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Name of the discardable attribute holding a value's sharding.
    static constexpr ::llvm::StringLiteral kShardingAttrName = "dist.sharding";
    /// Name of the discardable attribute holding the pipeline schedule.
    static constexpr ::llvm::StringLiteral kScheduleAttrName = "dist.schedule";

  private:
    void registerAttributes();
    void registerTypes();

  public:
  }];
}

/// A ranked tensor with a static shape, of any element type.
def Dist_Tensor : StaticShapeTensorOf<[AnyType]>;

/// The communication resource: ops that move data between ranks in program
/// order (send, recv, async starts, waits) read and write it, so they are
/// neither removed nor reordered against each other.
def Dist_CommResource : Resource<"::mlir::dist::CommResource">;

class Dist_Op<string mnemonic, list<Trait> traits = []>
    : Op<Dist_Dialect, mnemonic, traits>;

#endif // DTC_DIALECTS_DIST_IR_DISTBASE_TD
