// SPDX-License-Identifier: MIT
/* The classifier's field rules (docs/ladder.md "The field corpus"): each rule
 * on the log lines it answers, and every log of tests/fixtures/oomlogs/field
 * fed in chunks of every awkward size gives what it gives whole. The lines
 * below are copied from the corpus (cases.tsv names their threads). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ladder/oomlog.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *fixdir(void)
{
	const char *f = getenv("FIX");
	return f && *f ? f : "tests/fixtures";
}

static void classify(struct sp_oomlog *p, const char *text, size_t chunk)
{
	size_t len = strlen(text);
	sp_oomlog_init(p);
	for (size_t o = 0; o < len; o += chunk)
		sp_oomlog_feed(p, text + o, len - o < chunk ? len - o : chunk);
	sp_oomlog_finish(p);
}

static struct sp_oomlog *log_of(const char *text)
{
	static struct sp_oomlog p;
	classify(&p, text, strlen(text) + 1);
	return &p;
}

static void engines_anywhere(void **state)
{
	(void)state;
	/* a process name in a prefix */
	struct sp_oomlog *p = log_of("[2026-02-24T20:21:58Z] (EngineCore_DP0 pid=6940) ValueError: Free memory on device "
				     "cuda:1 (19.77/22.05 GiB) on startup is less than desired GPU memory utilization (0.9, "
				     "19.84 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.\n");
	assert_int_equal(p->kind, SP_OOM_VLLM_STARTUP);
	assert_int_equal(p->engine, SP_ENGINE_VLLM);
	/* module paths in a traceback's frames; the capture is start-up */
	p = log_of("Traceback (most recent call last):\n"
		   "  File \"/sgl-workspace/sglang/python/sglang/srt/model_executor/model_runner.py\", line 216, in initialize\n"
		   "    self.init_cuda_graphs()\n"
		   "Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 448.00 MiB. GPU 7 has a total "
		   "capacity of 95.00\n");
	assert_int_equal(p->kind, SP_OOM_TORCH);
	assert_int_equal(p->engine, SP_ENGINE_SGLANG);
	assert_int_equal(p->phase, SP_PHASE_LOAD);
	/* the kernel's kill of a named worker process */
	p = log_of("VLLM::Worker_TP invoked oom-killer: gfp_mask=0x80dc0(GFP_KERNEL|__GFP_ZERO)\n");
	assert_int_equal(p->kind, SP_OOM_KERNEL);
	assert_int_equal(p->engine, SP_ENGINE_VLLM);
	assert_int_equal(p->killer, SP_KILLER_KERNEL);
	assert_false(p->killer_threshold);
	/* vLLM's logger prefix names vLLM, Compose's service column is stripped */
	p = log_of("vllm-1  | ERROR 11-18 18:07:28 engine.py:366] RuntimeError: CUDA error: an illegal memory access was "
		   "encountered\n");
	assert_int_equal(p->engine, SP_ENGINE_VLLM);
	/* a training job importing an engine is still a training job */
	p = log_of("{'loss': 1.2, 'epoch': 0.1}\nTraceback (most recent call last):\n"
		   "  File \"/x/site-packages/vllm/worker/worker.py\", line 1, in f\n"
		   "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n");
	assert_int_equal(p->engine, SP_ENGINE_UNKNOWN);
	assert_int_equal(p->phase, SP_PHASE_STEP);
}

