"""Named option kind `storage`: an object store a lake catalog (or the exchange) reads and writes.

The platform names each store once (`storage: {lake-eu: {type: s3, region: ...}}`); a catalog
picks one with `connectors[].storage`, and the exchange options name one too. What a store turns
into (the `fs.*`, `s3.*`, `gcs.*` or `azure.*` properties) is decided in
`trinogen.kinds.storage.document`; here only its shape is checked, when the settings are loaded.
Pure.

A store of type `hdfs` is the legacy Hadoop file system (`fs.hadoop.enabled=true`), the only way
to it (issue 19): Hadoop serves every scheme no native file system takes, `file:` included, so a
catalog with it reads the pods' own files through a location in SQL or one a metastore hands
out. Offering an `hdfs` store is the platform accepting that for the tenants it lets pick it.

A store may also hold results of Trino's client spooling protocol (`spooling:` a location per
cluster and the Vault key that signs segment ids: trinogen.settings.options.spooling); a
document opts in with `spooling: {storage: <name>}` (trinogen.model.spooling).

Credentials are either the pods' workload identity (IRSA, GKE or Azure workload identity: no
secret at all) or Vault references `<mount>/<path>#<key>` (`{cluster}` and `{owner}` are
substituted per cluster), which reach Trino as `${ENV:...}` through the cluster's ExternalSecret.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from trinogen.errors import ConfigError
from trinogen.secrets import PlaceholderError, settings_ref
from trinogen.settings.options.fields import is_http_url, property_lines
from trinogen.settings.options.metadata import SAMPLE, check_one_per_cluster

if TYPE_CHECKING:
    from trinogen.settings.options.spooling import Spooling

TYPES = ("s3", "gcs", "azure", "hdfs")
WORKLOAD_IDENTITY = "workload-identity"
# Vault-held credentials each type takes: the key under `credentials.vault`, all required.
VAULT_KEYS: dict[str, tuple[str, ...]] = {
    "s3": ("access_key", "secret_key"),
    "gcs": ("json_key",),  # the key file's JSON text: gcs.json-key takes it inline
    "azure": ("access_key",),  # azure.auth-type=ACCESS_KEY; the account comes from the location
    "hdfs": (),  # Kerberos (hive.hdfs.*) and core-site.xml are the catalog's, from its files
}
# What a catalog may tune through `properties` (the rest of the type's namespace).
# For HDFS that is the client's tuning (hive.dfs.*, Trino 476); the catalog keeps its own
# hive.config.resources (attached files) and its Kerberos identity (hive.hdfs.*).
PREFIXES = {"s3": "s3.", "gcs": "gcs.", "azure": "azure.", "hdfs": "hive.dfs."}
# The catalog properties a store's fields may write (kinds.storage.document): `properties` may
# not set them a second time.
OWNED = {
    "s3": frozenset({"s3.region", "s3.endpoint", "s3.path-style-access", "s3.sse.type",
                     "s3.sse.kms-key-id", "s3.iam-role", "s3.aws-access-key",
                     "s3.aws-secret-key"}),
    "gcs": frozenset({"gcs.project-id", "gcs.json-key", "gcs.json-key-file-path",
                      "gcs.use-access-token", "gcs.auth-type"}),
    "azure": frozenset({"azure.auth-type", "azure.access-key"}),
    "hdfs": frozenset(),
}
SSE_TYPES = ("S3", "KMS")  # Trino's s3.sse.type besides NONE (CUSTOMER needs a per-request key)
_FIELDS = {
    "s3": {"type", "region", "endpoint", "path_style_access", "sse", "iam_role", "credentials",
           "properties", "spooling"},
    "gcs": {"type", "project_id", "credentials", "properties", "spooling"},
    "azure": {"type", "account", "credentials", "properties", "spooling"},
    "hdfs": {"type", "properties"},  # Trino spools to s3, gs and abfs only
}
_WORD = re.compile(r"[-A-Za-z0-9_.:/@]+")  # regions, project ids, ARNs, KMS key ids
_ACCOUNT = re.compile(r"[a-z0-9]{3,24}")  # an Azure storage account name


@dataclass(frozen=True)
class Storage:
    """One named object store, as the settings file declares it."""

    type: str  # s3 | gcs | azure
    region: str | None = None
    endpoint: str | None = None
    path_style_access: bool | None = None
    sse_type: str | None = None
    sse_kms_key_id: str | None = None
    iam_role: str | None = None
    project_id: str | None = None
    account: str | None = None
    # () = workload identity; else (credential, "<mount>/<path>#<key>" template) pairs
    vault: tuple[tuple[str, str], ...] = ()
    properties: tuple[tuple[str, str], ...] = ()  # extra catalog lines in the type's namespace
    spooling: Spooling | None = None  # where the client spooling protocol may keep results

    @property
    def prefix(self) -> str:
        """The prefix of this file system's catalog properties (`s3.`, `gcs.`, `azure.`)."""
        return PREFIXES[self.type]

    @property
    def workload_identity(self) -> bool:
        return not self.vault


