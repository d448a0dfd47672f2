// RUN: dtc-opt %s -split-input-file -verify-diagnostics --dtc-schedule-pipeline="schedule=interleaved stage=0 stages=2 virtual-stages=2"

// Tests that the interleaved schedule refuses a micro-batch count that is
// not a multiple of the stages, and chunks of one stage that share a value.

// expected-error @+1 {{the interleaved schedule needs the micro-batches per step (1) to be a multiple of pp (2)}}
module {
  func.func private @micro_step(%a: tensor<4xf32> {dtg.role = "input"}) -> (tensor<f32> {dtg.role = "loss_sum"}) {
    %l = dtg.reduce_sum %a {axes = array<i64: 0>, keepdims = false, dtc.chunk = 0 : i64} : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
  func.func @train_step(%a: tensor<4xf32> {dtg.role = "input"}) -> tensor<f32> {
    %c = call @micro_step(%a) : (tensor<4xf32>) -> tensor<f32>
    return %c : tensor<f32>
  }
}

// -----

module {
  func.func private @micro_step(%a: tensor<4xf32> {dtg.role = "input"}) -> (tensor<4xf32> {dtg.role = "activation"}) {
    %x = dtg.tanh %a {dtc.chunk = 0 : i64} : tensor<4xf32>
    // expected-error @+1 {{model chunks 0 and 1 of this stage share values (dtg.exp of chunk 1 is connected to the other's}}
    %y = dtg.exp %x {dtc.chunk = 1 : i64} : tensor<4xf32>
    return %y : tensor<4xf32>
  }
  func.func @train_step(%a: tensor<4xf32> {dtg.role = "input"}) -> tensor<4xf32> {
    %c0 = call @micro_step(%a) : (tensor<4xf32>) -> tensor<4xf32>
    %c1 = call @micro_step(%a) : (tensor<4xf32>) -> tensor<4xf32>
    return %c1 : tensor<4xf32>
  }
}
