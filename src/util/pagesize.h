/* SPDX-License-Identifier: MIT */
/* The page size, from the system: 4 KiB on the DGX Spark's stock kernel,
 * 16 or 64 KiB on some Arm kernels. Never a 4096 literal. */
#ifndef SP_PAGESIZE_H
#define SP_PAGESIZE_H
#include <stdint.h>

/* sysconf(_SC_PAGESIZE), read once. With the roots pointed at a fixture
 * (util/paths.h), SPARKOPS_PAGE_SIZE=BYTES (a power of two, 1 KiB..1 MiB)
 * stands in for it, so a fixture's page counts can be read as another
 * machine's. Allocates nothing. */
uint64_t sp_page_size(void);
/* Tests: use BYTES from now on; 0 goes back to the above. */
void sp_page_size_set(uint64_t bytes);
#endif
