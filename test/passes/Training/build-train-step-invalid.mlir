// RUN: dtc-opt %s --split-input-file --verify-diagnostics --dtc-build-train-step
// RUN: not dtc-opt %s --split-input-file --dtc-build-train-step=optimizer=rmsprop 2>&1 | FileCheck %s --check-prefix=OPTIMIZER
// RUN: not dtc-opt %s --split-input-file --dtc-build-train-step=lr-schedule=step 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// RUN: not dtc-opt %s --split-input-file --dtc-build-train-step="lr-schedule=cosine warmup=5 total-steps=5" 2>&1 | FileCheck %s --check-prefix=TOTAL
// RUN: not dtc-opt %s --split-input-file --dtc-build-train-step=micro-batches=0 2>&1 | FileCheck %s --check-prefix=MICRO
// RUN: not dtc-opt %s --split-input-file --dtc-build-train-step="loss=hinge logits=y labels=t" 2>&1 | FileCheck %s --check-prefix=LOSS
// RUN: not dtc-opt %s --split-input-file --dtc-build-train-step="loss=mse logits=nope labels=t" 2>&1 | FileCheck %s --check-prefix=LOGITS
// RUN: not dtc-opt %s --split-input-file --dtc-build-train-step="loss=mse loss-output=l" 2>&1 | FileCheck %s --check-prefix=BOTH

// Bad option values are errors at @main (checked by the FileCheck runs: the
// first split's @main draws them).
// OPTIMIZER: error: --optimizer must be sgd or adamw, got 'rmsprop'
// SCHEDULE: error: --lr-schedule must be constant, linear or cosine, got 'step'
// TOTAL: error: --lr-schedule cosine needs --total-steps greater than --warmup
// MICRO: error: --micro-batches must be at least 1
// LOSS: error: --loss must be cross_entropy or mse, got 'hinge'
// LOGITS: error: --logits: the model has no output 'nope'
// BOTH: error: --loss and --loss-output contradict each other; give one

// Tests that a model without a scalar float output needs a loss named.

// expected-error @+1 {{the model has no scalar float output (outputs: y); name the loss with --loss-output, or append one with --loss cross_entropy|mse --logits NAME --labels NAME}}
func.func @main(%w: tensor<3x2xf32> {dtg.name = "w", dtg.role = "parameter", dtg.initial = dense<0.5> : tensor<3x2xf32>},
                %x: tensor<2x3xf32> {dtg.name = "x", dtg.role = "input"},
                %t: tensor<2x2xf32> {dtg.name = "t", dtg.role = "input"})
    -> (tensor<2x2xf32> {dtg.name = "y"}) {
  %y = dtg.matmul %x, %w : tensor<2x3xf32>, tensor<3x2xf32> -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

// Tests that two scalar float outputs are ambiguous.

// expected-error @+1 {{the model has more than one scalar float output (outputs: a, b)}}
func.func @main(%w: tensor<3xf32> {dtg.name = "w", dtg.role = "parameter", dtg.initial = dense<0.5> : tensor<3xf32>})
    -> (tensor<f32> {dtg.name = "a"}, tensor<f32> {dtg.name = "b"}) {
  %s = dtg.reduce_sum %w {axes = array<i64: 0>, keepdims = false} : tensor<3xf32> -> tensor<f32>
  return %s, %s : tensor<f32>, tensor<f32>
}

// -----

// Tests that a loss that depends on no parameter leaves nothing to train.

// expected-error @+1 {{no parameter is trainable: the loss depends on none (or all are frozen)}}
func.func @main(%w: tensor<3xf32> {dtg.name = "w", dtg.role = "parameter", dtg.initial = dense<0.5> : tensor<3xf32>},
                %x: tensor<2x3xf32> {dtg.name = "x", dtg.role = "input"})
    -> (tensor<f32> {dtg.name = "loss"}) {
  %s = dtg.reduce_sum %x {axes = array<i64: 0, 1>, keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// Tests that a module without @main has nothing to train.

// expected-error @+1 {{the module has no @main to train}}
module {
  func.func @forward(%x: tensor<2xf32>) -> tensor<2xf32> {
    return %x : tensor<2xf32>
  }
}

// -----

// Tests that a module is trained once.

// expected-error @+1 {{the module already has a training step (@eval_step)}}
module {
  func.func @main(%w: tensor<3xf32> {dtg.name = "w", dtg.role = "parameter", dtg.initial = dense<0.5> : tensor<3xf32>})
      -> (tensor<f32> {dtg.name = "loss"}) {
    %s = dtg.reduce_sum %w {axes = array<i64: 0>, keepdims = false} : tensor<3xf32> -> tensor<f32>
    return %s : tensor<f32>
  }
  func.func @eval_step() {
    return
  }
}

// -----

// Tests that a scatter whose reduction has no gradient rule (max, min, mul:
// the winner of each element would need ties split) is refused where the
// loss depends on it through a parameter.

func.func @main(%w: tensor<2x3xf32> {dtg.name = "w", dtg.role = "parameter", dtg.initial = dense<0.5> : tensor<2x3xf32>},
                %i: tensor<2x2xi64> {dtg.name = "i", dtg.role = "input"},
                %u: tensor<2x2xf32> {dtg.name = "u", dtg.role = "input"})
    -> (tensor<f32> {dtg.name = "loss"}) {
  // expected-error @+1 {{the gradient of a scatter with reduction 'max' is not supported (only none and add)}}
  %y = dtg.scatter_elements %w, %i, %u {axis = 1 : i64, reduction = "max"} : tensor<2x3xf32>, tensor<2x2xi64>, tensor<2x2xf32> -> tensor<2x3xf32>
  %l = dtg.reduce_sum %y {axes = array<i64: 0, 1>, keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
