/* SPDX-License-Identifier: MIT */
/* Which container, pod or systemd unit a process is in, from /proc/PID/cgroup
 * (cgroup v2 "0::/..." and v1 lines), and the container's name where it can
 * be read without talking to a daemon (container.c). */
#ifndef SP_CONTAINER_H
#define SP_CONTAINER_H
#include "probe/sample.h"

/* Parse a /proc/PID/cgroup buffer (pure). The v1 memory controller's line is
 * used when there is one (the hybrid layout has v2's too), else the v2 line,
 * else the first v1 line. The innermost
 * container form on the path wins:
 *   docker-<id>.scope, /docker/<id>                      docker
 *   libpod-<id>.scope, /libpod_parent/libpod-<id>        podman
 *   cri-containerd-<id>.scope                            containerd
 *   crio-<id>.scope                                      cri-o
 *   kubepods[-QOS]-pod<uid>.slice/<any of the above>     + the pod's uid
 *   /kubepods[/QOS]/pod<uid>/<id>                        kubernetes (cgroupfs driver: runtime unnamed)
 * <id> is 64 lower-case hex digits; conmon's own scopes (libpod-conmon-,
 * crio-conmon-) are not the container. Outside a container, the innermost
 * systemd unit (NAME.service, or a session-N.scope under user-UID.slice) goes
 * to c->unit. Fills c->runtime, id, short_id, pod_uid, unit, cg_path and
 * cg_version; the names are left unknown. Returns 0, or -1 when no cgroup
 * line could be read (c->runtime SP_CT_NONE). */
int sp_container_parse(const char *buf, size_t len, struct sp_container *c);

/* "docker", "podman", "containerd", "cri-o", "kubernetes"; NULL for the host */
const char *sp_ct_runtime_name(enum sp_ct_runtime r);

/* One pod-log folder name of the kubelet (/var/log/pods/NAMESPACE_NAME_UID):
 * when its uid is `uid`, the namespace and name into ns and name; 0, or -1 (pure). */
int sp_pod_logdir_parse(const char *dirname, const char *uid, char *ns, size_t ns_cap, char *name,
			size_t name_cap);
/* The kubelet's etc-hosts of a pod: the host name on the line after the
 * "# Kubernetes-managed hosts file" header's entries that is not localhost
 * or an ip6 alias: the pod's hostname (its name unless spec.hostname is set).
 * 0, or -1 (pure). */
int sp_pod_hosts_parse(const char *buf, size_t len, char *name, size_t cap);

/* The process pid's container and names, under the current roots: its
 * cgroup file, then the container's hostname read through
 * <procfs>/PID/root/etc/hostname (no symlink followed inside that root, a
 * bounded read of a regular file), the pod's name and namespace from the
 * kubelet's folders under the host root (sp_host_root()). Never a socket. */
void sp_container_read(int pid, struct sp_container *c);

/* Group s->procs by container into s->containers (the first SP_MAX_CONTAINERS;
 * the rest counted in containers_dropped) and read each one's memory files
 * under the sysfs root: memory.current, memory.peak, memory.max and
 * memory.stat's file (v1: memory.usage_in_bytes, max_usage_in_bytes,
 * limit_in_bytes, memory.stat's cache). Call after the GPU poll: it sums the
 * processes' GPU memory too. */
void sp_containers_read(struct sp_sample *s);

/* What a person is shown for it (pure): "NAMESPACE/POD" or "POD" in
 * Kubernetes when the pod's name is known, the container's name, the unit on
 * the host ("ollama.service"), or "-". Cut to n - 1 bytes. */
const char *sp_container_label(const struct sp_container *c, char *buf, size_t n);

/* The label as one key=value word for the CSV log's event details (pure):
 * " container=LABEL" with every byte outside [A-Za-z0-9._:@/-] made '_', or ""
 * on the host outside any unit. */
const char *sp_container_word(const struct sp_container *c, char *buf, size_t n);

/* The host's root for files outside /proc and /sys (the kubelet's folders,
 * /dev/shm): "/" on the live machine; with a moved procfs "DIR/proc", DIR
 * (a fixture tree's own var/ and dev/shm). */
const char *sp_host_root(void);
#endif