static void phases(void **state)
{
	(void)state;
	/* the failure printed before its traceback: the serving loop's frames */
	struct sp_oomlog *p = log_of(
		"ERROR 04-27 09:07:04 [engine.py:160] OutOfMemoryError('CUDA out of memory. Tried to allocate 1.50 GiB.')\n"
		"ERROR 04-27 09:07:04 [engine.py:160] Traceback (most recent call last):\n"
		"ERROR 04-27 09:07:04 [engine.py:160]   File \"/x/vllm/engine/multiprocessing/engine.py\", line 221, in "
		"run_engine_loop\n"
		"ERROR 04-27 09:07:04 [engine.py:160]     request_outputs = self.engine_step()\n"
		"ERROR 04-27 09:07:04 [engine.py:160]   File \"/x/vllm/engine/multiprocessing/engine.py\", line 247, in "
		"engine_step\n"
		"ERROR 04-27 09:07:04 [engine.py:160]     raise e\n");
	assert_int_equal(p->kind, SP_OOM_TORCH);
	assert_int_equal(p->phase, SP_PHASE_SERVE);
	/* a custom loop's progress lines, then the driver's failure */
	static const char *const loops[] = { "step 1180 | loss 1.0912 | lr 2.0e-05\n", "iter 200: loss 3.2114\n",
					     "Iteration 51 | Backbone loss 5.882367134094238\n" };
	for (size_t i = 0; i < sizeof loops / sizeof loops[0]; i++) {
		char buf[256];
		snprintf(buf, sizeof buf, "%sNVRM: nvCheckOkFailedNoLog: Check failed: Out of memory [NV_ERR_NO_MEMORY]\n",
			 loops[i]);
		p = log_of(buf);
		assert_int_equal(p->kind, SP_OOM_DRIVER);
		assert_int_equal(p->phase, SP_PHASE_STEP);
	}
	/* "timestep" is no counter */
	p = log_of("timestep 4 loss 2\nNVRM: Out of memory [NV_ERR_NO_MEMORY]\n");
	assert_int_equal(p->phase, SP_PHASE_UNKNOWN);
	/* bitsandbytes' dequantize in a training step is a step, quantize_4bit in from_pretrained a load */
	p = log_of("Traceback (most recent call last):\n  File \"t.py\", line 1, in training_step\n"
		   "  File \"/x/bitsandbytes/functional.py\", line 1370, in dequantize_4bit\n"
		   "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 448.00 MiB.\n");
	assert_int_equal(p->kind, SP_OOM_BNB);
	assert_int_equal(p->phase, SP_PHASE_STEP);
	p = log_of("Traceback (most recent call last):\n  File \"t.py\", line 1, in from_pretrained\n"
		   "  File \"/x/bitsandbytes/functional.py\", line 1, in quantize_4bit\n"
		   "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 112.00 MiB.\n");
	assert_int_equal(p->kind, SP_OOM_BNB);
	assert_int_equal(p->phase, SP_PHASE_LOAD);
}

static void killers(void **state)
{
	(void)state;
	struct sp_oomlog *p = log_of("low memory! at or below SIGTERM limits: mem 10.00%, swap 15.00%\n"
				     "sending SIGTERM to process 696 uid 1001 \"ipfs\": badness 757, VmRSS 637 MiB\n");
	assert_int_equal(p->kind, SP_OOM_EARLYOOM);
	assert_int_equal(p->killer, SP_KILLER_EARLYOOM);
	assert_true(p->killer_threshold);
	assert_true(p->killer_limit_pct == 10.0);
	p = log_of("Dec 18 19:34:56 h systemd-oomd[840]: Killed /user.slice/u.scope due to memory pressure for "
		   "/user.slice/user-1001.slice/user@1001.service being 51.07% > 50.00% for > 20s with reclaim activity\n");
	assert_int_equal(p->kind, SP_OOM_OOMD);
	assert_true(p->killer_limit_pct == 50.0);
	p = log_of("ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\n"
		   "Memory on the node (IP: 1.2.3.4, ID: 1) where the task (actor ID: 4, name=RayWorkerWrapper.__init__, "
		   "pid=13378, memory used=3.37GB) was running was 2152.43GB / 2265.25GB (0.950196), which exceeds the memory "
		   "usage threshold of 0.95. Ray killed this worker\n");
	assert_int_equal(p->kind, SP_OOM_RAY);
	assert_int_equal(p->engine, SP_ENGINE_VLLM);
	assert_int_equal(p->phase, SP_PHASE_LOAD);
	assert_true(p->killer_limit_pct > 94.9 && p->killer_limit_pct < 95.1);
	p = log_of("Last State:     Terminated\n  Reason:       OOMKilled\n  Exit Code:    137\n");
	assert_int_equal(p->kind, SP_OOM_CONTAINER);
	p = log_of("\"OOMKilled\": false,\n\"ExitCode\": 137\n");
	assert_int_equal(p->kind, SP_OOM_SIGKILL);
	char knob[640];
	p = log_of("low memory! at or below SIGTERM limits: mem 50 %, swap 10 %\n");
	sp_oomlog_killer_knob(p, knob, sizeof knob);
	assert_non_null(strstr(knob, "-m"));
	assert_non_null(strstr(knob, "50%"));
}

