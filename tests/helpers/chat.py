"""Tasks for the chat's decision cards (docs/api.md §22): one option per field, or choices left."""
import time

from tests.helpers.review import article_payload, create_task, make_asset


def one_option_task(app, client, agent_headers, title="芯片的一个问题"):
    """An article whose every field has one candidate: nothing is left to choose."""
    cover = make_asset(app, 900, 500)
    payload = article_payload([cover["url"]], topic=title)
    payload["candidates"].update(titles=[title], summaries=["一句话摘要"], authors=["硅基君"],
                                 bodyOptions=[payload["candidates"]["bodyOptions"][0]])
    return create_task(client, agent_headers, payload)


def link(app, username, feishu=None, wecom=None):
    args = ["link-chat", username, *(["--feishu", feishu] if feishu else []), *(["--wecom", wecom] if wecom else [])]
    result = app.test_cli_runner().invoke(args=args)
    assert result.exit_code == 0, result.output
    return result.output


def wait_for(predicate, seconds=15, what="the card"):
    deadline = time.monotonic() + seconds
    while not (found := predicate()):
        assert time.monotonic() < deadline, f"{what} did not come"
        time.sleep(0.05)
    return found
