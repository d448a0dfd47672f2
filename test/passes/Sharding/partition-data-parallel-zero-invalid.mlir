// RUN: dtc-opt %s -verify-diagnostics --dtc-partition-data-parallel="dp=2 zero=3"

// Tests that ZeRO stage 3 is refused by name.

// expected-error @+1 {{ZeRO stage 3 is not supported (0, 1 and 2 are; stage 3 shards the parameters themselves and comes later)}}
module {
}
