// SPDX-License-Identifier: MIT
/* The screen of `sparkops top` as a model (out/topview.c), without a
 * terminal: what each line says for a hand-made GB10 sample, the
 * sparklines, the sorts, narrow and tiny screens, ASCII, a stale GPU. (The
 * running job's status file: tests/unit/test_jobstat.c.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "out/topview.h"
#include "watch/jobstat.h"

#define GIB (1024ULL * 1024 * 1024)

static struct sp_sample *gb10(void)
{
	struct sp_sample *s = calloc(1, sizeof *s);
	struct sp_meminfo *m = &s->mem;
	m->why = SP_OK;
	m->v[SP_MI_TOTAL] = 120 * GIB;
	m->v[SP_MI_FREE] = 10 * GIB;
	m->v[SP_MI_BUFFERS] = 0;
	m->v[SP_MI_CACHED] = 40 * GIB;
	m->v[SP_MI_SHMEM] = 2 * GIB;
	m->v[SP_MI_MAPPED] = 1 * GIB;
	m->have = ~0ULL;
	s->cg.limit.why = s->cg.usage.why = s->cg.file.why = SP_MISSING; /* no cgroup limit */
	sp_budget_compute(&s->budget, m, &s->cg, 4 * GIB);
	s->gpu_status = SP_OK;
	s->ngpu = 1;
	struct sp_gpu *g = &s->gpus[0];
	snprintf(g->name, sizeof g->name, "NVIDIA GB10");
	g->temp_c = (struct sp_u64){ 84, SP_OK };
	g->power_mw = (struct sp_u64){ 98600, SP_OK };
	g->power_limit_mw.why = SP_NOT_SUPPORTED;
	g->sm_clock_mhz = (struct sp_u64){ 2405, SP_OK };
	g->sm_clock_max_mhz = (struct sp_u64){ 3003, SP_OK };
	g->util_gpu_pct = (struct sp_u64){ 97, SP_OK };
	g->reasons = (struct sp_u64){ SP_REASON_SW_POWER_CAP | SP_REASON_SW_THERMAL, SP_OK };
	g->viol_power_ns = (struct sp_u64){ 3720000000000ULL, SP_OK };
	g->viol_thermal_ns = (struct sp_u64){ 725000000000ULL, SP_OK };
	g->integrated = true;
	for (int i = 0; i < SP_PSI_N; i++) {
		s->psi[i].why = SP_OK;
		s->psi[i].some.ok = s->psi[i].full.ok = true;
	}
	static const struct { int pid; enum sp_proc_kind k; uint64_t rss, gpu; const char *n; } ps[] = {
		{ 2101, SP_PROC_SERVER, 3 * GIB, 0, "vllm" },
		{ 3300, SP_PROC_TRAINER, 1 * GIB, 8 * GIB, "torchrun" },
		{ 3301, SP_PROC_TRAINER, 38 * GIB, 0, "train.py" },
		{ 4000, SP_PROC_SERVER, 9 * GIB, 0, "ollama" },
	};
	for (int i = 0; i < 4; i++) {
		struct sp_proc *p = &s->procs[i];
		p->pid = ps[i].pid;
		p->kind = ps[i].k;
		p->rss_bytes = ps[i].rss;
		p->gpu_mem.why = ps[i].gpu ? SP_OK : SP_NOT_SUPPORTED;
		p->gpu_mem.v = ps[i].gpu;
		snprintf(p->name, sizeof p->name, "%s", ps[i].n);
	}
	s->procs[0].has_cap = true;
	s->procs[0].cap_frac = 0.5;
	s->nprocs = 4;
	return s;
}

struct fx {
	struct sp_sample *s;
	struct sp_spark k;
	struct sp_top_hist h;
	struct sp_tv_grid *g;
	struct sp_topview_in in;
};

static struct fx *fx_new(void)
{
	struct fx *f = calloc(1, sizeof *f);
	f->s = gb10();
	f->g = calloc(1, sizeof *f->g);
	memset(&f->k, 0, sizeof f->k);
	f->k.present = f->k.die_temp_ok = f->k.pl1_ok = f->k.pl1_cap_ok = f->k.at_pl1_cap = true;
	f->k.die_temp_c = 85.5;
	f->k.pl1_w = 139.6;
	f->k.pl1_cap_w = 140;
	f->k.pl1_pct = 99.7;
	sp_top_hist_init(&f->h);
	sp_top_hist_push(&f->h, f->s, &f->k);
	f->in = (struct sp_topview_in){ .s = f->s, .k = &f->k, .h = &f->h, .host = "spark", .interval_s = 1,
					.samples = 1 };
	return f;
}

