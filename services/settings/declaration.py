"""Every setting, declared once (docs/api.md §1): name, kind of value, default, bounds and help. The table
in README.md and docs/api.md is printed from it (`python -m services.settings`). Each account's own
settings are `AccountSchema`'s, named `WECHAT_<CODE>_<NAME>` (docs/api.md §18)."""

import re
from typing import Any

from marshmallow import Schema, ValidationError, validates_schema

from rules import accounts
from rules.limits import WECHAT_ID_PATTERN
from rules.vocabulary import DEFAULT_ACCOUNTS, DEFAULT_WEBHOOK_EVENTS, PAGE_LANGUAGES, TEAM_EVENTS, WEBHOOK_EVENTS
from services.settings import values
from services.settings.values import address, flag, limits, number, parsed, text, whole, words

_SHORT_EVENTS = {"live": "task.live", "live_failed": "task.live_failed"}  # docs/api.md §18's names


def _accounts(value: Any) -> dict[str, str]:
    try:
        return accounts.parse(value)
    except ValueError as exc:
        raise values.Refusal(f"must be code=name pairs separated by commas: {exc}") from None


def _recipients(value: Any) -> dict[str, tuple[str, ...]]:
    """{account: IDs}, or {"": IDs} for every account (the accounts are checked below)."""
    if isinstance(value, dict) or ":" in str(value or ""):
        found = value if isinstance(value, dict) else dict(part.partition(":")[::2] for part in str(value).split(";"))
        found = {str(account).strip(): tuple(values.split_list(ids)) for account, ids in found.items()}
    else:
        found = {"": tuple(values.split_list(value))}
    if bad := [name for names in found.values() for name in names if not re.fullmatch(WECHAT_ID_PATTERN, name)]:
        raise values.Refusal(f"holds {bad[0]!r}, not a WeChat ID (letters, digits, '_', '-')")
    return found


def _team_events(value: Any) -> frozenset[str]:
    events = [_SHORT_EVENTS.get(name, name) for name in values.split_list(value)] or TEAM_EVENTS  # empty: all
    if unknown := sorted(set(events) - set(TEAM_EVENTS)):
        raise values.Refusal(f"names unknown events {', '.join(unknown)}; known: {', '.join(TEAM_EVENTS)}")
    return frozenset(events)


def _addresses(value: Any) -> tuple[str, ...]:
    if bad := [one for one in values.split_list(value) if "@" not in one or any(c.isspace() for c in one)]:
        raise values.Refusal(f"must be e-mail addresses separated by commas; not one: {bad[0]!r}")
    return tuple(values.split_list(value))


def _mass_quota(value: Any) -> tuple[int, str]:
    """'1/day' -> (1, 'day'); '4/month' -> (4, 'month')."""
    if not (match := re.fullmatch(r"\s*([1-9]\d{0,3})\s*/\s*(day|month)\s*", str(value))):
        raise ValueError(value)
    return int(match[1]), match[2]


FEISHU_APP = ("FEISHU_APP_ID", "FEISHU_APP_SECRET", "FEISHU_VERIFICATION_TOKEN", "FEISHU_CHAT_ID")
WECOM_APP = ("WECOM_CORP_ID", "WECOM_AGENT_ID", "WECOM_SECRET", "WECOM_TOKEN", "WECOM_AES_KEY", "WECOM_TO_USERS")


