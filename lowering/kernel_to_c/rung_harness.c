/* rung's test harness: runs a compiled model as a program of its own, from raw files.
 *
 * A library loaded into Python cannot be built with AddressSanitizer (its runtime must
 * come first in the process), so sanitizer builds of a model are linked with this
 * `main` instead and run as a separate process (rung.runtime.native.run_in_harness).
 *
 * Build, with the model's files (`<prefix>.c`, `<prefix>.h`, the runtime headers) here:
 *
 *   cc -std=gnu11 -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
 *      -fno-sanitize-recover=all -Ulinux -Uunix -DRUNG_PREFIX=<prefix> -include <prefix>.h \
 *      <prefix>.c rung_harness.c -o <prefix>_harness -lm
 *
 * Run:
 *
 *   <prefix>_harness [-w WEIGHTS] [-n REPEAT] [-o OUTDIR] INPUT...
 *
 * Each INPUT is DTYPE:DIMS:PATH: the ONNX dtype code, the dims joined by 'x' (empty for
 * a scalar) and a file of exactly that many raw, row-major elements, e.g.
 * `1:2x3:x.bin`. Inputs and the arena are allocated at their exact sizes, so that
 * AddressSanitizer sees any access past them. The model runs REPEAT times (default 1),
 * the arena filled with a different byte pattern before each run; every run must give
 * the same outputs byte for byte, which catches reads of uninitialized scratch memory.
 * Outputs go to OUTDIR (default `.`) as `output_<i>.bin` plus `manifest.txt`, one line
 * per output: `<index> <dtype> <rank> <dims...> <file>`.
 *
 * Exit codes: 0 success; 2 bad arguments or files; 3 the model reported an error (its
 * message on stderr); 4 the runs gave different outputs. A sanitizer finding aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef RUNG_PREFIX
#error "build with -DRUNG_PREFIX=<prefix> -include <prefix>.h"
#endif

#define RUNG_CAT2(a, b) a##b
#define RUNG_CAT(a, b) RUNG_CAT2(a, b)
#define RUNG_FN(name) RUNG_CAT(RUNG_PREFIX, name)

enum { EXIT_USAGE = 2, EXIT_MODEL = 3, EXIT_UNSTABLE = 4 };

static size_t element_size(int32_t dtype) {
  switch (dtype) {
    case 2: case 3: case 9: return 1;                 /* uint8, int8, bool */
    case 17: case 18: case 19: case 20: case 23: case 24: case 27: case 28:
      return 1;                                       /* 8/6/4-bit floats, one per byte */
    case 21: case 22: case 25: case 26: return 1;     /* (u)int4, (u)int2, one per byte */
    case 4: case 5: case 10: case 16: return 2;       /* (u)int16, float16, bfloat16 */
    case 1: case 6: case 12: return 4;                /* float, int32, uint32 */
    case 7: case 11: case 13: return 8;               /* int64, double, uint64 */
    default: return 0;
  }
}

