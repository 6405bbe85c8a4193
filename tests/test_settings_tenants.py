"""Tenants in the settings: what each may pick, require and use, refused when they name nothing real."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from trinogen.errors import ConfigError
from trinogen.render import Renderer
from trinogen.settings import load_settings

# Two real option kinds, so the loader's own parsers run: a placement and a disruption option.
OPTIONS = {
    "placement": {"spot": {"nodeSelector": {"pool": "spot"}},
                  "finance-pool": {"nodeSelector": {"pool": "finance"}}},
    "disruption": {"strict": {"worker_max_unavailable": 1}},
}


def _load(tmp_path: Path, **sections: object) -> object:
    path = tmp_path / "settings.yaml"
    path.write_text(yaml.safe_dump({**OPTIONS, "profiles": {"secure": {}}, **sections}))
    return load_settings(path, environ={})


def test_no_tenants_means_none_declared(tmp_path: Path) -> None:
    """Settings without a tenants section declare none: every owner is unknown to them."""
    s = _load(tmp_path)
    assert s.tenants == {} and s.tenant("growth") is None  # type: ignore[attr-defined]


def test_a_tenant_reads_as_written(tmp_path: Path) -> None:
    """Options by name or all, requirements, quotas as quantities and the default project."""
    s = _load(tmp_path, tenants={"growth_team": {
        "options": {"placement": ["spot"], "disruption": "all"},
        "require": ["disruption"],
        "quotas": {"clusters": 3, "workers": 10, "cpu": "40", "memory": "160Gi"},
    }})
    t = s.tenant("growth_team")  # type: ignore[attr-defined]
    assert t.may_pick("placement", "spot") and not t.may_pick("placement", "finance-pool")
    assert t.may_pick("disruption", "strict") and not t.may_pick("storage", "x")
    assert t.require == ("disruption",)
    assert (t.quotas.clusters, t.quotas.workers) == (3, 10)
    assert t.quotas.cpu == Decimal(40) and t.quotas.memory == Decimal(160 * 2**30)
    assert t.project == "trino-growth-team"


def test_options_all_lets_a_tenant_pick_everything(tmp_path: Path) -> None:
    """`options: all` is every option of every kind."""
    t = _load(tmp_path, tenants={"platform": {"options": "all"}}).tenant("platform")  # type: ignore[attr-defined]
    assert t.may_pick("placement", "finance-pool") and t.may_pick("disruption", "strict")


@pytest.mark.parametrize(("tenants", "message"), [
    ({"growth": {"options": {"placement": ["nope"]}}},
     "tenants.growth.options.placement: no placement option is named 'nope'"),
    ({"growth": {"options": {"storage": ["x"]}}},
     "tenants.growth.options.storage: the settings offer no storage options"),
    ({"growth": {"options": {"placement": "spot"}}},
     "tenants.growth.options.placement must be 'all' or a list"),
    ({"growth": {"option": {}}}, "tenants.growth.option: unknown field"),
    ({"growth": {"require": ["storage"]}}, "'storage' cannot be required"),
    ({"growth": {"require": ["disruption"]}},
     "disruption is required but the tenant may pick no disruption option"),
    ({"growth": {"quotas": {"cpus": 1}}}, "tenants.growth.quotas.cpus: unknown quota"),
    ({"growth": {"quotas": {"cpu": "lots"}}}, "tenants.growth.quotas.cpu must be a Kubernetes quantity"),
    ({"growth": {"quotas": {"clusters": -1}}}, "tenants.growth.quotas.clusters must be a whole number"),
    ({"growth": {"quotas": {"clusters": True}}}, "tenants.growth.quotas.clusters must be a whole number"),
    ({"growth": {"project": "Not_A_Label"}}, "tenants.growth.project must be a DNS label"),
    ({"a_b": {}, "a-b": {}}, "'trino-a-b' is also the project of tenant"),
    ({"-bad": {}}, "'-bad' is not an owner a document can declare"),
    ({"growth": []}, "tenants.growth must be a mapping"),
    (["growth"], "tenants must be a mapping"),
    # An empty or mistyped section must not quietly mean "no tenants" (any owner, any option).
    ([], "tenants must be a mapping"),
    ("", "tenants must be a mapping"),
    ({}, "tenants declares no tenant"),
])
def test_a_tenant_naming_nothing_real_is_refused(tmp_path: Path, tenants: object, message: str) -> None:
    """The loader refuses a tenant that names an option, kind or field that does not exist."""
    with pytest.raises(ConfigError, match="settings.yaml: ") as e:
        _load(tmp_path, tenants=tenants)
    assert message in str(e.value)


@pytest.mark.parametrize(("requirements", "message"), [
    ({"nope": ["disruption"]}, "profile_requirements.nope: no such profile (secure)"),
    ({"secure": "disruption"}, "profile_requirements.secure must be a list"),
    ({"secure": ["colour"]}, "'colour' cannot be required"),
    ([], "profile_requirements must be a mapping"),
])
def test_profile_requirements_are_checked(tmp_path: Path, requirements: object, message: str) -> None:
    """A requirement names a real profile and a kind that can be required."""
    with pytest.raises(ConfigError) as e:
        _load(tmp_path, profile_requirements=requirements)
    assert message in str(e.value)


def test_profile_requirements_read_as_written(tmp_path: Path) -> None:
    """A profile's required kinds are kept in order."""
    s = _load(tmp_path, profile_requirements={"secure": ["disruption", "placement"]})
    assert s.profile_requirements == {"secure": ("disruption", "placement")}  # type: ignore[attr-defined]


