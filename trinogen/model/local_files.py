"""No catalog reads the pods' own files (issue 19, finding 6). Pure.

A Trino pod holds what no tenant may read: the service-account token under /var/run/secrets,
the environment in /proc/self/environ (the platform's storage keys, the shared secret), every
mounted keystore. A catalog that reaches the local file system turns them into tables: the
native local file system (`fs.native-local.enabled=true`, rooted at `local.location`), any
location or metastore directory with a `local:` or `file:` URI (a file metastore's
`hive.metastore.catalog.dir`, a warehouse, an exchange base directory), and DuckDB, whose own SQL
reads any file of the pod (`read_text('/proc/self/environ')` through the `query` table function).
A document may write none of them; no platform option offers a local directory in this version.

The legacy Hadoop file system (`fs.hadoop.enabled`) serves every scheme no native file system
takes, `file:` included: `external_location = 'file:///var/run/secrets/...'` is SQL, and a
metastore may hand out such a location, neither of which trinogen sees. A document may not
switch it on; a storage option of type `hdfs` does (`trinogen.kinds.storage`), so HDFS is the
platform's choice and its accepted risk, scoped to the tenants it lets pick that option.
Properties that name one file (a keytab, core-site.xml) are `trinogen.model.file_paths`'s: they
must name a file trinogen mounts.
"""

from __future__ import annotations

import re

from trinogen.model.jdbc_options import is_jdbc_url, jdbc_problem

# file: and local: URIs, as a value or a list item (hive.config.resources is comma-separated)
_LOCAL_URI = re.compile(r"(?:^|,)\s*(?:file|local):", re.IGNORECASE)
# JDBC driver options that let the database server ask the client for any local file (MySQL
# Connector/J and MariaDB's LOAD DATA LOCAL INFILE): the server a document names reads the pod.
_LOCAL_INFILE = re.compile(r"allow(?:load|url)?(?:in)?localinfile", re.IGNORECASE)
# Directories and locations: a path with no scheme is the default file system's, which is the
# pod's own (`file:`) when the legacy Hadoop file system serves it.
_DIRECTORY_KEYS = ("catalog.dir", ".location", "warehouse", ".dir", "base-directories")
# The switches of file systems that serve the pod's own files, by their Trino 476 names and
# Trino 483's (fs.local.enabled): refused whatever the value (the switch is not a document's).
LOCAL_SWITCHES = frozenset({"fs.native-local.enabled", "fs.local.enabled"})
HADOOP_SWITCH = "fs.hadoop.enabled"
# Connectors whose own engine reads the pod's files.
LOCAL_CONNECTORS = frozenset({"duckdb"})
# The keys _switch_problem judges besides local.*: every other key of every catalog skips it.
_SWITCH_KEYS = LOCAL_SWITCHES | {HADOOP_SWITCH, "connector.name"}
WHY = "it would read the Trino pods' own files (the service-account token, /proc, keystores)"


def local_file_problem(key: str, value: str) -> str | None:
    """Why a catalog property would give SQL the pod's file system, or None."""
    if is_jdbc_url(value):  # the driver's own options (trinogen.model.jdbc_options)
        found = jdbc_problem(value)
        if found is not None:
            return found
    switched = _switch_problem(key, value) if key in _SWITCH_KEYS or key.startswith("local.") else None
    if switched is not None:
        return switched
    found = _local_reference(value)
    if found is not None:
        return found
    if key.endswith(_DIRECTORY_KEYS) and value.lstrip().startswith("/"):
        return f"names a path without a scheme (the default file system is the pod's own): {WHY}"
    return None


def _switch_problem(key: str, value: str) -> str | None:
    """A file system or connector that serves the pod's files, switched on by its name."""
    if key in LOCAL_SWITCHES:
        return f"the local file system is not offered to documents: {WHY}"
    if key == HADOOP_SWITCH:
        return ("the legacy Hadoop file system is the platform's: it serves file: locations "
                f"named in SQL or by a metastore, so {WHY}; pick a storage option of type hdfs "
                "(connectors[].storage) if the platform offers one")
    if key.startswith("local."):
        return f"configures the local file system, which is not offered to documents: {WHY}"
    if key == "connector.name" and value.strip().lower() in LOCAL_CONNECTORS:
        return f"the {value.strip()} connector is not offered to documents: {WHY}"
    return None


def _local_reference(value: str) -> str | None:
    """Why a value of any property reaches the pod's files: a local URI, or LOCAL INFILE."""
    uri, infile = _candidates(value)
    if uri and _LOCAL_URI.search(value):
        return f"names a local path (file: or local:): {WHY}"
    if infile and _LOCAL_INFILE.search(value):
        return f"enables LOCAL INFILE in the JDBC driver (the database server may then ask for any file): {WHY}"
    return None


def _candidates(value: str) -> tuple[bool, bool]:
    """Whether each pattern (_LOCAL_URI, _LOCAL_INFILE) may match: for ASCII text, only when a
    lower-cased copy holds the word every match holds ("file:" or "local:", "localinfile"),
    found at C speed (every catalog property of every document is judged; few hold either).
    Non-ASCII text goes to the patterns: under IGNORECASE, 'İ' and 'ı' match 'i'."""
    if not value.isascii():
        return True, True
    lowered = value.lower()
    return "file:" in lowered or "local:" in lowered, "localinfile" in lowered
