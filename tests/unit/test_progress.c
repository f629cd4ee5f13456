// SPDX-License-Identifier: MIT
/* The progress parser: tqdm, Trainer dicts, a user regex; any chunking. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include "watch/progress.h"

static void feed(struct sp_progress *p, const char *s)
{
	sp_progress_feed(p, s, strlen(s));
}

static void tqdm_basic(void **st)
{
	(void)st;
	struct sp_progress p;
	sp_progress_init(&p, NULL);
	feed(&p, "\r  3%|\xe2\x96\x8b    | 30/1000 [00:10<05:23,  3.00it/s]");
	assert_false(p.have_rate); /* no line end yet */
	sp_progress_flush(&p);
	assert_true(p.have_rate);
	assert_float_equal(p.rate, 3.0, 1e-9);
	assert_string_equal(p.unit, "it/s");
	feed(&p, "\r  4%|\xe2\x96\x8b    | 40/1000 [00:13<05:20,  3.25it/s]\r");
	assert_float_equal(p.rate, 3.25, 1e-9);
}

static void tqdm_variants(void **st)
{
	(void)st;
	struct sp_progress p;
	sp_progress_init(&p, NULL);
	feed(&p, "Epoch 1:  30%|###  | 30/100 [01:40<03:53,  3.33s/it, loss=0.31]\n");
	assert_float_equal(p.rate, 1 / 3.33, 1e-9);
	assert_string_equal(p.unit, "it/s");
	feed(&p, "100%|#####| 5000/5000 [00:02<00:00, 2.41kit/s]\n");
	assert_float_equal(p.rate, 2410, 1e-6);
	assert_string_equal(p.unit, "it/s");
	feed(&p, "Generating: 50%| | 500/1000 [00:05<00:05, 98.5samples/s]\n");
	assert_float_equal(p.rate, 98.5, 1e-9);
	assert_string_equal(p.unit, "samples/s");
	feed(&p, "Generating: 60%| | 600/1000 [00:05<00:05, 1.02ksamples/s]\n");
	assert_float_equal(p.rate, 1020, 1e-6);
	assert_string_equal(p.unit, "samples/s");
	feed(&p, "dl: 10%| | 1.0G/10G [00:05<00:45, 200MB/s]\n");
	assert_float_equal(p.rate, 200e6, 1);
	assert_string_equal(p.unit, "B/s");
	/* colours around the numbers */
	feed(&p, "\x1b[32mtrain\x1b[0m: 10%| | 10/100 [00:01<00:09, \x1b[1m7.50it/s\x1b[0m]\n");
	assert_float_equal(p.rate, 7.5, 1e-9);
	/* vLLM style */
	feed(&p, "INFO Avg generation throughput: 45.2 tokens/s, Running: 1 reqs\n");
	assert_float_equal(p.rate, 45.2, 1e-9);
	assert_string_equal(p.unit, "tokens/s");
}

static void tqdm_unknown_rate(void **st)
{
	(void)st;
	struct sp_progress p;
	sp_progress_init(&p, NULL);
	feed(&p, "  0%|          | 0/1000 [00:00<?, ?it/s]\n");
	assert_false(p.have_rate);
	feed(&p, "step 30/1000 took 3s\n"); /* no rate here */
	feed(&p, "ratio 5/s\n");             /* bare "/s" without a unit word */
	feed(&p, "x3.0it/s\n");              /* glued to a word: not a token */
	assert_false(p.have_rate);
	assert_true(isnan(p.rate));
}

static void chunking(void **st)
{
	(void)st;
	const char *s = "\r 10%|#| 10/100 [00:01<00:09, 12.50it/s]\r 20%|#| 20/100 [00:02<00:08, 11.25it/s]\r";
	struct sp_progress a, b;
	sp_progress_init(&a, NULL);
	sp_progress_init(&b, NULL);
	feed(&a, s);
	for (size_t i = 0; s[i]; i++)
		sp_progress_feed(&b, s + i, 1);
	assert_float_equal(a.rate, 11.25, 1e-9);
	assert_float_equal(b.rate, 11.25, 1e-9);
	assert_int_equal(a.updates, b.updates);
}

static void hf_dicts(void **st)
{
	(void)st;
	struct sp_progress p;
	sp_progress_init(&p, NULL);
	feed(&p, "{'loss': 1.43, 'grad_norm': 0.81, 'learning_rate': 2e-05, 'epoch': 0.01}\n");
	assert_true(p.have_loss);
	assert_float_equal(p.loss, 1.43, 1e-9);
	assert_float_equal(p.epoch, 0.01, 1e-9);
	assert_false(p.have_rate);
	feed(&p, "{'loss': '1.432', 'grad_norm': '0.8', 'learning_rate': '2e-05', 'epoch': '0.02'}\n");
	assert_float_equal(p.loss, 1.432, 1e-9);
	assert_float_equal(p.epoch, 0.02, 1e-9);
	feed(&p, "{'train_runtime': 125.5, 'train_samples_per_second': 41.25, 'train_steps_per_second': 5.1, "
		 "'train_loss': 1.1, 'epoch': 1.0}\n");
	assert_true(p.have_train_summary);
	assert_float_equal(p.train_samples_per_second, 41.25, 1e-9);
	assert_float_equal(p.train_runtime_s, 125.5, 1e-9);
	assert_float_equal(p.rate, 41.25, 1e-9);
	assert_string_equal(p.unit, "samples/s");
	/* garbage values are not numbers */
	sp_progress_init(&p, NULL);
	feed(&p, "{'loss': 'nan?', 'epoch': 'x'}\n");
	assert_false(p.have_loss);
	assert_false(p.have_epoch);
}

