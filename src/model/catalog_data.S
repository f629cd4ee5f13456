/* SPDX-License-Identifier: MIT */
/* The built-in model catalog, data/models.json, embedded at build time with
 * the assembler's .incbin (no code generator needed). The path is relative to
 * the repository root, where make runs. A NUL follows the text. */
	.section .rodata
	.balign 16
	.globl sp_catalog_json
	.hidden sp_catalog_json
	.type sp_catalog_json, %object
sp_catalog_json:
	.incbin "data/models.json"
	.globl sp_catalog_json_end
	.hidden sp_catalog_json_end
sp_catalog_json_end:
	.byte 0
	.section .note.GNU-stack,"",%progbits
