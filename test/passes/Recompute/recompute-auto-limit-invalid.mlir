// RUN: dtc-opt %s -split-input-file -verify-diagnostics --dtc-recompute=mode=auto

// Tests that auto recompute without a memory limit is refused.

// expected-error @+1 {{recompute mode 'auto' needs a memory limit}}
module {
}
