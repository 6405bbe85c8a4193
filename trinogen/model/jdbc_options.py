"""JDBC driver options that reach the Trino pod itself (issue 19, finding 6). Pure.

A JDBC catalog's `connection-url` is handed to the driver Trino bundles, and every driver takes
options in it that act on the machine it runs on, not on the database: a class to load
(pgjdbc `socketFactory`, `sslfactory`), a file to read (`sslkey=/var/run/secrets/...`), a log
file to write, a local socket to open (MariaDB `localSocket`), Java objects to deserialize
(Connector/J `autoDeserialize`). The URL is a document's text, so each is judged here:

- loading a class, opening a local socket or pipe, writing a file, fetching the connection's
  configuration from elsewhere, deserializing: refused (`jdbc_problem`);
- reading a file (a client key, a CA, a trust store): allowed only when it names a file the
  document attached (`jdbc_files`, judged by `trinogen.model.file_paths` against the mounts),
  so a driver never reads the service-account token or another mount of the platform's;
- any other option whose value is a `file:`, `jar:` or `local:` URL: refused.

An attacker's spellings are all read the way some driver reads them: names in any case (pgjdbc
and Connector/J differ, so the stricter reading wins), `_`/`-` ignored (`ssl_root_cert`), only
the last segment of a dotted name (`oracle.net.wallet_location`), percent-encoding undone until
stable, Unicode compatibility forms folded (`ſslfactory`), and `key=value` pairs taken from
anywhere in the URL, split at `?`, `&`, `;`, `,` and parentheses, names and values trimmed: a query string, SQL Server's `;k=v`, Connector/J's host form
`(host=h,port=1,socketFactory=x)` and `address=(k=v)`, an Oracle descriptor `(KEY=VALUE)`.
Every occurrence of a duplicated key is judged (drivers differ on which one wins).

Facts per driver, from each driver's documentation (`search` corpus docs, 2026-12-04):
pgjdbc "Connecting to the Database" (jdbc.postgresql.org/documentation, and the LibPQFactory
API page listing sslcert, sslkey, sslrootcert, sslhostnameverifier, sslpasswordcallback);
MySQL Connector/J Developer Guide 6.3 Configuration Properties (dev.mysql.com/doc/connector-j:
serverRSAPublicKeyFile, clientCertificateKeyStoreUrl, trustCertificateKeyStoreUrl,
allowLoadLocalInfileInPath, autoDeserialize, the interceptor and plugin class properties);
MariaDB Connector/J "Connection Parameters" (mariadb.com/docs/connectors/mariadb-connector-j:
localSocket, pipe, socketFactory, tlsSocketType, serverSslCert, keyStore, trustStore);
Microsoft JDBC Driver for SQL Server "Setting the connection properties" (learn.microsoft.com:
socketFactoryClass, trustManagerClass, trustStore, clientCertificate, clientKey,
serverCertificate, keyStoreLocation, accessTokenCallbackClass); Oracle JDBC 23 API reference
"URL Formats" and Oracle Net "Easy Connect Plus" (docs.oracle.com: wallet_location, TNS_ADMIN,
MY_WALLET_DIRECTORY, the `config-` providers); Amazon Redshift JDBC 2.x configuration options
(docs.aws.amazon.com/redshift: SSLFactory, plugin_name, LogPath, IniFile and its "Creating
initialization (.ini) files" page); Snowflake JDBC connection parameters (docs.snowflake.com:
private_key_file, CLIENT_CONFIG_FILE, whose "easy logging" file names a log_path the driver
writes); Connector/J 9 "Connecting Using OpenID Connect Authentication" (idTokenFile,
authenticationOpenidConnectCallbackHandler) and its WebAuthn/FIDO callback handlers; ClickHouse, Druid
(Avatica), Vertica, Exasol and Ignite from their JDBC drivers' property lists.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import NamedTuple

from trinogen.model.checker import show

# What an option does on the pod; every kind but READS is refused whatever the value.
CLASS = "loads a Java class the URL names"
SOCKET = "opens a local socket or pipe of the pod"
WRITES = "writes a file of the pod"
FETCH = "takes the connection's configuration from a file or service the URL names"
OBJECTS = "deserializes Java objects the database server sends"
LOCAL_INFILE = "lets the database server ask for any file of the pod (LOCAL INFILE)"
READS = "reads a file of the pod"


class DriverOption(NamedTuple):
    """One driver option that acts on the pod: what it does, and whose it is."""

    kind: str
    drivers: str


def _table(kind: str, drivers: str, *names: str) -> dict[str, DriverOption]:
    return {_norm(n): DriverOption(kind, drivers) for n in names}


def _norm(name: str) -> str:
    """A name as the most lenient driver compares it: Java's equalsIgnoreCase folds `ſ` to `s`
    and the Kelvin sign to `k`, so compatibility forms and case are folded alike."""
    return re.sub(r"[-_\s]", "", unicodedata.normalize("NFKC", name).casefold())


# Keyed by the normalized last segment of the option's name.
OPTIONS: dict[str, DriverOption] = {
    **_table(CLASS, "PostgreSQL (pgjdbc), Redshift", "socketFactory", "socketFactoryArg",
             "sslfactory", "sslfactoryarg", "sslhostnameverifier", "sslpasswordcallback",
             "authenticationPluginClassName", "xmlFactoryFactory"),
    **_table(CLASS, "Redshift", "plugin_name"),
    **_table(CLASS, "MySQL Connector/J", "connectionLifecycleInterceptors",
             "exceptionInterceptors", "queryInterceptors", "statementInterceptors",
             "authenticationPlugins", "defaultAuthenticationPlugin", "clientInfoProvider",
             "loadBalanceStrategy", "loadBalanceExceptionChecker", "logger",
             "profilerEventHandler", "propertiesTransform", "serverConfigCacheFactory",
             "authenticationOpenidConnectCallbackHandler", "authenticationWebAuthnCallbackHandler",
             "authenticationFidoCallbackHandler"),
    **_table(CLASS, "MariaDB, SingleStore", "tlsSocketType"),
    **_table(CLASS, "SQL Server", "socketFactoryClass", "socketFactoryConstructorArg",
             "trustManagerClass", "trustManagerConstructorArg", "accessTokenCallbackClass"),
    **_table(CLASS, "ClickHouse", "custom_socket_factory"),
    **_table(CLASS, "Druid (Avatica)", "httpclient_factory", "httpclient_impl"),
    **_table(SOCKET, "MariaDB, SingleStore", "localSocket", "pipe"),
    **_table(SOCKET, "MySQL Connector/J", "namedPipePath"),
    **_table(WRITES, "PostgreSQL (pgjdbc)", "loggerFile"),
    **_table(WRITES, "Redshift, Vertica", "LogPath"),
    **_table(WRITES, "Exasol", "logdir"),
    **_table(OBJECTS, "MySQL Connector/J", "autoDeserialize"),
    # A configuration file: its options (a class, a log directory, a key file elsewhere) are
    # never seen here, and an attached file is the document's own text.
    **_table(FETCH, "Redshift", "IniFile"),
    **_table(FETCH, "Snowflake", "CLIENT_CONFIG_FILE"),
    **_table(FETCH, "MySQL Connector/J", "ociConfigFile"),
    **_table(LOCAL_INFILE, "MySQL Connector/J, MariaDB", "allowLoadLocalInfile",
             "allowLoadLocalInfileInPath", "allowUrlInLocalInfile", "allowLocalInfile"),
    **_table(READS, "PostgreSQL (pgjdbc), Redshift, ClickHouse", "sslcert", "sslkey",
             "sslrootcert"),
    # idTokenFile: the OpenID Connect plugin sends the file's content to the server, which may
    # ask for that plugin whatever the URL says.
    **_table(READS, "MySQL Connector/J", "serverRSAPublicKeyFile", "clientCertificateKeyStoreUrl",
             "trustCertificateKeyStoreUrl", "idTokenFile"),
    **_table(READS, "MariaDB, SingleStore", "serverSslCert", "clientSslCert", "clientSslKey"),
    **_table(READS, "SQL Server, MariaDB, Oracle, Druid, ClickHouse", "trustStore", "keyStore",
             "ssl_trust_store", "ssl_key_store"),
    **_table(READS, "SQL Server", "clientCertificate", "clientKey", "serverCertificate",
             "keyStoreLocation"),
    **_table(READS, "Oracle", "wallet_location", "TNS_ADMIN", "MY_WALLET_DIRECTORY",
             "kerberos5_cc_name", "kerberos5_conf", "TOKEN_LOCATION"),
    **_table(READS, "Snowflake", "private_key_file"),
    **_table(READS, "Druid (Avatica)", "keytab"),
    **_table(READS, "Vertica", "KeyStorePath", "TrustStorePath"),
    **_table(READS, "Ignite", "sslClientCertificateKeyStoreUrl",
             "sslTrustCertificateKeyStoreUrl"),
}
# Oracle's centralized configuration providers (`jdbc:oracle:thin:@config-file://...`,
# `@config-azure://...`): the URL's options come from a file or a cloud service.
_ORACLE_PROVIDER = re.compile(r"@\s*config-", re.IGNORECASE)
# Not whitespace: SQL Server reads `; socketFactoryClass = x` (names and values trimmed).
_SEPARATORS = re.compile(r"[?&;,()]+")
_URL_VALUE = re.compile(r"(?:file|jar|local):", re.IGNORECASE)
_JDBC = re.compile(r"\s*jdbc:", re.IGNORECASE)
_J = frozenset("jJ")  # no other character folds to j (a set: "" is in every string)
_PERCENT = re.compile(r"(?:%[0-9A-Fa-f]{2})+")
_FILE_URL = re.compile(r"file:(.*)", re.IGNORECASE | re.DOTALL)


def is_jdbc_url(value: str) -> bool:
    """Does the value start with a JDBC URL (called for every catalog value: no copies)?"""
    first = value[:1]
    if first in _J:
        return value[:5].lower() == "jdbc:"
    return first.isspace() and _JDBC.match(value) is not None


def _decoded(text: str) -> str:
    """Percent-encoding undone until stable (a driver decodes once; `%2573` is `%73` to it,
    and what another layer might decode again is judged too)."""
    for _ in range(4):
        once = _PERCENT.sub(_bytes, text)
        if once == text:
            break
        text = once
    return text


def _bytes(m: re.Match[str]) -> str:
    """A run of %XX escapes as the UTF-8 text they encode (URLDecoder's reading; the pure core
    imports no urllib)."""
    return bytes.fromhex(m.group(0).replace("%", "")).decode("utf-8", "replace")


def options(url: str) -> list[tuple[str, str]]:
    """Every `key=value` pair anywhere in the URL: (key as written, decoded; decoded value)."""
    if "=" not in url and "%" not in url:  # most URLs: host, port and database only
        return []
    pairs = []
    for token in _SEPARATORS.split(_decoded(url)):
        key, eq, value = token.partition("=")
        if eq and key:
            pairs.append((key.strip(), value.strip()))
    return pairs


@functools.lru_cache(maxsize=4096)  # the same few names recur across every document
def option_of(key: str) -> DriverOption | None:
    """The table's entry for a key, by its last dotted segment (`oracle.net.wallet_location`)."""
    return OPTIONS.get(_norm(key.rsplit(".", 1)[-1]))


