/* SPDX-License-Identifier: MIT */
/* Pieces of a sample as JSON (jansson), shared by every command's --json. */
#ifndef SP_SAMPLE_JSON_H
#define SP_SAMPLE_JSON_H
#include "probe/sample.h"
#include "util/json.h"

#include <jansson.h>

json_t *sp_json_pool(const struct sp_sample *s);
json_t *sp_json_budget(const struct sp_sample *s);
json_t *sp_json_cgroup(const struct sp_sample *s);
json_t *sp_json_psi(const struct sp_sample *s);
json_t *sp_json_thermal(const struct sp_sample *s);
json_t *sp_json_hwmon(const struct sp_sample *s);
json_t *sp_json_spark(const struct sp_sample *s);
json_t *sp_json_gpu(const struct sp_gpu *g);
json_t *sp_json_gpus(const struct sp_sample *s);
/* a process's container: {runtime, id, short_id, name, name_source, pod_uid,
 * pod, namespace, cgroup, unavailable}, or null when it is on the host */
json_t *sp_json_container(const struct sp_container *c);
json_t *sp_json_procs(const struct sp_sample *s);
/* sp_json_text: util/json.h */
/* ["sw_thermal_slowdown", ...] for a clocks event reason mask */
json_t *sp_json_reasons(uint64_t mask);
#endif
