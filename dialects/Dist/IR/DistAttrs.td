//===- DistAttrs.td - dist attributes and enums -----------------*- tablegen -*-===//
//
// The device mesh, tensor shardings over it, reduction kinds and the pipeline
// schedule.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_DIALECTS_DIST_IR_DISTATTRS_TD
#define DTC_DIALECTS_DIST_IR_DISTATTRS_TD

include "dialects/Dist/IR/DistBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Dist_ReduceKind : I32EnumAttr<"ReduceKind",
    "How a collective combines the values of a group.", [
      I32EnumAttrCase<"Sum", 0, "sum">,
      I32EnumAttrCase<"Max", 1, "max">,
      I32EnumAttrCase<"Min", 2, "min">,
      I32EnumAttrCase<"Mean", 3, "mean">
    ]> {
  let cppNamespace = "::mlir::dist";
}

def Dist_ScheduleKind : I32EnumAttr<"ScheduleKind",
    "The order in which pipeline stages run forward and backward micro-batches.", [
      I32EnumAttrCase<"GPipe", 0, "gpipe">,
      I32EnumAttrCase<"OneFOneB", 1, "1f1b">,
      I32EnumAttrCase<"Interleaved", 2, "interleaved">
    ]> {
  let cppNamespace = "::mlir::dist";
  let genSpecializedAttr = 0;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

class Dist_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Dist_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Dist_MeshAttr : Dist_Attr<"Mesh", "mesh"> {
  let summary = "A device mesh: named axes with sizes, slowest axis first.";
  let description = [{
    The ranks of a run form a grid with one named axis per kind of
    parallelism. Axes are listed slowest first: a rank's linear index is
    row-major over the axes, so the last axis varies fastest. dtc's standard
    mesh puts tensor parallelism fastest, then data, then pipeline parallelism
    (Megatron order, so a tensor-parallel group is a run of consecutive ranks),
    and so lists the axes as pp, dp, tp:

    ```mlir
    #dist.mesh<["pp" = 2, "dp" = 8, "tp" = 4]>
    ```

    is `--mesh dp=8,tp=4,pp=2`: 64 ranks, rank 5 at pp 0, dp 1, tp 1.

    Constraints:
    - at least one axis;
    - axis names are non-empty and unique;
    - sizes are positive and the mesh has at most 2^31 - 1 devices.
  }];
  let parameters = (ins ArrayRefParameter<"::mlir::dist::MeshAxis",
                                          "axes, slowest first">:$axes);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The position of axis `name`, if the mesh has it.
    std::optional<unsigned> getAxisIndex(::llvm::StringRef name) const;
    /// The size of axis `name`, if the mesh has it.
    std::optional<int64_t> getAxisSize(::llvm::StringRef name) const;
    /// The number of devices (ranks): the product of the axis sizes.
    int64_t getNumDevices() const;
  }];
}

def Dist_AxisListAttr : Dist_Attr<"AxisList", "axes"> {
  let summary = "The mesh axes that split one tensor dimension, major first.";
  let description = [{
    One entry of a `#dist.sharding`: a dimension split over `{"dp", "tp"}` is
    cut into dp * tp blocks, the dp coordinate choosing among dp runs of tp
    consecutive blocks. `{}` leaves the dimension whole (replicated). Inside a
    sharding it prints as the bare list; on its own it reads

    ```mlir
    #dist.axes<{"dp", "tp"}>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"::mlir::StringAttr",
                                          "axis names, major first">:$axes);
  let hasCustomAssemblyFormat = 1;
}

def Dist_ShardingAttr : Dist_Attr<"Sharding", "sharding"> {
  let summary = "How a tensor is split over a mesh, and over which axes it is "
                "a partial sum.";
  // A TableGen code block ends at the first `}]`, which closes every
  // sharding's dimension list, so the examples are pasted from pieces.
  let description = [{
    Refers to a `dist.mesh` by symbol and lists, for each tensor dimension,
    the mesh axes that split it (`{}`: not split). Mesh axes named by no
    dimension replicate the tensor, except those listed in `partial`: along
    those, each rank holds a partial sum, and the tensor's value is the sum
    over the axis group (what a row-parallel matmul yields before its
    all-reduce).

    ```mlir
    dist.mesh @mesh = <["pp" = 2, "dp" = 8, "tp" = 4]>
    // Rows split over dp, columns over tp.
    #dist.sharding<@mesh, [{"dp"}, {"tp"}] # "}]" # [{>
    // Rows split over dp, columns whole, a partial sum over tp.
    #dist.sharding<@mesh, [{"dp"}, {}] # "}]" # [{, partial = {"tp"}>
    ```

    Constraints:
    - no axis is named twice (across dimensions and `partial`).

    Checked where the sharding is used (it needs the mesh and the tensor):
    every axis is one of the mesh's, there is one entry per tensor dimension,
    and each dimension divides evenly by the product of its axes' sizes.
  }];
  let parameters = (ins
    "::mlir::FlatSymbolRefAttr":$mesh,
    ArrayRefParameter<"::mlir::dist::AxisListAttr",
                      "the axes splitting each dimension">:$dims,
    OptionalArrayRefParameter<"::mlir::StringAttr",
                              "the axes holding partial sums">:$partial
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The number of blocks dimension `dim` is cut into on `mesh` (1 when
    /// not split); axes the mesh lacks count as 1.
    int64_t getNumShards(int64_t dim, MeshAttr mesh) const;
    /// Checks that the sharding fits `mesh` and a value of type `type`: a
    /// statically shaped tensor of one dimension per entry, every axis one of
    /// the mesh's, every dimension divisible by its number of shards.
    ::mlir::LogicalResult verifyFor(
        MeshAttr mesh, ::mlir::Type type,
        ::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError) const;
  }];
}

def Dist_ScheduleAttr : Dist_Attr<"Schedule", "schedule"> {
  let summary = "The pipeline schedule: its kind and micro-batch count.";
  let description = [{
    `gpipe` runs every micro-batch's forward, then every backward; `1f1b`
    alternates one forward and one backward in the steady state (Megatron's
    PipeDream-Flush); `interleaved` is 1F1B over `virtual_stages` model chunks
    per pipeline rank. `virtual_stages` is printed only when it is not 1.

    ```mlir
    #dist.schedule<"1f1b", micro_batches = 8>
    #dist.schedule<"interleaved", micro_batches = 8, virtual_stages = 2>
    ```

    Constraints:
    - `micro_batches` is positive;
    - `virtual_stages` is at least 2 for `interleaved` and 1 otherwise.
  }];
  let parameters = (ins "::mlir::dist::ScheduleKind":$kind,
                        "int64_t":$micro_batches, "int64_t":$virtual_stages);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

#endif // DTC_DIALECTS_DIST_IR_DISTATTRS_TD
