// SPDX-License-Identifier: MIT
/* One text line of the failed job's log, once oomlog.c has gathered it: its
 * prefixes off (rank tags, times, Compose's column, vLLM's logger), the
 * traceback it may open or continue (the innermost frame's phase), the
 * progress it shows (serving, starting, loading, training steps: the phase a
 * later failure is placed in), then the failure it names (oomfail.c) and the
 * job's facts (oomfacts.c, facts.c). */
#include "ladder/oomlog.h"
#include "ladder/oomlog_int.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>


static bool ends_with(const char *s, size_t n, const char *suf)
{
	size_t m = strlen(suf);
	while (n && (s[n - 1] == ' '))
		n--;
	return n >= m && memcmp(s + n - m, suf, m) == 0;
}

static void mark_progress(struct sp_oomlog *p, enum sp_oom_phase ph, const char *why)
{
	p->progress = ph;
	p->tqdm_step = false;
	oom_set_why(p->progress_why, sizeof p->progress_why, why);
	if (ph == SP_PHASE_STEP)
		p->trained = true;
}

static const char *const load_frames[] = {
	"from_pretrained", "_load_pretrained_model", "load_state_dict", "_load_state_dict_into",
	"load_checkpoint", "safetensors", "load_model", "load_weights", "model_loader", "load_sharded_checkpoint",
	"in quantize_4bit", "in create_quantized_param", "in init_cuda_graphs", "in capture_model", "in profile_run",
	"in determine_num_available_blocks", "in determine_available_memory", "in _initialize_kv_caches",
	"in initialize_kv_cache",
};
/* a server's request loop: a failure under it is while serving (whatever model code runs below) */
static const char *const serve_frames[] = {
	"run_engine_loop", "in engine_step", "run_busy_loop", "step_with_batch_queue", "in sample_tokens",
	"event_loop_normal", "event_loop_overlap", "in exposed_step",
};
static const char *const step_frames[] = {
	"training_step", "_inner_training_loop", "compute_loss", "in forward", ".backward(", "in backward",
	"_engine_run_backward", "optimizer.step", "evaluation_loop", "in evaluate", "prediction_step",
	"in train_step", "in _forward", "in _call_impl",
};
static const char *const bnb_frames[] = {
	"bitsandbytes", "dequantize", "quantize_4bit", "Linear4bit", "MatMul4Bit", "Params4bit",
};

static void tb_phase_set(struct sp_oomlog *p, enum sp_oom_phase ph, const char *why)
{
	p->tb_phase = ph;
	oom_set_why(p->tb_why, sizeof p->tb_why, why);
	p->tb_last_phase = ph;
	oom_set_why(p->tb_last_why, sizeof p->tb_last_why, why);
}

static void tb_line(struct sp_oomlog *p, const char *s, size_t n)
{
	for (size_t i = 0; i < sizeof bnb_frames / sizeof bnb_frames[0]; i++)
		if (sp_has(s, n, bnb_frames[i]))
			p->tb_bnb = true;
	/* under a server's request loop every frame below is serving */
	if (p->tb_phase == SP_PHASE_SERVE)
		return;
	for (size_t i = 0; i < sizeof serve_frames / sizeof serve_frames[0]; i++)
		if (sp_has(s, n, serve_frames[i])) {
			tb_phase_set(p, SP_PHASE_SERVE, serve_frames[i]);
			return;
		}
	for (size_t i = 0; i < sizeof load_frames / sizeof load_frames[0]; i++)
		if (sp_has(s, n, load_frames[i])) {
			tb_phase_set(p, SP_PHASE_LOAD, load_frames[i]);
			return;
		}
	for (size_t i = 0; i < sizeof step_frames / sizeof step_frames[0]; i++)
		if (sp_has(s, n, step_frames[i])) {
			/* nn.Module's _call_impl is everywhere; it is a step only
			 * when nothing said load */
			if (strcmp(step_frames[i], "in _call_impl") == 0)
				continue;
			tb_phase_set(p, SP_PHASE_STEP, step_frames[i]);
			return;
		}
	if (ends_with(s, n, "in step"))
		tb_phase_set(p, SP_PHASE_STEP, "optimizer step");
}

/* tqdm's "%|" (the first), without the needle machinery: the hot path of a long log */
static const char *pct_bar(const char *s, size_t n)
{
	for (const char *q = s; (q = memchr(q, '|', (size_t)(s + n - q))); q++)
		if (q > s && q[-1] == '%')
			return q - 1;
	return NULL;
}

