"""XML from outside (the platform's pushes, WeCom's callbacks), read by a parser made for hostile input: no DTD,
no entities, in whatever encoding its declaration names. One place, so every way such a body can fail to read
is one exception."""

import xml.etree.ElementTree as ET

from defusedxml.ElementTree import fromstring


class UnreadableXml(ValueError):
    """Not XML that can be read; its reason is the parser's exception's name."""


def read(body: bytes | str) -> ET.Element:
    try:
        return fromstring(body, forbid_dtd=True)
    # ParseError (a SyntaxError) for bad XML, ValueError for defusedxml's refusals and a codec's failure,
    # LookupError for an encoding Python does not know or one that is not text (hex, rot13, zlib ...)
    except (SyntaxError, ValueError, LookupError) as exc:
        raise UnreadableXml(type(exc).__name__) from None
