// RUN: dtc-opt %s --dtc-build-train-step="loss=mse logits=y labels=t sync-batch-norm-dp=4" | FileCheck %s

// Tests that with sync-batch-norm-dp=4 @micro_step's batch norm takes its
// statistics over the 4 data-parallel ranks: the per-channel sum of the
// samples and of their squared deviations are all-reduced over dp (of the
// mesh @mesh it declares) and divided by the global count, 4 ranks times 2
// samples; the running mean and the (Bessel-corrected, 8/7) running
// variance are the op's momentum update and become the step's new state;
// the reverse sweep all-reduces the gradients of those sums. @eval_micro_step
// keeps its batch norm, in inference form (running statistics, no
// communication).

// CHECK: dist.mesh @mesh = <["pp" = 1, "dp" = 4, "tp" = 1]>
// CHECK-LABEL: func.func private @micro_step(
// CHECK-SAME: %[[RM:[^:]+]]: tensor<2xf32> {{{[^}]*}}dtg.name = "bn.running_mean", dtg.role = "state"}
// CHECK-NOT: dtg.batch_norm_training
// CHECK: %[[N:.+]] = dtg.constant dense<8.000000e+00> : tensor<f32>
// CHECK: %[[S1:.+]] = dtg.reduce_sum %[[H:[^ ]+]] {axes = array<i64: 0>, keepdims = true} : tensor<2x2xf32> -> tensor<1x2xf32>
// CHECK: %[[S1R:.+]] = dist.all_reduce sum %[[S1]] on @mesh mesh_axes = ["dp"] {{.*}}: tensor<1x2xf32>
// CHECK: %[[MEAN:.+]] = dtg.div %[[S1R]], %[[N]]
// CHECK: %[[C:.+]] = dtg.sub %[[H]], %[[MEAN]]
// CHECK: %[[SQ:.+]] = dtg.mul %[[C]], %[[C]]
// CHECK: %[[S2:.+]] = dtg.reduce_sum %[[SQ]]
// CHECK: %[[S2R:.+]] = dist.all_reduce sum %[[S2]] on @mesh mesh_axes = ["dp"] {{.*}}: tensor<1x2xf32>
// CHECK: %[[VAR:.+]] = dtg.div %[[S2R]], {{%.+}}
// CHECK: dtg.rsqrt
// CHECK: dtg.constant dense<1.14285719> : tensor<f32>
// CHECK: dtg.mul %[[RM]],
// CHECK: dist.all_reduce sum {{.*}} {{.*}}dtg.backward{{.*}} : tensor<1x2xf32>
// CHECK: return
// CHECK-LABEL: func.func private @eval_micro_step(
// CHECK-NOT: dist.
// CHECK: dtg.batch_norm_inference
// CHECK-NOT: dist.
// CHECK: return

func.func @main(%w: tensor<3x2xf32> {dtg.name = "w", dtg.role = "parameter", dtg.initial = dense<0.5> : tensor<3x2xf32>},
                %s: tensor<2xf32> {dtg.name = "bn.weight", dtg.role = "parameter", dtg.initial = dense<1.0> : tensor<2xf32>},
                %b: tensor<2xf32> {dtg.name = "bn.bias", dtg.role = "parameter", dtg.initial = dense<0.0> : tensor<2xf32>},
                %rm: tensor<2xf32> {dtg.name = "bn.running_mean", dtg.role = "state", dtg.initial = dense<0.0> : tensor<2xf32>},
                %rv: tensor<2xf32> {dtg.name = "bn.running_var", dtg.role = "state", dtg.initial = dense<1.0> : tensor<2xf32>},
                %x: tensor<2x3xf32> {dtg.name = "x", dtg.role = "input"},
                %t: tensor<2x2xf32> {dtg.name = "t", dtg.role = "input"})
    -> (tensor<2x2xf32> {dtg.name = "y"}) {
  %h = dtg.matmul %x, %w : tensor<2x3xf32>, tensor<3x2xf32> -> tensor<2x2xf32>
  %n, %nrm, %nrv = dtg.batch_norm_training %h, %s, %b, %rm, %rv {epsilon = 1.0e-5 : f64, momentum = 0.9 : f64} : tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32> -> tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>
  return %n : tensor<2x2xf32>
}
