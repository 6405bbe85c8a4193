"""trinogen.publish: what is kept of a plan once git holds its files."""

from __future__ import annotations

from trinogen.desired import Desired
from trinogen.plan import DesiredFile, FileChange, Plan, blob_id
from trinogen.publish import handed_over


def test_a_written_plan_keeps_paths_and_blob_ids_but_no_bytes() -> None:
    """Once written, the plan and the desired tree keep every path, action and blob id, and
    none of the rendered bytes."""
    values, app = b"values: 1\n", b"kind: Application\n"
    desired = Desired(files={"alpha": {"c/alpha/values.yaml": DesiredFile.of(values),
                                       "c/alpha/old.yaml": DesiredFile(blob_id(b"old"), None)}},
                      extra={"apps/root.yaml": DesiredFile.of(app)})
    plan = Plan(files=(FileChange("c/alpha/values.yaml", "add", "alpha", values),
                       FileChange("c/beta/values.yaml", "delete", "beta"),
                       FileChange("apps/root.yaml", "update", None, app)),
                clusters=())
    kept = handed_over(plan, desired)
    assert [(ch.path, ch.action, ch.cluster, ch.content) for ch in kept.files] == [
        ("c/alpha/values.yaml", "add", "alpha", None), ("c/beta/values.yaml", "delete", "beta", None),
        ("apps/root.yaml", "update", None, None)]
    assert {p: (f.blob, f.content) for p, f in desired.files["alpha"].items()} == {
        "c/alpha/values.yaml": (blob_id(values), None), "c/alpha/old.yaml": (blob_id(b"old"), None)}
    assert {p: (f.blob, f.content) for p, f in desired.extra.items()} == {
        "apps/root.yaml": (blob_id(app), None)}
