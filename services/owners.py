"""Who holds a claim: host, pid namespace and pid, whether that process has stopped, and which held rows it left."""

import hashlib
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
    return pid_stopped(pid)


def pid_stopped(pid: int) -> bool:
    """Whether process `pid` of this host and pid namespace has stopped (False while it runs, as any user)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # it runs, as another user
    return False


def _here() -> str:
    return hashlib.sha256(f"{socket.gethostname()}\0{_pid_namespace()}".encode()).hexdigest()[:8]


def file_tag() -> str:
    """This process in a file's or folder's name: its pid and a digest of its host and pid namespace, as
    "4321.1a2b3c4d" (no "-"), since the instance and uploads folders may be shared by several machines."""
    return f"{os.getpid()}.{_here()}"


def tag_gone(tag: str) -> bool:
    """Whether the process a file_tag() names has stopped; False when that cannot be known here (another host
    or container, or a name without a tag): the file's age decides then. This process's own tag is not gone."""
    pid, _, here = tag.partition(".")
    if not pid.isdigit() or here != _here() or int(pid) == os.getpid():
        return False
    return pid_stopped(int(pid))


def orphaned(model: Any, held: Any, version: Any) -> Any:
    """A claim's `due` condition (services.background.claim): the rows `held` whose claiming process no longer
    runs (gone()), each at the `version` read with its owner, so one another process took since is not taken
    again. `model` has `owner` and `updated_at`."""
    rows = model.select(model.id, version, model.owner, model.updated_at).where(held)
    stopped = [(model.id == r.id) & (version == getattr(r, version.name)) for r in rows if gone(r.owner, r.updated_at)]
    return reduce(operator.or_, stopped, model.id.in_([]))
