"""Kubernetes metadata and naming rules, and the `{cluster}`/`{owner}` patterns of the options.

Shared by the option kinds (checked when the settings load) and the model (checked again once a
document's clusterId and owner are substituted). Each check returns what is wrong, or None.
Pure: no I/O. The rules are Kubernetes' own (apimachinery's validation of names, labels and
annotations), written out here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from trinogen.errors import ConfigError

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
# apimachinery's IsDNS1123Subdomain: object names and key prefixes. Unlike a host, it does not
# limit each label to 63 characters (the API server takes `<64 letters>.example.com/key`).
_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_NAME_PART = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_WORD_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
PLACEHOLDERS = ("cluster", "owner")
# Annotations of one object together: Kubernetes refuses more than 256 KiB.
MAX_ANNOTATIONS_BYTES = 256 * 1024
# A sample a pattern is filled with when the settings load (a valid clusterId and owner).
SAMPLE = {"cluster": "c", "owner": "o"}
# Between `{cluster}` and a neighbouring `{owner}`, a text with a character no cluster id holds
# (`[-a-z0-9]`). Without one, two clusters can get one text: owner a-b of cluster c and owner a
# of cluster b-c both make "a-b-c" of "{owner}-{cluster}" (a document names its own owner).
# With one (`/`, `.`, `_`, `#`, an upper-case letter), the cluster's part is found again in the
# text, so the text is the cluster's alone.
_NAMED = re.compile(r"\{(cluster|owner)\}")
_NOT_IN_CLUSTER_ID = re.compile(r"[^-a-z0-9]")


def check_one_per_cluster(where: str, template: str, what: str) -> None:
    """ConfigError when `template` could give two clusters one text (above): for a text that
    tells clusters apart (a spooling prefix, an audit topic, a JWT audience, a Vault path)."""
    parts = _NAMED.split(template)  # text, name, text, name, ..., text
    names, texts = parts[1::2], parts[0::2]
    for i, name in enumerate(names):
        beside = [texts[j] for j, k in ((i, i - 1), (i + 1, i + 1))
                  if 0 <= k < len(names) and names[k] == "owner"]
        if name == "cluster" and any(not _NOT_IN_CLUSTER_ID.search(t) for t in beside):
            raise ConfigError(f"{where} {template!r}: put a character no cluster id holds "
                              "(/ . _ #, not - or a letter or digit) between {cluster} and "
                              "{owner}: owner a-b of cluster c and owner a of cluster b-c would "
                              f"otherwise share one {what}")


def dns_subdomain(text: str) -> str | None:
    """Why `text` is not a host name: a DNS-1123 subdomain whose labels have at most 63
    characters (DNS's own limit; the API server checks a host only as an object name), or None."""
    if not text or len(text) > 253:
        return "a DNS name has 1 to 253 characters"
    for label in text.split("."):
        if len(label) > 63 or not _DNS_LABEL.fullmatch(label):
            return ("a DNS name is dot-separated labels of lowercase letters, digits and '-' "
                    "(each starts and ends with a letter or digit, at most 63 characters)")
    return None


def object_name(text: str) -> str | None:
    """Why `text` is not a Kubernetes object name (a DNS-1123 subdomain: ServiceAccounts,
    Secrets, IngressClasses, key prefixes), or None."""
    if not text or len(text) > 253 or not _SUBDOMAIN.fullmatch(text):
        return ("an object name has 1 to 253 lowercase letters, digits, '-' and '.', starting and "
                "ending with a letter or digit (a DNS subdomain)")
    return None


def is_name_part(text: str) -> bool:
    """A label key's name (and a non-empty label value): at most 63 letters, digits, '-', '_'
    or '.', starting and ending with a letter or digit."""
    return len(text) <= 63 and _NAME_PART.fullmatch(text) is not None


def qualified_name(key: str) -> str | None:
    """Why `key` is not a label or annotation key (`[prefix/]name`), or None."""
    prefix, _, name = key.rpartition("/")
    if "/" in key and (not prefix or object_name(prefix) is not None):
        return f"the prefix of {key!r} must be a DNS name (such as example.com)"
    if not is_name_part(name):
        return (f"the name of {key!r} must be at most 63 letters, digits, '-', '_' or '.', "
                "starting and ending with a letter or digit")
    return None


def label_value(value: str) -> str | None:
    """Why `value` is not a label value, or None."""
    if value and not is_name_part(value):
        return (f"{value!r} is not a label value: at most 63 letters, digits, '-', '_' or '.', "
                "starting and ending with a letter or digit")
    return None


def annotation_value(value: str) -> str | None:
    """Why `value` cannot be an annotation value here, or None (line breaks are refused: a
    platform that means a multi-line annotation can say so in an issue)."""
    if any(ch in value for ch in "\n\r\x00"):
        return "an annotation value here is one line without NUL"
    return None


def fill(pattern: str, cluster: str, owner: str) -> str:
    """The pattern with `{cluster}` and `{owner}` substituted (the pattern was checked)."""
    return pattern.replace("{cluster}", cluster).replace("{owner}", owner)


def check_pattern(where: str, pattern: Any, *, literal_braces: bool = False) -> str:
    """A text whose only placeholders are `{cluster}` and `{owner}`; else ConfigError.

    With `literal_braces` (annotation values, which may be JSON such as `{"Type": "redirect"}`)
    other braces are text, but a word in braces (`{clusterId}`, a misspelt placeholder) and `{{`
    (Helm's template syntax) are still refused.
    """
    if not isinstance(pattern, str):
        raise ConfigError(f"{where} must be a string")
    if literal_braces:
        words = _WORD_PLACEHOLDER.findall(pattern)
        wrong = "{{" in pattern or any(w not in PLACEHOLDERS for w in words)
    else:
        rest = _PLACEHOLDER.sub(lambda m: "" if m.group(1) in PLACEHOLDERS else "\x00", pattern)
        wrong = "\x00" in rest or "{" in rest or "}" in rest
    if wrong:
        raise ConfigError(f"{where}: {pattern!r} may use only the placeholders {{cluster}} and "
                          "{owner}" + (" (and no {{)" if literal_braces else ""))
    return pattern


def pairs(where: str, raw: Any, *, labels: bool) -> tuple[tuple[str, str], ...]:
    """A map of label (or annotation) keys to value patterns, sorted; checked with a sample.

    Keys are literal; values may hold `{cluster}`/`{owner}` and are checked again for each
    document once filled (`problem_in_pairs`).
    """
    if raw is None:
        return ()
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where} must be a mapping of keys to strings")
    out = []
    for key, value in raw.items():
        at = f"{where}.{key}"
        if not isinstance(key, str):
            raise ConfigError(f"{where}: keys must be strings")
        # The API server lower-cases an annotation key before checking it (ValidateAnnotations):
        # `Example.COM/Key` is an annotation key, not a label key.
        wrong = qualified_name(key if labels else key.lower())
        if wrong:
            raise ConfigError(f"{at}: {wrong}")
        check_pattern(at, value, literal_braces=not labels)
        wrong = value_problem(fill(value, **SAMPLE), labels=labels)
        if wrong:
            raise ConfigError(f"{at}: {wrong}")
        out.append((key, value))
    if not labels and annotation_bytes(out) > MAX_ANNOTATIONS_BYTES:
        raise ConfigError(f"{where}: annotations hold at most 256 KiB (262,144 bytes of UTF-8, "
                          "keys and values) together")
    return tuple(sorted(out))


