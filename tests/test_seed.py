"""Seed files of the embedded database: a document's identity must be stable across runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from bson import json_util
from typer.testing import CliRunner

from tests.conftest import commit_count, demo_env, example_docs, remote_tree
from trinogen.cli import app
from trinogen.errors import ExitCode
from trinogen.model import RawDocument
from trinogen.seed import load_seed

runner = CliRunner()


class Kept:
    """A seed sink that keeps (where, document) in a list, as the embedded database keeps them in
    its collection."""

    def __init__(self) -> None:
        self.docs: list[tuple[str, dict[str, Any]]] = []
        self.mark = 0

    def keep(self, where: str, doc: dict[str, Any]) -> None:
        self.docs.append((where, doc))

    def begin(self) -> None:
        self.mark = len(self.docs)

    def undo(self) -> None:
        del self.docs[self.mark:]


def loaded_seed(directory: Path) -> tuple[list[tuple[str, dict[str, Any]]], list[RawDocument], bool]:
    """load_seed into a list: (where, document) kept, the refused ones, whether all were read."""
    kept = Kept()
    refused, complete = load_seed(directory, kept)
    return kept.docs, refused, complete


def seeded_env(tmp_path: Path, docs: list[dict[str, Any]]) -> dict[str, str]:
    return demo_env(tmp_path, docs)


def sync(env: dict[str, str]) -> Any:
    return runner.invoke(app, ["sync", "--output", "json"], env=env, catch_exceptions=False)


def test_a_seed_document_without_id_is_refused_naming_file_and_index(tmp_path: Path) -> None:
    """No _id: reported as failed with its file and index; the others sync; a second run commits nothing."""
    docs = example_docs()
    del docs[1]["_id"]  # adhoc-dev, analytics-prod, etl-batch (sorted file names)
    env = seeded_env(tmp_path, docs)
    first = sync(env)
    assert first.exit_code == ExitCode.CLUSTERS_FAILED, first.output
    report = json.loads(first.stdout)
    failed = report["clusters"]["failed"]
    assert [f["clusterId"] for f in failed] == [docs[1]["clusterId"]]
    message = failed[0]["problems"][0]["message"]
    assert "docs.json item 1" in message and '"_id"' in message
    assert sorted(c["clusterId"] for c in report["clusters"]["added"]) == sorted(
        d["clusterId"] for d in docs if "_id" in d)
    remote = Path(env["TRINOGEN_GIT_REMOTE"])
    assert commit_count(remote) == 1
    assert sync(env).exit_code == ExitCode.CLUSTERS_FAILED
    assert commit_count(remote) == 1  # nothing new: the document did not get a new identity


def test_a_synced_document_that_loses_its_id_keeps_its_files(tmp_path: Path) -> None:
    """Removing _id from a synced seed document fails it; its cluster is neither pruned nor rewritten."""
    docs = example_docs()
    env = seeded_env(tmp_path, docs)
    assert sync(env).exit_code == 0
    remote = Path(env["TRINOGEN_GIT_REMOTE"])
    before = remote_tree(remote)
    del docs[0]["_id"]
    (Path(env["TRINOGEN_MONGODB_SEED_DIR"]) / "docs.json").write_text(json_util.dumps(docs))
    assert sync(env).exit_code == ExitCode.CLUSTERS_FAILED
    assert remote_tree(remote) == before and commit_count(remote) == 1


def test_load_seed_keeps_documents_with_an_id_as_they_are(tmp_path: Path) -> None:
    """Documents with an _id of any kind are returned unchanged; only the one without is refused."""
    items = [{"_id": 7, "clusterId": "a"}, {"clusterId": "b"}, {"_id": None, "clusterId": "c"}]
    (tmp_path / "s.json").write_text(json.dumps(items))
    docs, refused, complete = loaded_seed(tmp_path)
    assert [doc for _, doc in docs] == [items[0], items[2]] and complete
    assert [r.body.get("clusterId") for r in refused] == ["b"]
    assert refused[0].unreadable is not None and "s.json item 1" in refused[0].unreadable


MALFORMED = [
    {"_id": {"$oid": "zzz"}, "clusterId": "a"},
    {"_id": "a", "clusterId": "a", "trinoVersion": {"$numberDecimal": "abc"}},
    {"_id": "a", "clusterId": "a", "lastUpdated": {"$date": {"$numberLong": "9" * 20}}},
    {"_id": "a", "clusterId": "a", "lastUpdated": {"$date": "99999-01-01T00:00:00Z"}},
    {"_id": "a", "clusterId": "a", "x": {"$uuid": "zz"}},
    {"_id": "a", "clusterId": "a", "x": {"$timestamp": {"t": -1, "i": 1}}},
]


@pytest.mark.parametrize("bad", MALFORMED, ids=range(len(MALFORMED)))
def test_malformed_extended_json_fails_only_its_document(tmp_path: Path, bad: dict[str, Any]) -> None:
    """A malformed Extended JSON value, even in an ignored field, refuses that item, naming file
    and item; the file's other documents load."""
    good = {"_id": "b", "clusterId": "b"}
    (tmp_path / "s.json").write_text(json.dumps([good, bad]))
    docs, refused, _ = loaded_seed(tmp_path)
    assert [doc for _, doc in docs] == [good]
    (r,) = refused
    assert r.unreadable is not None and "s.json item 1" in r.unreadable
    assert "malformed Extended JSON" in r.unreadable


