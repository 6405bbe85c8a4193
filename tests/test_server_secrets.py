"""Secret placeholders in server properties (issue 13, item 1): the catalogs' rules, in config.properties.

Expectations come from the documents and the settings (the Vault path a placeholder maps to is
formatted here from `secrets.default_ref`), and the chart's output is read back with the
independent properties reader.
"""

from __future__ import annotations

import copy
import hashlib
import re
from typing import Any

import pytest
import yaml

from tests import chart_pods
from tests.conftest import CHART_DIR, demo_settings, needs
from trinogen.desired import Secrets, secret_problems
from trinogen.model import Cluster, Failed, RawDocument, classify
from trinogen.render import Renderer
from trinogen.secrets import Secret, SecretData

CID = "vaulted"


def _doc(**body: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {"_id": f"test-{CID}", "clusterId": CID, "owner": "qa_team",
                           "enabled": True,
                           "connectors": [{"name": "tpch", "properties": {"connector.name": "tpch"}}]}
    doc.update(copy.deepcopy(body))
    return doc


def _classify(doc: dict[str, Any]) -> Cluster | Failed:
    out = classify(RawDocument(f'"{doc["_id"]}"', doc), demo_settings())
    assert isinstance(out, (Cluster, Failed))
    return out


def _vault_path(name: str) -> tuple[str, str]:
    """Where `{{ NAME }}` lives, by the demo settings' default_ref (read here, not from trinogen)."""
    ref = demo_settings().secrets.default_ref.format(cluster=CID, owner="qa_team", name=name)
    where, _, key = ref.partition("#")
    return where, key


def _vault_env(ref: str) -> str:
    """TRINO_VAULT_<slug>_<8 hex>: the naming README's Secrets section documents."""
    slug = re.sub(r"[^A-Za-z0-9]+", "_", ref).strip("_").upper()[:80]
    return f"TRINO_VAULT_{slug}_{hashlib.sha256(ref.encode()).hexdigest()[:8].upper()}"


SHARED = {"internal-communication": {"shared-secret": "{{ INTERNAL_SECRET }}"}}


def test_a_placeholder_in_a_server_property_becomes_an_env_reference_and_an_external_secret_entry() -> None:
    """properties.x = {{ NAME }} is written as ${ENV:TRINO_SECRET_NAME}; the env Secret maps that
    variable to the Vault path the settings map NAME to."""
    cluster = _classify(_doc(properties=SHARED))
    assert isinstance(cluster, Cluster)
    files = Renderer(demo_settings()).render_cluster(cluster, {})
    values = yaml.safe_load(files[f"trino-clusters/{CID}/values.yaml"])
    assert values["additionalConfigProperties"] == [
        "internal-communication.shared-secret=${ENV:TRINO_SECRET_INTERNAL_SECRET}"]
    assert values["envFrom"] == [{"secretRef": {"name": f"{CID}-trino-secrets"}}]
    es = chart_pods.external_secrets(files)[f"{CID}-trino-secrets"]
    key, prop = _vault_path("INTERNAL_SECRET")
    assert es["spec"]["data"] == [{"secretKey": "TRINO_SECRET_INTERNAL_SECRET",
                                   "remoteRef": {"key": key, "property": prop}}]


def test_a_vault_reference_in_a_role_property_goes_to_that_roles_file_only() -> None:
    """A {{ vault:... }} in clusterConfig.coordinator.properties reaches coordinatorExtraConfig."""
    ref = f"secret/trino/{CID}/events#token"
    doc = _doc(clusterConfig={"coordinator": {"properties": {
        "exchange": {"compression-codec": f"pre-{{{{ vault:{ref} }}}}-post"}}}})
    cluster = _classify(doc)
    assert isinstance(cluster, Cluster), cluster
    values = yaml.safe_load(Renderer(demo_settings()).render_cluster(cluster, {})[
        f"trino-clusters/{CID}/values.yaml"])
    lines = values["server"]["coordinatorExtraConfig"].splitlines()
    assert f"exchange.compression-codec=pre-${{ENV:{_vault_env(ref)}}}-post" in lines
    assert "workerExtraConfig" not in values["server"]


@pytest.mark.parametrize(("properties", "role_properties", "field", "needle"), [
    ({"node": {"environment": "{{ ENV_NAME }}"}}, None, "properties.node.environment",
     "cannot take a secret placeholder"),
    ({"node": {"data-dir": "{{ X }}"}}, None, "properties.node.data-dir",
     "cannot take a secret placeholder"),
    ({"node": {"some-flag": "{{ X }}"}}, None, "properties.node.some-flag",
     "node.properties carries no secrets"),
    ({"query": {"max-memory": "{{ X }}"}}, None, "properties.query.max-memory",
     "the chart writes it from values.yaml"),
    ({"query": {"max-memory-per-node": "{{ X }}"}}, None, "properties.query.max-memory-per-node",
     "the chart writes it from values.yaml"),
    (None, {"memory": {"heap-headroom-per-node": "{{ X }}"}},
     "clusterConfig.worker.properties.memory.heap-headroom-per-node",
     "the chart writes it from values.yaml"),
    ({"exchange": {"compression-codec": "${ENV:HOME}"}}, None,
     "properties.exchange.compression-codec", "reserved for trinogen's secret wiring"),
    ({"exchange": {"compression-codec": "{{ vault:nokey }}"}}, None,
     "properties.exchange.compression-codec", "has no key"),
    ({"exchange": {"compression-codec": "{{ vault:secret/trino/other/x#k }}"}}, None,
     "properties.exchange.compression-codec", "outside this cluster's allowed paths"),
    (None, {"exchange": {"compression-codec": "{{ vault:secret/elsewhere#k }}"}},
     "clusterConfig.worker.properties.exchange.compression-codec", "outside this cluster"),
])
def test_placeholders_are_refused_where_they_cannot_work(
    properties: dict[str, Any] | None, role_properties: dict[str, Any] | None, field: str,
    needle: str,
) -> None:
    """Placeholders in keys the chart or node.properties owns, a document's own ${ENV:...}, a
    broken or out-of-scope reference: each fails the document at its field."""
    body: dict[str, Any] = {}
    if properties:
        body["properties"] = properties
    if role_properties:
        body["clusterConfig"] = {"worker": {"properties": role_properties}}
    out = _classify(_doc(**body))
    assert isinstance(out, Failed)
    assert any(p.field == field and needle in p.message for p in out.problems), out.problems


def test_a_rotation_of_a_server_secret_rolls_the_pods() -> None:
    """The pods' secrets checksum depends on the Vault version of a server property's secret."""
    cluster = _classify(_doc(properties=SHARED))
    assert isinstance(cluster, Cluster)
    path, key = _vault_path("INTERNAL_SECRET")
    sums = set()
    for version in (1, 2):
        files = Renderer(demo_settings()).render_cluster(
            cluster, {path: SecretData(version, {key: Secret("s3cr3t")})})
        values = yaml.safe_load(files[f"trino-clusters/{CID}/values.yaml"])
        sums.add(values["coordinator"]["annotations"]["trinogen.io/secrets-checksum"])
        assert values["worker"]["annotations"] == values["coordinator"]["annotations"]
    assert len(sums) == 2


def test_a_missing_vault_key_names_the_server_property() -> None:
    """A server property's placeholder whose Vault secret lacks the key fails at that field."""
    cluster = _classify(_doc(properties=SHARED))
    assert isinstance(cluster, Cluster)
    path, _ = _vault_path("INTERNAL_SECRET")
    problems = secret_problems(cluster, Secrets({path: SecretData(1, {"other": Secret("x")})}))
    assert [p.field for p in problems] == ["properties.internal-communication.shared-secret"]


def test_inline_mode_keeps_server_secrets_in_the_env_secret() -> None:
    """With secrets.mode inline, catalog values are written into the files but a server
    property still reads ${ENV:...} from the env ExternalSecret: its value is in no file."""
    doc = _doc(properties=SHARED)
    doc["connectors"].append({"name": "pg", "properties": {
        "connector.name": "postgresql", "connection-url": "jdbc:postgresql://db:5432/x",
        "connection-password": "{{ PG_PASSWORD }}"}})
    cluster = _classify(doc)
    assert isinstance(cluster, Cluster), cluster
    shared_path, shared_key = _vault_path("INTERNAL_SECRET")
    pg_path, pg_key = _vault_path("PG_PASSWORD")
    assert shared_path == pg_path  # the demo's default_ref: one secret per cluster
    resolved = {shared_path: SecretData(3, {shared_key: Secret("shared-VALUE"),
                                            pg_key: Secret("pg-VALUE")})}
    files = Renderer(demo_settings()).render_cluster(cluster, resolved, inline=True)
    values = yaml.safe_load(files[f"trino-clusters/{CID}/values.yaml"])
    assert values["additionalConfigProperties"] == [
        "internal-communication.shared-secret=${ENV:TRINO_SECRET_INTERNAL_SECRET}"]
    assert "connection-password=pg-VALUE" in values["catalogs"]["pg"]
    es = chart_pods.external_secrets(files)[f"{CID}-trino-secrets"]
    assert [d["secretKey"] for d in es["spec"]["data"]] == ["TRINO_SECRET_INTERNAL_SECRET"]
    assert not any(b"shared-VALUE" in b for b in files.values())


def test_documents_without_server_placeholders_still_refuse_nothing_new() -> None:
    """A plain server property renders as before: no env Secret, no checksum."""
    cluster = _classify(_doc(properties={"exchange": {"compression-codec": "LZ4"}}))
    assert isinstance(cluster, Cluster) and cluster.server_secrets == ()
    values = yaml.safe_load(Renderer(demo_settings()).render_cluster(cluster, {})[
        f"trino-clusters/{CID}/values.yaml"])
    assert values["additionalConfigProperties"] == ["exchange.compression-codec=LZ4"]
    assert "envFrom" not in values and "annotations" not in values["coordinator"]


@needs(chart_pods.helm_python is not None, "helm-python-sdk is not installed")
@needs((CHART_DIR / "Chart.yaml").is_file(), f"no Trino chart at {CHART_DIR}")
def test_through_the_chart_both_roles_read_the_variable_their_env_secret_carries() -> None:
    """In the chart's ConfigMaps each role's config.properties names ${ENV:VAR}, and VAR is a key
    of the Secret both containers take as envFrom."""
    cluster = _classify(_doc(properties=SHARED))
    assert isinstance(cluster, Cluster)
    files = Renderer(demo_settings()).render_cluster(cluster, {})
    pods = chart_pods.render(files[f"trino-clusters/{CID}/values.yaml"].decode(), CID)
    secrets = chart_pods.external_secrets(files)
    for role, pod in pods.items():
        value = pod.config()["internal-communication.shared-secret"]
        m = re.fullmatch(r"\$\{ENV:([A-Z0-9_]+)\}", value)
        assert m, (role, value)
        (env_secret,) = pod.env_secrets()
        assert m.group(1) in [d["secretKey"] for d in secrets[env_secret]["spec"]["data"]]

