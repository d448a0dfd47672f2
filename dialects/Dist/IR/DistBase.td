//===- DistBase.td - dist dialect definition --------------------*- tablegen -*-===//

#ifndef DTC_DIALECTS_DIST_IR_DISTBASE_TD
#define DTC_DIALECTS_DIST_IR_DISTBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Dist_Dialect : Dialect {
  let name = "dist";
  let cppNamespace = "::mlir::dist";
  let summary = "Device meshes, tensor shardings and collective communication.";
  let description = [{
    `dist` describes how a `dtg` program is spread over a device mesh: the mesh
    itself (`#dist.mesh`), how each tensor is split over its axes
    (`#dist.sharding`), and the collectives and point-to-point transfers that
    move data between ranks.
  }];
}

class Dist_Op<string mnemonic, list<Trait> traits = []>
    : Op<Dist_Dialect, mnemonic, traits>;

#endif // DTC_DIALECTS_DIST_IR_DISTBASE_TD
