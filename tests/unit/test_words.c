// SPDX-License-Identifier: MIT
/* Word tables of enums (util/words.h): a word to its value (any case,
 * aliases), the value's name back, the list an error gives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "account/footprint.h"
#include "util/words.h"

static const struct sp_word strat[] = {
	{ "none", 0, SP_WORD_UNLISTED, NULL }, { "ddp", 4, 0, NULL },  { "fsdp", 7, 0, "training" },
	{ "tp", 9, 0, NULL },                  { "pp", 11, 0, "serving" }, { "tensor", 9, SP_WORD_UNLISTED, NULL },
	{ NULL, 0, 0, NULL },
};

static void find_and_name(void **st)
{
	(void)st;
	int v = -5;
	assert_true(sp_word_find(strat, "FSDP", &v));
	assert_int_equal(v, 7);
	assert_true(sp_word_find(strat, "tensor", &v));
	assert_int_equal(v, 9);
	assert_false(sp_word_find(strat, "fsd", &v));
	assert_false(sp_word_find(strat, NULL, &v));
	assert_int_equal(sp_word_parse(strat, "none"), 0);
	assert_int_equal(sp_word_parse(strat, "zero"), -1);
	/* the name is the first entry with the value: never the alias */
	assert_string_equal(sp_word_name(strat, 9), "tp");
	assert_string_equal(sp_word_name(strat, 0), "none");
	assert_string_equal(sp_word_name(strat, 3), "?");
}

static void lists(void **st)
{
	(void)st;
	char b[128];
	assert_string_equal(sp_word_list(strat, b, sizeof b), "ddp, fsdp (training), tp or pp (serving)");
	static const struct sp_word one[] = { { "only", 1, 0, NULL }, { NULL, 0, 0, NULL } };
	assert_string_equal(sp_word_list(one, b, sizeof b), "only");
	static const struct sp_word two[] = { { "a", 1, 0, NULL }, { "b", 2, 0, NULL }, { NULL, 0, 0, NULL } };
	assert_string_equal(sp_word_list(two, b, sizeof b), "a or b");
	/* cut short, still a string */
	assert_string_equal(sp_word_list(strat, b, 6), "ddp, ");
}

/* the planner's tables: every value named back as the word that parses to it */
static void planner_tables(void **st)
{
	(void)st;
	for (int v = 0; v < SP_METHOD_N; v++)
		assert_int_equal(sp_method_parse(sp_method_name((enum sp_method)v)), v);
	for (int v = 0; v < SP_OPTIM_N; v++)
		assert_int_equal(sp_optim_parse(sp_optim_name((enum sp_optim)v)), v);
	for (int v = 0; v < SP_KV_N; v++)
		assert_int_equal(sp_kv_cache_parse(sp_kv_cache_name((enum sp_kv_cache)v)), v);
	for (int v = 0; v < SP_MEASURE_N; v++)
		assert_int_equal(sp_measure_parse(sp_measure_name((enum sp_measure)v)), v);
	assert_int_equal(sp_cdtype_parse("float16"), SP_CDT_FP16);
	assert_string_equal(sp_cdtype_name(SP_CDT_FP16), "fp16");
	assert_string_equal(sp_attn_name(SP_ATTN_SDPA), "sdpa");
	assert_int_equal(sp_word_parse(sp_attn_words, "flash"), SP_ATTN_SDPA);
	char b[128];
	assert_string_equal(sp_word_list(sp_kv_cache_words, b, sizeof b), "static, dynamic or legacy");
	assert_string_equal(sp_word_list(sp_loss_words, b, sizeof b), "fp32, bf16 or chunked");
	assert_string_equal(sp_word_list(sp_cdtype_words, b, sizeof b), "bf16, fp16 or fp32");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(find_and_name),
		cmocka_unit_test(lists),
		cmocka_unit_test(planner_tables),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
