// SPDX-License-Identifier: MIT
/* sparkops plan — will this model, method, batch and packing fit, including
 * the load-time spike? Formulas: docs/plan.md. */
#include "account/footprint.h"
#include "account/plan.h"
#include "cmd/cli.h"
#include "cmd/cmdutil.h"
#include "model/model.h"
#include "probe/probe.h"
#include "util/json.h"
#include "util/msg.h"
#include "util/paths.h"
#include "util/units.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char help[] =
	"usage: sparkops plan [MODEL | --config FILE | --params N] [OPTIONS]\n"
	"\n"
	"Estimate every term of a training or inference job's memory footprint, the\n"
	"steady-state and load-time peaks, and compare them with the live budget (the\n"
	"same as 'sparkops status') or --budget. When it is tight or does not fit, name\n"
	"the cheapest change that fits, in the OOM ladder's order.\n"
	"\n"
	"model (one of):\n"
	"  MODEL                a Hugging Face folder, a config.json, a .gguf file or a catalog name\n"
	"      --config FILE    a config.json alone\n"
	"      --params N       a bare parameter count (70e9, 8B): a Llama-like shape is assumed\n"
	"      --list-models    list the built-in catalog and exit\n"
	"\n"
	"job:\n"
	"      --method M       full | lora | qlora | infer (default lora)\n"
	"      --dtype D        bf16 | fp16 | fp32: compute and unquantized weights (default bf16)\n"
	"      --quant Q        none | int8 | nf4 | fp4: base weights (qlora implies nf4)\n"
	"      --optim O        adamw | adamw8bit | paged_adamw8bit | sgd | adafactor (default adamw)\n"
	"      --batch N        micro-batch (default 1)\n"
	"      --seq N          sequence / packing length, or the context for infer (default 2048)\n"
	"      --grad-ckpt      gradient checkpointing on (the default)\n"
	"      --no-grad-ckpt   gradient checkpointing off\n"
	"      --lora-rank R    LoRA rank (default 16)\n"
	"      --lora-targets L modules, e.g. q,v or q,k,v,o,gate,up,down (default: all linear)\n"
	"      --framework F    hf | unsloth | torchtune: what the stack keeps in memory (default hf)\n"
	"      --attn A         sdpa (flash, the default) | eager (stores the attention scores)\n"
	"      --master-weights keep an fp32 master copy of 16-bit trainable weights\n"
	"\n"
	"budget:\n"
	"      --budget SIZE    plan against SIZE instead of the live budget\n"
	"      --reserve SIZE   kept back for the OS and driver (default 4GiB)\n"
	"      --cohost SPEC    a server sharing the box: vllm:0.5 (gpu_memory_utilization),\n"
	"                       ollama:SIZE or ollama:FILE.gguf; repeatable\n"
	"      --uma W          yes | no | auto: one pool for CPU and GPU (default auto: from the GPU)\n"
	"\n"
	"output:\n"
	"      --json           one JSON object (terms, peak_bytes, load_peak_bytes, verdict, advice ...)\n"
	SP_COMMON_HELP
	"\n"
	"exit: 0 fits or tight, 1 does not fit, 2 usage or input error\n";

enum {
	O_METHOD = 2001, O_DTYPE, O_QUANT, O_OPTIM, O_BATCH, O_SEQ, O_CKPT, O_NOCKPT, O_RANK, O_TARGETS,
	O_FW, O_ATTN, O_MASTER, O_BUDGET, O_RESERVE, O_COHOST, O_UMA, O_JSON, O_PARAMS, O_CONFIG, O_LIST,
};

#define MAX_COHOSTS 8

struct budget {
	uint64_t bytes;          /* what the job can count on (device side on discrete) */
	uint64_t raw_bytes;      /* before the co-hosted servers */
	uint64_t after_flush;    /* live: plus what a cache flush returns (0: unknown) */
	uint64_t host_bytes;     /* discrete: system memory for the host side (0: unknown) */
	uint64_t pool_total;     /* for vllm:FRACTION */
	uint64_t cohost_bytes;
	const char *source;      /* "live", "--budget" */
	bool uma;
	const char *uma_source;  /* "--uma", "detected", "no GPU" */
};