static void fx_free(struct fx *f)
{
	free(f->s);
	free(f->g);
	free(f);
}

/* the screen as text, one line per row, into buf */
static void screen(struct fx *f, int rows, int cols, char *buf, size_t n)
{
	sp_topview_render(f->g, rows, cols, &f->in);
	size_t len = 0;
	buf[0] = 0;
	for (int r = 0; r < f->g->rows; r++) {
		char line[SP_TV_COLS_MAX * 4];
		sp_tv_line(f->g, r, line, sizeof line);
		len += (size_t)snprintf(buf + len, n - len, "%s\n", line);
	}
}

static int row_of(struct fx *f, const char *needle)
{
	char line[SP_TV_COLS_MAX * 4];
	for (int r = 0; r < f->g->rows; r++) {
		sp_tv_line(f->g, r, line, sizeof line);
		if (strstr(line, needle))
			return r;
	}
	return -1;
}

static void the_screen(void **st)
{
	(void)st;
	struct fx *f = fx_new();
	static char buf[65536];
	screen(f, 24, 80, buf, sizeof buf);
	assert_non_null(strstr(buf, "sparkops top  spark"));
	assert_non_null(strstr(buf, "budget now 6.0 GiB   after flush"));
	assert_non_null(strstr(buf, "shmem 2.0"));
	assert_non_null(strstr(buf, "in 2MiB+ blocks"));
	assert_non_null(strstr(buf, "GPU0 NVIDIA GB10"));
	assert_non_null(strstr(buf, "SM 2405/3003 MHz"));
	assert_non_null(strstr(buf, "sw_power_cap sw_thermal_slowdown"));
	assert_non_null(strstr(buf, "throttled: power 1h02m thermal 12m05s"));
	assert_non_null(strstr(buf, "GB10 die 85.5 C"));
	assert_non_null(strstr(buf, "PL1 139.6/140 W"));
	assert_non_null(strstr(buf, "PSI  memory 0.0/0.0%"));
	assert_non_null(strstr(buf, "0.50=60.0 GiB"));
	assert_non_null(strstr(buf, " q quit"));
	/* thermal in the alert colour, power cap in the warning colour */
	int r = row_of(f, "sw_power_cap");
	char line[1024];
	sp_tv_line(f->g, r, line, sizeof line);
	int c = (int)(strstr(line, "sw_thermal") - line);
	assert_int_equal(f->g->c[r][c].attr, SP_TVA_ALERT);
	assert_int_equal(f->g->c[r][2].attr, SP_TVA_WARN);
	/* nothing past the right edge, every row there */
	assert_int_equal(f->g->rows, 24);
	assert_int_equal(f->g->cols, 80);
	fx_free(f);
}

static void usb_pd_and_stale(void **st)
{
	(void)st;
	struct fx *f = fx_new();
	static char buf[65536];
	f->k.usb_pd_safety = true;
	f->k.pl1_cap_ok = true;
	f->k.pl1_cap_w = 30; /* not only 20 W: the cap it has is named */
	screen(f, 24, 80, buf, sizeof buf);
	int r = row_of(f, "USB-PD SAFETY MODE: PL1 cap 30 W");
	assert_true(r > 0);
	/* a hung driver: the last answer, dimmed and marked; never as current */
	struct sp_gpu last = f->s->gpus[0];
	f->s->gpu_status = SP_TIMEOUT;
	f->in.gpu_stale = true;
	f->in.gpu_last = &last;
	f->in.gpu_last_n = 1;
	f->in.gpu_stale_s = 12;
	screen(f, 24, 80, buf, sizeof buf);
	r = row_of(f, "GPU0");
	assert_true(r > 0);
	assert_non_null(strstr(buf, "STALE 12s"));
	assert_int_equal(f->g->c[r][6].attr, SP_TVA_DIM);
	/* and before any answer came */
	f->in.gpu_last = NULL;
	f->in.gpu_last_n = 0;
	screen(f, 24, 80, buf, sizeof buf);
	assert_non_null(strstr(buf, "GPU  STALE"));
	fx_free(f);
}

