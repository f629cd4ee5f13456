/* SPDX-License-Identifier: MIT */
/* Counting allocations in a test binary: n_alloc counts every malloc, calloc
 * and realloc of the process (libc and loaded libraries included). Plain
 * builds interpose glibc's malloc; under ASan its allocator hooks count.
 * Call install_counter() once before reading n_alloc. Include it in one
 * translation unit only (it defines malloc). */
#ifndef SP_TEST_ALLOC_COUNT_H
#define SP_TEST_ALLOC_COUNT_H
#include <stdatomic.h>
#include <stddef.h>

static atomic_ulong n_alloc;

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

#ifdef UNDER_ASAN
int __sanitizer_install_malloc_and_free_hooks(void (*m)(const volatile void *, size_t),
					      void (*f)(const volatile void *));
static void on_malloc(const volatile void *p, size_t n)
{
	(void)p;
	(void)n;
	atomic_fetch_add(&n_alloc, 1);
}
static void on_free(const volatile void *p)
{
	(void)p;
}
static void install_counter(void)
{
	__sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
}
#else
/* glibc lets a program replace malloc: every caller, libc and the loaded
 * libraries included, comes here. */
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
void *malloc(size_t n);
void *calloc(size_t a, size_t b);
void *realloc(void *p, size_t n);
void *malloc(size_t n)
{
	atomic_fetch_add(&n_alloc, 1);
	return __libc_malloc(n);
}
void *calloc(size_t a, size_t b)
{
	atomic_fetch_add(&n_alloc, 1);
	return __libc_calloc(a, b);
}
void *realloc(void *p, size_t n)
{
	atomic_fetch_add(&n_alloc, 1);
	return __libc_realloc(p, n);
}
static void install_counter(void)
{
}
#endif
#endif
