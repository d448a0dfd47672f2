//===- DTGOps.td - all dtg ops, one file per family ------------*- tablegen -*-===//

#ifndef DTC_DIALECTS_DTG_IR_DTGOPS_TD
#define DTC_DIALECTS_DTG_IR_DTGOPS_TD

include "dialects/DTG/IR/DTGBase.td"
include "dialects/DTG/IR/DTGElementwise.td"
include "dialects/DTG/IR/DTGShape.td"
include "dialects/DTG/IR/DTGNN.td"
include "dialects/DTG/IR/DTGReduction.td"
include "dialects/DTG/IR/DTGGradShape.td"
include "dialects/DTG/IR/DTGGradNN.td"
include "dialects/DTG/IR/DTGTraining.td"
include "dialects/DTG/IR/DTGFusion.td"

#endif // DTC_DIALECTS_DTG_IR_DTGOPS_TD
