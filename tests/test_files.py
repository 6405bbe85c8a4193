"""Attached files (`files`): what a document may attach, where it is mounted, and the rule that a
property naming a file must name a mounted one. Pure decisions, as tables; the chart's objects
are in tests/test_files_chart.py."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from tests.conftest import demo_settings, example_docs, with_hdfs
from trinogen.model import Cluster, Failed, FileConfigMap, FileSecret, Mount, RawDocument, classify
from trinogen.model.file_paths import Mounted, mounted_files
from trinogen.render import Renderer
from trinogen.secrets import Secret, SecretData
from trinogen.source import doc_key
from trinogen.trino import paths
from trinogen.trino.registry import registry_for

KEYTAB_REF = "{{ vault:secret/trino/adhoc-dev/kerberos#keytab }}"
CORE_SITE = "<configuration>\n  <property><name>fs.defaultFS</name><value>file:///</value></property>\n</configuration>\n"


def doc(files: Any = None, *, connectors: list[dict[str, Any]] | None = None,
        properties: dict[str, Any] | None = None, **body: Any) -> dict[str, Any]:
    """The adhoc-dev example with `files` (and optionally more connectors or properties)."""
    d = copy.deepcopy(example_docs()[0])
    assert d["clusterId"] == "adhoc-dev"
    if files is not None:
        d["files"] = files
    d["connectors"] = d["connectors"] + (connectors or [])
    if properties is not None:
        d["properties"] = properties
    d.update(body)
    return d


def outcome(d: dict[str, Any], **sections: Any) -> Cluster | Failed:
    o = classify(RawDocument(doc_key(d["_id"]), d), with_hdfs(demo_settings(**sections)))
    assert isinstance(o, (Cluster, Failed))
    return o


def problems(d: dict[str, Any], **sections: Any) -> list[tuple[str, str]]:
    o = outcome(d, **sections)
    return [] if isinstance(o, Cluster) else [(p.field, p.message) for p in o.problems]


def hive(storage: str | None = None, **props: str) -> dict[str, Any]:
    entry = {"name": "hive", "properties": {"connector.name": "hive",
                                            "hive.metastore.uri": "thrift://m:9083", **props}}
    return entry if storage is None else {**entry, "storage": storage}


# --- what a document may attach ---------------------------------------------------------------

BIG = "x" * (256 * 1024 + 1)
# (id, files, field path of the one problem, fragment of its message)
BAD_FILES = [
    ("not a list", {"name": "a"}, "files", "must be a list"),
    ("too many", [{"name": f"f{i}", "content": ""} for i in range(65)], "files", "at most 64"),
    ("an entry is not an object", ["core-site.xml"], "files[0]", "must be an object"),
    ("unknown field", [{"name": "a", "content": "", "path": "/etc/trino/config.properties"}],
     'files["a"].path', "unknown field"),
    ("a path as name", [{"name": "../config.properties", "content": ""}], "files[0].name",
     "plain file name"),
    ("a directory in the name", [{"name": "catalog/evil.properties", "content": ""}],
     "files[0].name", "plain file name"),
    ("a hidden file", [{"name": ".bashrc", "content": ""}], "files[0].name", "plain file name"),
    ("the kubelet's link", [{"name": "..data", "content": ""}], "files[0].name", "plain file name"),
    ("a space", [{"name": "core site.xml", "content": ""}], "files[0].name", "plain file name"),
    ("too long a name", [{"name": "a" * 129, "content": ""}], "files[0].name", "at most 128"),
    ("no name", [{"content": ""}], "files[0].name", "is required"),
    ("names equal ignoring case", [{"name": "A.xml", "content": ""}, {"name": "a.xml", "content": ""}],
     "files[1].name", "repeats files[0].name"),
    ("neither content nor secret", [{"name": "a"}], 'files["a"]', "exactly one of content"),
    ("both content and secret", [{"name": "a", "content": "", "secret": KEYTAB_REF}], 'files["a"]',
     "exactly one of content"),
    ("content not text", [{"name": "a", "content": 42}], 'files["a"].content', "must be a string"),
    ("binary content", [{"name": "a", "content": "ab\x00cd"}], 'files["a"].content',
     "control characters"),
    ("content too large", [{"name": "a", "content": BIG}], 'files["a"].content', "at most 262144"),
    ("placeholder in text", [{"name": "a", "content": "pw={{ PASSWORD }}\n"}], 'files["a"].content',
     "not templated"),
    ("broken vault placeholder in text", [{"name": "a", "content": "{{ vault:nope }}"}],
     'files["a"].content', "not templated"),
    ("encoding on a text file", [{"name": "a", "content": "", "encoding": "base64"}],
     'files["a"].encoding', "secret files only"),
    ("unknown encoding", [{"name": "a", "secret": KEYTAB_REF, "encoding": "hex"}],
     'files["a"].encoding', "not an encoding"),
    ("secret with text around", [{"name": "a", "secret": f"x{KEYTAB_REF}"}], 'files["a"].secret',
     "exactly one placeholder"),
    ("two placeholders", [{"name": "a", "secret": KEYTAB_REF + KEYTAB_REF}], 'files["a"].secret',
     "exactly one placeholder"),
    ("secret outside the scope", [{"name": "a", "secret": "{{ vault:secret/trino/other#k }}"}],
     'files["a"].secret', "outside this cluster's allowed paths"),
    ("trino's own env wiring", [{"name": "a", "secret": "${ENV:PATH}"}], 'files["a"].secret',
     "reserved for trinogen"),
]


@pytest.mark.parametrize(("files", "path", "fragment"), [b[1:] for b in BAD_FILES],
                         ids=[b[0] for b in BAD_FILES])
def test_a_bad_file_entry_is_one_problem_at_its_path(files: Any, path: str, fragment: str) -> None:
    """Each mistake in `files` fails the document with exactly one problem, naming the field."""
    found = problems(doc(files))
    assert [p for p, _ in found] == [path], found
    assert fragment in found[0][1], found[0][1]


def test_a_literal_secret_is_refused_without_echoing_it() -> None:
    """A secret file's value that is not a placeholder is refused, and never shown in the message."""
    value = "BEGIN-PRIVATE-KEY-not-a-placeholder-4711"
    found = problems(doc([{"name": "key.pem", "secret": value}]))
    assert [p for p, _ in found] == ['files["key.pem"].secret']
    assert value not in found[0][1] and "4711" not in found[0][1]


