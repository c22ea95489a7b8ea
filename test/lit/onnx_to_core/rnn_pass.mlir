// The recurrent handlers of convert-onnx-to-core on hand-written onnx-dialect IR:
// RNN, GRU, LSTM and Scan each become a core.loop over time. The input
// projection X·Wᵀ + biases is one matmul before the loop; each iteration
// gathers its time step and applies the cell; core.loop stacks the new hidden
// state into Y. These handlers need static shapes (the loop's stacked outputs
// are sized here), so there is no dynamic-shape case.
// RUN: opt %s -p convert-onnx-to-core | filecheck %s

// RNN (forward, tanh): Hₜ = tanh(Xₜ·Wᵀ + Hₜ₋₁·Rᵀ + Wb + Rb).
// CHECK-LABEL: func.func @rnn(
// CHECK:         %[[H0:.*]] = core.constant() {value = dense<0.000000e+00> : tensor<2x5xf32>}
// CHECK-NEXT:    %[[W:.*]] = core.reshape(%w) : (tensor<1x5x4xf32>) -> tensor<5x4xf32>
// CHECK-NEXT:    %[[R:.*]] = core.reshape(%r) : (tensor<1x5x5xf32>) -> tensor<5x5xf32>
// CHECK-NEXT:    %[[WB2:.*]] = core.slice(%b) {start = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x10xf32>) -> tensor<1x5xf32>
// CHECK-NEXT:    %[[WB:.*]] = core.reshape(%[[WB2]]) : (tensor<1x5xf32>) -> tensor<5xf32>
// CHECK-NEXT:    %[[RB2:.*]] = core.slice(%b) {start = array<i64: 0, 5>, stride = array<i64: 1, 1>} : (tensor<1x10xf32>) -> tensor<1x5xf32>
// CHECK-NEXT:    %[[RB:.*]] = core.reshape(%[[RB2]]) : (tensor<1x5xf32>) -> tensor<5xf32>
// CHECK-NEXT:    %[[WT:.*]] = core.transpose(%[[W]]) {perm = array<i64: 1, 0>} : (tensor<5x4xf32>) -> tensor<4x5xf32>
// CHECK-NEXT:    %[[RT:.*]] = core.transpose(%[[R]]) {perm = array<i64: 1, 0>} : (tensor<5x5xf32>) -> tensor<5x5xf32>
// CHECK-NEXT:    %[[BIAS:.*]] = core.binary add(%[[WB]], %[[RB]]) : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
// CHECK-NEXT:    %[[XF:.*]] = core.reshape(%x) : (tensor<3x2x4xf32>) -> tensor<6x4xf32>
// CHECK-NEXT:    %[[XW:.*]] = core.matmul(%[[XF]], %[[WT]]) {acc = f32} : (tensor<6x4xf32>, tensor<4x5xf32>) -> tensor<6x5xf32>
// CHECK-NEXT:    %[[XW3:.*]] = core.reshape(%[[XW]]) : (tensor<6x5xf32>) -> tensor<3x2x5xf32>
// CHECK-NEXT:    %[[BB:.*]] = core.broadcast(%[[BIAS]]) {dims = array<i64: 2>} : (tensor<5xf32>) -> tensor<3x2x5xf32>
// CHECK-NEXT:    %[[PROJ:.*]] = core.binary add(%[[XW3]], %[[BB]]) : (tensor<3x2x5xf32>, tensor<3x2x5xf32>) -> tensor<3x2x5xf32>
// CHECK-NEXT:    %[[T:.*]] = core.constant() {value = dense<3> : tensor<i64>}
// CHECK-NEXT:    %[[TRUE:.*]] = core.constant() {value = dense<true> : tensor<i1>}
// CHECK-NEXT:    %[[HN:.*]], %[[Y:.*]] = core.loop(%[[T]], %[[TRUE]], %[[H0]]) : (tensor<i64>, tensor<i1>, tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<3x2x5xf32>) body {
// CHECK-NEXT:    ^{{.*}}(%[[I:.*]]: tensor<i64>, %[[C:.*]]: tensor<i1>, %[[H:.*]]: tensor<2x5xf32>):
// CHECK-NEXT:      %[[XT:.*]] = core.gather(%[[PROJ]], %[[I]]) {axis = 0 : i64} : (tensor<3x2x5xf32>, tensor<i64>) -> tensor<2x5xf32>
// CHECK-NEXT:      %[[HR:.*]] = core.matmul(%[[H]], %[[RT]]) {acc = f32} : (tensor<2x5xf32>, tensor<5x5xf32>) -> tensor<2x5xf32>
// CHECK-NEXT:      %[[PRE:.*]] = core.binary add(%[[XT]], %[[HR]])
// CHECK-NEXT:      %[[HNEW:.*]] = core.unary tanh(%[[PRE]]) : (tensor<2x5xf32>) -> tensor<2x5xf32>
// CHECK-NEXT:      core.yield(%[[C]], %[[HNEW]], %[[HNEW]]) : (tensor<i1>, tensor<2x5xf32>, tensor<2x5xf32>) -> ()
// CHECK-NEXT:    }
// CHECK-NEXT:    %y = core.reshape(%[[Y]]) : (tensor<3x2x5xf32>) -> tensor<3x1x2x5xf32>
// CHECK-NEXT:    %h = core.reshape(%[[HN]]) : (tensor<2x5xf32>) -> tensor<1x2x5xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y, %h
func.func @rnn(%x: tensor<3x2x4xf32>, %w: tensor<1x5x4xf32>, %r: tensor<1x5x5xf32>, %b: tensor<1x10xf32>) -> (tensor<3x1x2x5xf32>, tensor<1x2x5xf32>) {
  %y, %h = onnx.RNN(%x, %w, %r, %b) {hidden_size = 5 : i64} : (tensor<3x2x4xf32>, tensor<1x5x4xf32>, tensor<1x5x5xf32>, tensor<1x10xf32>) -> (tensor<3x1x2x5xf32>, tensor<1x2x5xf32>)
  func.return %y, %h : tensor<3x1x2x5xf32>, tensor<1x2x5xf32>
}

