"""The SSRF-guarded remote image fetcher of the package export (services/images/fetch.py)."""

import pytest
import requests

from services.images import fetch as remote
from services.images.fetch import FetchRefused, address_allowed, fetch_to_file
from tests.helpers.export import ImageServer


@pytest.fixture
def image_server():
    server = ImageServer()
    yield server
    server.stop()


@pytest.mark.parametrize(
    "address, public",
    [
        ("8.8.8.8", True),
        ("127.0.0.1", False),
        ("10.1.2.3", False),
        ("192.168.1.1", False),
        ("169.254.169.254", False),
        ("100.64.0.1", False),
        ("0.0.0.0", False),
        ("224.0.0.1", False),
        ("::1", False),
        ("fe80::1", False),
        ("fc00::1", False),
        ("::ffff:127.0.0.1", False),
        ("2001:4860:4860::8888", True),
        ("2002:7f00:1::1", False),
        ("2002:c0a8:101::1", False),
        ("64:ff9b::7f00:1", False),  # 6to4, NAT64 inside
        ("2002:808:808::1", True),
        ("64:ff9b::808:808", True),
    ],
)
def test_only_public_addresses_pass_by_default(address, public):
    assert address_allowed(address) is public


@pytest.mark.parametrize(
    "url, message",
    [
        ("ftp://127.0.0.1/a.png", "only http and https"),
        ("file:///etc/passwd", "only http and https"),
        ("http://user:pw@127.0.0.1/a.png", "credentials"),
        ("http://127.0.0.2/a.png", "not in REVIEW_REMOTE_IMAGE_HOSTS"),
        ("http://127.0.0.1.evil.example/a.png", "not in REVIEW_REMOTE_IMAGE_HOSTS"),
    ],
)
def test_fetcher_refuses_urls_outside_the_rules(tmp_path, url, message):
    with pytest.raises(FetchRefused, match=message):
        fetch_to_file(url, tmp_path / "f", allowed_hosts=["127.0.0.1"], allow_private=True)
    assert not (tmp_path / "f").exists()


def test_fetcher_refuses_loopback_unless_allowed(tmp_path, image_server):
    url = image_server.add("ok.png", b"12345")
    with pytest.raises(FetchRefused, match="non-public address"):
        fetch_to_file(url, tmp_path / "f", allowed_hosts=["127.0.0.1"])
    assert image_server.hits == []  # refused before any connection
    assert fetch_to_file(url, tmp_path / "f", allowed_hosts=["127.0.0.1"], allow_private=True) == 5
    assert (tmp_path / "f").read_bytes() == b"12345"


def test_fetcher_stops_at_the_size_cap(tmp_path, image_server):
    url = image_server.add("six.png", b"x" * 6)
    with pytest.raises(FetchRefused, match="larger than"):
        fetch_to_file(url, tmp_path / "f", allowed_hosts=["127.0.0.1"], allow_private=True, max_bytes=5)


def test_the_connected_address_is_checked_again(image_server):
    """A name that resolved to a public address at the check but connects to loopback (DNS rebinding)."""
    url = image_server.add("ok.png", b"12345")
    with (
        remote._session(allow_private=False) as session,
        pytest.raises(requests.ConnectionError, match="non-public address"),
    ):
        session.get(url, timeout=5)
    assert image_server.hits == []
    with remote._session(allow_private=True) as session:
        assert session.get(url, timeout=5).content == b"12345"
