"""A fake WeChat Official Account platform for tests and offline trials (`python -m fakeplatform`)."""
from fakeplatform.server import FakePlatform

__all__ = ["FakePlatform"]
