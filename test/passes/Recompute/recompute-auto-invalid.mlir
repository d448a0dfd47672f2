// RUN: dtc-opt %s -split-input-file -verify-diagnostics --dtc-recompute="mode=auto memory-limit=20000"

// Tests that auto recompute fails when no choice fits the limit, naming the
// smallest peak it reached.

// expected-error @+1 {{no recompute choice fits the memory limit of 20000 bytes (1.86265e-05 GiB): the smallest peak it reaches is 20484 bytes (1.90772e-05 GiB)}}
func.func @layers(%x: tensor<1024xf32> {dtg.role = "input"}) -> (tensor<f32>, tensor<1024xf32>) {
  %a = dtg.tanh %x : tensor<1024xf32> loc("/h.0/Tanh")
  %b = dtg.tanh %a : tensor<1024xf32> loc("/h.0/Tanh_1")
  %c = dtg.tanh %b : tensor<1024xf32> loc("/h.1/Tanh")
  %e = dtg.exp %c : tensor<1024xf32> loc("/h.1/Exp")
  %d = dtg.tanh %e : tensor<1024xf32> loc("/h.1/Tanh_1")
  %l = dtg.reduce_sum %d {axes = array<i64: 0>, keepdims = false} : tensor<1024xf32> -> tensor<f32> loc("/ReduceSum")
  %gd = dtg.mul %d, %e {dtg.backward} : tensor<1024xf32>, tensor<1024xf32> -> tensor<1024xf32>
  %gc = dtg.mul %gd, %c {dtg.backward} : tensor<1024xf32>, tensor<1024xf32> -> tensor<1024xf32>
  %gb = dtg.mul %gc, %b {dtg.backward} : tensor<1024xf32>, tensor<1024xf32> -> tensor<1024xf32>
  %ga = dtg.mul %gb, %a {dtg.backward} : tensor<1024xf32>, tensor<1024xf32> -> tensor<1024xf32>
  return %l, %ga : tensor<f32>, tensor<1024xf32>
}
