"""Conditional bindings on a real Trino 476 (issue 21, item 7): a property bound only when
another property selects its module makes Trino refuse to start when that module is not selected,
and trinogen refuses the same document.

The path is tests/test_trino_real.py's mistake path: trinogen renders a document it accepts
(an iceberg catalog of type `hive_metastore`, a kafka catalog on the CONFLUENT
table description supplier), the real chart turns it into the pods' files, and the one key each
catalog's switch does not select is added to that catalog's file, as a document would write it.
One coordinator boots per key (Trino stops at the first catalog it cannot load, so one boot with
both keys names only one); a third boots the same files without them, so each refusal is shown
to come from its key alone. A fourth boots more switch values (COVERAGE: the thrift and file
metastores, the REST catalog, the FILE supplier); in it and in the control, every property
Trino's Bootstrap logs as bound must be one trinogen accepts under that catalog's switches, so
the registry's conditions are held to what Trino binds, not only to the two tried keys. They
run two at a time, each coordinator alone (one JVM).
"""

from __future__ import annotations

import copy
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests import test_trino_real as real
from tests import trino_server as ts
from tests.conftest import CHART_DIR, demo_settings
from tools.trino_registry.crosscheck import parse_log
from trinogen.model import Failed, RawDocument, classify
from trinogen.source import doc_key
from trinogen.trino.registry import PropertySet, registry_for

pytestmark = real.pytestmark

ICE = {"iceberg.catalog.type": "hive_metastore", "hive.metastore.uri": real.DEAD_METASTORE,
       **real.S3_FS}
KAFKA = {"kafka.nodes": "127.0.0.1:9", "kafka.table-description-supplier": "CONFLUENT",
         "kafka.confluent-schema-registry-url": "http://127.0.0.1:9"}
BASE = real._doc("conditional", [real._catalog("ice", "iceberg", **ICE),
                                 real._catalog("events", "kafka", **KAFKA)])
# More switch values, for what Trino binds under each (the "bound" boot): hive's thrift and file
# metastores, delta_lake's thrift metastore, the REST catalog, the FILE supplier.
COVERAGE = real._doc("conditional-bound", [
    real._catalog("hms", "hive", **{"hive.metastore.uri": real.DEAD_METASTORE}, **real.S3_FS),
    real._catalog("hfile", "hive", **{"hive.metastore": "file",
                                      "hive.metastore.catalog.dir": "s3://bucket/metastore"},
                  **real.S3_FS),
    real._catalog("rest", "iceberg", **{"iceberg.catalog.type": "rest",
                                        "iceberg.rest-catalog.uri": "http://127.0.0.1:9/"},
                  **real.S3_FS),
    real._catalog("topics", "kafka", **{"kafka.nodes": "127.0.0.1:9", "kafka.table-names": "t"}),
    real._catalog("dl", "delta_lake", **{"hive.metastore.uri": real.DEAD_METASTORE}, **real.S3_FS),
])
# (catalog, key, value): each bound only under a value its catalog's switch does not have
UNSELECTED = [("ice", "iceberg.rest-catalog.uri", "http://127.0.0.1:9/"),
              ("events", "kafka.table-names", "orders")]


def _with_unselected() -> dict[str, Any]:
    doc = copy.deepcopy(BASE)
    for connector in doc["connectors"]:
        connector["properties"].update({k: v for c, k, v in UNSELECTED if c == connector["name"]})
    return doc