class SettingsSchema(Schema):
    """The service's settings, in the order of the docs' table."""

    REVIEW_INSTANCE_PATH = text("instance", "database, secret key, `config.py`; relative: from the working directory")
    REVIEW_UPLOADS_PATH = text("uploads", "`review/`, `library/`, `feedback/` files; relative: as above")
    HOST = text("127.0.0.1", "where `python app.py` listens")
    PORT = whole(8000, "the port it listens on", 1, 65535)
    THREADS = whole(8, "requests served at the same time")
    SHUTDOWN_GRACE_SECONDS = whole(
        30,
        "after SIGTERM or SIGINT, how long requests in flight (a publish) may finish; then the process exits 0 (§11)",
        0,
        3600,
    )
    CONNECTION_IDLE_SECONDS = whole(30, "an idle keep-alive connection is closed after this (§11)")
    TRUSTED_PROXIES = whole(
        0,
        "reverse proxies in front whose `X-Forwarded-For` (and `-Proto`) are believed (one "
        "nginx: 1, passing `Host $http_host`, `X-Forwarded-For $proxy_add_x_forwarded_for`, "
        "`X-Forwarded-Proto $scheme`); 0 ignores them, so a client cannot choose the address "
        "its limits count",
        0,
    )
    DATABASE_URL = values.database(
        "another database than `instance/review.db` (peewee `db_url`, e.g. `postgresql:"
        "//user:password@host/db`; driver: `pip install -e '.[postgres]'`); unset: SQLite"
    )
    REVIEW_ADMIN_USERNAME = text(
        "",
        "with `REVIEW_ADMIN_PASSWORD`: an admin made or updated at a serving start "
        "(both permissions; one that already matches is left alone)",
    )
    REVIEW_ADMIN_PASSWORD = text("", "that admin's password", secret=True)
    SESSION_COOKIE_SECURE = flag(False, "the Secure flag of the service's cookies (`true` behind HTTPS)")
    PERMANENT_SESSION_LIFETIME = whole(12 * 3600, "seconds of inactivity after which a session ends (§3)")
    LOGIN_MAX_FAILURES = whole(5, "failed sign-ins of a user name or address in the window that stop sign-in (§3)")
    LOGIN_FAILURE_WINDOW_SECONDS = whole(15 * 60, "that window")
    PASSWORD_HASH_METHOD = text(
        "scrypt",
        "how new passwords are hashed (the tests: 1 iteration); stored hashes keep theirs",
        "must be scrypt or pbkdf2:sha256:N (N iterations)",
        pattern=r"^(scrypt(:\d+:\d+:\d+)?|pbkdf2(:sha256|:sha512)(:[1-9]\d*)?)$",
    )
    METRICS_TOKEN = text("", "bearer token of `GET /metrics` (§11); unset: the route is 404", secret=True)
    REVIEW_AGENT_TOKEN = words("", "the agent's token, several for rotation; unset: every agent call is 401")
    REVIEW_AGENT_WEBHOOK_URL = address("", "where agent notifications are POSTed; unset: recorded, not sent")
    REVIEW_AGENT_WEBHOOK_SECRET = text(
        "",
        "the signing secret: `whsec_` + base64 (the decoded bytes are the key) "
        "or any other string (its UTF-8 bytes); unset: unsigned",
        secret=True,
    )
    REVIEW_AGENT_WEBHOOK_EVENTS = words(
        ",".join(DEFAULT_WEBHOOK_EVENTS),
        "the agent notification types sent (§13); every type is recorded, the others as `not_sent`",
        known=WEBHOOK_EVENTS,
        what="event types",
        into=frozenset,
    )
    REVIEW_WEBHOOK_RETRY_DELAYS = values.delays(
        ",".join(f"{d:g}" for d in values.DEFAULT_RETRY_DELAYS),
        "seconds after each failed delivery (agent and team alike), then given up",
    )
    WEBHOOK_SENDER_ENABLED = flag(True, "the agent's webhook deliveries in the background (§4)")
    TEAM_MESSAGES_ENABLED = flag(
        True, "the team's messages (robots, e-mail) in the background, a job per channel", "WEBHOOK_SENDER_ENABLED"
    )
    CHAT_CARDS_ENABLED = flag(
        True, "decision cards sent and redrawn in the team's chat, when an app is set (§22)", "WEBHOOK_SENDER_ENABLED"
    )
    FEEDBACK_INDEXER_ENABLED = flag(True, "the feedback keyword index thread (until indexed, found by direct match)")
    WAL_CHECKPOINTER_ENABLED = flag(True, "the SQLite WAL checkpoint thread (off: SQLite checkpoints in commits)")
    FEEDBACK_CLIENT_TOKENS = values.pairs("", "`channel=token,channel2=token2`; unset: every feedback call is 401")
    FEEDBACK_ANONYMOUS_CHANNELS = words("", "channels limited to the anonymous diagnostic fields (§9)", into=frozenset)
    FEEDBACK_TYPES = words(
        "bug,suggestion,content,account,other",
        "the accepted feedback `type` values",
        what="feedback type",
        at_least_one=True,
    )
    FEEDBACK_MAX_BODY_BYTES = whole(262144, "the largest feedback creation body")
    FEEDBACK_RATE_LIMIT_PER_IP = limits("20/minute;200/day", "feedback per address; empty: no limit")
    FEEDBACK_RATE_LIMIT_PER_DEVICE = limits("10/minute;100/day", "feedback per device")
    FEEDBACK_RATE_LIMIT_PER_VERSION = limits("600/minute", "feedback per app version")
    FEEDBACK_RATE_LIMIT_PER_CHANNEL = limits("1200/minute", "feedback per channel")
    FEEDBACK_DUPLICATE_WINDOW_SECONDS = whole(
        86400, "the same feedback (channel, content, device, address) within this is a 409 `duplicate_feedback`"
    )
    WECHAT_API_BASE = address("https://api.weixin.qq.com", "the platform's base URL")
    WECHAT_ACCOUNTS = parsed(
        _accounts,
        ",".join(DEFAULT_ACCOUNTS),
        "the team's accounts, e.g. `silicon-rise=Silicon "
        "Rise,moon-walk` (§18); pages, robots and e-mail show the names",
        "must be code=name pairs separated by commas",
    )
    WECHAT_PUBLISH_POLL_DELAYS = values.delays(
        "60,120,300,600,1800,3600",
        "seconds before each `freepublish/get`, from the submission then each poll; then hourly for 24 h (§18)",
    )
    WECHAT_EVENT_MAX_AGE = whole(
        300,
        "seconds a pushed event's `timestamp` may be from this machine's clock (NTP), either way; beyond: 403 (§18)",
        1,
        86400,
    )
    WECHAT_LIVE_WORKER_ENABLED = flag(True, "the live worker thread: scheduled going live and result polls (§18)")
    WECHAT_EDITIONS_ENABLED = flag(
        True, "editions' sends to followers and their results in the background (§21)", "WECHAT_LIVE_WORKER_ENABLED"
    )
    WECHAT_STATS_ENABLED = flag(True, "the statistics thread: the daily fetch of what readers did (§19)")
    WECHAT_STATS_HOUR = whole(9, "the hour (`REVIEW_TIME_ZONE`) from which the day before is fetched (§19)", 0, 23)
    WECHAT_STATS_DAYS = whole(7, "how many days after going live an article's figures are fetched (§19)", 1, 365)
    WECHAT_COMMENTS_ENABLED = flag(True, "the comments job: readers' comments of live articles fetched (§23)")
    WECHAT_COMMENTS_MINUTES = whole(10, "minutes between two fetches of a live article's comments (§23)", 1, 1440)
    WECHAT_COMMENTS_DAYS = whole(14, "how many days after going live an article's comments are fetched (§23)", 1, 365)
    WECHAT_COMMENTS_MAX = whole(5000, "comments of one article read in one fetch, at most (§23)", 49, 100000)
    WECHAT_TIMEOUT_SECONDS = number(20.0, "time limit of each platform call (connecting, and the whole answer)", 600)
    WECHAT_UPLOAD_CONCURRENCY = whole(4, "images of one publish uploaded at once (§12)", 1, 32)
    WECHAT_PREVIEW_RECIPIENTS = parsed(
        _recipients,
        "",
        "WeChat IDs offered for a phone preview: `silicon-rise: id1, "
        "id2; carbon-fitness: id3`, or `id1, id2` for every account (§12)",
        "must be WeChat IDs",
    )
    WECHAT_THEME_OVERRIDES = parsed(
        dict,
        {},
        "`config.py` only: per account, theme CSS variables over the "
        'template\'s, e.g. `{"silicon-rise": {"--primary-color": "#1e6fff"}}` (§5)',
        "must be a dict of dicts",
        env=False,
    )
    REVIEW_COVER_RATIO_MIN = number(1.0, "the narrowest article cover, width/height")
    REVIEW_COVER_RATIO_MAX = number(2.5, "the widest")
    REVIEW_REMOTE_IMAGE_HOSTS = words("mmbiz.qpic.cn", "hosts remote library images may come from (exact names)")
    REVIEW_REMOTE_IMAGE_ALLOW_PRIVATE = flag(False, "let those hosts resolve to private or loopback addresses")
    REVIEW_PRESENCE_SECONDS = whole(60, "how long a task page's heartbeat counts (§15)")
    REVIEW_DEFAULT_LANGUAGE = text(
        "zh-CN",
        "the admin pages' language when neither cookie nor browser decides, and the team messages' (§14)",
        f"must be {' or '.join(PAGE_LANGUAGES)}",
        pattern=f"^({'|'.join(PAGE_LANGUAGES)})$",
    )
    REVIEW_TIME_ZONE = values.zone("Asia/Shanghai", "the pages' zone until their script shows the browser's (§14)")
    # Who hears of tasks (§15). A robot's address holds its key: never shown.
    NOTIFY_WECOM_WEBHOOK_URL = address(
        "", "WeCom group robot: `https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=…`", secret=True
    )
    NOTIFY_FEISHU_WEBHOOK_URL = address("", "Feishu bot: `https://open.feishu.cn/open-apis/bot/v2/hook/…`", secret=True)
    NOTIFY_FEISHU_SECRET = text("", "its signature secret; unset: not signed", secret=True)
    NOTIFY_DINGTALK_WEBHOOK_URL = address(
        "", "DingTalk custom robot: `https://oapi.dingtalk.com/robot/send?access_token=…`", secret=True
    )
    NOTIFY_DINGTALK_SECRET = text("", "its signing secret, `SEC…`; unset: not signed", secret=True)
    NOTIFY_EMAIL_TO = parsed(_addresses, "", "addresses e-mailed through `SMTP_HOST`", "must be e-mail addresses")
    SMTP_HOST = text("", "the mail server")
    SMTP_PORT = whole(587, "its port", 1, 65535)
    SMTP_USER = text("", "the login; unset: none")
    SMTP_PASSWORD = text("", "its password", secret=True)
    SMTP_STARTTLS = flag(True, "upgrade the connection before the login (the certificate is checked)")
    SMTP_FROM = text("", "the sender's address; unset: `SMTP_USER`")
    NOTIFY_EVENTS = parsed(_team_events, "", "the events the team hears of (§15); empty: all", "must be event names")
    REVIEW_PUBLIC_URL = address("", "e.g. `https://review.example.com`: links in messages are absolute; unset: paths")
    # The chat apps' decision cards (§22): each app is on when all its settings but the optional are set.
    FEISHU_APP_ID = text("", "a Feishu (Lark) self-built app with the bot capability that sends decision cards")
    FEISHU_APP_SECRET = text("", "its App Secret", secret=True)
    FEISHU_VERIFICATION_TOKEN = text("", "its callbacks' Verification Token", secret=True)
    FEISHU_ENCRYPT_KEY = text(
        "", "its Encrypt Key: callbacks encrypted and signed (set it); unset: plaintext", secret=True
    )
    FEISHU_CHAT_ID = text("", "the group the cards go to (`oc_…`); the app's bot must be in it")
    FEISHU_API_BASE = address("https://open.feishu.cn", "Feishu's API (Lark: `https://open.larksuite.com`)")
    WECOM_CORP_ID = text("", "a WeCom self-built app that sends decision cards: the corp id")
    WECOM_AGENT_ID = text("", "the app's AgentId", "must be the app's AgentId (digits)", pattern=r"^(\d{1,12})?$")
    WECOM_SECRET = text("", "the app's Secret", secret=True)
    WECOM_TOKEN = text("", "its callback URL's Token", secret=True)
    WECOM_AES_KEY = text(
        "",
        "its callback URL's EncodingAESKey",
        "must be the 43 characters WeCom shows as EncodingAESKey",
        secret=True,
        pattern=r"^([A-Za-z0-9+/]{43})?$",
    )
    WECOM_TO_USERS = text("", "who gets the cards: `userid|userid`, or `@all`")
    WECOM_API_BASE = address("https://qyapi.weixin.qq.com", "WeCom's API")

    @validates_schema
    def _together(self, data: dict[str, Any], **_kwargs: Any) -> None:
        """What one value cannot say alone."""
        if unknown := sorted(set(data["WECHAT_PREVIEW_RECIPIENTS"]) - {"", *data["WECHAT_ACCOUNTS"]}):
            raise ValidationError(
                f"names unknown accounts {', '.join(unknown)}; write account: id1, id2; other-account: id3",
                "WECHAT_PREVIEW_RECIPIENTS",
            )
        if data["REVIEW_COVER_RATIO_MIN"] > data["REVIEW_COVER_RATIO_MAX"]:
            raise ValidationError(
                f"must be at most REVIEW_COVER_RATIO_MAX ({data['REVIEW_COVER_RATIO_MAX']}), not "
                f"{data['REVIEW_COVER_RATIO_MIN']}",
                "REVIEW_COVER_RATIO_MIN",
            )
        if data["NOTIFY_EMAIL_TO"] and not data["SMTP_HOST"].strip():
            raise ValidationError("must name the mail server when NOTIFY_EMAIL_TO is set", "SMTP_HOST")
        if data["NOTIFY_EMAIL_TO"] and "@" not in (data["SMTP_FROM"] or data["SMTP_USER"]):
            raise ValidationError("(or SMTP_USER) must be the sender's address with NOTIFY_EMAIL_TO", "SMTP_FROM")
        for names in (FEISHU_APP, WECOM_APP):  # an app is all of its settings, or none
            if missing := [name for name in names if not data[name]] if any(data[n] for n in names) else []:
                raise ValidationError(f"must be set too: the app needs {', '.join(names)}", missing[0])


