"""Pod Security `restricted` on the chart's output: every pod of every example and feature document.

Each document goes through trinogen and the real Trino chart (as tests/test_chart.py does); the
pods are judged by tests/pod_security.py, a checker written from the Kubernetes documentation.
The chart's `helm test` Pods (hook `test`) are left out: Argo CD never creates them (it does not
run Helm tests, argo-cd#2038), and the chart gives them no security context to set.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from tests import pod_security
from tests.conftest import CHART_DIR, demo_settings, needs
from tests.test_access import ACCESS_DOCS, OPA_OPTIONS
from tests.test_chart import DOCS, render_through_chart
from trinogen.model import Cluster, RawDocument, classify
from trinogen.render import Renderer
from trinogen.settings import Settings, replace
from trinogen.source import doc_key

try:
    import helm_python
except ImportError:  # pragma: no cover - depends on the environment
    helm_python = None

ALL_DOCS = {**DOCS, **ACCESS_DOCS}


def _needs_chart(test: Any) -> Any:
    test = needs(helm_python is not None, "helm-python-sdk is not installed")(test)
    return needs((CHART_DIR / "Chart.yaml").is_file(), f"no Trino chart at {CHART_DIR}")(test)


def _objects(helm_chart: Any, doc: Mapping[str, Any], settings: Settings) -> list[dict[str, Any]]:
    doc = copy.deepcopy(dict(doc))
    judge = replace(settings, validation={"trino_properties": "off"})  # escaping's made-up keys
    cluster = classify(RawDocument(doc_key(doc["_id"]), doc), judge)
    assert isinstance(cluster, Cluster), cluster
    files = Renderer(settings).render_cluster(cluster, {})
    cid = doc["clusterId"]
    values = files[f"{settings.output.clusters_dir}/{cid}/values.yaml"].decode()
    return render_through_chart(helm_chart, values, cid, f"trino-{cid}")[1]


def _is_helm_test(obj: Mapping[str, Any]) -> bool:
    return (obj.get("metadata", {}).get("annotations") or {}).get("helm.sh/hook") == "test"


@pytest.fixture(scope="module")
def helm_chart() -> Any:
    return helm_python.Chart.load(CHART_DIR)


@pytest.fixture(scope="module")
def objects_of(helm_chart: Any) -> Callable[[str, str], list[dict[str, Any]]]:
    cache: dict[tuple[str, str], list[dict[str, Any]]] = {}

    def get(case: str, mode: str) -> list[dict[str, Any]]:
        if (case, mode) not in cache:
            s = demo_settings(pods={"security": mode})
            s = replace(s, secrets={"check": False}) if s.secrets.check else s
            cache[case, mode] = _objects(helm_chart, ALL_DOCS[case], _with_opa(s))
        return cache[case, mode]

    return get


def _with_opa(s: Settings) -> Settings:
    return dataclasses.replace(s, named={**s.named, "opa": OPA_OPTIONS})


@_needs_chart
@pytest.mark.parametrize("case", sorted(ALL_DOCS))
def test_every_pod_passes_restricted_by_default(
        objects_of: Callable[[str, str], list[dict[str, Any]]], case: str) -> None:
    """Every pod the chart renders for the document (coordinator, worker) passes `restricted`."""
    objs = [o for o in objects_of(case, "restricted") if not _is_helm_test(o)]
    pods = list(pod_security.pod_templates(objs))
    assert {name.split("/")[0] for name, _ in pods} == {"Deployment"}
    assert len(pods) == 2, [name for name, _ in pods]  # coordinator and worker
    for name, template in pods:
        assert pod_security.violations(template) == [], name


@_needs_chart
@pytest.mark.parametrize("case", sorted(ALL_DOCS))
def test_only_helm_test_pods_are_left_out(
        objects_of: Callable[[str, str], list[dict[str, Any]]], case: str) -> None:
    """What the check leaves out is exactly the chart's `helm test` Pods, nothing Argo CD deploys."""
    left_out = [o for o in objects_of(case, "restricted") if _is_helm_test(o)]
    assert left_out, "the chart renders its test-connection Pod for every release"
    for o in left_out:
        assert o["metadata"]["labels"].get("app.kubernetes.io/component") == "test", o["kind"]


@_needs_chart
@pytest.mark.parametrize("case", ["adhoc-dev", "graceful-short"])
def test_chart_mode_keeps_the_charts_own_contexts(
        objects_of: Callable[[str, str], list[dict[str, Any]]], case: str) -> None:
    """pods.security=chart writes no security context: the chart's defaults, which lack seccomp
    and runAsNonRoot, so the checker refuses them (it can fail)."""
    objs = [o for o in objects_of(case, "chart") if not _is_helm_test(o)]
    for name, template in pod_security.pod_templates(objs):
        found = pod_security.violations(template)
        assert any("seccompProfile" in v for v in found), name
        assert any("runAsNonRoot" in v for v in found), name
        assert template["spec"]["securityContext"] == {"runAsUser": 1000, "runAsGroup": 1000}


# --- the checker itself: each control refuses what the Kubernetes documentation forbids ----------

