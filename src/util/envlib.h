/* SPDX-License-Identifier: MIT */
/* A shared library named by the environment (SPARKOPS_NVML_LIB,
 * SPARKOPS_MHD_LIB), checked before dlopen: as root, only a file that root
 * owns, in folders root owns that nobody else may write, is loaded (its
 * constructor would run as uid 0). */
#ifndef SP_UTIL_ENVLIB_H
#define SP_UTIL_ENVLIB_H
#include <stdbool.h>
#include <stddef.h>

/* Whether VAR's value PATH may be dlopen'ed by this process. Not root: yes,
 * always. Root: a bare name (the loader's own search) yes; a path only when
 * its resolved file is a regular file owned by root and not group- or
 * world-writable, its folder likewise, and every folder above owned by root
 * and not writable by others unless sticky. On yes, OUT (N bytes) holds the
 * name to load (the resolved path, so a link swapped later is not
 * followed); on no, one warning line has been printed naming VAR and why,
 * and the caller falls back to its default library. A path where nothing
 * exists is passed on as it is (dlopen fails and says so). */
bool sp_env_lib_ok(const char *var, const char *path, char *out, size_t n);

/* The decision alone, for tests: EUID as given; WHY (WN bytes) says why not. */
bool sp_env_lib_check(unsigned euid, const char *path, char *out, size_t n, char *why, size_t wn);
#endif
