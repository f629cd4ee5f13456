// SPDX-License-Identifier: MIT
/* sparkops plan — will this model, method, batch and packing fit, including
 * the load-time spike? Formulas: docs/plan.md. The command is parse (the
 * option table and the model) -> compute (the budget, the footprint and the
 * judgement, src/account/) -> render (human or JSON). */
#include <strings.h>

#include "account/footprint.h"
#include "account/budget.h"
#include "account/fit.h"
#include "account/planmodel.h"
#include "cmd/cli.h"
#include "cmd/cmdutil.h"
#include "cmd/planargs.h"
#include "model/model.h"
#include "probe/poolmodel.h"
#include "probe/probe.h"
#include "util/json.h"
#include "util/msg.h"
#include "util/opt.h"
#include "util/paths.h"
#include "util/units.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const struct sp_cmdspec spec = {
	.name = "plan",
	.usage = "usage: sparkops plan [MODEL | --config FILE | --params N] [OPTIONS]\n"
		 "\n"
		 "Estimate every term of a training or inference job's memory footprint, the\n"
		 "steady-state and load-time peaks, and compare them with the live budget (the\n"
		 "same as 'sparkops status') or --budget. When it is tight or does not fit, name\n"
		 "the cheapest change that fits, in the OOM ladder's order.\n"
		 "\n",
	.tail = "exit: 0 fits or tight, 1 does not fit, 2 usage or input error\n",
};

/* ---- parse ------------------------------------------------------------------------- */

static const char *opt_targets(void *target, const char *s)
{
	int v = sp_lora_targets_parse(s);
	if (v <= 0)
		return "is not a list of q,k,v,o,gate,up,down";
	*(unsigned *)target = (unsigned)v;
	return NULL;
}

static const char *opt_params(void *target, const char *s)
{
	double *n = target;
	if (sp_parse_count(s, n) < 0 || !(*n >= 1e3) || *n > 1e14)
		return "is not a parameter count (e.g. 70e9, 8B)";
	return NULL;
}

static const char *opt_cohost(void *target, const char *s)
{
	struct cohosts *co = target;
	if (co->n >= MAX_COHOSTS) {
		snprintf(co->err, sizeof co->err, "is one too many: at most %d servers", MAX_COHOSTS);
		return co->err;
	}
	if (sp_cohost_parse(s, strlen(s), &co->c[co->n], co->err, sizeof co->err) < 0) {
		/* the option table names the option and quotes the value: drop both */
		char *why = co->err, quoted[600];
		if (strncmp(why, "--cohost: ", 10) == 0)
			why += 10;
		int n = snprintf(quoted, sizeof quoted, "'%s' ", s);
		if (n > 0 && (size_t)n < sizeof quoted && strncmp(why, quoted, (size_t)n) == 0)
			why += n;
		return why;
	}
	co->n++;
	return NULL;
}

static const char *opt_gbps(void *target, const char *s)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end || errno || !(v > 0) || v > 1e6)
		return "is not a link speed in Gb/s (e.g. 200)";
	*(double *)target = v;
	return NULL;
}

/* --uma's words: a tristate of plan's own (1 yes, 0 no, -1 auto) */
static const struct sp_word uma_words[] = {
	{ "yes", 1, 0, NULL }, { "no", 0, 0, NULL }, { "auto", -1, 0, NULL }, { NULL, 0, 0, NULL },
};

