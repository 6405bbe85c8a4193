"""Build `Settings` from its layers: flags > TRINOGEN_* environment > configuration file > defaults.

Every scalar setting `<section>.<key>` can also come from the environment variable
`TRINOGEN_<SECTION>_<KEY>` (e.g. `TRINOGEN_MONGODB_URI`). Services with conventions of their own
keep them: `VAULT_ADDR`, `VAULT_TOKEN`, `VAULT_NAMESPACE`, `VAULT_CACERT` fill the `vault` section.
Relative paths in a configuration file are relative to that file.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from trinogen.errors import ConfigError
from trinogen.settings.checks import check
from trinogen.settings.coerce import build, is_scalar
from trinogen.settings.named import KINDS, parse_kind
from trinogen.settings.types import Settings

# section -> key -> raw value, filled layer by layer (a later layer overwrites)
Raw = dict[str, dict[str, Any]]
_LAYERS = ("defaults", "profiles")  # document layers, kept as the file gives them
# Read after every other section of the file (they name its options and profiles).
_TENANCY = ("tenants", "profile_requirements")
_ROLLOUT = "rollout"  # parsed only when a file has it (trinogen.settings.rollout)

# Environment variables other tools own, mapped onto settings.
_FOREIGN_ENV = {
    "VAULT_ADDR": ("vault", "addr"),
    "VAULT_NAMESPACE": ("vault", "namespace"),
    "VAULT_CACERT": ("vault", "cacert"),
}

_PATH_KEYS = {
    ("mongodb", "seed_dir"),
    ("output", "templates_dir"),
    ("git", "workdir"),
    ("git", "remote"),
    ("vault", "cacert"),
    ("vault", "token_file"),
    ("vault", "secret_id_file"),
    ("watch", "liveness_file"),
}


@functools.cache
def sections() -> dict[str, type]:
    """Section name -> its dataclass (resolved once, when settings are first loaded)."""
    return {
        name: hint
        # `Tenant` is an annotation only (its module loads when a file declares tenants)
        for name, hint in typing.get_type_hints(
            Settings, localns={"Tenant": object, "RolloutSettings": object}).items()
        if name not in {*_LAYERS, *_TENANCY, _ROLLOUT, "named", "source"}
    }


def load_settings(
    config_file: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Settings:
    """Build settings from defaults, a YAML file, the environment and flag overrides.

    `config_file` falls back to `$TRINOGEN_CONFIG`; `overrides` maps "section.key" to values
    given on the command line (None values are ignored).
    """
    env = os.environ if environ is None else environ
    raw: Raw = {name: {} for name in sections()}
    layers: dict[str, Any] = {name: {} for name in _LAYERS}
    named: dict[str, dict[str, Any]] = {}
    tenancy: dict[str, Any] = {"tenants": {}, "profile_requirements": {}}
    path = config_file or env.get("TRINOGEN_CONFIG") or None
    if path:
        tenancy = _merge_file(Path(path), raw, layers, named)
    _merge_env(env, raw)
    _merge_flags(overrides or {}, raw)
    settings = Settings(
        **{name: build(cls, name, raw[name]) for name, cls in sections().items()},
        defaults=layers["defaults"],
        profiles=layers["profiles"],
        named=named,
        **tenancy,
        source=str(path) if path else "built-in defaults",
    )
    check(settings)
    return settings


def _merge_env(env: Mapping[str, str], raw: Raw) -> None:
    for var, (section, key) in _FOREIGN_ENV.items():
        if env.get(var):
            raw[section][key] = env[var]
    for section, cls in sections().items():
        for f in dataclasses.fields(cls):
            var = f"TRINOGEN_{section.upper()}_{f.name.upper()}"
            if var in env and is_scalar(cls, f.name):
                raw[section][f.name] = env[var]


def _merge_flags(overrides: Mapping[str, Any], raw: Raw) -> None:
    for dotted, value in overrides.items():
        if value is None:
            continue
        section, _, key = dotted.partition(".")
        where = f"--set {dotted}"
        if section in _LAYERS:
            raise ConfigError(f"{where}: {section} are document layers; set them in the "
                              "configuration file")
        if section in KINDS:
            raise ConfigError(f"{where}: {section} are named options; set them in the "
                              "configuration file")
        if section in _TENANCY:
            raise ConfigError(f"{where}: {section} say who may pick what; set them in the "
                              "configuration file")
        if section == _ROLLOUT:
            raise ConfigError(f"{where}: rollout waves are set in the configuration file")
        _known_section(section, where)
        key, _, entry = key.partition(".")
        _known_key(section, key, where)
        _merge_flag(raw[section], section, key, entry, value)


def _merge_flag(raw: dict[str, Any], section: str, key: str, entry: str, value: Any) -> None:
    """One `--set`: a plain setting, or one entry of a map-valued one (`secrets.refs.NAME=V`).

    A flag is text, so a map-valued setting cannot take it whole; a flag naming one entry is
    added to the map the file gave (issue 11, item 5).
    """
    scalar = is_scalar(sections()[section], key)
    where = f"--set {section}.{key}"
    if scalar and entry:
        raise ConfigError(f"{where}.{entry}: {section}.{key} is not a map; write "
                          f"{section}.{key}=VALUE")
    if not scalar and not entry:
        raise ConfigError(f"{where}: {section}.{key} is a map; set one entry with "
                          f"--set {section}.{key}.NAME=VALUE, or the whole map in the "
                          "configuration file")
    if not entry:
        raw[key] = value
        return
    current = raw.get(key)
    raw[key] = {**(current if isinstance(current, Mapping) else {}), entry: value}


def _known_section(section: Any, where: str) -> None:
    """Refuse a section that does not exist, listing the ones that do."""
    if section not in sections():
        known = ", ".join(sorted([*sections(), *_LAYERS, *_TENANCY, _ROLLOUT, *KINDS]))
        raise ConfigError(f"{where}: unknown section {section!r} (known: {known})")


def _known_key(section: str, key: Any, where: str) -> None:
    names = {f.name for f in dataclasses.fields(sections()[section])}
    if key not in names:
        raise ConfigError(
            f"{where}: unknown setting {section}.{key} (known: {', '.join(sorted(names))})"
        )


def _merge_file(path: Path, raw: Raw, layers: dict[str, Any],
                named: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Merge one file into the layers; return its tenancy sections, parsed."""
    data = _read_yaml(path)
    base = path.resolve().parent
    for section, values in data.items():
        if section in (*_TENANCY, _ROLLOUT):
            continue
        if section in _LAYERS:
            layers[section] = _document_layer(path, section, values)
            continue
        if section in KINDS:  # named options: only the file can hold them
            named[section] = parse_kind(section, values, str(path))
            continue
        _known_section(section, str(path))
        if not isinstance(values, dict):
            raise ConfigError(f"{path}: section {section} must be a mapping")
        for key, value in values.items():
            _known_key(section, key, str(path))
            raw[section][key] = _resolve_path(section, key, value, base)
    return {**_tenancy(str(path), data, named, layers["profiles"]),
            **_rollout(str(path), data.get(_ROLLOUT))}


