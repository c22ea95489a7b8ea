/* rung's prebuilt runtime object: the runtime's `RUNG_API` entry points (the GEMM),
 * compiled once per machine, compiler and flags and linked into every model library that
 * rung builds (with RUNG_PREBUILT_RUNTIME), so that no model's build compiles them again.
 * A model's file built alone, as its first lines say, does not need it.
 */
#define RUNG_RUNTIME_OBJECT 1
#include "rung_runtime.h"