static void user_regex(void **st)
{
	(void)st;
	regex_t re;
	assert_int_equal(regcomp(&re, "speed=([0-9.]+)", REG_EXTENDED), 0);
	struct sp_progress p;
	sp_progress_init(&p, &re);
	feed(&p, "step 10 speed=123.5 ex/s\n");
	assert_float_equal(p.rate, 123.5, 1e-9);
	assert_string_equal(p.unit, "rate");
	feed(&p, "speed=abc\n");
	assert_float_equal(p.rate, 123.5, 1e-9);
	feed(&p, " 10%| | 1/10 [00:01<00:09, 9.00it/s]\n"); /* the regex replaces the parsers */
	assert_float_equal(p.rate, 123.5, 1e-9);
	regfree(&re);
}

static void long_lines(void **st)
{
	(void)st;
	struct sp_progress p;
	sp_progress_init(&p, NULL);
	char big[5000];
	memset(big, 'x', sizeof big);
	sp_progress_feed(&p, big, sizeof big);
	feed(&p, " 5.00it/s\n"); /* the end of an overlong line is not parsed */
	assert_false(p.have_rate);
	feed(&p, "[00:01<00:09, 6.00it/s]\n");
	assert_float_equal(p.rate, 6.0, 1e-9);
	/* binary junk and NULs */
	static const char junk[] = "\0\xff\x1b[\x1b\r\n\x80 9.5it/s\n";
	sp_progress_feed(&p, junk, sizeof junk - 1);
	assert_float_equal(p.rate, 9.5, 1e-9);
}

/* Trainer dicts without a bar: epoch/h from two dicts' epochs and times */
static void hf_dict_rate(void **st)
{
	(void)st;
	struct sp_progress p;
	sp_progress_init(&p, NULL);
	/* no time given: no derived rate */
	feed(&p, "{'loss': 1.23, 'grad_norm': 0.5, 'learning_rate': 2e-05, 'epoch': 0.1}\n");
	feed(&p, "{'loss': 1.2, 'grad_norm': 0.5, 'learning_rate': 2e-05, 'epoch': 0.2}\n");
	assert_false(p.have_rate);
	sp_progress_set_time(&p, 100);
	feed(&p, "{'loss': 1.23, 'grad_norm': 0.5, 'learning_rate': 2e-05, 'epoch': 0.3}\n");
	assert_false(p.have_rate); /* one dict: no pair yet */
	sp_progress_set_time(&p, 136);
	feed(&p, "{'loss': 1.1, 'grad_norm': 0.4, 'learning_rate': 1e-05, 'epoch': 0.31}\n");
	assert_true(p.have_rate);
	assert_string_equal(p.unit, "epoch/h");
	assert_float_equal(p.rate, 0.01 / 36 * 3600, 1e-9); /* 1 epoch/h */
	unsigned long u = p.updates;
	/* an eval dict and a dict with the same epoch give no new rate */
	sp_progress_set_time(&p, 150);
	feed(&p, "{'eval_loss': 0.9, 'eval_runtime': 3.1, 'epoch': 0.5}\n");
	feed(&p, "{'loss': 1.0, 'epoch': 0.31}\n");
	assert_int_equal(p.updates, u);
	/* slower: 0.01 epoch in 72 s from the dict at 136 s */
	sp_progress_set_time(&p, 208);
	feed(&p, "{'loss': 1.0, 'epoch': 0.32}\n");
	assert_float_equal(p.rate, 0.5, 1e-9);
	/* a restart (epoch back to 0): the pair starts again */
	sp_progress_set_time(&p, 300);
	u = p.updates;
	feed(&p, "{'loss': 2.0, 'epoch': 0.01}\n");
	assert_int_equal(p.updates, u);
	sp_progress_set_time(&p, 336);
	feed(&p, "{'loss': 2.0, 'epoch': 0.02}\n");
	assert_float_equal(p.rate, 1.0, 1e-9);
	/* the end-of-training summary is the run's mean: kept apart, it does not
	 * replace the last live rate */
	feed(&p, "{'train_runtime': 100.0, 'train_samples_per_second': 12.5, 'epoch': 1.0}\n");
	assert_true(p.have_train_summary);
	assert_float_equal(p.train_samples_per_second, 12.5, 1e-9);
	assert_string_equal(p.unit, "epoch/h");
	assert_float_equal(p.rate, 1.0, 1e-9);
}

/* with a tqdm bar in the output, dicts give no rate of their own */
static void hf_dict_rate_bar_wins(void **st)
{
	(void)st;
	struct sp_progress p;
	sp_progress_init(&p, NULL);
	sp_progress_set_time(&p, 10);
	feed(&p, " 10%|#   | 10/100 [00:05<00:45,  2.00it/s]\n");
	feed(&p, "{'loss': 1.0, 'epoch': 0.1}\n");
	sp_progress_set_time(&p, 20);
	feed(&p, "{'loss': 0.9, 'epoch': 0.2}\n");
	assert_string_equal(p.unit, "it/s");
	assert_float_equal(p.rate, 2.0, 1e-9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tqdm_basic), cmocka_unit_test(tqdm_variants), cmocka_unit_test(tqdm_unknown_rate),
		cmocka_unit_test(chunking),   cmocka_unit_test(hf_dicts),      cmocka_unit_test(user_regex),
		cmocka_unit_test(long_lines), cmocka_unit_test(hf_dict_rate), cmocka_unit_test(hf_dict_rate_bar_wins),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
