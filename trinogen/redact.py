"""Credentials out of URLs before they are printed, logged, written to JSON or committed.

One place decides what in a URL is a credential (issue 11, item 4): the userinfo
(`https://oauth2:TOKEN@host`, `mongodb://user:pw@host`) and query parameters that carry a
secret (`tlsCertificateKeyFilePassword=...`, `authMechanismProperties=AWS_SESSION_TOKEN:...`).
Pure string work: no urllib, so the pure core may use it (settings derive Argo CD's repoURL).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import re
from collections.abc import Callable

MASK = "***"

# Query parameters whose value is (or may hold) a secret, matched on the lower-cased name.
# `authMechanismProperties` carries AWS_SESSION_TOKEN; the rest are named after what they hold.
_SECRET_PARAM_WORDS = ("password", "secret", "token", "credential", "signature", "apikey",
                       "api_key", "passphrase")
_SECRET_PARAMS = frozenset({"authmechanismproperties", "sig", "key", "access_key"})

# A URL inside free text (git's stderr, a library's message): scheme://, then up to a blank,
# a quote or a closing bracket.
_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>`]+")
# http(s) userinfo without a password is usually a token itself (`https://<token>@host`).
_TOKEN_AS_USER = ("http", "https")


def _split(url: str) -> tuple[str, str, str, str] | None:
    """(scheme, userinfo, host-and-path, query-and-fragment) of `scheme://...`, else None."""
    scheme, sep, rest = url.partition("://")
    if not sep or not scheme:
        return None
    cut = min((i for i in (rest.find("?"), rest.find("#")) if i >= 0), default=len(rest))
    main, tail = rest[:cut], rest[cut:]
    slash = main.find("/")
    authority = main if slash < 0 else main[:slash]
    userinfo, at, _ = authority.rpartition("@")
    if not at:
        return scheme, "", main, tail
    return scheme, userinfo, main[len(userinfo) + 1:], tail


def strip_userinfo(url: str) -> str:
    """`url` without its credentials: http(s) loses `user[:password]@` (the user may be a
    token), other schemes keep the user (`ssh://git@host` needs it) and lose the password."""
    parts = _split(url)
    if parts is None or not parts[1]:
        return url
    scheme, userinfo, main, tail = parts
    if scheme.lower() in _TOKEN_AS_USER:
        return f"{scheme}://{main}{tail}"
    return f"{scheme}://{userinfo.partition(':')[0]}@{main}{tail}"


def has_credentials(url: str) -> bool:
    """Whether `url` carries a password, a token or a secret query parameter."""
    return redact_url(url) != url


def redact_url(url: str) -> str:
    """`url` with its password (or token-like user) and secret query values replaced by ***."""
    parts = _split(url)
    if parts is None:
        return url
    scheme, userinfo, main, tail = parts
    return f"{scheme}://{_userinfo(scheme, userinfo)}{main}{_query(tail)}"


def redact_text(text: str) -> str:
    """`text` with every URL in it redacted (for messages that quote a URL, e.g. git's)."""
    if "://" not in text:
        return text
    return _URL_IN_TEXT.sub(lambda m: redact_url(m.group(0)), text)


def _userinfo(scheme: str, userinfo: str) -> str:
    if not userinfo:
        return ""
    user, colon, _ = userinfo.partition(":")
    if colon:
        return f"{user}:{MASK}@"
    return f"{MASK}@" if scheme.lower() in _TOKEN_AS_USER else f"{user}@"


def _query(tail: str) -> str:
    """The `?query#fragment` part with secret parameter values masked."""
    if not tail.startswith("?"):
        return tail
    query, hash_, fragment = tail[1:].partition("#")
    params = [_param(p) for p in re.split(r"([&;])", query)]
    return "?" + "".join(params) + hash_ + fragment


def _param(part: str) -> str:
    name, eq, _ = part.partition("=")
    if eq and _is_secret_param(name):
        return f"{name}={MASK}"
    return part


def _is_secret_param(name: str) -> bool:
    low = name.lower()
    return low in _SECRET_PARAMS or any(word in low for word in _SECRET_PARAM_WORDS)


class RedactingFilter(logging.Filter):
    """A logging filter that redacts every URL in a record's message (install it on handlers).

    Log lines quote remotes and URIs (git's stderr, library messages); the record is rewritten
    once, with its arguments merged in, so no formatter sees the clear text.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = redact_text(message)
        if clean != message:
            record.msg, record.args = clean, None
        return True


# A property line as catalog files and values.yaml's `catalogs` texts hold them: `key=value`.
_PROPERTY_LINE = re.compile(r"^(\s*[^\s=:#!-][^\s=:]*=)(.*)$", re.MULTILINE)


def value_tagger() -> Callable[[str], str]:
    """Replaces each property value with `***` and a tag that differs when the value differs.

    The tag is an HMAC under a key made for this run only, so a diff still shows *that* a value
    changed while nothing about the value (not even a guessable hash) is printed.
    """
    key = os.urandom(32)

    def tagged(m: re.Match[str]) -> str:
        digest = hmac.new(key, m.group(2).encode("utf-8", "surrogatepass"), hashlib.sha256)
        return f"{m.group(1)}***{digest.hexdigest()[:8]}"

    return lambda text: _PROPERTY_LINE.sub(tagged, text)