// GRU, reverse, linear_before_reset: step i reads time 2 - i; gates z, r, h are
// columns 0-4, 5-9, 10-14; r scales Hₜ₋₁·Rhᵀ + Rbh, so Rbh stays in the loop
// (its slot in the folded bias is zero); Hₜ = (1 - z)·h + z·Hₜ₋₁.
// CHECK-LABEL: func.func @gru_reverse(
// CHECK:         %[[RT:.*]] = core.transpose(%{{.*}}) {perm = array<i64: 1, 0>} : (tensor<15x5xf32>) -> tensor<5x15xf32>
// CHECK:         %[[RBH:.*]] = core.slice(%{{.*}}) {start = array<i64: 10>, stride = array<i64: 1>} : (tensor<15xf32>) -> tensor<5xf32>
// CHECK-NEXT:    %[[Z5:.*]] = core.constant() {value = dense<0.000000e+00> : tensor<5xf32>}
// CHECK-NEXT:    %[[FOLD:.*]] = core.concat(%{{.*}}, %[[Z5]]) {axis = 0 : i64} : (tensor<10xf32>, tensor<5xf32>) -> tensor<15xf32>
// CHECK:         %[[PROJ:.*]] = core.binary add(%{{.*}}, %{{.*}}) : (tensor<3x2x15xf32>, tensor<3x2x15xf32>) -> tensor<3x2x15xf32>
// CHECK-NEXT:    %[[RZR:.*]] = core.slice(%[[RT]]) {start = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<5x15xf32>) -> tensor<5x10xf32>
// CHECK-NEXT:    %[[RH:.*]] = core.slice(%[[RT]]) {start = array<i64: 0, 10>, stride = array<i64: 1, 1>} : (tensor<5x15xf32>) -> tensor<5x5xf32>
// CHECK-NEXT:    %[[RBHB:.*]] = core.broadcast(%[[RBH]]) {dims = array<i64: 1>} : (tensor<5xf32>) -> tensor<2x5xf32>
// CHECK:         %[[HN:.*]], %[[Y:.*]] = core.loop(
// CHECK-NEXT:    ^{{.*}}(%[[I:.*]]: tensor<i64>, %[[C:.*]]: tensor<i1>, %[[H:.*]]: tensor<2x5xf32>):
// CHECK-NEXT:      %[[LAST:.*]] = core.constant() {value = dense<2> : tensor<i64>}
// CHECK-NEXT:      %[[T:.*]] = core.binary sub(%[[LAST]], %[[I]]) : (tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK-NEXT:      %[[XT:.*]] = core.gather(%[[PROJ]], %[[T]]) {axis = 0 : i64} : (tensor<3x2x15xf32>, tensor<i64>) -> tensor<2x15xf32>
// CHECK-NEXT:      %[[HR:.*]] = core.matmul(%[[H]], %[[RZR]]) {acc = f32} : (tensor<2x5xf32>, tensor<5x10xf32>) -> tensor<2x10xf32>
// CHECK-NEXT:      %[[XZ:.*]] = core.slice(%[[XT]]) {start = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<2x15xf32>) -> tensor<2x5xf32>
// CHECK-NEXT:      %[[HZ:.*]] = core.slice(%[[HR]]) {start = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<2x10xf32>) -> tensor<2x5xf32>
// CHECK-NEXT:      %[[ZS:.*]] = core.binary add(%[[XZ]], %[[HZ]])
// CHECK-NEXT:      %[[Z:.*]] = core.unary sigmoid(%[[ZS]])
// CHECK-NEXT:      %[[XR:.*]] = core.slice(%[[XT]]) {start = array<i64: 0, 5>, stride = array<i64: 1, 1>} : (tensor<2x15xf32>) -> tensor<2x5xf32>
// CHECK-NEXT:      %[[HRR:.*]] = core.slice(%[[HR]]) {start = array<i64: 0, 5>, stride = array<i64: 1, 1>} : (tensor<2x10xf32>) -> tensor<2x5xf32>
// CHECK-NEXT:      %[[RS:.*]] = core.binary add(%[[XR]], %[[HRR]])
// CHECK-NEXT:      %[[RG:.*]] = core.unary sigmoid(%[[RS]])
// CHECK-NEXT:      %[[HRH:.*]] = core.matmul(%[[H]], %[[RH]]) {acc = f32} : (tensor<2x5xf32>, tensor<5x5xf32>) -> tensor<2x5xf32>
// CHECK-NEXT:      %[[INNER:.*]] = core.binary add(%[[HRH]], %[[RBHB]])
// CHECK-NEXT:      %[[REC:.*]] = core.binary mul(%[[RG]], %[[INNER]])
// CHECK-NEXT:      %[[XH:.*]] = core.slice(%[[XT]]) {start = array<i64: 0, 10>, stride = array<i64: 1, 1>} : (tensor<2x15xf32>) -> tensor<2x5xf32>
// CHECK-NEXT:      %[[HS:.*]] = core.binary add(%[[XH]], %[[REC]])
// CHECK-NEXT:      %[[CAND:.*]] = core.unary tanh(%[[HS]])
// CHECK-NEXT:      %[[ONE:.*]] = core.constant() {value = dense<1.000000e+00> : tensor<f32>}
// CHECK-NEXT:      %[[ONEB:.*]] = core.broadcast(%[[ONE]])
// CHECK-NEXT:      %[[OMZ:.*]] = core.binary sub(%[[ONEB]], %[[Z]])
// CHECK-NEXT:      %[[A:.*]] = core.binary mul(%[[OMZ]], %[[CAND]])
// CHECK-NEXT:      %[[B:.*]] = core.binary mul(%[[Z]], %[[H]])
// CHECK-NEXT:      %[[HNEW:.*]] = core.binary add(%[[A]], %[[B]])
// CHECK-NEXT:      core.yield(%[[C]], %[[HNEW]], %[[HNEW]])
// CHECK-NEXT:    }
// CHECK:         %h = core.reshape(%[[HN]]) : (tensor<2x5xf32>) -> tensor<1x2x5xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %h
func.func @gru_reverse(%x: tensor<3x2x4xf32>, %w: tensor<1x15x4xf32>, %r: tensor<1x15x5xf32>) -> tensor<1x2x5xf32> {
  %h = onnx.GRU(%x, %w, %r) {hidden_size = 5 : i64, direction = "reverse", linear_before_reset = 1 : i64} : (tensor<3x2x4xf32>, tensor<1x15x4xf32>, tensor<1x15x5xf32>) -> (none, tensor<1x2x5xf32>)
  func.return %h : tensor<1x2x5xf32>
}

