/* SPDX-License-Identifier: MIT */
/* A sort that never allocates: glibc's qsort mallocs a scratch buffer once
 * the array passes 1 KiB (64 processes or 96 hwmon channels do), and the
 * sampling loop must not. Insertion sort, stable; for the small fixed-size
 * arrays of a sample (n <= a few hundred); elements up to 1 KiB move with
 * memmove, not byte by byte. */
#ifndef SP_SORT_H
#define SP_SORT_H
#include <stddef.h>

void sp_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
#endif
