//===- DTGGradNN.td - gradient primitives without a forward twin -*- tablegen -*-===//

#ifndef DTC_DIALECTS_DTG_IR_DTGGRADNN_TD
#define DTC_DIALECTS_DTG_IR_DTGGRADNN_TD

include "dialects/DTG/IR/DTGBase.td"

#endif // DTC_DIALECTS_DTG_IR_DTGGRADNN_TD