static void sparklines(void **st)
{
	(void)st;
	struct fx *f = fx_new();
	char line[4096];
	/* temperature climbing while power stays flat */
	for (int i = 0; i < 8; i++) {
		f->s->gpus[0].temp_c.v = (uint64_t)(30 + i * 10);
		sp_top_hist_push(&f->h, f->s, &f->k);
	}
	sp_top_spark(&f->h, SP_TS_TEMP, 8, false, line, sizeof line);
	assert_string_equal(line, "\u2581\u2581\u2582\u2583\u2585\u2586\u2587\u2588");
	sp_top_spark(&f->h, SP_TS_TEMP, 8, true, line, sizeof line);
	assert_string_equal(line, "__.-=+*#");
	sp_top_spark(&f->h, SP_TS_POWER, 8, true, line, sizeof line);
	assert_int_equal(strspn(line, line[0] == '*' ? "*" : "+"), 8); /* flat */
	/* older than the history: blanks */
	sp_top_spark(&f->h, SP_TS_FREE, 12, true, line, sizeof line);
	assert_memory_equal(line, "   ", 3);
	/* an unknown point is a blank, not a zero */
	f->s->gpus[0].temp_c.why = SP_TIMEOUT;
	f->k.die_temp_ok = false;
	sp_top_hist_push(&f->h, f->s, &f->k);
	assert_true(isnan(sp_top_hist_get(&f->h, SP_TS_TEMP, 0)));
	sp_top_spark(&f->h, SP_TS_TEMP, 2, true, line, sizeof line);
	assert_string_equal(line, "# ");
	/* the ring wraps */
	for (int i = 0; i < SP_TOP_HIST + 5; i++)
		sp_top_hist_push(&f->h, f->s, &f->k);
	assert_int_equal(f->h.n, SP_TOP_HIST);
	assert_false(isnan(sp_top_hist_get(&f->h, SP_TS_FREE, SP_TOP_HIST - 1)));
	assert_true(isnan(sp_top_hist_get(&f->h, SP_TS_FREE, SP_TOP_HIST)));
	fx_free(f);
}

/* each series is one sensor: a stale GPU leaves its temp and power blank,
 * the die temperature and the system power are rows of their own */
static void one_sensor_a_series(void **st)
{
	(void)st;
	struct fx *f = fx_new();
	static char buf[65536];
	f->k.sys_power_ok = true;
	f->k.sys_power_w = 182.4;
	f->s->gpus[0].temp_c.v = 67;
	f->s->gpus[0].power_mw.v = 95000;
	sp_top_hist_push(&f->h, f->s, &f->k);
	assert_float_equal(sp_top_hist_get(&f->h, SP_TS_TEMP, 0), 67, 1e-6);
	assert_float_equal(sp_top_hist_get(&f->h, SP_TS_POWER, 0), 95, 1e-6);
	assert_float_equal(sp_top_hist_get(&f->h, SP_TS_DIE, 0), 85.5, 1e-6);
	assert_float_equal(sp_top_hist_get(&f->h, SP_TS_SYS_POWER, 0), 182.4, 1e-4);
	/* the driver stops answering: GPU series blank, GB10's own go on */
	f->s->gpu_status = SP_TIMEOUT;
	sp_top_hist_push(&f->h, f->s, &f->k);
	assert_true(isnan(sp_top_hist_get(&f->h, SP_TS_TEMP, 0)));
	assert_true(isnan(sp_top_hist_get(&f->h, SP_TS_POWER, 0)));
	assert_float_equal(sp_top_hist_get(&f->h, SP_TS_DIE, 0), 85.5, 1e-6);
	assert_float_equal(sp_top_hist_get(&f->h, SP_TS_SYS_POWER, 0), 182.4, 1e-4);
	f->s->gpu_status = SP_OK;
	screen(f, 40, 100, buf, sizeof buf);
	int r = row_of(f, "die  ");
	assert_true(r > 0);
	assert_true(row_of(f, "sys W") > 0);
	/* without GB10's sensors, no empty rows for them */
	struct fx *d = fx_new();
	d->k.die_temp_ok = false;
	sp_top_hist_init(&d->h);
	sp_top_hist_push(&d->h, d->s, &d->k);
	screen(d, 40, 100, buf, sizeof buf);
	assert_true(row_of(d, "die  ") < 0);
	assert_true(row_of(d, "sys W") < 0);
	fx_free(d);
	fx_free(f);
}

static void order(struct fx *f, char *out, size_t n)
{
	static char buf[65536];
	screen(f, 30, 100, buf, sizeof buf);
	int r = row_of(f, "PID KIND");
	assert_true(r > 0);
	out[0] = 0;
	char line[1024];
	for (r++; r < f->g->rows - 1; r++) {
		sp_tv_line(f->g, r, line, sizeof line);
		int pid;
		if (sscanf(line, "%d", &pid) == 1) {
			size_t l = strlen(out);
			snprintf(out + l, n - l, "%d ", pid);
		}
	}
}