// LSTM, only Y_c wanted: gates i, o, f, c are columns 0, 5, 10, 15 of the
// pre-activation; Cₜ = f·Cₜ₋₁ + i·tanh(c), Hₜ = o·tanh(Cₜ); both states carried.
// CHECK-LABEL: func.func @lstm(
// CHECK:         %[[HN:.*]], %[[CN:.*]], %[[Y:.*]] = core.loop(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (tensor<i64>, tensor<i1>, tensor<2x5xf32>, tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xf32>, tensor<3x2x5xf32>) body {
// CHECK-NEXT:    ^{{.*}}(%[[I:.*]]: tensor<i64>, %[[C:.*]]: tensor<i1>, %[[H:.*]]: tensor<2x5xf32>, %[[CELL:.*]]: tensor<2x5xf32>):
// CHECK-NEXT:      %[[XT:.*]] = core.gather(%{{.*}}, %[[I]]) {axis = 0 : i64} : (tensor<3x2x20xf32>, tensor<i64>) -> tensor<2x20xf32>
// CHECK-NEXT:      %[[HR:.*]] = core.matmul(%[[H]], %{{.*}}) {acc = f32} : (tensor<2x5xf32>, tensor<5x20xf32>) -> tensor<2x20xf32>
// CHECK-NEXT:      %[[PRE:.*]] = core.binary add(%[[XT]], %[[HR]])
// CHECK-NEXT:      %[[PI:.*]] = core.slice(%[[PRE]]) {start = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<2x20xf32>) -> tensor<2x5xf32>
// CHECK-NEXT:      %[[IG:.*]] = core.unary sigmoid(%[[PI]])
// CHECK-NEXT:      %[[PF:.*]] = core.slice(%[[PRE]]) {start = array<i64: 0, 10>, stride = array<i64: 1, 1>} : (tensor<2x20xf32>) -> tensor<2x5xf32>
// CHECK-NEXT:      %[[FG:.*]] = core.unary sigmoid(%[[PF]])
// CHECK-NEXT:      %[[PC:.*]] = core.slice(%[[PRE]]) {start = array<i64: 0, 15>, stride = array<i64: 1, 1>} : (tensor<2x20xf32>) -> tensor<2x5xf32>
// CHECK-NEXT:      %[[CG:.*]] = core.unary tanh(%[[PC]])
// CHECK-NEXT:      %[[FC:.*]] = core.binary mul(%[[FG]], %[[CELL]])
// CHECK-NEXT:      %[[IC:.*]] = core.binary mul(%[[IG]], %[[CG]])
// CHECK-NEXT:      %[[CNEW:.*]] = core.binary add(%[[FC]], %[[IC]])
// CHECK-NEXT:      %[[PO:.*]] = core.slice(%[[PRE]]) {start = array<i64: 0, 5>, stride = array<i64: 1, 1>} : (tensor<2x20xf32>) -> tensor<2x5xf32>
// CHECK-NEXT:      %[[OG:.*]] = core.unary sigmoid(%[[PO]])
// CHECK-NEXT:      %[[TC:.*]] = core.unary tanh(%[[CNEW]])
// CHECK-NEXT:      %[[HNEW:.*]] = core.binary mul(%[[OG]], %[[TC]])
// CHECK-NEXT:      core.yield(%[[C]], %[[HNEW]], %[[CNEW]], %[[HNEW]]) : (tensor<i1>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>) -> ()
// CHECK-NEXT:    }
// CHECK-NEXT:    %c = core.reshape(%[[CN]]) : (tensor<2x5xf32>) -> tensor<1x2x5xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %c
func.func @lstm(%x: tensor<3x2x4xf32>, %w: tensor<1x20x4xf32>, %r: tensor<1x20x5xf32>) -> tensor<1x2x5xf32> {
  %c = onnx.LSTM(%x, %w, %r) {hidden_size = 5 : i64} : (tensor<3x2x4xf32>, tensor<1x20x4xf32>, tensor<1x20x5xf32>) -> (none, none, tensor<1x2x5xf32>)
  func.return %c : tensor<1x2x5xf32>
}

