//===- Passes.td - activation recomputation ---------------------*- tablegen -*-===//

#ifndef DTC_PASSES_RECOMPUTE_PASSES_TD
#define DTC_PASSES_RECOMPUTE_PASSES_TD

include "mlir/Pass/PassBase.td"

def RecomputePass : Pass<"dtc-recompute", "ModuleOp"> {
  let summary = "Chooses which forward values the backward recomputes instead "
                "of keeping them saved.";
  let description = [{
    Works on every function that holds a reverse sweep (ops marked
    `dtg.backward`, such as `@micro_step`). A forward value that a backward op
    reads is a saved activation: it stays live from the forward to its last
    backward use. Recomputing it clones its forward producer into the
    backward, just before the first backward op that needs it, marked
    `dtg.backward` and `dtg.recompute`; the producer's operands are cloned in
    turn when they are recomputed too, and read as saved values otherwise.
    Forward ops left without users are erased. Every dtg op is pure and
    `dtg.dropout` draws its mask from explicit keys, so a clone computes the
    same bits: recomputation changes memory, never results.

    `mode` chooses the recomputed set:
    - `none`: nothing.
    - `full`: per layer, everything but the layer's outputs (the next layer's
      inputs, its checkpoints). Layers come from the ONNX node names the
      PyTorch exporter writes: an op located at `/h.3/attn/MatMul` belongs to
      layer `/h.3`, the path up to its first numbered segment (a child of a
      ModuleList or Sequential); ops without one (embeddings, the head, the
      loss) stay saved. A function with no such name is cut into
      ceil(sqrt(N)) segments of N forward ops in order.
    - `selective`: the memory-heavy, FLOP-cheap ops (Korthikanti et al. 2022):
      elementwise ops, softmax, dropout, shape ops and products of two
      activations (attention scores), whenever every input they read is saved
      anyway, so no new value becomes saved.
    - `auto`: the cheapest set that fits `memory-limit`: units (the selective
      set of each layer, then each whole layer) are added in order of saved
      bytes per recompute second (the cost model's `cpu` profile), until the
      memory planner's peak fits.

    The peak is what plan.json reports as `memory_bytes.peak`: the entry
    function's (`@train_step`, else the function itself) arguments and
    results plus its arena as `dtc-plan-memory` plans it (callees included).
    With `memory-limit` (bytes, 0 for none) every mode fails, naming the
    limit and the smallest peak it can reach, if the peak does not fit.

    The module gets `dtc.recompute` (the mode) and `dtc.recompute_flops` (the
    FLOPs the clones of one call of each function add, summed).

    ```mlir
    // Before (mode=full): %h is saved for the backward.
    %h = dtg.tanh %x : tensor<16xf32> loc("/h.0/Tanh")
    %y = dtg.tanh %h : tensor<16xf32> loc("/h.0/Tanh_1")
    %g = dtg.mul %dy, %h {dtg.backward} : ...
    // After: only %x (the layer's input) is saved.
    %y = dtg.tanh %h : tensor<16xf32>
    %h2 = dtg.tanh %x {dtg.backward, dtg.recompute} : tensor<16xf32>
    %g = dtg.mul %dy, %h2 {dtg.backward} : ...
    ```
  }];
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"none\"",
           "none, full, selective or auto">,
    Option<"memoryLimit", "memory-limit", "int64_t", /*default=*/"0",
           "Bytes the whole peak may take (0: no limit)">,
  ];
}

#endif // DTC_PASSES_RECOMPUTE_PASSES_TD