def _boot(pods: real.Pods, extra: list[tuple[str, str, str]], dist: Path, root: Path,
          aot: str | None) -> real.BootOutcome:
    """The coordinator alone from the rendered files, with `extra` keys added to catalogs."""
    port = ts.free_port()
    files = dict(pods.role["coordinator"].files)
    for catalog, key, value in extra:
        path = f"/etc/trino/catalog/{catalog}.properties"
        files[path] = ts.properties_with(files[path], {key: value})
    laptop = real.for_laptop(ts.NodeFiles(files, pods.role["coordinator"].env), root,
                             dist / "plugin", port, port, real.heap_factor(pods.role),
                             coordinator_alone=True, aot=aot)
    node = ts.TrinoNode("coordinator", root, laptop)
    node.start(dist)
    try:
        state, code = node.wait_outcome(real.BOOT_TIMEOUT)
        return real.BootOutcome(state == "started", code, node.log(),
                                time.monotonic() - node.started_at)
    finally:
        node.stop()


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, real.BootOutcome]:
    """A coordinator with each unselected key, one without them (the control), and one with
    the COVERAGE catalogs (bound)."""
    import helm_python

    pods = real.render_pods(BASE, demo_settings(), helm_python.Chart.load(CHART_DIR))
    dist = ts.distribution()
    aot_file = ts.aot_cache_path()
    aot = f"-XX:AOTCache={aot_file}" if aot_file.is_file() else None
    root = tmp_path_factory.mktemp("trino-conditional")
    boots = {key: (pods, [(c, key, v)]) for c, key, v in UNSELECTED}
    boots["control"] = (pods, [])
    boots["bound"] = (real.render_pods(COVERAGE, demo_settings(),
                                       helm_python.Chart.load(CHART_DIR)), [])
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {name: pool.submit(_boot, p, extra, dist, root / name, aot)
                   for name, (p, extra) in boots.items()}
        out = {name: f.result() for name, f in futures.items()}
    for name, o in out.items():
        print(f"\nconditional {name}: {o.seconds:.1f}s, "
              f"{'started' if o.started else f'exited {o.exit_code}'}")
    shutil.rmtree(root, ignore_errors=True)
    return out


@pytest.mark.parametrize(("catalog", "key", "value"), UNSELECTED, ids=[k for _, k, _ in UNSELECTED])
def test_trino_refuses_a_property_its_switch_does_not_bind(
    outcomes: dict[str, real.BootOutcome], catalog: str, key: str, value: str
) -> None:
    """With the key its catalog's switch does not select, Trino 476 exits naming it unused."""
    o = outcomes[key]
    tail = "\n".join(o.log.splitlines()[-40:])
    assert not o.started and o.exit_code != 0, tail
    assert f"Configuration property '{key}' was not used" in o.log, tail


def test_the_same_catalogs_without_those_keys_start(
    outcomes: dict[str, real.BootOutcome]
) -> None:
    """Control: the catalogs trinogen accepts (same switches, no unselected key) start."""
    o = outcomes["control"]
    assert o.started, "\n".join(o.log.splitlines()[-40:])


def _switches(catalog: dict[str, Any]) -> tuple[PropertySet, dict[str, str]]:
    """A catalog's property set in the 476 registry, and the value of each of its switches."""
    props = catalog["properties"]
    known = registry_for("476").connector(props["connector.name"])  # type: ignore[union-attr]
    assert known is not None
    values = {switch: props.get(switch, entry["default"]).upper().replace("-", "_")
              for switch, entry in known.conditional.items()}
    return known, values


@pytest.mark.parametrize("doc", [BASE, COVERAGE], ids=["control", "bound"])
def test_what_trino_binds_under_a_switch_agrees_with_the_registry(
    outcomes: dict[str, real.BootOutcome], doc: dict[str, Any]
) -> None:
    """Every property Trino 476 logged as bound in a catalog is one trinogen accepts under that
    catalog's switch values, and none that trinogen refuses under them was bound."""
    o = outcomes["control" if doc is BASE else "bound"]
    assert o.started, "\n".join(o.log.splitlines()[-40:])
    bound = parse_log(o.log)
    refused_somewhere = 0
    for catalog in doc["connectors"]:
        known, values = _switches(catalog)
        names = bound[catalog["name"]]
        conditional = {n for e in known.conditional.values() for n in e["binds"]}
        refused = {n for n in conditional for c in known.conditions(n)
                   if values[c.switch] not in c.values}
        assert not refused & names, (catalog["name"], sorted(refused & names))
        refused_somewhere += len(refused)
        # the registry's modules are Trino's: some of what it binds under these values was bound
        assert (conditional - refused) & names or not conditional - refused, catalog["name"]
    assert refused_somewhere


def test_trinogen_refuses_the_document_naming_switch_and_value() -> None:
    """trinogen fails the document: each unselected key, its catalog, switch and binding value."""
    doc = _with_unselected()
    outcome = classify(RawDocument(doc_key(doc["_id"]), doc), demo_settings())
    assert isinstance(outcome, Failed), outcome
    said = {p.field: p.message for p in outcome.problems}
    expected = {"iceberg.rest-catalog.uri": "iceberg.catalog.type=rest",
                "kafka.table-names": "kafka.table-description-supplier=file"}
    for catalog, key, _ in UNSELECTED:
        (field,) = [f for f in said if f"[\"{catalog}\"]" in f and f"[\"{key}\"]" in f]
        assert expected[key] in said[field], said[field]
