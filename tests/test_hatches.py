"""The platform hatches' options (trinogen/kinds/{images,runtime,network_policies,services}/
options.py): what each accepts and refuses, and the chart values it gives. Expectations come
from the option text written here, Kubernetes' and the JVM's rules, and the chart's values.yaml
names; the chart itself judges them in tests/test_chart_hatches.py, the API server in
tests/test_kube_hatches.py."""

from __future__ import annotations

from typing import Any

import pytest

from trinogen.errors import ConfigError
from trinogen.kinds.images import options as image
from trinogen.kinds.network_policies import options as network
from trinogen.kinds.runtime import jvm
from trinogen.kinds.runtime import options as runtime
from trinogen.kinds.services import options as service

DIGEST = "sha256:" + "ab" * 32
W = "settings.yaml: x.opt"


def _refused(parse: Any, raw: dict[str, Any], said: str) -> None:
    with pytest.raises(ConfigError) as e:
        parse(W, raw)
    assert said in str(e.value), str(e.value)


# --- image ------------------------------------------------------------------------------------

@pytest.mark.parametrize("raw", [
    {},
    {"repository": "registry.example.com:5000/trino/trino"},
    {"repository": "mirror.example.com/trinodb/trino", "digests": {476: DIGEST, "470": DIGEST}},
    {"pull_policy": "Always", "pull_secrets": ["registry-credentials", "docker.hub"]},
])
def test_image_options_kubernetes_can_pull_are_accepted(raw: dict[str, Any]) -> None:
    """A repository by distribution's grammar, digests by version, a pull policy and Secret
    names load."""
    assert isinstance(image.parse(W, raw), image.ImageOption)


@pytest.mark.parametrize("raw, said", [
    ({"repository": "trinodb/trino:476"}, "without a tag or digest"),
    ({"repository": "Trinodb/Trino"}, "is not an image repository"),
    ({"repository": "trino@sha256:" + "ab" * 32}, "is not an image repository"),
    ({"digests": {"476": "sha256:abc"}}, "is not an image digest"),
    ({"digests": {"latest": DIGEST}}, "is not a Trino version"),
    ({"digests": {476: DIGEST, "476": DIGEST}}, "listed twice"),
    ({"digests": {}}, "must be a mapping"),
    ({"pull_policy": "Sometimes"}, "choose one of"),
    ({"pull_secrets": ["Registry_Creds"]}, "object name"),
    ({"pull_secrets": ["a", "a"]}, "named twice"),
    ({"pull_secrets": "a"}, "list of Secret names"),
    ({"tag": "476"}, "unknown field"),
])
def test_image_options_that_would_not_pull_are_refused(raw: dict[str, Any], said: str) -> None:
    """A tag (the document's trinoVersion is the tag), bad names, digests or policies fail."""
    _refused(image.parse, raw, said)


def test_a_pinned_image_gives_the_versions_digest_and_refuses_other_versions() -> None:
    """With digests, a listed version gets its digest (the chart writes repository@digest), an
    unlisted one is a problem naming the pinned versions."""
    opt = image.parse(W, {"repository": "m.example.com/trino", "digests": {"476": DIGEST},
                          "pull_secrets": ["pull"]})
    assert image.image_values(opt, "476", "trinodb/trino") == {
        "image": {"repository": "m.example.com/trino", "tag": "476", "digest": DIGEST},
        "imagePullSecrets": [{"name": "pull"}]}
    assert image.version_problem(opt, "476") is None
    assert "476" in (image.version_problem(opt, "470") or "")


def test_an_unpinned_option_keeps_the_settings_repository_and_any_version() -> None:
    """Without repository or digests the chart's repository is the settings' and every
    version passes."""
    opt = image.parse(W, {"pull_policy": "Always"})
    assert image.image_values(opt, "470", "trinodb/trino") == {
        "image": {"repository": "trinodb/trino", "tag": "470", "pullPolicy": "Always"}}
    assert image.version_problem(opt, "470") is None


@pytest.mark.parametrize("img, version, flags", [
    ({"repository": "trinodb/trino"}, "476", ()),
    ({"repository": "m.example.com/trino"}, "476", image.PINNED_REGION_FLAGS),
    ({"repository": "trinodb/trino", "digest": DIGEST}, "476", image.PINNED_REGION_FLAGS),
    ({"repository": "m.example.com/trino"}, "447", ()),
    ({"repository": "m.example.com/trino"}, "448", image.PINNED_REGION_FLAGS),
])
def test_trinogen_writes_the_pinned_region_flags_exactly_when_the_chart_does_not(
        img: dict[str, Any], version: str, flags: tuple[str, ...]) -> None:
    """The chart writes the JDK-8329528 pair only for its stock image newer than 447; for any
    other image of such a Trino trinogen writes it."""
    assert image.pinned_region_flags(img, version) == flags