def test_text_and_secret_files_become_a_config_map_a_secret_and_their_mounts() -> None:
    """Text files land in one ConfigMap, secret files in one Secret (per-file decoding), each
    mounted as a directory of its own under /etc/trino."""
    c = outcome(doc([
        {"name": "core-site.xml", "content": CORE_SITE},
        {"name": "trino.keytab", "secret": KEYTAB_REF, "encoding": "base64"},
        {"name": "gcs-key.json", "secret": "{{ GCS_KEY }}"},
        {"name": "empty.txt", "content": ""},
    ]))
    assert isinstance(c, Cluster), c
    assert c.file_config_maps == (FileConfigMap("adhoc-dev-trino-files", (
        ("core-site.xml", CORE_SITE), ("empty.txt", "")),),)
    (fs,) = c.file_secrets
    assert fs.name == "adhoc-dev-trino-secret-files"
    assert [(k, str(u.ref)) for k, u in fs.files] == [
        ("gcs-key.json", "secret/trino/adhoc-dev#GCS_KEY"),
        ("trino.keytab", "secret/trino/adhoc-dev/kerberos#keytab")]
    assert fs.decoding == (("trino.keytab", "Base64"),)
    assert c.mounts == (
        Mount("trinogen-files", "adhoc-dev-trino-files", "/etc/trino/files"),
        Mount("trinogen-secret-files", "adhoc-dev-trino-secret-files", "/etc/trino/secret-files",
              secret=True))
    assert {u.ref.secret_path for u in c.vault_uses} == {"secret/trino/adhoc-dev",
                                                          "secret/trino/adhoc-dev/kerberos"}


def test_a_document_without_files_has_no_mounts() -> None:
    """No `files`, no ConfigMap, Secret or mount (and so the same output as before)."""
    c = outcome(doc())
    assert isinstance(c, Cluster)
    assert (c.mounts, c.file_secrets, c.file_config_maps) == ((), (), ())


# --- which properties name files --------------------------------------------------------------

