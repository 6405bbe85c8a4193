"""Tenants enforced in the model (issue 19, finding 4): a document picks only the options its
tenant may pick, its owner must be a tenant, and the kinds its tenant or profile require must be
picked; settings without tenants let every document pick every option, as before."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT, example_docs, git
from trinogen.errors import Problem
from trinogen.model import classify
from trinogen.model.library import parse_library
from trinogen.model.raw_document import RawDocument
from trinogen.model.types import Cluster, Failed
from trinogen.settings import Settings, load_settings
from trinogen.source import doc_key

# One option of every kind for finance, a storage for growth. Each finance option carries a
# marker (finance-*) that shows up wherever it lands in the rendered files.
OPTIONS = """\
defaults:
  trinoVersion: "476"
  clusterConfig:
    coordinator:
      jvm: {maxHeapSize: "6G"}
      resources: {requests: {cpu: "1", memory: "6Gi"}, limits: {cpu: "2", memory: "8Gi"}}
    worker:
      replicas: 2
      jvm: {maxHeapSize: "6G"}
      resources: {requests: {cpu: "1", memory: "6Gi"}, limits: {cpu: "2", memory: "8Gi"}}
  properties:
    query: {max-memory-per-node: "2GB"}
profiles:
  secure: {}
storage:
  finance-lake:
    type: s3
    region: eu-west-1
    credentials:
      vault: {access_key: "secret/finance-s3/keys#access_key",
              secret_key: "secret/finance-s3/keys#secret_key"}
    spooling:
      location: s3://finance-spooled/{cluster}
      shared_secret_key: secret/finance-spooling/{cluster}#key
  growth-lake:
    type: s3
    region: eu-west-1
    credentials:
      vault: {access_key: "secret/growth-s3/keys#access_key",
              secret_key: "secret/growth-s3/keys#secret_key"}
exchange:
  finance-spool:
    storage: finance-lake
    location: s3://finance-spool-bucket/{cluster}
authentication:
  finance-password:
    type: PASSWORD
    tls: pod
    password_file: secret/finance-auth/{cluster}#password.db
    shared_secret: secret/finance-auth/{cluster}#shared-secret
    keystore: secret/finance-tls/{cluster}#keystore.pem
opa:
  finance-opa:
    policy_uri: https://opa.finance-policy.svc:8181/v1/data/trino/allow
service_accounts:
  finance-irsa:
    annotations: {eks.amazonaws.com/role-arn: "arn:aws:iam::1:role/finance-iam-role"}
ingress:
  finance-public:
    host: "{cluster}.finance-ingress.example.com"
    class_name: nginx
    annotations: {nginx.ingress.kubernetes.io/backend-protocol: HTTPS}
placement:
  finance-pool:
    nodeSelector: {pool: finance-nodes}
    tolerations: [{key: dedicated, operator: Equal, value: finance-nodes, effect: NoSchedule}]
    priorityClassName: platform-critical
disruption:
  finance-strict: {worker_max_unavailable: 1, coordinator_max_unavailable: 0}
