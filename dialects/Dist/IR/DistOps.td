//===- DistOps.td - dist ops ------------------------------------*- tablegen -*-===//

#ifndef DTC_DIALECTS_DIST_IR_DISTOPS_TD
#define DTC_DIALECTS_DIST_IR_DISTOPS_TD

include "dialects/Dist/IR/DistBase.td"

#endif // DTC_DIALECTS_DIST_IR_DISTOPS_TD