static void not_memory(void **state)
{
	(void)state;
	static const char *const logs[] = {
		"[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation "
		"timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE) ran for 600060 milliseconds before timing out.\n"
		"exitcode  : -9\n",
		"RuntimeError: CUDA error: an illegal memory access was encountered\n",
		"NVRM: fallen off the bus and is not responding to commands.\nKilled\n",
		"ModuleNotFoundError: No module named 'out_of_memory_utils'\n",
	};
	for (size_t i = 0; i < sizeof logs / sizeof logs[0]; i++) {
		struct sp_oomlog *p = log_of(logs[i]);
		assert_int_equal(p->kind, SP_OOM_UNKNOWN);
		assert_true(p->not_memory);
	}
	/* a real OOM beside them still is one */
	struct sp_oomlog *p = log_of("RuntimeError: CUDA error: an illegal memory access was encountered\n"
				     "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n");
	assert_int_equal(p->kind, SP_OOM_TORCH);
}

static void wordings(void **state)
{
	(void)state;
	/* PyTorch 2.1's typo */
	struct sp_oomlog *p = log_of("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.70 GiB. GPU 0 has a "
				     "total capacty of 6.00 GiB of which 0 bytes is free.\n");
	assert_int_equal(p->fig.total.v, 6442450944ULL);
	/* the allocator's own warning */
	p = log_of("[W1201 12:00:00.000 CUDACachingAllocator.cpp:1234] memory allocation failed with OOM on device 0 while "
		   "trying to allocate 2147483648 bytes (free: 1073741824, total: 128526896333)\n");
	assert_int_equal(p->kind, SP_OOM_TORCH);
	assert_int_equal(p->fig.tried.v, 2147483648ULL);
	assert_int_equal(p->fig.free.v, 1073741824ULL);
	assert_int_equal(p->fig.total.v, 128526896333ULL);
	/* Tegra: the NVML assert, wrapped */
	p = log_of("RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at\n"
		   "\"/opt/pytorch/pytorch/c10/cuda/CUDACachingAllocator.cpp\":838\n");
	assert_int_equal(p->kind, SP_OOM_TORCH);
	/* vLLM's check wrapped by a terminal */
	p = log_of("ValueError: Free memory on device cuda:0 (67.92/121.69 GiB) on startup is less than\n"
		   "desired GPU memory utilization (0.7, 85.18 GiB).\n");
	assert_int_equal(p->kind, SP_OOM_VLLM_STARTUP);
	assert_int_equal(p->engine, SP_ENGINE_VLLM);
	assert_true(p->fig.tried.v > 91000000000ULL && p->fig.tried.v < 91500000000ULL);
	/* a message glued to the traceback header */
	p = log_of("ResponseError('model requires more system memory (42.8 GiB) than is available (12.9 GiB)')Traceback "
		   "(most recent call last):\n  File \"a.py\", line 1, in f\n");
	assert_int_equal(p->kind, SP_OOM_OLLAMA);
}

