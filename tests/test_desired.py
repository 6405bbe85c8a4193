"""trinogen.desired: the desired tree built by classify -> resolve secrets -> render."""

from __future__ import annotations

import pytest

from tests.conftest import demo_settings, example_docs
from tests.fakes import FakeReader
from trinogen.desired import Context, Secrets, build_desired, read_secrets, secret_problems
from trinogen.model import Cluster, RawDocument, classify
from trinogen.render import Renderer
from trinogen.secrets import Secret, SecretData
from trinogen.source import doc_key

SETTINGS = demo_settings(git={"remote": "https://git.example.com/gitops.git"})
PATH = "secret/trino/analytics-prod"


def analytics() -> Cluster:
    doc = next(d for d in example_docs() if d["clusterId"] == "analytics-prod")
    cluster = classify(RawDocument(doc_key(doc["_id"]), doc), SETTINGS)
    assert isinstance(cluster, Cluster)
    return cluster


@pytest.mark.parametrize(
    ("secrets", "message"),
    [
        (Secrets(), None),  # nothing read: reference checks are off
        (Secrets({PATH: SecretData(1, {"MYSQL_RDS_PASSWORD": Secret("pw")})}), None),
        (Secrets(errors={PATH: "Vault has no secret at " + PATH}),
         "placeholder {{ MYSQL_RDS_PASSWORD }}: Vault has no secret at " + PATH),
        (Secrets({PATH: SecretData(1, {"other": Secret("pw")})}),
         (f"placeholder {{{{ MYSQL_RDS_PASSWORD }}}}: Vault secret {PATH} has no key "
         "'MYSQL_RDS_PASSWORD' (or its value is not a string)")),
        # the connector's configuration substitutes the resolved value again (issue 19)
        (Secrets({PATH: SecretData(1, {"MYSQL_RDS_PASSWORD": Secret("p${eNv:TRINO_VAULT_X}")})}),
         (f"placeholder {{{{ MYSQL_RDS_PASSWORD }}}}: the value of Vault secret {PATH} key "
          "'MYSQL_RDS_PASSWORD' holds Trino's secret substitution (${<provider>:...}), which "
          "Trino would resolve from the pods' environment; store the value itself")),
        (Secrets({PATH: SecretData(1, {"MYSQL_RDS_PASSWORD": Secret("p$ {env:X}")})}), None),
    ],
)
def test_secret_problems(secrets: Secrets, message: str | None) -> None:
    """A placeholder fails when its path failed or lacks its key, naming connector and property."""
    problems = secret_problems(analytics(), secrets)
    if message is None:
        assert problems == []
    else:
        assert [p.message for p in problems] == [message]
        assert "mysql-rds" in problems[0].field and "connection-password" in problems[0].field


def test_each_distinct_path_is_read_once() -> None:
    """read_secrets asks the reader once per path and reports missing paths as problems."""
    reader = FakeReader({"a/x": {"k": "v"}})
    got = read_secrets(["a/x", "a/y"], demo_settings(secrets={"check": True}), lambda: reader)
    assert sorted(reader.paths_read) == ["a/x", "a/y"] and got.requests == 2
    assert list(got.data) == ["a/x"] and "a/y" in got.errors["a/y"]


def test_no_reads_when_checks_are_off() -> None:
    """With secrets.check false (and no inline secrets) Vault is not even built."""
    def no_vault() -> FakeReader:
        raise AssertionError("built a Vault client")

    assert read_secrets(["a/x"], demo_settings(secrets={"check": False}), no_vault) == Secrets()


