// An as_strided that reads past its input is refused, naming the positions,
// the op and the node.
// RUN: not opt %s -p convert-torch-to-core 2>&1 | filecheck %s
// CHECK: failed to lower 'torch.aten.as_strided' (aten::as_strided) at node 'view_3': as_strided reads positions 4..9 of a tensor of 6
func.func @outside(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  %y = torch.aten.as_strided(%x) {size = [2, 2], stride = [1, 4], storage_offset = 4} : (tensor<2x3xf32>) -> tensor<2x2xf32> loc("view_3")
  func.return %y : tensor<2x2xf32>
}