def jdbc_problem(url: str) -> str | None:
    """Why a JDBC URL's driver options would act on the pod, or None (file-reading options are
    left to `jdbc_files`: they may name an attached file)."""
    if ("@" in url or "%" in url) and _ORACLE_PROVIDER.search(_decoded(url)):
        return (f"the JDBC URL uses an Oracle configuration provider (@config-...), which "
                f"{FETCH}; write the connection's options in the URL itself")
    for key, value in options(url):
        known = option_of(key)
        if known is not None and known.kind != READS:
            return (f"the JDBC driver option {show(key)} ({known.drivers}) {known.kind}; it is not "
                    "offered to documents: remove it from the URL")
        if known is None and _URL_VALUE.match(value):
            return (f"the JDBC driver option {show(key)} names a local URL {show(value)}; only "
                    "options that read a file may name one, and only a file attached under "
                    "files")
    return None


def jdbc_files(url: str) -> list[tuple[str, str]]:
    """(option, path) for each option reading a file: the path must be an attached file."""
    return [(key, _path(value)) for key, value in options(url)
            if (known := option_of(key)) is not None and known.kind == READS]


def _path(value: str) -> str:
    """The path a `file:` URL names (`file:/a`, `file:///a`); other values as written. A URL
    with an authority (`file://host/a`) keeps it, so it never names an attached file."""
    m = _FILE_URL.fullmatch(value)
    if m is None:
        return value
    rest = m.group(1)
    return rest[2:] if rest.startswith("///") else rest
