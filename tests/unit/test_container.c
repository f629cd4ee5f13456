// SPDX-License-Identifier: MIT
/* The container, pod or unit of a process from its cgroup file
 * (probe/container.c), every form the runtimes write, and the kubelet's
 * folder and hosts-file names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "probe/container.h"
#include "probe/unexplained.h"

#include <stdlib.h>

#include <stdio.h>
#include <string.h>

#define ID "3f4e5d6c7b8a99887766554433221100ffeeddccbbaa00112233445566778899"
#define UID "1a2b3c4d-5e6f-7890-abcd-ef0123456789"
#define UID_ "1a2b3c4d_5e6f_7890_abcd_ef0123456789"

static struct sp_container parse(const char *buf, int want_rc)
{
	struct sp_container c;
	assert_int_equal(sp_container_parse(buf, strlen(buf), &c), want_rc);
	return c;
}

static void expect(const char *buf, enum sp_ct_runtime rt, const char *pod_uid, const char *unit, int version)
{
	struct sp_container c = parse(buf, 0);
	if (c.runtime != rt)
		fail_msg("'%s': runtime %d, want %d", buf, (int)c.runtime, (int)rt);
	if (rt != SP_CT_NONE) {
		assert_string_equal(c.id, ID);
		assert_string_equal(c.short_id, "3f4e5d6c7b8a");
	} else {
		assert_string_equal(c.id, "");
	}
	assert_string_equal(c.pod_uid, pod_uid);
	assert_string_equal(c.unit, unit);
	assert_int_equal(c.cg_version, version);
}

static void test_docker(void **st)
{
	(void)st;
	expect("0::/system.slice/docker-" ID ".scope\n", SP_CT_DOCKER, "", "", 2);
	expect("12:pids:/docker/" ID "\n4:memory:/docker/" ID "\n3:cpu,cpuacct:/docker/" ID "\n", SP_CT_DOCKER, "",
	       "", 1);
	/* v1 with the systemd driver, and a v1 line without memory: names only */
	expect("9:memory:/system.slice/docker-" ID ".scope\n", SP_CT_DOCKER, "", "", 1);
	expect("1:name=systemd:/docker/" ID "\n", SP_CT_DOCKER, "", "", 0);
	/* the hybrid layout: v1's memory line wins over the unified one */
	struct sp_container c = parse("0::/system.slice/docker-" ID ".scope\n5:memory:/docker/" ID "\n", 0);
	assert_int_equal(c.cg_version, 1);
	assert_string_equal(c.cg_path, "/docker/" ID);
}

static void test_podman(void **st)
{
	(void)st;
	expect("0::/machine.slice/libpod-" ID ".scope/container\n", SP_CT_PODMAN, "", "", 2);
	/* rootless: under the user's manager; the unit above is not the process's */
	expect("0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID ".scope\n", SP_CT_PODMAN, "", "",
	       2);
	expect("7:memory:/libpod_parent/libpod-" ID "\n", SP_CT_PODMAN, "", "", 1);
	/* the container's own folder, not the one its runtime nests below it */
	struct sp_container c = parse("0::/machine.slice/libpod-" ID ".scope/container\n", 0);
	assert_string_equal(c.cg_path, "/machine.slice/libpod-" ID ".scope");
	c = parse("0::/system.slice/ollama.service\n", 0);
	assert_string_equal(c.cg_path, "/system.slice/ollama.service");
	/* conmon watches the container from outside it */
	expect("0::/machine.slice/libpod-conmon-" ID ".scope\n", SP_CT_NONE, "", "", 2);
}

static void test_kubernetes(void **st)
{
	(void)st;
	expect("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice/cri-containerd-" ID
	       ".scope\n",
	       SP_CT_CONTAINERD, UID, "", 2);
	expect("0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_ ".slice/crio-" ID ".scope\n",
	       SP_CT_CRIO, UID, "", 2);
	expect("0::/kubepods.slice/kubepods-pod" UID_ ".slice/cri-containerd-" ID ".scope\n", SP_CT_CONTAINERD, UID, "",
	       2);
	expect("0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_ ".slice/crio-conmon-" ID
	       ".scope\n",
	       SP_CT_NONE, "", "", 2);
	/* the cgroupfs driver: the runtime is not named */
	expect("11:memory:/kubepods/burstable/pod" UID "/" ID "\n", SP_CT_KUBE, UID, "", 1);
	expect("0::/kubepods/pod" UID "/" ID "\n", SP_CT_KUBE, UID, "", 2);
	expect("0::/kubepods/besteffort/pod" UID "/" ID "\n", SP_CT_KUBE, UID, "", 2);
	/* docker as the kubelet's runtime */
	expect("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice/docker-" ID ".scope\n",
	       SP_CT_DOCKER, UID, "", 2);
	/* a bare id outside the kubelet's tree is not taken for a container */
	expect("0::/somewhere/pod" UID "/" ID "\n", SP_CT_NONE, "", "", 2);
}

