// RUN: dtc-opt %s --split-input-file --verify-diagnostics --dtc-mixed-precision="precision=bf16"
// RUN: not dtc-opt %s --split-input-file --dtc-mixed-precision="precision=fp8" 2>&1 | FileCheck %s --check-prefix=PRECISION
// RUN: not dtc-opt %s --split-input-file --dtc-mixed-precision="precision=fp16 loss-scale-init=0" 2>&1 | FileCheck %s --check-prefix=INIT
// RUN: not dtc-opt %s --split-input-file --dtc-mixed-precision="precision=fp16 loss-scale-window=0" 2>&1 | FileCheck %s --check-prefix=WINDOW

// PRECISION: error: --precision must be fp32, bf16 or fp16, got 'fp8'
// INIT: error: --loss-scale-init must be a positive number, got 0
// WINDOW: error: --loss-scale-window must be at least 1, got 0

// Tests that a module without the training step is refused.

// expected-error @+1 {{mixed precision needs @train_step and @micro_step (run dtc-build-train-step first)}}
module {
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    return %x : tensor<2xf32>
  }
}

// -----

// Tests that the pass does not run twice.

// expected-error @+1 {{the step is already in "bf16" precision}}
module attributes {dtc.precision = "bf16"} {
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    return %x : tensor<2xf32>
  }
}

// -----

// Tests that a trainable parameter must be fp32 (the masters are fp32).

module {
  func.func private @micro_step(%w: tensor<2xf64>) -> (tensor<f64>, tensor<f64>, tensor<2xf64>) {
    %c = dtg.constant dense<1.0> : tensor<f64>
    return %c, %c, %w : tensor<f64>, tensor<f64>, tensor<2xf64>
  }
  // expected-error @+1 {{mixed precision needs fp32 parameters; 'w' is 'tensor<2xf64>'}}
  func.func @train_step(%w: tensor<2xf64> {dtg.name = "w", dtg.role = "parameter", dtg.trainable}) -> tensor<2xf64> {
    %r:3 = call @micro_step(%w) : (tensor<2xf64>) -> (tensor<f64>, tensor<f64>, tensor<2xf64>)
    return %r#2 : tensor<2xf64>
  }
}

// -----

// Tests that a trainable parameter needs an optimizer update to keep a
// master copy of.

module {
  func.func private @micro_step(%w: tensor<2xf32> {dtg.name = "w", dtg.role = "parameter"}) -> (tensor<f32>, tensor<f32>, tensor<2xf32>) {
    %c = dtg.constant dense<1.0> : tensor<f32>
    %g = dtg.neg %w {dtg.backward} : tensor<2xf32>
    return %c, %c, %g : tensor<f32>, tensor<f32>, tensor<2xf32>
  }
  // expected-error @+1 {{trainable parameter 'w' has no optimizer update}}
  func.func @train_step(%w: tensor<2xf32> {dtg.name = "w", dtg.role = "parameter", dtg.trainable}, %step: tensor<i64> {dtg.name = "step", dtg.role = "step"}) -> tensor<2xf32> {
    %r:3 = call @micro_step(%w) : (tensor<2xf32>) -> (tensor<f32>, tensor<f32>, tensor<2xf32>)
    return %r#2 : tensor<2xf32>
  }
}
