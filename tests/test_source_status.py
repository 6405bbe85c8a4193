"""Source's status rows: read and replaced by key, with `_id` equality for a few keys (a watch
batch's) and one `$in` for more, on mongomock and on FerretDB over the wire."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import mongomock
import pytest

from tests import ferretdb
from tests.conftest import RealMongo, demo_settings, needs
from trinogen.source import EQUALITY_IDS, Source

HAS_FERRETDB = needs(ferretdb.available(), "FerretDB is not built and Go is not installed to build it")
ROWS = {f"c{i:02}": {"state": "synced", "commit": f"{i}"} for i in range(12)} | {
    "catalog:lake": {"state": "failed"}}


class Recording:
    """A collection recording the filter of each find and delete_many."""

    def __init__(self, inner: Any, filters: list[tuple[str, Any]]) -> None:
        self.inner, self.filters = inner, filters

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def find(self, query: Any, *args: Any, **kwargs: Any) -> Any:
        self.filters.append(("find", query))
        return self.inner.find(query, *args, **kwargs)

    def delete_many(self, query: Any) -> Any:
        self.filters.append(("delete", query))
        return self.inner.delete_many(query)


class RecordingDb:
    def __init__(self, inner: Any, filters: list[tuple[str, Any]]) -> None:
        self.inner, self.filters = inner, filters

    def __getitem__(self, name: str) -> Recording:
        return Recording(self.inner[name], self.filters)


@pytest.fixture(params=["mongomock", pytest.param("ferretdb", marks=HAS_FERRETDB)])
def source(request: pytest.FixtureRequest) -> Iterator[Source]:
    """A Source whose status collection holds ROWS, on the parametrized backend."""
    if request.param == "mongomock":
        src = Source(mongomock.MongoClient(), demo_settings().mongodb)
        db = None
    else:
        db = RealMongo(request.getfixturevalue("ferretdb_server"), demo_settings(), [])
        src = db.source
    src.write_status(ROWS)
    yield src
    if db is not None:
        db.close()


@pytest.mark.parametrize("count", [0, 1, EQUALITY_IDS - 1, EQUALITY_IDS, 13])
def test_status_rows_are_read_and_replaced_by_key(source: Source, count: int) -> None:
    """The rows of the keys asked (and only those) are read and replaced; a few keys are asked
    one `_id` equality each, more in one `$in`."""
    keys = sorted(ROWS)[:count] + ["absent"] * (count > 0)
    filters: list[tuple[str, Any]] = []
    source.db = RecordingDb(source.db, filters)
    found = source.read_status(keys)
    assert {k: {f: v for f, v in row.items() if f != "_id"} for k, row in found.items()} == {
        k: ROWS[k] for k in keys if k in ROWS}
    source.write_status({k: {"state": "pruned"} for k in keys})
    assert {k for k, row in source.read_status().items() if row["state"] == "pruned"} == set(keys)
    assert len(source.read_status()) == len(ROWS) + (count > 0)  # "absent" now has a row
    asked = [q for verb, q in filters[:len(filters) - 2]]  # the reads and deletes by key
    few = len(keys) <= EQUALITY_IDS
    assert all((type(q["_id"]) is str) == few for q in asked), asked
    assert len(asked) == (2 * len(keys) if few else 2)