/* tqdm's rate: "it/s" or "s/it" */
static bool tqdm_rate(const char *s, size_t n)
{
	const char *e = s + n;
	for (const char *q = s; (q = memchr(q, '/', (size_t)(e - q))); q++) {
		if (q - s >= 2 && q[-2] == 'i' && q[-1] == 't' && q + 1 < e && q[1] == 's')
			return true;
		if (q > s && q[-1] == 's' && e - q >= 3 && q[1] == 'i' && q[2] == 't')
			return true;
	}
	return false;
}

/* tqdm: "desc:  30%|███       | 30/100 [00:10<00:23,  3.00it/s]" */
static void tqdm_line(struct sp_oomlog *p, const char *s, size_t n)
{
	if (!tqdm_rate(s, n))
		return;
	if (p->progress == SP_PHASE_SERVE)
		return;
	const char *bar = memchr(s, '|', n);
	if (!bar)
		return;
	const char *br = memchr(bar, '[', (size_t)(s + n - bar));
	const char *sl = br ? memchr(bar, '/', (size_t)(br - bar)) : NULL;
	if (!sl)
		return;
	size_t dl = (size_t)(bar - s);
	bool words = false;
	for (size_t i = 0; i < dl && !words; i++)
		words = isalpha((unsigned char)s[i]);
	static const char *const load_words[] = { "load", "shard", "capturing" };
	static const char *const prep_words[] = { "fetch", "download", "map", "token", "filter", "generat",
						  "extract", "convert", "process", "upload", "saving", "packing" };
	for (size_t i = 0; words && i < sizeof load_words / sizeof load_words[0]; i++)
		if (sp_has_ci(s, dl, load_words[i])) {
			mark_progress(p, SP_PHASE_LOAD, "while loading, by its progress bar");
			return;
		}
	for (size_t i = 0; words && i < sizeof prep_words / sizeof prep_words[0]; i++)
		if (sp_has_ci(s, dl, prep_words[i]))
			return;
	/* a serving engine's bars (requests, prompts, warm-up) are not training steps */
	if (p->engine != SP_ENGINE_UNKNOWN || p->progress == SP_PHASE_SERVE)
		return;
	mark_progress(p, SP_PHASE_STEP, "after training steps began, by its step counter");
	p->tqdm_step = true;
}

/* The prefixes a line may carry before its text, in any order and stacked:
 * a rank tag, a dmesg or CI time, a line number, Docker Compose's service
 * column ("vllm-1  | "), a pager's box rule ("│ "), vLLM's process tag,
 * vLLM's level and time. True when vLLM's logger prefix was among them. */
static bool strip_one_prefix(const char **sp, size_t *np, bool *vllm_prefix);

static bool strip_prefixes(const char **sp, size_t *np)
{
	bool vllm_prefix = false;
	for (int i = 0; i < 6 && strip_one_prefix(sp, np, &vllm_prefix); i++)
		;
	return vllm_prefix;
}

/* one prefix off the front: true when one was */
static bool strip_one_prefix(const char **sp, size_t *np, bool *vllm_prefix)
{
	const char *s = *sp;
	size_t n = *np;
	const char *s0 = s;
	/* a box rule a pager or a dashboard drew: "│ " (U+2502) */
	if (n >= 4 && (unsigned char)s[0] == 0xe2 && (unsigned char)s[1] == 0x94 && (unsigned char)s[2] == 0x82 &&
	    s[3] == ' ') {
		*sp = s + 4;
		*np = n - 4;
		return true;
	}
	/* Docker Compose's service column: "vllm-1  | ", "ollama_1 | " (a name, spaces, a bar) */
	if (n > 4 && isalnum((unsigned char)s[0])) {
		size_t w = 0;
		while (w < n && w < 48 && (isalnum((unsigned char)s[w]) || s[w] == '-' || s[w] == '_' || s[w] == '.'))
			w++;
		size_t b = w;
		while (b < n && s[b] == ' ')
			b++;
		if (b > w && b + 1 < n && s[b] == '|' && s[b + 1] == ' ' && w > 1 && isdigit((unsigned char)s[w - 1])) {
			*sp = s + b + 2;
			*np = n - b - 2;
			return true;
		}
	}
	/* drop a "[rank0]:" / "[default0]:" / "[ 1234.5678]" prefix */
	if (n > 2 && s[0] == '[') {
		const char *e = memchr(s, ']', n < 24 ? n : 24);
		if (e && (size_t)(e - s) + 1 < n && (e[1] == ':' || e[1] == ' ')) {
			e += 2;
			if (e < s + n && *e == ' ' && e[-1] == ':')
				e++;
			n -= (size_t)(e - s);
			s = e;
		}
	}
	/* vLLM's process tag "(EngineCore_DP0 pid=563) ", "(VllmWorker rank=4 pid=555) " */
	if (n > 8 && s[0] == '(') {
		const char *e = memchr(s, ')', n < 48 ? n : 48);
		if (e && (size_t)(e - s) + 1 < n && e[1] == ' ' && memmem(s, (size_t)(e - s), "pid=", 4)) {
			n -= (size_t)(e + 2 - s);
			s = e + 2;
		}
	}
	/* vLLM's level and time: "ERROR 12-23 23:34:23 [core.py:708] ", "INFO 11-18 18:07:28 engine.py:366] " */
	if (n > 24 && (s[0] == 'I' || s[0] == 'E' || s[0] == 'W' || s[0] == 'D')) {
		size_t w = 0;
		while (w < 8 && isupper((unsigned char)s[w]))
			w++;
		if (w >= 4 && s[w] == ' ' && isdigit((unsigned char)s[w + 1]) && isdigit((unsigned char)s[w + 2]) &&
		    s[w + 3] == '-') {
			const char *e = memmem(s, n < 80 ? n : 80, "] ", 2);
			if (e) {
				n -= (size_t)(e + 2 - s);
				s = e + 2;
				*vllm_prefix = true; /* vLLM's logger: "%(levelname)s %(asctime)s [%(filename)s:%(lineno)d] " */
			}
		}
	}
	*sp = s;
	*np = n;
	return s != s0;
}

