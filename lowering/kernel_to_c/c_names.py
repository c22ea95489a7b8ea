"""Identifiers a generated C name must not take.

Generated names come from the model's value names (`gamma`, `y0`, `index`,
`exp`), and the generated file includes the C library's headers. A weight
named `gamma` redeclares libm's `gamma`; a local named `expf` hides the
function a later loop calls. So a name that the included headers declare,
or that C reserves, gets a suffix.
"""

from __future__ import annotations

import keyword

_MATH_FUNCTIONS = """
acos acosh asin asinh atan atan2 atanh cbrt ceil copysign cos cosh erf erfc exp exp2
expm1 fabs fdim floor fma fmax fmin fmod frexp hypot ilogb ldexp lgamma llrint llround
log log10 log1p log2 logb lrint lround modf nan nearbyint nextafter nexttoward pow
remainder remquo rint round scalbln scalbn sin sinh sqrt tan tanh tgamma trunc
gamma drem finite significand scalb exp10 pow10 sincos lgamma_r gamma_r j0 j1 jn y0 y1 yn
isinf isnan
"""
"""libm's functions (C99 and GNU); each also has `f` and `l` variants."""

_LIBRARY_WORDS = """
isnan isinf isfinite isnormal signbit fpclassify isgreater isgreaterequal isless
islessequal islessgreater isunordered signgam HUGE_VAL HUGE_VALF HUGE_VALL NAN INFINITY
FP_NAN FP_INFINITE FP_ZERO FP_SUBNORMAL FP_NORMAL M_E M_LOG2E M_LOG10E M_LN2 M_LN10 M_PI
M_PI_2 M_PI_4 M_1_PI M_2_PI M_2_SQRTPI M_SQRT2 M_SQRT1_2 float_t double_t
abs labs llabs div ldiv lldiv malloc calloc realloc free aligned_alloc posix_memalign
exit abort atexit atoi atol atoll atof strtod strtof strtold strtol strtoll strtoul
strtoull rand srand random srandom qsort bsearch getenv setenv unsetenv system mkstemp
memcpy memmove memset memcmp memchr strcpy strncpy strcat strncat strcmp strncmp strlen
strchr strrchr strstr strdup strndup strtok strerror index rindex bzero bcmp ffs
printf fprintf sprintf snprintf vprintf vfprintf vsnprintf scanf fscanf sscanf puts fputs
putchar getchar fputc fgetc putc getc fgets fopen fclose fread fwrite fseek ftell rewind
fflush feof ferror perror remove rename tmpfile fileno stdin stdout stderr FILE EOF
getline
read write close open openat creat lseek access unlink link symlink sleep usleep dup dup2
pipe fork getpid sync truncate ftruncate chdir rmdir environ sysconf alarm pause nice
brk sbrk crypt swab optarg optind opterr optopt fcntl
mmap munmap mprotect msync madvise stat fstat lstat mkdir chmod fchmod umask
size_t ssize_t ptrdiff_t intptr_t uintptr_t intmax_t uintmax_t off_t mode_t
int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t NULL
offsetof alignof alignas static_assert noreturn complex imaginary
"""
"""Other names of the included headers (stdlib, string, stdio, unistd, fcntl, mman, stat)."""

_C_KEYWORDS = """
auto break case char const continue default do double else enum extern float for goto if
inline int long register restrict return short signed sizeof static struct switch typedef
union unsigned void volatile while bool true false _Bool _Complex _Imaginary _Alignas
_Alignof _Atomic _Generic _Noreturn _Static_assert _Thread_local asm typeof
"""

_RUN_LOCALS = "arena inputs outputs heap heap_io rc done main errno"
"""The names of the generated `_run`'s own locals (and of its outlined parts')."""


def _words(text: str) -> set[str]:
    return set(text.split())


RESERVED: frozenset[str] = frozenset(
    {f"{name}{suffix}" for name in _words(_MATH_FUNCTIONS) for suffix in ("", "f", "l")}
    | _words(_LIBRARY_WORDS)
    | _words(_C_KEYWORDS)
    | _words(_RUN_LOCALS)
)
"""Every identifier listed above."""


def is_reserved(name: str) -> bool:
    """Whether a generated name would clash with C, the headers the file includes, or rung.

    Beyond the listed words: POSIX reserves `*_t`, C reserves a leading
    underscore, OpenMP owns `omp_`, and the runtime owns `rung_`.
    """
    return (
        name in RESERVED
        or keyword.iskeyword(name)
        or name.startswith(("_", "omp_", "rung_", "RUNG_"))
        or name.endswith("_t")
    )


__all__ = ["RESERVED", "is_reserved"]
