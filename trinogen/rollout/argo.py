"""Argo CD's view for the rollout gate, built at the edge and only when a gate needs it.

The adapter (`trinogen.argocd.argo_view(settings)`, issue 20 section 2) lives on its own branch
while this one is written: it is imported by name when first called, so a sync whose rollout
has nothing to watch never loads it, and a build without it says so instead of failing later.
"""

from __future__ import annotations

import importlib
from typing import cast

from trinogen.errors import ConfigError
from trinogen.ports import ArgoView, ArgoViewFactory
from trinogen.settings import Settings


def argo_factory(settings: Settings) -> ArgoViewFactory:
    def build() -> ArgoView:
        try:
            adapter = importlib.import_module("trinogen.argocd")
        except ModuleNotFoundError as e:
            raise ConfigError("the rollout waits on Argo CD's health, but this trinogen has no "
                              "Argo CD reader (trinogen.argocd)") from e
        return cast(ArgoView, adapter.argo_view(settings))

    return build
