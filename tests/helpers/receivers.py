"""A real HTTP webhook receiver on 127.0.0.1 that records what it gets and can be told to fail."""

import threading

from werkzeug.wrappers import Request, Response

from fakeplatform.threaded import Served


class WebhookReceiver:
    def __init__(self):
        self.received = []  # (headers dict, raw body bytes)
        self.fail_statuses = []  # statuses to answer, in order, before answering 204
        self.arrived = threading.Condition()
        self._served = Served(self._app)
        self.url = f"{self._served.url}/hooks/review"

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

    def stop(self):
        self._served.stop()
