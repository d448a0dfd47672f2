// RUN: dtc-opt %s -split-input-file -canonicalize | FileCheck %s

// Tests that adding a zero splat on either side folds to the other operand.
// CHECK-LABEL: func.func @add_zero
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>, %[[I:.+]]: tensor<4xi32>)
// CHECK-NOT: dtg.add
// CHECK: return %[[X]], %[[X]], %[[I]]
func.func @add_zero(%x: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xi32>) {
  %zero = dtg.constant dense<0.0> : tensor<f32>
  %izero = dtg.constant dense<0> : tensor<4xi32>
  %0 = dtg.add %x, %zero : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %1 = dtg.add %zero, %x : tensor<f32>, tensor<4xf32> -> tensor<4xf32>
  %2 = dtg.add %i, %izero : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xi32>
}

// -----

// Tests that adding a zero that broadcasts the other operand to a larger
// shape, or a nonzero or non-splat constant, does not fold (the constant of
// a commutative op moves to the right).
// CHECK-LABEL: func.func @add_no_fold
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK: %[[Z:.+]] = dtg.constant dense<0.000000e+00> : tensor<2x4xf32>
// CHECK: %[[ONE:.+]] = dtg.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[NS:.+]] = dtg.constant dense<[0.000000e+00, 1.000000e+00, 0.000000e+00, 0.000000e+00]> : tensor<4xf32>
// CHECK: %[[A:.+]] = dtg.add %[[X]], %[[Z]] : tensor<4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
// CHECK: %[[B:.+]] = dtg.add %[[X]], %[[ONE]]
// CHECK: %[[C:.+]] = dtg.add %[[X]], %[[NS]]
// CHECK: return %[[A]], %[[B]], %[[C]]
func.func @add_no_fold(%x: tensor<4xf32>) -> (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %zero = dtg.constant dense<0.0> : tensor<2x4xf32>
  %one = dtg.constant dense<1.0> : tensor<f32>
  %mixed = dtg.constant dense<[0.0, 1.0, 0.0, 0.0]> : tensor<4xf32>
  %0 = dtg.add %x, %zero : tensor<4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %1 = dtg.add %x, %one : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %2 = dtg.add %mixed, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %0, %1, %2 : tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests that multiplying by a one splat on either side folds to the other
// operand.
// CHECK-LABEL: func.func @mul_one
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>, %[[I:.+]]: tensor<3xi64>)
// CHECK-NOT: dtg.mul
// CHECK: return %[[X]], %[[X]], %[[I]]
func.func @mul_one(%x: tensor<2x3xf32>, %i: tensor<3xi64>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xi64>) {
  %one = dtg.constant dense<1.0> : tensor<1x3xf32>
  %ione = dtg.constant dense<1> : tensor<i64>
  %0 = dtg.mul %x, %one : tensor<2x3xf32>, tensor<1x3xf32> -> tensor<2x3xf32>
  %1 = dtg.mul %one, %x : tensor<1x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %2 = dtg.mul %ione, %i : tensor<i64>, tensor<3xi64> -> tensor<3xi64>
  return %0, %1, %2 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xi64>
}

// -----

// Tests that multiplying by a one that broadcasts, or by another constant,
// does not fold.
// CHECK-LABEL: func.func @mul_no_fold
// CHECK-SAME: (%[[X:.+]]: tensor<3xf32>)
// CHECK: %[[ONE:.+]] = dtg.constant dense<1.000000e+00> : tensor<2x3xf32>
// CHECK: %[[TWO:.+]] = dtg.constant dense<2.000000e+00> : tensor<f32>
// CHECK: %[[A:.+]] = dtg.mul %[[X]], %[[ONE]] : tensor<3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK: %[[B:.+]] = dtg.mul %[[X]], %[[TWO]]
// CHECK: return %[[A]], %[[B]]
func.func @mul_no_fold(%x: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>) {
  %one = dtg.constant dense<1.0> : tensor<2x3xf32>
  %two = dtg.constant dense<2.0> : tensor<f32>
  %0 = dtg.mul %one, %x : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %1 = dtg.mul %x, %two : tensor<3xf32>, tensor<f32> -> tensor<3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<3xf32>
}