/* A training loop's own progress line, of any common shape: a counter word
 * (step, iter, iteration, epoch) with a number after it, and a loss on the
 * same line: "step 1180 | loss 1.0912 | lr 2e-5", "iter 200: loss 3.21",
 * "Iteration 51 | Backbone loss 5.88", "Epoch 3 [120/500] loss=0.41",
 * "Training Epoch: 1/3, step 10/36 completed (loss: 0.52)". */
static bool counter_loss_line(const char *s, size_t n)
{
	if (!sp_has_ci(s, n, "loss"))
		return false;
	static const char *const words[] = { "step", "iter", "epoch" };
	for (size_t w = 0; w < sizeof words / sizeof words[0]; w++) {
		size_t wl = strlen(words[w]);
		for (const char *q = s; (q = sp_has_ci(q, (size_t)(s + n - q), words[w])); q += wl) {
			/* a word of its own start ("step", not "timestep"); "iteration", "steps" may follow */
			if (q > s && isalpha((unsigned char)q[-1]))
				continue;
			const char *r = q + wl;
			while (r < s + n && isalpha((unsigned char)*r))
				r++;
			while (r < s + n && (*r == ' ' || *r == ':' || *r == '=' || *r == '#' || *r == '['))
				r++;
			if (r < s + n && isdigit((unsigned char)*r))
				return true;
		}
	}
	return false;
}

/* Where the job was: the marks of each phase (any one of a table) */
static const char *const serving_marks[] = {
	"Application startup complete", "Uvicorn running on", "Avg prompt throughput", "Processed prompts",
	"fired up and ready to roll", "Decode batch.", "server is listening on", "HTTP server listening",
	"all slots are idle", "llama runner started",
};
/* a server (re)starting, or Ollama loading a model into a new runner */
static const char *const starting_marks[] = {
	"vLLM API server version", "LLM engine (v", "ServerArgs(", "text_generation_launcher: Args",
	"loaded meta data", "starting llama server", "EngineCore failed to start", "WorkerProc failed to start",
	"Engine core initialization failed",
};
static const char *const loading_marks[] = {
	"Loading checkpoint shards", "checkpoint shards", "Loading model weights", "Loading weights",
	"llm_load_tensors", "load_tensors:", "llama_model_load", "Starting to load model", "loading weights file",
	"from_pretrained", "Model loading took", "llama_new_context", "llama_context:", "llama_init_from",
	"llama_kv_cache", "Load weight",
};
static const char *const trainer_marks[] = {
	"{'loss'", "{\"loss\"", "{'train_runtime'", "{'eval_loss'", "***** Running training *****",
	"***** Running Evaluation *****",
};

/* Where the job was: serving, starting, loading, training steps (the
 * phase a later failure is placed in), and the Trainer's batch banner. */
