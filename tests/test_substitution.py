"""Trino's `${<provider>:...}` substitution is the platform's: refused in every text a document
hands to Trino, in any case and anywhere in a value (issue 19, finding 2).

The forms come from airlift's SecretsResolver (`\\$\\{([a-zA-Z][a-zA-Z0-9_-]*):(?<key>[^}]+?)}`,
the provider lower-cased before the look-up); tests/test_trino_real_substitution.py shows real
Trino resolving each refused form.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.test_files import doc as files_doc
from tests.test_files import problems as files_problems
from tests.test_library import LAKE, classified, cluster_doc, library, messages
from trinogen.model import Cluster, Failed
from trinogen.model.substitution import file_substitution, trino_substitution

# Each resolves in Trino 476 (env is always registered; the provider's case does not matter).
REFUSED = [
    "${ENV:AWS_SECRET_ACCESS_KEY}",
    "x${ENV:AWS_SECRET_ACCESS_KEY}",  # mid-value: a startswith check would let it through
    "${env:HOME}", "${Env:HOME}", "x-${eNv:HOME}-y",
    "jdbc:postgresql://attacker:5432/db?user=${Env:TRINO_VAULT_X}",
    "${vault:secret/x}",  # another provider, should the platform install a secrets plugin
    "${${env:A}}", "${a_b-c9:k}", "${ENV:",  # nested; every name character; unclosed
]
# Never substituted by Trino: no provider name right after "${", or no "${" at all.
KEPT = ["$HOME", "${HOME}", "${ env:HOME}", "${1env:HOME}", "$ {env:HOME}", "\\u0024{env:HOME}",
        "$\\{env:HOME}", "{{ .Release.Name }}", "${\u212aey:x}", "$${}", "a:b", ""]


@pytest.mark.parametrize("text", REFUSED)
def test_every_form_trino_substitutes_is_found(text: str) -> None:
    """Any provider name in any case, anywhere in the value, is Trino's substitution."""
    assert trino_substitution(text) is not None
    assert file_substitution(text) is not None


@pytest.mark.parametrize("text", KEPT)
def test_text_trino_leaves_alone_is_kept(text: str) -> None:
    """Without a provider name right after `${` Trino substitutes nothing; trinogen's escaping
    writes a backslash as `\\\\`, so `\\u0024` stays six characters for java.util.Properties."""
    assert trino_substitution(text) is None


def test_hadoop_environment_variables_are_found_in_files_only() -> None:
    """`${env.NAME}` is Hadoop Configuration's (core-site.xml): refused in attached files."""
    assert file_substitution("<value>${env.HOME}</value>") is not None
    assert trino_substitution("${env.HOME}") is None


def _places(form: str) -> list[tuple[dict[str, Any], str]]:
    """(document, the field that must fail) for each place a document writes Trino text."""
    base = cluster_doc("adhoc", "growth_analytics", [{"name": "pg", "properties": {
        "connector.name": "postgresql", "connection-url": "jdbc:postgresql://db:5432/x"}}])
    out = []
    for body, field in [
        ({"properties": {"exchange": {"compression-codec": form}}},
         "properties.exchange.compression-codec"),
        ({"properties": {"node.data-dir": form}}, "properties[\"node.data-dir\"]"),
        ({"clusterConfig": {"worker": {"properties": {"exchange": {"compression-codec": form}}}}},
         "clusterConfig.worker.properties.exchange.compression-codec"),
        ({"connectors": [{"name": "pg", "properties": {
            "connector.name": "postgresql", "connection-url": f"jdbc:postgresql://a/{form}"}}]},
         'connectors["pg"].properties.connection-url'),
        ({"connectors": [{"name": "hive", "shared": "lake-hive", "properties": {
            "s3.endpoint": form}}]}, 'connectors["hive"].properties["s3.endpoint"]'),
    ]:
        d = copy.deepcopy(base)
        d.update(body)
        out.append((d, field))
    return out


@pytest.mark.parametrize("form", ["${Env:HOME}", "x${ENV:AWS_SECRET_ACCESS_KEY}", "a${vault:k}"])
def test_documents_writing_it_fail_at_the_field(form: str) -> None:
    """Server, node, role, catalog and shared-catalog override values: each fails there."""
    for d, field in _places(form):
        found = messages(classified(d, library(LAKE)))
        assert any(m.startswith(f"{field}: ") and "Trino's secret substitution" in m
                   for m in found), (field, found)


def test_the_same_documents_pass_without_it() -> None:
    """The documents above are valid with a plain value: only the substitution fails them."""
    for d, field in _places("lz4"):
        if "node.data-dir" in field:
            continue  # judged by the registry as a path; not this test's business
        assert isinstance(classified(d, library(LAKE)), Cluster), field


def test_a_shared_catalog_writing_it_fails_itself() -> None:
    """Its author would otherwise read the environment of every cluster using it."""
    lib = library(dict(LAKE, properties={**LAKE["properties"],
                                         "s3.endpoint": "https://x/${eNv:TRINO_VAULT_K}"}))
    (failed,) = lib.failed
    assert [p.field for p in failed.problems] == ['properties["s3.endpoint"]']
    assert "Trino's secret substitution" in failed.problems[0].message
    outcome = classified(cluster_doc("adhoc", "growth_analytics", [{"shared": "lake-hive"}]), lib)
    assert isinstance(outcome, Failed)


@pytest.mark.parametrize("content", ["<value>${Env:HOME}</value>", "a ${ENV:HOME}",
                                     "<value>${env.HOME}</value>"])
def test_attached_text_files_may_not_name_the_environment(content: str) -> None:
    """A text file Trino or Hadoop reads as configuration cannot carry a substitution."""
    found = files_problems(files_doc([{"name": "core-site.xml", "content": content}]))
    assert [f for f, m in found if "secret substitution" in m] == ['files["core-site.xml"].content']


def test_secret_files_may_not_name_the_environment() -> None:
    """A secret file's value is one placeholder; Trino's own form is refused there too."""
    found = files_problems(files_doc([{"name": "k.keytab", "secret": "${Env:HOME}"}]))
    assert any(f == 'files["k.keytab"].secret' and "secret substitution" in m for f, m in found)
