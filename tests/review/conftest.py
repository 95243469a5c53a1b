"""The review area's own fixtures: a pending task, and a second admin (presence, concurrency)."""

import pytest

from tests.helpers.app import create_admin, login
from tests.helpers.review import article_payload, create_task


@pytest.fixture
def task(client, agent_headers):
    return create_task(client, agent_headers, article_payload())


@pytest.fixture
def bob(app):
    """A test client signed in as a second admin, bob (review only)."""
    create_admin("bob", permissions="review")
    other = app.test_client()
    login(other, "bob")
    return other
