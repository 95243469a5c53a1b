"""The admin session cookie (CONTRACT §3): Flask's signed cookie, made cheap on the hot path.

Flask verifies and decodes the cookie on every request and signs a new one into every response
(~0.25 ms per admin request). Here a cookie value is verified once and remembered, and a session
is re-signed only when its cookie is older than REFRESH_AFTER seconds. The idle lifetime still
slides: a session ends between PERMANENT_SESSION_LIFETIME minus REFRESH_AFTER and the full
lifetime after its last use, never later.
"""
import time

from flask.sessions import SecureCookieSession, SecureCookieSessionInterface
from itsdangerous import BadSignature

REFRESH_AFTER = 60.0
_REMEMBERED = 1024  # verified cookie values kept; the cache starts over when full


class Session(SecureCookieSession):
    issued_at = None  # epoch seconds at which the cookie this session came from was signed


class SessionInterface(SecureCookieSessionInterface):
    session_class = Session

    def __init__(self):
        self._verified = {}  # (secret key, cookie value) -> (data, issued_at)
        self._serializers = {}

    def get_signing_serializer(self, app):
        key = (app.secret_key, tuple(app.config["SECRET_KEY_FALLBACKS"] or ()))
        serializer = self._serializers.get(key)
        if serializer is None and app.secret_key:
            serializer = self._serializers[key] = super().get_signing_serializer(app)
        return serializer

    def open_session(self, app, request):
        serializer = self.get_signing_serializer(app)
        if serializer is None:
            return None
        value = request.cookies.get(self.get_cookie_name(app))
        if not value:
            return self.session_class()
        key = (app.secret_key, value)
        known = self._verified.get(key)
        if known is None:
            try:
                data, signed = serializer.loads(value, return_timestamp=True)
            except BadSignature:
                return self.session_class()
            if len(self._verified) >= _REMEMBERED:
                self._verified.clear()
            known = self._verified[key] = (data, signed.timestamp())
        data, issued_at = known
        if not 0 <= time.time() - issued_at <= app.permanent_session_lifetime.total_seconds():
            return self.session_class()  # expired (or signed in the future)
        session = self.session_class(data)  # a copy: the remembered data stays as verified
        session.issued_at = issued_at
        return session

    def should_set_cookie(self, app, session):
        if session.modified:
            return True
        if not (session.permanent and app.config["SESSION_REFRESH_EACH_REQUEST"]):
            return False
        refresh_after = min(REFRESH_AFTER, app.permanent_session_lifetime.total_seconds() / 4)
        return session.issued_at is None or time.time() - session.issued_at >= refresh_after