"""

TENANTS: dict[str, Any] = {
    "tenants": {"growth_team": {"options": {"storage": ["growth-lake"]}},
                "finance": {"options": "all"}},
}

# Where each finance pick lands in the rendered files (strings from OPTIONS above).
MARKERS = ("finance-s3/keys", "finance-spool-bucket", "finance-auth/", "finance-tls/",
           "opa.finance-policy.svc", "finance-iam-role", "finance-ingress", "finance-nodes",
           "platform-critical", "finance-spooled", "finance-spooling/")

# A shared catalog of growth's own: the using cluster picks its storage.
SHARED = {"_id": "cat-ice", "name": "ice-shared", "owner": "growth_team",
          "properties": {"connector.name": "iceberg", "iceberg.catalog.type": "rest",
                         "iceberg.rest-catalog.uri": "http://rest.data:8181"}}

_GROWTH: dict[str, Any] = {
    "_id": "growth-1", "clusterId": "growth", "owner": "growth_team", "enabled": True,
    "authentication": "finance-password",
    "accessControl": {"opa": "finance-opa"},
    "serviceAccount": "finance-irsa",
    "ingress": "finance-public",
    "disruption": "finance-strict",
    "faultTolerance": {"retryPolicy": "TASK", "exchange": "finance-spool"},
    "spooling": {"storage": "finance-lake"},
    "clusterConfig": {"coordinator": {"placement": "finance-pool"},
                      "worker": {"placement": "finance-pool"}},
    "connectors": [
        {"name": "lake", "storage": "finance-lake",
         "properties": {"connector.name": "hive", "hive.metastore.uri": "thrift://hms:9083"}},
        {"name": "ice", "shared": "ice-shared", "storage": "finance-lake"}],
}

# Every pick of the growth document, as the field each refusal names.
PICKS = ("authentication", "accessControl.opa", "serviceAccount", "ingress", "disruption",
         "faultTolerance.exchange", "spooling.storage", "clusterConfig.coordinator.placement",
         "clusterConfig.worker.placement", 'connectors["lake"].storage',
         'connectors["ice"].storage')


def growth() -> dict[str, Any]:
    """A fresh copy of the growth_team document picking every finance option."""
    return copy.deepcopy(_GROWTH)


def settings_text(**sections: Any) -> str:
    return OPTIONS + (yaml.safe_dump(sections) if sections else "")


def load(tmp_path: Path, **sections: Any) -> Settings:
    path = tmp_path / "settings.yaml"
    path.write_text(settings_text(**sections))
    return load_settings(path, environ={})


def judge(s: Settings, doc: dict[str, Any]) -> Cluster | Failed:
    library = parse_library([RawDocument(doc_key(SHARED["_id"]), copy.deepcopy(SHARED))])
    out = classify(RawDocument(doc_key(doc["_id"]), doc), s, library)
    assert isinstance(out, (Cluster, Failed)), out
    return out


def problems(out: Cluster | Failed) -> dict[str, str]:
    assert isinstance(out, Failed), "the document was accepted"
    found: dict[str, str] = {}
    for p in out.problems:
        assert isinstance(p, Problem)
        found.setdefault(p.field, p.message)
    return found


# --- the model, as tables -----------------------------------------------------------------------


def test_without_tenants_every_document_picks_every_option(tmp_path: Path) -> None:
    """Settings without tenants: growth_team's document gets every finance option (finding 4)."""
    out = judge(load(tmp_path), growth())
    assert isinstance(out, Cluster), getattr(out, "problems", None)


def test_with_tenants_each_foreign_pick_fails(tmp_path: Path) -> None:
    """With tenants declared, each finance pick of growth_team's document fails at its field."""
    found = problems(judge(load(tmp_path, **TENANTS), growth()))
    assert set(found) == set(PICKS)


@pytest.mark.parametrize("field", PICKS)
def test_a_refused_pick_names_option_tenant_and_what_it_may_pick(tmp_path: Path,
                                                                   field: str) -> None:
    """The message names the option, the tenant and the options of that kind it may pick."""
    message = problems(judge(load(tmp_path, **TENANTS), growth()))[field]
    assert 'is not ' in message and ' option tenant "growth_team" may pick (' in message
    assert '"finance-' in message
    if field.endswith(".storage"):
        assert "tenants.growth_team.options.storage: growth-lake" in message
    else:
        assert "it may pick no " in message and "names none" in message


@pytest.mark.parametrize("name", ["finance-lake", "finance-lak", "no-such-store"])
def test_a_name_outside_the_tenants_list_reads_the_same_whether_it_exists(
        tmp_path: Path, name: str) -> None:
    """An existing foreign option, a near miss and a made-up name get one message: a tenant
    learns its own options, never whether another tenant's exists."""
    doc = {"_id": "g", "clusterId": "growth", "owner": "growth_team", "enabled": True,
           "connectors": [{"name": "ice", "shared": "ice-shared", "storage": name}]}
    message = problems(judge(load(tmp_path, **TENANTS), doc))['connectors["ice"].storage']
    assert message == (f'"{name}" is not a storage option tenant "growth_team" may pick '
                       "(tenants.growth_team.options.storage: growth-lake)")


def test_a_tenant_allowed_the_options_gets_them(tmp_path: Path) -> None:
    """`options: all` (finance) makes the same picks valid: the tenant, not the kind, decides."""
    doc = {**growth(), "owner": "finance"}
    shared = load(tmp_path, tenants={"finance": {"options": "all"}})
    # the shared catalog belongs to growth_team: drop it, finance cannot use it
    doc["connectors"] = doc["connectors"][:1]
    assert isinstance(judge(shared, doc), Cluster)


def test_an_allowed_storage_passes_and_a_foreign_one_in_a_shared_catalog_fails(
        tmp_path: Path) -> None:
    """The storage picked for a shared catalog is judged against the USING cluster's tenant."""
    doc = {"_id": "g", "clusterId": "growth", "owner": "growth_team", "enabled": True,
           "connectors": [{"name": "ice", "shared": "ice-shared", "storage": "growth-lake"}]}
    s = load(tmp_path, **TENANTS)
    assert isinstance(judge(s, doc), Cluster)
    doc["connectors"][0]["storage"] = "finance-lake"
    assert set(problems(judge(s, doc))) == {'connectors["ice"].storage'}