# (key, value, the files it names; None = a property that names no file)
PATH_VALUES = [
    ("hive.config.resources", "/a/core-site.xml, /a/hdfs-site.xml", ("/a/core-site.xml", "/a/hdfs-site.xml")),
    ("hive.config.resources", "/a/core-site.xml,", ("/a/core-site.xml",)),
    ("kafka.config.resources", "/k.properties", ("/k.properties",)),
    ("hive.metastore.client.keytab", "/k/trino.keytab", ("/k/trino.keytab",)),
    ("gcs.json-key-file-path", " /k/key.json ", ("/k/key.json",)),
    ("exchange.http-client.trust-store-path", "/t.jks", ("/t.jks",)),
    ("opensearch.tls.truststore-path", "/t.p12", ("/t.p12",)),
    ("kafka.ssl.truststore.location", "/t.jks", ("/t.jks",)),
    ("http-server.authentication.jwt.key-file", "/jwt.pem", ("/jwt.pem",)),
    ("http-server.authentication.jwt.key-file", "https://idp.example.com/jwks", None),
    # look-alikes that are passwords, flags, sizes or written paths, not files to read
    ("http-server.https.keystore.key", "changeit", None),
    ("hive.metastore.thrift.client.ssl.trust-certificate-password", "changeit", None),
    ("case-insensitive-name-matching.config-file.refresh-period", "1m", None),
    ("s3.path-style-access", "true", None),
    ("exchange.http-client.log.path", "/var/log/x", None),
    ("hive.s3.staging-directory", "/tmp", None),
    ("connection-url", "jdbc:postgresql://db:5432/dw", None),
]


@pytest.mark.parametrize(("key", "value", "expected"), PATH_VALUES)
def test_which_values_name_files(key: str, value: str, expected: tuple[str, ...] | None) -> None:
    """Path-valued properties give the files they name (lists split at commas); others give None."""
    assert paths.file_paths(key, value) == expected


def test_every_path_property_is_a_name_trino_binds() -> None:
    """Each name in the tables is bound by Trino 470 or 476 (no typo can hide a property)."""
    names: set[str] = set()
    for version in ("470", "476"):
        r = registry_for(version)
        assert r is not None
        names |= r.node.names if r.node else set()
        for role in ("coordinator", "worker"):
            known = r.server(role)
            names |= known.names if known else set()
        for connector in r.connector_names:
            known = r.connector(connector)
            names |= known.names if known else set()
    table = paths.SINGLE | paths.LISTS | set(paths.REFUSED)
    assert sorted(table - names) == []
    assert all(any(n.endswith(s) for n in names) for s in paths.SUFFIXES)


# --- a property naming a file must name a mounted one -----------------------------------------

FILES = [{"name": "core-site.xml", "content": CORE_SITE},
         {"name": "trino.keytab", "secret": KEYTAB_REF, "encoding": "base64"}]
MOUNTED_TEXT = "/etc/trino/files/core-site.xml"
MOUNTED_SECRET = "/etc/trino/secret-files/trino.keytab"
HADOOP = {"storage": "hdfs"}  # legacy Hadoop, from the platform's storage option

