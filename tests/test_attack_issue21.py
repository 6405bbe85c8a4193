"""Issue 21's new fields and options as an attacker uses them: each hole found, held shut.

Documents are written by many teams, so each case is one document (or one platform option) that
tried to reach past its own cluster: a type the readers did not expect in a field another kind
reads raw (a traceback stops every cluster's sync), a line the platform's option writes, a
spooling prefix or key two clusters would share. Expectations come from the input: which field
the document wrote, which clusters the templates give the same text.
"""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import demo_settings
from tests.test_spooling import KEY_REF, S3
from trinogen.errors import ConfigError
from trinogen.model import Cluster, Failed, RawDocument, classify, classify_all
from trinogen.model.checker import field_path
from trinogen.settings import Settings, load_settings
from trinogen.settings.named import parse_kind
from trinogen.settings.options.spooling import parse as parse_spooling

LISTENERS = {
    "audit": {"type": "http", "uri": "https://audit.example.com/{cluster}",
              "headers": {"Authorization": {"vault": "secret/trino/{cluster}/audit#token"}},
              "required": {"profiles": ["prod"], "tenants": ["finance"]}},
    "lineage": {"type": "openlineage", "url": "https://marquez.example.com"},
}
STORAGE = {"lake": {"type": "s3", "region": "us-east-1", "credentials": "workload-identity",
                    "spooling": {"location": "s3://spool/{cluster}",
                                 "shared_secret_key": KEY_REF}}}


OAUTH2 = {"type": "OAUTH2", "tls": "ingress",
          "shared_secret": "secret/platform/{cluster}/auth#shared-secret",
          "issuer": "https://idp.example.com", "client_id": "trino-{cluster}",
          "client_secret": "secret/platform/{cluster}/auth#client-secret"}


def settings() -> Settings:
    """The demo settings with two event listeners (one required for prod and finance), a
    storage option that spools and an OAuth2 authentication option."""
    s = demo_settings()
    return dataclasses.replace(s, named={
        **s.named, "event_listeners": parse_kind("event_listeners", LISTENERS, "t"),
        "storage": parse_kind("storage", STORAGE, "t"),
        "authentication": parse_kind("authentication", {"sso": OAUTH2}, "t")})


def doc(**top: Any) -> dict[str, Any]:
    return {"_id": "atk-1", "clusterId": "etl", "owner": "etl_team", "enabled": True,
            "connectors": [{"name": "tpch", "properties": {"connector.name": "tpch"}}],
            **copy.deepcopy(top)}


def judge(d: dict[str, Any]) -> Cluster | Failed:
    out = classify(RawDocument(f'"{d["_id"]}"', d), settings())
    assert isinstance(out, (Cluster, Failed)), out
    return out


def fields(out: Cluster | Failed) -> set[str]:
    assert isinstance(out, Failed), "the document was accepted"
    assert all(p.cluster == "etl" for p in out.problems), out.problems
    return {p.field for p in out.problems}


# --- a document's own types where a required listener is looked up -------------------------


@pytest.mark.parametrize(("field", "value"), [
    ("owner", ["finance"]), ("owner", {"name": "finance"}), ("profile", []),
    ("profile", {"name": "prod"}), ("profile", ["prod"]),
])
def test_an_unhashable_owner_or_profile_fails_its_cluster_not_the_sync(field: str,
                                                                        value: Any) -> None:
    """With a listener required per profile or tenant, a list or object as `owner`/`profile`
    is that document's error at the field, and the other documents of the sync still classify."""
    bad = doc(**{field: value})
    good = doc(_id="atk-2", clusterId="other")
    outcomes = classify_all([RawDocument('"atk-1"', bad), RawDocument('"atk-2"', good)],
                            settings())
    by_doc = {o.doc_id: o for o in outcomes}
    assert field in fields(by_doc['"atk-1"'])  # type: ignore[arg-type]
    assert isinstance(by_doc['"atk-2"'], Cluster)


# --- eventListeners: every entry is a name -----------------------------------------------------


@pytest.mark.parametrize(("listeners", "at"), [
    ([None], "eventListeners[0]"),
    (["lineage", None], "eventListeners[1]"),
])
def test_a_null_among_the_listeners_is_refused_at_its_index(listeners: list[Any],
                                                              at: str) -> None:
    """A null entry is not a listener's name: refused at its index, not silently skipped."""
    assert at in fields(judge(doc(eventListeners=listeners)))


# --- lines a picked option writes are the option's ---------------------------------------------