static void test_units(void **st)
{
	(void)st;
	expect("0::/system.slice/ollama.service\n", SP_CT_NONE, "", "ollama.service", 2);
	expect("0::/user.slice/user-1000.slice/session-3.scope\n", SP_CT_NONE, "", "session-3.scope", 2);
	expect("0::/user.slice/user-1000.slice/user@1000.service/app.slice/jupyter.service\n", SP_CT_NONE, "",
	       "jupyter.service", 2);
	expect("0::/\n", SP_CT_NONE, "", "", 2);
	expect("0::/init.scope\n", SP_CT_NONE, "", "", 2);
}

static void test_garbage(void **st)
{
	(void)st;
	/* ids that are not 64 lower-case hex digits */
	expect("0::/system.slice/docker-abc.scope\n", SP_CT_NONE, "", "", 2);
	expect("0::/system.slice/docker-" "3F4E5D6C7B8A99887766554433221100FFEEDDCCBBAA00112233445566778899" ".scope\n",
	       SP_CT_NONE, "", "", 2);
	expect("0::/system.slice/docker-" ID "0.scope\n", SP_CT_NONE, "", "", 2);
	parse("", -1);
	parse("garbage without colons\n", -1);
	parse("0::relative\n", -1);
	/* a path longer than the field: read, but no memory folder named */
	char big[600];
	snprintf(big, sizeof big, "0::/%0300d/docker-" ID ".scope\n", 0);
	struct sp_container c = parse(big, 0);
	assert_int_equal(c.runtime, SP_CT_DOCKER);
	assert_int_equal(c.cg_version, 0);
	assert_string_equal(c.cg_path, "");
	/* no line end */
	c = parse("0::/system.slice/docker-" ID ".scope", 0);
	assert_int_equal(c.runtime, SP_CT_DOCKER);
}

static void test_word(void **st)
{
	(void)st;
	char w[112];
	struct sp_container c = parse("0::/system.slice/docker-" ID ".scope\n", 0);
	snprintf(c.name, sizeof c.name, "vllm-qwen");
	assert_string_equal(sp_container_word(&c, w, sizeof w), " container=vllm-qwen");
	c = parse("0::/system.slice/my\tsvc x.service\n", 0);
	assert_string_equal(sp_container_word(&c, w, sizeof w), " container=my_svc_x.service");
	c = parse("0::/\n", 0);
	assert_string_equal(sp_container_word(&c, w, sizeof w), "");
}

static void test_kubelet_names(void **st)
{
	(void)st;
	char ns[64], name[64];
	assert_int_equal(sp_pod_logdir_parse("ml_vllm-7d9f8-x2k4p_" UID, UID, ns, sizeof ns, name, sizeof name), 0);
	assert_string_equal(ns, "ml");
	assert_string_equal(name, "vllm-7d9f8-x2k4p");
	assert_int_equal(sp_pod_logdir_parse("ml_other_0000", UID, ns, sizeof ns, name, sizeof name), -1);
	assert_int_equal(sp_pod_logdir_parse("_x_" UID, UID, ns, sizeof ns, name, sizeof name), -1);
	assert_int_equal(sp_pod_logdir_parse(UID, UID, ns, sizeof ns, name, sizeof name), -1);
	assert_int_equal(sp_pod_logdir_parse("ml_bad\033name_" UID, UID, ns, sizeof ns, name, sizeof name), -1);

	static const char hosts[] = "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n"
				    "::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\n"
				    "fe00::1\tip6-allnodes\n10.244.1.7\ttrainer-0.workers.ml.svc.cluster.local\ttrainer-0\n";
	assert_int_equal(sp_pod_hosts_parse(hosts, strlen(hosts), name, sizeof name), 0);
	assert_string_equal(name, "trainer-0");
	static const char plain[] = "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n10.0.0.2\tsglang-abc\n";
	assert_int_equal(sp_pod_hosts_parse(plain, strlen(plain), name, sizeof name), 0);
	assert_string_equal(name, "sglang-abc");
	/* a host-network pod's copy of the host's file has no header */
	static const char host[] = "127.0.0.1 localhost\n10.0.0.2 spark\n";
	assert_int_equal(sp_pod_hosts_parse(host, strlen(host), name, sizeof name), -1);
}

