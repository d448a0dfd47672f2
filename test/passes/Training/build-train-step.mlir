// RUN: dtc-opt %s --split-input-file --dtc-build-train-step="loss=mse logits=y labels=t optimizer=sgd momentum=0.9 micro-batches=2 freeze=frozen" | FileCheck %s
// RUN: dtc-opt %s --split-input-file --dtc-build-train-step="loss=mse logits=y labels=t lr-schedule=cosine warmup=2 total-steps=10" | FileCheck %s --check-prefix=ADAMW

// Tests that a matmul with an appended mse loss gets @micro_step (loss sum and
// count, roles loss_sum and loss_count, the gradient of the trainable weight, the reverse sweep marked
// dtg.backward), @train_step (two micro-batches sliced from the global batch,
// the lr schedule, the optimizer update; roles on every argument and result)
// and @eval_step (the same arguments; the metrics loss_sum and loss_count). A
// float initializer without a gradient path to the loss (here a mask used as a
// where condition) is a constant; a frozen one with a path stays a parameter
// that is not trained.

// CHECK-LABEL: func.func private @micro_step(
// CHECK-SAME: {{.*}}dtg.name = "w", dtg.role = "parameter"}
// CHECK-SAME: {{.*}}dtg.name = "frozen", dtg.role = "parameter"}
// CHECK-SAME: {{.*}}dtg.name = "mask", dtg.role = "constant"}
// CHECK-SAME: {dtg.name = "x", dtg.role = "input"}
// CHECK-SAME: {dtg.name = "t", dtg.role = "input"}
// CHECK-SAME: {dtg.name = "key", dtg.role = "key"})
// CHECK-SAME: -> (tensor<f32> {dtg.role = "loss_sum"}, tensor<f32> {dtg.role = "loss_count"}, tensor<3x2xf32> {dtg.role = "gradient"})
// CHECK: %[[SQ:.+]] = dtg.mul
// CHECK: %[[SUM:.+]] = dtg.reduce_sum %[[SQ]] {axes = array<i64: 0, 1>, keepdims = false}
// CHECK: %[[COUNT:.+]] = dtg.constant dense<4.000000e+00> : tensor<f32>
// CHECK: %[[GRAD:.+]] = dtg.matmul {{.*}}{dtg.backward}
// CHECK: return %[[SUM]], %[[COUNT]], %[[GRAD]]

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[W:[^:]+]]: tensor<3x2xf32> {{{.*}}dtg.name = "w", dtg.role = "parameter", dtg.trainable}
// CHECK-SAME: {{.*}}dtg.name = "frozen", dtg.role = "parameter"}
// CHECK-SAME: {{.*}}dtg.name = "mask", dtg.role = "constant"}
// CHECK-SAME: %[[BUF:[^:]+]]: tensor<3x2xf32> {dtg.name = "w.momentum_buffer", dtg.role = "optimizer_state"}
// CHECK-SAME: %[[X:[^:]+]]: tensor<4x3xf32> {dtg.name = "x", dtg.role = "input"}
// CHECK-SAME: tensor<4x2xf32> {dtg.name = "t", dtg.role = "input"}
// CHECK-SAME: %[[LR:[^:]+]]: tensor<f64> {dtg.default = 1.000000e-03 : f64, dtg.name = "lr", dtg.role = "hyper"}
// CHECK-SAME: {dtg.default = 0 : i64, dtg.name = "lr_schedule", dtg.role = "hyper"}
// CHECK-SAME: {dtg.default = 9.000000e-01 : f64, dtg.name = "momentum", dtg.role = "hyper"}
// CHECK-SAME: %[[STEP:[^:]+]]: tensor<i64> {dtg.name = "step", dtg.role = "step"})
// CHECK-SAME: -> (tensor<3x2xf32> {dtg.name = "w", dtg.role = "parameter"}, tensor<3x2xf32> {dtg.name = "w.momentum_buffer", dtg.role = "optimizer_state"}, tensor<f32> {dtg.name = "loss", dtg.role = "metric"}, tensor<f64> {dtg.name = "lr", dtg.role = "metric"}, tensor<f64> {dtg.name = "grad_norm", dtg.role = "metric"})
// CHECK: dtg.slice %[[X]] {limits = array<i64: 2, 3>, starts = array<i64: 0, 0>
// CHECK: %[[M0:.+]]:3 = call @micro_step(
// CHECK: dtg.slice %[[X]] {limits = array<i64: 4, 3>, starts = array<i64: 2, 0>
// CHECK: %[[M1:.+]]:3 = call @micro_step(
// CHECK: %[[LOSS:.+]] = dtg.div
// CHECK: %[[K1:.+]] = dtg.add %[[STEP]]
// CHECK: %[[LRK:.+]] = dtg.lr_schedule %[[LR]], %[[K1]]
// CHECK: %[[NEW:.+]], %[[NEWBUF:.+]] = dtg.sgd_update %[[W]], %{{.+}}, %[[BUF]], %[[LRK]]
// CHECK: return %[[NEW]], %[[NEWBUF]], %[[LOSS]], %[[LRK]]

// CHECK-LABEL: func.func private @eval_micro_step(
// CHECK-SAME: -> (tensor<f32> {dtg.role = "loss_sum"}, tensor<f32> {dtg.role = "loss_count"})
// CHECK-NOT: dtg.backward
// CHECK: return