# --- JVM flags ----------------------------------------------------------------------------------

@pytest.mark.parametrize("flag, k", [
    ("-Xmx8G", "-Xmx"), ("-XX:+UseG1GC", "-XX:UseG1GC"), ("-XX:-UseG1GC", "-XX:UseG1GC"),
    ("-XX:MaxRAMPercentage=80", "-XX:MaxRAMPercentage"), ("-Dfoo.bar=1", "-Dfoo.bar"),
    ("-Dfoo", "-Dfoo"), ("-javaagent:/a.jar=x=y", "-javaagent:/a.jar"), ("-Xlog:gc", "-Xlog"),
    ("-server", "-server"),
])
def test_a_flags_key_is_what_a_later_flag_overrides(flag: str, k: str) -> None:
    """+/-/= forms of one -XX option share a key, as do -D of one name and sized -X options."""
    assert jvm.key(flag) == k


@pytest.mark.parametrize("flag, said", [
    ("-Xmx16G", "sizes the heap"), ("-Xms1G", "sizes the heap"),
    ("-XX:MaxRAMPercentage=75", "sizes the heap"), ("-XX:MaxHeapSize=4g", "sizes the heap"),
    ("-XX:+UseParallelGC", "already written"), ("-XX:G1HeapRegionSize=16M", "already written"),
    ("-XX:-ExitOnOutOfMemoryError", "already written"),
    ("-XX:G1NumCollectionsKeepPinned=1", "already written"),
    ("-XX:VMOptionsFile=/tmp/x", "reads flags from elsewhere"),
    ("-XX:Flags=/tmp/x", "reads flags from elsewhere"),
    ("-Dcom.sun.management.jmxremote.port=9999", "monitoring switch"),
    ("-Dnode.environment=prod", "launcher"), ("-Dconfig=/tmp/c", "launcher"),
    ("-Dlog.levels-file=/tmp/l", "launcher"),
    ("-Dquery.max-length=10", "is a Trino property"),
    ("-Dhttp-server.authentication.type=PASSWORD", "is a Trino property"),
    ("-Dhive.metastore.uri=thrift://x:9083", "is a Trino property"),
    ("@/tmp/argfile", "starting with '-'"), ("Xmx1G", "starting with '-'"),
    (" -Dx=1", "starting with '-'"), ("-Dx=1\n-Xmx1G", "printable"), ("-Dx=1 ", "surrounding"),
    (7, "one string"),
])
def test_flags_that_would_replace_what_is_written_and_checked_are_refused(
        flag: Any, said: str) -> None:
    """Heap sizes, the chart's flags, option files, JMX remote, launcher properties and any
    Trino property as a system property are refused, each saying why."""
    assert said in (jvm.problem(flag, runtime.trino_reads) or "")


@pytest.mark.parametrize("flag", [
    "-javaagent:/usr/lib/trino/otel/agent.jar", "-XX:MaxDirectMemorySize=4G",
    "-Duser.timezone=UTC", "-Djava.security.krb5.conf=/etc/krb5.conf", "-Xlog:gc*:stderr",
    "-XX:+UseStringDeduplication", "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "-Dotel.service.name=trino",
])
def test_flags_nothing_else_writes_are_accepted(flag: str) -> None:
    """Agents, direct memory, JDK system properties and logging pass."""
    assert jvm.problem(flag, runtime.trino_reads) is None


def test_the_registry_says_which_names_trino_reads() -> None:
    """Server and connector properties of the covered versions are Trino's; JDK ones are not."""
    assert runtime.trino_reads("query.max-memory")
    assert runtime.trino_reads("iceberg.catalog.type")
    assert not runtime.trino_reads("user.timezone")


# --- runtime: env and JVM -------------------------------------------------------------------------

def test_a_runtime_option_gives_env_with_patterns_filled_and_flags_per_role() -> None:
    """env is sorted by name with {cluster}/{owner} filled; each role gets the shared flags
    first, after what trinogen itself writes."""
    opt = runtime.parse(W, {"env": {"Z_LAST": "x", "OTEL_SERVICE_NAME": "trino-{cluster}-{owner}"},
                            "jvm": ["-XX:+UseStringDeduplication"],
                            "coordinator_jvm": ["-XX:MaxDirectMemorySize=4G"]})
    assert runtime.env_values(opt, "sales", "bi") == [
        {"name": "OTEL_SERVICE_NAME", "value": "trino-sales-bi"}, {"name": "Z_LAST", "value": "x"}]
    assert runtime.jvm_values(opt, "coordinator", image.PINNED_REGION_FLAGS) == [
        *image.PINNED_REGION_FLAGS, "-XX:+UseStringDeduplication", "-XX:MaxDirectMemorySize=4G"]
    assert runtime.jvm_values(opt, "worker") == ["-XX:+UseStringDeduplication"]