static int fail(const char *what, const char *detail) {
  fprintf(stderr, "rung_harness: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
  return EXIT_USAGE;
}

static size_t tensor_bytes(const rung_tensor *t) {
  size_t count = 1;
  for (int32_t d = 0; d < t->rank; ++d) count *= (size_t)t->shape[d];
  return count * element_size(t->dtype);
}

/* DTYPE:DIMS:PATH into `t` (data read from PATH, malloc'ed at its exact size). */
static int read_input(char *spec, rung_tensor *t) {
  char *colon1 = strchr(spec, ':');
  char *colon2 = colon1 ? strchr(colon1 + 1, ':') : 0;
  if (!colon2) return fail("an input must look like DTYPE:DIMS:PATH, got", spec);
  *colon1 = *colon2 = 0;
  const char *path = colon2 + 1;
  memset(t, 0, sizeof *t);
  t->dtype = (int32_t)strtol(spec, 0, 10);
  if (element_size(t->dtype) == 0) return fail("unsupported dtype code", spec);
  for (char *p = colon1 + 1; *p;) {
    if (t->rank == RUNG_MAX_RANK) return fail("too many dims for", path);
    char *end;
    long long n = strtoll(p, &end, 10);
    if (end == p || n < 0) return fail("bad dims for", path);
    t->shape[t->rank++] = n;
    p = *end == 'x' ? end + 1 : end;
    if (*end && *end != 'x') return fail("bad dims for", path);
  }
  size_t bytes = tensor_bytes(t);
  FILE *f = fopen(path, "rb");
  if (!f) return fail("cannot open", path);
  t->data = malloc(bytes);
  if (!t->data && bytes) {
    fclose(f);
    return fail("out of memory reading", path);
  }
  size_t got = bytes ? fread(t->data, 1, bytes, f) : 0;
  int extra = fgetc(f) != EOF;
  fclose(f);
  if (got != bytes || extra) return fail("the file size does not match its DTYPE:DIMS", path);
  return 0;
}

static int write_outputs(const char *dir, const rung_tensor *outs, int n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/manifest.txt", dir);
  FILE *manifest = fopen(path, "w");
  if (!manifest) return fail("cannot write", path);
  for (int i = 0; i < n; ++i) {
    char name[64];
    snprintf(name, sizeof name, "output_%d.bin", i);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    size_t bytes = tensor_bytes(&outs[i]);
    if (!f || (bytes && fwrite(outs[i].data, 1, bytes, f) != bytes)) {
      if (f) fclose(f);
      fclose(manifest);
      return fail("cannot write", path);
    }
    fclose(f);
    fprintf(manifest, "%d %d %d", i, (int)outs[i].dtype, (int)outs[i].rank);
    for (int32_t d = 0; d < outs[i].rank; ++d)
      fprintf(manifest, " %lld", (long long)outs[i].shape[d]);
    fprintf(manifest, " %s\n", name);
  }
  return fclose(manifest) == 0 ? 0 : fail("cannot write", "manifest.txt");
}

static int same_outputs(const rung_tensor *a, const rung_tensor *b, int n) {
  for (int i = 0; i < n; ++i) {
    if (a[i].dtype != b[i].dtype || a[i].rank != b[i].rank) return 0;
    for (int32_t d = 0; d < a[i].rank; ++d)
      if (a[i].shape[d] != b[i].shape[d]) return 0;
    size_t bytes = tensor_bytes(&a[i]);
    if (bytes && memcmp(a[i].data, b[i].data, bytes) != 0) return 0;
  }
  return 1;
}

static void free_outputs(rung_tensor *outs, int n) {
  for (int i = 0; i < n; ++i) {
    RUNG_FN(_free)(outs[i].data);
    outs[i].data = 0;
  }
}

int main(int argc, char **argv) {
  const char *weights = 0, *outdir = ".";
  int repeat = 1, first = 1;
  while (first < argc && argv[first][0] == '-' && argv[first][1] && !argv[first][2]) {
    char flag = argv[first][1];
    if (first + 1 >= argc) return fail("missing the value of an option", argv[first]);
    if (flag == 'w') weights = argv[first + 1];
    else if (flag == 'o') outdir = argv[first + 1];
    else if (flag == 'n') repeat = atoi(argv[first + 1]);
    else return fail("unknown option", argv[first]);
    first += 2;
  }
  const int n_in = RUNG_FN(_num_inputs)(), n_out = RUNG_FN(_num_outputs)();
  if (argc - first != n_in) {
    fprintf(stderr, "rung_harness: the model takes %d inputs, got %d\n", n_in, argc - first);
    return EXIT_USAGE;
  }
  if (repeat < 1) repeat = 1;

  int rc = 0;
  rung_tensor *ins = calloc((size_t)(n_in ? n_in : 1), sizeof *ins);
  rung_tensor *outs = calloc((size_t)(n_out ? n_out : 1), sizeof *outs);
  rung_tensor *kept = calloc((size_t)(n_out ? n_out : 1), sizeof *kept);
  size_t arena_bytes = RUNG_FN(_arena_bytes)();
  void *arena = 0;
  if (!ins || !outs || !kept || posix_memalign(&arena, 64, arena_bytes ? arena_bytes : 1)) {
    rc = fail("out of memory", 0);
    goto cleanup;
  }
  for (int i = 0; i < n_in && !rc; ++i) rc = read_input(argv[first + i], &ins[i]);
  if (rc) goto cleanup;
  if (RUNG_FN(_init)(weights) != 0) {
    fprintf(stderr, "%s\n", RUNG_FN(_last_error)());
    rc = EXIT_MODEL;
    goto cleanup;
  }
  for (int r = 0; r < repeat && !rc; ++r) {
    memset(arena, r % 2 ? 0x00 : 0xff, arena_bytes);  /* 0xff: NaN in every float type */
    if (RUNG_FN(_run)(ins, outs, arena) != 0) {
      fprintf(stderr, "%s\n", RUNG_FN(_last_error)());
      rc = EXIT_MODEL;
    } else if (r == 0) {
      memcpy(kept, outs, (size_t)n_out * sizeof *outs);
      memset(outs, 0, (size_t)n_out * sizeof *outs);
    } else {
      if (!same_outputs(kept, outs, n_out)) {
        fprintf(stderr, "rung_harness: run %d gave different outputs than run 1 (reads of "
                "uninitialized memory, or state kept between runs)\n", r + 1);
        rc = EXIT_UNSTABLE;
      }
      free_outputs(outs, n_out);
    }
  }
  if (!rc) rc = write_outputs(outdir, kept, n_out);
  RUNG_FN(_release)();

cleanup:
  if (kept) free_outputs(kept, n_out);
  if (outs) free_outputs(outs, n_out);
  if (ins)
    for (int i = 0; i < n_in; ++i) free(ins[i].data);
  free(ins);
  free(outs);
  free(kept);
  free(arena);
  return rc;
}