static int parse_int(const char *flag, const char *v, int lo, int hi)
{
	char *end;
	long n = strtol(v, &end, 10);
	if (end == v || *end || n < lo || n > hi)
		sp_usage_error("plan", "%s: '%s' is not a whole number in %d..%d", flag, v, lo, hi);
	return (int)n;
}

static json_t *jnum(double v)
{
	return json_integer((json_int_t)llround(v));
}

static void print_bar(const char *label, uint64_t v, uint64_t budget, bool col)
{
	const int W = 40;
	char b1[32];
	double r = budget ? (double)v / (double)budget : 2.0;
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
	default: return "";
	}
}

static void read_budget(struct budget *b, const struct sp_read_opts *ro, int uma_flag, bool have_budget,
			uint64_t budget_flag)
{
	struct sp_sample *s = calloc(1, sizeof *s);
	if (!s)
		sp_die(SP_EXIT_IO, "out of memory");
	struct sp_read_opts r = *ro;
	r.what = SP_READ_MEM | SP_READ_CGROUP | SP_READ_GPU;
	sp_sample_read(s, &r);
	bool detected_uma = s->ngpu == 0 || sp_sample_is_uma(s);
	b->uma = uma_flag >= 0 ? uma_flag : detected_uma;
	b->uma_source = uma_flag >= 0 ? "--uma" : s->ngpu == 0 ? "no GPU found: system memory" : "detected from the GPU";
	uint64_t mem_total = s->mem.why == SP_OK && sp_mi_has(&s->mem, SP_MI_TOTAL) ? s->mem.v[SP_MI_TOTAL] : 0;
	if (have_budget) {
		b->bytes = budget_flag;
		b->source = "--budget";
		b->pool_total = budget_flag; /* vllm:FRACTION is a share of what was given */
		b->host_bytes = sp_ok(s->budget.now.why) ? s->budget.now.v : 0;
	} else {
		b->source = "live";
		if (!sp_ok(s->budget.now.why)) {
			free(s);
			sp_die(SP_EXIT_USAGE, "cannot read the memory budget: '%s/meminfo' is unreadable (use --budget SIZE)",
			       sp_procfs());
		}
		if (b->uma) {
			b->bytes = s->budget.now.v;
			b->after_flush = sp_ok(s->budget.after_flush.why) ? s->budget.after_flush.v : 0;
			b->pool_total = mem_total;
		} else {
			const struct sp_gpu *g = s->ngpu > 0 ? &s->gpus[0] : NULL;
			if (!g || !sp_ok(g->mem_free.why)) {
				const char *why = g ? sp_why_text(g->mem_free.why) : sp_why_text(s->gpu_status);
				free(s);
				sp_die(SP_EXIT_USAGE, "--uma no: the GPU's memory cannot be read (%s); use --budget SIZE", why);
			}
			b->bytes = g->mem_free.v;
			b->pool_total = sp_ok(g->mem_total.why) ? g->mem_total.v : g->mem_free.v;
			b->host_bytes = s->budget.now.v;
		}
	}
	b->raw_bytes = b->bytes;
	free(s);
}

static void add_settings(json_t *o, const struct sp_plan_opts *p)
{
	char tg[64];
	json_object_set_new(o, "method", json_string(sp_method_name(p->method)));
	json_object_set_new(o, "dtype", json_string(sp_cdtype_name(p->dtype)));
	json_object_set_new(o, "quant", json_string(sp_quant_name(p->quant)));
	json_object_set_new(o, "optim", json_string(sp_optim_name(p->optim)));
	json_object_set_new(o, "framework", json_string(sp_framework_name(p->framework)));
	json_object_set_new(o, "attn", json_string(p->attn == SP_ATTN_EAGER ? "eager" : "sdpa"));
	json_object_set_new(o, "batch", json_integer(p->batch));
	json_object_set_new(o, "seq", json_integer(p->seq));
	json_object_set_new(o, "grad_ckpt", json_boolean(p->grad_ckpt));
	json_object_set_new(o, "lora_rank", json_integer(p->lora_rank));
	json_object_set_new(o, "lora_targets", json_string(sp_lora_targets_str(p->lora_targets, tg, sizeof tg)));
	json_object_set_new(o, "master_weights", json_boolean(p->master_weights));
}

static const char *source_name(enum sp_model_source s)
{
	static const char *n[] = { "none", "folder", "config", "gguf", "catalog", "params" };
	return (unsigned)s <= SP_SRC_PARAMS ? n[s] : "?";
}

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

