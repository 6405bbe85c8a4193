"""`files`: small text files and secret files a document attaches, mounted into every Trino pod.

A text file (`{"name": "core-site.xml", "content": "<configuration>..."}`) goes into the
cluster's ConfigMap `<clusterId>-trino-files`, mounted at /etc/trino/files; a secret file
(`{"name": "trino.keytab", "secret": "{{ vault:secret/trino/c/kerberos#keytab }}",
"encoding": "base64"}`) into the Secret `<clusterId>-trino-secret-files`, which ESO fills from
Vault, mounted at /etc/trino/secret-files. Both directories belong to trinogen alone and a name
is a plain file name (no `/`), so an attached file can never land on Trino's own configuration
(/etc/trino/config.properties, the catalogs) or anywhere else in the image.

Whether the properties naming files name these is `trinogen.model.file_paths`'s job.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from trinogen.model.checker import Checker, show, type_name
from trinogen.model.connectors import Binding
from trinogen.model.substitution import file_substitution, refusal
from trinogen.model.types import FileConfigMap, FileSecret, Mount
from trinogen.secrets import PlaceholderError, SecretUse, parse_value

FILES_DIR = "/etc/trino/files"
SECRET_FILES_DIR = "/etc/trino/secret-files"
FILES_VOLUME = "trinogen-files"  # volume names: distinct from the chart's (config-volume, ...)
SECRET_FILES_VOLUME = "trinogen-secret-files"
# A ConfigMap or Secret key (Kubernetes: [-._a-zA-Z0-9]+), starting with a letter or digit: no
# hidden files, and nothing the kubelet's own `..data` links could collide with.
FILE_NAME = re.compile(r"[A-Za-z0-9][-._A-Za-z0-9]*")
MAX_FILES = 64
MAX_FILE_NAME = 128
MAX_FILE_BYTES = 256 * 1024
ENCODINGS = {"base64": "Base64", "base64url": "Base64URL"}  # -> ESO's decodingStrategy
ENTRY_FIELDS = frozenset({"name", "content", "secret", "encoding"})
# Text files are text: tab, newline and carriage return are the only control characters kept.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class AttachedFiles(NamedTuple):
    """What a document's `files` become: at most one ConfigMap and one Secret, and their mounts."""

    config_maps: tuple[FileConfigMap, ...] = ()
    file_secrets: tuple[FileSecret, ...] = ()
    mounts: tuple[Mount, ...] = ()


def attached_files(value: Any, cluster_id: str | None, binding: Binding,
                   c: Checker) -> AttachedFiles:
    """Read `files`; every problem is reported, and what is usable is kept."""
    entries = c.entries(value, "files", MAX_FILES)
    if entries is None:
        return AttachedFiles()
    got = _Gathered()
    for i, raw in enumerate(entries):
        _entry(raw, i, got, binding, c)
    # The text files share one ConfigMap: its size is measured as written (render.limits).
    if cluster_id is None:
        return AttachedFiles()
    return _attached(cluster_id, sorted(got.texts), sorted(got.secrets), sorted(got.decoding))


@dataclass
class _Gathered:
    """What the entries read so far hold (usable ones only), and the names taken."""

    texts: list[tuple[str, str]] = field(default_factory=list)
    secrets: list[tuple[str, SecretUse]] = field(default_factory=list)
    decoding: list[tuple[str, str]] = field(default_factory=list)
    seen: dict[str, int] = field(default_factory=dict)  # folded name -> index


def _entry(raw: Any, i: int, got: _Gathered, binding: Binding, c: Checker) -> None:
    """Read one entry into `got`: a text file or a secret file, named once."""
    path = f"files[{i}]"
    entry = c.mapping(raw, path)
    if entry is None:
        return
    name = _file_name(entry.get("name"), path, i, got.seen, c)
    if name is not None:
        path = f"files[{json.dumps(name)}]"
    c.fields(entry, path, ENTRY_FIELDS)
    has_content, has_secret = "content" in entry, "secret" in entry
    if has_content == has_secret:
        c.error(path, "set exactly one of content (a text file) or secret (a placeholder "
                "for a file kept in Vault)")
    elif has_content:
        _text_entry(entry, path, name, got, c)
    else:
        _secret_entry(entry, path, name, got, binding, c)


def _text_entry(entry: Mapping[str, Any], path: str, name: str | None, got: _Gathered,
                c: Checker) -> None:
    if "encoding" in entry:
        c.error(f"{path}.encoding", "applies to secret files only: a text file is "
                "stored as written")
    content = _content(entry["content"], f"{path}.content", c)
    if content is not None and name is not None:
        got.texts.append((name, content))


