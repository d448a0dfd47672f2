// RUN: dtc-opt %s -verify-diagnostics --dtc-partition-data-parallel="dp=2 zero=4"

// Tests that a ZeRO stage other than 0 to 3 is refused.

// expected-error @+1 {{ZeRO stage 4 does not exist (0, 1, 2 or 3)}}
module {
}