static void progress_line(struct sp_oomlog *p, const char *s, size_t n)
{
	if (ANY(s, n, serving_marks) || (HAS(s, n, "text_generation_router") && HAS(s, n, ": Connected"))) {
		mark_progress(p, SP_PHASE_SERVE, "after the server began serving");
	} else if (ANY(s, n, starting_marks)) {
		mark_progress(p, SP_PHASE_LOAD, "while the server was starting");
	} else if (p->progress == SP_PHASE_SERVE) {
		/* serving: later lines do not turn it back into loading or training */
	} else if (ANY(s, n, loading_marks)) {
		mark_progress(p, SP_PHASE_LOAD, "while loading the model");
	} else if (ANY(s, n, trainer_marks)) {
		mark_progress(p, SP_PHASE_STEP, "after training steps began, by the Trainer's log");
	} else if (pct_bar(s, n)) {
		tqdm_line(p, s, n);
	} else if (p->engine == SP_ENGINE_UNKNOWN && counter_loss_line(s, n)) {
		mark_progress(p, SP_PHASE_STEP, "after training steps began, by its step/loss lines");
	}
	uint64_t v;
	if ((v = number_after(s, n, "Instantaneous batch size per device")))
		p->batch_per_device = v;
	if ((v = number_after(s, n, "Gradient Accumulation steps")))
		p->grad_accum = v;
	if ((v = number_after(s, n, "Total train batch size (w. parallel, distributed & accumulation)")))
		p->total_batch = v;
}

void sp_oomlog_classify_line(struct sp_oomlog *p, const char *s, size_t n)
{
	const char *raw = s;
	size_t raw_n = n;
	bool vllm_prefix = strip_prefixes(&s, &n);
	bool indented = n && (s[0] == ' ' || s[0] == '\t');
	size_t i0 = 0;
	while (i0 < n && s[i0] == ' ')
		i0++;
	if (i0 == n)
		return;

	/* Most lines of a long log are tqdm redraws: " 12%|#    | 1234/10000 [01:00<05:00,
	 * 3.00s/it]". A line whose only letters are tqdm's (i t s B k M G: "it/s", "s/it",
	 * "MB/s", "GiB") cannot hold any needle below but tqdm's own ("%|", "it/s",
	 * "s/it", "["): every other needle has a letter outside that set (keep it so).
	 * Such a line only ends a traceback and moves the progress (classify: its
	 * needle filters are not even set). */
	if (!p->text) {
		if (p->in_tb) {
			if (indented) {
				p->tb_frames = true;
				return;
			}
			if (p->tb_frames)
				p->in_tb = false;
		}
		if (pct_bar(s, n))
			tqdm_line(p, s, n);
		return;
	}
	if (sp_log_facts_line(&p->more, s, n, p->lines + 1)) /* ladder/facts.c */
		return; /* a row of Ray's table of other processes */

	/* the engine's marks anywhere in the line, its prefixes too ("(EngineCore_DP0 pid=1) "),
	 * a traceback's frames too (module paths) */
	enum sp_log_engine before = p->engine;
	sp_oomlog_engine_line(p, raw, raw_n);
	if (vllm_prefix && p->engine == SP_ENGINE_UNKNOWN)
		p->engine = SP_ENGINE_VLLM; /* vLLM's own logger prefix */
	if (p->engine != before)
		p->engine_weak = p->in_tb && (HAS(s, n, "File \"") || (n && s[0] == ' '));

	const char *tbk = HAS(s, n, "Traceback (most recent call last)");
	if (tbk) {
		/* "ResponseError('...')Traceback (most recent call last):": the text before it is a line of its own */
		if (tbk > s && !p->in_tb)
			sp_oomlog_failures_line(p, s, (size_t)(tbk - s), false);
		p->in_tb = true;
		p->tb_frames = false;
		p->tb_bnb = false;
		p->tb_phase = SP_PHASE_UNKNOWN;
		p->tb_why[0] = 0;
		return;
	}
	bool tb_exception = false;
	if (p->in_tb) {
		if (indented || HAS(s, n, "File \"")) {
			p->tb_frames = true;
			tb_line(p, s, n);
			return;
		}
		if (HAS(s, n, "During handling of") || HAS(s, n, "The above exception"))
			return;
		tb_exception = p->tb_frames;
	}
	sp_oomlog_failures_line(p, s, n, indented);
	if (tb_exception)
		p->in_tb = false;
	progress_line(p, s, n);
	sp_oomlog_facts_line(p, s, n);
	/* the start of this line, for a message wrapped onto the next (sp_oomlog_failures_line) */
	if (HAS(s, n, "Free memory on device") || HAS(s, n, "INTERNAL ASSERT FAILED")) {
		p->prev_len = n < sizeof p->prev ? n : sizeof p->prev;
		memcpy(p->prev, s, p->prev_len);
	} else {
		p->prev_len = 0;
	}
}
