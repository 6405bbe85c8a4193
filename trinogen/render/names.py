"""Names the Trino chart derives from the release name (the renderer needs them to point at
the chart's objects, e.g. the worker Deployment in the Application's ignoreDifferences)."""

from __future__ import annotations


def chart_fullname(release: str, chart: str = "trino") -> str:
    """The chart's `trino.fullname`: release-chart, or just chart when release is its prefix."""
    name = chart if chart.startswith(release) else f"{release}-{chart}"
    return _trunc63(name)


def chart_worker_name(release: str, chart: str = "trino") -> str:
    """The worker Deployment's name."""
    return _trunc63(f"{chart_fullname(release, chart)}-worker")


def _trunc63(name: str) -> str:
    # Kubernetes names are at most 63 characters; the chart truncates and trims a trailing "-".
    name = name[:63]
    return name.removesuffix("-")
