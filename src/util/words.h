/* SPDX-License-Identifier: MIT */
/* The words a user types for the values of an enum, and the value's name
 * back, in one table per enum: the option table parses with it (util/opt.h,
 * SP_OPT_ENUM), the output names the value with it, and the error for a bad
 * word lists it. No second list of the same words anywhere.
 *
 *   static const struct sp_word method_words[] = {
 *       { "full", SP_METHOD_FULL }, { "lora", SP_METHOD_LORA },
 *       { "dora", SP_METHOD_LORA, SP_WORD_UNLISTED },   // an alias
 *       { NULL },
 *   };
 *
 * A value's name is the first entry that has it (aliases come after it);
 * the list an error gives ("full, lora or qlora") is every entry not marked
 * SP_WORD_UNLISTED, in the table's order, each with its note ("fsdp
 * (training)"). Words match case-insensitively. */
#ifndef SP_WORDS_H
#define SP_WORDS_H
#include <stdbool.h>
#include <stddef.h>

#define SP_WORD_UNLISTED 1u /* accepted (and may name its value), not listed in an error */

struct sp_word {
	const char *word; /* NULL ends the table */
	int value;
	unsigned flags;
	const char *note; /* said after the word in the list, in parentheses; NULL none */
};

/* the value of word s (case-insensitive): true and *value, or false */
bool sp_word_find(const struct sp_word *w, const char *s, int *value);
/* the value of s, or -1 when no entry has it (for tables whose values are >= 0) */
int sp_word_parse(const struct sp_word *w, const char *s);
/* the first word with value v, or "?" */
const char *sp_word_name(const struct sp_word *w, int v);
/* the listed words as a phrase, "a, b (note) or c", into buf (truncated to n) */
const char *sp_word_list(const struct sp_word *w, char *buf, size_t n);
#endif