# (id, document, problems as (field path, fragment); [] = valid)
PATH_RULES: list[tuple[str, dict[str, Any], list[tuple[str, str]]]] = [
    ("hadoop resources at a mounted file", doc(FILES, connectors=[hive(
        **HADOOP, **{"hive.config.resources": MOUNTED_TEXT})]), []),
    ("keytab at a mounted secret file", doc(FILES, connectors=[hive(
        **HADOOP, **{"hive.metastore.authentication.type": "KERBEROS",
                     "hive.metastore.client.principal": "trino@EXAMPLE.COM",
                     "hive.metastore.service.principal": "hive/_HOST@EXAMPLE.COM",
                     "hive.metastore.client.keytab": MOUNTED_SECRET})]), []),
    ("a typo in the file name", doc(FILES, connectors=[hive(
        **HADOOP, **{"hive.config.resources": "/etc/trino/files/core-site.xm"})]),
     [('connectors["hive"].properties["hive.config.resources"]', MOUNTED_TEXT)]),
    ("one file of a list missing", doc(FILES, connectors=[hive(
        **HADOOP, **{"hive.config.resources": f"{MOUNTED_TEXT},/etc/hadoop/hdfs-site.xml"})]),
     [('connectors["hive"].properties["hive.config.resources"]', '"/etc/hadoop/hdfs-site.xml"')]),
    ("no files at all", doc(None, connectors=[hive(**HADOOP, **{"hive.config.resources": MOUNTED_TEXT})]),
     [('connectors["hive"].properties["hive.config.resources"]', "mounts no files")]),
    ("a text file where the secret file is", doc(FILES, connectors=[hive(
        **HADOOP, **{"hive.config.resources": "/etc/trino/secret-files/core-site.xml"})]),
     [('connectors["hive"].properties["hive.config.resources"]', MOUNTED_SECRET)]),
    ("a relative path", doc(FILES, connectors=[hive(**HADOOP, **{"hive.config.resources": "core-site.xml"})]),
     [('connectors["hive"].properties["hive.config.resources"]', "not a file the pods mount")]),
    ("hadoop resources without hadoop: only the registry's refusal", doc(FILES, connectors=[hive(
        **{"hive.config.resources": MOUNTED_TEXT, "fs.native-s3.enabled": "true"})]),
     [('connectors["hive"].properties["hive.config.resources"]', "fs.hadoop.enabled=true")]),
    ("legacy Hadoop switched on by the document", doc(FILES, connectors=[hive(
        **{"fs.hadoop.enabled": "true", "hive.config.resources": MOUNTED_TEXT})]),
     [('connectors["hive"].properties["fs.hadoop.enabled"]', "storage option of type hdfs"),
      ('connectors["hive"].properties["hive.config.resources"]', "type hdfs")]),
    ("a server property at an unmounted file", doc(FILES, properties={
        "http-server": {"authentication.krb5.keytab": "/etc/krb5.keytab"}}),
     [('properties.http-server["authentication.krb5.keytab"]', "not a file the pods mount")]),
    ("a server property at a mounted file", doc(FILES, properties={
        "internal-communication.https.truststore.path": MOUNTED_SECRET}), []),
    ("a role's property at an unmounted file", doc(FILES, clusterConfig={"coordinator": {
        "properties": {"http-server.https.truststore.path": "/etc/trust.jks"}}}),
     [('clusterConfig.coordinator.properties["http-server.https.truststore.path"]', "not a file")]),
    ("a node property at an unmounted file", doc(FILES, properties={"node": {"annotation-file": "/x"}}),
     [("properties.node.annotation-file", "not a file the pods mount")]),
    ("access control from a document", doc(FILES, properties={
        "access-control.config-files": MOUNTED_TEXT}),
     [('properties["access-control.config-files"]', "access control the platform configures")]),
    ("authenticators from a document", doc(FILES, properties={
        "password-authenticator": {"config-files": MOUNTED_TEXT}}),
     [('properties.password-authenticator.config-files', "authenticators")]),
    ("a catalog directory from a document", doc(FILES, properties={"catalog.config-dir": "/etc/trino/files"}),
     [('properties["catalog.config-dir"]', "the chart mounts the catalogs")]),
]


