// RUN: dtc-opt %s --dtc-test-gradients="step=1e-2 tolerance=1e-3" -verify-diagnostics -o /dev/null

// Tests that a cast between float types passes the gradient through (in f32
// the finite differences are coarse, hence the looser step and tolerance).

// expected-remark @+1 {{gradients match}}
func.func @cast(%x: tensor<4xf64>) -> tensor<4xf32> {
  %y = dtg.mul %x, %x : tensor<4xf64>, tensor<4xf64> -> tensor<4xf64>
  %f = dtg.cast %y : tensor<4xf64> -> tensor<4xf32>
  return %f : tensor<4xf32>
}
