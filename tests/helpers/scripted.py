"""A raw TCP server on 127.0.0.1 that plays a script to each connection: for peers that misbehave in
ways no real server library would (trickled greetings and headers, silence, plain text for TLS)."""

import socket
import threading


class ScriptedServer:
    """Each connection runs `script(conn, stopping)` on a thread of its own; a broken connection ends
    it quietly, and the connection is closed after. `stopping` is set by stop()."""

    def __init__(self, script):
        self.script, self.stopping = script, threading.Event()
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._play, args=(conn,), daemon=True).start()

    def _play(self, conn):
        try:
            self.script(conn, self.stopping)
        except OSError:
            pass
        finally:
            conn.close()

    def stop(self):
        self.stopping.set()
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the accept(): close() alone leaves its thread blocked
        except OSError:
            pass
        self.sock.close()
