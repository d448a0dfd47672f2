// RUN: dtc-opt %s --pass-pipeline='builtin.module(func.func(dtc-fuse))' | FileCheck %s

// Tests that dtc-fuse never moves work past a call: gradient accumulation
// adds each micro-step's gradients into a running sum right after the call
// that made them, and fusing the chain of sums into one kernel after the
// last call would keep every micro-step's gradients alive at once (the
// step's memory growing with the number of micro-batches). Sums with no
// call between them still fuse.

func.func private @micro(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = dtg.exp %x : tensor<4xf32>
  return %y : tensor<4xf32>
}

// CHECK-LABEL: func.func @accumulate(
// CHECK: %[[G1:.+]] = call @micro
// CHECK: %[[G2:.+]] = call @micro
// CHECK: %[[S1:.+]] = dtg.add %[[G1]], %[[G2]]
// CHECK: %[[G3:.+]] = call @micro
// CHECK: %[[S2:.+]] = dtg.add %[[S1]], %[[G3]]
// CHECK: %[[G4:.+]] = call @micro
// CHECK: %[[S3:.+]] = dtg.fusion "loop"(%[[S2]], %[[G4]], %{{.+}})
// CHECK: dtg.add
// CHECK: dtg.mul
func.func @accumulate(%x: tensor<4xf32>, %scale: tensor<4xf32>) -> tensor<4xf32> {
  %g1 = call @micro(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %g2 = call @micro(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %s1 = dtg.add %g1, %g2 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %g3 = call @micro(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %s2 = dtg.add %s1, %g3 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %g4 = call @micro(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %s3 = dtg.add %s2, %g4 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %m = dtg.mul %s3, %scale : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %m : tensor<4xf32>
}
