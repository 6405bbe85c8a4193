"""`trinogen watch`: follow the cluster collection's change stream; sync changed clusters in batches.

One loop, run by exactly one replica at a time (the holder of a lease document in MongoDB):

    hold the lease -> open the stream (after the saved position, or from now + a full sync)
      -> collect events into a Batch until it is due (quiet for debounce_seconds, max_batch
         documents, or max_wait_seconds after its first event)
      -> one targeted sync of the batch's documents (one commit; the lease is confirmed right
         before the push)
      -> save the batch's stream position (a write conditional on still holding the lease)
      -> every reconcile_seconds: a full sync repairs drift.

A batch is pushed whole or not at all, and its position is saved only after its push: a crash
replays at most the last batch, and a replayed batch plans no change, so nothing is committed
twice and nothing is lost. A position the server no longer accepts (ChangeStreamHistoryLost,
an invalidate event, any refusal to resume) means: open a new stream from now FIRST, then a
full sync, so no change can fall between the two.

Modules, one job each:
    position  the stream position (one value for the resume token)
    batching  the Batch and when it is due (pure)
    decision  the one decision: sync now (what, why) or read on (pure)
    retry     back-off and failures in a row, per stage (pure)
    feed      pymongo's change stream as typed events and typed failures
    lease     leadership and the saved position in one MongoDB document
    leadership  holding the lease over time: renew, take over, step down
    ports     the Protocols the loop depends on (lease, feed, stream)
    syncing   one sync through the pipeline, and its log line
    claimants who claims which clusterId, as seen: a batch reads by `_id` only
    metrics   counters, and Prometheus series when prometheus_client is installed
    health    the /healthz verdict (pure), the liveness file, the HTTP server
    signals   SIGTERM/SIGINT to a stop request
    loop      the Watcher: one step at a time, collaborators passed in
    service   wiring (compose) and running as a service (run)
"""

from trinogen.errors import LeaseLost
from trinogen.watch.batching import Batch
from trinogen.watch.decision import Sync, Work, decide
from trinogen.watch.feed import (
    DOCUMENT_EVENTS,
    NO_CHANGE_STREAM_CODES,
    PIPELINE,
    STREAM_END_EVENTS,
    TOKEN_LOST_CODES,
    Changed,
    ChangeFeed,
    ChangeStream,
    ChangeStreamsUnsupported,
    Ended,
    Event,
    FeedFailed,
    Ignored,
    PositionLost,
    PositionRejected,
    Quiet,
    event_time,
)
from trinogen.watch.health import HealthServer, Refusal, Snapshot, verdict
from trinogen.watch.lease import Lease, LeaseUnavailable, utcnow
from trinogen.watch.loop import Watcher
from trinogen.watch.metrics import Metrics
from trinogen.watch.ports import Feed, LeaseLike, Stream
from trinogen.watch.position import StreamPosition, idle_save_due
from trinogen.watch.retry import Failures, backoff
from trinogen.watch.service import compose, health_server, require_change_streams, run
from trinogen.watch.signals import signal_handlers
from trinogen.watch.syncing import Syncer, SyncOutcome

_utcnow = utcnow  # the old name, kept for callers of the single-module watcher

__all__ = [
    "DOCUMENT_EVENTS", "NO_CHANGE_STREAM_CODES", "PIPELINE", "STREAM_END_EVENTS", "TOKEN_LOST_CODES", "Batch",
    "ChangeFeed", "ChangeStream", "ChangeStreamsUnsupported", "Changed", "Ended", "Event", "Failures", "Feed", "FeedFailed",
    "HealthServer", "Ignored", "Lease", "LeaseLike", "LeaseLost", "LeaseUnavailable", "Metrics",
    "PositionLost", "PositionRejected", "Quiet", "Refusal", "Snapshot", "Stream",
    "StreamPosition", "Sync", "SyncOutcome", "Syncer", "Watcher", "Work", "backoff", "compose",
    "decide", "event_time", "health_server", "idle_save_due", "require_change_streams", "run",
    "signal_handlers", "utcnow", "verdict",
]