static void weights_and_fragments(void **state)
{
	(void)state;
	struct sp_oomlog *p = log_of(
		"load_tensors: loading model tensors, this can take a while... (mmap = true, direct_io = false)\n"
		"ggml_backend_cuda_buffer_type_alloc_buffer: allocating 144817.04 MiB on device 0: cudaMalloc failed: out of "
		"memory\nalloc_tensor_range: failed to allocate CUDA0 buffer of size 151851674624\n");
	assert_int_equal(p->kind, SP_OOM_LLAMACPP);
	assert_true(p->weights_alloc);
	assert_int_equal(p->fig.tried.v, 151851672535ULL); /* 144817.04 MiB, the first line's figure */
	/* the KV cache is not the weights */
	p = log_of("ggml_backend_cpu_buffer_type_alloc_buffer: failed to allocate buffer of size 137438953504\n"
		   "llama_kv_cache_init: failed to allocate buffer for kv cache\n");
	assert_int_equal(p->kind, SP_OOM_LLAMACPP);
	assert_false(p->weights_alloc);
	p = log_of("pulling 799587243b19: 100% |##| 132 GB                         \n"
		   "Error: model requires more system memory (164.8 GiB) than is available (13.4 GiB)\n");
	assert_int_equal(p->weights_need, 132000000000ULL);
	p = log_of("kernel: cma: cma_alloc: linux,cma: alloc failed, req-size: 62864 pages, ret: -12\n"
		   "nvgpu: 17000000.gpu nvgpu_dma_print_err:101 [INFO] DMA alloc FAILED: [sysmem] size=257490944\n");
	assert_int_equal(p->kind, SP_OOM_DRIVER);
	assert_true(p->fragmented);
	p = log_of("python3: page allocation failure: order:0, mode:0x40cc0\nNVRM: Out of memory [NV_ERR_NO_MEMORY]\n");
	assert_false(p->fragmented);
	p = log_of("python3: page allocation failure: order:9, mode:0x40cc0\nNVRM: Out of memory [NV_ERR_NO_MEMORY]\n");
	assert_true(p->fragmented);
}

/* every field log, in chunks, gives what it gives whole */
static void field_chunks(void **state)
{
	(void)state;
	char path[4096];
	snprintf(path, sizeof path, "%s/oomlogs/field/cases.tsv", fixdir());
	FILE *t = fopen(path, "r");
	assert_non_null(t);
	char row[2048];
	int n = 0;
	static const size_t chunks[] = { 1, 2, 3, 7, 64, 4095, 4097 };
	while (fgets(row, sizeof row, t)) {
		char *tab = strchr(row, '\t');
		if (!tab || row[0] == '#')
			continue;
		*tab = 0;
		snprintf(path, sizeof path, "%s/oomlogs/field/%s", fixdir(), row);
		FILE *f = fopen(path, "rb");
		assert_non_null(f);
		static char buf[1 << 18];
		size_t len = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		buf[len] = 0;
		static struct sp_oomlog whole, part;
		classify(&whole, buf, len + 1);
		for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
			classify(&part, buf, chunks[c]);
			assert_int_equal(part.kind, whole.kind);
			assert_int_equal(part.phase, whole.phase);
			assert_int_equal(part.engine, whole.engine);
			assert_int_equal(part.killer, whole.killer);
			assert_true(part.killer_limit_pct == whole.killer_limit_pct);
			assert_int_equal(part.not_memory, whole.not_memory);
			assert_int_equal(part.weights_alloc, whole.weights_alloc);
			assert_int_equal(part.weights_need, whole.weights_need);
			assert_int_equal(part.fragmented, whole.fragmented);
			assert_int_equal(part.fig.tried.v, whole.fig.tried.v);
			assert_string_equal(part.evidence, whole.evidence);
			assert_string_equal(part.phase_why, whole.phase_why);
		}
		n++;
	}
	fclose(t);
	assert_true(n >= 60);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(engines_anywhere),
		cmocka_unit_test(phases),
		cmocka_unit_test(killers),
		cmocka_unit_test(not_memory),
		cmocka_unit_test(wordings),
		cmocka_unit_test(weights_and_fragments),
		cmocka_unit_test(field_chunks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
