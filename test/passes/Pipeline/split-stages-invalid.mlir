// RUN: dtc-opt %s -verify-diagnostics --dtc-split-stages=stages=4

// Tests that more stages than ops that compute on the data fail, naming
// the counts.

// expected-error @+1 {{pp=4 asks for more pipeline stages than the model allows: it has 2 ops that compute on the data, and each of the 4 stages needs at least one}}
func.func @main(%x: tensor<8xf32> {dtg.role = "input"}) -> (tensor<f32> {dtg.name = "loss"}) {
  %a = dtg.tanh %x : tensor<8xf32>
  %l = dtg.reduce_sum %a {axes = array<i64: 0>, keepdims = false} : tensor<8xf32> -> tensor<f32>
  return %l : tensor<f32>
}
