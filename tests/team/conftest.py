"""The team notification tests' fake robots (the secrets and the rest: tests/helpers/team.py)."""

import pytest

from fakeplatform.robots import FakeRobot
from tests.helpers.team import DINGTALK_SECRET, FEISHU_SECRET


@pytest.fixture
def robots():
    """{kind: FakeRobot} for WeCom, Feishu (signed) and DingTalk (signed), running."""
    found = {
        "wecom": FakeRobot("wecom"),
        "feishu": FakeRobot("feishu", secret=FEISHU_SECRET),
        "dingtalk": FakeRobot("dingtalk", key="ding-token-42", secret=DINGTALK_SECRET),
    }
    yield found
    for robot in found.values():
        robot.stop()