def parse(where: str, raw: Mapping[str, Any]) -> Storage:
    """One `storage.<name>` entry; ConfigError naming `storage.<name>.<field>` when it is wrong."""
    kind = raw.get("type")
    if kind not in TYPES:
        raise ConfigError(f"{where}.type must be one of {', '.join(TYPES)}, not {kind!r}")
    unknown = sorted(str(k) for k in raw if k not in _FIELDS[kind])
    if unknown:
        raise ConfigError(f"{where}.{unknown[0]} is not a field of a {kind} store (fields: "
                          f"{', '.join(sorted(_FIELDS[kind]))})")
    # an hdfs store has no credentials field: Kerberos (hive.hdfs.*) is the catalog's
    vault = _credentials(where, kind, raw.get("credentials")) if VAULT_KEYS[kind] else ()
    common = {"type": kind, "vault": vault,
              "properties": _properties(where, kind, raw.get("properties"))}
    if kind == "hdfs":
        return Storage(**common)
    if kind == "s3":
        store = _s3(where, raw, common)
    elif kind == "gcs":
        store = Storage(**common, project_id=_word(where, "project_id", raw.get("project_id")))
    else:
        store = _azure(where, raw, common)
    if raw.get("spooling") is None:
        return store
    from trinogen.settings.options import spooling  # only for a store that spools

    return replace(store, spooling=spooling.parse(f"{where}.spooling", raw["spooling"], kind,
                                                  store.account))


def _s3(where: str, raw: Mapping[str, Any], common: Mapping[str, Any]) -> Storage:
    sse_type, kms = _sse(where, raw.get("sse"))
    return Storage(**common, region=_word(where, "region", raw.get("region"), required=True),
                   endpoint=_url(where, "endpoint", raw.get("endpoint")),
                   path_style_access=_flag(where, "path_style_access",
                                           raw.get("path_style_access")),
                   sse_type=sse_type, sse_kms_key_id=kms,
                   iam_role=_word(where, "iam_role", raw.get("iam_role")))


def _azure(where: str, raw: Mapping[str, Any], common: Mapping[str, Any]) -> Storage:
    account = raw.get("account")
    if account is not None and (type(account) is not str or not _ACCOUNT.fullmatch(account)):
        raise ConfigError(f"{where}.account must be an Azure storage account name (3 to 24 "
                          "lowercase letters and digits)")
    return Storage(**common, account=account)


def _word(where: str, key: str, value: Any, *, required: bool = False) -> str | None:
    if value is None:
        if required:
            raise ConfigError(f"{where}.{key} is required")
        return None
    if type(value) is not str or not _WORD.fullmatch(value) or len(value) > 2048:
        raise ConfigError(f"{where}.{key} must be a word without spaces (letters, digits, "
                          "'-_.:/@')")
    return value


def _url(where: str, key: str, value: Any) -> str | None:
    if value is None:
        return None
    if not is_http_url(value) or len(value) > 2048:
        raise ConfigError(f"{where}.{key} must be an http:// or https:// URL")
    return str(value)


def _flag(where: str, key: str, value: Any) -> bool | None:
    if value is not None and not isinstance(value, bool):
        raise ConfigError(f"{where}.{key} must be true or false")
    return value


def _sse(where: str, value: Any) -> tuple[str | None, str | None]:
    if value is None:
        return None, None
    if not isinstance(value, Mapping) or set(value) - {"type", "kms_key_id"}:
        raise ConfigError(f"{where}.sse must be a mapping with type and, for KMS, kms_key_id")
    kind = value.get("type")
    if kind not in SSE_TYPES:
        raise ConfigError(f"{where}.sse.type must be one of {', '.join(SSE_TYPES)}")
    kms = _word(where, "sse.kms_key_id", value.get("kms_key_id"))
    if kms is not None and kind != "KMS":
        raise ConfigError(f"{where}.sse.kms_key_id applies only to sse.type KMS")
    return kind, kms


def _credentials(where: str, kind: str, value: Any) -> tuple[tuple[str, str], ...]:
    """() for workload identity; else each Vault credential with its reference template."""
    at = f"{where}.credentials"
    if value == WORKLOAD_IDENTITY:
        return ()
    keys = VAULT_KEYS[kind]
    wanted = f"{WORKLOAD_IDENTITY!r} or {{vault: {{{', '.join(f'{k}: <ref>' for k in keys)}}}}}"
    if not isinstance(value, Mapping) or set(value) != {"vault"} \
            or not isinstance(value["vault"], Mapping) or set(value["vault"]) != set(keys):
        raise ConfigError(f"{at} must be {wanted}")
    out = []
    for key in keys:
        ref = value["vault"][key]
        if type(ref) is not str:
            raise ConfigError(f"{at}.vault.{key} must be a Vault reference <mount>/<path>#<key>")
        try:  # checked with stand-ins for what each cluster substitutes
            settings_ref(ref, **SAMPLE)
        except PlaceholderError as e:
            raise ConfigError(f"{at}.vault.{key}: {e} (only {{cluster}} and {{owner}} are "
                              "substituted)") from e
        check_one_per_cluster(f"{at}.vault.{key}", ref, "secret")
        out.append((key, ref))
    return tuple(out)


def _properties(where: str, kind: str, value: Any) -> tuple[tuple[str, str], ...]:
    prefix = PREFIXES[kind]

    def check_key(key: Any) -> None:
        if type(key) is not str or not key.startswith(prefix) or not _WORD.fullmatch(key):
            raise ConfigError(f"{where}.properties: {key!r} is not a {prefix}* property")
        if key in OWNED[kind]:
            raise ConfigError(f"{where}.properties: {key} comes from the store's own fields "
                              "(region, endpoint, credentials...); set it there")

    return property_lines(where, value, check_key)
