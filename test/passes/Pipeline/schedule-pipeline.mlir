// RUN: dtc-opt %s --dtc-schedule-pipeline="schedule=1f1b stage=1 stages=2" | FileCheck %s --check-prefixes=CHECK,ONE
// RUN: dtc-opt %s --dtc-schedule-pipeline="schedule=gpipe stage=1 stages=2" | FileCheck %s --check-prefixes=CHECK,GPIPE

// Tests that @micro_step is cut into its forward (the ops not marked
// dtg.backward; it returns the forward results, then what the backward
// reads of it) and its backward (from the arguments it reads and those
// saved values), and that the last of two stages runs them in the
// schedule's order, each micro-batch's receive before its forward and its
// send after its backward (the loss sum may come as soon as its forwards
// are done), and the sum over stages after every call.

dist.mesh @mesh = <["pp" = 2]>

func.func private @micro_step(%a: tensor<4xf32> {dtg.role = "activation"},
                              %w: tensor<4xf32> {dtg.role = "parameter"})
    -> (tensor<f32> {dtg.role = "loss_sum"}, tensor<4xf32> {dtg.role = "gradient"},
        tensor<4xf32> {dtg.role = "activation_grad"}) {
  %h = dtg.mul %a, %w : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %t = dtg.tanh %h : tensor<4xf32>
  %l = dtg.reduce_sum %t {axes = array<i64: 0>, keepdims = false} : tensor<4xf32> -> tensor<f32>
  %one = dtg.constant {dtg.backward} dense<1.0> : tensor<4xf32>
  %d = dtg.mul %t, %t {dtg.backward} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %dh = dtg.sub %one, %d {dtg.backward} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %gw = dtg.mul %dh, %a {dtg.backward} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %ga = dtg.mul %dh, %w {dtg.backward} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %l, %gw, %ga : tensor<f32>, tensor<4xf32>, tensor<4xf32>
}

func.func @train_step(%w: tensor<4xf32> {dtg.role = "parameter"}) -> (tensor<4xf32>, tensor<f32>) {
  %r0 = dist.recv on @mesh mesh_axis = "pp" shift = -1 {dtc.message = "a@0", dtc.micro_batch_transfer} : tensor<4xf32>
  %c0:3 = call @micro_step(%r0, %w) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>, tensor<4xf32>)
  dist.send %c0#2 on @mesh mesh_axis = "pp" shift = -1 {dtc.message = "da@0", dtc.micro_batch_transfer} : tensor<4xf32>
  %r1 = dist.recv on @mesh mesh_axis = "pp" shift = -1 {dtc.message = "a@1", dtc.micro_batch_transfer} : tensor<4xf32>
  %c1:3 = call @micro_step(%r1, %w) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>, tensor<4xf32>)
  dist.send %c1#2 on @mesh mesh_axis = "pp" shift = -1 {dtc.message = "da@1", dtc.micro_batch_transfer} : tensor<4xf32>
  %g = dtg.add %c0#1, %c1#1 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %s = dtg.add %c0#0, %c1#0 : tensor<f32>, tensor<f32> -> tensor<f32>
  %total = dist.all_reduce sum %s on @mesh mesh_axes = ["pp"] : tensor<f32>
  return %g, %total : tensor<4xf32>, tensor<f32>
}

// CHECK-LABEL: func.func private @micro_forward(
// CHECK-SAME: -> (tensor<f32> {dtg.role = "loss_sum"}, tensor<4xf32> {dtg.role = "saved"})
// CHECK:   %[[H:.*]] = dtg.mul
// CHECK:   %[[T:.*]] = dtg.tanh %[[H]]
// CHECK:   %[[L:.*]] = dtg.reduce_sum %[[T]]
// CHECK:   return %[[L]], %[[T]]
// CHECK-LABEL: func.func private @micro_backward(
// CHECK-SAME: %{{.*}}: tensor<4xf32> {dtg.role = "activation"}, %{{.*}}: tensor<4xf32> {dtg.role = "parameter"}, %{{.*}}: tensor<4xf32> {dtg.role = "saved"})
// CHECK-SAME: -> (tensor<4xf32> {dtg.role = "gradient"}, tensor<4xf32> {dtg.role = "activation_grad"})
// CHECK-NOT: dtg.tanh
// CHECK:   return
// CHECK-NOT: @micro_step
// CHECK-LABEL: func.func @train_step(

// ONE:      dist.recv {{.*}}"a@0"
// ONE-NEXT: call @micro_forward({{.*}}dtc.micro_batch = 0 : i64, dtc.pipeline_op = "F"
// ONE-NEXT: call @micro_backward({{.*}}dtc.micro_batch = 0 : i64, dtc.pipeline_op = "B"
// ONE-NEXT: dist.send {{.*}}"da@0"
// ONE-NEXT: dist.recv {{.*}}"a@1"
// ONE-NEXT: call @micro_forward({{.*}}dtc.micro_batch = 1 : i64, dtc.pipeline_op = "F"
// ONE:      call @micro_backward({{.*}}dtc.micro_batch = 1 : i64, dtc.pipeline_op = "B"
// ONE-NEXT: dist.send {{.*}}"da@1"

// GPIPE:      dist.recv {{.*}}"a@0"
// GPIPE-NEXT: call @micro_forward({{.*}}dtc.micro_batch = 0 : i64, dtc.pipeline_op = "F"
// GPIPE-NEXT: dist.recv {{.*}}"a@1"
// GPIPE-NEXT: call @micro_forward({{.*}}dtc.micro_batch = 1 : i64, dtc.pipeline_op = "F"
// GPIPE:      call @micro_backward({{.*}}dtc.micro_batch = 0 : i64, dtc.pipeline_op = "B"
// GPIPE-NEXT: dist.send {{.*}}"da@0"
// GPIPE-NEXT: call @micro_backward({{.*}}dtc.micro_batch = 1 : i64, dtc.pipeline_op = "B"
// GPIPE-NEXT: dist.send {{.*}}"da@1"

// CHECK:      dist.all_reduce
// CHECK-NEXT: return