@pytest.mark.parametrize("raw, said", [
    ({"env": {"1X": "v"}}, "environment variable name"),
    ({"env": {"A-B": "v"}}, "environment variable name"),
    ({"env": {"TRINO_SECRET_DB": "v"}}, "would replace a secret"),
    ({"env": {"TRINO_VAULT_SECRET_X_0A1B2C3D": "v"}}, "would replace a secret"),
    ({"env": {"JAVA_TOOL_OPTIONS": "-Xmx64G"}}, "passes options to the JVM"),
    ({"env": {"JDK_JAVA_OPTIONS": "-Xmx64G"}}, "passes options to the JVM"),
    ({"env": {"X": 1}}, "must be a string"),
    ({"env": {"X": "{clusterId}"}}, "placeholders"),
    ({"env": ["X=1"]}, "must be a mapping"),
    ({"jvm": "-Xmx1G"}, "list of JVM flags"),
    ({"jvm": ["-Xmx1G"]}, "jvm[0]"),
    ({"worker_jvm": ["-Dquery.max-length=1"]}, "worker_jvm[0]"),
    ({"jvm": ["-XX:MaxDirectMemorySize=1G"], "coordinator_jvm": ["-XX:MaxDirectMemorySize=2G"]},
     "given twice for the coordinator"),
    ({"java_opts": []}, "unknown field"),
])
def test_runtime_options_that_would_shadow_or_bypass_are_refused(
        raw: dict[str, Any], said: str) -> None:
    """Bad names, secret variables, JVM option variables and refused or repeated flags fail."""
    _refused(runtime.parse, raw, said)


# --- network policy ---------------------------------------------------------------------------------

def test_a_network_option_lets_clients_and_the_controller_reach_the_coordinators_port() -> None:
    """The coordinator policy selects the coordinator's pods by the chart's labels, admits the
    named namespaces (by their immutable name label), CIDRs and, with an Ingress, the
    controller, on the serving port."""
    opt = network.parse(W, {"clients": ["bi", {"namespace": "air", "pod_labels": {"app": "s"}}],
                            "client_cidrs": ["10.20.0.0/16"], "ingress_controller": "ingress-nginx"})
    pol = network.coordinator_policy(opt, release="sales", namespace="trino-sales", https=False,
                                     ingress=True, labels={})
    assert pol is not None
    assert pol["spec"]["podSelector"]["matchLabels"] == {
        "app.kubernetes.io/name": "trino", "app.kubernetes.io/instance": "sales",
        "app.kubernetes.io/component": "coordinator"}
    (rule,) = pol["spec"]["ingress"]
    assert rule["ports"] == [{"port": "http", "protocol": "TCP"}]
    ns = "kubernetes.io/metadata.name"
    assert rule["from"] == [
        {"namespaceSelector": {"matchLabels": {ns: "bi"}}},
        {"namespaceSelector": {"matchLabels": {ns: "air"}}, "podSelector": {"matchLabels": {"app": "s"}}},
        {"ipBlock": {"cidr": "10.20.0.0/16"}},
        {"namespaceSelector": {"matchLabels": {ns: "ingress-nginx"}}}]


def test_with_tls_in_the_pod_only_the_https_port_is_opened_and_no_ingress_no_controller() -> None:
    """https: the coordinator's `https` port; without an Ingress the controller is not let in,
    and with nobody named there is no coordinator policy."""
    opt = network.parse(W, {"clients": ["bi"], "ingress_controller": "ingress-nginx"})
    pol = network.coordinator_policy(opt, release="s", namespace="n", https=True, ingress=False,
                                     labels={})
    assert pol is not None
    (rule,) = pol["spec"]["ingress"]
    assert rule["ports"] == [{"port": "https", "protocol": "TCP"}] and len(rule["from"]) == 1
    only_controller = network.parse(W, {"ingress_controller": "ingress-nginx"})
    assert network.coordinator_policy(only_controller, release="s", namespace="n", https=False,
                                      ingress=False, labels={}) is None