def test_every_document_becomes_files_a_failure_or_disabled() -> None:
    """Valid documents render; an invalid one becomes a Failed; no exception escapes."""
    raws = [RawDocument(doc_key(d["_id"]), d) for d in example_docs()]
    raws.append(RawDocument('"bad"', {"_id": "bad", "clusterId": "bad", "enabled": "yes"}))
    raws.append(RawDocument('"off"', {"_id": "off", "clusterId": "off", "enabled": False}))
    desired = build_desired(Context(SETTINGS, Renderer(SETTINGS)), raws)
    assert sorted(desired.files) == ["adhoc-dev", "analytics-prod", "etl-batch"]
    assert [(f.cluster_id, f.stage) for f in desired.failed] == [("bad", "validate")]
    assert [d.cluster_id for d in desired.disabled] == ["off"]
    assert all(p.startswith(("trino-clusters/analytics-prod/", "trino-applications/analytics-prod"))
               for p in desired.files["analytics-prod"])


# --- a failed document is not validated again (issue 19) ------------------------------------------


def _runs(monkeypatch: pytest.MonkeyPatch, *docs_per_run: list[dict[str, object]]
          ) -> list[tuple[list[str], dict[str, tuple[str, ...]]]]:
    """build_desired once per list of documents, one render cache across the runs: per run, the
    documents validated and each failure's problems."""
    from tests.fakes import FakeCache
    from trinogen.model import document

    validated: list[str] = []
    real = document.classify
    monkeypatch.setattr(document, "classify", lambda raw, *a: (validated.append(raw.doc_id),
                                                               real(raw, *a))[1])
    cache, renderer, out = FakeCache(), Renderer(SETTINGS), []
    for docs in docs_per_run:
        validated.clear()
        raws = [RawDocument(doc_key(d["_id"]), d) for d in docs]
        desired = build_desired(Context(SETTINGS, renderer, cache=cache, tree={}), raws)
        cache.save()
        out.append((list(validated), {f.doc_id: tuple(str(p) for p in f.problems)
                                      for f in desired.failed}))
    return out


def test_an_unchanged_failed_document_is_reported_again_without_being_validated(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The second run reports the same problems for the same bytes, from the cache; a change to
    the document (a byte) validates it again."""
    bad = {"_id": "bad", "clusterId": "bad", "owner": "x", "enabled": True, "nope": 1}
    first, second, changed = _runs(monkeypatch, [bad], [bad], [{**bad, "nope": 2}])
    assert first[0] == ['"bad"'] and first[1]['"bad"']
    assert second == ([], first[1])  # not validated, the same problems
    assert changed[0] == ['"bad"'] and changed[1] == first[1]


def test_a_clusterid_claimed_twice_is_judged_afresh_on_every_run(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure that spans documents is never remembered as the document's own: once the other
    claim is gone, the same bytes are valid again (and its own problems stay cached)."""
    docs = {d["clusterId"]: d for d in example_docs()}
    one = docs["adhoc-dev"]
    twin = {**one, "_id": "twin"}
    both, alone = _runs(monkeypatch, [one, twin], [one])
    assert both[1][doc_key(one["_id"])][-1].endswith("make it unique or disable all but one")
    assert alone == ([doc_key(one["_id"])], {})  # validated again, and valid


def test_an_object_kubernetes_would_refuse_fails_its_cluster_only() -> None:
    """A document whose catalog ConfigMap would pass 1 MiB fails at the render stage with the
    limit's problem (never an exception); the other documents still render."""
    wide = {"connector.name": "postgresql", "connection-url": "日" * 60_000}
    big = {"_id": "big", "clusterId": "big", "owner": "qa_team", "enabled": True,
           "connectors": [{"name": f"c{i}", "properties": wide} for i in range(3)]}
    raws = [RawDocument(doc_key(d["_id"]), d) for d in [*example_docs(), big]]
    desired = build_desired(Context(SETTINGS, Renderer(SETTINGS)), raws)
    assert sorted(desired.files) == ["adhoc-dev", "analytics-prod", "etl-batch"]
    (failed,) = desired.failed
    assert (failed.cluster_id, failed.stage) == ("big", "render")
    assert "'big-trino-catalog'" in failed.problems[0].message