/* The options into a; returns the first operand's index, or -1 after --help. */
static int parse_options(int argc, char **argv, struct plan_args *a)
{
	struct sp_plan_opts *p = &a->p;
	int quant = -1, ckpt = p->grad_ckpt; /* quant: enum sp_quant, -1 not given */
	const struct sp_option opts[] = {
		SP_OPT_GROUP("model (one of):"),
		SP_OPT_TEXT("MODEL", "a Hugging Face folder, a config.json, a .gguf file or a catalog name"),
		SP_OPT_IN_PATH("config", &a->config, "FILE", "a config.json alone"),
		SP_OPT_CALLBACK("params", &a->params, "N", opt_params,
				"a bare parameter count (70e9, 8B): a Llama-like shape is assumed"),
		SP_OPT_FLAG(0, "list-models", &a->list, "list the built-in catalog and exit"),
		SP_OPT_GROUP("job:"),
		SP_OPT_ENUM("method", &p->method, "M", sp_method_words, "full | lora | qlora | infer (default lora)"),
		SP_OPT_ENUM("dtype", &p->dtype, "D", sp_cdtype_words,
				"bf16 | fp16 | fp32: compute and unquantized weights (default bf16)"),
		SP_OPT_ENUM("quant", &quant, "Q", sp_quant_words, "none | int8 | nf4 | fp4: base weights (qlora implies nf4)"),
		SP_OPT_ENUM("optim", &p->optim, "O", sp_optim_words,
				"adamw | adamw8bit | paged_adamw8bit | sgd | adafactor (default adamw)"),
		SP_OPT_INT("batch", &p->batch, "N", 1, 1 << 16, "micro-batch (default 1)"),
		SP_OPT_INT("seq", &p->seq, "N", 1, 1 << 24,
			   "sequence / packing length, or the context for infer (default 2048)"),
		SP_OPT_SETINT("grad-ckpt", &ckpt, 1, "gradient checkpointing on (the default)"),
		SP_OPT_SETINT("no-grad-ckpt", &ckpt, 0, "gradient checkpointing off"),
		SP_OPT_INT("lora-rank", &p->lora_rank, "R", 1, 1 << 16, "LoRA rank (default 16)"),
		SP_OPT_CALLBACK("lora-targets", &p->lora_targets, "L", opt_targets,
				"modules, e.g. q,v or q,k,v,o,gate,up,down (default: all linear)"),
		SP_OPT_ENUM("framework", &p->framework, "F", sp_framework_words,
				"hf | unsloth | torchtune | megatron: what the stack keeps in memory\n"
				"(default hf; megatron: Megatron-core, fp32 main grads and params)"),
		SP_OPT_ENUM("attn", &p->attn, "A", sp_attn_words,
			    "sdpa (flash, the default) | eager (stores the attention scores) |\n"
			    "math (SDPA's unfused fallback: keeps the softmax output)"),
		SP_OPT_FLAG(0, "master-weights", &p->master_weights, "keep an fp32 master copy of 16-bit trainable weights"),
		SP_OPT_ENUM("loss", &p->loss, "L", sp_loss_words,
				"fp32 | bf16 | chunked: the loss buffers (default: the framework's)"),
		SP_OPT_FLAG(0, "offload-activations", &p->offload_activations,
			    "checkpoints (or every saved activation) to host memory: the same pool on UMA"),
		SP_OPT_FLAG(0, "no-double-quant", &p->no_double_quant,
			    "a 4-bit base without double quantization (bitsandbytes' load_in_4bit default)"),
		SP_OPT_FLAG(0, "bnb-legacy", &p->bnb_legacy,
			    "bitsandbytes before 0.43.2: every 4-bit linear keeps its input for backward"),
		SP_OPT_FLAG(0, "quant-lm-head", &p->quant_lm_head,
			    "a 4/8-bit base quantizes the output projection too (LitGPT: every nn.Linear)"),
		SP_OPT_INT("prompt", &p->prompt, "N", 1, 1 << 24,
			   "infer: the prompt's tokens, prefilled at once (default: the whole --seq)"),
		SP_OPT_ENUM("kv-cache", &p->kv_cache, "K", sp_kv_cache_words,
				"infer: static | dynamic | legacy: generate's cache (default dynamic,\n"
				"transformers >= 4.36; legacy: the tuple cache, old and new alive together)"),
		SP_OPT_ENUM("measure", &p->measure, "C", sp_measure_words,
				"allocated | reserved | process: the counter measure_bytes estimates\n"
				"(default process: what the pool sees, CUDA context included)"),
		SP_OPT_ENUM("padding", &p->padding, "P", sp_padding_words,
				"training: max | longest: every batch padded (or packed) to --seq, or\n"
				"each to its own longest sample: shapes vary, reserved memory grows (default max)"),
		SP_OPT_GROUP("across Sparks:"),
		SP_OPT_INT("nodes", &p->nodes, "N", 1, 64, "Sparks the job spreads over (default 1)"),
		SP_OPT_ENUM("strategy", &a->strategy, "S", sp_strategy_words,
				"ddp | fsdp (training, default fsdp) | tp | pp (serving, default tp)"),
		SP_OPT_CALLBACK("link-gbps", &a->link_gbps, "G", opt_gbps,
				"the link between nodes in Gb/s (default 200: one ConnectX-7 port)"),
		SP_OPT_GROUP("to the limit:"),
		SP_OPT_ENUM("solve", &a->solve, "W", sp_solve_words,
			    "seq | batch: the largest packing (a multiple of 64) or micro-batch that fits"),
		SP_OPT_GROUP("budget:"),
		SP_OPT_SIZE_POS("budget", &a->budget, "SIZE", "plan against SIZE instead of the live budget"),
		SP_OPT_SIZE("reserve", &a->ro.reserve, "SIZE", "kept back for the OS and driver (default 4GiB)"),
		SP_OPT_CALLBACK("cohost", &a->co, "SPEC", opt_cohost,
				"a server sharing the box: vllm:0.5 (gpu_memory_utilization),\n"
				"ollama:SIZE or ollama:FILE.gguf; repeatable"),
		SP_OPT_ENUM("uma", &a->uma, "W", uma_words, "yes | no | auto: one pool for CPU and GPU (default auto: from the GPU)"),
		SP_OPT_GROUP("output:"),
		SP_OPT_FLAG(0, "json", &a->json,
			    "one JSON object (terms, peak_bytes, load_peak_bytes, verdict, advice ...)"),
		SP_OPT_END(),
	};
	int i = sp_opt_parse(&spec, opts, argc, argv);
	/* quant is written through the table (cppcheck cannot see it) */
	// cppcheck-suppress knownConditionTrueFalse
	a->quant_given = quant >= 0;
	if (a->quant_given)
		p->quant = (enum sp_quant)quant;
	p->grad_ckpt = ckpt != 0;
	return i;
}

/* The operand, and what the options say together; a contradiction is a usage error. */
static void check_args(int i, int argc, char **argv, struct plan_args *a)
{
	struct sp_plan_opts *p = &a->p;
	a->model = i < argc ? argv[i] : NULL;
	if (i + 1 < argc)
		sp_usage_error("plan", "unexpected argument '%s'", argv[i + 1]);
	int nsrc = (a->model != NULL) + (a->config != NULL) + (a->params > 0);
	if (nsrc == 0)
		sp_usage_error("plan", "which model? give MODEL, --config FILE or --params N");
	if (nsrc > 1)
		sp_usage_error("plan", "give one model: MODEL, --config FILE or --params N");
	if (p->method == SP_METHOD_QLORA && a->quant_given && p->quant == SP_QUANT_NONE)
		sp_usage_error("plan", "--method qlora quantizes the base: --quant none contradicts it");
	if (p->method == SP_METHOD_FULL && p->quant != SP_QUANT_NONE)
		sp_usage_error("plan", "--method full trains 16/32-bit weights: --quant %s applies to lora, qlora and infer",
			       sp_quant_name(p->quant));
	if (p->method == SP_METHOD_QLORA && !a->quant_given)
		p->quant = SP_QUANT_NF4;
	if (p->bnb_legacy && (p->method == SP_METHOD_FULL || p->method == SP_METHOD_INFER ||
			      (p->quant != SP_QUANT_NF4 && p->quant != SP_QUANT_FP4)))
		sp_usage_error("plan", "--bnb-legacy describes training adapters on a 4-bit bitsandbytes base: "
			       "give --method qlora (or lora with --quant nf4|fp4)");
	if (p->quant_lm_head && (p->method == SP_METHOD_FULL || p->quant == SP_QUANT_NONE))
		sp_usage_error("plan", "--quant-lm-head quantizes the head of a 4/8-bit base: give --method qlora or --quant int8|nf4|fp4");
	if (p->prompt > 0 && p->method != SP_METHOD_INFER)
		sp_usage_error("plan", "--prompt is the prompt of --method infer: training runs --seq tokens a step");
	if (p->prompt > p->seq)
		sp_usage_error("plan", "--prompt %d is longer than the context --seq %d", p->prompt, p->seq);
	if (a->strategy >= 0)
		p->strategy = (enum sp_strategy)a->strategy;
	else if (p->nodes > 1)
		p->strategy = p->method == SP_METHOD_INFER ? SP_STRAT_TP : SP_STRAT_FSDP;
	if (a->strategy == SP_STRAT_NONE)
		sp_usage_error("plan", "--strategy none: give ddp, fsdp, tp or pp (one node needs none)");
	char why[300];
	if (sp_strategy_refused(p, why, sizeof why))
		sp_usage_error("plan", "%s", why);
	if (p->nodes == 1)
		p->strategy = SP_STRAT_NONE;
}

