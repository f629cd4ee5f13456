// SPDX-License-Identifier: MIT
/* The platform's fingerprint and the known-bad combinations (platform.h). */
#include "probe/platform.h"
#include "util/fileio.h"
#include "util/paths.h"
#include "util/text.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *const field_names[SP_PF_N] = { "kernel", "driver", "cuda",  "dgx_os",
						  "os",     "bios",   "board", "product" };

const char *sp_pfield_name(enum sp_pfield f)
{
	return (unsigned)f < SP_PF_N ? field_names[f] : "?";
}

/* Versions that are known to fail on this platform, each with its public
 * report (docs/platform.md). Data: a new row is a new warning. */
static const struct sp_known_bad known_bad[] = {
	{ SP_PF_KERNEL, "6.17.0-1008",
	  "kernel 6.17.0-1008 (DGX OS 7.4.0) has documented aarch64 kernel panics on DGX Spark (EFI pstore "
	  "records), after which the driver fails at every boot: update the kernel",
	  "https://forums.developer.nvidia.com/t/root-cause-analysis-dgx-spark-driver-failure-kernel-6-17-0-1008-nvidia-"
	  "aarch64-panics-cause-doe-mailbox-failure-pstore-evidence/366026" },
	{ SP_PF_KERNEL, "7.0.0-1019",
	  "kernel 7.0.0-1019 reports CmaTotal: 0 kB and breaks RDMA memory registration (NCCL over RoCE: "
	  "ibv_reg_mr_iova2 ENOMEM); 6.17.0-1032 works",
	  "https://forums.developer.nvidia.com/t/dgx-spark-regression-kernel-7-0-0-1019-nvidia-causes-nccl-roce-ibv-reg-mr-"
	  "iova2-enomem-6-17-0-1032-works/383023" },
	{ SP_PF_DRIVER, "590",
	  "driver 590.x: a CUDA-graph regression is reported on DGX Spark; the 580 branch is the one to stay on",
	  "https://conselara.dev/notes/dgx-spark-gb10-hardware-reference/" },
};

static bool version_match(const char *v, const char *pat)
{
	size_t n = strlen(pat);
	return strncmp(v, pat, n) == 0 && !isdigit((unsigned char)v[n]);
}

void sp_platform_match(struct sp_platform *p)
{
	p->nwarn = 0;
	for (size_t i = 0; i < sizeof known_bad / sizeof known_bad[0] && p->nwarn < SP_PLATFORM_MAX_WARN; i++) {
		const struct sp_ptext *t = &p->f[known_bad[i].field];
		if (t->why == SP_OK && version_match(t->v, known_bad[i].version))
			p->warn[p->nwarn++] = &known_bad[i];
	}
}

static void put(struct sp_ptext *t, const char *v, size_t len, const char *src)
{
	while (len > 0 && isspace((unsigned char)v[len - 1]))
		len--;
	while (len > 0 && isspace((unsigned char)*v)) {
		v++;
		len--;
	}
	if (len >= sizeof t->v)
		len = sizeof t->v - 1;
	memcpy(t->v, v, len);
	t->v[len] = 0;
	sp_text_clean(t->v);
	t->src = src;
	t->why = t->v[0] ? SP_OK : SP_MALFORMED;
}

static enum sp_why why_of(int r)
{
	return r == -EACCES || r == -EPERM ? SP_NOACCESS : SP_MISSING;
}

static const char *token_after(const char *buf, const char *lead, size_t *len)
{
	const char *p = strstr(buf, lead);
	if (!p)
		return NULL;
	p += strlen(lead);
	while (*p == ' ')
		p++;
	size_t n = 0;
	while (p[n] && !isspace((unsigned char)p[n]))
		n++;
	*len = n;
	return n ? p : NULL;
}

int sp_parse_proc_version(const char *buf, char *out, size_t n)
{
	size_t l;
	const char *p = token_after(buf, "Linux version ", &l);
	if (!p || l >= n)
		return -1;
	memcpy(out, p, l);
	out[l] = 0;
	return 0;
}

/* the first word of the NVRM line that reads as a version: digits, dots, digits */
int sp_parse_nvidia_version(const char *buf, char *out, size_t n)
{
	const char *line = strstr(buf, "NVRM version:");
	if (!line)
		return -1;
	const char *end = strchr(line, '\n');
	if (!end)
		end = line + strlen(line);
	for (const char *p = line; p < end;) {
		while (p < end && isspace((unsigned char)*p))
			p++;
		const char *w = p;
		while (p < end && !isspace((unsigned char)*p))
			p++;
		size_t l = (size_t)(p - w);
		bool digits = l > 2 && isdigit((unsigned char)w[0]) && isdigit((unsigned char)w[l - 1]);
		int dots = 0;
		for (size_t i = 0; digits && i < l; i++) {
			if (w[i] == '.')
				dots++;
			else if (!isdigit((unsigned char)w[i]))
				digits = false;
		}
		if (digits && dots >= 1 && l < n) {
			memcpy(out, w, l);
			out[l] = 0;
			return 0;
		}
	}
	return -1;
}

