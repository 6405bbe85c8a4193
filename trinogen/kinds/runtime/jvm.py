"""Extra JVM flags: what one flag sets, and why trinogen refuses it (issue 21, item 6). Pure.

A flag's *key* is what a later flag of the same key overrides: `-XX:+Name`, `-XX:-Name` and
`-XX:Name=value` share `-XX:Name`; `-Dname=value` is `-Dname`; the sized `-X` options (`-Xmx1G`)
are their first four characters; an agent is its path. The JVM keeps the last of one key, so a
platform flag whose key trinogen or the chart already writes would silently replace it (a second
`-Xmx` wins over the heap the document sized and trinogen checked Trino's memory against).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

# Heap sizing is the document's (clusterConfig.<role>.jvm.maxHeapSize/minHeapSize -> the
# chart's <role>.jvm.*).
HEAP_KEYS = frozenset({
    "-Xmx", "-Xms", "-Xmn", "-XX:MaxHeapSize", "-XX:InitialHeapSize", "-XX:MinHeapSize",
    "-XX:MaxRAMPercentage", "-XX:InitialRAMPercentage", "-XX:MinRAMPercentage", "-XX:MaxRAM",
    "-XX:MaxRAMFraction", "-XX:InitialRAMFraction", "-XX:MinRAMFraction", "-XX:MaxNewSize",
    "-XX:NewSize",
})
# Every flag the chart's jvm.config writes (configmap-coordinator.yaml / -worker.yaml, chart
# 1.42.2), with the JDK-8329528 pair trinogen writes for other images (kinds.images), by key.
CHART_KEYS = frozenset({
    "-server", "-agentpath:/usr/lib/trino/bin/libjvmkill.so", "-XX:G1HeapRegionSize",
    "-XX:ExplicitGCInvokesConcurrent", "-XX:HeapDumpOnOutOfMemoryError",
    "-XX:ExitOnOutOfMemoryError", "-XX:OmitStackTraceInFastThrow", "-XX:ReservedCodeCacheSize",
    "-XX:PerMethodRecompilationCutoff", "-XX:PerBytecodeRecompilationCutoff",
    "-Djdk.attach.allowAttachSelf", "-Djdk.nio.maxCachedBufferSize",
    "-XX:EnableDynamicAgentLoading", "-XX:UnlockDiagnosticVMOptions",
    "-XX:G1NumCollectionsKeepPinned", "-Dcom.sun.management.jmxremote.rmi.port",
})
# The chart selects G1 (gcMethod.type); a second collector stops the JVM at start.
_GC = re.compile(r"-XX:Use\w*GC")
# Options that read more options from elsewhere, where nothing here could check them.
INDIRECT = frozenset({"-XX:Flags", "-XX:VMOptionsFile"})
# JMX remote is the monitoring switch's (an open JMX port runs code for whoever reaches it);
# node.*, log.* and config are what the launcher passes the server as system properties.
_SYSTEM_PREFIXES = ("-Dcom.sun.management.", "-Dnode.", "-Dlog.")
_LAUNCHER = frozenset({"-Dconfig", "-Dplugin.dir", "-Detc.dir"})
_SIZED_X = ("-Xmx", "-Xms", "-Xmn", "-Xss")
MAX_FLAG = 1024


def key(flag: str) -> str:
    """What a later flag of the same key overrides (see the module's docstring)."""
    if flag.startswith("-XX:"):
        name = flag[4:].split("=", 1)[0]
        return "-XX:" + name.lstrip("+-")
    if flag.startswith(_SIZED_X):
        return flag[:4]
    if flag.startswith(("-D", "-agentpath:", "-agentlib:", "-javaagent:")):
        return flag.split("=", 1)[0]
    return flag.split("=", 1)[0].split(":", 1)[0] if flag.startswith("-X") else flag


def problem(flag: object, trino_reads: Callable[[str], bool]) -> str | None:
    """Why `flag` cannot be an extra JVM flag, or None.

    `trino_reads(name)` says whether Trino reads a property of that name: Trino's bootstrap
    takes JVM system properties as configuration (the launcher hands node.properties over so),
    so `-Dname=value` would replace what trinogen wrote and checked in config.properties.
    """
    if type(flag) is not str or not flag.startswith("-") or len(flag) > MAX_FLAG:
        return "a JVM flag is one string starting with '-' (at most 1024 characters)"
    if flag != flag.strip() or not flag.isprintable():
        return "a JVM flag is one line of printable characters, without surrounding spaces"
    k = key(flag)
    for refused, why in _RULES:
        if refused(k):
            return why.format(k=k)
    if k.startswith("-D") and trino_reads(k[2:]):
        return (f"{k[2:]} is a Trino property: as a system property it would override "
                "config.properties, where trinogen writes and checks it")
    return None


# (does it refuse this key, why) in order; {k} is the key.
_RULES: tuple[tuple[Callable[[str], bool], str], ...] = (
    (HEAP_KEYS.__contains__, ("{k} sizes the heap, which is the document's (clusterConfig."
                              "<role>.jvm.maxHeapSize, minHeapSize): Trino's memory is checked "
                              "against it")),
    (lambda k: k in CHART_KEYS or _GC.fullmatch(k) is not None,
     "{k} is already written by the chart or trinogen (the JVM keeps the last one)"),
    (INDIRECT.__contains__, "{k} reads flags from elsewhere, which trinogen could not check"),
    (lambda k: k in _LAUNCHER or k.startswith(_SYSTEM_PREFIXES),
     "{k} is set by the launcher, the chart or the monitoring switch"),
)


def duplicate(flags: Iterable[str]) -> str | None:
    """The first key two of the flags share (the JVM would keep only the last), or None."""
    seen: set[str] = set()
    for flag in flags:
        k = key(flag)
        if k in seen and not k.startswith(("--add-", "-Xlog")):
            return k
        seen.add(k)
    return None