/* What the user typed that the plan does not take as typed, said on stderr:
 * a catalog alias that names another release, a --quant the stored weights
 * override. */
static void say_slips(const struct plan_args *a, const struct sp_model_shape *m)
{
	if (m->source == SP_SRC_CATALOG && a->model && strcasecmp(a->model, m->name) != 0 &&
	    strcasecmp(a->model, m->hf_id) != 0)
		sp_note("'%s' is planned as the catalog's %s (%s; an alias with the same shape)", a->model, m->name,
			m->hf_id[0] ? m->hf_id : "no Hugging Face id");
	if (a->quant_given && m->prequantized && a->p.method != SP_METHOD_FULL)
		sp_note("--quant %s does not apply: %s is stored pre-quantized, so its weights are planned as stored",
			sp_quant_name(a->p.quant), m->name);
}

/* ---- compute ------------------------------------------------------------------------ */

/* The budget: --budget or the live reading (the same as status's), less
 * the co-hosted servers (account/budget.h); 0, or an exit status after
 * saying why. */
static int make_budget(struct sp_plan_budget *b, struct plan_args *a)
{
	struct sp_sample *s = calloc(1, sizeof *s);
	if (!s)
		sp_die(SP_EXIT_IO, "out of memory");
	struct sp_read_opts r = a->ro;
	r.what = SP_READ_MEM | SP_READ_CGROUP | SP_READ_GPU;
	sp_sample_read(s, &r);
	char why[600];
	enum sp_budget_fail f = sp_plan_budget_make(b, s, a->budget, a->uma, a->co.c, a->co.n, why, sizeof why);
	free(s);
	switch (f) {
	case SP_BUDGET_OK:
		return 0;
	case SP_BUDGET_UNREAD:
		sp_die(SP_EXIT_USAGE, "cannot read the memory budget: '%s/meminfo' is unreadable (use --budget SIZE)",
		       sp_procfs());
	case SP_BUDGET_GPU_UNREAD:
		sp_die(SP_EXIT_USAGE, "--uma no: the GPU's memory cannot be read (%s); use --budget SIZE", why);
	default:
		sp_error("%s", why);
		return SP_EXIT_USAGE;
	}
}

/* everything the output shows */
struct plan {
	const struct sp_model_shape *m;
	struct sp_plan_opts p;
	const struct cohosts *co;
	struct sp_plan_budget b;
	struct sp_footprint f;
	struct sp_judgement j;
	double link_gbps;
	/* rung 4: a smaller catalog model of the same family that fits one node */
	char smaller[128];
	uint64_t smaller_need;
	/* --solve */
	enum sp_solve_what solve;
	struct sp_solve_answer sv;
};

/* Rung 4's smaller model: the catalog's models of m's arch smaller than m,
 * the largest that fits one node (sp_fit_smaller). */
static void find_smaller(struct plan *pl)
{
	sp_plan_smaller_model(pl->m, &pl->p, pl->b.bytes, pl->smaller, sizeof pl->smaller, &pl->smaller_need);
}

/* The budget, the footprint and the judgement; 0, or an exit status. */
static int compute(struct plan_args *a, const struct sp_model_shape *m, struct plan *pl)
{
	memset(pl, 0, sizeof *pl);
	pl->m = m;
	pl->co = &a->co;
	int rc = make_budget(&pl->b, a);
	if (rc)
		return rc;
	pl->p = a->p;
	pl->p.uma = pl->b.uma;
	sp_footprint_compute(m, &pl->p, &pl->f);
	sp_plan_judge(m, &pl->p, &pl->f, &pl->b, &pl->j);
	pl->link_gbps = a->link_gbps > 0 ? a->link_gbps : 200;
	if (pl->j.have_advice && strcmp(pl->j.advice.rung, "model") == 0)
		find_smaller(pl);
	pl->solve = a->solve;
	if (sp_solve_judged(m, &pl->p, &pl->b, pl->solve, &pl->sv) < 0)
		sp_die(SP_EXIT_IO, "out of memory");
	return 0;
}

/* ---- render: JSON ----------------------------------------------------------------------- */

/* a whole number; one past int64 (a config of 1e8 everywhere) stays a real
 * number rather than wrapping to -9223372036854775808 */
static json_t *jnum(double v)
{
	if (!isfinite(v))
		return json_null();
	if (fabs(v) >= 9.2e18)
		return json_real(v);
	return json_integer((json_int_t)llround(v));
}

static const char *saturated_what(const struct sp_footprint *f)
{
	if (!f->saturated)
		return NULL;
	return f->saturated <= SP_T_N ? sp_term_key((enum sp_term)(f->saturated - 1)) : "load";
}

static json_t *jbytes(uint64_t v)
{
	return json_integer((json_int_t)v);
}

static const char *source_name(enum sp_model_source s)
{
	static const char *n[] = { "none", "folder", "config", "gguf", "catalog", "params" };
	return (unsigned)s <= SP_SRC_PARAMS ? n[s] : "?";
}

static json_t *json_model(const struct sp_model_shape *m)
{
	json_t *mo = json_object();
	json_object_set_new(mo, "name", json_string(m->name));
	json_object_set_new(mo, "arch", json_string(m->arch));
	json_object_set_new(mo, "source", json_string(source_name(m->source)));
	json_object_set_new(mo, "path", m->path[0] ? json_string(m->path) : json_null());
	json_object_set_new(mo, "layers", json_integer(m->n_layers));
	json_object_set_new(mo, "hidden", json_integer(m->hidden));
	json_object_set_new(mo, "intermediate", json_integer(m->intermediate));
	json_object_set_new(mo, "heads", json_integer(m->n_heads));
	json_object_set_new(mo, "kv_heads", json_integer(m->n_kv_heads));
	json_object_set_new(mo, "head_dim", json_integer(m->head_dim));
	json_object_set_new(mo, "vocab", json_integer(m->vocab));
	json_object_set_new(mo, "experts", json_integer(m->n_experts));
	json_object_set_new(mo, "params_estimated", json_boolean(m->source == SP_SRC_PARAMS));
	json_object_set_new(mo, "files_read", json_integer(m->files_read));
	json_object_set_new(mo, "bytes_read", json_integer((json_int_t)m->bytes_read));
	json_object_set_new(mo, "weight_bytes", m->have_tensors ? jbytes(m->weight_bytes) : json_null());
	return mo;
}

