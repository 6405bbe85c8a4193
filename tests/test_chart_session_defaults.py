"""The `session_defaults` kind through trinogen's renderer and the real Trino chart
(helm-python-sdk): what the coordinator's ConfigMap holds.

The expectation is the entries written below, the document's then the option's, read back from
the JSON the chart mounts; the chart's own template names the manager's properties file.
"""

from __future__ import annotations

import json

import yaml

from tests.conftest import CHART_DIR
from tests.marks import CHART, helm_python
from tests.test_chart import render_through_chart
from tests.test_session_defaults_kind import PLATFORM, _settings
from tests.test_workload import doc, outcome
from trinogen.model import Cluster
from trinogen.render import Renderer

pytestmark = CHART


def test_the_chart_mounts_the_entries_on_the_coordinator() -> None:
    """The chart's coordinator ConfigMap holds the file manager's properties and a JSON that
    reads back as the entries (the document's, then the option's)."""
    settings = _settings()
    own = [{"source": "airflow", "sessionProperties": {"spill_enabled": "true"}}]
    cluster = outcome(doc(sessionProperties=own, sessionDefaults="standard"), settings)
    assert isinstance(cluster, Cluster), cluster
    files = Renderer(settings).render_cluster(cluster, {})
    values_text = files[f"{settings.output.clusters_dir}/lake/values.yaml"].decode()
    _, objects = render_through_chart(helm_python.Chart.load(CHART_DIR), values_text, "lake",
                                      "trino-lake")
    (data,) = [o["data"] for o in objects if o["kind"] == "ConfigMap"
               and "config.properties" in (o.get("data") or {})
               and "coordinator" in o["metadata"]["name"]]
    assert json.loads(data["session-property-config.json"]) == [*own, *PLATFORM["entries"]]
    props = data["session-property-config.properties"].splitlines()
    assert "session-property-config.configuration-manager=file" in props
    assert yaml.safe_load(values_text)["sessionProperties"]["type"] == "configmap"


def test_template_text_in_a_value_arrives_as_written() -> None:
    """A document's value that looks like a Helm template reaches the ConfigMap verbatim: the
    chart writes the JSON without `tpl`, so no document text is ever run as a template."""
    settings = _settings()
    sneaky = "{{ .Release.Name }}-{{ fail \"boom\" }}"
    cluster = outcome(doc(sessionProperties=[{"sessionProperties": {
        "spatial_partitioning_table_name": sneaky}}]), settings)  # a varchar property
    assert isinstance(cluster, Cluster), cluster
    files = Renderer(settings).render_cluster(cluster, {})
    values_text = files[f"{settings.output.clusters_dir}/lake/values.yaml"].decode()
    _, objects = render_through_chart(helm_python.Chart.load(CHART_DIR), values_text, "lake",
                                      "trino-lake")
    (data,) = [o["data"] for o in objects if o["kind"] == "ConfigMap"
               and "session-property-config.json" in (o.get("data") or {})]
    written = json.loads(data["session-property-config.json"])[0]["sessionProperties"]
    assert written == {"spatial_partitioning_table_name": sneaky}
