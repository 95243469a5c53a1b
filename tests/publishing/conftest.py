"""Publishing tests run the service pointed at the fake platform (`platform_app`, tests/conftest.py)."""

import pytest


@pytest.fixture
def app(platform_app):
    return platform_app
