/* SPDX-License-Identifier: MIT */
/* serve's live page, data/webpage.html, embedded at build time with the
 * assembler's .incbin, as the model catalog is. A NUL follows the text. */
	.section .rodata
	.balign 16
	.globl sp_webpage_html
	.hidden sp_webpage_html
	.type sp_webpage_html, %object
sp_webpage_html:
	.incbin "data/webpage.html"
	.globl sp_webpage_html_end
	.hidden sp_webpage_html_end
sp_webpage_html_end:
	.byte 0
	.section .note.GNU-stack,"",%progbits
