"""Every rendered YAML file is parsed back before it is written: a failure is a template bug."""

from __future__ import annotations

from collections.abc import Mapping


class RenderError(Exception):
    """A template failed for one cluster; the message names template and line."""


def check_yaml(files: Mapping[str, bytes]) -> None:
    """Parse rendered YAML files back; a failure is a template bug, reported as RenderError.

    libyaml parses every file completely (all of one cluster's files in one stream, each a
    document of its own). Only well-formedness is in question, so no Python objects are built.
    """
    import yaml

    stream = b"".join(b"---\n" + content + (b"" if content.endswith(b"\n") else b"\n")
                      for content in files.values())
    try:
        _parse(stream)
    except yaml.YAMLError:
        for path, content in files.items():  # find the file to blame
            try:
                _parse(content)
            except yaml.YAMLError as e:
                raise RenderError(f"{path} is not valid YAML after rendering (a template bug): "
                                  f"{e}") from e
        raise


def _parse(stream: bytes) -> None:
    import yaml

    if yaml.__with_libyaml__:
        # CSafeLoader is PyYAML's public libyaml loader; its raw_parse() runs libyaml's parser
        # over the whole stream in C and builds no events or nodes: proving the text is
        # well-formed YAML needs nothing more, at a fifth of the cost of iterating events.
        yaml.CSafeLoader(stream).raw_parse()
        return
    for _ in yaml.parse(stream, Loader=yaml.SafeLoader):  # PyYAML without libyaml
        pass
