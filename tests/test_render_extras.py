"""The renderer's seams for features: mounts, Secrets of files, and folders of extra manifests."""

from __future__ import annotations

import dataclasses

import yaml

from tests.conftest import demo_settings, example_docs
from tests.test_render import cluster_of
from trinogen.model import FileSecret, Mount
from trinogen.render import Renderer
from trinogen.secrets import Placeholder, SecretData, SecretUse, VaultRef, checksum


def _use(path: str, key: str) -> SecretUse:
    mount, _, rest = path.partition("/")
    ref = VaultRef(mount, rest, key)
    return SecretUse(Placeholder(f"{{{{ vault:{ref} }}}}", ref=ref), ref, "UNUSED")


def test_mounts_become_the_charts_config_and_secret_mounts() -> None:
    """Each Mount arrives as one configMounts or secretMounts entry, with its fields as given."""
    base = cluster_of(example_docs()[0])
    mounts = (Mount("site", "c-files", "/etc/trino/files/core-site.xml", "core-site.xml"),
              Mount("tls", "c-tls", "/etc/trino/tls", secret=True))
    files = Renderer(demo_settings()).render_cluster(dataclasses.replace(base, mounts=mounts), {})
    values = yaml.safe_load(files[f"trino-clusters/{base.cluster_id}/values.yaml"])
    assert values["configMounts"] == [{"name": "site", "configMap": "c-files",
                                       "path": "/etc/trino/files/core-site.xml",
                                       "subPath": "core-site.xml"}]
    assert values["secretMounts"] == [{"name": "tls", "secretName": "c-tls",
                                       "path": "/etc/trino/tls"}]


def test_a_file_secret_is_its_own_external_secret_and_a_source_of_the_application() -> None:
    """A FileSecret renders as secrets/<name>.yaml (keys = file names, pinned versions), the
    Application deploys the secrets folder, and its version rolls the pods."""
    base = cluster_of(example_docs()[0])  # adhoc-dev: no env secrets of its own
    assert not base.secret_uses
    use = _use("secret/trino/adhoc-dev/tls", "keystore")
    cluster = dataclasses.replace(base, file_secrets=(FileSecret("adhoc-dev-tls", (("ks.p12", use),)),))
    resolved = {"secret/trino/adhoc-dev/tls": SecretData(7, {})}
    files = Renderer(demo_settings()).render_cluster(cluster, resolved)
    root = f"trino-clusters/{base.cluster_id}"
    es = yaml.safe_load(files[f"{root}/secrets/adhoc-dev-tls.yaml"])
    assert es["kind"] == "ExternalSecret" and es["spec"]["target"]["name"] == "adhoc-dev-tls"
    assert es["spec"]["data"] == [{"secretKey": "ks.p12", "remoteRef": {
        "key": "secret/trino/adhoc-dev/tls", "property": "keystore", "version": "7"}}]
    app = yaml.safe_load(files[f"trino-applications/{base.cluster_id}.yaml"])
    assert [s.get("path") for s in app["spec"]["sources"]] == [None, None, f"{root}/secrets"]
    values = yaml.safe_load(files[f"{root}/values.yaml"])
    expected = checksum([use], {"secret/trino/adhoc-dev/tls": 7})
    for role in ("coordinator", "worker"):
        assert values[role]["annotations"] == {"trinogen.io/secrets-checksum": expected}
    assert "envFrom" not in values  # no env placeholders: no env Secret


def test_manifests_folder_becomes_a_source_only_when_it_has_files() -> None:
    """No extra folder for a plain cluster: its Application has the chart and values sources only."""
    base = cluster_of(example_docs()[0])
    files = Renderer(demo_settings()).render_cluster(base, {})
    app = yaml.safe_load(files[f"trino-applications/{base.cluster_id}.yaml"])
    assert len(app["spec"]["sources"]) == 2
    assert not any("/manifests/" in p for p in files)
