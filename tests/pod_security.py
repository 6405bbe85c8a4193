"""An independent checker of the Kubernetes Pod Security Standards, `restricted` profile.

Written from the Kubernetes documentation ("Pod Security Standards", policies for v1.30: the
Baseline controls, which Restricted includes, then the Restricted ones), not from trinogen or the
chart. One function per control; each takes a pod spec (and its metadata) and returns the
violations as text. `violations()` runs them all over one pod template.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

Pod = Mapping[str, Any]
Meta = Mapping[str, Any]

# Baseline: capabilities a container may add. Restricted: only NET_BIND_SERVICE.
RESTRICTED_ADD = frozenset({"NET_BIND_SERVICE"})
ALLOWED_VOLUME_TYPES = frozenset({"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
                                  "persistentVolumeClaim", "projected", "secret"})
SAFE_SYSCTLS = frozenset({"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range",
                          "net.ipv4.ip_unprivileged_port_start", "net.ipv4.tcp_syncookies",
                          "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
                          "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout",
                          "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes"})
SELINUX_TYPES = frozenset({"", "container_t", "container_init_t", "container_kvm_t",
                           "container_engine_t"})


def containers(pod: Pod) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every container of the pod: containers, initContainers and ephemeralContainers."""
    for kind in ("containers", "initContainers", "ephemeralContainers"):
        for c in pod.get(kind) or ():
            yield f"{kind}[{c.get('name')}]", c


def _sc(c: Mapping[str, Any]) -> Mapping[str, Any]:
    return c.get("securityContext") or {}


# --- Baseline -----------------------------------------------------------------------------------

def host_process(pod: Pod, meta: Meta) -> list[str]:
    out = []
    if (pod.get("securityContext") or {}).get("windowsOptions", {}).get("hostProcess"):
        out.append("pod: windowsOptions.hostProcess is true")
    out += [f"{n}: windowsOptions.hostProcess is true" for n, c in containers(pod)
            if _sc(c).get("windowsOptions", {}).get("hostProcess")]
    return out


def host_namespaces(pod: Pod, meta: Meta) -> list[str]:
    return [f"pod: {key} is true" for key in ("hostNetwork", "hostPID", "hostIPC") if pod.get(key)]


def privileged(pod: Pod, meta: Meta) -> list[str]:
    return [f"{n}: privileged" for n, c in containers(pod) if _sc(c).get("privileged")]


def host_path_volumes(pod: Pod, meta: Meta) -> list[str]:
    return [f"volume {v.get('name')}: hostPath" for v in pod.get("volumes") or () if "hostPath" in v]


def host_ports(pod: Pod, meta: Meta) -> list[str]:
    return [f"{n}: hostPort {p['hostPort']}" for n, c in containers(pod)
            for p in c.get("ports") or () if p.get("hostPort")]


def app_armor(pod: Pod, meta: Meta) -> list[str]:
    out = []
    profiles = [("pod", (pod.get("securityContext") or {}).get("appArmorProfile"))]
    profiles += [(n, _sc(c).get("appArmorProfile")) for n, c in containers(pod)]
    out += [f"{n}: appArmorProfile {p.get('type')}" for n, p in profiles
            if p and p.get("type") not in ("RuntimeDefault", "Localhost")]
    for key, value in (meta.get("annotations") or {}).items():
        if key.startswith("container.apparmor.security.beta.kubernetes.io/") and not (
                value == "runtime/default" or str(value).startswith("localhost/")):
            out.append(f"annotation {key}: {value}")
    return out


def se_linux(pod: Pod, meta: Meta) -> list[str]:
    options = [("pod", (pod.get("securityContext") or {}).get("seLinuxOptions"))]
    options += [(n, _sc(c).get("seLinuxOptions")) for n, c in containers(pod)]
    out = []
    for n, o in options:
        if not o:
            continue
        if o.get("type", "") not in SELINUX_TYPES:
            out.append(f"{n}: seLinuxOptions.type {o.get('type')}")
        out += [f"{n}: seLinuxOptions.{k} set" for k in ("user", "role") if o.get(k)]
    return out