@pytest.mark.parametrize(("where", "key", "value"), [
    ("properties", "protocol.spooling.enabled", "false"),
    ("properties", "protocol.spooling.enabled", " FALSE "),
    ("coordinator", "protocol.spooling.enabled", "false"),
    ("worker", "protocol.spooling.enabled", "false"),
])
def test_a_document_line_the_spooling_pick_writes_is_refused(where: str, key: str,
                                                             value: str) -> None:
    """With `spooling` picked, the document writing a key the protocol writes too (a second
    line of one key in config.properties) is refused at that property."""
    section, _, rest = key.partition(".")
    d = doc(spooling={"storage": "lake"})
    if where == "properties":
        d["properties"] = {section: {rest: value}}
        at = field_path(f"properties.{section}", rest)
    else:
        d["clusterConfig"] = {where: {"properties": {key: value}}}
        at = f"clusterConfig.{where}.properties"
    assert any(f.startswith(at) for f in fields(judge(d))), at


def test_without_spooling_picked_the_switch_off_is_still_a_plain_line() -> None:
    """`protocol.spooling.enabled=false` alone needs nothing (Trino's default): accepted."""
    out = judge(doc(properties={"protocol": {"spooling.enabled": "false"}}))
    assert isinstance(out, Cluster), out


# --- one spooling prefix and one key per cluster ------------------------------------------------


@pytest.mark.parametrize(("block", "ok"), [
    ({"location": "s3://spool/{cluster}"}, True),
    ({"location": "s3://spool-{cluster}/x"}, True),  # {cluster} alone: each cluster its text
    ({"location": "s3://spool/{owner}/{cluster}/"}, True),
    ({"location": "s3://spool/{cluster}/{owner}"}, True),
    ({"location": "s3://spool/trino-{cluster}.{owner}"}, True),  # '-' faces fixed text only
    ({"location": "s3://spool/{owner}-{cluster}"}, False),  # a-b + c == a + b-c
    ({"location": "s3://spool/{cluster}-{owner}"}, False),
    ({"location": "s3://spool/{owner}{cluster}/"}, False),  # teama + b == team + ab
    ({"location": "s3://spool-{owner}-{cluster}/"}, False),
    ({"shared_secret_key": "secret/trino/{owner}/{cluster}#key"}, True),
    ({"shared_secret_key": "secret/trino/{cluster}#{owner}"}, True),
    ({"shared_secret_key": "secret/trino/{owner}-{cluster}#key"}, False),
    ({"shared_secret_key": "secret/trino/{owner}/x{cluster}#key"}, True),  # '/' between
    ({"shared_secret_key": "secret/trino/{owner}x{cluster}#key"}, False),
])
def test_a_spooling_template_must_give_two_clusters_two_texts(block: dict[str, str],
                                                              ok: bool) -> None:
    """Between `{owner}` and `{cluster}` in a location or key, a character no cluster id holds:
    owner `a-b` with cluster `c` and owner `a` with cluster `b-c` would otherwise share one prefix
    (each prunes and, with prefix-scoped credentials, reads the other's results) or one key."""
    raw = {**S3, **block}
    if ok:
        parse_spooling("storage.x.spooling", raw, "s3", None)
        return
    with pytest.raises(ConfigError, match=r"storage\.x\.spooling\.(location|shared_secret_key)"):
        parse_spooling("storage.x.spooling", raw, "s3", None)


# --- where a listener sends a cluster's events names that cluster alone -------------------------


HTTP = {"type": "http", "uri": "https://audit.example.com/{cluster}"}
KAFKA = {"type": "kafka", "brokers": ["kafka:9092"], "topics": {"completed": "trino.{cluster}"}}
LINEAGE = {"type": "openlineage", "url": "https://marquez.example.com"}


