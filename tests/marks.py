"""What the chart and real-Trino test modules need, as marks: `pytestmark = CHART` (or
`REAL_TRINO`). Each is a `tests.conftest.needs()`: skipped outside CI, a failure under CI=true,
so CI never silently drops them. The optional modules are imported once, here."""

from __future__ import annotations

import pytest

from tests import kubeapi
from tests import trino_server as ts
from tests.conftest import CHART_DIR, SHARED, needs

try:
    import helm_python
except ImportError:  # pragma: no cover - depends on the environment
    helm_python = None
try:
    import trino
    import trino.dbapi
    import trino.exceptions
except ImportError:  # pragma: no cover - depends on the environment
    trino = None

INSTALL = "pip install -e '.[test]'"

# Rendering through the real Trino chart (../shared/charts/trino beside the clone).
CHART = [
    needs(helm_python is not None, f"helm-python-sdk is not installed ({INSTALL})"),
    needs((CHART_DIR / "Chart.yaml").is_file(), f"no Trino chart at {CHART_DIR}"),
]

# Booting Trino itself from what the chart renders.
REAL_TRINO = [
    pytest.mark.slow,
    *CHART,
    needs(trino is not None, f"the Trino client is not installed ({INSTALL})"),
    needs(ts.java_available(),
          f"no Java >= {ts.MIN_JAVA} at {ts.JAVA_HOME} (Trino {ts.TRINO_VERSION} needs it; set "
          "TRINOGEN_TEST_JAVA_HOME)"),
]

# A real kube-apiserver 1.34 (tests/kubeapi.py; the `kube_cluster` fixture of tests/conftest.py).
KUBE_API = [
    pytest.mark.slow,
    needs(kubeapi.available(), "kube-apiserver is not built and `go` is not on PATH to build it"),
    needs((SHARED / "crds").is_dir(), f"no CRDs at {SHARED / 'crds'}"),
]
