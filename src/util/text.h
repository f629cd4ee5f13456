/* SPDX-License-Identifier: MIT */
/* Text from the machine (a process name, a sysfs label, a driver message, a
 * model file's name) is shown on root's terminal: no byte of it may be a
 * control character (an escape sequence retitles the window, clears the
 * screen or worse). */
#ifndef SP_TEXT_H
#define SP_TEXT_H
#include <stddef.h>

/* Replace, in place, every byte outside printable ASCII (0x20..0x7e) with
 * '?': C0 controls, DEL, and bytes >= 0x80 (a C1 control such as 0x9b is a
 * CSI to some terminals). Returns how many bytes were replaced. */
size_t sp_text_clean(char *s);
/* snprintf(dst, cap, "%s", src) without the format machinery: copies what
 * fits, always NUL-terminates (cap > 0); returns the length copied. */
size_t sp_text_copy(char *dst, size_t cap, const char *src);
#endif
