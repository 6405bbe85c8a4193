"""Peak memory of trinogen with one hostile document among valid ones, over the real wire.

    python bench/hostile.py                       # 1,000 documents; none / 16 MiB / 3.7 MB hostile
    python bench/hostile.py --code /other/tree    # another trinogen (PYTHONPATH), e.g. main's
    python bench/run.py --hostile                 # the same, from the bench's entry point

Issue 19: one document of many unknown keys and thousands of rules per section must not cost a
run more than 100 MiB above the same run without it. The documents live in FerretDB (the tests'
real MongoDB-wire server, tests/ferretdb.py), read by the real pymongo as in production:
mongomock would measure its own copies. FerretDB v1 refuses keys containing '.', so the bench's
documents go in without their connectors. Each variant gets a fresh database and remote, then
runs `sync -o json` (first sync), `sync -o json` again (the failed document from the render
cache), `sync --cluster <it>` (the watcher's path) and `validate`; the table shows each
command's peak RSS (os.wait4, like /usr/bin/time -f %M) and wall time. FerretDB itself takes
~7 s to serve a 16 MiB document (its SQLite backend), counted in the wall time, not the RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import gen_docs  # noqa: E402

SECTIONS = ("catalogs", "schemas", "tables", "system_information", "queries", "impersonation",
            "principals", "authorization", "system_session_properties",
            "catalog_session_properties", "functions", "procedures")
# name -> (sections, rules per section, unknown keys per rule); None: no hostile document
VARIANTS: dict[str, tuple[int, int, int] | None] = {
    "none": None,
    "16 MiB": (12, 2000, 72),  # just under MongoDB's 16 MiB: refused unread by its size
    "3.7 MB": (5, 2000, 40),  # just under mongodb.max_document_bytes: walked, problems capped
}


def hostile(sections: int, rules: int, keys: int) -> dict[str, Any]:
    """A document of `rules` rules in each of `sections` sections, each of `keys` unknown keys."""
    rule = {f"x{k:02d}": 1 for k in range(keys)}
    return {"_id": "hostile", "clusterId": "hostile", "owner": "evil", "enabled": True,
            "accessControl": {"rules": {s: [dict(rule) for _ in range(rules)]
                                        for s in SECTIONS[:sections]}}}


def portable(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The documents as FerretDB v1 stores them: no connectors (their keys contain '.')."""
    for d in docs:
        d.pop("connectors", None)
    return docs


def run(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[int, float, float]:
    """Exit code, peak RSS (MiB) and seconds of one trinogen command."""
    started = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    return os.waitstatus_to_exitcode(status), usage.ru_maxrss / 1024, time.monotonic() - started


def variant(server: Any, name: str, shape: tuple[int, int, int] | None, n: int, code: str,
            work: Path) -> list[dict[str, Any]]:
    db = f"bench_{len(list(work.iterdir()))}"
    where = work / db
    where.mkdir()
    # Seeded by a child process: a parent that once held the 16 MiB document would hand its
    # peak RSS down to every command it starts (Linux keeps the larger maxrss across exec).
    seeded = subprocess.run([sys.executable, __file__, "--seed", server.uri, db, str(n),
                             json.dumps(shape)], capture_output=True, text=True, check=True)
    size = int(seeded.stdout) if shape is not None else None
    cfg = where / "trinogen.yaml"
    cfg.write_text(f"""mongodb: {{uri: "{server.uri}", database: {db}}}
git: {{remote: {where}/remote.git, workdir: {where}/wd, init_local_remote: true}}
argocd: {{repo_url: https://git.example.com/x.git}}
secrets: {{check: false}}
""")
    env = {**os.environ, "PYTHONPATH": code, "HOME": str(where), "XDG_CACHE_HOME": str(where)}
    base = [sys.executable, "-m", "trinogen.cli", "-c", str(cfg)]
    target = "hostile" if shape is not None else "adhoc-qa-00000"
    rows = []
    for label, args in (("sync (first)", ["sync", "-o", "json"]),
                        ("sync (again)", ["sync", "-o", "json"]),
                        ("sync --cluster", ["sync", "--cluster", target, "-o", "json"]),
                        ("validate", ["validate", "-o", "json"])):
        rc, rss, seconds = run(base + args, env, where)
        rows.append({"variant": name, "bytes": size, "command": label, "rc": rc,
                     "rss_mib": round(rss, 1), "seconds": round(seconds, 2)})
        print(f"  {name:8} {label:15} rc {rc}  {rss:7.1f} MiB  {seconds:6.2f} s", flush=True)
    return rows


def seed(uri: str, db: str, n: int, shape: tuple[int, int, int] | None) -> None:
    """Insert the documents (and the hostile one); print the hostile document's BSON size."""
    import bson
    import pymongo
    from bson import json_util

    coll = pymongo.MongoClient(uri)[db]["trino_clusters"]
    coll.insert_many(portable(json_util.loads(json.dumps(gen_docs.generate(n, 42)))))
    if shape is not None:
        doc = hostile(*shape)
        coll.insert_one(doc)
        print(len(bson.encode(doc)))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--seed"]:
        uri, db, n, shape = argv[1:5]
        seed(uri, db, int(n), json.loads(shape))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--documents", type=int, default=1000)
    ap.add_argument("--code", default=str(ROOT), help="trinogen source tree (PYTHONPATH)")
    ap.add_argument("--variants", default=",".join(VARIANTS), help=f"of {', '.join(VARIANTS)}")
    args = ap.parse_args(argv)
    from tests.ferretdb import ferretdb

    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="trinogen-hostile-") as tmp:
        work = Path(tmp) / "runs"
        work.mkdir()
        with ferretdb(Path(tmp) / "ferretdb") as server:
            for name in args.variants.split(","):
                rows += variant(server, name, VARIANTS[name], args.documents, args.code, work)
    base = {r["command"]: r["rss_mib"] for r in rows if r["variant"] == "none"}
    print("\n| variant | BSON bytes | command | peak RSS | over none | seconds |")
    print("|---|---:|---|---:|---:|---:|")
    for r in rows:
        over = r["rss_mib"] - base[r["command"]] if r["command"] in base else float("nan")
        print(f"| {r['variant']} | {r['bytes'] or '—'} | {r['command']} | {r['rss_mib']} MiB | "
              f"{over:+.1f} MiB | {r['seconds']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
