"""The `resource_groups` kind: a platform policy by name or a document's own groups (issue 21).

Settings are loaded from YAML text as a platform writes them; documents go through `classify`.
Expected JSON is the input itself (the file Trino reads is the groups as written).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT
from trinogen.errors import ConfigError, Problem
from trinogen.model import classify
from trinogen.model.raw_document import RawDocument
from trinogen.model.types import Cluster, Failed
from trinogen.settings import Settings, load_settings

SHARED: dict[str, Any] = {
    "rootGroups": [
        {"name": "adhoc", "softMemoryLimit": "60%", "hardConcurrencyLimit": 10, "maxQueued": 100,
         "subGroups": [{"name": "${USER}", "hardConcurrencyLimit": 2, "maxQueued": 10}]},
        {"name": "etl", "softMemoryLimit": "40%", "hardConcurrencyLimit": 5, "maxQueued": 50},
    ],
    "selectors": [{"source": ".*airflow.*", "group": "etl"}, {"group": "adhoc.${USER}"}],
}
OWN: dict[str, Any] = {
    "rootGroups": [{"name": "all", "hardConcurrencyLimit": 3, "maxQueued": 30}],
    "selectors": [{"group": "all"}],
}
BROKEN = {"rootGroups": [{"name": "all", "hardConcurrencyLimit": 3}],
          "selectors": [{"group": "all"}]}


def load(tmp_path: Path, **sections: Any) -> Settings:
    """config/demo.yaml with these options, its defaults updated and other sections added."""
    body = yaml.safe_load((ROOT / "config" / "demo.yaml").read_text())
    body["defaults"].update(sections.pop("defaults", {}))
    body.update(resource_groups={"shared": SHARED, "broken": BROKEN, "small": OWN,
                                 **sections.pop("resource_groups", {})}, **sections)
    path = tmp_path / "settings.yaml"
    path.write_text(yaml.safe_dump(body))
    return load_settings(path, environ={})


def doc(**body: Any) -> dict[str, Any]:
    return {"_id": "rg-1", "clusterId": "analytics", "owner": "growth", "enabled": True,
            "connectors": [{"name": "tpch", "properties": {"connector.name": "tpch"}}],
            **copy.deepcopy(body)}


def judge(s: Settings, d: dict[str, Any]) -> Cluster | Failed:
    out = classify(RawDocument(f'"{d["_id"]}"', d), s)
    assert isinstance(out, (Cluster, Failed)), out
    return out


def problems(out: Cluster | Failed) -> dict[str, str]:
    assert isinstance(out, Failed), "the document was accepted"
    found: dict[str, str] = {}
    for p in out.problems:
        assert isinstance(p, Problem) and p.cluster == "analytics"
        found.setdefault(p.field, p.message)
    return found


def groups_of(out: Cluster | Failed) -> Any:
    assert isinstance(out, Cluster), out
    part = out.kind("resource_groups")
    return None if part is None else json.loads(part.text)


def test_a_picked_policy_becomes_the_clusters_file(tmp_path: Path) -> None:
    """`resourceGroups: shared` gives the cluster the option's groups, as the settings say."""
    assert groups_of(judge(load(tmp_path), doc(resourceGroups="shared"))) == SHARED


def test_a_documents_own_groups_become_its_file(tmp_path: Path) -> None:
    """An object in `resourceGroups` is the cluster's own resource-groups.json."""
    assert groups_of(judge(load(tmp_path), doc(resourceGroups=OWN))) == OWN


def test_no_resource_groups_without_the_field(tmp_path: Path) -> None:
    """A document that writes nothing gets no resource groups (Trino's default: none)."""
    assert groups_of(judge(load(tmp_path), doc())) is None


@pytest.mark.parametrize(("value", "field", "words"), [
    ("nonesuch", "resourceGroups", "is not a resource_groups option of these settings"),
    (7, "resourceGroups", "must be a string"),
    ({**OWN, "selectors": [{"group": "nobody"}]}, "resourceGroups.selectors[0].group",
     "Selector refers to nonexistent group"),
    ({**OWN, "rootGroup": []}, "resourceGroups.rootGroup", "unknown field"),
    ("broken", "resource_groups.broken.rootGroups[0].maxQueued", "is required"),
])
def test_each_mistake_names_cluster_and_field(tmp_path: Path, value: Any, field: str,
                                              words: str) -> None:
    """An unknown policy, a wrong type, a bad own group or a broken policy fails the document
    at the field (a policy's own problems at `resource_groups.<name>.<field>`)."""
    found = problems(judge(load(tmp_path), doc(resourceGroups=value)))
    assert field in found and words in found[field], found


