// RUN: dtc-opt %s --dtc-build-train-step="loss=mse logits=y labels=t optimizer=adamw micro-batches=2" --cse --dtc-partition-data-parallel="dp=2 zero=0" | FileCheck %s --check-prefix=ZERO0
// RUN: dtc-opt %s --dtc-build-train-step="loss=mse logits=y labels=t optimizer=adamw micro-batches=2" --cse --dtc-partition-data-parallel="dp=2 zero=1" | FileCheck %s --check-prefix=ZERO1
// RUN: dtc-opt %s --dtc-build-train-step="loss=mse logits=y labels=t optimizer=adamw micro-batches=2" --cse --dtc-partition-data-parallel="dp=2 zero=2" | FileCheck %s --check-prefix=ZERO2

// Tests the data-parallel partitioning of a step with two micro-batches of
// one rank's rows, a weight w (4x2: dp=2 divides its rows) and a bias b (3:
// it does not divide).
//
// ZeRO 0: the micro-batches' loss sums, counts and gradients are partial
// sums over dp, accumulated as such, and all-reduced once each where an op
// first needs the whole value (the loss's division, the global norm); the
// inputs are marked as split along the sample axis; every result is whole.
//
// ZeRO 1: w's gradient is reduce-scattered along its rows after
// accumulation, the global norm sums the squares of the blocks and
// all-reduces that partial scalar, AdamW updates the rows of w this rank
// holds (its moments are blocks: 2x2 arguments and results marked with
// w's whole sharding), takes its block of w with dist.local_block, and
// all-gathers the new w. b stays whole (all-reduced).
//
// ZeRO 2: w's gradient is reduce-scattered as each micro-batch returns it,
// and the blocks are accumulated.

// ZERO0: dist.mesh @mesh = <["pp" = 1, "dp" = 2, "tp" = 1]>
// ZERO0-LABEL: func.func @train_step(
// ZERO0-SAME: tensor<4x2xf32> {dtg.name = "w.exp_avg", dtg.role = "optimizer_state"}
// ZERO0-SAME: tensor<4x4xf32> {dtc.sharding = #dist.sharding<@mesh, [{"dp"}, {}]>, dtg.name = "x", dtg.role = "input"}
// ZERO0: %[[M0:.+]]:4 = call @micro_step(
// ZERO0: %[[M1:.+]]:4 = call @micro_step(
// ZERO0-DAG: %[[SUM:.+]] = dtg.add %[[M0]]#0, %[[M1]]#0
// ZERO0-DAG: %[[COUNT:.+]] = dtg.add %[[M0]]#1, %[[M1]]#1
// ZERO0-DAG: %[[GW:.+]] = dtg.add %[[M0]]#2, %[[M1]]#2
// ZERO0: %[[SUMR:.+]] = dist.all_reduce sum %[[SUM]] on @mesh mesh_axes = ["dp"] {{.*}}: tensor<f32>
// ZERO0: %[[COUNTR:.+]] = dist.all_reduce sum %[[COUNT]] on @mesh mesh_axes = ["dp"] {{.*}}: tensor<f32>
// ZERO0: dtg.div %[[SUMR]], %[[COUNTR]]
// ZERO0: %[[G:.+]] = dtg.div %[[GW]], %[[COUNTR]]
// ZERO0: %[[GR:.+]] = dist.all_reduce sum %[[G]] on @mesh mesh_axes = ["dp"] {dtc.explain = "the gradient of w"} : tensor<4x2xf32>
// ZERO0: dtg.mul %[[GR]], %[[GR]]
// ZERO0: dist.all_reduce sum {{.*}} : tensor<3xf32>
// ZERO0-NOT: dist.
// ZERO0: dtg.adamw_update
// ZERO0-NOT: dist.
// ZERO0: return
// ZERO0-LABEL: func.func @eval_step(
// ZERO0: dist.all_reduce sum
// ZERO0: dist.all_reduce sum
// ZERO0: return