#define GIB (1024ULL * 1024 * 1024)
#define MIB (1024ULL * 1024)

static void test_unexplained(void **st)
{
	(void)st;
	struct sp_sample *s = calloc(1, sizeof *s);
	assert_non_null(s);
	struct sp_meminfo *m = &s->mem;
	m->why = SP_OK;
	static const struct { enum sp_mi k; uint64_t v; } v[] = {
		{ SP_MI_TOTAL, 120 * GIB }, { SP_MI_FREE, 6 * GIB }, { SP_MI_BUFFERS, GIB / 2 },
		{ SP_MI_CACHED, 19 * GIB + GIB / 2 }, { SP_MI_SHMEM, 6 * GIB }, { SP_MI_ANON_PAGES, 40 * GIB },
		{ SP_MI_SRECLAIMABLE, 2 * GIB }, { SP_MI_SUNRECLAIM, GIB }, { SP_MI_PAGE_TABLES, 256 * MIB },
		{ SP_MI_KERNEL_STACK, 64 * MIB }, { SP_MI_VMALLOC_USED, 192 * MIB },
	};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		m->v[v[i].k] = v[i].v;
		m->have |= 1ULL << v[i].k;
	}
	s->ngpu = 1;
	s->gpus[0].integrated = true; /* the GPU shares the pool */
	struct sp_unexplained u;
	sp_unexplained_compute(s, NULL, &u);
	assert_int_equal(u.unexplained.why, SP_OK);
	assert_true(u.used.v == 100 * GIB);
	assert_true(u.kernel == 3 * GIB + 512 * MIB);
	assert_true(u.unexplained.v == 50 * GIB + 512 * MIB);
	/* GPU memory of a process, and one NVML lists that /proc does not show */
	s->nprocs = 2;
	s->procs[0] = (struct sp_proc){ .pid = 10, .comm = "python3", .kind = SP_PROC_SERVER,
					.gpu_mem = { 8 * GIB, SP_OK } };
	s->procs[1] = (struct sp_proc){ .pid = 99, .kind = SP_PROC_GPU, .gpu_mem = { 4 * GIB, SP_OK } };
	struct sp_devshm shm = { .why = SP_OK, .holders_known = true, .orphan_resident = GIB };
	sp_unexplained_compute(s, &shm, &u);
	assert_true(u.gpu == 12 * GIB);
	assert_int_equal(u.driver_pids, 1);
	assert_true(u.driver_bytes == 4 * GIB);
	assert_true(u.shmem_orphan == GIB);
	assert_true(u.unexplained.v == 39 * GIB + 512 * MIB);
	/* a discrete GPU's memory is not the pool's */
	s->gpus[0].integrated = false;
	sp_unexplained_compute(s, &shm, &u);
	assert_false(u.gpu_in_pool);
	assert_true(u.gpu == 0 && u.driver_pids == 0);
	assert_true(u.unexplained.v == 51 * GIB + 512 * MIB);
	s->gpus[0].integrated = true;
	/* holders not known: no shmem is called orphaned */
	shm.holders_known = false;
	sp_unexplained_compute(s, &shm, &u);
	assert_true(u.unexplained.v == 38 * GIB + 512 * MIB);
	/* GPU memory past what is left (managed memory counted as anonymous too): 0, and said */
	s->procs[0].gpu_mem.v = 80 * GIB;
	sp_unexplained_compute(s, NULL, &u);
	assert_true(u.unexplained.v == 0);
	assert_true(u.gpu_overlap);
	/* a missing kernel term is named, the rest still counted */
	s->nprocs = 0;
	m->have &= ~(1ULL << SP_MI_VMALLOC_USED);
	sp_unexplained_compute(s, NULL, &u);
	assert_int_equal(u.kernel_missing, 8u);
	assert_true(u.unexplained.v == 50 * GIB + 704 * MIB);
	/* no AnonPages: unknown, never 0 */
	m->have &= ~(1ULL << SP_MI_ANON_PAGES);
	sp_unexplained_compute(s, NULL, &u);
	assert_int_not_equal(u.unexplained.why, SP_OK);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_docker),      cmocka_unit_test(test_podman),
		cmocka_unit_test(test_kubernetes),  cmocka_unit_test(test_units),
		cmocka_unit_test(test_garbage),     cmocka_unit_test(test_kubelet_names),
		cmocka_unit_test(test_unexplained), cmocka_unit_test(test_word),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