static json_t *json_settings(const struct sp_plan_opts *p)
{
	char tg[64];
	json_t *o = json_object();
	json_object_set_new(o, "method", json_string(sp_method_name(p->method)));
	json_object_set_new(o, "dtype", json_string(sp_cdtype_name(p->dtype)));
	json_object_set_new(o, "quant", json_string(sp_quant_name(p->quant)));
	json_object_set_new(o, "optim", json_string(sp_optim_name(p->optim)));
	json_object_set_new(o, "framework", json_string(sp_framework_name(p->framework)));
	json_object_set_new(o, "attn", json_string(sp_attn_name(p->attn)));
	json_object_set_new(o, "batch", json_integer(p->batch));
	json_object_set_new(o, "seq", json_integer(p->seq));
	json_object_set_new(o, "grad_ckpt", json_boolean(p->grad_ckpt));
	json_object_set_new(o, "lora_rank", json_integer(p->lora_rank));
	json_object_set_new(o, "lora_targets", json_string(sp_lora_targets_str(p->lora_targets, tg, sizeof tg)));
	json_object_set_new(o, "master_weights", json_boolean(p->master_weights));
	json_object_set_new(o, "loss", json_string(sp_loss_name(p->loss)));
	json_object_set_new(o, "offload_activations", json_boolean(p->offload_activations));
	json_object_set_new(o, "double_quant", json_boolean(!p->no_double_quant));
	json_object_set_new(o, "bnb_legacy", json_boolean(p->bnb_legacy));
	json_object_set_new(o, "kv_cache", json_string(sp_kv_cache_name(p->kv_cache)));
	json_object_set_new(o, "prompt", json_integer(p->prompt > 0 ? p->prompt : p->seq));
	json_object_set_new(o, "measure", json_string(sp_measure_name(p->measure)));
	json_object_set_new(o, "quant_lm_head", json_boolean(p->quant_lm_head));
	json_object_set_new(o, "padding", json_string(sp_padding_name(p->padding)));
	return o;
}

/* the footprint: counts, terms, sides and peaks */
static void json_footprint(json_t *root, const struct sp_footprint *f)
{
	json_object_set_new(root, "params", jnum(f->params));
	json_object_set_new(root, "trainable_params", jnum(f->trainable_params));
	json_t *terms = json_object();
	for (int i = 0; i < SP_T_N; i++)
		json_object_set_new(terms, sp_term_key((enum sp_term)i), jbytes(f->term[i]));
	json_object_set_new(root, "terms", terms);
	json_object_set_new(root, "device_bytes", jbytes(f->device_bytes));
	json_object_set_new(root, "host_bytes", jbytes(f->host_bytes));
	json_object_set_new(root, "peak_bytes", jbytes(f->peak_bytes));
	json_object_set_new(root, "load_peak_bytes", jbytes(f->load_peak_bytes));
	json_object_set_new(root, "measure_bytes", jbytes(f->measure_bytes));
	json_object_set_new(root, "load_file_bytes", jbytes(f->load_file_bytes));
	json_object_set_new(root, "load_mapped_bytes", jbytes(f->load_mapped_bytes));
	json_object_set_new(root, "overlap_bytes", jbytes(f->overlap_bytes));
	json_object_set_new(root, "kv_cache_per_token_bytes",
			    f->kv_per_token_bytes > 0 ? jnum(f->kv_per_token_bytes) : json_null());
}

/* across nodes: the per-node terms and peaks, and the link */
static void json_nodes(json_t *root, const struct plan *pl)
{
	const struct sp_footprint *f = &pl->f;
	json_object_set_new(root, "nodes", json_integer(f->nodes));
	json_object_set_new(root, "strategy", json_string(sp_strategy_name(f->strategy)));
	json_t *terms = json_object();
	for (int i = 0; i < SP_T_N; i++)
		json_object_set_new(terms, sp_term_key((enum sp_term)i), jbytes(f->term_node[i]));
	json_object_set_new(root, "terms_per_node", terms);
	json_object_set_new(root, "per_node_overlap_bytes", jbytes(f->node_overlap_bytes));
	json_object_set_new(root, "per_node_peak_bytes", jbytes(f->node_peak_bytes));
	json_object_set_new(root, "per_node_load_peak_bytes", jbytes(f->node_load_peak_bytes));
	json_t *l = json_object();
	bool infer = pl->p.method == SP_METHOD_INFER;
	json_object_set_new(l, "gbps", json_real(pl->link_gbps));
	json_object_set_new(l, "per", json_string(infer ? "decode_step" : "optimizer_step"));
	json_object_set_new(l, "bytes_per_step", jnum(f->link_bytes));
	json_object_set_new(l, "seconds_per_step", json_real(f->link_bytes * 8 / (pl->link_gbps * 1e9)));
	if (infer && pl->p.strategy == SP_STRAT_TP && pl->m->n_layers > 0) {
		json_object_set_new(l, "all_reduces_per_step", json_integer((json_int_t)2 * pl->m->n_layers));
		json_object_set_new(l, "message_bytes", json_real((double)pl->p.batch * pl->m->hidden * 2));
		json_object_set_new(l, "bound", json_string("latency"));
	}
	json_object_set_new(root, "link", l);
}

/* the budget and the co-hosted servers */
static void json_budget(json_t *root, const struct sp_plan_budget *b, const struct cohosts *co)
{
	json_object_set_new(root, "uma", json_boolean(b->uma));
	json_object_set_new(root, "uma_source", json_string(b->uma_source));
	json_object_set_new(root, "budget_bytes", jbytes(b->bytes));
	json_object_set_new(root, "budget_source", json_string(b->source));
	json_object_set_new(root, "budget_before_cohosts_bytes", jbytes(b->raw_bytes));
	json_object_set_new(root, "budget_after_flush_bytes", b->after_flush ? jbytes(b->after_flush) : json_null());
	json_object_set_new(root, "host_budget_bytes", !b->uma && b->host_bytes ? jbytes(b->host_bytes) : json_null());
	json_t *ca = json_array();
	for (int i = 0; i < co->n; i++) {
		json_t *o = json_object();
		const struct sp_cohost *h = &co->c[i];
		json_object_set_new(o, "server", json_string(h->kind == SP_COHOST_VLLM ? "vllm" : "ollama"));
		json_object_set_new(o, "fraction", h->kind == SP_COHOST_VLLM ? json_real(h->frac) : json_null());
		json_object_set_new(o, "file", h->kind == SP_COHOST_OLLAMA_FILE ? json_string(h->path) : json_null());
		json_object_set_new(o, "bytes", jbytes(sp_cohost_bytes(h, b->pool_total)));
		json_array_append_new(ca, o);
	}
	json_object_set_new(root, "cohosts", ca);
	json_object_set_new(root, "cohosts_overcommitted", json_boolean(b->pool_total && b->cohost_bytes > b->pool_total));
}

