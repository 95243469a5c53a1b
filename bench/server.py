"""The service under benchmark, plus a bare Flask endpoint on the same server as the baseline.

Run by bench/common.py as a subprocess: python bench/server.py INSTANCE UPLOADS PORT
"""
import logging
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import waitress  # noqa: E402

from app import create_app  # noqa: E402
from bench.settings import BENCH_CONFIG  # noqa: E402


def main():
    instance, uploads, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    app = create_app({**BENCH_CONFIG, "REVIEW_INSTANCE_PATH": instance, "REVIEW_UPLOADS_PATH": uploads})

    @app.get("/__bench/bare")
    def bare():
        return {"ok": True}

    logging.basicConfig(level=logging.ERROR)  # access logs off: measure the app, not the terminal
    waitress.serve(app, host="127.0.0.1", port=port, threads=8, ident="bench", _quiet=True)


if __name__ == "__main__":
    main()
