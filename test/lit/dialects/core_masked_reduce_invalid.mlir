// core.masked_reduce prints and parses in the uniform core syntax, and its
// verifier names what is wrong: the mask must be a 1-D tensor of i1 with one
// flag per input dim, and each result dim is 1 or the input's.
// RUN: opt %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: %y = core.masked_reduce max(%x, %m) : (tensor<?x3xf32>, tensor<2xi1>) -> tensor<?x?xf32>
func.func @ok(%x: tensor<?x3xf32>, %m: tensor<2xi1>) -> tensor<?x?xf32> {
  %y = core.masked_reduce max(%x, %m) : (tensor<?x3xf32>, tensor<2xi1>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}

// -----

// CHECK: core.masked_reduce: mask must be a 1-D tensor of i1
func.func @mask_type(%x: tensor<2x3xf32>, %m: tensor<2xi64>) -> tensor<?x?xf32> {
  %y = core.masked_reduce sum(%x, %m) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}

// -----

// CHECK: core.masked_reduce: input tensor<2x3xf32>, mask tensor<3xi1> and result tensor<?x?xf32> must have one rank
func.func @mask_rank(%x: tensor<2x3xf32>, %m: tensor<3xi1>) -> tensor<?x?xf32> {
  %y = core.masked_reduce sum(%x, %m) : (tensor<2x3xf32>, tensor<3xi1>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}

// -----

// CHECK: core.masked_reduce: result dim 1 (2) is neither 1 nor the input's (3)
func.func @result_dim(%x: tensor<2x3xf32>, %m: tensor<2xi1>) -> tensor<?x2xf32> {
  %y = core.masked_reduce sum(%x, %m) : (tensor<2x3xf32>, tensor<2xi1>) -> tensor<?x2xf32>
  func.return %y : tensor<?x2xf32>
}