def test_malformed_extended_json_is_a_failed_document_not_a_crash(tmp_path: Path) -> None:
    """`validate` over a seed with {"$oid": "zzz"} exits 1 naming the file, never 70."""
    docs = example_docs()
    docs[0]["lastUpdated"] = {"$oid": "zzz"}
    env = seeded_env(tmp_path, [])
    (Path(env["TRINOGEN_MONGODB_SEED_DIR"]) / "docs.json").write_text(
        json.dumps([json.loads(json_util.dumps(d)) for d in docs]))
    result = runner.invoke(app, ["validate", "--output", "json"], env=env)
    assert result.exit_code == ExitCode.CLUSTERS_FAILED, result.output
    assert "docs.json item 0" in result.stdout


@pytest.mark.parametrize("name", ["export.json", "export.jsonl"])
def test_mongoexport_json_lines_are_read(tmp_path: Path, name: str) -> None:
    """mongoexport's default output (one Extended JSON document per line) seeds the database,
    each document named by its line."""
    docs = [{"_id": {"$oid": "653a1a7b8e1f4a1e9c5d8e1a"}, "clusterId": "a"}, {"_id": "b"}]
    (tmp_path / name).write_text("\n".join(json.dumps(d) for d in docs) + "\n\n")
    loaded, refused, complete = loaded_seed(tmp_path)
    assert [d for _, d in loaded] == [json_util.loads(json.dumps(d)) for d in docs]
    assert [w for w, _ in loaded] == [f"seed file {name} line 1", f"seed file {name} line 2"]
    assert not refused and complete


def test_a_file_that_is_neither_json_nor_json_lines_says_what_is_accepted(tmp_path: Path) -> None:
    """A broken file is refused with the accepted shapes named, and nothing is pruned."""
    (tmp_path / "s.json").write_text('{"_id": "a"}\n{"_id": \n')
    _, refused, complete = loaded_seed(tmp_path)
    assert not complete and refused[0].unreadable is not None
    assert "one document per line" in refused[0].unreadable


def test_the_wrappers_are_json_util_s_own() -> None:
    """The keys that send an object to json_util's hook are exactly those its hook decodes by."""
    from trinogen.seed import WRAPPERS

    assert set(WRAPPERS) == set(json_util._PARSERS)


