/* rung's library routines for kernel.call: sorting (included by rung_runtime.h). */
#ifndef RUNG_SORT_H
#define RUNG_SORT_H
#endif