def _rollout(where: str, data: Any) -> dict[str, Any]:
    """The file's waves, if it has any (their parser loads only then)."""
    if data is None:
        return {}
    from trinogen.settings.rollout import parse_rollout

    return {"rollout": parse_rollout(where, data)}


def _tenancy(where: str, data: Mapping[str, Any], named: Mapping[str, Mapping[str, Any]],
             profiles: Mapping[str, Any]) -> dict[str, Any]:
    """The tenants and profile requirements of a file (their parser loads only if it has any)."""
    if not any(data.get(k) is not None for k in _TENANCY):
        return {"tenants": {}, "profile_requirements": {}}
    from trinogen.settings.tenants import parse_profile_requirements, parse_tenants

    # Absent or null means "no tenants"; anything else is parsed as written, so `tenants: []`
    # or an empty mapping is an error instead of silently turning tenancy off.
    tenants, requirements = data.get("tenants"), data.get("profile_requirements")
    return {
        "tenants": {} if tenants is None else parse_tenants(where, tenants, named),
        "profile_requirements": {} if requirements is None else parse_profile_requirements(
            where, requirements, profiles),
    }


def _read_yaml(path: Path) -> dict[Any, Any]:
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"cannot read configuration file {path}: {e.strerror}") from e
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as e:
        raise ConfigError(f"configuration file {path} is not valid YAML: {e}") from e
    if not isinstance(data, dict):
        raise ConfigError(f"configuration file {path}: the top level must be a mapping")
    return data


def _document_layer(path: Path, section: str, values: Any) -> Any:
    if not isinstance(values, dict):
        raise ConfigError(f"{path}: {section} must be a mapping")
    if section == "profiles" and not all(isinstance(v, dict) for v in values.values()):
        raise ConfigError(f"{path}: every profile must be a mapping")
    return values


def _resolve_path(section: str, key: str, value: Any, base: Path) -> Any:
    """A relative path setting in a file is relative to that file."""
    if (section, key) in _PATH_KEYS and isinstance(value, str) and is_local_path(value):
        return str((base / Path(value).expanduser()).resolve())
    return value


def is_local_path(value: str) -> bool:
    """A plain filesystem path, not a URL (https://, file://) or scp-like git@host:repo."""
    if not value or "://" in value:
        return False
    first = value.split("/", 1)[0]
    return ":" not in first