@pytest.mark.parametrize(("option", "ok"), [
    ({**HTTP, "uri": "https://audit.example.com/{owner}/{cluster}"}, True),
    ({**HTTP, "uri": "https://audit.example.com/{owner}-{cluster}"}, False),
    ({**HTTP, "uri": "https://{cluster}{owner}.audit.example.com/"}, False),
    ({**HTTP, "headers": {"X-Cluster": "{owner}.{cluster}"}}, True),
    ({**HTTP, "headers": {"X-Cluster": "{owner}-{cluster}"}}, False),
    ({**HTTP, "headers": {"Authorization": {"vault": "secret/audit/{owner}-{cluster}#t"}}}, False),
    ({**KAFKA, "topics": {"completed": "trino.{owner}.{cluster}"}}, True),
    ({**KAFKA, "topics": {"completed": "trino_{cluster}_{owner}"}}, True),
    ({**KAFKA, "topics": {"completed": "trino-{owner}-{cluster}"}}, False),
    ({**KAFKA, "topics": {"split": "trino.{cluster}-{owner}"}}, False),
    ({**LINEAGE, "namespace": "{owner}/{cluster}"}, True),
    ({**LINEAGE, "namespace": "{owner}-{cluster}"}, False),
    ({**LINEAGE, "api_key": "secret/marquez/{owner}{cluster}#key"}, False),
])
def test_a_listener_template_must_give_two_clusters_two_texts(option: dict[str, Any],
                                                              ok: bool) -> None:
    """Between `{owner}` and `{cluster}` in a listener's URI, header, topic, namespace or Vault
    path, a character no cluster id holds: else cluster `c` of owner `a-b` and cluster
    `b-c` of owner `a` (a document names its own owner) post into one stream, one forging the
    other's audit trail or reading its secret."""
    if ok:
        parse_kind("event_listeners", {"x": option}, "t")
        return
    with pytest.raises(ConfigError, match=r"event_listeners\.x\."):
        parse_kind("event_listeners", {"x": option}, "t")


@pytest.mark.parametrize("kind", [[], ["http"], {}, {"http": 1}])
def test_a_listener_type_of_the_wrong_shape_is_a_settings_error(kind: Any) -> None:
    """`type: [http]` (a list, as authentication's `type` may be) is a ConfigError naming
    `event_listeners.x.type`, not a TypeError out of the settings loader."""
    with pytest.raises(ConfigError, match=r"event_listeners\.x\.type"):
        parse_kind("event_listeners", {"x": {**HTTP, "type": kind}}, "t")


# --- who may sign in to a cluster is that cluster's alone ---------------------------------------


SECRET = "secret/platform/{cluster}/auth#shared-secret"
JWT = {"type": "JWT", "tls": "ingress", "shared_secret": SECRET,
       "jwt": {"jwks_url": "https://idp.example.com/jwks.json",
               "required_audience": "trino-{cluster}"}}
LDAP = {"type": "LDAP", "tls": "ingress", "shared_secret": SECRET,
        "ldap": {"url": "ldaps://ldap.example.com", "bind_dn": "cn=trino",
                 "bind_password": "secret/platform/ldap#pw", "user_base_dn": "ou=people",
                 "group_auth_pattern": "(&(uid=${USER})(memberOf=cn=trino-{cluster}))"}}


def _with(option: dict[str, Any], section: str, **fields: str) -> dict[str, Any]:
    return {**option, section: {**option[section], **fields}}


@pytest.mark.parametrize(("option", "ok"), [
    (_with(JWT, "jwt", required_audience="trino.{owner}.{cluster}"), True),
    (_with(JWT, "jwt", required_audience="trino-{owner}-{cluster}"), False),
    (_with(JWT, "jwt", required_audience="{cluster}{owner}"), False),
    (_with(LDAP, "ldap", group_auth_pattern="(&(uid=${USER})(memberOf=cn={owner}_{cluster}))"),
     True),
    (_with(LDAP, "ldap", group_auth_pattern="(&(uid=${USER})(memberOf=cn={owner}-{cluster}))"),
     False),
    (_with(LDAP, "ldap", user_base_dn="ou={cluster}-{owner}"), False),
    (_with(LDAP, "ldap", bind_password="secret/ldap/{owner}-{cluster}#pw"), False),
    ({**JWT, "shared_secret": "secret/platform/{owner}-{cluster}#s"}, False),
])
def test_a_sign_in_template_must_give_two_clusters_two_texts(option: dict[str, Any],
                                                             ok: bool) -> None:
    """Between `{owner}` and `{cluster}` in a JWT audience, an LDAP filter or DN, or a Vault
    path of the authentication option, a character no cluster id holds: else a token
    minted for cluster `b-c` of owner `a` (or membership in its LDAP group) signs in to cluster
    `c` of owner `a-b`."""
    if ok:
        parse_kind("authentication", {"x": option}, "t")
        return
    with pytest.raises(ConfigError, match=r"authentication\.x\."):
        parse_kind("authentication", {"x": option}, "t")


# --- the spooling key is the platform's ---------------------------------------------------------


SPOOL_KEY = "{{ vault:secret/trino/etl/spooling#key }}"  # KEY_REF for cluster etl: in scope


def _pg(password: str) -> dict[str, Any]:
    return {"name": "pg", "properties": {
        "connector.name": "postgresql", "connection-url": "jdbc:postgresql://db.example.com/x",
        "connection-user": "u", "connection-password": password}}