// CHECK-LABEL: func.func @eval_step(
// CHECK-SAME: {{.*}}dtg.name = "mask", dtg.role = "constant"}
// CHECK-SAME: %[[EX:[^:]+]]: tensor<4x3xf32> {dtg.name = "x", dtg.role = "input"}
// CHECK-SAME: {dtg.name = "step", dtg.role = "step"})
// CHECK-SAME: -> (tensor<f32> {dtg.name = "loss_sum", dtg.role = "metric"}, tensor<f32> {dtg.name = "loss_count", dtg.role = "metric"})
// CHECK: dtg.slice %[[EX]] {limits = array<i64: 2, 3>
// CHECK: %[[E0:.+]]:2 = call @eval_micro_step(
// CHECK: dtg.slice %[[EX]] {limits = array<i64: 4, 3>
// CHECK: %[[E1:.+]]:2 = call @eval_micro_step(
// CHECK: %[[ESUM:.+]] = dtg.add %[[E0]]#0, %[[E1]]#0
// CHECK: %[[ECOUNT:.+]] = dtg.add %[[E0]]#1, %[[E1]]#1
// CHECK: return %[[ESUM]], %[[ECOUNT]]

// ADAMW-LABEL: func.func @train_step(
// ADAMW-SAME: {dtg.name = "w.exp_avg", dtg.role = "optimizer_state"}
// ADAMW-SAME: {dtg.name = "w.exp_avg_sq", dtg.role = "optimizer_state"}
// ADAMW-SAME: {dtg.name = "frozen.exp_avg", dtg.role = "optimizer_state"}
// ADAMW-SAME: {dtg.default = 2 : i64, dtg.name = "lr_schedule", dtg.role = "hyper"}
// ADAMW-SAME: {dtg.default = 2 : i64, dtg.name = "warmup", dtg.role = "hyper"}
// ADAMW-SAME: {dtg.default = 10 : i64, dtg.name = "total_steps", dtg.role = "hyper"}
// ADAMW: dtg.lr_schedule
// ADAMW: dtg.adamw_update
// ADAMW: dtg.adamw_update
// ADAMW-NOT: dtg.adamw_update
// ADAMW-LABEL: func.func @eval_step(

func.func @main(%w: tensor<3x2xf32> {dtg.name = "w", dtg.role = "parameter", dtg.initial = dense<0.5> : tensor<3x2xf32>},
                %frozen: tensor<2xf32> {dtg.name = "frozen", dtg.role = "parameter", dtg.initial = dense<0.1> : tensor<2xf32>},
                %mask: tensor<2x2xf32> {dtg.name = "mask", dtg.role = "parameter", dtg.initial = dense<1.0> : tensor<2x2xf32>},
                %x: tensor<2x3xf32> {dtg.name = "x", dtg.role = "input"},
                %t: tensor<2x2xf32> {dtg.name = "t", dtg.role = "input"})
    -> (tensor<2x2xf32> {dtg.name = "y"}) {
  %h = dtg.matmul %x, %w : tensor<2x3xf32>, tensor<3x2xf32> -> tensor<2x2xf32>
  %b = dtg.add %h, %frozen : tensor<2x2xf32>, tensor<2xf32> -> tensor<2x2xf32>
  %zero = dtg.constant dense<0.0> : tensor<f32>
  %keep = dtg.greater %mask, %zero : tensor<2x2xf32>, tensor<f32> -> tensor<2x2xi1>
  %y = dtg.where %keep, %b, %zero : tensor<2x2xi1>, tensor<2x2xf32>, tensor<f32> -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

// Tests that training-mode ops take their eval form in @eval_micro_step
// (dropout is the identity, batch_norm_training becomes batch_norm_inference
// with the running statistics, which no result updates), while @micro_step
// keeps them and returns the new running statistics as state.

// CHECK-LABEL: func.func private @micro_step(
// CHECK-SAME: {{.*}}dtg.name = "bn.running_mean", dtg.role = "state"}
// CHECK: dtg.batch_norm_training
// CHECK: dtg.dropout
// CHECK: return

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: -> (tensor<3x2xf32> {dtg.name = "w", dtg.role = "parameter"}, {{.*}}, tensor<2xf32> {dtg.name = "bn.running_mean", dtg.role = "state"}, tensor<2xf32> {dtg.name = "bn.running_var", dtg.role = "state"}

// CHECK-LABEL: func.func private @eval_micro_step(
// CHECK-SAME: %[[W:[^:]+]]: tensor<3x2xf32>
// CHECK-SAME: %[[S:[^:]+]]: tensor<2xf32>
// CHECK-SAME: %[[B:[^:]+]]: tensor<2xf32>
// CHECK-SAME: %[[RM:[^:]+]]: tensor<2xf32>
// CHECK-SAME: %[[RV:[^:]+]]: tensor<2xf32>
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x3xf32>
// CHECK-NOT: dtg.dropout
// CHECK-NOT: dtg.batch_norm_training
// CHECK: %[[H:.+]] = dtg.matmul %[[X]], %[[W]]
// CHECK: %[[N:.+]] = dtg.batch_norm_inference %[[H]], %[[S]], %[[B]], %[[RM]], %[[RV]] {epsilon = 1.000000e-05 : f64}
// CHECK-NOT: dtg.dropout
// CHECK: dtg.sub %[[N]]
// CHECK-NOT: dtg.dropout
// CHECK-NOT: dtg.batch_norm_training
// CHECK: return

// ADAMW-LABEL: func.func @train_step(
// ADAMW-LABEL: func.func @eval_step(

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
  %key = dtg.constant dense<0> : tensor<2xi64>
  %y, %m = dtg.dropout %n, %key {ratio = 0.1 : f64, stream = 0 : i64} : tensor<2x2xf32>, tensor<2xi64> -> tensor<2x2xf32>, tensor<2x2xi1>
  return %y : tensor<2x2xf32>
}
