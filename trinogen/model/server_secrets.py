"""Secret placeholders in server properties (issue 13, item 1): bound as in connectors.

A placeholder in `properties` or `clusterConfig.<role>.properties` gets the grammar, scope rules
and environment variable of a connector's (`Binding`); its property is written with
`${ENV:<variable>}`, which Trino resolves in config.properties at startup, and the variable comes
from the cluster's env Secret (the ExternalSecret). Every placeholder bound is kept, with the
field it was written in, for that Secret, the pods' checksum and the Vault read.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from trinogen.model.checker import Checker
from trinogen.model.connectors import Binding
from trinogen.model.types import ServerSecret
from trinogen.secrets import SecretUse


@dataclass
class ServerBinding:
    """Binds the placeholders of one document's server properties; collects what it bound."""

    binding: Binding
    found: list[ServerSecret] = field(default_factory=list)

    def __call__(self, key: str, text: str, path: str, c: Checker) -> str | None:
        """The value as config.properties takes it; None (reported) for a bad placeholder."""
        bound = self.binding.bind(text, path, c)
        if bound is None:
            return None
        out = []
        for seg in bound:
            if isinstance(seg, SecretUse):
                self.found.append(ServerSecret(path, key, seg))
                out.append(env_reference(seg))
            else:
                out.append(seg)
        return "".join(out)


def env_reference(use: SecretUse) -> str:
    """How a Trino properties file names the variable that carries a secret."""
    return f"${{ENV:{use.env}}}"