int sp_parse_release_key(const char *buf, const char *key, bool last, char *out, size_t n)
{
	size_t kl = strlen(key);
	int found = -1;
	for (const char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		if (strncmp(line, key, kl) != 0 || line[kl] != '=')
			continue;
		const char *v = line + kl + 1;
		const char *e = strchr(v, '\n');
		size_t l = e ? (size_t)(e - v) : strlen(v);
		if (l >= 2 && (v[0] == '"' || v[0] == '\'') && v[l - 1] == v[0]) {
			v++;
			l -= 2;
		}
		if (l == 0)
			continue;
		if (l >= n)
			l = n - 1;
		memcpy(out, v, l);
		out[l] = 0;
		found = 0;
		if (!last)
			break;
	}
	return found;
}

/* DMI's placeholders are no value */
static bool placeholder(const char *v)
{
	static const char *const ph[] = { "To be filled by O.E.M.", "Default string", "Not Specified", "None",
					  "System Product Name", "0", NULL };
	for (int i = 0; ph[i]; i++)
		if (strcasecmp(v, ph[i]) == 0)
			return true;
	return false;
}

static void read_dmi(struct sp_ptext *t, const char *name, const char *src)
{
	char path[600], buf[256];
	if (sp_sys_path(path, sizeof path, "class/dmi/id/%s", name) < 0) {
		t->why = SP_MISSING;
		return;
	}
	size_t len = 0;
	int r = sp_read_file(path, buf, sizeof buf, &len);
	if (r < 0) {
		t->why = why_of(r);
		t->src = src;
		return;
	}
	put(t, buf, len, src);
	if (t->why == SP_OK && placeholder(t->v)) {
		t->v[0] = 0;
		t->why = SP_MALFORMED;
	}
}

void sp_platform_read(struct sp_platform *p, const struct sp_sample *s)
{
	memset(p, 0, sizeof *p);
	for (int i = 0; i < SP_PF_N; i++)
		p->f[i].why = SP_MISSING;
	char path[600], buf[4096], v[96];
	size_t len = 0;
	int r;

	/* kernel: /proc/version, else /proc/sys/kernel/osrelease */
	struct sp_ptext *t = &p->f[SP_PF_KERNEL];
	if (sp_proc_path(path, sizeof path, "version") == 0 && sp_read_file(path, buf, sizeof buf, &len) == 0) {
		if (sp_parse_proc_version(buf, v, sizeof v) == 0)
			put(t, v, strlen(v), "/proc/version");
		else
			t->why = SP_MALFORMED;
	} else if (sp_proc_path(path, sizeof path, "sys/kernel/osrelease") == 0 &&
		   sp_read_file(path, buf, sizeof buf, &len) == 0) {
		put(t, buf, len, "/proc/sys/kernel/osrelease");
	}

	/* the NVIDIA driver: the loaded kernel module's word first, then NVML's */
	t = &p->f[SP_PF_DRIVER];
	enum sp_why mod_why = SP_MISSING;
	if (sp_proc_path(path, sizeof path, "driver/nvidia/version") == 0 &&
	    sp_read_file(path, buf, sizeof buf, &len) == 0) {
		if (sp_parse_nvidia_version(buf, v, sizeof v) == 0)
			put(t, v, strlen(v), "/proc/driver/nvidia/version");
		else
			mod_why = SP_MALFORMED;
	}
	if (t->why != SP_OK) {
		if (s && s->gpu_driver_why == SP_OK && s->gpu_driver[0])
			put(t, s->gpu_driver, strlen(s->gpu_driver), "NVML");
		else
			t->why = s && s->gpu_driver_why != SP_MISSING ? s->gpu_driver_why : mod_why;
	}

	/* CUDA: only the driver knows which version it supports */
	t = &p->f[SP_PF_CUDA];
	if (s && s->cuda_driver_why == SP_OK) {
		snprintf(v, sizeof v, "%d.%d", s->cuda_driver / 1000, s->cuda_driver % 1000 / 10);
		put(t, v, strlen(v), "NVML");
	} else {
		t->why = s ? s->cuda_driver_why : SP_MISSING;
	}

	/* DGX OS: the last OTA's version, else the build's */
	t = &p->f[SP_PF_DGX_OS];
	r = sp_etc_path(path, sizeof path, "dgx-release") == 0 ? sp_read_file(path, buf, sizeof buf, &len) : -ENAMETOOLONG;
	if (r == 0) {
		if (sp_parse_release_key(buf, "DGX_OTA_VERSION", true, v, sizeof v) == 0 ||
		    sp_parse_release_key(buf, "DGX_SWBUILD_VERSION", false, v, sizeof v) == 0)
			put(t, v, strlen(v), "/etc/dgx-release");
		else
			t->why = SP_MALFORMED;
	} else {
		t->why = why_of(r); /* missing: not DGX OS */
	}
	t = &p->f[SP_PF_OS];
	r = sp_etc_path(path, sizeof path, "os-release") == 0 ? sp_read_file(path, buf, sizeof buf, &len) : -ENAMETOOLONG;
	if (r == 0) {
		if (sp_parse_release_key(buf, "PRETTY_NAME", false, v, sizeof v) == 0)
			put(t, v, strlen(v), "/etc/os-release");
		else
			t->why = SP_MALFORMED;
	} else {
		t->why = why_of(r);
	}

	read_dmi(&p->f[SP_PF_BIOS], "bios_version", "/sys/class/dmi/id/bios_version");
	read_dmi(&p->f[SP_PF_BOARD], "board_name", "/sys/class/dmi/id/board_name");
	read_dmi(&p->f[SP_PF_PRODUCT], "product_name", "/sys/class/dmi/id/product_name");
	sp_platform_match(p);
}
