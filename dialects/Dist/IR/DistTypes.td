//===- DistTypes.td - dist types --------------------------------*- tablegen -*-===//

#ifndef DTC_DIALECTS_DIST_IR_DISTTYPES_TD
#define DTC_DIALECTS_DIST_IR_DISTTYPES_TD

include "dialects/Dist/IR/DistBase.td"

def Dist_FutureType : TypeDef<Dist_Dialect, "Future"> {
  let mnemonic = "future";
  let summary = "The pending result of an asynchronous collective.";
  let description = [{
    Made by a `*_start` collective and turned into its tensor by `dist.wait`.

    ```mlir
    !dist.future<tensor<1024xf32>>
    ```

    Constraints:
    - the value type is a statically shaped tensor.
  }];
  let parameters = (ins "::mlir::Type":$value_type);
  let assemblyFormat = "`<` $value_type `>`";
  let genVerifyDecl = 1;
}

#endif // DTC_DIALECTS_DIST_IR_DISTTYPES_TD