// Scan: the body's state argument becomes the carried value; its scan-input
// argument a gather of the input at the step (from the end, the input being
// reversed); the scan output stacks in iteration order.
// CHECK-LABEL: func.func @scan(
// CHECK:         %[[T:.*]] = core.constant() {value = dense<3> : tensor<i64>}
// CHECK-NEXT:    %[[TRUE:.*]] = core.constant() {value = dense<true> : tensor<i1>}
// CHECK-NEXT:    %sum, %ys = core.loop(%[[T]], %[[TRUE]], %init) : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) body {
// CHECK-NEXT:    ^{{.*}}(%[[I:.*]]: tensor<i64>, %[[C:.*]]: tensor<i1>, %acc: tensor<2xf32>):
// CHECK-NEXT:      %[[LAST:.*]] = core.constant() {value = dense<2> : tensor<i64>}
// CHECK-NEXT:      %[[J:.*]] = core.binary sub(%[[LAST]], %[[I]])
// CHECK-NEXT:      %x = core.gather(%xs, %[[J]]) {axis = 0 : i64} : (tensor<3x2xf32>, tensor<i64>) -> tensor<2xf32>
// CHECK-NEXT:      %next = core.binary add(%acc, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:      core.yield(%[[C]], %next, %next) : (tensor<i1>, tensor<2xf32>, tensor<2xf32>) -> ()
// CHECK-NEXT:    }
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %sum, %ys
func.func @scan(%init: tensor<2xf32>, %xs: tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) {
  %sum, %ys = onnx.Scan(%init, %xs) {num_scan_inputs = 1 : i64, scan_input_directions = array<i64: 1>} : (tensor<2xf32>, tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) body {
  ^bb0(%acc: tensor<2xf32>, %x: tensor<2xf32>):
    %next = onnx.Add(%acc, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    onnx.Yield %next, %next : tensor<2xf32>, tensor<2xf32>
  }
  func.return %sum, %ys : tensor<2xf32>, tensor<3x2xf32>
}
