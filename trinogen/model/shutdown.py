"""How long a worker needs to shut down gracefully, and how scale-in must wait for it.

Trino's sequence (io.trino.server.NodeStateManager in Trino 476, GracefulShutdownHandler before),
started by the chart's preStop hook (`PUT /v1/info/state "SHUTTING_DOWN"`, then the hook waits for
the JVM to exit):
  1. wait `shutdown.grace-period`, so the coordinator sees the state and stops sending tasks;
  2. wait until every active task is done (no bound: as long as the longest running task);
  3. wait `shutdown.grace-period` again, so the coordinator sees the tasks' final states;
  4. stop the life cycle, giving it up to 30 s (LIFECYCLE_STOP_TIMEOUT), then exit.
Kubernetes kills the container when terminationGracePeriodSeconds runs out, whatever step it is
in, so the budget is the sum of the four plus a margin for what happens around them. The chart
only requires 2 x grace, which leaves no time at all for step 2 or 4. A real Trino 476 worker is
held to this in tests/test_trino_real_shutdown.py.
"""

from __future__ import annotations

from typing import Any

LIFECYCLE_STOP_SECONDS = 30  # NodeStateManager.LIFECYCLE_STOP_TIMEOUT
# The preStop hook's curl, the JVM's exit after the life cycle stopped, the kubelet's signalling.
MARGIN_SECONDS = 15
# Kubernetes' defaults and limits for an HPA's scale-down (autoscaling/v2 validation).
DEFAULT_STABILIZATION_SECONDS = 300
MAX_STABILIZATION_SECONDS = 3600
MAX_POLICY_PERIOD_SECONDS = 1800


def termination_grace(grace: int, drain: int) -> int:
    """terminationGracePeriodSeconds for a grace period and the time tasks may take to drain."""
    return 2 * grace + drain + LIFECYCLE_STOP_SECONDS + MARGIN_SECONDS


def scale_down(budget: int) -> dict[str, Any]:
    """An HPA `behavior` that removes one worker at a time, each given its whole budget.

    The stabilisation window is at least the budget (and never below Kubernetes' default of
    300 s); one pod per period of the budget means a worker is removed only once the previous
    one has had all its time to drain. Both are capped at what the HPA API accepts.
    """
    return {"scaleDown": {
        "stabilizationWindowSeconds": min(max(budget, DEFAULT_STABILIZATION_SECONDS),
                                          MAX_STABILIZATION_SECONDS),
        "policies": [{"type": "Pods", "value": 1,
                      "periodSeconds": min(budget, MAX_POLICY_PERIOD_SECONDS)}],
    }}
