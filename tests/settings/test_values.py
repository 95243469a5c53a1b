"""What settings read as (docs/api.md §1): the typed values services receive."""

from datetime import timedelta

from services.settings import DEFAULTS, Account, Settings, parse
from services.settings.values import DEFAULT_RETRY_DELAYS


def test_the_defaults_read_as_documented():
    settings = Settings.with_defaults()
    assert settings.webhook_retry_delays == DEFAULT_RETRY_DELAYS
    assert settings.publish_poll_delays == (60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0)
    assert settings.feedback_rate_limits == {
        "ip": ((20, 60), (200, 86400)),
        "device": ((10, 60), (100, 86400)),
        "version": ((600, 60),),
        "channel": ((1200, 60),),
    }
    assert settings.accounts == {"silicon-rise": "silicon-rise", "carbon-fitness": "carbon-fitness"}
    assert settings.wechat_accounts["silicon-rise"] == Account("", "", "", "", (1, "day"), False)
    assert settings.wechat_credentials == {} and settings.wechat_event_keys == {}
    assert (settings.hash_method, settings.cover_ratio, settings.time_zone.key) == (
        "scrypt",
        (1.0, 2.5),
        "Asia/Shanghai",
    )
    assert DEFAULTS["PASSWORD_HASH_METHOD"] == "scrypt" and DEFAULTS["SHUTDOWN_GRACE_SECONDS"] == 30


def test_blank_schedules_of_delays_are_the_defaults():
    settings = Settings.with_defaults({"WECHAT_PUBLISH_POLL_DELAYS": "  ", "REVIEW_WEBHOOK_RETRY_DELAYS": ""})
    assert settings.publish_poll_delays == Settings.with_defaults().publish_poll_delays
    assert settings.webhook_retry_delays == DEFAULT_RETRY_DELAYS
    assert Settings.with_defaults({"REVIEW_WEBHOOK_RETRY_DELAYS": "0, 2.5"}).webhook_retry_delays == (0.0, 2.5)


def test_lists_pairs_and_limits():
    settings = Settings.with_defaults(
        {
            "REVIEW_AGENT_TOKEN": "old-token, new-token",
            "FEEDBACK_CLIENT_TOKENS": "web = t1, ios=t2",
            "REVIEW_AGENT_WEBHOOK_EVENTS": "review_task.rejected,review_task.live",
            "FEEDBACK_RATE_LIMIT_PER_IP": "",
            "FEEDBACK_RATE_LIMIT_PER_DEVICE": "5 per 10 minutes; 50/hours",
            "REVIEW_REMOTE_IMAGE_ALLOW_PRIVATE": " On ",
            "SMTP_STARTTLS": "FALSE",
        }
    )
    assert settings.agent_tokens == ("old-token", "new-token")
    assert settings.feedback_client_tokens == {"web": "t1", "ios": "t2"}
    assert settings.webhook_events == frozenset({"review_task.rejected", "review_task.live"})
    assert settings.feedback_rate_limits["ip"] == ()  # no limit
    assert settings.feedback_rate_limits["device"] == ((5, 600), (50, 3600))
    assert settings.remote_image_allow_private is True and settings.team.smtp is None
    assert parse({**DEFAULTS, "SMTP_STARTTLS": "FALSE", "PORT": " 8001 "})["SMTP_STARTTLS"] is False
    assert "t1" not in repr(settings) and "old-token" not in repr(settings)


def test_preview_recipients_per_account_or_for_every_account():
    def offered(value):
        return Settings.with_defaults({"WECHAT_PREVIEW_RECIPIENTS": value}).wechat_preview_recipients

    assert offered("silicon-rise: wx_a, wx_b; carbon-fitness: wx_c") == {
        "silicon-rise": ("wx_a", "wx_b"),
        "carbon-fitness": ("wx_c",),
    }
    assert offered("wx_a,wx_b") == {"silicon-rise": ("wx_a", "wx_b"), "carbon-fitness": ("wx_a", "wx_b")}
    assert offered({"carbon-fitness": "wx_c"}) == {"silicon-rise": (), "carbon-fitness": ("wx_c",)}
    assert offered("") == {"silicon-rise": (), "carbon-fitness": ()}