static json_t *json_anchor(const struct sp_judgement *j)
{
	if (!j->anchor)
		return json_null();
	json_t *o = json_object();
	json_object_set_new(o, "name", json_string(j->anchor->name));
	json_object_set_new(o, "text", json_string(j->anchor->text));
	json_object_set_new(o, "figure_bytes", j->anchor->figure_bytes > 0 ? jnum(j->anchor->figure_bytes) : json_null());
	json_object_set_new(o, "counts", json_string(sp_anchor_counts(j->anchor)));
	json_object_set_new(o, "far", json_boolean(j->far));
	return o;
}

static void append_advice(json_t *a, const char *rung, const char *flags, const char *why, json_t *need)
{
	json_t *o = json_object();
	json_object_set_new(o, "rung", json_string(rung));
	json_object_set_new(o, "flags", json_string(flags));
	json_object_set_new(o, "why", json_string(why));
	json_object_set_new(o, "need_bytes", need);
	json_array_append_new(a, o);
}

static json_t *json_advice(const struct plan *pl)
{
	const struct sp_judgement *j = &pl->j;
	json_t *a = json_array();
	if (j->flush_fits)
		append_advice(a, "flush", "sync; echo 3 > /proc/sys/vm/drop_caches",
			      "the page cache holds what the job needs; a flush (root) returns it", jbytes(j->need));
	if (j->cohost_fits)
		append_advice(a, "cohost", "stop or cap the co-hosted servers",
			      "the job fits the budget the co-hosted servers keep", jbytes(j->need));
	if (j->have_advice)
		append_advice(a, j->advice.rung, j->advice.flags, j->advice.why,
			      j->advice.need_bytes ? jbytes(j->advice.need_bytes) : json_null());
	if (j->have_advice && strcmp(j->advice.rung, "model") == 0) {
		char flags[64], why[200];
		if (j->scale_nodes) {
			snprintf(flags, sizeof flags, "--nodes %d --strategy %s", j->scale_nodes,
				 sp_strategy_name(j->scale_strategy));
			snprintf(why, sizeof why, "the smallest number of Sparks that fits: per node");
			append_advice(a, "nodes", flags, why, jbytes(j->scale_node_need));
		} else {
			append_advice(a, "nodes", "", "no N <= 4 Sparks fits", json_null());
		}
		if (pl->smaller[0]) {
			snprintf(why, sizeof why, "the largest smaller model of the family that fits one node");
			append_advice(a, "smaller_model", pl->smaller, why, jbytes(pl->smaller_need));
		}
	}
	return a;
}

static json_t *json_solve(const struct plan *pl)
{
	if (pl->solve == SP_SOLVE_NONE)
		return json_null();
	json_t *o = json_object();
	bool seq = pl->solve == SP_SOLVE_SEQ;
	json_object_set_new(o, "what", json_string(sp_word_name(sp_solve_words, (int)pl->solve)));
	json_object_set_new(o, seq ? "max_seq" : "max_batch", pl->sv.value ? json_integer(pl->sv.value) : json_null());
	json_object_set_new(o, "need_bytes", pl->sv.value ? jbytes(pl->sv.need) : json_null());
	json_object_set_new(o, "verdict", pl->sv.value ? json_string("fits") : json_null());
	/* one step past the answer (the smallest value when none fits), and its verdict */
	json_object_set_new(o, "next", json_integer(pl->sv.next));
	json_object_set_new(o, "next_verdict", json_string(sp_verdict_name(pl->sv.next_verdict)));
	json_object_set_new(o, "next_need_bytes", jbytes(pl->sv.next_need));
	return o;
}

static void render_json(const struct plan *pl)
{
	const struct sp_judgement *j = &pl->j;
	json_t *root = json_object();
	json_object_set_new(root, "version", json_string(SPARKOPS_VERSION));
	json_object_set_new(root, "model", json_model(pl->m));
	json_t *js = json_settings(&pl->p);
	{
		char tg[64];
		unsigned ct = sp_lora_targets_counted(pl->m, pl->p.lora_targets);
		json_object_set_new(js, "lora_targets_counted", json_string(sp_lora_targets_str(ct, tg, sizeof tg)));
	}
	json_object_set_new(root, "settings", js);
	json_footprint(root, &pl->f);
	json_budget(root, &pl->b, pl->co);
	json_object_set_new(root, "need_bytes", jbytes(j->need));
	json_object_set_new(root, "tight_margin_bytes", jbytes(sp_tight_margin(j->need)));
	json_object_set_new(root, "verdict", json_string(sp_verdict_name(j->verdict)));
	json_object_set_new(root, "host_exceeds_system_memory", json_boolean(j->host_short));
	json_object_set_new(root, "anchor", json_anchor(j));
	if (j->anchor)
		json_object_set_new(json_object_get(root, "anchor"), "plan_bytes",
				    jbytes(sp_anchor_plan_bytes(j->anchor, &pl->f)));
	json_object_set_new(root, "advice", json_advice(pl));
	json_nodes(root, pl);
	json_object_set_new(root, "solve", json_solve(pl));
	json_t *w = json_array();
	if (pl->m->assumed[0])
		json_array_append_new(w, json_string(pl->m->assumed));
	json_object_set_new(root, "warnings", w);
	json_object_set_new(root, "note", pl->f.note[0] ? json_string(pl->f.note) : json_null());
	const char *sat = saturated_what(&pl->f);
	json_object_set_new(root, "saturated_term", sat ? json_string(sat) : json_null());
	sp_json_print(stdout, root);
	json_decref(root);
}

