// RUN: dtc-opt %s --split-input-file --dtc-plan-memory | FileCheck %s
// RUN: dtc-opt %s --split-input-file --dtc-plan-memory=donate=false | FileCheck %s --check-prefix=OFF

// Tests that the carried state of a step is written over the arguments it
// updates: the SGD update writes the new parameter over %p and the new
// momentum buffer over %b (the update reads element k of both before
// writing element k: memory::mayWriteOver), every earlier read of them
// being done; the bf16 copy of the parameter, a cast of the new master
// weight after the update, goes over %w. The loss (a metric) and the
// argument-less result keep their own buffers. Without donation every
// carried result keeps its own buffer.
// CHECK-LABEL: func.func @sgd
// CHECK-SAME: -> (tensor<4xf32> {dtc.donated_arg = 0 : i64, dtg.name = "p", dtg.role = "parameter"},
// CHECK-SAME: tensor<4xf32> {dtc.donated_arg = 1 : i64, dtg.name = "p.momentum_buffer", dtg.role = "optimizer_state"},
// CHECK-SAME: tensor<4xbf16> {dtc.donated_arg = 2 : i64, dtg.name = "w", dtg.role = "parameter"},
// CHECK-SAME: tensor<4xf32> {dtg.name = "loss", dtg.role = "metric"})
// CHECK-SAME: dtc.undonated_results = 0 : i64
// OFF-LABEL: func.func @sgd
// OFF-NOT: dtc.donated_arg
// OFF: return
// OFF-LABEL: func.func @kept
// OFF-NOT: dtc.donated_arg
// OFF: return
func.func @sgd(%p: tensor<4xf32> {dtg.name = "p", dtg.role = "parameter"},
               %b: tensor<4xf32> {dtg.name = "p.momentum_buffer", dtg.role = "optimizer_state"},
               %w: tensor<4xbf16> {dtg.name = "w", dtg.role = "parameter"},
               %x: tensor<4xf32> {dtg.name = "x", dtg.role = "input"},
               %lr: tensor<f64>, %flag: tensor<i1>)
    -> (tensor<4xf32> {dtg.name = "p", dtg.role = "parameter"},
        tensor<4xf32> {dtg.name = "p.momentum_buffer", dtg.role = "optimizer_state"},
        tensor<4xbf16> {dtg.name = "w", dtg.role = "parameter"},
        tensor<4xf32> {dtg.name = "loss", dtg.role = "metric"}) {
  %wf = dtg.cast %w : tensor<4xbf16> -> tensor<4xf32>
  %h = dtg.mul %p, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %g = dtg.mul %h, %wf : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %p2, %b2 = dtg.sgd_update %p, %g, %b, %lr, %lr, %lr, %lr, %flag, %flag : tensor<4xf32>
  %w2 = dtg.cast %p2 : tensor<4xf32> -> tensor<4xbf16>
  %l = dtg.exp %g : tensor<4xf32>
  return %p2, %b2, %w2, %l : tensor<4xf32>, tensor<4xf32>, tensor<4xbf16>, tensor<4xf32>
}

// -----

