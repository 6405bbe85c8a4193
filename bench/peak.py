"""Run one command and write its wall time and resource usage as JSON (bench/run.py's launcher).

`python bench/peak.py OUT.json -- CMD...` forks, execs CMD, waits for it with `os.wait4` and
writes `{"wall", "user", "sys", "maxrss_kib", "status"}` to OUT.json; it exits with CMD's code.

Why a launcher: at exec, Linux keeps the larger of a process's peak RSS and the memory of the
process it was forked from. Started straight from the harness, which holds the generated fleet
(~156 MiB at 10,000 documents), every command would report at least that much. Forked from this
small process, the command's peak RSS (its own and its waited-for children's: git, the workers)
is its own, floored only by this launcher's ~10 MiB.
"""

from __future__ import annotations

import json
import os
import sys
import time


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: peak.py OUT.json -- CMD [ARGS...]", file=sys.stderr)
        return 2
    out, cmd = argv[0], argv[2:]
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # the command: nothing else happens in this child
        try:
            os.execvp(cmd[0], cmd)
        except OSError as e:
            print(f"peak.py: cannot run {cmd[0]}: {e}", file=sys.stderr)
        os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"wall": wall, "user": usage.ru_utime, "sys": usage.ru_stime,
                   "maxrss_kib": usage.ru_maxrss, "status": status}, f)
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code  # killed by a signal: as a shell reports it


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
