"""Trino's own substitution in configuration text: the platform's, never a document's. Pure.

Trino (airlift's `SecretsResolver`) replaces `${<provider>:<key>}` in every property value of
config.properties, node.properties (the launcher passes it as system properties), catalogs and
the plugin managers' files (exchange, access control, authenticators, event listeners, ...).
The provider is `[a-zA-Z][a-zA-Z0-9_-]*`, matched in any case (it is lower-cased before the
look-up), and `env` is always registered: `${Env:HOME}` and `x${eNv:HOME}y` read the pod's
environment, which holds the platform's storage keys and secrets. Other providers come from
secrets plugins a platform may install, so every provider name is refused, not only `env`.
Keys are not substituted (only values), and one pass only: a resolved value is never scanned
again. Hadoop's Configuration (core-site.xml and the other files `hive.config.resources` names)
reads `${env.NAME}` likewise; attached files are checked for that form too.

A document writes `{{ NAME }}` placeholders instead; trinogen writes `${ENV:...}` for them
itself, after this check (`trinogen.model.properties.segments`).
"""

from __future__ import annotations

import re

# ${ then a provider name then ':' : what SecretsResolver's pattern starts with (ASCII letters
# only, as Java's [a-zA-Z]; no spaces). A match without the closing '}' is refused as well.
_TRINO = re.compile(r"\$\{[A-Za-z][A-Za-z0-9_-]*:")
# Hadoop Configuration's environment variables: ${env.NAME} (with a default: ${env.NAME:-x}).
_HADOOP = re.compile(r"\$\{env\.")
_SHOWN = 40  # characters of the match a message quotes (provider names are letters only)


def trino_substitution(text: str) -> str | None:
    """The first `${<provider>:` Trino would substitute in a property value, or None."""
    if "${" not in text:  # the common case, without the regex
        return None
    found = _TRINO.search(text)
    return None if found is None else found.group(0)[:_SHOWN]


def file_substitution(text: str) -> str | None:
    """The first substitution a configuration file's reader would make (Trino's or Hadoop's)."""
    if "${" not in text:
        return None
    found = _TRINO.search(text) or _HADOOP.search(text)
    return None if found is None else found.group(0)[:_SHOWN]


def refusal(found: str) -> str:
    """Why a text holding `found` is refused (the start of a message)."""
    return (f"{found}...}} is Trino's secret substitution (it would read the pods' environment "
            "or a secrets provider), reserved for trinogen's secret wiring")
