// RUN: opt %s --load-plugin %S/Inputs/toy_plugin.py --toy-cleanup | filecheck %s
// RUN: opt %s --load-plugin %S/Inputs/toy_plugin.py -p toy-cleanup | filecheck %s
// RUN: opt %s --load-plugin %S/Inputs/toy_plugin.py -p 'toy-cleanup,dce' | filecheck %s
// RUN: opt --load-plugin %S/Inputs/toy_plugin.py --help | filecheck %s --check-prefix=HELP
// RUN: opt --load-plugin %S/Inputs/toy_plugin.py --list-passes | filecheck %s --check-prefix=LIST

// A named pipeline from a plugin ("toy-addi-to-subi,canonicalize") runs
// through its own flag, or by name in -p, alone or with other passes; it
// shows in --help and --list-passes.

func.func @f(%i: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %s = arith.addi %c1, %c2 : i32
  %t = arith.addi %i, %s : i32
  func.return %t : i32
}

// CHECK-LABEL: func.func @f
// CHECK-NEXT:    %[[C:.*]] = arith.constant -1 : i32
// CHECK-NEXT:    %[[T:.*]] = arith.subi %i, %[[C]] : i32
// CHECK-NEXT:    func.return %[[T]] : i32

// HELP: pipelines:
// HELP: --toy-cleanup turn additions into subtractions, then fold

// LIST:      Pipelines:
// LIST:        toy-cleanup {{.*}}turn additions into subtractions, then fold [toy-addi-to-subi,canonicalize]
// LIST:      Passes:
// LIST:        toy-addi-to-subi {{ +}}A pass made of one pattern (plugin '{{.*}}toy_plugin.py')