def proc_mount(pod: Pod, meta: Meta) -> list[str]:
    return [f"{n}: procMount {_sc(c)['procMount']}" for n, c in containers(pod)
            if _sc(c).get("procMount", "Default") != "Default"]


def sysctls(pod: Pod, meta: Meta) -> list[str]:
    return [f"pod: sysctl {s.get('name')}" for s in (pod.get("securityContext") or {}).get("sysctls") or ()
            if s.get("name") not in SAFE_SYSCTLS]


# --- Restricted ---------------------------------------------------------------------------------

def volume_types(pod: Pod, meta: Meta) -> list[str]:
    out = []
    for v in pod.get("volumes") or ():
        kinds = set(v) - {"name"}
        out += [f"volume {v.get('name')}: type {k}" for k in sorted(kinds - ALLOWED_VOLUME_TYPES)]
    return out


def privilege_escalation(pod: Pod, meta: Meta) -> list[str]:
    return [f"{n}: allowPrivilegeEscalation is not false" for n, c in containers(pod)
            if _sc(c).get("allowPrivilegeEscalation") is not False]


def run_as_non_root(pod: Pod, meta: Meta) -> list[str]:
    pod_level = (pod.get("securityContext") or {}).get("runAsNonRoot")
    out = []
    for n, c in containers(pod):
        own = _sc(c).get("runAsNonRoot")
        if own is False or (own is None and pod_level is not True):
            out.append(f"{n}: runAsNonRoot is not true (nor set on the pod)")
    return out


def run_as_user(pod: Pod, meta: Meta) -> list[str]:
    out = ["pod: runAsUser 0"] if (pod.get("securityContext") or {}).get("runAsUser") == 0 else []
    return out + [f"{n}: runAsUser 0" for n, c in containers(pod) if _sc(c).get("runAsUser") == 0]


def seccomp(pod: Pod, meta: Meta) -> list[str]:
    allowed = ("RuntimeDefault", "Localhost")
    pod_type = ((pod.get("securityContext") or {}).get("seccompProfile") or {}).get("type")
    out = [f"pod: seccompProfile {pod_type}"] if pod_type and pod_type not in allowed else []
    for n, c in containers(pod):
        own = (_sc(c).get("seccompProfile") or {}).get("type")
        if own is not None and own not in allowed:
            out.append(f"{n}: seccompProfile {own}")
        elif own is None and pod_type not in allowed:
            out.append(f"{n}: no seccompProfile (nor RuntimeDefault/Localhost on the pod)")
    return out


def capabilities(pod: Pod, meta: Meta) -> list[str]:
    out = []
    for n, c in containers(pod):
        caps = _sc(c).get("capabilities") or {}
        if "ALL" not in (caps.get("drop") or ()):
            out.append(f"{n}: capabilities.drop lacks ALL")
        out += [f"{n}: adds capability {a}" for a in caps.get("add") or () if a not in RESTRICTED_ADD]
    return out


CONTROLS: tuple[Callable[[Pod, Meta], list[str]], ...] = (
    host_process, host_namespaces, privileged, host_path_volumes, host_ports, app_armor, se_linux,
    proc_mount, sysctls, volume_types, privilege_escalation, run_as_non_root, run_as_user, seccomp,
    capabilities,
)


def violations(template: Mapping[str, Any]) -> list[str]:
    """Every `restricted` violation of one pod template ({metadata, spec})."""
    pod, meta = template.get("spec") or {}, template.get("metadata") or {}
    return [v for control in CONTROLS for v in control(pod, meta)]


def pod_templates(objects: list[Mapping[str, Any]]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every pod (template) among rendered objects: workloads, Jobs, CronJobs and bare Pods."""
    for o in objects:
        kind, name = o.get("kind"), (o.get("metadata") or {}).get("name")
        spec = o.get("spec") or {}
        if kind == "Pod":
            yield f"Pod/{name}", o
        elif kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"):
            yield f"{kind}/{name}", spec.get("template") or {}
        elif kind == "CronJob":
            yield f"CronJob/{name}", (spec.get("jobTemplate") or {}).get("spec", {}).get("template") or {}