/* ---- render: people ----------------------------------------------------------------------- */

struct style {
	bool col;
	const char *bold, *off;
};

static void print_bar(const char *label, uint64_t v, uint64_t budget, bool col)
{
	const int W = 40;
	char b1[32];
	if (!budget) {
		/* nothing left to compare with: no percentage to make up */
		printf("  %-11s [", label);
		for (int i = 0; i < W; i++)
			putchar('#');
		printf("]%s %10s  over: the budget is 0\n", col ? "\033[31m>\033[0m" : ">",
		       sp_fmt_gib(b1, sizeof b1, (double)v));
		return;
	}
	double r = (double)v / (double)budget;
	int n = (int)lround(r * W);
	if (n > W)
		n = W;
	if (n < 0)
		n = 0;
	printf("  %-11s [", label);
	for (int i = 0; i < W; i++)
		putchar(i < n ? '#' : '.');
	printf("]%s %10s  %3.0f%%%s\n", r > 1 ? (col ? "\033[31m>\033[0m" : ">") : " ",
	       sp_fmt_gib(b1, sizeof b1, (double)v), r * 100, r > 1 ? " of the budget: over" : " of the budget");
}

static const char *term_words(enum sp_term t)
{
	switch (t) {
	case SP_T_WEIGHTS: return "base weights on the device";
	case SP_T_KBIT_UPCAST: return "HF prepare_model_for_kbit_training: unquantized params to fp32";
	case SP_T_ADAPTER: return "LoRA A/B matrices";
	case SP_T_GRADIENTS: return "of trainable params";
	case SP_T_OPTIMIZER: return "state of trainable params";
	case SP_T_MASTER: return "fp32 copy of trainable params";
	case SP_T_ACTIVATIONS: return "saved for backward";
	case SP_T_ACT_OFFLOADED: return "checkpoints offloaded to host (same pool on UMA)";
	case SP_T_LOGITS: return "logits and loss buffers";
	case SP_T_KV_CACHE: return "layers x kv_heads x head_dim x seq x batch x 2 x bytes";
	case SP_T_DEQUANT: return "transient dequantization of the widest linear";
	case SP_T_CUDA_CONTEXT: return "CUDA context and library workspaces";
	case SP_T_ALLOCATOR: return "caching-allocator slack";
	case SP_T_HOST_PROCESS: return "Python, torch, tokenizer, dataloader workers, pinned buffers";
	case SP_T_COMM: return "all-gather / all-reduce buffers across nodes";
	default: return "";
	}
}

/* the model and the job's settings */
static void print_head(const struct plan *pl, const struct style *st)
{
	const struct sp_model_shape *m = pl->m;
	const struct sp_plan_opts *p = &pl->p;
	const struct sp_footprint *f = &pl->f;
	char tg[64];
	if (m->source == SP_SRC_PARAMS)
		printf("%ssparkops plan%s  %s  (a Llama-like shape estimated from the count: %d layers x %d)\n", st->bold,
		       st->off, m->name, m->n_layers, m->hidden);
	else
		printf("%ssparkops plan%s  %s  (%s, %.2fB params)\n", st->bold, st->off, m->name, m->arch, f->params / 1e9);
	printf("  %s, %s", sp_method_name(p->method), sp_cdtype_name(p->dtype));
	if (f->quantized_params > 0)
		printf(" on a %s base",
		       m->prequantized ? "pre-quantized" : sp_quant_name(p->quant == SP_QUANT_NONE ? SP_QUANT_NF4 : p->quant));
	/* inference has no backward pass: no checkpointing, no optimizer */
	if (p->method == SP_METHOD_INFER)
		printf(", batch %d x seq %d, framework %s", p->batch, p->seq, sp_framework_name(p->framework));
	else
		printf(", batch %d x seq %d, grad-ckpt %s, %s, framework %s", p->batch, p->seq,
		       p->grad_ckpt ? "on" : "off", sp_optim_name(p->optim), sp_framework_name(p->framework));
	if (p->method == SP_METHOD_LORA || p->method == SP_METHOD_QLORA)
	{
		/* name what the trainable count counts: a requested target that is no
		 * Linear layer on this model is said, not listed as adapted */
		unsigned ct = sp_lora_targets_counted(m, p->lora_targets);
		printf(", LoRA r=%d on %s", p->lora_rank, ct ? sp_lora_targets_str(ct, tg, sizeof tg) : "nothing");
		if (ct != p->lora_targets) {
			char dr[64];
			sp_lora_targets_str(p->lora_targets & ~ct, dr, sizeof dr);
			bool fused = m->n_experts > 0 && strcasecmp(m->arch, "gpt_oss") == 0;
			printf(" (%s: %s)", dr,
			       fused ? "gpt-oss's experts are fused 3-D weights, not Linear layers: not adapted, not counted"
				     : "no such module on this model: not counted");
		}
	}
	printf("\n  trainable %.0f params (%.3f%%)\n", f->trainable_params, 100 * f->trainable_params / f->params);
}

static void print_terms(const struct plan *pl, const struct style *st)
{
	const struct sp_footprint *f = &pl->f;
	char g1[32];
	printf("\n%sTERMS%s%s\n", st->bold, st->off, pl->b.uma ? "  (unified memory: device and host share one pool)" : "");
	for (int i = 0; i < SP_T_N; i++) {
		if (!f->term[i])
			continue;
		printf("  %-22s %10s  %-6s %s\n", sp_term_key((enum sp_term)i), sp_fmt_gib(g1, sizeof g1, (double)f->term[i]),
		       sp_term_is_host((enum sp_term)i) ? "host" : "device",
		       i == SP_T_ACTIVATIONS && pl->p.method == SP_METHOD_INFER ? "forward-pass working set (nothing kept for backward)"
										: term_words((enum sp_term)i));
	}
	if (f->overlap_bytes)
		printf("  %-22s %10s  %-6s %s\n", "not live at once", sp_fmt_gib(g1, sizeof g1, -(double)f->overlap_bytes), "device",
		       f->overlap_bytes == f->step_phase_bytes
			       ? "gradients (and the optimizer's step copy) come as activations and loss buffers go"
			       : "activations and loss buffers are freed before the gradients are complete");
	printf("  %-22s %10s\n", "device side", sp_fmt_gib(g1, sizeof g1, (double)f->device_bytes));
	printf("  %-22s %10s\n", "host side", sp_fmt_gib(g1, sizeof g1, (double)f->host_bytes));
	if (f->kv_per_token_bytes > 0)
		printf("  KV cache per token of one sequence: %s (x --max-model-len x --max-num-seqs = the cache)\n",
		       sp_fmt_gib(g1, sizeof g1, f->kv_per_token_bytes));
}

