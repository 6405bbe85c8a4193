"""trinogen.secrets: the placeholder grammar, references, variable names and the scope rule."""

from __future__ import annotations

import hashlib

import pytest

from trinogen.secrets import (
    Placeholder,
    PlaceholderError,
    Secret,
    VaultRef,
    bind,
    env_name,
    in_scope,
    parse_value,
)


@pytest.mark.parametrize(
    ("text", "segments"),
    [
        ("plain", ("plain",)),
        ("{{ PW }}", (Placeholder("{{ PW }}", name="PW"),)),
        ("a-{{PW}}-b", ("a-", Placeholder("{{PW}}", name="PW"), "-b")),
        ("{{ vault:secret/trino/x#password }}",
         (Placeholder("{{ vault:secret/trino/x#password }}",
                      ref=VaultRef("secret", "trino/x", "password")),)),
        ("{{ .Release.Name }}", ("{{ .Release.Name }}",)),  # not ours: literal data
    ],
)
def test_parse_value(text: str, segments: tuple[object, ...]) -> None:
    """A value splits into literal text and placeholders; other {{ }} text stays literal."""
    assert parse_value(text) == segments


@pytest.mark.parametrize("text", ["{{ vault:secret/x }}", "{{ vault:nomount#k }}",
                                  "{{ vault:secret/../x#k }}", "{{ vault:secret/x#k k }}"])
def test_a_broken_vault_reference_is_an_error(text: str) -> None:
    """Anything starting with {{ vault: that does not parse is refused, never left literal."""
    with pytest.raises(PlaceholderError):
        parse_value(text)


def test_variable_names() -> None:
    """{{ NAME }} -> TRINO_SECRET_NAME; a vault ref -> TRINO_VAULT_<SLUG>_<8 hex of sha256>."""
    assert env_name(Placeholder("{{ PW }}", name="PW"), VaultRef("s", "p", "k")) == "TRINO_SECRET_PW"
    digest = hashlib.sha256(b"secret/trino/x#password").hexdigest()[:8].upper()
    ref = VaultRef("secret", "trino/x", "password")
    assert env_name(Placeholder("{{ vault:... }}", ref=ref), ref) == \
        f"TRINO_VAULT_SECRET_TRINO_X_PASSWORD_{digest}"


@pytest.mark.parametrize(
    ("ref", "prefix", "inside"),
    [
        (VaultRef("secret", "trino/x", "k"), "secret/trino/x", True),
        (VaultRef("secret", "trino/x/db", "k"), "secret/trino/x", True),
        (VaultRef("secret", "trino/xy", "k"), "secret/trino/x", False),  # segment by segment
        (VaultRef("other", "trino/x", "k"), "secret/trino/x", False),  # another mount
        (VaultRef("secret", "trino/x", "k"), "", False),
    ],
)
def test_scope(ref: VaultRef, prefix: str, inside: bool) -> None:
    """A reference is in scope when its path equals the prefix or lies below it."""
    assert in_scope(ref, prefix) == inside


def test_bind_refuses_a_reference_outside_the_scope() -> None:
    """A document may not reference another cluster's secrets."""
    with pytest.raises(PlaceholderError, match="outside this cluster's allowed paths"):
        bind(Placeholder("{{ vault:secret/trino/b#k }}", ref=VaultRef("secret", "trino/b", "k")),
             cluster="a", owner="o", refs={}, default_ref="", scope=["secret/trino/{cluster}"])


def test_a_secret_never_shows_its_value() -> None:
    """str and repr of a Secret hide the value; reveal() is the one way to get it."""
    s = Secret("hunter2")
    assert "hunter2" not in str(s) and "hunter2" not in repr(s) and s.reveal() == "hunter2"
