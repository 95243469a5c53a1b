"""Which platform article a task is (docs/api.md §23): the send's msg_data_id and the article's index in it,
from 0. A task live alone is its send's only article; an edition's task keeps `<msg_data_id>_<n>` with n from 1
(docs/api.md §21), the platform's comment calls count from 0."""

from dataclasses import dataclass
from datetime import timedelta

from models.live import TaskLive
from rules.client_input import whole_number
from rules.ids import iso, utcnow
from services.settings import Settings


@dataclass(frozen=True)
class Article:
    task_pk: int
    account: str
    msg_data_id: str
    index: int


def article_of(live: TaskLive | None) -> Article | None:
    """The article of a live task, or None (not live, or the platform gave no msg_data_id)."""
    if live is None or live.status != "live" or not live.msg_data_id:
        return None
    msg_data_id, index = str(live.msg_data_id), 0
    if live.via == "mass_send" and "_" in msg_data_id:
        base, _, place = msg_data_id.rpartition("_")
        if (number := whole_number(place, 3)) is not None and number >= 1:
            msg_data_id, index = base, number - 1
    return Article(live.task_id, live.account, msg_data_id, index)


def live_articles(settings: Settings, account: str | None = None) -> list[Article]:
    """The articles that went live or were sent within WECHAT_COMMENTS_DAYS, of configured accounts that have
    the comment privilege (one without it answers every comment/list 88000)."""
    since = iso(utcnow() - timedelta(days=settings.comments_days))
    query = TaskLive.select().where(
        (TaskLive.status == "live") & TaskLive.msg_data_id.is_null(False) & (TaskLive.live_at >= since)
    )
    if account is not None:
        query = query.where(TaskLive.account == account)
    found = (article_of(live) for live in query.order_by(TaskLive.live_at))
    listed = set(settings.accounts) - settings.comments_closed
    return [article for article in found if article is not None and article.account in listed]