def test_tenants_come_from_the_file_only(tmp_path: Path) -> None:
    """`--set tenants...` is refused: who may pick what is written in the settings file."""
    with pytest.raises(ConfigError, match="say who may pick what"):
        load_settings(None, environ={}, overrides={"tenants.growth": "x"})


def test_the_fingerprint_follows_tenants_and_is_stable(tmp_path: Path) -> None:
    """A tenant's change re-renders (fingerprint), the same settings give the same one, none none."""
    def fp(**sections: object) -> str:
        return Renderer(_load(tmp_path, **sections)).fingerprint  # type: ignore[arg-type]

    one = {"g": {"options": {"placement": ["spot", "finance-pool"]}}}
    assert fp(tenants=one) == fp(tenants=one)
    assert fp(tenants=one) != fp(tenants={"g": {"options": {"placement": ["spot"]}}})
    assert fp() != fp(tenants=one)


def test_tenant_projects_need_tenants(tmp_path: Path) -> None:
    """argocd.tenant_projects without tenants is refused: there is no project to put clusters in."""
    with pytest.raises(ConfigError, match="tenant_projects is true but the settings declare no"):
        _load(tmp_path, argocd={"tenant_projects": True})


@pytest.mark.parametrize(("project", "argocd"), [
    ("default", {}),
    ("platform", {"project": "platform"}),
])
def test_a_tenant_project_cannot_be_a_reserved_one(tmp_path: Path, project: str,
                                                   argocd: dict[str, str]) -> None:
    """`default` (allows everything) and argocd.project (the app-of-apps') are never a tenant's."""
    with pytest.raises(ConfigError, match=f"tenants.growth.project: '{project}'"):
        _load(tmp_path, argocd={"tenant_projects": True, **argocd},
              tenants={"growth": {"project": project}})


def test_reserved_project_names_do_not_matter_without_tenant_projects(tmp_path: Path) -> None:
    """With projects off, a tenant's project name is never written, so it is not judged."""
    s = _load(tmp_path, argocd={"project": "platform"}, tenants={"growth": {"project": "platform"}})
    assert s.tenant("growth").project == "platform"  # type: ignore[attr-defined]