@pytest.mark.parametrize("picks", [{"spooling": {"storage": "lake"}}, {}])
@pytest.mark.parametrize(("where", "at"), [
    ("connector", 'connectors["pg"].properties.connection-password'),
    ("file", 'files["k"].secret'),
])
def test_a_placeholder_naming_the_spooling_key_is_refused(picks: dict[str, Any], where: str,
                                                          at: str) -> None:
    """The cluster's spooling key (inside secrets.scope, as docs/options.md's example puts it)
    signs the segment ids its coordinator serves: a document copying it into a catalog or a
    file (from where it could leave the cluster) is refused at that field, picked or not."""
    d = doc(**picks)
    if where == "connector":
        d["connectors"].append(_pg(SPOOL_KEY))
    else:
        d["files"] = [{"name": "k", "secret": SPOOL_KEY}]
    assert at in fields(judge(d))


def test_another_secret_in_scope_is_still_the_documents() -> None:
    """A placeholder for any other key in the cluster's scope stays allowed."""
    d = doc(spooling={"storage": "lake"})
    d["connectors"].append(_pg("{{ vault:secret/trino/etl/pg#password }}"))
    assert isinstance(judge(d), Cluster)


def test_a_file_naming_a_listeners_secret_is_refused() -> None:
    """A listener's Vault secret (here inside secrets.scope) cannot be mounted as a document's
    secret file either: the listeners' check covers `files` as it covers placeholders."""
    d = doc(eventListeners=["audit"], files=[
        {"name": "t", "secret": "{{ vault:secret/trino/etl/audit#token }}"}])
    assert 'files["t"].secret' in fields(judge(d))


# --- no cluster's prefix holds another cluster's ------------------------------------------------


def _spool(location: str) -> dict[str, Any]:
    return {"type": "s3", "region": "us-east-1", "credentials": "workload-identity",
            "spooling": {"location": location, "shared_secret_key": KEY_REF}}


@pytest.mark.parametrize(("spools", "exchanges", "ok"), [
    (["s3://spool/{cluster}", "s3://spool/{cluster}"], [], True),  # one template twice
    (["s3://spool-a/{cluster}", "s3://spool-b/{cluster}"], ["s3://exchange/{cluster}"], True),
    (["s3://b/spool/{cluster}"], ["s3://b/exchange/{cluster}"], True),
    (["s3://b/{cluster}", "s3://b/x/{cluster}"], [], False),  # cluster x holds the others'
    (["s3://b/{cluster}"], ["s3://b/spool/{cluster}"], False),
    (["s3://b/spool/{cluster}"], ["s3://b/{cluster}"], False),
    (["s3://b/{cluster}"], ["s3://b/{cluster}-x"], False),  # cluster a-x's = cluster a's
    (["s3://b/t/{cluster}"], ["s3://b/t/{cluster}"], False),  # one prefix, spool and exchange
    (["s3://b/{owner}/{cluster}", "s3://b/{owner}/x/{cluster}"], [], False),
])
def test_no_spooling_or_exchange_prefix_holds_another(tmp_path: Path, spools: list[str],
                                                      exchanges: list[str], ok: bool) -> None:
    """Two location templates on one bucket whose fixed starts are one the other's beginning
    would give one cluster a prefix holding other clusters' (cluster `x` of `s3://b/{cluster}`
    holds every prefix of `s3://b/x/{cluster}`): its pruner deletes, and its prefix-scoped
    credentials read, their spooled results. Refused when the settings load, naming both."""
    body = {"storage": {f"s{i}": _spool(loc) for i, loc in enumerate(spools)},
            "exchange": {f"e{i}": {"storage": "s0", "location": loc}
                         for i, loc in enumerate(exchanges)}}
    path = tmp_path / "settings.yaml"
    path.write_text(yaml.safe_dump(body))
    if ok:
        load_settings(path, environ={})
        return
    with pytest.raises(ConfigError, match=r"(storage\.s\d\.spooling|exchange\.e\d)\.location.*"
                                          r"(storage\.s\d\.spooling|exchange\.e\d)\.location"):
        load_settings(path, environ={})


