"""Names the Trino chart derives from the release name (the renderer needs them to point at
the chart's objects, e.g. the worker Deployment in the Application's ignoreDifferences)."""

from __future__ import annotations


def chart_fullname(release: str, chart: str = "trino") -> str:
    """The chart's `trino.fullname`: release-chart, or just chart when release is its prefix."""
    name = chart if chart.startswith(release) else f"{release}-{chart}"
    return trunc63(name)


def chart_worker_name(release: str, chart: str = "trino") -> str:
    """The worker Deployment's name."""
    return trunc63(f"{chart_fullname(release, chart)}-worker")


def trunc63(name: str) -> str:
    """Helm's `trunc 63 | trimSuffix "-"`."""
    # Kubernetes names are at most 63 characters; the chart truncates and trims a trailing "-".
    name = name[:63]
    return name.removesuffix("-")