int cmd_plan(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "method", required_argument, NULL, O_METHOD },
		{ "dtype", required_argument, NULL, O_DTYPE },
		{ "quant", required_argument, NULL, O_QUANT },
		{ "optim", required_argument, NULL, O_OPTIM },
		{ "batch", required_argument, NULL, O_BATCH },
		{ "seq", required_argument, NULL, O_SEQ },
		{ "grad-ckpt", no_argument, NULL, O_CKPT },
		{ "no-grad-ckpt", no_argument, NULL, O_NOCKPT },
		{ "lora-rank", required_argument, NULL, O_RANK },
		{ "lora-targets", required_argument, NULL, O_TARGETS },
		{ "framework", required_argument, NULL, O_FW },
		{ "attn", required_argument, NULL, O_ATTN },
		{ "master-weights", no_argument, NULL, O_MASTER },
		{ "budget", required_argument, NULL, O_BUDGET },
		{ "reserve", required_argument, NULL, O_RESERVE },
		{ "cohost", required_argument, NULL, O_COHOST },
		{ "uma", required_argument, NULL, O_UMA },
		{ "json", no_argument, NULL, O_JSON },
		{ "params", required_argument, NULL, O_PARAMS },
		{ "config", required_argument, NULL, O_CONFIG },
		{ "list-models", no_argument, NULL, O_LIST },
		SP_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct sp_plan_opts p;
	sp_plan_opts_init(&p);
	struct sp_read_opts ro;
	sp_read_opts_init(&ro);
	bool json = false, have_budget = false, quant_given = false, list = false;
	uint64_t budget_flag = 0;
	int uma_flag = -1;
	double params = 0;
	const char *config = NULL;
	struct sp_cohost cohosts[MAX_COHOSTS];
	int ncohost = 0;
	char err[600];
	int c, v;
	sp_opt_begin();
	while ((c = getopt_long(argc, argv, SP_OPTSTRING, opts, NULL)) != -1) {
		if (sp_common_opt(c, optarg))
			continue;
		switch (c) {
		case O_METHOD:
			if ((v = sp_method_parse(optarg)) < 0)
				sp_usage_error("plan", "--method: '%s' is not full, lora, qlora or infer", optarg);
			p.method = (enum sp_method)v;
			break;
		case O_DTYPE:
			if ((v = sp_cdtype_parse(optarg)) < 0)
				sp_usage_error("plan", "--dtype: '%s' is not bf16, fp16 or fp32", optarg);
			p.dtype = (enum sp_cdtype)v;
			break;
		case O_QUANT:
			if ((v = sp_quant_parse(optarg)) < 0)
				sp_usage_error("plan", "--quant: '%s' is not none, int8, nf4 or fp4", optarg);
			p.quant = (enum sp_quant)v;
			quant_given = true;
			break;
		case O_OPTIM:
			if ((v = sp_optim_parse(optarg)) < 0)
				sp_usage_error("plan", "--optim: '%s' is not adamw, adamw8bit, paged_adamw8bit, sgd or adafactor",
					       optarg);
			p.optim = (enum sp_optim)v;
			break;
		case O_BATCH:
			p.batch = parse_int("--batch", optarg, 1, 1 << 16);
			break;
		case O_SEQ:
			p.seq = parse_int("--seq", optarg, 1, 1 << 24);
			break;
		case O_CKPT:
			p.grad_ckpt = true;
			break;
		case O_NOCKPT:
			p.grad_ckpt = false;
			break;
		case O_RANK:
			p.lora_rank = parse_int("--lora-rank", optarg, 1, 1 << 16);
			break;
		case O_TARGETS:
			if ((v = sp_lora_targets_parse(optarg)) <= 0)
				sp_usage_error("plan", "--lora-targets: '%s' is not a list of q,k,v,o,gate,up,down", optarg);
			p.lora_targets = (unsigned)v;
			break;
		case O_FW:
			if ((v = sp_framework_parse(optarg)) < 0)
				sp_usage_error("plan", "--framework: '%s' is not hf, unsloth or torchtune", optarg);
			p.framework = (enum sp_framework)v;
			break;
		case O_ATTN:
			if (strcmp(optarg, "sdpa") == 0 || strcmp(optarg, "flash") == 0)
				p.attn = SP_ATTN_SDPA;
			else if (strcmp(optarg, "eager") == 0)
				p.attn = SP_ATTN_EAGER;
			else
				sp_usage_error("plan", "--attn: '%s' is not sdpa or eager", optarg);
			break;
		case O_MASTER:
			p.master_weights = true;
			break;
		case O_BUDGET:
			if (sp_parse_size(optarg, &budget_flag) < 0 || budget_flag == 0)
				sp_usage_error("plan", "--budget: '%s' is not a size (e.g. 100GiB)", optarg);
			have_budget = true;
			break;
		case O_RESERVE:
			if (sp_parse_size(optarg, &ro.reserve) < 0)
				sp_usage_error("plan", "--reserve: '%s' is not a size (e.g. 4GiB, 512M)", optarg);
			break;
		case O_COHOST:
			if (ncohost >= MAX_COHOSTS)
				sp_usage_error("plan", "--cohost: at most %d servers", MAX_COHOSTS);
			if (sp_cohost_parse(optarg, strlen(optarg), &cohosts[ncohost], err, sizeof err) < 0)
				sp_usage_error("plan", "%s", err);
			ncohost++;
			break;
		case O_UMA:
			if (strcmp(optarg, "yes") == 0)
				uma_flag = 1;
			else if (strcmp(optarg, "no") == 0)
				uma_flag = 0;
			else if (strcmp(optarg, "auto") == 0)
				uma_flag = -1;
			else
				sp_usage_error("plan", "--uma: '%s' is not yes, no or auto", optarg);
			break;
		case O_JSON:
			json = true;
			break;
		case O_PARAMS:
			if (sp_parse_count(optarg, &params) < 0 || !(params >= 1e3) || params > 1e14)
				sp_usage_error("plan", "--params: '%s' is not a parameter count (e.g. 70e9, 8B)", optarg);
			break;
		case O_CONFIG:
			config = optarg;
			break;
		case O_LIST:
			list = true;
			break;
		case 'h':
			return sp_print_help(help);
		default:
			sp_opt_bad("plan", c, argv);
		}
	}
	if (list)
		return list_models(json);
	const char *spec = optind < argc ? argv[optind] : NULL;
	if (optind + 1 < argc)
		sp_usage_error("plan", "unexpected argument '%s'", argv[optind + 1]);
	int nsrc = (spec != NULL) + (config != NULL) + (params > 0);
	if (nsrc == 0)
		sp_usage_error("plan", "which model? give MODEL, --config FILE or --params N");
	if (nsrc > 1)
		sp_usage_error("plan", "give one model: MODEL, --config FILE or --params N");
	if (p.method == SP_METHOD_QLORA && quant_given && p.quant == SP_QUANT_NONE)
		sp_usage_error("plan", "--method qlora quantizes the base: --quant none contradicts it");
	if (p.method == SP_METHOD_FULL && p.quant != SP_QUANT_NONE)
		sp_usage_error("plan", "--method full trains 16/32-bit weights: --quant %s applies to lora, qlora and infer",
			       sp_quant_name(p.quant));
	if (p.method == SP_METHOD_QLORA && !quant_given)
		p.quant = SP_QUANT_NF4;

	/* the model */
	struct sp_model_shape *m = calloc(1, sizeof *m);
	if (!m)
		sp_die(SP_EXIT_IO, "out of memory");
	if (params > 0) {
		sp_model_from_params(params, m);
	} else if (config) {
		if (sp_model_load_config(config, m, err, sizeof err) < 0) {
			sp_error("%s", err);
			free(m);
			return SP_EXIT_USAGE;
		}
	} else if (sp_model_load(spec, m, err, sizeof err) < 0) {
		sp_error("%s", err);
		free(m);
		return SP_EXIT_USAGE;
	}
	if (sp_shape_complete(m) < 0 || !(m->params > 0)) {
		sp_error("'%s': the model's shape is incomplete (layers, hidden size or vocabulary missing)",
			 m->path[0] ? m->path : m->name);
		free(m);
		return SP_EXIT_USAGE;
	}

	/* the budget */
	struct budget b = { 0 };
	read_budget(&b, &ro, uma_flag, have_budget, budget_flag);
	p.uma = b.uma;
	for (int i = 0; i < ncohost; i++) {
		struct sp_cohost *h = &cohosts[i];
		if (h->kind == SP_COHOST_OLLAMA_FILE) {
			struct stat st;
			if (stat(h->path, &st) < 0) {
				sp_error("--cohost: '%s': %s", h->path, strerror(errno));
				free(m);
				return SP_EXIT_USAGE;
			}
			h->bytes = (uint64_t)st.st_size;
		}
		b.cohost_bytes += sp_cohost_bytes(h, b.pool_total);
	}
	b.bytes = b.cohost_bytes >= b.raw_bytes ? 0 : b.raw_bytes - b.cohost_bytes;
	if (b.after_flush)
		b.after_flush = b.cohost_bytes >= b.after_flush ? 0 : b.after_flush - b.cohost_bytes;

	/* the footprint, the verdict, the anchor, the advice */
	struct sp_footprint f;
	sp_footprint_compute(m, &p, &f);
	uint64_t need = sp_need(&f);
	enum sp_verdict verdict = sp_judge(need, b.bytes);
	bool host_short = !b.uma && b.host_bytes && f.host_bytes > b.host_bytes;
	if (host_short)
		verdict = SP_NO;
	const struct sp_anchor *an = sp_anchor_nearest(m, &p);
	uint64_t state = f.term[SP_T_WEIGHTS] + f.term[SP_T_KBIT_UPCAST] + f.term[SP_T_ADAPTER] +
			 f.term[SP_T_GRADIENTS] + f.term[SP_T_OPTIMIZER] + f.term[SP_T_MASTER];
	bool far = sp_anchor_far(an, &p, f.params, f.peak_bytes, state);
	struct sp_advice adv;
	bool have_adv = false, flush_fits = false;
	bool cohost_fits = false;
	if (verdict != SP_FITS) {
		/* the ladder: a flush first, then the concurrent workloads, then the job */
		flush_fits = b.after_flush && sp_judge(need, b.after_flush) == SP_FITS;
		cohost_fits = !flush_fits && b.cohost_bytes && sp_judge(need, b.raw_bytes) == SP_FITS;
		/* when a flush or the servers are enough and nothing else fits, that is the advice */
		have_adv = sp_fit_search(m, &p, b.bytes, &adv) || !(flush_fits || cohost_fits);
	}
	char g1[32], g2[32], g3[32];

	if (json) {
		json_t *root = json_object();
		json_object_set_new(root, "version", json_string(SPARKOPS_VERSION));
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
		json_object_set_new(mo, "weight_bytes", m->have_tensors ? json_integer((json_int_t)m->weight_bytes) : json_null());
		json_object_set_new(root, "model", mo);
		json_t *st = json_object();
		add_settings(st, &p);
		json_object_set_new(root, "settings", st);
		json_object_set_new(root, "params", jnum(f.params));
		json_object_set_new(root, "trainable_params", jnum(f.trainable_params));
		json_t *terms = json_object();
		for (int i = 0; i < SP_T_N; i++)
			json_object_set_new(terms, sp_term_key((enum sp_term)i), json_integer((json_int_t)f.term[i]));
		json_object_set_new(root, "terms", terms);
		json_object_set_new(root, "device_bytes", json_integer((json_int_t)f.device_bytes));
		json_object_set_new(root, "host_bytes", json_integer((json_int_t)f.host_bytes));
		json_object_set_new(root, "peak_bytes", json_integer((json_int_t)f.peak_bytes));
		json_object_set_new(root, "load_peak_bytes", json_integer((json_int_t)f.load_peak_bytes));
		json_object_set_new(root, "load_file_bytes", json_integer((json_int_t)f.load_file_bytes));
		json_object_set_new(root, "load_mapped_bytes", json_integer((json_int_t)f.load_mapped_bytes));
		json_object_set_new(root, "uma", json_boolean(b.uma));
		json_object_set_new(root, "uma_source", json_string(b.uma_source));
		json_object_set_new(root, "budget_bytes", json_integer((json_int_t)b.bytes));
		json_object_set_new(root, "budget_source", json_string(b.source));
		json_object_set_new(root, "budget_before_cohosts_bytes", json_integer((json_int_t)b.raw_bytes));
		json_object_set_new(root, "budget_after_flush_bytes",
				    b.after_flush ? json_integer((json_int_t)b.after_flush) : json_null());
		json_object_set_new(root, "host_budget_bytes", !b.uma && b.host_bytes ? json_integer((json_int_t)b.host_bytes) : json_null());
		json_t *ca = json_array();
		for (int i = 0; i < ncohost; i++) {
			json_t *co = json_object();
			const struct sp_cohost *h = &cohosts[i];
			json_object_set_new(co, "server", json_string(h->kind == SP_COHOST_VLLM ? "vllm" : "ollama"));
			json_object_set_new(co, "fraction", h->kind == SP_COHOST_VLLM ? json_real(h->frac) : json_null());
			json_object_set_new(co, "file", h->kind == SP_COHOST_OLLAMA_FILE ? json_string(h->path) : json_null());
			json_object_set_new(co, "bytes", json_integer((json_int_t)sp_cohost_bytes(h, b.pool_total)));
			json_array_append_new(ca, co);
		}
		json_object_set_new(root, "cohosts", ca);
		json_object_set_new(root, "need_bytes", json_integer((json_int_t)need));
		json_object_set_new(root, "tight_margin_bytes", json_integer((json_int_t)sp_tight_margin(need)));
		json_object_set_new(root, "verdict", json_string(sp_verdict_name(verdict)));
		json_object_set_new(root, "host_exceeds_system_memory", json_boolean(host_short));
		if (an) {
			json_t *ao = json_object();
			json_object_set_new(ao, "name", json_string(an->name));
			json_object_set_new(ao, "text", json_string(an->text));
			json_object_set_new(ao, "figure_bytes", an->figure_bytes > 0 ? jnum(an->figure_bytes) : json_null());
			json_object_set_new(ao, "far", json_boolean(far));
			json_object_set_new(root, "anchor", ao);
		} else {
			json_object_set_new(root, "anchor", json_null());
		}
		json_t *aa = json_array();
		if (flush_fits) {
			json_t *ao = json_object();
			json_object_set_new(ao, "rung", json_string("flush"));
			json_object_set_new(ao, "flags", json_string("sync; echo 3 > /proc/sys/vm/drop_caches"));
			json_object_set_new(ao, "why", json_string("the page cache holds what the job needs; a flush (root) returns it"));
			json_object_set_new(ao, "need_bytes", json_integer((json_int_t)need));
			json_array_append_new(aa, ao);
		}
		if (cohost_fits) {
			json_t *ao = json_object();
			json_object_set_new(ao, "rung", json_string("cohost"));
			json_object_set_new(ao, "flags", json_string("stop or cap the co-hosted servers"));
			json_object_set_new(ao, "why", json_string("the job fits the budget the co-hosted servers keep"));
			json_object_set_new(ao, "need_bytes", json_integer((json_int_t)need));
			json_array_append_new(aa, ao);
		}
		if (have_adv) {
			json_t *ao = json_object();
			json_object_set_new(ao, "rung", json_string(adv.rung));
			json_object_set_new(ao, "flags", json_string(adv.flags));
			json_object_set_new(ao, "why", json_string(adv.why));
			json_object_set_new(ao, "need_bytes", adv.need_bytes ? json_integer((json_int_t)adv.need_bytes) : json_null());
			json_array_append_new(aa, ao);
		}
		json_object_set_new(root, "advice", aa);
		json_object_set_new(root, "note", f.note[0] ? json_string(f.note) : json_null());
		sp_json_print(stdout, root);
		json_decref(root);
	} else {
		bool col = sp_color(1);
		const char *bold = col ? "\033[1m" : "", *off = col ? "\033[0m" : "";
		char tg[64];
		if (m->source == SP_SRC_PARAMS)
			printf("%ssparkops plan%s  %s  (a Llama-like shape estimated from the count: %d layers x %d)\n", bold,
			       off, m->name, m->n_layers, m->hidden);
		else
			printf("%ssparkops plan%s  %s  (%s, %.2fB params)\n", bold, off, m->name, m->arch, f.params / 1e9);
		printf("  %s, %s", sp_method_name(p.method), sp_cdtype_name(p.dtype));
		if (f.quantized_params > 0)
			printf(" on a %s base", m->prequantized ? "pre-quantized" : sp_quant_name(p.quant == SP_QUANT_NONE ? SP_QUANT_NF4 : p.quant));
		printf(", batch %d x seq %d, grad-ckpt %s, %s, framework %s", p.batch, p.seq, p.grad_ckpt ? "on" : "off",
		       sp_optim_name(p.optim), sp_framework_name(p.framework));
		if (p.method == SP_METHOD_LORA || p.method == SP_METHOD_QLORA)
			printf(", LoRA r=%d on %s", p.lora_rank, sp_lora_targets_str(p.lora_targets, tg, sizeof tg));
		printf("\n  trainable %.0f params (%.3f%%)\n", f.trainable_params, 100 * f.trainable_params / f.params);
		printf("\n%sTERMS%s%s\n", bold, off, b.uma ? "  (unified memory: device and host share one pool)" : "");
		for (int i = 0; i < SP_T_N; i++) {
			if (!f.term[i])
				continue;
			printf("  %-22s %10s  %-6s %s\n", sp_term_key((enum sp_term)i), sp_fmt_gib(g1, sizeof g1, (double)f.term[i]),
			       sp_term_is_host((enum sp_term)i) ? "host" : "device", term_words((enum sp_term)i));
		}
		printf("  %-22s %10s\n", "device side", sp_fmt_gib(g1, sizeof g1, (double)f.device_bytes));
		printf("  %-22s %10s\n", "host side", sp_fmt_gib(g1, sizeof g1, (double)f.host_bytes));
		printf("\n%sPEAKS%s against the budget of %s (%s%s%s)\n", bold, off, sp_fmt_gib(g1, sizeof g1, (double)b.bytes),
		       b.source, b.cohost_bytes ? ", minus " : "",
		       b.cohost_bytes ? sp_fmt_gib(g2, sizeof g2, (double)b.cohost_bytes) : "");
		if (b.cohost_bytes)
			printf("  co-hosted servers keep %s of %s\n", g2, sp_fmt_gib(g3, sizeof g3, (double)b.raw_bytes));
		print_bar(b.uma ? "steady" : "steady dev", f.peak_bytes, b.bytes, col);
		print_bar(b.uma ? "load" : "load dev", f.load_peak_bytes, b.bytes, col);
		printf("  the load maps %s at a time and reads %s through the page cache (clean pages: the kernel reclaims them under pressure, a flush returns them)\n",
		       sp_fmt_gib(g1, sizeof g1, (double)f.load_mapped_bytes), sp_fmt_gib(g2, sizeof g2, (double)f.load_file_bytes));
		if (!b.uma && b.host_bytes)
			printf("  host side %s against %s of system memory%s\n", sp_fmt_gib(g1, sizeof g1, (double)f.host_bytes),
			       sp_fmt_gib(g2, sizeof g2, (double)b.host_bytes), host_short ? ": TOO MUCH" : "");
		if (an)
			printf("\nanchor: %s%s\n", an->text,
			       far ? "  -- WARNING: this estimate is far from it; recheck dtype and method" : "");
		printf("\n%sverdict: %s%s", bold, sp_verdict_name(verdict), off);
		if (verdict == SP_TIGHT)
			printf(" (less than %s of headroom)", sp_fmt_gib(g1, sizeof g1, (double)sp_tight_margin(need)));
		printf("  needs %s of %s\n", sp_fmt_gib(g1, sizeof g1, (double)need), sp_fmt_gib(g2, sizeof g2, (double)b.bytes));
		if (flush_fits)
			printf("advice: flush the page cache first (sync; echo 3 > /proc/sys/vm/drop_caches, root): the budget becomes %s\n",
			       sp_fmt_gib(g1, sizeof g1, (double)b.after_flush));
		if (cohost_fits)
			printf("advice: stop or cap the co-hosted servers (they keep %s; without them the job fits)\n",
			       sp_fmt_gib(g1, sizeof g1, (double)b.cohost_bytes));
		if (have_adv) {
			if (adv.need_bytes)
				printf("advice: %s  -> needs %s (%s)\n", adv.flags, sp_fmt_gib(g1, sizeof g1, (double)adv.need_bytes), adv.why);
			else
				printf("advice: %s (%s)\n", adv.flags, adv.why);
		}
		if (f.note[0])
			printf("note: %s\n", f.note);
	}
	free(m);
	return verdict == SP_NO ? SP_EXIT_TROUBLE : SP_EXIT_OK;
}