// ZERO1-LABEL: func.func @train_step(
// ZERO1-SAME: %[[W:[^:]+]]: tensor<4x2xf32> {{{[^}]*}}dtg.name = "w", dtg.role = "parameter"
// ZERO1-SAME: %[[B:[^:]+]]: tensor<3xf32> {{{[^}]*}}dtg.name = "b", dtg.role = "parameter"
// ZERO1-SAME: %[[EA:[^:]+]]: tensor<2x2xf32> {dtc.sharding = #dist.sharding<@mesh, [{"dp"}, {}]>, dtg.name = "w.exp_avg", dtg.role = "optimizer_state"}
// ZERO1-SAME: tensor<2x2xf32> {dtc.sharding = #dist.sharding<@mesh, [{"dp"}, {}]>, dtg.name = "w.exp_avg_sq", dtg.role = "optimizer_state"}
// ZERO1-SAME: tensor<3xf32> {dtg.name = "b.exp_avg", dtg.role = "optimizer_state"}
// ZERO1-SAME: -> (tensor<4x2xf32> {dtg.name = "w", dtg.role = "parameter"}, tensor<3xf32> {dtg.name = "b", dtg.role = "parameter"}, tensor<2x2xf32> {dtc.sharding = #dist.sharding<@mesh, [{"dp"}, {}]>, dtg.name = "w.exp_avg", dtg.role = "optimizer_state"}
// ZERO1: %[[M0:.+]]:4 = call @micro_step(
// ZERO1: %[[M1:.+]]:4 = call @micro_step(
// ZERO1: %[[GW:.+]] = dtg.add %[[M0]]#2, %[[M1]]#2 : tensor<4x2xf32>
// ZERO1: %[[G:.+]] = dtg.div %[[GW]], {{.*}} -> tensor<4x2xf32>
// ZERO1: %[[GB:.+]] = dist.reduce_scatter sum %[[G]] on @mesh mesh_axes = ["dp"] scatter_axis = 0 {{.*}}: tensor<4x2xf32> -> tensor<2x2xf32>
// ZERO1: %[[SQ:.+]] = dtg.mul %[[GB]], %[[GB]] : tensor<2x2xf32>
// ZERO1: %[[SS:.+]] = dtg.reduce_sum %[[SQ]]
// ZERO1: %[[SS64:.+]] = dtg.cast %[[SS]]
// ZERO1: %[[SSR:.+]] = dist.all_reduce sum %[[SS64]] on @mesh mesh_axes = ["dp"] {{.*}}: tensor<f64>
// ZERO1: %[[TOTAL:.+]] = dtg.add %[[SSR]],
// ZERO1: dtg.sqrt %[[TOTAL]]
// ZERO1: %[[GBC:.+]] = dtg.mul %[[GB]], {{.*}} -> tensor<2x2xf32>
// ZERO1: %[[WB:.+]] = dist.local_block %[[W]] on @mesh mesh_axes = ["dp"] slice_axis = 0 {{.*}}: tensor<4x2xf32> -> tensor<2x2xf32>
// ZERO1: %[[NEW:.+]], %[[NEWA:.+]], %[[NEWB:.+]] = dtg.adamw_update %[[WB]], %[[GBC]], %[[EA]], {{.*}} : tensor<2x2xf32>
// ZERO1: dtg.adamw_update {{.*}} : tensor<3xf32>
// ZERO1: %[[WNEW:.+]] = dist.all_gather %[[NEW]] on @mesh mesh_axes = ["dp"] gather_axis = 0 {{.*}}: tensor<2x2xf32> -> tensor<4x2xf32>
// ZERO1: return %[[WNEW]], {{.*}}, %[[NEWA]], %[[NEWB]],

// ZERO2-LABEL: func.func @train_step(
// ZERO2: %[[M0:.+]]:4 = call @micro_step(
// ZERO2-NEXT: %[[R0:.+]] = dist.reduce_scatter sum %[[M0]]#2 on @mesh mesh_axes = ["dp"] scatter_axis = 0 {{.*}}: tensor<4x2xf32> -> tensor<2x2xf32>
// ZERO2: %[[M1:.+]]:4 = call @micro_step(
// ZERO2-NEXT: %[[R1:.+]] = dist.reduce_scatter sum %[[M1]]#2 on @mesh mesh_axes = ["dp"] scatter_axis = 0 {{.*}}: tensor<4x2xf32> -> tensor<2x2xf32>
// ZERO2: dtg.add %[[R0]], %[[R1]] : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
// ZERO2-NOT: dist.reduce_scatter
// ZERO2: dtg.adamw_update {{.*}} : tensor<2x2xf32>
// ZERO2: dist.all_gather

func.func @main(%w: tensor<4x2xf32> {dtg.name = "w", dtg.role = "parameter", dtg.initial = dense<0.5> : tensor<4x2xf32>},
                %b: tensor<3xf32> {dtg.name = "b", dtg.role = "parameter", dtg.initial = dense<0.1> : tensor<3xf32>},
                %x: tensor<2x4xf32> {dtg.name = "x", dtg.role = "input"},
                %t: tensor<2x3xf32> {dtg.name = "t", dtg.role = "input"})
    -> (tensor<2x3xf32> {dtg.name = "y"}) {
  %h = dtg.matmul %x, %w : tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
  %s = dtg.reduce_sum %h {axes = array<i64: 1>, keepdims = true} : tensor<2x2xf32> -> tensor<2x1xf32>
  %y = dtg.add %s, %b : tensor<2x1xf32>, tensor<3xf32> -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