EJSON = [
    '{"_id": {"$oid": "653a1a7b8e1f4a1e9c5d8e1a"}, "a": [{"b": {"$numberLong": "5"}}]}',
    '{"d": {"$date": "2024-01-02T03:04:05Z"}}',
    '{"d": {"$date": "2024-01-02T03:04:05.678Z"}}',
    '{"d": {"$date": "2024-01-02T03:04:05.1234567Z"}}',
    '{"d": {"$date": "2024-01-02T03:04:05.9999999Z"}}',
    '{"d": {"$date": "1969-12-31T23:59:59.999Z"}}',
    '{"d": {"$date": "2024-01-02T03:04:05+02:00"}}',
    '{"d": {"$date": "2024-01-02T03:04:05.5-0130"}}',
    '{"d": {"$date": "2024-02-30T00:00:00Z"}}',
    '{"d": {"$date": "2024-01-02T24:00:00Z"}}',
    '{"d": {"$date": "2024-01-02T23:59:60Z"}}',
    '{"d": {"$date": "0000-01-01T00:00:00Z"}}',
    '{"d": {"$date": "99999-01-01T00:00:00Z"}}',
    '{"d": {"$date": "2024-1-2T3:4:5Z"}}',
    '{"d": {"$date": "\u0662\u0660\u0662\u0664-01-02T03:04:05Z"}}',
    '{"d": {"$date": "2024-01-02T03:04:05Z", "x": 1}}',
    '{"d": {"$date": {"$numberLong": "1704164645678"}}}',
    '{"d": {"$date": 1704164645678}}',
    '{"d": {"$date": "Z"}}',
    '{"d": {"$date": ""}}',
    '{"x": {"$numberDecimal": "abc"}, "y": {"$regex": "a", "$options": "i"}}',
    '{"x": {"$binary": {"base64": "eA==", "subType": "00"}}, "u": {"$uuid": "zz"}}',
    '{"x": {"$timestamp": {"t": 1, "i": 2}}, "m": {"$minKey": 1}, "q": {"$symbol": "s"}}',
    '{"$date": "2024-01-02T03:04:05Z"}',
    '[{"a": 1}, {"b": {"c": {"$numberDouble": "NaN"}}}]',
]


@pytest.mark.parametrize("text", EJSON, ids=range(len(EJSON)))
def test_seed_files_parse_as_json_util_parses_them(text: str) -> None:
    """The fast parse gives json_util.loads's values (types included) or its error, word for word."""
    from trinogen.seed import ejson_loads

    def outcome(loads: Any) -> Any:
        try:
            value = loads(text)
        except Exception as e:  # noqa: BLE001 - the error itself is what is compared
            return (type(e).__name__, str(e))
        return repr(value), json_util.dumps(value, json_options=json_util.CANONICAL_JSON_OPTIONS)

    assert outcome(ejson_loads) == outcome(json_util.loads)


ITEMS = [
    '[]', ' [ ] ', '\n[\t{"a": 1} ,\r\n{"b": {"$numberLong": "5"}}\n]\n', '[1, "s", null, [2]]',
    '[[{"d": {"$date": "2024-01-02T03:04:05Z"}}]]', '{"_id": "a"}', '7', ' "s" ',
    '[', '[,]', '[1,]', '[1 2]', '[1]]', '[1] [', '[1] x', '[{"a": 1}, {"b": ', '\ufeff[1]', '',
    '[{"a": 1}, {"x": {"$numberDecimal": "abc"}}]', '[{"a": 1}, {"$oid": "zzz"}, {"b": 2}]',
    '[{"a": NaN}, {"b": -Infinity}]', '[{"a": 1, "a": 2}]', '[1, 2] \n ',
]


@pytest.mark.parametrize("text", ITEMS, ids=range(len(ITEMS)))
def test_a_seed_file_is_decoded_item_by_item_as_json_util_decodes_it_whole(text: str) -> None:
    """One item at a time, a file gives json_util.loads's values (an array's elements, or the one
    value) with where each is, or fails wherever json_util.loads fails."""
    from trinogen.seed import ejson_items

    def whole() -> Any:
        try:
            value = json_util.loads(text)
        except Exception:  # noqa: BLE001 - failing at all is what is compared
            return "fails"
        if isinstance(value, list):
            return [(f"seed file s.json item {i}", v) for i, v in enumerate(value)]
        return [("seed file s.json", value)]

    def streamed() -> Any:
        try:
            return list(ejson_items(text, "s.json"))
        except Exception:  # noqa: BLE001
            return "fails"

    def typed(outcome: Any) -> Any:
        return outcome if outcome == "fails" else [
            (w, repr(v), json_util.dumps(v, json_options=json_util.CANONICAL_JSON_OPTIONS))
            for w, v in outcome]

    assert typed(streamed()) == typed(whole())
