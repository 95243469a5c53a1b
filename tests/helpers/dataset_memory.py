"""The dataset export's peak memory, measured in a process of its own on the test app's store: tracemalloc
counts every thread of a process, and an xdist worker carries threads earlier tests left (servers' request
threads, their fakes), which a loaded CI run saw allocating during the export (19 times a task's comments)."""

import json
import subprocess
import sys

from tests.helpers.served import ROOT

_CHILD = """
import json, sys, tracemalloc
from app import create_app
from models import db
from services.export.dataset import dataset_chunks, dataset_query
create_app(json.loads(sys.argv[1]), serve=False, hold=False)
with db.connection_context():
    chunks = dataset_chunks(dataset_query(sys.argv[2], None, None, None, None))
    tracemalloc.start()
    lines = sum(chunk.count("\\n") for chunk in chunks)
    peak = tracemalloc.get_traced_memory()[1]
print(json.dumps({"lines": lines, "peak": peak}))
"""


def export_peak(app, format):
    """(lines, peak bytes) of the `format` export of everything decided, as the route streams it."""
    config = {key: value for key, value in app.config.items() if key.isupper() and isinstance(value, (str, int, float))}
    config.update({name: False for name in config if name.endswith("_ENABLED")})
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(config), format],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    return answer["lines"], answer["peak"]
