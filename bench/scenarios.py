"""The requests each benchmark scenario sends."""

import itertools
import uuid

from bench.common import json_request, login_cookie
from bench.seed import feedback_payload, task_payload
from bench.settings import ADMIN, AGENT_TOKEN, CLIENT_TOKEN


def build(port, ids):
    """name -> (make_request(n), connections or None for the default). Latency scenarios use 1."""
    cookie = {"cookie": login_cookie(port, *ADMIN)}
    run = uuid.uuid4().hex[:8]
    task_ids = ids["task_ids"]
    return {
        "bare": (lambda n: json_request("GET", "/__bench/bare"), None),
        "task_detail": (
            lambda n: json_request("GET", f"/api/review/tasks/{task_ids[n % len(task_ids)]}", headers=cookie),
            None,
        ),
        "create_task": (
            lambda n: json_request(
                "POST",
                "/api/review/agent/tasks",
                task_payload(n, tag=run),
                {"x-review-agent-token": AGENT_TOKEN},
                (201,),
            ),
            None,
        ),
        "create_feedback": (
            lambda n: json_request(
                "POST",
                "/api/feedbacks",
                feedback_payload(n, tag=run),
                {"x-feedback-client-token": CLIENT_TOKEN},
                (201,),
            ),
            None,
        ),
        "task_detail_one": (
            lambda n: json_request("GET", f"/api/review/tasks/{task_ids[n % len(task_ids)]}", headers=cookie),
            1,
        ),
        "list_tasks": (lambda n: json_request("GET", "/api/review/tasks?status=all&limit=50", headers=cookie), 1),
        "feedback_keyword": (
            lambda n: json_request(
                "GET", f"/api/feedbacks?keyword={_quote(ids['keyword'])}&platform=ios&pageSize=20", headers=cookie
            ),
            1,
        ),
    }


def mixed(plan):
    """Reads and writes interleaved, as a day of use would."""
    order = ["task_detail", "list_tasks", "create_task", "task_detail", "create_feedback", "feedback_keyword"]
    cycle = itertools.cycle(order)
    return lambda n: plan[next(cycle)][0](n)


def _quote(text):
    from urllib.parse import quote

    return quote(text)
