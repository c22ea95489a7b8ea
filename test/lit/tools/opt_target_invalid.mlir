// RUN: not opt %s -t wat 2>&1 | filecheck %s --check-prefix=WAT
// RUN: not opt %s -t wgsl 2>&1 | filecheck %s --check-prefix=WGSL

// Only targets that print something are offered: wat and wgsl printed nothing
// and exited 0, so they are refused like any unknown target.

func.func @f() {
  func.return
}

// WAT:  opt: error: argument -t/--target: invalid choice: 'wat' (choose from mlir, riscv-asm, x86-asm, arm-asm, llvm, c)
// WGSL: opt: error: argument -t/--target: invalid choice: 'wgsl'
