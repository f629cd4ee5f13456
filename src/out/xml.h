/* SPDX-License-Identifier: MIT */
/* The one XML/HTML text escaper: every piece of text from a log, a training
 * log or a file name goes through it before it lands in SVG or HTML. */
#ifndef SP_XML_H
#define SP_XML_H
#include <stddef.h>
#include <stdio.h>

/* Escape s (at most maxin bytes of it) into out (size n, always
 * NUL-terminated): & < > " ' become entities; control characters become
 * spaces (XML 1.0 forbids most of them); bytes that are not valid UTF-8
 * become '?'. Never cuts an entity or a character in half. Returns the
 * output length. */
size_t sp_xml_escape(char *out, size_t n, const char *s, size_t maxin);
/* The same, written to f. */
void sp_xml_fputs(FILE *f, const char *s);
#endif
