"""Log lines that request data cannot forge (docs/api.md §11 Logs): the filter escapes every control
character of a record's message (tracebacks, appended afterwards by the formatter, keep their lines).

It also masks the credentials that travel in URLs, should a library log one (urllib3 does at DEBUG):
a group robot's webhook key (docs/api.md §15) and the platform's `access_token`.
"""

import logging
import re

_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_URL_SECRETS = re.compile(r"([?&](?:key|access_token|sign)=|/open-apis/bot/v2/hook/)[^&\s\"'#]+")


def escape_controls(text: str) -> str:
    """'a\\nb' -> 'a\\\\x0ab': control characters as visible escapes."""
    return _UNSAFE.sub(lambda match: match.group().encode("unicode_escape").decode("ascii"), text)


def mask_url_secrets(text: str) -> str:
    """'…/send?key=abc&x=1' -> '…/send?key=***&x=1'"""
    return _URL_SECRETS.sub(r"\1***", text)


class EscapeControls(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if _UNSAFE.search(message) or _URL_SECRETS.search(message):
            record.msg, record.args = mask_url_secrets(escape_controls(message)), None
        return True


def guard(logger: logging.Logger) -> None:
    """Add the filter to every handler of `logger` (once each)."""
    for handler in logger.handlers:
        if not any(isinstance(existing, EscapeControls) for existing in handler.filters):
            handler.addFilter(EscapeControls())
