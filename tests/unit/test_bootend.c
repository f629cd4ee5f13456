// SPDX-License-Identifier: MIT
/* How a boot ended (src/ladder/bootend.c), without a journal: the line
 * classes in the kernel's, the driver's and each killer's own words, the
 * order of the verdicts, the phases of the driver's lines, the victims, the
 * window, and lines that must not count (a service quoting a kernel line). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ladder/bootend.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define NVRM "NVRM: nvCheckOkFailedNoLog: Check failed: Out of memory [NV_ERR_NO_MEMORY] (0x00000051) " \
	     "returned from _memdescAllocInternal(pMemDesc) @ mem_desc.c:1359"
#define T0 1795939200.0

static enum sp_be_class cls(bool kernel, const char *ident, const char *msg)
{
	char who[32];
	return sp_be_classify(kernel, ident, msg, strlen(msg), who, sizeof who);
}

static void k(struct sp_bootend *b, double t, const char *msg)
{
	sp_bootend_feed(b, t, true, "kernel", msg, strlen(msg));
}

static void svc(struct sp_bootend *b, double t, const char *ident, const char *msg)
{
	sp_bootend_feed(b, t, false, ident, msg, strlen(msg));
}

static struct sp_bootend *fresh(void)
{
	struct sp_bootend *b = malloc(sizeof *b);
	assert_non_null(b);
	sp_bootend_init(b, 300);
	k(b, T0, "Linux version 6.17.0-1032-nvidia");
	return b;
}

static void classes(void **state)
{
	(void)state;
	assert_int_equal(cls(true, "kernel", NVRM), SP_BC_NVRM_OOM);
	assert_int_equal(cls(true, "kernel", "NVRM: _iovaspaceCreateMappingDataFromMemDesc: failed to allocate 0x176028 bytes"),
			 SP_BC_NVRM_OOM);
	assert_int_equal(cls(true, "kernel", "NVRM: Xid (PCI:0000:01:00): 79, pid=1, GPU has fallen off the bus."), SP_BC_XID);
	assert_int_equal(cls(true, "kernel", "NVRM: loading NVIDIA UNIX Open Kernel Module for aarch64  580.95.05"),
			 SP_BC_NONE);
	assert_int_equal(cls(true, "kernel", "Out of memory: Killed process 4242 (python3) total-vm:1kB"), SP_BC_KERNEL_OOM);
	assert_int_equal(cls(true, "kernel", "Killed process 27541 (bash) total-vm:8118236kB, anon-rss:8098448kB"),
			 SP_BC_KERNEL_OOM);
	assert_int_equal(cls(true, "kernel", "python3 invoked oom-killer: gfp_mask=0x140cca"), SP_BC_OOM_INVOKED);
	assert_int_equal(cls(true, "kernel", "thermal thermal_zone15: critical temperature reached (101 C), shutting down"),
			 SP_BC_THERMAL);
	assert_int_equal(cls(true, "kernel", "Critical temperature reached (100 C), shutting down."), SP_BC_THERMAL);
	assert_int_equal(cls(true, "kernel", "watchdog: BUG: soft lockup - CPU#7 stuck for 26s!"), SP_BC_FAULT);
	assert_int_equal(cls(true, "kernel", "INFO: task python3:4242 blocked for more than 122 seconds."), SP_BC_FAULT);
	assert_int_equal(cls(true, "kernel", "Kernel panic - not syncing: Out of memory"), SP_BC_PANIC);
	assert_int_equal(cls(false, "earlyoom", "sending SIGTERM to process 906175 uid 1000 \"java\": oom_score 1170"),
			 SP_BC_USER_KILL);
	assert_int_equal(cls(false, "earlyoom", "mem avail:  1860 of 13855 MiB (13 %)"), SP_BC_NONE);
	assert_int_equal(cls(false, "systemd-oomd", "Killed /system.slice/x.service due to memory pressure for /system.slice"),
			 SP_BC_USER_KILL);
	assert_int_equal(cls(false, "systemd", "x.service: systemd-oomd killed 2 process(es) in this unit."), SP_BC_USER_KILL);
	assert_int_equal(cls(false, "kubelet", "Pod evicted: The node was low on resource: memory."), SP_BC_USER_KILL);
	assert_int_equal(cls(false, "containerd", "level=info msg=\"TaskOOM event &TaskOOM{ContainerID:abc,}\""),
			 SP_BC_USER_KILL);
	assert_int_equal(cls(false, "systemd", "Reached target poweroff.target - System Power Off."), SP_BC_SHUTDOWN);
	assert_int_equal(cls(false, "systemd", "Reached target Power-Off."), SP_BC_SHUTDOWN);
	assert_int_equal(cls(false, "systemd", "Reached target Multi-User System."), SP_BC_NONE);
	assert_int_equal(cls(false, "systemd-journald", "Journal stopped"), SP_BC_SHUTDOWN);
	assert_int_equal(cls(false, "vllm", "INFO:     Application startup complete."), SP_BC_READY);
	/* the kernel's words from a service are not the kernel's: a log tailer, a grep in a script */
	assert_int_equal(cls(false, "python3", NVRM), SP_BC_NONE);
	assert_int_equal(cls(false, "bash", "Out of memory: Killed process 1 (init)"), SP_BC_NONE);
	/* a killer's words from someone else are not that killer's */
	assert_int_equal(cls(false, "bash", "sending SIGTERM to process 12"), SP_BC_NONE);
	/* nor a service's words the kernel's */
	assert_int_equal(cls(true, "kernel", "Reached target Power-Off."), SP_BC_NONE);
}

