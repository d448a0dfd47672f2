// RUN: dtc-opt %s -split-input-file -verify-diagnostics --dtc-recompute=mode=everything

// Tests that an unknown mode is refused.

// expected-error @+1 {{unknown recompute mode 'everything': expected none, full, selective or auto}}
module {
}
