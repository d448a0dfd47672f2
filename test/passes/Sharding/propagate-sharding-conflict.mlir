// RUN: dtc-opt %s -split-input-file -verify-diagnostics --dtc-propagate-sharding

// Tests that two constraints splitting one factor two ways are reported at
// the op where they meet, naming both origins; the first operand's split
// wins (same priority: both constraints).

module {
  dist.mesh @mesh = <["pp" = 1, "dp" = 2, "tp" = 2]>
  func.func @conflict(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %a = dist.sharding_constraint %x <@mesh, [{"tp"}, {}]> : tensor<4x4xf32> loc("ca")
    %b = dist.sharding_constraint %y <@mesh, [{"dp"}, {}]> : tensor<4x4xf32> loc("cb")
    // expected-warning @+1 {{sharding conflict: operand #0 dimension 0 split over {"tp"} (from a constraint at 'ca') and operand #1 dimension 0 split over {"dp"} (from a constraint at 'cb'); the first wins, the other is resharded here}}
    %c = dtg.add %a, %b : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    return %c : tensor<4x4xf32>
  }
}

// -----

// expected-error @+1 {{sharding propagation needs exactly one dist.mesh, the module has 0}}
module {
}