static void judge(struct sp_bootend *b, struct sp_end *e)
{
	sp_bootend_judge(b, e);
}

static void order(void **state)
{
	(void)state;
	struct sp_end e;
	/* a clean reboot after driver lines: clean */
	struct sp_bootend *b = fresh();
	k(b, T0 + 100, NVRM);
	svc(b, T0 + 150, "systemd", "Reached target reboot.target - System Reboot.");
	judge(b, &e);
	assert_int_equal(e.kind, SP_END_CLEAN);
	/* driver lines after the shutdown began: the driver */
	k(b, T0 + 160, NVRM);
	judge(b, &e);
	assert_int_equal(e.kind, SP_END_DRIVER_WEDGE);
	assert_int_equal(e.drv_phase, SP_PH_LOAD);
	/* thermal beats an orderly shutdown */
	b = realloc(b, sizeof *b);
	sp_bootend_init(b, 300);
	k(b, T0, "boot");
	k(b, T0 + 10, "thermal thermal_zone0: critical temperature reached, shutting down");
	svc(b, T0 + 12, "systemd", "Reached target poweroff.target - System Power Off.");
	judge(b, &e);
	assert_int_equal(e.kind, SP_END_THERMAL);
	/* a pstore panic beats everything */
	sp_bootend_pstore(b, T0 + 13, true, false, "dmesg-ramoops-0", "Kernel panic - not syncing: x");
	judge(b, &e);
	assert_int_equal(e.kind, SP_END_PANIC);
	assert_string_equal(e.evidence[0].who, "pstore");
	free(b);
}

static void phases(void **state)
{
	(void)state;
	struct sp_end e;
	struct sp_bootend *b = fresh();
	/* probes before readiness, then the journal stops two minutes later */
	for (int i = 0; i < 5; i++)
		k(b, T0 + 100 + i * 0.2, NVRM);
	svc(b, T0 + 130, "vllm", "INFO:     Application startup complete.");
	svc(b, T0 + 250, "vllm", "INFO 200 OK");
	judge(b, &e);
	assert_int_equal(e.kind, SP_END_POWER);
	assert_true(e.drv_harmless);
	assert_int_equal(e.drv_startup, 5);
	assert_int_equal(e.drv_final, 5);
	assert_non_null(strstr(e.detail, "start-up probes"));
	/* the same after readiness: the run-up */
	for (int i = 0; i < 10; i++)
		k(b, T0 + 300 + i, NVRM);
	judge(b, &e);
	assert_int_equal(e.kind, SP_END_DRIVER_WEDGE);
	assert_int_equal(e.drv_phase, SP_PH_RUN);
	assert_int_equal(e.drv_run, 10);
	assert_int_equal(e.drv_startup, 5);
	assert_int_equal(e.drv_final, 15);
	assert_false(e.drv_harmless);
	/* the run log's readiness counts the same as a server's line */
	sp_bootend_init(b, 300);
	k(b, T0, "boot");
	k(b, T0 + 10, NVRM);
	sp_bootend_ready(b, T0 + 20);
	k(b, T0 + 40, "something else");
	judge(b, &e);
	assert_int_equal(e.kind, SP_END_POWER);
	assert_int_equal(e.drv_startup, 1);
	free(b);
}

