"""Who holds a claim: host, pid namespace and pid, whether that process has stopped, and which held rows it left."""

import json
import operator
import os
import socket
from functools import reduce
from typing import Any

from rules.ids import now_iso

# A pid names a process only on one host inside one pid namespace (a container has its own);
# claims older than this process's start cannot be its own.
_STARTED = now_iso()


def _pid_namespace():
    return os.readlink("/proc/self/ns/pid") if os.path.exists("/proc/self/ns/pid") else ""


def this_process() -> str:
    """Who takes a claim (read when it is taken: workers forked from one parent have their own pids)."""
    return json.dumps({"host": socket.gethostname(), "pidns": _pid_namespace(), "pid": os.getpid()})


def gone(owner: str | None, claimed_at: str) -> bool:
    """Whether the process that took a claim no longer runs; False when that cannot be known here
    (another host or container, or a host of the same name: those claims wait for the stale limit)."""
    try:
        who = json.loads(owner or "")
        host, pidns, pid = who["host"], who["pidns"], int(who["pid"])
    except (ValueError, TypeError, KeyError):
        return False  # no owner recorded (older claims): the stale limit decides
    if host != socket.gethostname() or pidns != _pid_namespace():
        return False
    if pid == os.getpid():
        return claimed_at < _STARTED  # a predecessor with the same pid (a restarted container)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # it runs, as another user
    return False


def orphaned(model: Any, held: Any, version: Any) -> Any:
    """A claim's `due` condition (services.background.claim): the rows `held` whose claiming process no longer
    runs (gone()), each at the `version` read with its owner, so one another process took since is not taken
    again. `model` has `owner` and `updated_at`."""
    rows = model.select(model.id, version, model.owner, model.updated_at).where(held)
    stopped = [(model.id == r.id) & (version == getattr(r, version.name)) for r in rows if gone(r.owner, r.updated_at)]
    return reduce(operator.or_, stopped, model.id.in_([]))
