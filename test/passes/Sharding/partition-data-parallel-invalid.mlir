// RUN: dtc-opt %s -split-input-file -verify-diagnostics --dtc-partition-data-parallel="dp=2"

// Tests that partitioning needs a training step.

// expected-error @+1 {{data parallelism partitions a training step: build one first (dtc-build-train-step)}}
module {
  func.func @main() {
    return
  }
}
