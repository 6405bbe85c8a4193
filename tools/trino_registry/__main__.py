"""Regenerate trinogen's Trino property registry from Trino's artifacts on Maven Central.

    python -m tools.trino_registry --versions 470,476 --out trinogen/trino/data

Downloads go to the shared Maven cache (see maven.py); a second run reads only the cache.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from tools.trino_registry import build, maven, session, sources

DEFAULT_OUT = Path(__file__).resolve().parents[2] / "trinogen/trino/data"


def _versions(spec: str) -> list[str]:
    out: list[str] = []
    for part in spec.split(","):
        if "-" in part:
            low, high = (int(p) for p in part.split("-"))
            out.extend(str(v) for v in range(low, high + 1))
        elif part.strip():
            out.append(part.strip())
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.trino_registry", description=__doc__.splitlines()[0])
    parser.add_argument("--versions", required=True,
                        help="comma-separated versions or ranges, e.g. 470-483 or 470,476")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help=f"directory holding registry/ and session.json.gz (default {DEFAULT_OUT})")
    parser.add_argument("--offline", action="store_true", help="read the cache only")
    parser.add_argument("--plugins", default="hive,iceberg,delta-lake,postgresql,mysql,kafka,"
                        "opensearch,memory,blackhole,tpch,tpcds",
                        help="plugin directories to fetch one by one where no full server "
                        "tarball is served")
    parser.add_argument("--no-full-tarball", action="store_true",
                        help="ignore trino-server-<v>.tar.gz (to compare the artifact-by-artifact "
                        "route with it)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the version files already in registry/ that this run "
                        "does not regenerate (when only some versions can be had)")
    args = parser.parse_args(argv)
    results = []
    for version in _versions(args.versions):
        started = time.monotonic()
        source = sources.load(version, args.plugins.split(","), offline=args.offline,
                              full_tarball=not args.no_full_tarball)
        if not source.origin and not source.units:
            print(f"{version}: nothing served, skipped")
            continue
        data = build.scan_version(source)
        if data.server is None and not data.connectors:
            print(f"{version}: neither the server nor a connector could be had, skipped")
            continue
        results.append(data)
        print(f"{version}: {'complete' if data.complete else 'INCOMPLETE'}, "
              f"{len(data.connectors)} connectors, from {', '.join(source.origin)}; "
              f"unavailable: {', '.join(data.unavailable) or '-'} "
              f"({time.monotonic() - started:.0f}s)")
    if not results:
        print("no version could be had; nothing written", file=sys.stderr)
        return 1
    target = build.write(results, args.out, keep=args.keep)
    size = sum(f.stat().st_size for f in target.glob("*.json.gz"))
    print(f"wrote {target}/ ({size} bytes of version files); cache: {maven.cache_dir()}")
    names = session.write({v.version: v.session for v in results}, args.out, keep=args.keep)
    print(f"wrote {names} ({names.stat().st_size} bytes): the session properties")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