// Tests the carried results that must keep buffers of their own, each
// counted: %p is read after its update (by the exp), so the new parameter
// cannot go over it; the state result is the argument itself (nothing writes
// it); the momentum buffer is written by an op that reads %b through an
// operand that may not be overwritten (a matmul); a result whose name no
// argument has updates nothing. The momentum buffer of "q", updated by an
// elementwise op after its last read, is donated.
// CHECK-LABEL: func.func @kept
// CHECK-SAME: -> (tensor<4xf32> {dtg.name = "p", dtg.role = "parameter"},
// CHECK-SAME: tensor<4xf32> {dtg.name = "s", dtg.role = "state"},
// CHECK-SAME: tensor<2x2xf32> {dtg.name = "m", dtg.role = "optimizer_state"},
// CHECK-SAME: tensor<4xf32> {dtg.name = "nobody", dtg.role = "state"},
// CHECK-SAME: tensor<4xf32> {dtc.donated_arg = 4 : i64, dtg.name = "q", dtg.role = "optimizer_state"},
// CHECK-SAME: tensor<4xf32> {dtg.name = "loss", dtg.role = "metric"})
// CHECK-SAME: dtc.undonated_results = 4 : i64
func.func @kept(%p: tensor<4xf32> {dtg.name = "p", dtg.role = "parameter"},
                %s: tensor<4xf32> {dtg.name = "s", dtg.role = "state"},
                %m: tensor<2x2xf32> {dtg.name = "m", dtg.role = "optimizer_state"},
                %x: tensor<4xf32> {dtg.name = "x", dtg.role = "input"},
                %q: tensor<4xf32> {dtg.name = "q", dtg.role = "optimizer_state"})
    -> (tensor<4xf32> {dtg.name = "p", dtg.role = "parameter"},
        tensor<4xf32> {dtg.name = "s", dtg.role = "state"},
        tensor<2x2xf32> {dtg.name = "m", dtg.role = "optimizer_state"},
        tensor<4xf32> {dtg.name = "nobody", dtg.role = "state"},
        tensor<4xf32> {dtg.name = "q", dtg.role = "optimizer_state"},
        tensor<4xf32> {dtg.name = "loss", dtg.role = "metric"}) {
  %p2 = dtg.add %p, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %l = dtg.exp %p : tensor<4xf32>
  %m2 = dtg.matmul %m, %m : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  %n = dtg.neg %x : tensor<4xf32>
  %q2 = dtg.mul %q, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %p2, %s, %m2, %n, %q2, %l : tensor<4xf32>, tensor<4xf32>, tensor<2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests the fp16 master-weight update as the fuser leaves it: one loop
// kernel selects the old or the new master (the overflow check) and casts
// it to the fp16 parameter. The kernel reads the old master only at the
// position it writes (no view of it), so the new master goes over %m and
// the parameter over %w; the transposed state %t is read through a view
// (at other positions than the kernel writes), so its update keeps a buffer
// of its own.
// CHECK-LABEL: func.func @fused
// CHECK-SAME: -> (tensor<2x2xf32> {dtc.donated_arg = 0 : i64, dtg.name = "w.master", dtg.role = "optimizer_state"},
// CHECK-SAME: tensor<2x2xf16> {dtc.donated_arg = 1 : i64, dtg.name = "w", dtg.role = "parameter"},
// CHECK-SAME: tensor<2x2xf32> {dtg.name = "t", dtg.role = "state"})
// CHECK-SAME: dtc.undonated_results = 1 : i64
func.func @fused(%m: tensor<2x2xf32> {dtg.name = "w.master", dtg.role = "optimizer_state"},
                 %w: tensor<2x2xf16> {dtg.name = "w", dtg.role = "parameter"},
                 %t: tensor<2x2xf32> {dtg.name = "t", dtg.role = "state"},
                 %skip: tensor<i1>, %x: tensor<2x2xf32>)
    -> (tensor<2x2xf32> {dtg.name = "w.master", dtg.role = "optimizer_state"},
        tensor<2x2xf16> {dtg.name = "w", dtg.role = "parameter"},
        tensor<2x2xf32> {dtg.name = "t", dtg.role = "state"}) {
  %wf = dtg.cast %w : tensor<2x2xf16> -> tensor<2x2xf32>
  %new = dtg.add %m, %wf : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  %r:3 = dtg.fusion "loop"(%skip, %m, %new, %t) : (tensor<i1>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf16>, tensor<2x2xf32>) {
  ^bb0(%s: tensor<i1>, %old: tensor<2x2xf32>, %n: tensor<2x2xf32>, %tt: tensor<2x2xf32>):
    %sel = dtg.where %s, %old, %n : tensor<i1>, tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
    %c = dtg.cast %sel : tensor<2x2xf32> -> tensor<2x2xf16>
    %tr = dtg.transpose %tt {perm = array<i64: 1, 0>} : tensor<2x2xf32> -> tensor<2x2xf32>
    %u = dtg.add %tr, %sel : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
    dtg.yield %sel, %c, %u : tensor<2x2xf32>, tensor<2x2xf16>, tensor<2x2xf32>
  }
  return %r#0, %r#1, %r#2 : tensor<2x2xf32>, tensor<2x2xf16>, tensor<2x2xf32>
}