class AccountSchema(Schema):
    """Each account's own settings, `WECHAT_<CODE>_<NAME>` (`<CODE>`: upper case, `-` as `_`; docs/api.md §18)."""

    APPID = text("", "the account's platform AppID; unset: its publishes fail with `lastError` naming it")
    SECRET = text("", "its AppSecret", secret=True)
    TOKEN = text("", "its server URL's token; unset: the server URL is 404 (results by polling)", secret=True)
    AES_KEY = text(
        "",
        "its EncodingAESKey for safe mode",
        "must be the 43 characters the platform shows as EncodingAESKey",
        secret=True,
        pattern=r"^([A-Za-z0-9+/]{43})?$",
    )
    MASS_QUOTA = parsed(
        _mass_quota,
        "1/day",
        "mass sends allowed, `N/day` or `N/month` (`REVIEW_TIME_ZONE`'s): a "
        "subscription account 1/day, a service account 4/month",
        "must be N/day or N/month",
    )
    MASS_PROTECTION = flag(False, "mass-send protection is on: an administrator confirms each send in WeChat")
    COMMENTS = flag(
        True,
        "the account has the comment privilege; `false`: image posts default to comments off and are sent "
        "with `need_open_comment` 0 (the platform answers 88000 otherwise, §5)",
    )
