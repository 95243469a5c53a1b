"""A WSGI app on a werkzeug server in a daemon thread on 127.0.0.1: the fakes, and the receivers and hosts
the tests stand up beside the service."""

import threading

from werkzeug.serving import make_server

POLL_SECONDS = 0.05  # serve_forever's look for shutdown(): stop() waits this long, not werkzeug's 0.5 s


class Served:
    """Serving from construction until stop(); `url` is its base (http://127.0.0.1:<port>)."""

    def __init__(self, app, host="127.0.0.1", port=0, handler=None, name="served"):
        extra = {"request_handler": handler} if handler else {}
        self.server = make_server(host, port, app, threaded=True, **extra)
        self.url = f"http://{host}:{self.server.server_port}"
        self._thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": POLL_SECONDS}, daemon=True, name=name
        )
        self._thread.start()

    def wait(self):
        """Until stopped (a process that only serves)."""
        self._thread.join()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(10)
