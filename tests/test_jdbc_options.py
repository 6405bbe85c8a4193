"""JDBC driver options that act on the Trino pod are refused (issue 19, finding 6).

The option names are written here as each driver's documentation spells them (the sources are
listed in trinogen/model/jdbc_options.py), never read from trinogen's table; the attacker's
spellings (case, percent-encoding, `;` for `&`, duplicates, options in the host part) are
written out too.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.conftest import demo_settings
from tests.test_library import classified, cluster_doc, library, messages
from trinogen.model import Cluster, RawDocument, classify
from trinogen.model.jdbc_options import jdbc_files, jdbc_problem
from trinogen.model.local_files import local_file_problem
from trinogen.source import doc_key

# (driver, URL): every one acts on the pod whatever the database does.
REFUSED = [
    # pgjdbc: classes it instantiates, its log file, its XML parser factory
    ("pgjdbc", ("jdbc:postgresql://a/db?socketFactory=org.newsclub.net.unix.AFUNIXSocketFactory"
                "$FactoryArg&socketFactoryArg=/var/run/docker.sock")),
    ("pgjdbc", "jdbc:postgresql://a/db?socketFactoryArg=/var/run/x.sock"),
    ("pgjdbc", "jdbc:postgresql://a/db?sslfactory=org.postgresql.ssl.NonValidatingFactory"),
    ("pgjdbc", "jdbc:postgresql://a/db?sslfactoryarg=x"),
    ("pgjdbc", "jdbc:postgresql://a/db?sslhostnameverifier=com.example.Any"),
    ("pgjdbc", "jdbc:postgresql://a/db?sslpasswordcallback=com.example.Cb"),
    ("pgjdbc", "jdbc:postgresql://a/db?authenticationPluginClassName=com.example.P"),
    ("pgjdbc", "jdbc:postgresql://a/db?loggerLevel=DEBUG&loggerFile=/etc/trino/x.log"),
    ("pgjdbc", "jdbc:postgresql://a/db?xmlFactoryFactory=LEGACY_INSECURE"),
    # the attacker's spellings
    ("case", "jdbc:postgresql://a/db?SSLFACTORY=x"),
    ("case of the scheme", "JDBC:PostgreSQL://a/db?sslFactory=x"),
    ("percent-encoded key", "jdbc:postgresql://a/db?ssl%66actory=x"),
    ("double-encoded key", "jdbc:postgresql://a/db?ssl%2566actory=x"),
    ("encoded separator", "jdbc:postgresql://a/db?ssl=true%26sslfactory=x"),
    ("space before the key", "jdbc:postgresql://a/db?ssl=true& sslfactory=x"),
    ("spaces around =", "jdbc:sqlserver://a:1433; socketFactoryClass = com.example.F"),
    ("long s (Java folds it to s)", "jdbc:sqlserver://a:1433;\u017focketFactoryClass=x"),
    ("Kelvin sign (Java folds it to k)", "jdbc:mariadb://a/db?soc\u212aetFactory=x"),
    ("fullwidth letters", "jdbc:postgresql://a/db?\uff53slfactory=x"),
    ("; for &", "jdbc:postgresql://a/db?ssl=true;sslfactory=x"),
    ("duplicated, harmless first", "jdbc:postgresql://a/db?sslfactory=&sslfactory=x"),
    ("underscores", "jdbc:postgresql://a/db?ssl_factory=x"),
    ("in the host part", "jdbc:mysql://(host=a,port=3306,socketFactory=x)/db"),
    ("in an address", "jdbc:mysql://address=(host=a)(port=3306)(autoDeserialize=true)/db"),
    ("dotted name", "jdbc:mysql://a/db?ha.loadBalanceStrategy=com.example.S"),
    # MySQL Connector/J
    ("mysql", "jdbc:mysql://a/db?autoDeserialize=true"),
    ("mysql", "jdbc:mysql://a/db?queryInterceptors=com.example.I"),
    ("mysql", "jdbc:mysql://a/db?connectionLifecycleInterceptors=com.example.I"),
    ("mysql", "jdbc:mysql://a/db?exceptionInterceptors=com.example.I"),
    ("mysql", "jdbc:mysql://a/db?authenticationPlugins=com.example.A"),
    ("mysql", "jdbc:mysql://a/db?defaultAuthenticationPlugin=com.example.A"),
    ("mysql", "jdbc:mysql://a/db?logger=com.example.L"),
    ("mysql", "jdbc:mysql://a/db?profilerEventHandler=com.example.H"),
    ("mysql", "jdbc:mysql://a/db?propertiesTransform=com.example.T"),
    ("mysql", "jdbc:mysql://a/db?clientInfoProvider=com.example.C"),
    ("mysql", "jdbc:mysql://a/db?allowLoadLocalInfileInPath=/"),
    ("mysql", "jdbc:mysql://a/db?namedPipePath=/var/run/mysqld/mysqld.sock"),
    ("mysql", "jdbc:mysql://a/db?authenticationOpenidConnectCallbackHandler=com.example.H"),
    ("mysql", "jdbc:mysql://a/db?authenticationWebAuthnCallbackHandler=com.example.H"),
    ("mysql", "jdbc:mysql://a/db?authenticationFidoCallbackHandler=com.example.H"),
    # configuration files: their options are never seen (an attached one is the author's text)
    ("mysql", "jdbc:mysql://a/db?ociConfigFile=/etc/trino/files/oci.conf"),
    ("redshift", "jdbc:redshift://a:5439/db?IniFile=/etc/trino/files/rsjdbc.ini&IniSection=X"),
    ("snowflake", ("jdbc:snowflake://x.snowflakecomputing.com/?"
                   "CLIENT_CONFIG_FILE=/etc/trino/files/sf_client_config.json")),
    # MariaDB Connector/J (and SingleStore, its fork)
    ("mariadb", "jdbc:mariadb://localhost/db?localSocket=/var/run/mysqld/mysqld.sock"),
    ("mariadb", "jdbc:mariadb://a/db?pipe=x"),
    ("mariadb", "jdbc:mariadb://a/db?socketFactory=com.example.F"),
    ("mariadb", "jdbc:mariadb://a/db?tlsSocketType=com.example.T"),
    ("mariadb", "jdbc:mariadb://a/db?allowLocalInfile=true"),
    ("singlestore", "jdbc:singlestore://a/db?localSocket=/tmp/s.sock"),
    # Microsoft SQL Server: `;key=value` after the host
    ("sqlserver", "jdbc:sqlserver://a:1433;databaseName=x;socketFactoryClass=com.example.F"),
    ("sqlserver", "jdbc:sqlserver://a:1433;socketFactoryConstructorArg=x"),
    ("sqlserver", "jdbc:sqlserver://a:1433;encrypt=true;trustManagerClass=com.example.T"),
    ("sqlserver", "jdbc:sqlserver://a:1433;trustManagerConstructorArg=x"),
    ("sqlserver", "jdbc:sqlserver://a:1433;accessTokenCallbackClass=com.example.C"),
    # Oracle: configuration providers fetch the options from elsewhere
    ("oracle", "jdbc:oracle:thin:@config-file:///var/run/secrets/x.json"),
    ("oracle", "jdbc:oracle:thin:@config-azure://myappconfig?key=/sales/"),
    ("oracle", "jdbc:oracle:thin:@ CONFIG-ociobject://x"),
    # Redshift, ClickHouse, Druid (Avatica), Vertica, Exasol
    ("redshift", "jdbc:redshift://a:5439/db?plugin_name=com.example.Provider"),
    ("redshift", "jdbc:redshift://a:5439/db?LogPath=/tmp&LogLevel=6"),
    ("redshift", "jdbc:redshift://a:5439/db?SSLFactory=com.example.F"),
    ("clickhouse", "jdbc:clickhouse://a:8123/db?custom_socket_factory=com.example.F"),
    ("druid", ("jdbc:avatica:remote:url=http://b:8082/druid/v2/sql/avatica/;"
               "httpclient_impl=com.example.H")),
    ("vertica", "jdbc:vertica://a:5433/db?LogPath=/tmp"),
    ("exasol", "jdbc:exa:a:8563;logdir=/tmp"),
    # any other option naming a local URL
    ("unknown option, file: URL", "jdbc:postgresql://a/db?anything=file:///var/run/secrets/t"),
    ("unknown option, jar: URL", "jdbc:mysql://a/db?x=jar:file:/opt/x.jar!/a"),
    ("unknown option, encoded", "jdbc:mysql://a/db?x=%66ile:/etc/passwd"),
]


@pytest.mark.parametrize(("driver", "url"), REFUSED, ids=[f"{d}:{u[:60]}" for d, u in REFUSED])
def test_driver_options_acting_on_the_pod_are_refused(driver: str, url: str) -> None:
    """Each class, socket, log file, configuration provider, deserialization or local URL in a
    JDBC URL is refused as a catalog property, in every spelling a driver reads."""
    assert jdbc_problem(url) is not None
    assert local_file_problem("connection-url", url) is not None


KEPT = [
    "jdbc:postgresql://db:5432/x?ssl=true",
    "jdbc:postgresql://db:5432/x?sslmode=verify-full&ApplicationName=file-loader",
    "jdbc:postgresql://db:5432/x?sslrootcert=/etc/trino/secret-files/ca.pem",  # a read: see below
    "jdbc:mysql://a:3306?useSSL=true&sslMode=VERIFY_IDENTITY&allowPublicKeyRetrieval=false",
    "jdbc:mariadb://a:3306/db?sslMode=verify-full",
    "jdbc:sqlserver://a:1433;databaseName=x;encrypt=true;trustServerCertificate=false",
    "jdbc:oracle:thin:@//a:1521/svc",
    ("jdbc:oracle:thin:@(DESCRIPTION=(ADDRESS=(PROTOCOL=TCP)(HOST=a)(PORT=1521))"
     "(CONNECT_DATA=(SERVICE_NAME=svc)))"),
    "jdbc:redshift://a:5439/db?ssl=true",
    "jdbc:clickhouse://a:8123/db?ssl=true",
    "jdbc:snowflake://acct.snowflakecomputing.com/?db=x&warehouse=w",
]


@pytest.mark.parametrize("url", KEPT)
def test_ordinary_urls_are_kept(url: str) -> None:
    """TLS modes, names and descriptors without pod-acting options pass."""
    assert jdbc_problem(url) is None
    assert local_file_problem("connection-url", url) is None


FILES = [
    (("jdbc:postgresql://a/db?sslmode=verify-full&sslrootcert=/etc/trino/secret-files/ca.pem"
      "&sslcert=/etc/trino/secret-files/c.pem&sslkey=/etc/trino/secret-files/c.pk8"),
     [("sslrootcert", "/etc/trino/secret-files/ca.pem"), ("sslcert", "/etc/trino/secret-files/c.pem"),
      ("sslkey", "/etc/trino/secret-files/c.pk8")]),
    ("jdbc:mysql://a/db?trustCertificateKeyStoreUrl=file:/etc/trino/secret-files/t.jks",
     [("trustCertificateKeyStoreUrl", "/etc/trino/secret-files/t.jks")]),
    ("jdbc:mysql://a/db?clientCertificateKeyStoreUrl=file:///etc/trino/secret-files/k.p12",
     [("clientCertificateKeyStoreUrl", "/etc/trino/secret-files/k.p12")]),
    ("jdbc:mysql://a/db?clientCertificateKeyStoreUrl=FILE://host/etc/x",
     [("clientCertificateKeyStoreUrl", "//host/etc/x")]),
    ("jdbc:mysql://a/db?serverRSAPublicKeyFile=/var/run/secrets/kubernetes.io/serviceaccount/token",
     [("serverRSAPublicKeyFile", "/var/run/secrets/kubernetes.io/serviceaccount/token")]),
    ("jdbc:postgresql://a/db?sslkey=%2Fproc%2Fself%2Fenviron", [("sslkey", "/proc/self/environ")]),
    ("jdbc:mariadb://a/db?serverSslCert=/x&trustStore=/y&keyStore=/z",
     [("serverSslCert", "/x"), ("trustStore", "/y"), ("keyStore", "/z")]),
    ("jdbc:sqlserver://a;clientCertificate=/a;clientKey=/b;serverCertificate=/c;trustStore=/d",
     [("clientCertificate", "/a"), ("clientKey", "/b"), ("serverCertificate", "/c"),
      ("trustStore", "/d")]),
    ("jdbc:oracle:thin:@tcps://a:1522/svc?wallet_location=/w&TNS_ADMIN=/t",
     [("wallet_location", "/w"), ("TNS_ADMIN", "/t")]),
    (("jdbc:oracle:thin:@(DESCRIPTION=(ADDRESS=(PROTOCOL=TCPS)(HOST=a)(PORT=2484))"
      "(SECURITY=(MY_WALLET_DIRECTORY=/var/run/secrets)))"),
     [("MY_WALLET_DIRECTORY", "/var/run/secrets")]),
    ("jdbc:oracle:thin:@a:1521/svc?oracle.net.wallet_location=/w", [("oracle.net.wallet_location", "/w")]),
    ("jdbc:snowflake://x.snowflakecomputing.com/?private_key_file=/k",
     [("private_key_file", "/k")]),
    ("jdbc:mysql://a/db?idTokenFile=/var/run/secrets/kubernetes.io/serviceaccount/token",
     [("idTokenFile", "/var/run/secrets/kubernetes.io/serviceaccount/token")]),
    ("jdbc:postgresql://a/db?ssl=true", []),
]


@pytest.mark.parametrize(("url", "expected"), FILES)
def test_the_files_a_driver_reads_are_found(url: str, expected: list[tuple[str, str]]) -> None:
    """Each file-reading option yields the path it reads (a file: URL's path, decoded)."""
    assert jdbc_files(url) == expected


SECRET_FILES = [{"name": "ca.pem", "secret": "{{ vault:secret/trino/adhoc/pg#ca }}"}]
PG = "jdbc:postgresql://db:5432/x?sslmode=verify-full&sslrootcert="


def _pg_doc(url: str) -> dict[str, Any]:
    d = cluster_doc("adhoc", "growth_analytics", [
        {"name": "pg", "properties": {"connector.name": "postgresql", "connection-url": url}}])
    return {**d, "files": copy.deepcopy(SECRET_FILES)}


@pytest.mark.parametrize(("url", "fragment"), [
    (PG + "/etc/trino/secret-files/ca.pem", None),
    (PG + "file:/etc/trino/secret-files/ca.pem", None),
    ("jdbc:oracle:thin:@tcps://a:1522/svc?TNS_ADMIN=/etc/trino/secret-files/", None),
    (PG + "/var/run/secrets/kubernetes.io/serviceaccount/token", "sslrootcert"),
    (PG + "/etc/trino/secret-files/../../../proc/self/environ", "sslrootcert"),
    (PG + "/etc/trino/secret-files/other.pem", "sslrootcert"),
    (PG + "/etc/trino/config.properties", "sslrootcert"),
    ("jdbc:oracle:thin:@tcps://a:1522/svc?TNS_ADMIN=/etc/trino", "TNS_ADMIN"),
    (PG + "/etc/trino/secret-files/ca.pem&sslfactory=com.example.F", "sslfactory"),
    # Connector/J's OpenID Connect plugin sends this file to the server (which can ask for
    # that plugin): the pod's service-account token would leave with it
    ("jdbc:mysql://a:3306/db?idTokenFile=/var/run/secrets/kubernetes.io/serviceaccount/token",
     "idTokenFile"),
    ("jdbc:mysql://a:3306/db?idTokenFile=/etc/trino/secret-files/ca.pem", None),
])
def test_a_driver_reads_only_files_the_document_attached(url: str, fragment: str | None) -> None:
    """A JDBC option reading a file passes for an attached file (or the attached directory);
    anything else fails at the catalog's connection-url, naming the option."""
    outcome = classified(_pg_doc(url), library())
    if fragment is None:
        assert isinstance(outcome, Cluster), outcome
        return
    found = messages(outcome)
    path = "connectors[\"pg\"].properties.connection-url: "
    assert [m for m in found if m.startswith(path) and fragment in m], found


def test_a_shared_catalog_is_judged_the_same() -> None:
    """A library catalog's URL with a class-loading option fails for the cluster using it."""
    shared = {"_id": "lib-pg", "name": "pg-shared", "owner": "data_platform",
              "shareWith": ["growth_analytics"], "properties": {
                  "connector.name": "postgresql",
                  "connection-url": "jdbc:postgresql://db/x?socketFactory=com.example.F"}}
    found = messages(classified(cluster_doc("adhoc", "growth_analytics", [
        {"name": "pg", "shared": "pg-shared"}]), library(shared)))
    assert any("socketFactory" in m for m in found), found


def test_the_iceberg_jdbc_catalog_url_is_judged_too() -> None:
    """Any catalog property holding a JDBC URL is judged, not only connection-url."""
    d = cluster_doc("adhoc", "growth_analytics", [{"name": "ice", "properties": {
        "connector.name": "iceberg", "iceberg.catalog.type": "jdbc",
        "iceberg.jdbc-catalog.connection-url": "jdbc:postgresql://db/x?loggerFile=/tmp/x"}}])
    outcome = classify(RawDocument(doc_key(d["_id"]), d), demo_settings())
    found = messages(outcome)
    assert any(m.startswith('connectors["ice"].properties["iceberg.jdbc-catalog.connection-url"]')
               and "loggerFile" in m for m in found), found


PW = "{{ vault:secret/trino/adhoc/pg#password }}"


@pytest.mark.parametrize(("connector", "key", "value", "refused"), [
    # A Vault value inside the URL is substituted by Trino before the driver parses it: a value
    # `x&sslfactory=...` would add a driver option no check ever sees.
    ("postgresql", "connection-url",
     "jdbc:postgresql://db:5432/x?password={{ PG_PASSWORD }}&ssl=true", True),
    ("postgresql", "connection-url", "jdbc:postgresql://db:5432/x?user=u&password=" + PW, True),
    ("sqlserver", "connection-url", "jdbc:sqlserver://db:1433;databaseName={{ DB }}", True),
    ("postgresql", "connection-url", "jdbc:postgresql://{{ HOST }}:5432/x", True),
    ("mysql", "connection-url", "  JDBC:mysql://db:3306/{{ DB }}", True),
    ("postgresql", "connection-url", "{{ PG_URL }}", True),  # the scheme from Vault too
    ("postgresql", "connection-url", "jd{{ X }}bc:postgresql://db/x", True),
    ("iceberg", "iceberg.jdbc-catalog.connection-url",
     "jdbc:postgresql://db/x?password={{ PW }}", True),
    ("iceberg", "iceberg.jdbc-catalog.connection-password", "{{ PW }}", False),
    ("postgresql", "connection-password", PW, False),
    ("postgresql", "connection-user", "{{ PG_USER }}", False),
    ("postgresql", "connection-url", "jdbc:postgresql://db:5432/x?ssl=true", False),
    # not a JDBC URL: the scheme is the document's own text
    ("mongodb", "mongodb.connection-url", "mongodb://u:{{ MONGO_PASSWORD }}@mongo:27017/", False),
])
def test_a_placeholder_never_reaches_a_jdbc_url(connector: str, key: str, value: str,
                                                refused: bool) -> None:
    """A placeholder inside a JDBC URL (or before the scheme of a connection URL) fails the
    property naming the rule; credentials in their own properties and other URLs pass."""
    # an iceberg jdbc-catalog.* property binds only with iceberg.catalog.type=jdbc
    extra = {"iceberg.catalog.type": "jdbc"} if key.startswith("iceberg.jdbc-catalog.") else {}
    d = cluster_doc("adhoc", "growth_analytics", [{"name": "c", "properties": {
        "connector.name": connector, key: value, **extra}}])
    outcome = classify(RawDocument(doc_key(d["_id"]), d), demo_settings())
    found = [] if isinstance(outcome, Cluster) else messages(outcome)
    if refused:
        assert [m for m in found if m.startswith('connectors["c"].properties')
                and key in m and "placeholder may not appear in a JDBC URL" in m], found
    else:
        assert isinstance(outcome, Cluster), found