// -----

// Tests that a cast to the operand's own type folds away and a real cast
// stays.
// CHECK-LABEL: func.func @cast
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK: %[[C:.+]] = dtg.cast %[[X]] : tensor<4xf32> -> tensor<4xf16>
// CHECK: return %[[X]], %[[C]]
func.func @cast(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf16>) {
  %0 = dtg.cast %x : tensor<4xf32> -> tensor<4xf32>
  %1 = dtg.cast %x : tensor<4xf32> -> tensor<4xf16>
  return %0, %1 : tensor<4xf32>, tensor<4xf16>
}

// -----

// Tests that an unused constant is erased and a used one is kept as is.
// CHECK-LABEL: func.func @constant
// CHECK-NEXT: %[[C:.+]] = dtg.constant dense<[1, 2]> : tensor<2xi64>
// CHECK-NEXT: return %[[C]]
func.func @constant() -> tensor<2xi64> {
  %unused = dtg.constant dense<3.0> : tensor<f32>
  %0 = dtg.constant dense<[1, 2]> : tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// Tests that a reshape to the operand's own type folds away.
// CHECK-LABEL: func.func @reshape_identity
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NOT: dtg.reshape
// CHECK: return %[[X]]
func.func @reshape_identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dtg.reshape %x : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that two reshapes compose into one.
// CHECK-LABEL: func.func @reshape_compose
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NEXT: %[[R:.+]] = dtg.reshape %[[X]] : tensor<2x3xf32> -> tensor<3x2xf32>
// CHECK-NEXT: return %[[R]]
func.func @reshape_compose(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = dtg.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
  %1 = dtg.reshape %0 : tensor<6xf32> -> tensor<3x2xf32>
  return %1 : tensor<3x2xf32>
}

// -----

// Tests that two reshapes back to the original shape vanish, and that the
// inner one stays while it has another user.
// CHECK-LABEL: func.func @reshape_round_trip
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NEXT: %[[R:.+]] = dtg.reshape %[[X]] : tensor<2x3xf32> -> tensor<6xf32>
// CHECK-NEXT: return %[[X]], %[[R]]
func.func @reshape_round_trip(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<6xf32>) {
  %0 = dtg.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
  %1 = dtg.reshape %0 : tensor<6xf32> -> tensor<2x3xf32>
  return %1, %0 : tensor<2x3xf32>, tensor<6xf32>
}

// -----

// Tests that an identity transpose folds away and a real one stays.
// CHECK-LABEL: func.func @transpose_identity
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK: %[[T:.+]] = dtg.transpose %[[X]] {perm = array<i64: 1, 0>}
// CHECK: return %[[X]], %[[T]]
func.func @transpose_identity(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3x2xf32>) {
  %0 = dtg.transpose %x {perm = array<i64: 0, 1>} : tensor<2x3xf32> -> tensor<2x3xf32>
  %1 = dtg.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<3x2xf32>
}

// -----

// Tests that two transposes compose into one with the composed permutation:
// result dim i of the outer is operand dim inner.perm[outer.perm[i]].
// CHECK-LABEL: func.func @transpose_compose
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[T:.+]] = dtg.transpose %[[X]] {perm = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
// CHECK-NEXT: return %[[T]]
func.func @transpose_compose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = dtg.transpose %x {perm = array<i64: 1, 2, 0>} : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %1 = dtg.transpose %0 {perm = array<i64: 1, 2, 0>} : tensor<3x4x2xf32> -> tensor<4x2x3xf32>
  return %1 : tensor<4x2x3xf32>
}

// -----

