"""No kind of background work waits behind another (docs/conventions.md "Background work"):
a `python app.py` whose agent webhook receiver hangs on every delivery still goes live at once."""

import base64
import threading
import time

from werkzeug.wrappers import Request, Response

from fakeplatform.threaded import Served
from tests.helpers.live_processes import published, service
from tests.helpers.served import wait_until

SECRET = "whsec_" + base64.b64encode(b"0123456789abcdef0123456789abcdef").decode()


class HangingReceiver:
    """Takes every delivery and answers none until released (or a minute passes)."""

    def __init__(self):
        self.arrived, self.released = threading.Event(), threading.Event()
        self._served = Served(self._app)
        self.url = f"{self._served.url}/hooks/review"

    @Request.application
    def _app(self, request):
        request.get_data()
        self.arrived.set()
        self.released.wait(60)
        return Response(status=204)

    def stop(self):
        self.released.set()
        self._served.stop()


def test_going_live_is_not_held_back_by_a_hanging_webhook_receiver(tmp_path, settings, fake):
    receiver = HangingReceiver()
    hooks = {
        "WEBHOOK_SENDER_ENABLED": "true",
        "REVIEW_AGENT_WEBHOOK_URL": receiver.url,
        "REVIEW_AGENT_WEBHOOK_SECRET": SECRET,
        "REVIEW_AGENT_WEBHOOK_EVENTS": "review_task.published,review_task.live",
    }
    try:
        with service(tmp_path, {**settings, **hooks}) as (base, session, _process):
            task = published(base, session)  # its review_task.published delivery now hangs
            assert receiver.arrived.wait(30), "no webhook was delivered"
            asked = time.monotonic()
            answer = session.post(f"{base}/api/review/tasks/{task['id']}/go-live", json={}, timeout=10)
            assert answer.status_code == 202, answer.text
            wait_until(lambda: fake.requests_to("freepublish/submit"), 30, "never submitted")
            # The old single scheduler thread reached the platform only after the delivery's 30 s deadline.
            assert time.monotonic() - asked < 5
    finally:
        receiver.stop()
