"""Trino properties whose value names a file that must exist in the pods. Pure facts.

Read from the registry's names (Trino 470 and 476, every plugin) and Trino's documentation: each
name below is bound to a `File`/`Path` (or a list of them) that Trino opens itself, at startup or
on first use. Left out on purpose: paths Trino writes (`log.path`, `*.http-client.log.path`,
spill and staging directories), directories of descriptions (`kafka.table-description-dir`), and
locations that are URIs (`hive.metastore.catalog.dir`).
"""

from __future__ import annotations

# One file each.
SINGLE = frozenset({
    # catalogs
    "bigquery.credentials-file",
    "bigquery.rpc-proxy.keystore-path",
    "bigquery.rpc-proxy.truststore-path",
    "case-insensitive-name-matching.config-file",
    "connection-credential-file",  # JDBC connectors' file credential provider
    "keystore-file-path",  # JDBC connectors' keystore credential provider
    "gcs.json-key-file-path",
    "hive.gcs.json-key-file-path",
    "gsheets.credentials-path",
    "hive.hdfs.trino.keytab",
    "hive.metastore.client.keytab",
    "kudu.authentication.client.keytab",
    "hive.metastore.thrift.client.ssl.key",
    "hive.metastore.thrift.client.ssl.trust-certificate",
    "thrift.client.ssl.key",
    "thrift.client.ssl.trust-certificate",
    "hive.s3.security-mapping.config-file",
    "s3.security-mapping.config-file",
    "kafka.ssl.keystore.location",
    "kafka.ssl.truststore.location",
    # server and node
    "http-server.authentication.krb5.keytab",
    "http.authentication.krb5.config",  # the krb5.conf of Kerberos authentication
    "http-server.authentication.krb5.user-mapping.file",
    "http-server.authentication.certificate.user-mapping.file",
    "http-server.authentication.jwt.key-file",
    "http-server.https.truststore.path",
    "internal-communication.https.keystore.path",
    "internal-communication.https.truststore.path",
    "http-client.key-store-path",
    "http-client.trust-store-path",
    "ldap.ssl.keystore.path",
    "ldap.ssl.truststore.path",
    "log.levels-file",
    "node.annotation-file",
})
# A comma-separated list of files.
LISTS = frozenset({
    "hive.config.resources",
    "kafka.config.resources",
    "phoenix.config.resources",
})
# Endings shared by a family: every airlift HTTP client (`<name>.http-client.*`: exchange,
# access-control, oauth2-jwk, ...) and the TLS options of the search and NoSQL connectors
# (`elasticsearch.tls.*`, `opensearch.tls.*`, `cassandra.tls.*`, `mongodb.tls.*`, ...).
SUFFIXES = (".http-client.key-store-path", ".http-client.trust-store-path",
            ".tls.keystore-path", ".tls.truststore-path")
# Values that may instead be an http(s) URL (a JWKS endpoint).
URL_OR_FILE = frozenset({"http-server.authentication.jwt.key-file"})

# Properties that name the files configuring Trino's security and audit plugins, and the
# directory of catalogs: with attached files, a document could replace what the platform
# decides (its access control, its authenticators, its event listeners, the checked catalogs),
# so a document may not set them at all. The reason is shown to its author. The companion table
# (`trinogen.trino.companions`) lists the `*.config-files` rows too, with what each needs.
REFUSED = {
    "access-control.config-files": "it replaces the access control the platform configures",
    "password-authenticator.config-files": "it replaces the authenticators the platform configures",
    "header-authenticator.config-files": "it replaces the authenticators the platform configures",
    "event-listener.config-files": "it replaces the event listeners the platform configures",
    "catalog.config-dir": "the chart mounts the catalogs trinogen checked; declare connectors",
}


def names_files(key: str) -> bool:
    """Whether a property may name files (its value decides which, if any: `file_paths`)."""
    return key in LISTS or key in SINGLE or key.endswith(SUFFIXES)


def file_paths(key: str, value: str) -> tuple[str, ...] | None:
    """The files a property's value names, or None when the property names no file.

    A URL where one is allowed names no file either (nothing to mount).
    """
    if key in LISTS:
        return tuple(p.strip() for p in value.split(",") if p.strip())
    if key in SINGLE or key.endswith(SUFFIXES):
        if key in URL_OR_FILE and value.strip().lower().startswith(("http://", "https://")):
            return None
        return (value.strip(),)
    return None
