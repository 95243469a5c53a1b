"""Log lines that request data cannot forge (CONTRACT §11 Logs).

A path, header, user name or platform message can carry a newline; logged raw it starts a line that
looks like the service's own ("...%0A2026-11-24 23:59:59,000 INFO review admin account mallory
created"). The filter escapes every control character of a record's message on the handlers it
guards; tracebacks, which the formatter appends afterwards, keep their lines.
"""
import logging
import re

_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def escape_controls(text: str) -> str:
    """'a\\nb' -> 'a\\\\x0ab': control characters as visible escapes."""
    return _UNSAFE.sub(lambda match: match.group().encode("unicode_escape").decode("ascii"), text)


class EscapeControls(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if _UNSAFE.search(message):
            record.msg, record.args = escape_controls(message), None
        return True


def guard(logger: logging.Logger) -> None:
    """Add the filter to every handler of `logger` (once each)."""
    for handler in logger.handlers:
        if not any(isinstance(existing, EscapeControls) for existing in handler.filters):
            handler.addFilter(EscapeControls())

