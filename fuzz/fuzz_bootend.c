// SPDX-License-Identifier: MIT
/* libFuzzer harness: postmortem's classifier (src/ladder/bootend.c) fed the
 * input's lines as journal entries (the first byte of a line picks the
 * transport and the identifier), then judged; the same lines through the
 * kernel-log classifier (probe/kmsg.c), the whole input as a pstore record
 * (probe/pstore.c). Each line is an exact-size copy: ASan sees a read past it. */
#include "fuzz.h"
#include "ladder/bootend.h"
#include "probe/kmsg.h"
#include "probe/pstore.h"

static struct sp_bootend b;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const idents[] = { "kernel", "systemd", "earlyoom", "systemd-oomd", "vllm", "kubelet",
					      "containerd", "systemd-journald" };
	sp_bootend_init(&b, 300);
	double t = 1.0e9;
	size_t i = 0;
	while (i < size) {
		size_t j = i;
		while (j < size && data[j] != '\n')
			j++;
		if (j > i) {
			unsigned sel = data[i];
			char *line = fuzz_copy(data + i + 1, j - i - 1);
			if (line) {
				t += (double)(sel & 7);
				sp_bootend_feed(&b, t, (sel & 8) != 0, idents[(sel >> 4) & 7], line, j - i - 1);
				(void)sp_kmsg_classify(line, j - i - 1);
				free(line);
			}
		}
		i = j + 1;
	}
	if (size && data[0] & 1)
		sp_bootend_ready(&b, t - 1);
	struct sp_end e;
	sp_bootend_judge(&b, &e);
	for (int k = 0; k < b.nkeep; k++)
		(void)sp_bootend_kept(&b, k);
	char *all = fuzz_copy(data, size);
	if (all) {
		char out[256];
		bool oops;
		(void)sp_pstore_parse(all, size, out, sizeof out, &oops);
		free(all);
	}
	return 0;
}
