"""A real HTTP webhook receiver on 127.0.0.1 that records what it gets and can be told to fail."""

import threading

from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response


class WebhookReceiver:
    def __init__(self):
        self.received = []  # (headers dict, raw body bytes)
        self.fail_statuses = []  # statuses to answer, in order, before answering 204
        self.arrived = threading.Condition()
        self._server = make_server("127.0.0.1", 0, self._app, threaded=True)
        self.url = f"http://127.0.0.1:{self._server.server_port}/hooks/review"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @Request.application
    def _app(self, request):
        with self.arrived:
            self.received.append(({k.lower(): v for k, v in request.headers.items()}, request.get_data()))
            status = self.fail_statuses.pop(0) if self.fail_statuses else 204
            self.arrived.notify_all()
        return Response(status=status)

    def wait_for(self, count, timeout=10):
        with self.arrived:
            return self.arrived.wait_for(lambda: len(self.received) >= count, timeout)

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._server.shutdown()
