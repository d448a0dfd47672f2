// RUN: dtc-opt %s --dtc-test-gradients -verify-diagnostics -o /dev/null

// Tests that the gradient rules of elementwise ops match central finite
// differences (f64, through the reference interpreter).

// expected-remark @+1 {{gradients match}}
func.func @exp_log_sqrt(%x: tensor<3xf64> {dtc.test_range = [0.5, 2.0]}) -> tensor<3xf64> {
  %e = dtg.exp %x : tensor<3xf64>
  %l = dtg.log %x : tensor<3xf64>
  %s = dtg.sqrt %x : tensor<3xf64>
  %r = dtg.rsqrt %x : tensor<3xf64>
  %q = dtg.reciprocal %x : tensor<3xf64>
  %a = dtg.add %e, %l : tensor<3xf64>, tensor<3xf64> -> tensor<3xf64>
  %b = dtg.mul %a, %s : tensor<3xf64>, tensor<3xf64> -> tensor<3xf64>
  %c = dtg.div %b, %r : tensor<3xf64>, tensor<3xf64> -> tensor<3xf64>
  %d = dtg.sub %c, %q : tensor<3xf64>, tensor<3xf64> -> tensor<3xf64>
  return %d : tensor<3xf64>
}

// expected-remark @+1 {{gradients match}}
func.func @trig(%x: tensor<4xf64>) -> (tensor<4xf64>, tensor<4xf64>) {
  %s = dtg.sin %x : tensor<4xf64>
  %c = dtg.cos %x : tensor<4xf64>
  %t = dtg.tan %x : tensor<4xf64>
  %as = dtg.asin %x : tensor<4xf64>
  %at = dtg.atan %x : tensor<4xf64>
  %sh = dtg.sinh %x : tensor<4xf64>
  %ch = dtg.cosh %x : tensor<4xf64>
  %ash = dtg.asinh %x : tensor<4xf64>
  %th = dtg.tanh %x : tensor<4xf64>
  %er = dtg.erf %x : tensor<4xf64>
  %sg = dtg.sigmoid %x : tensor<4xf64>
  %a = dtg.add %s, %c : tensor<4xf64>, tensor<4xf64> -> tensor<4xf64>
  %b = dtg.add %a, %t : tensor<4xf64>, tensor<4xf64> -> tensor<4xf64>
  %d = dtg.add %b, %at : tensor<4xf64>, tensor<4xf64> -> tensor<4xf64>
  %e = dtg.add %d, %sh : tensor<4xf64>, tensor<4xf64> -> tensor<4xf64>
  %f = dtg.add %e, %ch : tensor<4xf64>, tensor<4xf64> -> tensor<4xf64>
  %g = dtg.add %f, %ash : tensor<4xf64>, tensor<4xf64> -> tensor<4xf64>
  %h = dtg.mul %g, %th : tensor<4xf64>, tensor<4xf64> -> tensor<4xf64>
  %i = dtg.mul %h, %er : tensor<4xf64>, tensor<4xf64> -> tensor<4xf64>
  %j = dtg.mul %as, %sg : tensor<4xf64>, tensor<4xf64> -> tensor<4xf64>
  return %i, %j : tensor<4xf64>, tensor<4xf64>
}

// expected-remark @+1 {{gradients match}}
func.func @activations(%x: tensor<2x3xf64>, %y: tensor<3xf64>) -> tensor<2x3xf64> {
  %z = dtg.mul %x, %y : tensor<2x3xf64>, tensor<3xf64> -> tensor<2x3xf64>
  %g1 = dtg.gelu %z {approximate = true} : tensor<2x3xf64>
  %g2 = dtg.gelu %g1 {approximate = false} : tensor<2x3xf64>
  %l = dtg.leaky_relu %g2 {alpha = 0.1 : f64} : tensor<2x3xf64>
  %e = dtg.elu %l {alpha = 0.7 : f64} : tensor<2x3xf64>
  %s = dtg.selu %e {alpha = 1.6 : f64, gamma = 1.05 : f64} : tensor<2x3xf64>
  %c = dtg.celu %s {alpha = 0.9 : f64} : tensor<2x3xf64>
  %p = dtg.softplus %c : tensor<2x3xf64>
  %q = dtg.softsign %p : tensor<2x3xf64>
  return %q : tensor<2x3xf64>
}

// expected-remark @+1 {{gradients match}}
func.func @binary_broadcast(%x: tensor<2x3xf64> {dtc.test_range = [0.5, 2.0]}, %y: tensor<2x1xf64> {dtc.test_range = [0.5, 2.0]}) -> tensor<2x3xf64> {
  %p = dtg.pow %x, %y : tensor<2x3xf64>, tensor<2x1xf64> -> tensor<2x3xf64>
  %m = dtg.max %p, %y : tensor<2x3xf64>, tensor<2x1xf64> -> tensor<2x3xf64>
  %n = dtg.min %m, %x : tensor<2x3xf64>, tensor<2x3xf64> -> tensor<2x3xf64>
  %d = dtg.div %n, %y : tensor<2x3xf64>, tensor<2x1xf64> -> tensor<2x3xf64>
  return %d : tensor<2x3xf64>
}

// expected-remark @+1 {{gradients match}}
func.func @where_clip(%x: tensor<4xf64>, %y: tensor<f64>) -> tensor<4xf64> {
  %zero = dtg.constant dense<0.0> : tensor<f64>
  %c = dtg.greater %x, %zero : tensor<4xf64>, tensor<f64> -> tensor<4xi1>
  %w = dtg.where %c, %x, %y : tensor<4xi1>, tensor<4xf64>, tensor<f64> -> tensor<4xf64>
  %k = dtg.clip %w {min = -0.5 : f64, max = 0.5 : f64} : tensor<4xf64>
  %r = dtg.relu %k : tensor<4xf64>
  %a = dtg.abs %x : tensor<4xf64>
  %n = dtg.neg %a : tensor<4xf64>
  %s = dtg.add %r, %n : tensor<4xf64>, tensor<4xf64> -> tensor<4xf64>
  return %s : tensor<4xf64>
}
