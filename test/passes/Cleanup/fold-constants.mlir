// RUN: dtc-opt %s -split-input-file -dtc-fold-constants | FileCheck %s
// RUN: dtc-opt %s -split-input-file -dtc-fold-constants="max-elements=4" | FileCheck %s --check-prefix=SMALL

// Tests that a binary op with broadcasting on two constants folds to the
// constant of its result (the operands' constants stay for a later DCE).
// CHECK-LABEL: func.func @fold_mul
// CHECK-NOT: dtg.mul
// CHECK: %[[C:.+]] = dtg.constant dense<[3, 6]> : tensor<2xi64>
// CHECK-NEXT: return %[[C]]
func.func @fold_mul() -> tensor<2xi64> {
  %a = dtg.constant dense<[1, 2]> : tensor<2xi64>
  %b = dtg.constant dense<3> : tensor<i64>
  %c = dtg.mul %a, %b : tensor<2xi64>, tensor<i64> -> tensor<2xi64>
  return %c : tensor<2xi64>
}

// -----

// Tests that a chain of elementwise ops on constants folds all the way, with
// float results rounded to f32.
// CHECK-LABEL: func.func @fold_chain
// CHECK-NOT: dtg.sqrt
// CHECK-NOT: dtg.add
// CHECK-NOT: dtg.div
// CHECK: %[[C:.+]] = dtg.constant dense<[5.000000e-01, 0.666666686]> : tensor<2xf32>
// CHECK-NEXT: return %[[C]]
func.func @fold_chain() -> tensor<2xf32> {
  %a = dtg.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %one = dtg.constant dense<1.0> : tensor<f32>
  %s = dtg.sqrt %a : tensor<2xf32>
  %t = dtg.add %s, %one : tensor<2xf32>, tensor<f32> -> tensor<2xf32>
  %u = dtg.div %t, %a : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  %v = dtg.div %u, %t : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  %w = dtg.mul %v, %s : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  %x = dtg.mul %w, %a : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  %y = dtg.div %x, %t : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

// Tests that comparisons, where and cast on constants fold, including to
// booleans and across element types.
// CHECK-LABEL: func.func @fold_compare_where_cast
// CHECK-DAG: %[[M:.+]] = dtg.constant dense<[true, false, false]> : tensor<3xi1>
// CHECK-DAG: %[[W:.+]] = dtg.constant dense<[-1.500000e+00, 0.000000e+00, 0.000000e+00]> : tensor<3xf32>
// CHECK-DAG: %[[I:.+]] = dtg.constant dense<[-1, 2, 3]> : tensor<3xi32>
// CHECK-NOT: dtg.less
// CHECK-NOT: dtg.where
// CHECK-NOT: dtg.cast
// CHECK: return %[[M]], %[[W]], %[[I]]
func.func @fold_compare_where_cast() -> (tensor<3xi1>, tensor<3xf32>, tensor<3xi32>) {
  %a = dtg.constant dense<[-1.5, 2.5, 3.0]> : tensor<3xf32>
  %zero = dtg.constant dense<0.0> : tensor<f32>
  %m = dtg.less %a, %zero : tensor<3xf32>, tensor<f32> -> tensor<3xi1>
  %w = dtg.where %m, %a, %zero : tensor<3xi1>, tensor<3xf32>, tensor<f32> -> tensor<3xf32>
  %i = dtg.cast %a : tensor<3xf32> -> tensor<3xi32>
  return %m, %w, %i : tensor<3xi1>, tensor<3xf32>, tensor<3xi32>
}

// -----

// Tests that an op with a non-constant operand is left alone, while the
// constant-only part of the same chain folds.
// CHECK-LABEL: func.func @partial
// CHECK-SAME: (%[[X:.+]]: tensor<2xf32>)
// CHECK: %[[C:.+]] = dtg.constant dense<[2.000000e+00, 3.000000e+00]> : tensor<2xf32>
// CHECK: %[[R:.+]] = dtg.mul %[[X]], %[[C]]
// CHECK-NEXT: %[[N:.+]] = dtg.neg %[[X]]
// CHECK-NEXT: return %[[R]], %[[N]]
func.func @partial(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %a = dtg.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %one = dtg.constant dense<1.0> : tensor<f32>
  %b = dtg.add %a, %one : tensor<2xf32>, tensor<f32> -> tensor<2xf32>
  %r = dtg.mul %x, %b : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  %n = dtg.neg %x : tensor<2xf32>
  return %r, %n : tensor<2xf32>, tensor<2xf32>
}

// -----

// Tests that results larger than max-elements are not folded: with the
// default every result here folds; with max-elements=4 the 8-element
// broadcast stays while the 4-element op still folds.
// CHECK-LABEL: func.func @max_elements
// CHECK-NOT: dtg.add
// CHECK-DAG: %[[B:.+]] = dtg.constant dense<[2, 3, 4, 5]> : tensor<4xi32>
// CHECK-DAG: %[[BIG:.+]] = dtg.constant dense<{{\[}}[2, 3, 4, 5], [3, 4, 5, 6]]> : tensor<2x4xi32>
// CHECK: return %[[B]], %[[BIG]]
// SMALL-LABEL: func.func @max_elements
// SMALL-DAG: %[[A:.+]] = dtg.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
// SMALL-DAG: %[[B:.+]] = dtg.constant dense<[2, 3, 4, 5]> : tensor<4xi32>
// SMALL-DAG: %[[C:.+]] = dtg.constant dense<{{\[}}[1], [2]]> : tensor<2x1xi32>
// SMALL: %[[BIG:.+]] = dtg.add %[[A]], %[[C]] : tensor<4xi32>, tensor<2x1xi32> -> tensor<2x4xi32>
// SMALL: return %[[B]], %[[BIG]]
func.func @max_elements() -> (tensor<4xi32>, tensor<2x4xi32>) {
  %a = dtg.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  %one = dtg.constant dense<1> : tensor<i32>
  %c = dtg.constant dense<[[1], [2]]> : tensor<2x1xi32>
  %small = dtg.add %a, %one : tensor<4xi32>, tensor<i32> -> tensor<4xi32>
  %big = dtg.add %a, %c : tensor<4xi32>, tensor<2x1xi32> -> tensor<2x4xi32>
  return %small, %big : tensor<4xi32>, tensor<2x4xi32>
}

// -----

// Tests that dropout is never folded, even with constant operands: its mask
// belongs to the training step.
// CHECK-LABEL: func.func @dropout
// CHECK: %[[Y:.+]], %[[MASK:.+]] = dtg.dropout
// CHECK: return %[[Y]], %[[MASK]]
func.func @dropout() -> (tensor<4xf32>, tensor<4xi1>) {
  %x = dtg.constant dense<1.0> : tensor<4xf32>
  %key = dtg.constant dense<[7, 0]> : tensor<2xi64>
  %y, %mask = dtg.dropout %x, %key {ratio = 0.5 : f64, stream = 0 : i64} : tensor<4xf32>, tensor<2xi64> -> tensor<4xf32>, tensor<4xi1>
  return %y, %mask : tensor<4xf32>, tensor<4xi1>
}
