"""Redaction: no password, token or secret query value of a URL survives printing."""

from __future__ import annotations

import pytest

from trinogen.redact import (
    RedactingFilter,
    has_credentials,
    redact_text,
    redact_url,
    strip_userinfo,
)

REDACT = [
    ("https://oauth2:glpat-SECRET@gitlab.example.com/platform/gitops.git",
     "https://oauth2:***@gitlab.example.com/platform/gitops.git"),
    ("https://ghp_SECRET@github.com/org/repo.git", "https://***@github.com/org/repo.git"),
    ("ssh://git@git.example.com/org/repo.git", "ssh://git@git.example.com/org/repo.git"),
    ("git@github.com:org/repo.git", "git@github.com:org/repo.git"),
    ("/srv/git/gitops.git", "/srv/git/gitops.git"),
    ("mongodb://trinogen:p%40ss@db1:27017,db2:27017/admin?replicaSet=rs0",
     "mongodb://trinogen:***@db1:27017,db2:27017/admin?replicaSet=rs0"),
    ("mongodb://db/?tls=true&tlsCertificateKeyFilePassword=SECRET&w=1",
     "mongodb://db/?tls=true&tlsCertificateKeyFilePassword=***&w=1"),
    (("mongodb+srv://u:pw@c.example.net/?authMechanism=MONGODB-AWS"
      "&authMechanismProperties=AWS_SESSION_TOKEN:SECRET"),
     ("mongodb+srv://u:***@c.example.net/?authMechanism=MONGODB-AWS"
      "&authMechanismProperties=***")),
    ("mongodb://db/?sslPEMKeyPassword=SECRET;appname=x", "mongodb://db/?sslPEMKeyPassword=***;appname=x"),
    ("https://host/x?access_token=SECRET#frag", "https://host/x?access_token=***#frag"),
    ("https://host/a@b/repo.git", "https://host/a@b/repo.git"),
    ("mongomock://", "mongomock://"),
]


@pytest.mark.parametrize(("url", "shown"), REDACT)
def test_redact_url_masks_exactly_the_credentials(url: str, shown: str) -> None:
    """Passwords, token users and secret query values become ***; the rest stays readable."""
    assert redact_url(url) == shown
    assert "SECRET" not in redact_url(url)
    assert has_credentials(url) == (url != shown)


STRIP = [
    ("https://oauth2:TOKEN@gitlab.example.com/g.git", "https://gitlab.example.com/g.git"),
    ("https://TOKEN@github.com/o/r.git", "https://github.com/o/r.git"),
    ("https://gitlab.example.com/g.git", "https://gitlab.example.com/g.git"),
    ("git@github.com:o/r.git", "git@github.com:o/r.git"),
    ("ssh://git@host/o/r.git", "ssh://git@host/o/r.git"),
    ("ssh://git:pw@host/o/r.git", "ssh://git@host/o/r.git"),
]


@pytest.mark.parametrize(("url", "stripped"), STRIP)
def test_strip_userinfo_removes_user_and_password(url: str, stripped: str) -> None:
    """http(s) loses its userinfo, ssh keeps its user; scp-like and plain URLs are unchanged."""
    assert strip_userinfo(url) == stripped


def test_redact_text_masks_every_url_in_a_message() -> None:
    """A URL quoted inside git's stderr is redacted where it stands."""
    text = ("fatal: unable to access 'https://oauth2:SECRET@h/g.git/': 403\n"
            "also https://TOK@h/x and mongodb://u:SECRET@db/?tlsCertificateKeyFilePassword=SECRET")
    out = redact_text(text)
    assert "SECRET" not in out and "TOK" not in out
    assert "'https://oauth2:***@h/g.git/': 403" in out


def test_the_logging_filter_redacts_urls_in_messages_and_arguments() -> None:
    """A log record quoting a remote, in its message or its arguments, is written redacted."""
    import logging

    record = logging.LogRecord("t", logging.INFO, __file__, 1, "push to %s failed: %s", (
        "https://oauth2:SECRET@h/g.git", "fatal: 'https://SECRET@h/g.git'"), None)
    assert RedactingFilter().filter(record)
    assert record.getMessage() == "push to https://oauth2:***@h/g.git failed: fatal: 'https://***@h/g.git'"