def test_each_accounts_own_settings():
    settings = Settings.with_defaults(
        {
            "WECHAT_ACCOUNTS": "silicon-rise=硅基崛起,moon-walk",
            "WECHAT_MOON_WALK_APPID": "wx-moon",
            "WECHAT_MOON_WALK_SECRET": "s3cret",
            "WECHAT_MOON_WALK_TOKEN": "tok",
            "WECHAT_MOON_WALK_MASS_QUOTA": " 4 / month",
            "WECHAT_MOON_WALK_MASS_PROTECTION": "true",
            "WECHAT_SILICON_RISE_APPID": "wx-only-appid",
        }
    )
    moon = settings.wechat_accounts["moon-walk"]
    assert (moon.mass_quota, moon.mass_protection) == ((4, "month"), True)
    assert settings.wechat_accounts["silicon-rise"].mass_quota == (1, "day")
    assert settings.mass_quota("moon-walk") == (4, "month")
    assert settings.mass_quota("carbon-fitness") == (1, "day")  # not configured: WECHAT_<CODE>_MASS_QUOTA's default
    assert set(settings.wechat_credentials) == {"moon-walk"}  # an AppID without its secret is no credential
    assert settings.wechat_event_keys["moon-walk"].token == "tok" and "silicon-rise" not in settings.wechat_event_keys
    assert settings.accounts["silicon-rise"] == "硅基崛起" == settings.team.account_name("silicon-rise")
    assert "s3cret" not in repr(settings) and "tok" not in repr(moon)


def test_team_settings_are_optional_and_typed():
    assert Settings.with_defaults().team.channels == ()
    team = Settings.with_defaults(
        {
            "NOTIFY_EMAIL_TO": "a@b.c",
            "SMTP_HOST": "mail",
            "SMTP_FROM": "n@b.c",
            "REVIEW_PUBLIC_URL": "https://r.example.com/",
            "NOTIFY_EVENTS": "live",
        }
    ).team
    assert team.channels == ("email",) and team.smtp.port == 587 and team.smtp.starttls is True
    assert team.public_url == "https://r.example.com" and team.events == frozenset({"task.live"})
    assert "password" not in repr(
        Settings.with_defaults({"NOTIFY_FEISHU_WEBHOOK_URL": "https://f/x", "NOTIFY_FEISHU_SECRET": "password"})
    )


def test_a_session_lifetime_may_be_flasks_timedelta():
    assert parse({**DEFAULTS, "PERMANENT_SESSION_LIFETIME": timedelta(hours=1)})["PERMANENT_SESSION_LIFETIME"] == 3600


def test_a_switch_split_from_an_older_one_keeps_what_a_team_chose():
    """Team messages and chat cards were switched by WEBHOOK_SENDER_ENABLED, editions by
    WECHAT_LIVE_WORKER_ENABLED: unset, each new switch takes the older one's value, so a copy kept away from
    readers with the live worker off does not start sending editions to followers on upgrade."""

    def switches(**config):
        values = parse({**DEFAULTS, **config})
        return [values[name] for name in ("TEAM_MESSAGES_ENABLED", "CHAT_CARDS_ENABLED", "WECHAT_EDITIONS_ENABLED")]

    assert switches() == [True, True, True]
    assert switches(WEBHOOK_SENDER_ENABLED="false") == [False, False, True]
    assert switches(WECHAT_LIVE_WORKER_ENABLED="off") == [True, True, False]
    assert switches(WECHAT_LIVE_WORKER_ENABLED="off", WECHAT_EDITIONS_ENABLED="on") == [True, True, True]
    assert switches(WEBHOOK_SENDER_ENABLED="false", CHAT_CARDS_ENABLED="true") == [False, True, True]
    assert "WECHAT_EDITIONS_ENABLED" not in DEFAULTS  # a default there would count as set
