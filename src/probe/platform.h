/* SPDX-License-Identifier: MIT */
/* The platform's fingerprint: kernel, NVIDIA driver, CUDA driver version,
 * DGX OS release, the distribution, BIOS/firmware, board and product, each
 * with its source or the reason it is unknown; and the known-bad
 * combinations it matches (a table of data: field, version, what goes
 * wrong, the public source; docs/platform.md). */
#ifndef SP_PLATFORM_H
#define SP_PLATFORM_H
#include "probe/sample.h"

struct sp_ptext {
	char v[96];          /* the value, printable ASCII; "" when unknown */
	enum sp_why why;     /* SP_OK, or why not */
	const char *src;     /* where it came from ("/proc/version", "NVML") */
};

enum sp_pfield {
	SP_PF_KERNEL,
	SP_PF_DRIVER,
	SP_PF_CUDA,
	SP_PF_DGX_OS,
	SP_PF_OS,
	SP_PF_BIOS,
	SP_PF_BOARD,
	SP_PF_PRODUCT,
	SP_PF_N
};
/* "kernel", "driver", "cuda", "dgx_os", "os", "bios", "board", "product" */
const char *sp_pfield_name(enum sp_pfield f);

struct sp_known_bad {
	enum sp_pfield field;
	const char *version;  /* matches a value equal to it or starting with it and then a non-digit */
	const char *warning;  /* what goes wrong, one sentence */
	const char *source;   /* the public report */
};

#define SP_PLATFORM_MAX_WARN 8
struct sp_platform {
	struct sp_ptext f[SP_PF_N];
	int nwarn;
	const struct sp_known_bad *warn[SP_PLATFORM_MAX_WARN];
};

/* Read the fingerprint: files through the roots (procfs, sysfs, etc), the
 * driver and CUDA versions from NVML in s (NULL: not asked). Then match the
 * known-bad table. No heap. */
void sp_platform_read(struct sp_platform *p, const struct sp_sample *s);

/* The match alone (pure): fills p->warn from p->f. */
void sp_platform_match(struct sp_platform *p);

/* Parsers over buffers. 0, or -1 when the text holds no such value. */
int sp_parse_proc_version(const char *buf, char *out, size_t n);     /* "Linux version X ..." */
int sp_parse_nvidia_version(const char *buf, char *out, size_t n);   /* "NVRM version: ... 580.95.05 ..." */
int sp_parse_release_key(const char *buf, const char *key, bool last, char *out, size_t n); /* KEY="v" */
#endif
