"""Secret placeholders: the grammar, Vault references, environment names, scope. Pure.

Two forms are recognised inside connector property values, also inside longer strings:

* ``{{ NAME }}``: NAME is letters, digits and underscores; mapped to a Vault reference through
  ``secrets.refs`` (or ``secrets.default_ref``).
* ``{{ vault:<mount>/<path>#<key> }}``: an explicit reference; the first path segment is the
  KV mount (``{{ vault:secret/trino/x#password }}`` = mount ``secret``, path ``trino/x``, key
  ``password``). Anything that starts with ``{{ vault:`` and does not parse is an error.

Any other ``{{`` text (``{{ .Release.Name }}``) is literal data.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

_NAMED = r"\{\{\s*(?P<name>[A-Za-z0-9_]+)\s*\}\}"
_VAULT = r"\{\{\s*vault:(?P<body>[^}]*)\}\}"
_TOKEN = re.compile(f"{_NAMED}|{_VAULT}")
_VAULT_START = re.compile(r"\{\{\s*vault:")
_SEGMENT = re.compile(r"[A-Za-z0-9_.@-]+")
_KEY = re.compile(r"[A-Za-z0-9_.@-]+")


class PlaceholderError(ValueError):
    """A placeholder that looks like a secret reference but cannot be used; the text says why."""


@dataclass(frozen=True, order=True)
class VaultRef:
    """One key of one KV secret: ``<mount>/<path>#<key>``."""

    mount: str
    path: str
    key: str

    def __str__(self) -> str:
        return f"{self.mount}/{self.path}#{self.key}"

    @property
    def secret_path(self) -> str:
        """Mount and path: what Vault reads once, however many keys are used from it."""
        return f"{self.mount}/{self.path}"


@dataclass(frozen=True)
class Placeholder:
    """A placeholder as written in a document: ``{{ NAME }}`` or ``{{ vault:... }}``."""

    text: str
    name: str | None = None  # for {{ NAME }}
    ref: VaultRef | None = None  # for {{ vault:... }}


@dataclass(frozen=True)
class SecretUse:
    """A placeholder bound to its Vault reference and the environment variable that carries it."""

    placeholder: Placeholder
    ref: VaultRef
    env: str


# A property value: literal strings and placeholders, in order.
Segment = str | Placeholder
BoundSegment = str | SecretUse