static void victims(void **state)
{
	(void)state;
	struct sp_end e;
	struct sp_bootend *b = fresh();
	k(b, T0 + 10, "Out of memory: Killed process 4242 (python3) total-vm:130023424kB");
	judge(b, &e);
	assert_int_equal(e.kind, SP_END_KERNEL_OOM);
	assert_int_equal(e.victim_pid, 4242);
	assert_string_equal(e.victim, "python3");
	sp_bootend_init(b, 300);
	k(b, T0, "boot");
	svc(b, T0 + 5, "earlyoom", "sending SIGKILL to process 77 uid 0 \"ray::IDLE\": badness 900");
	judge(b, &e);
	assert_int_equal(e.kind, SP_END_USERSPACE_KILL);
	assert_string_equal(e.killer, "earlyoom");
	assert_int_equal(e.victim_pid, 77);
	assert_string_equal(e.victim, "ray::IDLE");
	sp_bootend_init(b, 300);
	k(b, T0, "boot");
	svc(b, T0 + 5, "raylet", "Task was killed due to the node running low on memory.");
	judge(b, &e);
	assert_string_equal(e.killer, "ray");
	free(b);
}

static void window_and_power(void **state)
{
	(void)state;
	struct sp_end e;
	struct sp_bootend *b = fresh();
	k(b, T0 + 10, NVRM);
	k(b, T0 + 1000, "later");
	judge(b, &e);
	/* the driver's lines long before the end did not end the boot */
	assert_int_equal(e.kind, SP_END_POWER);
	assert_int_equal(e.drv_final, 0);
	assert_non_null(strstr(e.detail, "long before the end"));
	/* a 20 W cap names the adapter; a 140 W cap is the platform's */
	sp_bootend_power_cap(b, T0 + 900, 140);
	judge(b, &e);
	assert_null(strstr(e.detail, "power-delivery cap"));
	sp_bootend_power_cap(b, T0 + 900, 20);
	judge(b, &e);
	assert_non_null(strstr(e.detail, "20 W power-delivery cap"));
	/* no entries at all: unknown */
	sp_bootend_init(b, 300);
	judge(b, &e);
	assert_int_equal(e.kind, SP_END_UNKNOWN);
	free(b);
}

static void xids_and_text(void **state)
{
	(void)state;
	struct sp_end e;
	struct sp_bootend *b = fresh();
	k(b, T0 + 5, "NVRM: Xid (PCI:000f:01:00): 79, pid=2100, name=python3, GPU has fallen off the bus.");
	k(b, T0 + 6, "NVRM: Xid (PCI:000f:01:00): 79, pid=2100, name=python3, GPU has fallen off the bus.");
	k(b, T0 + 7, "NVRM: Xid (PCI:000f:01:00): 13, Graphics Exception\x1b]0;x\a");
	judge(b, &e);
	assert_int_equal(e.kind, SP_END_DRIVER_WEDGE);
	assert_int_equal(b->nxid, 2);
	assert_int_equal(b->xids[0], 79);
	assert_int_equal(b->xids[1], 13);
	/* control bytes never reach the terminal */
	for (int i = 0; i < e.nevidence; i++)
		for (const char *p = e.evidence[i].text; *p; p++)
			assert_true(*p >= 0x20 && *p < 0x7f);
	assert_string_equal(sp_end_kind_name(SP_END_USERSPACE_KILL), "userspace_kill");
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(classes), cmocka_unit_test(order),         cmocka_unit_test(phases),
		cmocka_unit_test(victims), cmocka_unit_test(window_and_power), cmocka_unit_test(xids_and_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
