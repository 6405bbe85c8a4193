"""What the real chart makes of trinogen's files: each role's pod spec, mounts and ConfigMaps.

Shared by the tests of secrets in server properties and of authentication: values.yaml goes
through the Trino chart (helm-python-sdk, `CHART_DIR`), and the objects are read back with
plain YAML and the independent java.util.Properties reader (tests/javaprops.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from tests import javaprops
from tests.conftest import CHART_DIR

try:
    import helm_python
except ImportError:  # pragma: no cover - depends on the environment
    helm_python = None

_CHART: list[Any] = []


@dataclass
class RolePod:
    """One role's Trino container and the files its mounts give it."""

    spec: dict[str, Any]  # the pod spec
    container: dict[str, Any]
    config_maps: dict[str, dict[str, str]]  # every ConfigMap of the release: name -> data

    def config(self) -> dict[str, str]:
        """The role's config.properties, read as Java reads it."""
        return javaprops.loads(self.file("config.properties"))

    def file(self, key: str) -> str:
        """A key of the role's own config ConfigMap (config.properties, password-authenticator...)."""
        (name,) = [n for n, data in self.config_maps.items()
                   if "config.properties" in data and self._mounts_config_map(n)]
        return self.config_maps[name][key]

    def _mounts_config_map(self, name: str) -> bool:
        return any(v.get("configMap", {}).get("name") == name for v in self.spec["volumes"])

    def secret_mounts(self) -> dict[str, tuple[str, list[str] | None]]:
        """mountPath -> (Secret name, the keys it projects; None = all keys)."""
        volumes = {v["name"]: v for v in self.spec["volumes"]}
        out = {}
        for m in self.container.get("volumeMounts", []):
            secret = volumes[m["name"]].get("secret")
            if secret is not None:
                keys = [i["key"] for i in secret["items"]] if "items" in secret else None
                out[m["mountPath"]] = (secret["secretName"], keys)
        return out

    def env_secrets(self) -> list[str]:
        return [s["secretRef"]["name"] for s in self.container.get("envFrom") or []]


def render(values_text: str, cluster_id: str) -> dict[str, RolePod]:
    """The coordinator and worker pods the chart renders from `values_text`."""
    if not _CHART:
        _CHART.append(helm_python.Chart.load(CHART_DIR))
    manifests = _CHART[0].render(helm_python.values_from_yaml(values_text), name=cluster_id,
                                 namespace=f"trino-{cluster_id}", is_install=True)
    objects = [o for path, text in sorted(manifests.items()) if path.endswith((".yaml", ".yml"))
               for o in yaml.safe_load_all(text) if isinstance(o, Mapping) and "kind" in o]
    config_maps = {o["metadata"]["name"]: o.get("data") or {} for o in objects
                   if o["kind"] == "ConfigMap"}
    pods = {}
    for o in objects:
        if o["kind"] == "Deployment":
            role = o["metadata"]["labels"]["app.kubernetes.io/component"]
            spec = o["spec"]["template"]["spec"]
            (container,) = [c for c in spec["containers"] if c["name"] == f"trino-{role}"]
            pods[role] = RolePod(spec, container, config_maps)
    return pods


def external_secrets(files: Mapping[str, bytes]) -> dict[str, dict[str, Any]]:
    """Every ExternalSecret trinogen wrote, by the name of the Secret it creates."""
    out = {}
    for path, raw in files.items():
        if "/secrets/" in path:
            es = yaml.safe_load(raw)
            out[es["spec"]["target"]["name"]] = es
    return out
