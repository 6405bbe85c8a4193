"""A real Trino boots a cluster whose catalog comes from the catalog library, with one
per-cluster override, and the catalog answers a query that only the override makes valid.

The path is the one of tests/test_trino_real.py (trinogen -> the real chart -> the pods' files,
changed only as its REWRITES list -> tests/trino_server.py boots coordinator plus one worker);
the only difference is that the document is classified with a library, as `sync` does.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from tests import test_trino_real as real
from tests import trino_server as ts
from tests.conftest import demo_settings
from trinogen.model import RawDocument, classify
from trinogen.model.library import parse_library
from trinogen.source import doc_key

pytestmark = real.pytestmark

# The shared catalog: tpch with Trino's default column naming (SIMPLE: `name`, `nationkey`).
# The cluster overrides one property to STANDARD naming (`n_name`, `n_nationkey`): a query on
# those columns works only if the override reached the catalog file Trino loaded.
SHARED = {"_id": "catalog-tpch-std", "name": "tpch-shared", "owner": "data_platform",
          "shareWith": ["qa_team"],
          "properties": {"connector.name": "tpch", "tpch.splits-per-node": "2"}}
DOC = {"_id": "trino-real-shared", "clusterId": "shared", "owner": "qa_team", "enabled": True,
       "connectors": [{"name": "bench", "shared": "tpch-shared",
                       "properties": {"tpch.column-naming": "STANDARD"}}]}


def test_a_cluster_using_a_shared_catalog_with_an_override_boots_and_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shared tpch catalog, with the cluster's column-naming override, answers in real Trino."""
    import helm_python

    library = parse_library([RawDocument(doc_key(SHARED["_id"]), SHARED)])

    def with_library(raw: RawDocument, settings: Any) -> Any:
        return classify(raw, settings, library)

    # render_pods classifies without a library; give it this one (nothing else changes)
    monkeypatch.setattr(real, "classify", with_library)
    pods = real.render_pods(DOC, demo_settings(), helm_python.Chart.load(real.CHART_DIR))
    catalog = pods.role["worker"].files["/etc/trino/catalog/bench.properties"]
    assert "tpch.column-naming=STANDARD" in catalog and "tpch.splits-per-node=2" in catalog
    aot_file = ts.aot_cache_path()
    aot = f"-XX:AOTCache={aot_file}" if aot_file.is_file() else None
    cluster = real.boot_cluster(pods, ts.distribution(), tmp_path / "trino", aot)
    try:
        t0 = time.monotonic()
        ts.wait_for_active_workers(cluster.port, 1, real.BOOT_TIMEOUT)
        print(f"\nshared catalog: started {cluster.boot_seconds}, worker active after "
              f"{time.monotonic() - t0:.1f}s")
        assert ["bench"] in ts.query(cluster.port, "SHOW CATALOGS")
        rows = ts.query(cluster.port,
                        "SELECT n_name FROM bench.tiny.nation WHERE n_nationkey = 0")
        assert rows == [["ALGERIA"]]
    finally:
        cluster.stop()
        shutil.rmtree(tmp_path / "trino", ignore_errors=True)