// Tests that a transpose followed by its inverse vanishes.
// CHECK-LABEL: func.func @transpose_inverse
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK-NEXT: return %[[X]]
func.func @transpose_inverse(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = dtg.transpose %x {perm = array<i64: 1, 2, 0>} : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %1 = dtg.transpose %0 {perm = array<i64: 2, 0, 1>} : tensor<3x4x2xf32> -> tensor<2x3x4xf32>
  return %1 : tensor<2x3x4xf32>
}

// -----

// Tests that the transpose of a product over its last two dimensions becomes
// the product of the transposed operands in swapped order, (A B)^T = B^T A^T,
// the product's dtg markers kept on the new ops, the product where it was
// (not at the transpose, which can come much later); a transpose whose inner operand is itself a
// transpose composes away (the weight gradient of x W^T: (X^T G)^T = G^T X).
// CHECK-LABEL: func.func @transpose_of_matmul
// CHECK-SAME: (%[[X:.+]]: tensor<6x4xf32>, %[[G:.+]]: tensor<6x5xf32>)
// CHECK-NEXT: %[[GT:.+]] = dtg.transpose %[[G]] {dtg.backward, perm = array<i64: 1, 0>} : tensor<6x5xf32> -> tensor<5x6xf32>
// CHECK-NEXT: %[[P:.+]] = dtg.matmul %[[GT]], %[[X]] {dtg.backward} : tensor<5x6xf32>, tensor<6x4xf32> -> tensor<5x4xf32>
// CHECK-NEXT: %[[N:.+]] = dtg.neg %[[X]]
// CHECK-NEXT: return %[[P]], %[[N]]
func.func @transpose_of_matmul(%x: tensor<6x4xf32>, %g: tensor<6x5xf32>) -> (tensor<5x4xf32>, tensor<6x4xf32>) {
  %0 = dtg.transpose %x {perm = array<i64: 1, 0>} : tensor<6x4xf32> -> tensor<4x6xf32>
  %1 = dtg.matmul %0, %g {dtg.backward} : tensor<4x6xf32>, tensor<6x5xf32> -> tensor<4x5xf32>
  %n = dtg.neg %x : tensor<6x4xf32>
  %2 = dtg.transpose %1 {perm = array<i64: 1, 0>} : tensor<4x5xf32> -> tensor<5x4xf32>
  return %2, %n : tensor<5x4xf32>, tensor<6x4xf32>
}

// -----