@pytest.mark.parametrize(("d", "expected"), [r[1:] for r in PATH_RULES], ids=[r[0] for r in PATH_RULES])
def test_a_property_naming_a_file_must_name_a_mounted_one(
        d: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    """Each path-valued property passes when it names a mounted file; otherwise one problem at
    its path, listing what is mounted."""
    found = problems(d)
    assert [p for p, _ in found] == [p for p, _ in expected], found
    for (_, message), (_, fragment) in zip(found, expected, strict=True):
        assert fragment in message, message


def test_the_path_rule_holds_with_the_registry_checks_off() -> None:
    """The mount rule is trinogen's own (like the chart-owned keys): `trino_properties: off`
    does not switch it off."""
    d = doc(None, connectors=[hive(**HADOOP, **{"hive.config.resources": "/etc/hadoop/core-site.xml"})])
    found = problems(d, validation={"trino_properties": "off"})
    assert [p for p, _ in found] == ['connectors["hive"].properties["hive.config.resources"]']


# (id, mounts, path, held?)
MOUNT_TABLE = [
    ("a known ConfigMap's key", (Mount("v", "cm", "/etc/trino/files"),), "/etc/trino/files/a.xml", True),
    ("another key of it", (Mount("v", "cm", "/etc/trino/files"),), "/etc/trino/files/b.xml", False),
    ("a known Secret's key", (Mount("s", "sec", "/etc/trino/secret-files", secret=True),),
     "/etc/trino/secret-files/k.keytab", True),
    ("a key of the ConfigMap under the Secret's mount",
     (Mount("s", "sec", "/etc/trino/secret-files", secret=True),), "/etc/trino/secret-files/a.xml", False),
    ("a subPath mount", (Mount("v", "other", "/etc/krb5.conf", "krb5.conf"),), "/etc/krb5.conf", True),
    ("under another feature's directory", (Mount("tls", "tls", "/etc/trino/tls", secret=True),),
     "/etc/trino/tls/keystore.p12", True),
    ("escaping that directory", (Mount("tls", "tls", "/etc/trino/tls", secret=True),),
     "/etc/trino/tls/../config.properties", False),
    ("the directory itself", (Mount("tls", "tls", "/etc/trino/tls", secret=True),), "/etc/trino/tls", False),
]


@pytest.mark.parametrize(("mounts", "path", "held"), [m[1:] for m in MOUNT_TABLE],
                         ids=[m[0] for m in MOUNT_TABLE])
def test_what_counts_as_a_mounted_file(mounts: tuple[Mount, ...], path: str, held: bool) -> None:
    """A mount of a known ConfigMap or Secret holds exactly its keys; a subPath mount its one
    file; another feature's directory mount every normalised path below it."""
    use = outcome(doc(FILES)).file_secrets[0].files[0][1]  # type: ignore[union-attr]
    m: Mounted = mounted_files(mounts, [FileConfigMap("cm", (("a.xml", ""),))],
                               [FileSecret("sec", (("k.keytab", use),))])
    assert m.holds(path) is held


# --- rendering ----------------------------------------------------------------------------------

TRICKY_CONTENT = {
    "no-final-newline.txt": "a\nb",
    "trailing-spaces.txt": "a  \n b \n",
    "blank-lines.txt": "\n\na\n\n",
    "crlf.txt": "a\r\nb\r\n",
    "tabs.txt": "\ta\tb\n",
    "unicode.txt": "naïve café – 日本語 😀\n",
    "helm-like.txt": "{{ .Release.Name }} {{- fail \"no\" }}\n",
    "yaml-like.txt": "- a: b\n--- \n...\n",
    "dollar.txt": "$PATH ${HOME} ${ env:HOME} ${1:x} $${x}\n",  # nothing Trino or Hadoop substitutes
    "empty.txt": "",
}


def _rendered(d: dict[str, Any]) -> tuple[Cluster, dict[str, bytes]]:
    c = outcome(d)
    assert isinstance(c, Cluster), c
    return c, Renderer(demo_settings()).render_cluster(c, {})


def test_the_config_map_holds_exactly_the_documents_content() -> None:
    """Read back by a YAML parser, the ConfigMap's data is the document's files, byte for byte."""
    _, files = _rendered(doc([{"name": n, "content": t} for n, t in TRICKY_CONTENT.items()]))
    cm = yaml.safe_load(files["trino-clusters/adhoc-dev/manifests/adhoc-dev-trino-files.yaml"])
    assert cm["kind"] == "ConfigMap" and cm["apiVersion"] == "v1"
    assert cm["metadata"]["name"] == "adhoc-dev-trino-files"
    assert cm["metadata"]["namespace"] == "trino-adhoc-dev"
    assert cm["data"] == TRICKY_CONTENT


def test_a_content_change_rolls_the_pods_and_nothing_else_does() -> None:
    """The files checksum on both roles' pods changes with any file's content, and only then."""
    def annotations(content: str, other: str = "x") -> list[dict[str, str]]:
        _, files = _rendered(doc([{"name": "core-site.xml", "content": content},
                                  {"name": "other.txt", "content": other}]))
        values = yaml.safe_load(files["trino-clusters/adhoc-dev/values.yaml"])
        return [values[r]["annotations"] for r in ("coordinator", "worker")]

    first = annotations(CORE_SITE)
    assert first[0] == first[1] and set(first[0]) == {"trinogen.io/files-checksum"}
    assert annotations(CORE_SITE) == first
    assert annotations(CORE_SITE + " ") != first
    assert annotations(CORE_SITE, "y") != first


def test_the_external_secret_names_each_vault_ref_and_its_decoding() -> None:
    """The secret files' ExternalSecret has one entry per file, Base64 decoding where asked."""
    _, files = _rendered(doc(FILES[1:] + [{"name": "gcs-key.json", "secret": "{{ GCS_KEY }}"}]))
    es = yaml.safe_load(files["trino-clusters/adhoc-dev/secrets/adhoc-dev-trino-secret-files.yaml"])
    assert es["spec"]["target"]["name"] == "adhoc-dev-trino-secret-files"
    assert es["spec"]["data"] == [
        {"secretKey": "gcs-key.json", "remoteRef": {"key": "secret/trino/adhoc-dev", "property": "GCS_KEY"}},
        {"secretKey": "trino.keytab", "remoteRef": {"key": "secret/trino/adhoc-dev/kerberos",
                                                    "property": "keytab", "decodingStrategy": "Base64"}},
    ]
    assert not any("/manifests/" in p for p in files)  # no text file: no ConfigMap


def test_the_application_deploys_the_manifests_folder() -> None:
    """With text files, the Application gets the manifests folder as a source of its own."""
    _, files = _rendered(doc(FILES[:1]))
    app = yaml.safe_load(files["trino-applications/adhoc-dev.yaml"])
    paths_ = [s.get("path") for s in app["spec"]["sources"]]
    assert paths_ == [None, None, "trino-clusters/adhoc-dev/manifests"]


def test_files_can_be_given_by_a_profile() -> None:
    """Like every field, `files` may come from a profile (lists replace, they do not merge)."""
    settings = demo_settings()
    profiles = {**settings.profiles, "hadoop": {"files": FILES[:1]}}
    d = doc(None, profile="hadoop")
    o = classify(RawDocument(doc_key(d["_id"]), d), dataclasses.replace(settings, profiles=profiles))
    assert isinstance(o, Cluster), o
    assert [k for cm in o.file_config_maps for k, _ in cm.files] == ["core-site.xml"]



# --- any `files` value: a clear problem or an exact rendering, never an exception --------------

_file_text = st.one_of(st.text(max_size=30), st.sampled_from(
    ["{{ .Release.Name }}", "{{ vault:bad }}", "{{ X }}", KEYTAB_REF, "${ENV:PATH}", "\x00", "\r\n",
     "\u2028", "\ud800", " lead", "trail \n", "", "..", "a/b", "-x", "A.xml"]))
_file_any = st.one_of(_file_text, st.none(), st.integers(), st.booleans(), st.lists(st.none(), max_size=1),
                      st.dictionaries(st.text(max_size=3), st.none(), max_size=1))
_entries = st.lists(st.one_of(
    st.fixed_dictionaries({"name": _file_text}, optional={
        "content": _file_any, "secret": _file_any, "encoding": _file_any, "extra": _file_any}),
    _file_any), max_size=4)


@hsettings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(files=st.one_of(_entries, _file_any))
def test_any_files_value_fails_clearly_or_renders_exactly(files: Any) -> None:
    """Whatever `files` holds, the document fails with problems under `files` or renders a
    ConfigMap whose data is exactly the document's text files."""
    d = doc(files)
    o = outcome(d)
    if isinstance(o, Failed):
        assert o.problems and all(p.field.startswith("files") for p in o.problems), o.problems
        return
    rendered = Renderer(demo_settings()).render_cluster(o, {})
    texts = {e["name"]: e["content"] for e in files or () if isinstance(e, dict) and "content" in e}
    path = "trino-clusters/adhoc-dev/manifests/adhoc-dev-trino-files.yaml"
    if texts:
        assert yaml.safe_load(rendered[path])["data"] == texts
    else:
        assert path not in rendered


def test_a_secret_files_encoding_rolls_the_pods_and_plain_secret_files_add_no_annotation() -> None:
    """Switching a secret file's decoding changes the pods' files checksum; secret files without
    decoding (and no text file) leave the pod annotations to the secrets checksum alone."""
    def annotations(files: list[dict[str, Any]]) -> dict[str, str]:
        _, rendered = _rendered(doc(files))
        return dict(yaml.safe_load(rendered["trino-clusters/adhoc-dev/values.yaml"])["worker"]["annotations"])

    plain = annotations([{"name": "k", "secret": KEYTAB_REF}])
    decoded = annotations([{"name": "k", "secret": KEYTAB_REF, "encoding": "base64"}])
    url = annotations([{"name": "k", "secret": KEYTAB_REF, "encoding": "base64url"}])
    assert set(plain) == {"trinogen.io/secrets-checksum"}
    assert plain["trinogen.io/secrets-checksum"] == decoded["trinogen.io/secrets-checksum"]
    assert decoded["trinogen.io/files-checksum"] != url["trinogen.io/files-checksum"]


def test_inline_mode_still_delivers_secret_files_through_eso() -> None:
    """With secrets substituted inline (the unsafe mode), a secret file is still an
    ExternalSecret reference: its value is in no rendered file."""
    value = "inline-mode-keytab-value-8842"
    c = outcome(doc([{"name": "k", "secret": KEYTAB_REF}]))
    assert isinstance(c, Cluster)
    resolved = {"secret/trino/adhoc-dev/kerberos": SecretData(4, {"keytab": Secret(value)})}
    files = Renderer(demo_settings()).render_cluster(c, resolved, inline=True)
    es = yaml.safe_load(files["trino-clusters/adhoc-dev/secrets/adhoc-dev-trino-secret-files.yaml"])
    assert es["spec"]["data"][0]["remoteRef"]["version"] == "4"
    assert not any(value.encode() in b for b in files.values())