/* across nodes: each node's terms, peaks and the link */
static void print_nodes(const struct plan *pl, const struct style *st)
{
	const struct sp_footprint *f = &pl->f;
	char g1[32], g2[32];
	if (f->nodes <= 1)
		return;
	printf("\n%sPER NODE%s  %d Sparks, %s%s\n", st->bold, st->off, f->nodes, sp_strategy_name(f->strategy),
	       f->strategy == SP_STRAT_DDP ? " (a full replica on every node: DDP saves no memory)" : "");
	for (int i = 0; i < SP_T_N; i++) {
		if (!f->term_node[i])
			continue;
		printf("  %-22s %10s%s\n", sp_term_key((enum sp_term)i), sp_fmt_gib(g1, sizeof g1, (double)f->term_node[i]),
		       f->term_node[i] != f->term[i] ? "  (split or added across nodes)" : "");
	}
	if (f->node_overlap_bytes)
		printf("  %-22s %10s\n", "not live at once", sp_fmt_gib(g1, sizeof g1, -(double)f->node_overlap_bytes));
	printf("  per-node peak %s, load peak %s\n", sp_fmt_gib(g1, sizeof g1, (double)f->node_peak_bytes),
	       sp_fmt_gib(g2, sizeof g2, (double)f->node_load_peak_bytes));
	char dt[32];
	const double secs = f->link_bytes * 8 / (pl->link_gbps * 1e9);
	if (secs >= 1)
		snprintf(dt, sizeof dt, "%.2f s", secs);
	else if (secs >= 1e-3)
		snprintf(dt, sizeof dt, "%.2f ms", secs * 1e3);
	else
		snprintf(dt, sizeof dt, "%.1f us", secs * 1e6);
	if (pl->p.method == SP_METHOD_INFER && pl->p.strategy == SP_STRAT_TP && pl->m->n_layers > 0) {
		/* decode: 2 small all-reduces a layer a token, so each one's round
		 * trips on the link, not its bandwidth, set the pace */
		const int ar = 2 * pl->m->n_layers;
		printf("  link: each decode step makes %d all-reduces (2 a layer) of %s each; each node sends %s a "
		       "step, %s of the link's %.0f Gb/s: decode over TP is latency-bound (%d link round trips a "
		       "token), not bandwidth-bound\n",
		       ar, sp_fmt_gib(g2, sizeof g2, (double)pl->p.batch * pl->m->hidden * 2),
		       sp_fmt_gib(g1, sizeof g1, f->link_bytes), dt, pl->link_gbps, ar);
	} else {
		printf("  link: each node sends %s per %s: %s at %.0f Gb/s\n", sp_fmt_gib(g1, sizeof g1, f->link_bytes),
		       pl->p.method == SP_METHOD_INFER ? "decode step" : "optimizer step", dt, pl->link_gbps);
	}
}

static void print_peaks(const struct plan *pl, const struct style *st)
{
	const struct sp_plan_budget *b = &pl->b;
	const struct sp_footprint *f = &pl->f;
	char g1[32], g2[32], g3[32];
	printf("\n%sPEAKS%s against the budget of %s (%s%s%s)\n", st->bold, st->off,
	       sp_fmt_gib(g1, sizeof g1, (double)b->bytes), b->source, b->cohost_bytes ? ", minus " : "",
	       b->cohost_bytes ? sp_fmt_gib(g2, sizeof g2, (double)b->cohost_bytes) : "");
	if (b->cohost_bytes)
		printf("  co-hosted servers keep %s; the budget before them was %s\n", g2,
		       sp_fmt_gib(g3, sizeof g3, (double)b->raw_bytes));
	if (b->pool_total && b->cohost_bytes > b->pool_total)
		printf("  %sOVER-COMMITTED%s: the co-hosted servers' caps add up to %s, %.0f%% of the %s pool: they cannot "
		       "all start\n",
		       st->bold, st->off, sp_fmt_gib(g2, sizeof g2, (double)b->cohost_bytes),
		       100.0 * (double)b->cohost_bytes / (double)b->pool_total, sp_fmt_gib(g3, sizeof g3, (double)b->pool_total));
	print_bar(b->uma ? "steady" : "steady dev", f->peak_bytes, b->bytes, st->col);
	print_bar(b->uma ? "load" : "load dev", f->load_peak_bytes, b->bytes, st->col);
	printf("  the load maps %s at a time and reads %s through the page cache (clean pages: the kernel reclaims them under pressure, a flush returns them)\n",
	       sp_fmt_gib(g1, sizeof g1, (double)f->load_mapped_bytes), sp_fmt_gib(g2, sizeof g2, (double)f->load_file_bytes));
	if (!b->uma && b->host_bytes)
		printf("  host side %s against %s of system memory%s\n", sp_fmt_gib(g1, sizeof g1, (double)f->host_bytes),
		       sp_fmt_gib(g2, sizeof g2, (double)b->host_bytes), pl->j.host_short ? ": TOO MUCH" : "");
}

