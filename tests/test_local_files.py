"""No catalog reads the pods' own files (issue 19, finding 6): the local file system, `file:`
and `local:` URIs and DuckDB are refused in a document's catalogs and in shared catalogs.

tests/test_trino_real_substitution.py shows real Trino reading a local file through SQL with the
refused properties, and that the same document is refused by trinogen.
"""

from __future__ import annotations

import pytest

from tests.test_library import LAKE, classified, cluster_doc, library, messages
from trinogen.model import Cluster
from trinogen.model.local_files import local_file_problem


@pytest.mark.parametrize(("key", "value"), [
    ("fs.native-local.enabled", "true"), ("fs.native-local.enabled", " TRUE"),
    # the switches are not a document's, whatever the value (Trino 483 renamed the local one)
    ("fs.native-local.enabled", "false"), ("fs.local.enabled", "true"),
    # legacy Hadoop serves file: locations named in SQL or by a metastore (issue 19)
    ("fs.hadoop.enabled", "true"), ("fs.hadoop.enabled", "TRUE "), ("fs.hadoop.enabled", "false"),
    ("local.location", "/"), ("local.location", "/var/run/secrets"),
    ("hive.metastore.catalog.dir", "local:///"), ("hive.metastore.catalog.dir", "file:///tmp/m"),
    ("hive.metastore.catalog.dir", "FILE:/proc"), ("iceberg.rest-catalog.warehouse", "file:/x"),
    ("hive.config.resources", "/etc/trino/files/a.xml, file:/proc/self/environ"),
    ("connector.name", "duckdb"), ("connector.name", "DuckDB"),
    # found by the attacker review: the JDBC server asks for files, and scheme-less paths
    ("connection-url", "jdbc:mysql://attacker:3306?allowLoadLocalInfile=true"),
    ("connection-url", "jdbc:mysql://a:3306/?allowUrlInLocalInfile=true"),
    ("connection-url", "jdbc:mariadb://a:3306/db?allowLocalInfile=true"),
    ("connection-url", "jdbc:mysql://a/db?ALLOWLOADLOCALINFILE=TRUE"),
    ("hive.metastore.catalog.dir", "/var/run/secrets"), ("hive.metastore.catalog.dir", " /proc"),
    ("iceberg.catalog.warehouse", "/var/run"),
    # non-ASCII text is judged by the patterns themselves (no lower-cased shortcut): under
    # IGNORECASE 'İ' matches 'i', and Unicode spaces are spaces
    ("connection-url", "jdbc:mysql://a/db?allowLocalİnfile=true"),
    ("hive.config.resources", "/etc/ü.xml,\u2003file:/proc/self/environ"),
])
def test_what_reaches_the_pods_files_is_found(key: str, value: str) -> None:
    """The local file system, its root, local URIs anywhere in a list, DuckDB, a JDBC driver's
    LOCAL INFILE, and a directory without a scheme."""
    assert local_file_problem(key, value) is not None


@pytest.mark.parametrize(("key", "value"), [
    ("fs.native-s3.enabled", "true"), ("fs.hadoop.enabled-x", "true"),
    ("hive.metastore.catalog.dir", "s3://bucket/metastore"), ("hive.metastore", "file"),
    ("connection-url", "jdbc:postgresql://db:5432/profile"), ("description", "a file: b"),
    ("connector.name", "hive"), ("hive.config.resources", "/etc/trino/files/core-site.xml"),
    ("connection-url", "jdbc:mysql://db:3306?useSSL=true"),
    ("hive.metastore.catalog.dir", "s3a://bucket/dir"),
    ("description", "Zürich's file: a word"), ("connection-url", "jdbc:mysql://db/ü?x=localin"),
])
def test_remote_storage_and_plain_text_are_kept(key: str, value: str) -> None:
    """A file metastore on S3 is remote storage; `file:` inside a sentence is no URI."""
    assert local_file_problem(key, value) is None


LOCAL_HIVE = {"connector.name": "hive", "hive.metastore": "file",
              "hive.metastore.catalog.dir": "local:///", "fs.native-local.enabled": "true",
              "local.location": "/"}


def test_a_document_cannot_read_the_pods_files_through_a_catalog() -> None:
    """The issue's catalog (file metastore on the pod's root) fails at each property."""
    found = messages(classified(cluster_doc("adhoc", "growth_analytics", [
        {"name": "root", "properties": LOCAL_HIVE}]), library()))
    fields = {m.split(": ", 1)[0] for m in found}
    assert fields == {'connectors["root"].properties["hive.metastore.catalog.dir"]',
                      'connectors["root"].properties["fs.native-local.enabled"]',
                      'connectors["root"].properties["local.location"]'}, found


def test_duckdb_is_refused() -> None:
    """DuckDB's SQL reads any file of the pod (read_text), whatever its catalog file says."""
    found = messages(classified(cluster_doc("adhoc", "growth_analytics", [
        {"name": "duck", "properties": {"connector.name": "duckdb",
                                        "connection-url": "jdbc:duckdb:"}}]), library()))
    assert any(m.startswith('connectors["duck"].properties["connector.name"]: ') for m in found)


def test_a_shared_catalog_cannot_either_nor_an_override() -> None:
    """A shared catalog is judged in every using cluster: its local properties fail there, and
    an override cannot add them."""
    lib = library(dict(LAKE, properties={**LAKE["properties"], "local.location": "/"}))
    found = messages(classified(cluster_doc("adhoc", "growth_analytics", [
        {"name": "lake", "shared": "lake-hive"}]), lib))
    assert any('properties["local.location"]' in m for m in found), found
    found = messages(classified(cluster_doc("adhoc", "growth_analytics", [
        {"name": "lake", "shared": "lake-hive",
         "properties": {"fs.native-local.enabled": "true"}}]), library(LAKE)))
    assert any('properties["fs.native-local.enabled"]' in m for m in found), found
    assert isinstance(classified(cluster_doc("adhoc", "growth_analytics", [
        {"name": "lake", "shared": "lake-hive"}]), library(LAKE)), Cluster)
