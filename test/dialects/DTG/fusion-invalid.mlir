// RUN: dtc-opt %s -split-input-file -verify-diagnostics

// Verifier errors of dtg.fusion.

// Tests that an unknown kind is refused.
func.func @kind(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{kind must be 'loop', 'reduction' or 'gemm', got 'tile'}}
  %r = dtg.fusion "tile" (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %e = dtg.exp %a : tensor<4xf32>
    dtg.yield %e : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// Tests that block arguments must have the operand types.
func.func @argument_type(%x: tensor<4xf32>) -> tensor<4xf64> {
  // expected-error @+1 {{block argument #0 has type 'tensor<4xf64>', operand has 'tensor<4xf32>'}}
  %r = dtg.fusion "loop" (%x) : (tensor<4xf32>) -> tensor<4xf64> {
  ^bb0(%a: tensor<4xf64>):
    %e = dtg.exp %a : tensor<4xf64>
    dtg.yield %e : tensor<4xf64>
  }
  return %r : tensor<4xf64>
}

// -----

// Tests that the yielded values must have the result types.
func.func @yield_type(%x: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{yields 1 values whose types differ from the op's results}}
  %r = dtg.fusion "loop" (%x) : (tensor<4xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<4xf32>):
    %e = dtg.exp %a : tensor<4xf32>
    dtg.yield %e : tensor<4xf32>
  }
  return %r : tensor<8xf32>
}

// -----

// Tests that a loop kernel cannot hold a reduction.
func.func @loop_reduction(%x: tensor<4xf32>) -> tensor<f32> {
  // expected-error @+1 {{of kind 'loop' cannot hold 'dtg.reduce_sum'}}
  %r = dtg.fusion "loop" (%x) : (tensor<4xf32>) -> tensor<f32> {
  ^bb0(%a: tensor<4xf32>):
    %s = dtg.reduce_sum %a {axes = array<i64: 0>, keepdims = false} : tensor<4xf32> -> tensor<f32>
    dtg.yield %s : tensor<f32>
  }
  return %r : tensor<f32>
}

// -----

// Tests that a reduction kernel must hold a reduction.
func.func @no_reduction(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{of kind 'reduction' holds no reduction}}
  %r = dtg.fusion "reduction" (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %e = dtg.exp %a : tensor<4xf32>
    dtg.yield %e : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// Tests that a gemm kernel holds exactly one matmul.
func.func @no_matmul(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{of kind 'gemm' must hold exactly one dtg.matmul, holds 0}}
  %r = dtg.fusion "gemm" (%x) : (tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%a: tensor<4x4xf32>):
    %e = dtg.exp %a : tensor<4x4xf32>
    dtg.yield %e : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}

// -----

// Tests that ops with effects or of other families stay out of kernels.
func.func @softmax_inside(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{of kind 'loop' cannot hold 'dtg.softmax'}}
  %r = dtg.fusion "loop" (%x) : (tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%a: tensor<4x4xf32>):
    %e = dtg.softmax %a {axis = 1 : i64} : tensor<4x4xf32>
    dtg.yield %e : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}