@pytest.mark.parametrize(("key", "value"), [
    ("oauth2-jwk.http-client.trust-store-path", "/etc/trino/files/ca.pem"),
    ("oauth2-jwk.http-client.https.hostname-verification", "false"),
])
def test_the_oauth2_key_fetch_is_the_options(key: str, value: str) -> None:
    """With an authentication option picked, the document may not point the client that fetches
    the IdP's signing keys (`oauth2-jwk.http-client.*`, as `jwk.*` for JWT) at its own trust
    store or turn off its hostname check: whoever then answers for the IdP signs the tokens."""
    d = doc(authentication="sso", files=[{"name": "ca.pem", "content": "x\n"}])
    d["clusterConfig"] = {"coordinator": {"properties": {key: value}}}
    assert "clusterConfig.coordinator.properties" in fields(judge(d))


@pytest.mark.parametrize(("option", "ok"), [
    ({**HTTP, "uri": "https://{owner}.audit.example.com/x"}, True),
    ({**HTTP, "uri": "https://audit.example.com:8443/{owner}"}, True),
    ({**HTTP, "uri": "https://{owner}/x"}, False),  # owner "evil.example.net"
    ({**HTTP, "uri": "https://audit.{owner}/x"}, False),
    ({**HTTP, "uri": "https://{owner}:8443/x"}, False),
    ({**HTTP, "uri": "https://audit-{cluster}"}, False),
    ({**LINEAGE, "url": "https://lineage.{owner}"}, False),
])
def test_a_listener_host_ends_in_the_platforms_text(option: dict[str, Any], ok: bool) -> None:
    """A listener URL whose host ends with `{owner}` or `{cluster}` lets a document (which names
    both) choose the domain its events, and the header's Vault token, are sent to: refused."""
    if ok:
        parse_kind("event_listeners", {"x": option}, "t")
        return
    with pytest.raises(ConfigError, match=r"event_listeners\.x\.(uri|url)"):
        parse_kind("event_listeners", {"x": option}, "t")


# --- the same rule on the options issue 21 builds on (a spool's store, the exchange) -------------


@pytest.mark.parametrize(("kind", "option", "where"), [
    ("storage", {"type": "s3", "region": "us-east-1", "credentials": {"vault": {
        "access_key": "secret/s3/{owner}-{cluster}#ak", "secret_key": "secret/s3/x#sk"}}},
     r"storage\.x\.credentials\.vault\.access_key"),
    ("exchange", {"storage": "lake", "location": "s3://exchange/{owner}-{cluster}"},
     r"exchange\.x\.location"),
    ("service_accounts", {"annotations": {
        "eks.amazonaws.com/role-arn": "arn:aws:iam::1:role/trino-{owner}-{cluster}"}},
     r"service_accounts\.x\.annotations"),
])
def test_other_per_cluster_templates_keep_owner_and_cluster_apart(kind: str,
                                                                  option: dict[str, Any],
                                                                  where: str) -> None:
    """The store a spooling location reads with, the exchange's prefix and a workload identity's
    role tell clusters apart as a spool prefix does: `{owner}-{cluster}` there would give
    cluster `b-c` of owner `a` the credentials, files or cloud role of cluster `c` of owner
    `a-b`. (An Ingress host already must start with `{cluster}.`.)"""
    with pytest.raises(ConfigError, match=where):
        parse_kind(kind, {"x": option}, "t")
    ok = yaml.safe_load(yaml.safe_dump(option).replace("{owner}-{cluster}", "{owner}.{cluster}"))
    parse_kind(kind, {"x": ok}, "t")


@pytest.mark.parametrize(("secrets", "where"), [
    ({"scope": ["secret/trino/{owner}-{cluster}"]}, r"secrets\.scope"),
    ({"default_ref": "secret/trino/{owner}{cluster}#{name}"}, r"secrets\.default_ref"),
    ({"refs": {"PG": "secret/db/{cluster}-{owner}#pw"}}, r"secrets\.refs\.PG"),
])
def test_the_documents_own_vault_boundary_keeps_owner_and_cluster_apart(
        tmp_path: Path, secrets: dict[str, Any], where: str) -> None:
    """`secrets.scope` is what a document's placeholders may read: with `{owner}-{cluster}` in
    it, owner `a` of cluster `b-c` reads every secret of owner `a-b`'s cluster `c`."""
    path = tmp_path / "settings.yaml"
    path.write_text(yaml.safe_dump({"secrets": secrets}))
    with pytest.raises(ConfigError, match=where):
        load_settings(path, environ={})
    fixed = yaml.safe_dump({"secrets": secrets}).replace("{owner}-{cluster}", "{owner}/{cluster}")
    path.write_text(fixed.replace("{owner}{cluster}", "{owner}/{cluster}").replace(
        "{cluster}-{owner}", "{cluster}/{owner}"))
    load_settings(path, environ={})
