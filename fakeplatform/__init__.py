"""A fake WeChat Official Account platform for tests and offline trials (`python -m fakeplatform`), and fake
Feishu/WeCom chat apps (fakeplatform.chatapps)."""

from fakeplatform.chatapps import FakeChatApps, describe_card
from fakeplatform.server import FakePlatform

__all__ = ["FakeChatApps", "FakePlatform", "describe_card"]