@pytest.mark.parametrize(("layer", "field"), [
    ({"defaults": {"disruption": "finance-strict"}}, "disruption"),
    ({"profiles": {"secure": {"serviceAccount": "finance-irsa"}}}, "serviceAccount"),
    ({"profiles": {"secure": {"clusterConfig": {"worker": {"placement": "finance-pool"}}}}},
     "clusterConfig.worker.placement"),
])
def test_a_pick_inherited_from_defaults_or_a_profile_counts_the_same(
        tmp_path: Path, layer: dict[str, Any], field: str) -> None:
    """The merged document is judged: a foreign option from a layer fails like a written one."""
    base = yaml.safe_load(OPTIONS)
    for key, value in layer.items():
        base[key] = {**base.get(key, {}), **value} if key != "defaults" else {
            **base["defaults"], **value}
    path = tmp_path / "settings.yaml"
    path.write_text(yaml.safe_dump({**base, **TENANTS}))
    doc = {"_id": "g", "clusterId": "growth", "owner": "growth_team", "enabled": True,
           "profile": "secure"}
    assert set(problems(judge(load_settings(path, environ={}), doc))) == {field}


@pytest.mark.parametrize("owner", ["marketing", "Growth_team", "growth_team "])
def test_an_owner_the_tenants_do_not_name_fails(tmp_path: Path, owner: str) -> None:
    """With tenants declared, an owner they do not name (other case included) fails at owner."""
    doc = {"_id": "g", "clusterId": "growth", "owner": owner, "enabled": True}
    found = problems(judge(load(tmp_path, **TENANTS), doc))
    assert "owner" in found
    if owner == "marketing":
        assert "is not a tenant of these settings (`tenants` in" in found["owner"]
        assert "finance, growth_team" in found["owner"]


@pytest.mark.parametrize(("kind", "doc_part", "fields"), [
    ("authentication", {}, ["authentication"]),
    ("authentication", {"authentication": None}, ["authentication"]),
    ("opa", {"accessControl": {"rules": {"catalogs": [{"allow": "all"}]}}},
     ["accessControl.opa"]),
    ("service_accounts", {}, ["serviceAccount"]),
    ("ingress", {}, ["ingress"]),
    ("disruption", {}, ["disruption"]),
    ("exchange", {"faultTolerance": {"retryPolicy": "QUERY"}}, ["faultTolerance.exchange"]),
    ("placement", {"clusterConfig": {"worker": {"placement": "finance-pool"}}},
     ["clusterConfig.coordinator.placement"]),
    ("placement", {}, ["clusterConfig.coordinator.placement", "clusterConfig.worker.placement"]),
])
def test_a_kind_the_tenant_requires_must_be_picked(tmp_path: Path, kind: str,
                                                   doc_part: dict[str, Any],
                                                   fields: list[str]) -> None:
    """A tenant's `require`: each required field must name an option; a null does not remove
    it, and the message names the setting that requires it."""
    s = load(tmp_path, tenants={"finance": {"options": "all", "require": [kind]}})
    doc = {"_id": "f", "clusterId": "fin", "owner": "finance", "enabled": True, **doc_part}
    found = problems(judge(s, doc))
    assert sorted(f for f in found if f in fields or "required by" in found[f]) == sorted(fields)
    for f in fields:
        assert 'is required by tenant "finance" (tenants.finance.require)' in found[f]


def test_a_null_cannot_remove_a_required_pick_inherited_from_the_defaults(tmp_path: Path) -> None:
    """defaults pick the authentication, the tenant requires it: `"authentication": null` fails."""
    base = yaml.safe_load(OPTIONS)
    base["defaults"]["authentication"] = "finance-password"
    base["tenants"] = {"finance": {"options": "all", "require": ["authentication"]}}
    path = tmp_path / "settings.yaml"
    path.write_text(yaml.safe_dump(base))
    s = load_settings(path, environ={})
    doc = {"_id": "f", "clusterId": "fin", "owner": "finance", "enabled": True}
    assert isinstance(judge(s, doc), Cluster)
    found = problems(judge(s, {**doc, "authentication": None}))
    assert list(found) == ["authentication"]
    assert "a null here or in a layer does not remove it" in found["authentication"]


def test_a_profile_requirement_applies_without_tenants(tmp_path: Path) -> None:
    """`profile_requirements` binds every document on the profile, tenants declared or not."""
    s = load(tmp_path, profile_requirements={"secure": ["disruption"]})
    doc = {"_id": "g", "clusterId": "growth", "owner": "anyone", "enabled": True}
    assert isinstance(judge(s, doc), Cluster)
    found = problems(judge(s, {**doc, "profile": "secure"}))
    assert found == {"disruption": 'is required by profile "secure" '
                     "(profile_requirements.secure): pick a disruption option (a null here or "
                     "in a layer does not remove it)"}
    assert isinstance(judge(s, {**doc, "profile": "secure", "disruption": "finance-strict"}),
                      Cluster)


