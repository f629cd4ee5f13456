/* SPDX-License-Identifier: MIT */
/* Sizes, counts and durations: parsing user arguments and formatting output.
 * Bytes internally; GiB (binary) in human output. */
#ifndef SP_UNITS_H
#define SP_UNITS_H
#include <stddef.h>
#include <stdint.h>

#define SP_KiB 1024ULL
#define SP_MiB (1024ULL * 1024)
#define SP_GiB (1024ULL * 1024 * 1024)

/* SIZE: "123" (bytes), "512K"/"512KiB", "8M"/"8MiB", "8G"/"8GiB", "1T"/"1TiB"
 * are binary; "8KB"/"8MB"/"8GB"/"8TB" are decimal (what a disk vendor means).
 * Fractions are allowed ("1.5G"). Returns 0 or -1 for garbage, negatives and overflow. */
int sp_parse_size(const char *s, uint64_t *out);
/* A SIZE a user typed (options, --cohost ollama:SIZE): as sp_parse_size but a
 * unit is required ("10" is -2: the user meant GiB, not 10 bytes); "0" alone
 * is allowed. */
int sp_parse_size_unit(const char *s, uint64_t *out);

/* COUNT: "70e9", "7000000000", "8B"/"8b" (billions), "500M"/"500m" (millions), "1.5K".
 * Returns 0 or -1. */
int sp_parse_count(const char *s, double *out);

/* DURATION: "30" (seconds), "30s", "500ms", "5m", "2h", "1d", fractions allowed. -1 for garbage. */
int sp_parse_duration(const char *s, double *seconds);

/* Bounded numbers, for option values and fields: the whole string is one
 * base-10 number (optional sign; blanks before and after are allowed, as in
 * sp_parse_i64) and lo <= value <= hi. Returns 0 and sets *out, or -EINVAL
 * (not a number: empty, garbage, trailing text) or -ERANGE (outside lo..hi,
 * or beyond long); *out is left alone on failure. The double form also takes
 * fractions and exponents ("1.5", "2e3") and refuses nan and inf. */
int sp_parse_long_range(const char *s, long lo, long hi, long *out);
int sp_parse_double_range(const char *s, double lo, double hi, double *out);

/* "12.3 GiB" (GiB, one decimal; "0.4 GiB" for small values). A non-zero
 * figure that would round to "0.0 GiB" is shown in the unit that shows it
 * ("13.0 MiB", "320.0 KiB"); an unknown one (nan, inf) is "unknown". */
const char *sp_fmt_gib(char *buf, size_t n, double bytes);
/* Adaptive binary units: "512 KiB", "12.3 MiB", "4.0 GiB"; "unknown" for nan */
const char *sp_fmt_bytes(char *buf, size_t n, double bytes);
/* What snprintf(buf, n, "%.*f", decimals, v) writes, without printf's
 * machinery where the answer is sure: decimals 0..6, the scaled value
 * below 4e15 (exact in a double) and not within rounding error of a half (a tie, and -0, go
 * to snprintf). Returns the length, as snprintf does. For log rows, one a
 * second with ~40 numbers each. */
int sp_fmt_fixed(char *buf, size_t n, int decimals, double v);
/* v's decimal digits into out (at most 20, no NUL), without printf;
 * returns how many */
size_t sp_u64_digits(char *out, uint64_t v);
/* "1h02m", "12m05s", "42s" */
const char *sp_fmt_duration(char *buf, size_t n, double seconds);
#endif