@pytest.mark.parametrize(("raw", "words"), [
    ({**SHARED, "selector": []}, "resource_groups.x.selector: unknown field"),
    ({"rootGroups": SHARED["rootGroups"]}, "resource_groups.x.selectors: must be a non-empty"),
    ({**SHARED, "rootGroups": []}, "resource_groups.x.rootGroups: must be a non-empty"),
    ({**SHARED, "cpuQuotaPeriod": float("nan")}, "resource_groups.x: holds a value JSON cannot"),
])
def test_the_settings_refuse_an_option_of_the_wrong_shape(tmp_path: Path, raw: dict[str, Any],
                                                         words: str) -> None:
    """The loader refuses an option whose shape is not a resource-groups.json, naming it."""
    from trinogen.kinds.resource_groups.options import parse

    with pytest.raises(ConfigError, match=words.replace(".", r"\.")):
        parse("settings.yaml: resource_groups.x", raw)


def test_a_required_kind_needs_a_policy_not_own_groups(tmp_path: Path) -> None:
    """A tenant requiring resource_groups: the document's own groups fail at resourceGroups,
    a policy it may pick passes, one outside its list is refused."""
    s = load(tmp_path, tenants={"growth": {"options": {"resource_groups": ["shared"]},
                                           "require": ["resource_groups"]}})
    found = problems(judge(s, doc(resourceGroups=OWN)))
    assert "the document's own value does not count" in found["resourceGroups"]
    assert 'required by tenant "growth"' in found["resourceGroups"]
    assert groups_of(judge(s, doc(resourceGroups="shared"))) == SHARED
    found = problems(judge(s, doc(resourceGroups="small")))
    assert 'may pick' in found["resourceGroups"]
    assert "required by" in problems(judge(s, doc()))["resourceGroups"]


def test_without_a_requirement_own_groups_replace_a_default_policy(tmp_path: Path) -> None:
    """defaults pick `shared`; a document may write its own instead, unless its profile
    requires the kind (profile_requirements)."""
    s = load(tmp_path, defaults={"resourceGroups": "shared"},
             profile_requirements={"governed": ["resource_groups"]},
             profiles={"governed": {}})
    assert groups_of(judge(s, doc())) == SHARED
    assert groups_of(judge(s, doc(resourceGroups=OWN))) == OWN
    found = problems(judge(s, doc(profile="governed", resourceGroups=OWN)))
    assert 'required by profile "governed"' in found["resourceGroups"]
    assert groups_of(judge(s, doc(profile="governed"))) == SHARED


def _block(page: str, heading: str, fence: str) -> str:
    """The first fenced block of `fence` under `heading` of a docs page."""
    text = (ROOT / "docs" / page).read_text()
    section = text[text.index(heading):]
    start = section.index(f"```{fence}\n") + len(fence) + 4
    return section[start:section.index("```", start)]


def test_the_docs_examples_are_valid(tmp_path: Path) -> None:
    """The policy in docs/options.md loads and the own groups in docs/document.md validate."""
    policy = yaml.safe_load(_block("options.md", "### Resource groups", "yaml"))
    path = tmp_path / "settings.yaml"
    body = yaml.safe_load((ROOT / "config" / "demo.yaml").read_text())
    path.write_text(yaml.safe_dump({**body, **policy}))
    s = load_settings(path, environ={})
    assert groups_of(judge(s, doc(resourceGroups="shared"))) == policy["resource_groups"]["shared"]
    own = json.loads("{" + _block("document.md", "## Resource groups", "json") + "}")
    assert groups_of(judge(s, doc(**own))) == own["resourceGroups"]


def test_a_document_nests_three_group_levels_a_policy_five(tmp_path: Path) -> None:
    """The document nesting limit (8) leaves a document's own groups 3 levels; a policy in the
    settings has no such limit and may use model.resource_groups' 5."""
    def chain(depth: int) -> dict[str, Any]:
        g: dict[str, Any] = {"name": f"l{depth}", "hardConcurrencyLimit": 1, "maxQueued": 1}
        return {**g, "subGroups": [chain(depth - 1)]} if depth > 1 else g

    def spec(depth: int) -> dict[str, Any]:
        path = ".".join(f"l{d}" for d in range(depth, 0, -1))
        return {"rootGroups": [chain(depth)], "selectors": [{"group": path}]}

    s = load(tmp_path, resource_groups={"deep": spec(5)})
    assert groups_of(judge(s, doc(resourceGroups=spec(3)))) == spec(3)
    assert "nests deeper than 8" in problems(judge(s, doc(resourceGroups=spec(4))))[""]
    assert groups_of(judge(s, doc(resourceGroups="deep"))) == spec(5)