GOOD_POD: dict[str, Any] = {
    "metadata": {},
    "spec": {
        "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
        "volumes": [{"name": "c", "configMap": {"name": "x"}}, {"name": "s", "secret": {}}],
        "containers": [{"name": "a", "securityContext": {
            "allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}}],
    },
}


def _bad(path: str, value: Any) -> dict[str, Any]:
    pod = copy.deepcopy(GOOD_POD)
    *parents, last = path.split(".")
    node: Any = pod
    for p in parents:
        node = node[int(p)] if isinstance(node, list) else node.setdefault(p, {})
    node[last] = value
    return pod


@pytest.mark.parametrize(("path", "value", "control"), [
    ("spec.hostNetwork", True, "host_namespaces"),
    ("spec.hostPID", True, "host_namespaces"),
    ("spec.hostIPC", True, "host_namespaces"),
    ("spec.containers.0.securityContext.privileged", True, "privileged"),
    ("spec.volumes", [{"name": "h", "hostPath": {"path": "/"}}], "host_path_volumes"),
    ("spec.volumes", [{"name": "n", "nfs": {"server": "x", "path": "/"}}], "volume_types"),
    ("spec.containers.0.ports", [{"containerPort": 80, "hostPort": 80}], "host_ports"),
    ("spec.containers.0.securityContext.procMount", "Unmasked", "proc_mount"),
    ("spec.securityContext.sysctls", [{"name": "kernel.msgmax", "value": "1"}], "sysctls"),
    ("spec.securityContext.seLinuxOptions", {"type": "spc_t"}, "se_linux"),
    ("spec.containers.0.securityContext.appArmorProfile", {"type": "Unconfined"}, "app_armor"),
    ("metadata.annotations", {"container.apparmor.security.beta.kubernetes.io/a": "unconfined"},
     "app_armor"),
    ("spec.securityContext.windowsOptions", {"hostProcess": True}, "host_process"),
    ("spec.containers.0.securityContext.allowPrivilegeEscalation", True, "privilege_escalation"),
    ("spec.securityContext.runAsNonRoot", False, "run_as_non_root"),
    ("spec.containers.0.securityContext.runAsNonRoot", False, "run_as_non_root"),
    ("spec.securityContext.runAsUser", 0, "run_as_user"),
    ("spec.securityContext.seccompProfile", {"type": "Unconfined"}, "seccomp"),
    ("spec.containers.0.securityContext.seccompProfile", {"type": "Unconfined"}, "seccomp"),
    ("spec.containers.0.securityContext.capabilities", {"drop": ["NET_RAW"]}, "capabilities"),
    ("spec.containers.0.securityContext.capabilities", {"drop": ["ALL"], "add": ["SYS_ADMIN"]},
     "capabilities"),
    ("spec.initContainers", [{"name": "i"}], "privilege_escalation"),
])
def test_each_control_refuses_its_violation(path: str, value: Any, control: str) -> None:
    """A pod that breaks one control is refused by that control, and the good pod passes all."""
    assert pod_security.violations(GOOD_POD) == []
    check = getattr(pod_security, control)
    pod = _bad(path, value)
    assert check(pod["spec"], pod["metadata"]), (path, value)


def test_net_bind_service_is_the_one_capability_allowed() -> None:
    """Restricted lets a container add NET_BIND_SERVICE, and nothing else."""
    pod = _bad("spec.containers.0.securityContext.capabilities",
               {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]})
    assert pod_security.violations(pod) == []


K8S_VERSION = "1.30"


@pytest.fixture(scope="module")
def k8s_validate() -> Any:
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    from kubernetes_validate.utils import all_versions

    if not any(v.startswith(K8S_VERSION + ".") for v in all_versions()):
        pytest.skip(f"kubernetes-validate bundles no schemas for Kubernetes {K8S_VERSION}")
    return kubernetes_validate


@_needs_chart
@pytest.mark.parametrize("case", sorted(ACCESS_DOCS) + ["analytics-prod", "graceful-short"])
def test_workloads_and_config_maps_are_valid_kubernetes_objects(
        objects_of: Callable[[str, str], list[dict[str, Any]]], k8s_validate: Any,
        case: str) -> None:
    """The Deployments (with the security contexts) and ConfigMaps (with the rules) pass the
    Kubernetes 1.30 schemas strictly: no misspelt security-context key slips through."""
    for o in objects_of(case, "restricted"):
        if o["kind"] not in ("Deployment", "ConfigMap") or _is_helm_test(o):
            continue
        try:
            k8s_validate.validate(o, K8S_VERSION, strict=True)
        except k8s_validate.ValidationError as e:
            pytest.fail(f"{o['kind']}/{o['metadata']['name']}: "
                        f"{'.'.join(str(p) for p in e.path)}: {e.message}")


@pytest.mark.parametrize(("layer", "expected"), [
    ({}, "restricted"),
    ({"overrides": {"pods.security": "chart"}}, "chart"),
    ({"environ": {"TRINOGEN_PODS_SECURITY": "chart"}}, "chart"),
])
def test_pods_security_is_a_setting(layer: dict[str, Any], expected: str) -> None:
    """pods.security defaults to restricted and comes from flags or the environment too."""
    from trinogen.settings import load_settings

    kwargs: dict[str, Any] = {"environ": {}, **layer}
    assert load_settings(**kwargs).pods.security == expected


def test_an_unknown_pods_security_mode_is_a_configuration_error() -> None:
    """A mode other than restricted or chart is refused, naming the setting and the choices."""
    from trinogen.errors import ConfigError
    from trinogen.settings import load_settings

    with pytest.raises(ConfigError, match="pods.security is 'baseline'; choose one of: "
                                          "restricted, chart"):
        load_settings(environ={}, overrides={"pods.security": "baseline"})


@pytest.mark.parametrize("mode", ["restricted", "chart"])
def test_the_precomputed_lines_hold_the_same_contexts(mode: str) -> None:
    """values.yaml.j2 writes `security_values`, emitted once per run: it reads back (PyYAML) as
    the `security_contexts` mappings the templates also get."""
    import yaml

    from trinogen.render.pod_security import security_contexts, security_values

    text = security_values(mode)
    assert (yaml.safe_load(text) if text else {}) == security_contexts(mode)
    assert bool(text) == (mode == "restricted")