class Secret:
    """A secret value that never prints: repr, str and format show ``***``."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    def __str__(self) -> str:
        return "***"

    def __format__(self, spec: str) -> str:
        return "***"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __reduce__(self) -> tuple[object, ...]:
        raise TypeError("secrets are not picklable")


@dataclass(frozen=True)
class SecretData:
    """What Vault returned for one KV secret path (values masked)."""

    version: int | None
    values: Mapping[str, Secret]


# secret path ("<mount>/<path>") -> data; empty when nothing was read (reference checks off)
Resolved = Mapping[str, SecretData]


def parse_value(text: str) -> tuple[Segment, ...]:
    """Split a property value into literal text and placeholders.

    Raises PlaceholderError for a ``{{ vault:`` that does not parse.
    """
    if "{{" not in text:
        return (text,)
    out: list[Segment] = []
    pos = 0
    for m in _TOKEN.finditer(text):
        literal = text[pos : m.start()]
        _reject_broken_vault(literal)
        if literal:
            out.append(literal)
        if m.group("name") is not None:
            out.append(Placeholder(text=m.group(0), name=m.group("name")))
        else:
            out.append(Placeholder(text=m.group(0), ref=parse_ref(m.group("body").strip())))
        pos = m.end()
    tail = text[pos:]
    _reject_broken_vault(tail)
    if tail:
        out.append(tail)
    return tuple(out)


def _reject_broken_vault(literal: str) -> None:
    m = _VAULT_START.search(literal)
    if m:
        raise PlaceholderError(
            f"{literal[m.start():m.start() + 60]!r} starts a vault reference but is not "
            "{{ vault:<mount>/<path>#<key> }}"
        )


def parse_ref(text: str) -> VaultRef:
    """Parse ``<mount>/<path>#<key>``; raise PlaceholderError saying what is wrong."""
    where, sep, key = text.partition("#")
    if not sep or not key:
        raise PlaceholderError(f"vault reference {text!r} has no key: write <mount>/<path>#<key>")
    if not _KEY.fullmatch(key):
        raise PlaceholderError(f"vault reference {text!r}: key {key!r} may only use A-Z a-z 0-9 _ . @ -")
    segments = where.split("/")
    if len(segments) < 2:
        raise PlaceholderError(
            f"vault reference {text!r} needs a mount and a path: <mount>/<path>#<key>"
        )
    for seg in segments:
        if not _SEGMENT.fullmatch(seg) or seg in (".", ".."):
            raise PlaceholderError(
                f"vault reference {text!r}: path segment {seg!r} is empty, '.', '..' or uses "
                "characters other than A-Z a-z 0-9 _ . @ -"
            )
    return VaultRef(mount=segments[0], path="/".join(segments[1:]), key=key)


def settings_ref(template: str, cluster: str, owner: str) -> VaultRef:
    """A reference the settings write as a template (`{cluster}`, `{owner}`: str.format), filled
    for one cluster and parsed; PlaceholderError says what is wrong with either step.

    Options check their templates with a sample cluster when the settings load; the model fills
    them again for each cluster."""
    try:
        text = template.format(cluster=cluster, owner=owner)
    except (KeyError, IndexError, ValueError) as e:  # an unknown {name}, {0}, a lone brace
        raise PlaceholderError(str(e)) from e
    return parse_ref(text)


def settings_use(template: str, cluster: str, owner: str) -> SecretUse:
    """A settings reference for one cluster, bound like a `{{ vault:... }}` placeholder."""
    ref = settings_ref(template, cluster, owner)
    placeholder = Placeholder(text=f"{{{{ vault:{ref} }}}}", ref=ref)
    return SecretUse(placeholder=placeholder, ref=ref, env=env_name(placeholder, ref))


def env_name(placeholder: Placeholder, ref: VaultRef) -> str:
    """The environment variable carrying one placeholder's value into the Trino containers.

    ``{{ NAME }}`` gives ``TRINO_SECRET_<NAME>``; ``{{ vault:m/p#k }}`` gives
    ``TRINO_VAULT_<M_P_K>_<8 hex of sha256("m/p#k")>``. The two prefixes differ, names are unique
    per placeholder name and per reference, and stable across runs. The prefix keeps a document
    from overriding variables the image relies on (PATH, JAVA_HOME).
    """
    if placeholder.name is not None:
        return f"TRINO_SECRET_{placeholder.name}"
    text = str(ref)
    slug = re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").upper()[:80]
    digest = hashlib.sha256(text.encode()).hexdigest()[:8].upper()
    return f"TRINO_VAULT_{slug}_{digest}"


def bind(
    placeholder: Placeholder,
    *,
    cluster: str,
    owner: str,
    refs: Mapping[str, str],
    default_ref: str,
    scope: Iterable[str],
) -> SecretUse:
    """Map a placeholder to its Vault reference and check the reference is in the cluster's scope.

    Raises PlaceholderError with a message naming the placeholder.
    """
    if placeholder.ref is not None:
        ref = placeholder.ref
    else:
        assert placeholder.name is not None
        template = refs.get(placeholder.name) or default_ref
        if not template:
            raise PlaceholderError(
                f"placeholder {placeholder.text} has no mapping: add secrets.refs."
                f"{placeholder.name} to the settings or use {{{{ vault:<mount>/<path>#<key> }}}}"
            )
        try:
            ref = parse_ref(template.format(cluster=cluster, owner=owner, name=placeholder.name))
        except (KeyError, IndexError, ValueError) as e:
            raise PlaceholderError(f"placeholder {placeholder.text}: mapping {template!r}: {e}") from e
    allowed = [s.format(cluster=cluster, owner=owner).strip("/") for s in scope]
    if not any(in_scope(ref, prefix) for prefix in allowed):
        raise PlaceholderError(
            f"placeholder {placeholder.text} refers to Vault path {ref.path!r} (mount "
            f"{ref.mount!r}), outside this cluster's allowed paths ({', '.join(allowed) or 'none'}); "
            "keep the secret under one of those paths (secrets.scope in the settings decides them)"
        )
    return SecretUse(placeholder=placeholder, ref=ref, env=env_name(placeholder, ref))


def in_scope(ref: VaultRef, prefix: str) -> bool:
    """True when ``<mount>/<path>`` equals `prefix` or lies below it, segment by segment.

    `prefix` starts with the mount (``secret/trino/x``), so ``secret/trino/xy`` is not inside
    ``secret/trino/x`` and another mount never is.
    """
    parts = [p for p in prefix.split("/") if p]
    return bool(parts) and [ref.mount, *ref.path.split("/")][: len(parts)] == parts


def checksum(uses: Iterable[SecretUse], versions: Mapping[str, int | None]) -> str:
    """A short hash of the references and the secret versions they were pinned to.

    Put into the pods' annotations: a rotation in Vault changes it and rolls exactly the
    clusters that use the rotated secret.
    """
    h = hashlib.sha256()
    for use in sorted(set(uses), key=lambda u: (u.env, str(u.ref))):
        version = versions.get(use.ref.secret_path)
        h.update(f"{use.env}={use.ref}@{version}\n".encode())
    return h.hexdigest()[:16]