@pytest.mark.parametrize("monitoring, rules", [(True, 1), (False, 0)])
def test_prometheus_reaches_the_exporter_only_when_it_runs(monitoring: bool, rules: int) -> None:
    """The chart's policy gets a jmx-exporter rule from the monitoring namespace with the
    exporter on, none without; the policy is on either way."""
    opt = network.parse(W, {"monitoring": {"namespace": "monitoring"}})
    values = network.chart_values(opt, monitoring=monitoring)["networkPolicy"]
    assert values["enabled"] is True and len(values["ingress"]) == rules
    if rules:
        assert values["ingress"][0]["ports"] == [{"port": "jmx-exporter", "protocol": "TCP"}]


@pytest.mark.parametrize("ingress, monitor, count", [
    (False, False, 0), (True, False, 1), (False, True, 1), (True, True, 2)])
def test_an_ingress_or_service_monitor_the_policy_keeps_out_is_a_gap(
        ingress: bool, monitor: bool, count: int) -> None:
    """A policy naming neither controller nor Prometheus has one gap per pick that needs one."""
    assert len(network.gaps(network.NetworkOption(), ingress=ingress,
                            service_monitor=monitor)) == count


@pytest.mark.parametrize("raw, said", [
    ({"clients": "bi"}, "list of namespaces"),
    ({"clients": ["Bi_Team"]}, "not a namespace name"),
    ({"clients": ["a.b"]}, "not a namespace name"),
    ({"clients": [{"namespace": "bi", "labels": {}}]}, "unknown field"),
    ({"clients": [{"namespace": "bi", "pod_labels": {"app": "{cluster}"}}]}, "literal"),
    ({"client_cidrs": ["10.20.0.1/16"]}, "host bits zero"),
    ({"client_cidrs": ["10.20.0.0"]}, "not a CIDR"),
    ({"ingress_controller": 3}, "namespace name"),
    ({"egress": []}, "unknown field"),
])
def test_network_options_kubernetes_would_refuse_are_refused(
        raw: dict[str, Any], said: str) -> None:
    """Namespaces are DNS labels, pod labels literal, CIDRs exact; egress is not offered."""
    _refused(network.parse, raw, said)


# --- service --------------------------------------------------------------------------------------

def test_a_service_option_gives_the_type_and_filled_annotations() -> None:
    """`service.type` and `service.annotations` with {cluster} filled."""
    opt = service.parse(W, {"type": "LoadBalancer", "annotations": {
        "service.beta.kubernetes.io/aws-load-balancer-scheme": "internal",
        "example.com/owner": "{owner}"}})
    assert service.chart_values(opt, "c1", "bi") == {"service": {
        "type": "LoadBalancer", "annotations": {
            "example.com/owner": "bi",
            "service.beta.kubernetes.io/aws-load-balancer-scheme": "internal"}}}


@pytest.mark.parametrize("raw, said", [
    ({"type": "ExternalName"}, "choose one of"),
    ({"node_port": 30080}, "unknown field"),
    ({"annotations": {"metallb.universe.tf/loadBalancerIPs": "10.0.0.5"}}, "pins an address"),
    ({"annotations": {"MetalLB.io/allow-shared-ip": "k"}}, "shares an address"),
    ({"annotations": {"lbipam.cilium.io/sharing-key": "k"}}, "shares an address"),
    ({"annotations": {"service.beta.kubernetes.io/azure-pip-name": "p"}}, "pins a public IP"),
    ({"annotations": {"external-dns.alpha.kubernetes.io/hostname": "{cluster}.x.com"}},
     "headless worker Service"),
    ({"annotations": {"bad key!": "v"}}, "must be"),
])
def test_service_options_that_would_let_one_cluster_take_anothers_are_refused(
        raw: dict[str, Any], said: str) -> None:
    """A fixed node port, a pinned or shared address and a published DNS name are refused."""
    _refused(service.parse, raw, said)


@pytest.mark.parametrize("kind, policy, auth, errors, warnings", [
    ("ClusterIP", True, False, 0, 0),
    ("NodePort", True, True, 1, 0),
    ("NodePort", False, True, 0, 0),
    ("NodePort", False, False, 0, 1),
    ("LoadBalancer", True, False, 0, 1),
    ("LoadBalancer", True, True, 0, 0),
])
def test_a_service_meets_the_network_policy_and_authentication(
        kind: str, policy: bool, auth: bool, errors: int, warnings: int) -> None:
    """NodePort with a network policy is an error (the chart fails); an exposed type without
    authentication is a warning."""
    e, w = service.conflicts(service.ServiceOption(kind), network_policy=policy,
                             authenticated=auth)
    assert (len(e), len(w)) == (errors, warnings)
