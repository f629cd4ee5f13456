// SPDX-License-Identifier: MIT
#include "util/sort.h"

#include <string.h>

/* Insertion sort that moves whole elements: find where element i belongs
 * (walking back over the larger ones, so equal elements keep their order),
 * then one memmove of the block and one memcpy of the element. The arrays of
 * a sample are small and arrive nearly sorted (directory order), so this is
 * close to one compare per element. */
void sp_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	_Alignas(16) unsigned char tmp[1024];
	unsigned char *p = base;
	if (size > sizeof tmp) {
		/* larger elements than any sample array has: the byte swap */
		for (size_t i = 1; i < n; i++)
			for (size_t j = i; j > 0 && cmp(p + (j - 1) * size, p + j * size) > 0; j--)
				for (size_t k = 0; k < size; k++) {
					unsigned char t = p[(j - 1) * size + k];
					p[(j - 1) * size + k] = p[j * size + k];
					p[j * size + k] = t;
				}
		return;
	}
	for (size_t i = 1; i < n; i++) {
		unsigned char *e = p + i * size;
		if (cmp(e - size, e) <= 0)
			continue;
		size_t j = i - 1;
		while (j > 0 && cmp(p + (j - 1) * size, e) > 0)
			j--;
		memcpy(tmp, e, size);
		memmove(p + (j + 1) * size, p + j * size, (i - j) * size);
		memcpy(p + j * size, tmp, size);
	}
}