def test_tenant_and_profile_requirements_are_named_together(tmp_path: Path) -> None:
    """A kind both require is reported once, naming both settings."""
    s = load(tmp_path, profile_requirements={"secure": ["disruption"]},
             tenants={"finance": {"options": "all", "require": ["disruption"]}})
    doc = {"_id": "f", "clusterId": "fin", "owner": "finance", "enabled": True,
           "profile": "secure"}
    message = problems(judge(s, doc))["disruption"]
    assert ('required by tenant "finance" (tenants.finance.require) and profile "secure" '
            "(profile_requirements.secure)") in message


# --- a real `trinogen sync` ---------------------------------------------------------------------


def _sync(tmp_path: Path, **sections: Any) -> tuple[subprocess.CompletedProcess[str],
                                                      dict[str, str]]:
    """`trinogen --config <settings> sync` of the growth document; the remote's files after."""
    seed = tmp_path / "seed"
    (seed / "catalogs").mkdir(parents=True)
    (seed / "docs.json").write_text(json.dumps([growth()]))
    (seed / "catalogs" / "ice.json").write_text(json.dumps(SHARED))
    remote = tmp_path / "remote.git"
    git("init", "--quiet", "--bare", "--initial-branch=main", str(remote))
    config = tmp_path / "settings.yaml"
    config.write_text(settings_text(
        mongodb={"uri": "mongomock://", "seed_dir": str(seed)},
        git={"remote": str(remote), "workdir": str(tmp_path / "wd")},
        argocd={"repo_url": "https://git.example.com/gitops.git"},
        secrets={"check": False}, **sections))
    proc = subprocess.run([sys.executable, "-m", "trinogen.cli", "--config", str(config), "sync"],
                          check=False, capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    heads = git("--git-dir", str(remote), "for-each-ref", "refs/heads")
    if not heads.strip():
        return proc, {}
    names = git("--git-dir", str(remote), "ls-tree", "-r", "--name-only", "main").split()
    return proc, {n: git("--git-dir", str(remote), "show", f"main:{n}") for n in names}


def test_sync_without_tenants_hands_growth_every_finance_option(tmp_path: Path) -> None:
    """Finding 4 as it was: the sync commits each finance option into growth's files."""
    proc, files = _sync(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = "\n".join(v for k, v in files.items() if k.startswith("trino-clusters/growth/"))
    assert [m for m in MARKERS if m not in text] == []


def test_sync_with_tenants_refuses_each_foreign_pick(tmp_path: Path) -> None:
    """With tenants declared, the same sync reports every pick and writes none of them."""
    proc, files = _sync(tmp_path, **TENANTS)
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    for field in PICKS:
        assert f"{field}: " in out and "may pick" in out, field
    assert [k for k in files if "growth" in k] == []
    assert not any(m in v for v in files.values() for m in MARKERS)


# --- the shipped example: config/tenants.yaml -----------------------------------------------------

EXAMPLE = ROOT / "config" / "tenants.yaml"


def test_the_shipped_tenants_example_validates() -> None:
    """`trinogen --config config/tenants.yaml validate` accepts the example documents."""
    proc = subprocess.run([sys.executable, "-m", "trinogen.cli", "--config", str(EXAMPLE),
                           "validate"], check=False, capture_output=True, text=True, timeout=300,
                          cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 valid, 0 disabled, 0 failed" in proc.stdout


@pytest.mark.parametrize(("owner", "change", "field"), [
    ("growth_analytics", {"owner": "growth-analytics"}, "owner"),
    ("growth_analytics", {"clusterConfig": {"worker": {"placement": "spot-workers"}}},
     "clusterConfig.worker.placement"),
    ("data_analytics_team", {"disruption": None}, "disruption"),
    ("data_platform", {"profile": "production", "disruption": None}, "disruption"),
])
def test_the_shipped_example_refuses_what_its_comments_say(owner: str, change: dict[str, Any],
                                                           field: str) -> None:
    """Each rule the example's comments state, on its own documents (read with PyYAML)."""
    s = load_settings(EXAMPLE, environ={})
    raw = yaml.safe_load(EXAMPLE.read_text())
    assert owner in raw["tenants"]
    doc = next(d for d in example_docs() if d["owner"] == owner)
    doc = {**doc, "_id": "x", **change}
    assert isinstance(judge(s, doc), Failed)
    assert field in problems(judge(s, doc))