// Tests that batch dimensions stay where they are and still broadcast: only
// the last two swap ([3,2,4] x [4,5] -> [3,5,2] as [5,4] x [3,4,2]).
// CHECK-LABEL: func.func @transpose_of_batched_matmul
// CHECK-SAME: (%[[A:.+]]: tensor<3x2x4xf32>, %[[B:.+]]: tensor<4x5xf32>)
// CHECK-DAG: %[[BT:.+]] = dtg.transpose %[[B]] {perm = array<i64: 1, 0>} : tensor<4x5xf32> -> tensor<5x4xf32>
// CHECK-DAG: %[[AT:.+]] = dtg.transpose %[[A]] {perm = array<i64: 0, 2, 1>} : tensor<3x2x4xf32> -> tensor<3x4x2xf32>
// CHECK: %[[P:.+]] = dtg.matmul %[[BT]], %[[AT]] : tensor<5x4xf32>, tensor<3x4x2xf32> -> tensor<3x5x2xf32>
// CHECK-NEXT: return %[[P]]
func.func @transpose_of_batched_matmul(%a: tensor<3x2x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x5x2xf32> {
  %0 = dtg.matmul %a, %b : tensor<3x2x4xf32>, tensor<4x5xf32> -> tensor<3x2x5xf32>
  %1 = dtg.transpose %0 {perm = array<i64: 0, 2, 1>} : tensor<3x2x5xf32> -> tensor<3x5x2xf32>
  return %1 : tensor<3x5x2xf32>
}

// -----

// Tests that a product with another user, or a transpose that moves a batch
// dimension, stays as it is (rewriting would compute the product twice, or
// is not a transposed product).
// CHECK-LABEL: func.func @transpose_of_matmul_kept
// CHECK: %[[P:.+]] = dtg.matmul %arg0, %arg1
// CHECK: %[[T:.+]] = dtg.transpose %[[P]] {perm = array<i64: 1, 0>}
// CHECK: %[[Q:.+]] = dtg.matmul %arg2, %arg3
// CHECK: %[[U:.+]] = dtg.transpose %[[Q]] {perm = array<i64: 1, 0, 2>}
// CHECK: return %[[P]], %[[T]], %[[U]]
func.func @transpose_of_matmul_kept(%a: tensor<2x4xf32>, %b: tensor<4x3xf32>, %c: tensor<5x2x4xf32>, %d: tensor<5x4x3xf32>) -> (tensor<2x3xf32>, tensor<3x2xf32>, tensor<2x5x3xf32>) {
  %0 = dtg.matmul %a, %b : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %1 = dtg.transpose %0 {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  %2 = dtg.matmul %c, %d : tensor<5x2x4xf32>, tensor<5x4x3xf32> -> tensor<5x2x3xf32>
  %3 = dtg.transpose %2 {perm = array<i64: 1, 0, 2>} : tensor<5x2x3xf32> -> tensor<2x5x3xf32>
  return %0, %1, %3 : tensor<2x3xf32>, tensor<3x2xf32>, tensor<2x5x3xf32>
}

// -----

// Tests that a concat of one operand folds to it and one of two stays.
// CHECK-LABEL: func.func @concat
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK: %[[C:.+]] = dtg.concat %[[X]], %[[X]]
// CHECK: return %[[X]], %[[C]]
func.func @concat(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<4x3xf32>) {
  %0 = dtg.concat %x {axis = 1 : i64} : tensor<2x3xf32> -> tensor<2x3xf32>
  %1 = dtg.concat %x, %x {axis = 0 : i64} : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<4x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<4x3xf32>
}

// -----

// Tests that a slice taking the whole operand with unit steps folds away.
// CHECK-LABEL: func.func @slice_whole
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NOT: dtg.slice
// CHECK: return %[[X]]
func.func @slice_whole(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dtg.slice %x {starts = array<i64: 0, 0>, limits = array<i64: 2, 3>, steps = array<i64: 1, 1>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that a reversing slice of the operand's shape, and a slice that takes
// part of the operand, stay.
// CHECK-LABEL: func.func @slice_no_fold
// CHECK-SAME: (%[[X:.+]]: tensor<3xf32>)
// CHECK: %[[R:.+]] = dtg.slice %[[X]] {limits = array<i64: -1>, starts = array<i64: 2>, steps = array<i64: -1>}
// CHECK: %[[P:.+]] = dtg.slice %[[X]] {limits = array<i64: 3>, starts = array<i64: 1>, steps = array<i64: 1>}
// CHECK: return %[[R]], %[[P]]
func.func @slice_no_fold(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<2xf32>) {
  %0 = dtg.slice %x {starts = array<i64: 2>, limits = array<i64: -1>, steps = array<i64: -1>} : tensor<3xf32> -> tensor<3xf32>
  %1 = dtg.slice %x {starts = array<i64: 1>, limits = array<i64: 3>, steps = array<i64: 1>} : tensor<3xf32> -> tensor<2xf32>
  return %0, %1 : tensor<3xf32>, tensor<2xf32>
}

// -----

// Tests that a broadcast to the operand's own type folds away and a real one
// stays.
// CHECK-LABEL: func.func @broadcast
// CHECK-SAME: (%[[X:.+]]: tensor<3xf32>)
// CHECK: %[[B:.+]] = dtg.broadcast %[[X]] : tensor<3xf32> -> tensor<2x3xf32>
// CHECK: return %[[X]], %[[B]]
func.func @broadcast(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<2x3xf32>) {
  %0 = dtg.broadcast %x : tensor<3xf32> -> tensor<3xf32>
  %1 = dtg.broadcast %x : tensor<3xf32> -> tensor<2x3xf32>
  return %0, %1 : tensor<3xf32>, tensor<2x3xf32>
}