def _secret_entry(entry: Mapping[str, Any], path: str, name: str | None, got: _Gathered,
                  binding: Binding, c: Checker) -> None:
    use = _secret(entry["secret"], f"{path}.secret", binding, c)
    strategy = _encoding(entry.get("encoding"), f"{path}.encoding", c)
    if use is not None and name is not None:
        got.secrets.append((name, use))
        if strategy is not None:
            got.decoding.append((name, strategy))


def _attached(cluster_id: str, texts: list[tuple[str, str]], secrets: list[tuple[str, SecretUse]],
              decoding: list[tuple[str, str]]) -> AttachedFiles:
    maps, file_secrets, mounts = [], [], []
    if texts:
        name = f"{cluster_id}-trino-files"
        maps.append(FileConfigMap(name, tuple(texts)))
        mounts.append(Mount(FILES_VOLUME, name, FILES_DIR))
    if secrets:
        name = f"{cluster_id}-trino-secret-files"
        file_secrets.append(FileSecret(name, tuple(secrets), tuple(decoding)))
        mounts.append(Mount(SECRET_FILES_VOLUME, name, SECRET_FILES_DIR, secret=True))
    return AttachedFiles(tuple(maps), tuple(file_secrets), tuple(mounts))


def _file_name(value: Any, path: str, index: int, seen: dict[str, int], c: Checker) -> str | None:
    name = c.string(value, f"{path}.name", pattern=FILE_NAME, max_len=MAX_FILE_NAME,
                    rule="a plain file name: letters, digits, '-', '_' and '.', starting with a "
                    f"letter or digit (it appears as {FILES_DIR}/<name>)")
    if name is None:
        return None
    folded = name.lower()  # two names differing in case would confuse every reader of the pod
    if folded in seen:
        c.error(f"{path}.name", f"{show(name)} repeats files[{seen[folded]}].name (file names "
                "must be unique, ignoring case)")
        return None
    seen[folded] = index
    return name


def _content(value: Any, path: str, c: Checker) -> str | None:
    """A text file's content: text, within the size limit, not templated."""
    if type(value) is not str:
        c.error(path, f"must be a string (the file's text), not {type_name(value)}")
        return None
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        c.error(path, "is not valid unicode text")
        return None
    if size > MAX_FILE_BYTES:
        c.error(path, f"is {size} bytes long; a text file may have at most {MAX_FILE_BYTES}")
        return None
    if _CONTROL.search(value):
        c.error(path, "holds control characters (binary content?); keep a binary file in "
                "Vault and attach it with secret and \"encoding\": \"base64\"")
        return None
    found = file_substitution(value)
    if found is not None:  # Trino's ${<provider>:...} or Hadoop's ${env.NAME}
        c.error(path, f"{refusal(found)}; a text file may not name the pods' environment "
                "(attach a secret as its own file with secret)")
        return None
    try:
        templated = any(not isinstance(s, str) for s in parse_value(value))
    except PlaceholderError:  # a broken {{ vault: ...: meant as a placeholder all the same
        templated = True
    if templated:
        c.error(path, "holds a secret placeholder, but text files are not templated (it would "
                "reach the pods as written); attach the secret as its own file with secret")
        return None
    return value


def _secret(value: Any, path: str, binding: Binding, c: Checker) -> SecretUse | None:
    """A secret file's value: exactly one placeholder, bound within the cluster's scope."""
    text = c.string(value, path)
    if text is None:
        return None
    bound = binding.bind(text.strip(), path, c)
    if bound is None:
        return None
    if len(bound) != 1 or not isinstance(bound[0], SecretUse):
        # never echo the value: it may be the very secret that belongs in Vault
        c.error(path, "must be exactly one placeholder, {{ NAME }} or {{ vault:<mount>/<path>"
                "#<key> }}: a secret file's content is read from Vault, never from the document")
        return None
    return bound[0]


def _encoding(value: Any, path: str, c: Checker) -> str | None:
    if value is None:
        return None
    text = c.string(value, path, max_len=16)
    if text is None:
        return None
    if text not in ENCODINGS:
        c.error(path, f"{show(text)} is not an encoding trinogen knows ({', '.join(ENCODINGS)}): "
                "write base64 when Vault holds the file base64-encoded (a keytab, a keystore)")
        return None
    return ENCODINGS[text]