/* the anchor, the verdict and the advice */
static void print_verdict(const struct plan *pl, const struct style *st)
{
	const struct sp_judgement *j = &pl->j;
	const struct sp_plan_budget *b = &pl->b;
	char g1[32], g2[32];
	if (j->anchor) {
		const char *c = sp_anchor_counts(j->anchor);
		uint64_t pb = sp_anchor_plan_bytes(j->anchor, &pl->f);
		printf("\nanchor: %s (%s); this plan's %s: %s (%.1f GB)%s\n", j->anchor->text,
		       strcmp(c, "weights") == 0 ? "the weights only" : strcmp(c, "peak") == 0 ? "a measured peak" : "the peak against a Spark's pool",
		       strcmp(c, "weights") == 0 ? "weights" : "peak", sp_fmt_gib(g1, sizeof g1, (double)pb), (double)pb / 1e9,
		       j->far ? "  -- WARNING: this estimate is far from it; recheck dtype and method" : "");
	}
	printf("\n%sverdict: %s%s", st->bold, sp_verdict_name(j->verdict), st->off);
	if (j->verdict == SP_TIGHT)
		printf(" (less than %s of headroom)", sp_fmt_gib(g1, sizeof g1, (double)sp_tight_margin(j->need)));
	printf("  needs %s of %s\n", sp_fmt_gib(g1, sizeof g1, (double)j->need), sp_fmt_gib(g2, sizeof g2, (double)b->bytes));
	if (saturated_what(&pl->f))
		printf("why: the %s term is beyond any machine (over 4 EiB: the arithmetic stops there), so no budget fits this job as given\n",
		       saturated_what(&pl->f));
	if (j->flush_fits)
		printf("advice: flush the page cache first (sync; echo 3 > /proc/sys/vm/drop_caches, root): the budget becomes %s\n",
		       sp_fmt_gib(g1, sizeof g1, (double)b->after_flush));
	if (j->cohost_fits)
		printf("advice: stop or cap the co-hosted servers (they keep %s; without them the job fits)\n",
		       sp_fmt_gib(g1, sizeof g1, (double)b->cohost_bytes));
	if (j->have_advice) {
		const struct sp_advice *adv = &j->advice;
		if (adv->need_bytes)
			printf("advice: %s  -> needs %s (%s)\n", adv->flags, sp_fmt_gib(g1, sizeof g1, (double)adv->need_bytes),
			       adv->why);
		else
			printf("advice: %s (%s)\n", adv->flags, adv->why);
		if (strcmp(adv->rung, "model") == 0) {
			if (j->scale_nodes)
				printf("advice: --nodes %d --strategy %s  -> needs %s per node\n", j->scale_nodes,
				       sp_strategy_name(j->scale_strategy), sp_fmt_gib(g1, sizeof g1, (double)j->scale_node_need));
			else
				printf("advice: no N <= 4 Sparks fits this job as given\n");
			if (pl->smaller[0])
				printf("advice: %s (the largest smaller model of the family that fits one node)  -> needs %s\n",
				       pl->smaller, sp_fmt_gib(g1, sizeof g1, (double)pl->smaller_need));
		}
	}
	if (pl->solve != SP_SOLVE_NONE) {
		const char *w = pl->solve == SP_SOLVE_SEQ ? "packing length (--seq)" : "micro-batch (--batch)";
		const char *flag = pl->solve == SP_SOLVE_SEQ ? "--seq" : "--batch";
		if (pl->sv.value)
			printf("solve: the largest %s whose verdict is fits: %d  -> needs %s; one step up, %s %d: %s "
			       "(needs %s)\n", w, pl->sv.value, sp_fmt_gib(g1, sizeof g1, (double)pl->sv.need), flag,
			       pl->sv.next, sp_verdict_name(pl->sv.next_verdict),
			       sp_fmt_gib(g2, sizeof g2, (double)pl->sv.next_need));
		else
			printf("solve: no %s fits, not even the smallest (%s %d: %s, needs %s)\n", w, flag, pl->sv.next,
			       sp_verdict_name(pl->sv.next_verdict), sp_fmt_gib(g2, sizeof g2, (double)pl->sv.next_need));
	}
	if (pl->m->assumed[0])
		printf("warning: %s\n", pl->m->assumed);
	if (pl->f.note[0])
		printf("note: %s\n", pl->f.note);
}

static void render_human(const struct plan *pl)
{
	bool col = sp_color(1);
	struct style st = { col, col ? "\033[1m" : "", col ? "\033[0m" : "" };
	print_head(pl, &st);
	print_terms(pl, &st);
	print_peaks(pl, &st);
	print_nodes(pl, &st);
	print_verdict(pl, &st);
}

/* ---- the command ------------------------------------------------------------------------- */

static int list_models(bool json)
{
	struct sp_catalog_entry *e = NULL;
	size_t n = 0;
	char err[512];
	if (sp_catalog_list(&e, &n, err, sizeof err) < 0) {
		sp_error("%s", err);
		return SP_EXIT_USAGE;
	}
	if (json) {
		json_t *a = json_array();
		for (size_t i = 0; i < n; i++) {
			json_t *o = json_object();
			json_object_set_new(o, "name", json_string(e[i].name));
			json_object_set_new(o, "hf", json_string(e[i].hf_id));
			json_object_set_new(o, "arch", json_string(e[i].arch));
			json_object_set_new(o, "params", jnum(e[i].params));
			json_object_set_new(o, "params_active", jnum(e[i].params_active));
			json_object_set_new(o, "aliases", json_string(e[i].aliases));
			json_array_append_new(a, o);
		}
		sp_json_print(stdout, a);
		json_decref(a);
	} else {
		printf("%-28s %9s %9s  %-14s %s\n", "NAME", "PARAMS", "ACTIVE", "ARCH", "HUGGING FACE");
		for (size_t i = 0; i < n; i++)
			printf("%-28s %8.2fB %8.2fB  %-14s %s\n", e[i].name, e[i].params / 1e9, e[i].params_active / 1e9,
			       e[i].arch, e[i].hf_id);
	}
	free(e);
	return SP_EXIT_OK;
}

void sp_plan_args_init(struct plan_args *a)
{
	memset(a, 0, sizeof *a);
	sp_plan_opts_init(&a->p);
	sp_read_opts_init(&a->ro);
	a->uma = -1;
	a->strategy = -1;
}

int sp_plan_args_parse(int argc, char **argv, struct plan_args *a)
{
	int i = parse_options(argc, argv, a);
	if (i < 0)
		return -1;
	check_args(i, argc, argv, a);
	return 0;
}

int cmd_plan(int argc, char **argv)
{
	struct plan_args a;
	sp_plan_args_init(&a);
	int i = parse_options(argc, argv, &a);
	if (i < 0)
		return 0;
	if (a.list)
		return list_models(a.json);
	check_args(i, argc, argv, &a);

	char err[600];
	struct sp_model_shape *m = sp_plan_load_model(a.model, a.config, a.params, err, sizeof err);
	if (!m) {
		sp_error("%s", err);
		return SP_EXIT_USAGE;
	}
	say_slips(&a, m);
	struct plan pl;
	int rc = compute(&a, m, &pl);
	if (rc == 0) {
		if (a.json)
			render_json(&pl);
		else
			render_human(&pl);
		rc = pl.j.verdict == SP_NO ? SP_EXIT_TROUBLE : SP_EXIT_OK;
	}
	free(m);
	return rc;
}