static void sorts(void **st)
{
	(void)st;
	struct fx *f = fx_new();
	char o[128];
	f->in.sort = SP_TOP_SORT_RSS;
	order(f, o, sizeof o);
	assert_string_equal(o, "3301 4000 2101 3300 ");
	f->in.sort = SP_TOP_SORT_GPU;
	order(f, o, sizeof o);
	assert_string_equal(o, "3300 3301 4000 2101 ");
	f->in.sort = SP_TOP_SORT_PID;
	order(f, o, sizeof o);
	assert_string_equal(o, "2101 3300 3301 4000 ");
	f->in.sort = SP_TOP_SORT_KIND;
	order(f, o, sizeof o);
	assert_string_equal(o, "4000 2101 3301 3300 ");
	assert_string_equal(sp_top_sort_name(SP_TOP_SORT_GPU), "gpu");
	fx_free(f);
}

static void sizes_and_ascii(void **st)
{
	(void)st;
	struct fx *f = fx_new();
	static char buf[65536];
	/* 60x20: still the pool, the budget and processes */
	screen(f, 20, 60, buf, sizeof buf);
	assert_non_null(strstr(buf, "budget now"));
	assert_non_null(strstr(buf, "PROCESSES"));
	/* 60x15: the sparklines give way to the two biggest holders, not the
	 * other way round */
	screen(f, 15, 60, buf, sizeof buf);
	assert_non_null(strstr(buf, "PROCESSES"));
	assert_non_null(strstr(buf, "train.py"));
	assert_non_null(strstr(buf, "ollama"));
	assert_non_null(strstr(buf, "free "));
	/* a wide screen: longer bars, never past the grid */
	screen(f, 60, 250, buf, sizeof buf);
	assert_int_equal(f->g->cols, 250);
	/* wider than the grid: clipped to it */
	screen(f, 500, 1000, buf, sizeof buf);
	assert_int_equal(f->g->cols, SP_TV_COLS_MAX);
	assert_int_equal(f->g->rows, SP_TV_ROWS_MAX);
	/* too small */
	screen(f, 8, 30, buf, sizeof buf);
	assert_non_null(strstr(buf, "terminal too small"));
	/* ASCII: not one byte above 0x7f */
	f->in.ascii = true;
	screen(f, 24, 80, buf, sizeof buf);
	for (const char *p = buf; *p; p++)
		assert_true((unsigned char)*p < 0x80);
	assert_non_null(strstr(buf, "POOL ["));
	/* help, pause, a message */
	f->in.help = true;
	f->in.paused = true;
	f->in.message = "flushed: page cache 45.0 GiB -> 3.0 GiB";
	screen(f, 24, 80, buf, sizeof buf);
	assert_non_null(strstr(buf, "cycle the process sort"));
	/* the help says the scan period top really uses (SP_TOP_PROC_SCAN_MIN_S) */
	char period[64];
	snprintf(period, sizeof period, "scanned every %.0f s", SP_TOP_PROC_SCAN_MIN_S);
	assert_non_null(strstr(buf, period));
	assert_non_null(strstr(buf, "PAUSED"));
	assert_non_null(strstr(buf, "flushed: page cache"));
	/* before the first sample */
	f->in.help = false;
	f->in.s = NULL;
	screen(f, 24, 80, buf, sizeof buf);
	assert_non_null(strstr(buf, "reading the machine"));
	fx_free(f);
}

static void job_line(void **st)
{
	(void)st;
	struct fx *f = fx_new();
	static char buf[65536];
	struct sp_jobstat j;
	sp_jobstat_clear(&j);
	j.pid = 77;
	snprintf(j.mode, sizeof j.mode, "run");
	snprintf(j.command, sizeof j.command, "python train.py\x1b[2J");
	j.rate = 1.25;
	snprintf(j.unit, sizeof j.unit, "it/s");
	j.baseline = 1.5;
	snprintf(j.cause, sizeof j.cause, "thermal");
	snprintf(j.guard, sizeof j.guard, "warned");
	f->in.jobs = &j;
	f->in.njobs = 1;
	screen(f, 24, 100, buf, sizeof buf);
	assert_non_null(strstr(buf, "JOB  run 77  python train.py?[2J  1.25 it/s (base 1.5, -17%)  slowdown: thermal  guard: warned"));
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_screen),   cmocka_unit_test(usb_pd_and_stale), cmocka_unit_test(sparklines), cmocka_unit_test(one_sensor_a_series),
		cmocka_unit_test(sorts),        cmocka_unit_test(sizes_and_ascii),  cmocka_unit_test(job_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