def annotation_bytes(pairs: tuple[tuple[str, str], ...] | list[tuple[str, str]]) -> int:
    """The size the API server gives annotations: UTF-8 bytes of every key and value."""
    return sum(len(k.encode("utf-8", "surrogatepass")) + len(v.encode("utf-8", "surrogatepass"))
               for k, v in pairs)


def value_problem(value: str, *, labels: bool) -> str | None:
    return label_value(value) if labels else annotation_value(value)


def filled_pairs(
    patterns: tuple[tuple[str, str], ...], cluster: str, owner: str, *, labels: bool
) -> tuple[tuple[tuple[str, str], ...], str | None]:
    """The pairs with one document's values substituted, and the first problem they have."""
    out = tuple((k, fill(v, cluster, owner)) for k, v in patterns)
    for key, value in out:
        wrong = value_problem(value, labels=labels)
        if wrong:
            return out, f"{key}: {wrong}"
    return out, None


def text(where: str, raw: Mapping[str, Any], field: str, default: str | None = None) -> str | None:
    """An optional one-line string field of an option."""
    value = raw.get(field, default)
    if value is None:
        return None
    if not isinstance(value, str) or any(ch in value for ch in "\n\r\x00"):
        raise ConfigError(f"{where}.{field} must be a one-line string")
    return value


def known_fields(where: str, raw: Mapping[str, Any], fields: tuple[str, ...]) -> None:
    """Refuse a misspelt field of an option (a typo must not be ignored silently)."""
    for key in raw:
        if key not in fields:
            raise ConfigError(f"{where}.{key}: unknown field (known: {', '.join(fields)})")
