"""trinogen.ports: the real adapters and the test fakes offer every member of each Protocol.

(mypy --strict checks the signatures where the CLI passes the adapters to the pipeline; this
test also covers the fakes, which mypy does not see.)
"""

from __future__ import annotations

import inspect

import pytest

from tests import fakes
from trinogen import ports
from trinogen.cache import RenderCache
from trinogen.gitops import WorkingCopy
from trinogen.source import Source
from trinogen.vault import VaultReader


def members(protocol: type) -> set[str]:
    names = set(getattr(protocol, "__annotations__", {}))
    names |= {n for n, _ in inspect.getmembers(protocol) if not n.startswith("_")}
    return names


def instance_members(cls: type) -> set[str]:
    """Methods and properties of the class plus the attributes its __init__ assigns."""
    source = inspect.getsource(cls.__init__)  # type: ignore[misc]
    assigned = {line.split("self.", 1)[1].split(" ", 1)[0].split(":")[0]
                for line in source.splitlines() if line.strip().startswith("self.")}
    return {n for n, _ in inspect.getmembers(cls)} | assigned


@pytest.mark.parametrize(
    ("protocol", "implementations"),
    [
        (ports.DocumentSource, [Source, fakes.FakeSource]),
        (ports.Repository, [WorkingCopy, fakes.FakeRepo]),
        (ports.SecretReader, [VaultReader, fakes.FakeReader]),
        (ports.RenderCacheStore, [RenderCache, fakes.FakeCache]),
    ],
)
def test_adapters_and_fakes_implement_the_ports(protocol: type, implementations: list[type]) -> None:
    """Every member the pipeline may use exists on the adapter and on its fake."""
    wanted = members(protocol)
    assert wanted, protocol
    for cls in implementations:
        missing = wanted - instance_members(cls)
        assert not missing, f"{cls.__name__} lacks {sorted(missing)}"
