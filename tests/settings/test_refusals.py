"""A setting the service cannot run with stops the start with a message naming it (docs/api.md §1); a
secret's value is never shown."""

import importlib.util

import pytest

from app import create_app
from services.settings import Settings, SettingsError

NO_POSTGRES = any(importlib.util.find_spec(driver) for driver in ("psycopg2", "psycopg"))


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"PORT": "99999"}, "PORT must be a whole number from 1 to 65535, not '99999'"),
        ({"PORT": "abc"}, "PORT must be a whole number from 1 to 65535, not 'abc'"),
        ({"PORT": 8000.5}, "PORT must be a whole number from 1 to 65535, not 8000.5"),  # not cut to 8000
        ({"PORT": True}, "PORT must be a whole number"),
        ({"THREADS": "0"}, "THREADS must be a whole number of at least 1, not '0'"),
        ({"LOGIN_MAX_FAILURES": "0"}, "LOGIN_MAX_FAILURES must be a whole number of at least 1"),
        ({"WECHAT_TIMEOUT_SECONDS": "0"}, "WECHAT_TIMEOUT_SECONDS must be a number above 0 and at most 600, not '0'"),
        ({"WECHAT_TIMEOUT_SECONDS": "601"}, "WECHAT_TIMEOUT_SECONDS must be a number above 0 and at most 600"),
        # nan started the service and every publish answered 500 (issue 41, item 6)
        ({"WECHAT_TIMEOUT_SECONDS": "nan"}, "WECHAT_TIMEOUT_SECONDS must be a finite number, not 'nan'"),
        ({"WECHAT_TIMEOUT_SECONDS": "inf"}, "WECHAT_TIMEOUT_SECONDS must be a finite number, not 'inf'"),
        ({"WECHAT_TIMEOUT_SECONDS": "1e309"}, "WECHAT_TIMEOUT_SECONDS must be a finite number, not '1e309'"),
        ({"WECHAT_TIMEOUT_SECONDS": float("nan")}, "WECHAT_TIMEOUT_SECONDS must be a finite number, not nan"),
        ({"REVIEW_COVER_RATIO_MAX": "nan"}, "REVIEW_COVER_RATIO_MAX must be a finite number, not 'nan'"),
        (
            {"REVIEW_COVER_RATIO_MIN": "3"},
            "REVIEW_COVER_RATIO_MIN must be at most REVIEW_COVER_RATIO_MAX (2.5), not 3.0",
        ),
        ({"REVIEW_COVER_RATIO_MIN": "0"}, "REVIEW_COVER_RATIO_MIN must be a number above 0"),
        ({"WECHAT_EVENT_MAX_AGE": "0"}, "WECHAT_EVENT_MAX_AGE must be a whole number from 1 to 86400, not '0'"),
        ({"WECHAT_EVENT_MAX_AGE": "86401"}, "WECHAT_EVENT_MAX_AGE must be a whole number from 1 to 86400"),
        ({"WECHAT_STATS_HOUR": "24"}, "WECHAT_STATS_HOUR must be a whole number from 0 to 23"),
        ({"WECHAT_STATS_DAYS": "0"}, "WECHAT_STATS_DAYS must be a whole number from 1 to 365"),
        (
            {"SHUTDOWN_GRACE_SECONDS": "soon"},
            "SHUTDOWN_GRACE_SECONDS must be a whole number from 0 to 3600, not 'soon'",
        ),
        ({"SHUTDOWN_GRACE_SECONDS": "-1"}, "SHUTDOWN_GRACE_SECONDS must be a whole number from 0 to 3600"),
        ({"SHUTDOWN_GRACE_SECONDS": "86400"}, "SHUTDOWN_GRACE_SECONDS must be a whole number from 0 to 3600"),
        ({"CONNECTION_IDLE_SECONDS": "0"}, "CONNECTION_IDLE_SECONDS must be a whole number of at least 1"),
        ({"FEEDBACK_DUPLICATE_WINDOW_SECONDS": "0"}, "FEEDBACK_DUPLICATE_WINDOW_SECONDS must be a whole number of at"),
        ({"REVIEW_PRESENCE_SECONDS": "-1"}, "REVIEW_PRESENCE_SECONDS must be a whole number of at least 1"),
        ({"TRUSTED_PROXIES": "-1"}, "TRUSTED_PROXIES must be a whole number of at least 0, not '-1'"),
        ({"WECHAT_UPLOAD_CONCURRENCY": "0"}, "WECHAT_UPLOAD_CONCURRENCY must be a whole number from 1 to 32, not '0'"),
        ({"PASSWORD_HASH_METHOD": "md5"}, "PASSWORD_HASH_METHOD must be scrypt or pbkdf2:sha256:N"),
        ({"SESSION_COOKIE_SECURE": "ture"}, "SESSION_COOKIE_SECURE must be true or false, not 'ture'"),
        (
            {"FEEDBACK_CLIENT_TOKENS": "web=ok,web:secret-token"},
            "FEEDBACK_CLIENT_TOKENS must be channel=token pairs separated by commas; item 2 of 2 is not one",
        ),
        (
            {"FEEDBACK_RATE_LIMIT_PER_IP": "abc"},
            "FEEDBACK_RATE_LIMIT_PER_IP must be N/period (second, minute, hour, day)",
        ),
        ({"FEEDBACK_RATE_LIMIT_PER_DEVICE": "0/minute"}, "FEEDBACK_RATE_LIMIT_PER_DEVICE must be N/period"),
        ({"FEEDBACK_TYPES": " , "}, "FEEDBACK_TYPES must name at least one feedback type"),
        ({"DATABASE_URL": "foo://bar"}, "DATABASE_URL must start with one of"),
        pytest.param(
            {"DATABASE_URL": "postgresql://review@127.0.0.1/review"},
            "whose driver is not installed",
            marks=pytest.mark.skipif(NO_POSTGRES, reason="the postgres extra is installed"),
        ),
        ({"WECHAT_API_BASE": "api.weixin.qq.com"}, "WECHAT_API_BASE must be an http:// or https:// address"),
        ({"REVIEW_AGENT_WEBHOOK_URL": "ftp://agent.example/hook"}, "REVIEW_AGENT_WEBHOOK_URL must be an http://"),
        (
            {"REVIEW_AGENT_WEBHOOK_EVENTS": "review_task.rejected,review_task.deleted"},
            "REVIEW_AGENT_WEBHOOK_EVENTS names unknown event types review_task.deleted; known: review_task.rejected",
        ),
        (
            {"WECHAT_PREVIEW_RECIPIENTS": "silicon-rise: a; mars: b"},
            "WECHAT_PREVIEW_RECIPIENTS names unknown accounts mars",
        ),
        ({"WECHAT_PREVIEW_RECIPIENTS": "wx_a, wx b"}, "WECHAT_PREVIEW_RECIPIENTS holds 'wx b', not a WeChat ID"),
        ({"REVIEW_DEFAULT_LANGUAGE": "fr"}, "REVIEW_DEFAULT_LANGUAGE must be zh-CN or en, not 'fr'"),
        ({"REVIEW_TIME_ZONE": "Mars/Olympus"}, "REVIEW_TIME_ZONE must be a time zone name like Asia/Shanghai"),
        ({"REVIEW_TIME_ZONE": "Asia"}, "REVIEW_TIME_ZONE must be a time zone name like Asia/Shanghai, not 'Asia'"),
        ({"REVIEW_TIME_ZONE": "A" * 300}, "REVIEW_TIME_ZONE must be a time zone name"),
        ({"REVIEW_TIME_ZONE": "zone.tab"}, "REVIEW_TIME_ZONE must be a time zone name"),
        ({"WECHAT_THEME_OVERRIDES": "--primary-color: red"}, "WECHAT_THEME_OVERRIDES must be a dict"),
        ({"WECHAT_ACCOUNTS": "Moon Walk"}, "WECHAT_ACCOUNTS must be code=name pairs separated by commas: 'Moon Walk'"),
        ({"WECHAT_ACCOUNTS": "a,a"}, "WECHAT_ACCOUNTS must be code=name pairs separated by commas: account a is named"),
        ({"WECHAT_ACCOUNTS": ","}, "WECHAT_ACCOUNTS must be code=name pairs separated by commas: name at least one"),
        (
            {"WECHAT_SILICON_RISE_AES_KEY": "short"},
            "WECHAT_SILICON_RISE_AES_KEY must be the 43 characters the platform",
        ),
        ({"WECHAT_SILICON_RISE_MASS_QUOTA": "2/week"}, "WECHAT_SILICON_RISE_MASS_QUOTA must be N/day or N/month"),
        ({"WECHAT_SILICON_RISE_MASS_QUOTA": "0/day"}, "WECHAT_SILICON_RISE_MASS_QUOTA must be N/day or N/month"),
        (
            {"WECHAT_ACCOUNTS": "moon-walk", "WECHAT_MOON_WALK_MASS_PROTECTION": "maybe"},
            "WECHAT_MOON_WALK_MASS_PROTECTION must be true or false, not 'maybe'",
        ),
        # The team's (docs/api.md §15)
        ({"NOTIFY_WECOM_WEBHOOK_URL": "qyapi.weixin.qq.com/send?key=secret-key"}, "NOTIFY_WECOM_WEBHOOK_URL must be"),
        ({"NOTIFY_EVENTS": "task.awaiting_review,task.approved"}, "NOTIFY_EVENTS names unknown events task.approved"),
        ({"NOTIFY_EMAIL_TO": "editor@example.com"}, "SMTP_HOST must name the mail server"),
        ({"NOTIFY_EMAIL_TO": "editor", "SMTP_HOST": "mail"}, "NOTIFY_EMAIL_TO must be e-mail addresses"),
        ({"NOTIFY_EMAIL_TO": "a@b.c", "SMTP_HOST": "mail"}, "SMTP_FROM (or SMTP_USER) must be the sender's address"),
        ({"SMTP_PORT": 0}, "SMTP_PORT must be a whole number from 1 to 65535"),
        ({"REVIEW_PUBLIC_URL": "review.example.com"}, "REVIEW_PUBLIC_URL must be an http:// or https:// address"),
    ],
)
def test_a_bad_value_is_refused_naming_the_setting(settings, message):
    with pytest.raises(SettingsError) as refused:
        Settings.with_defaults(settings)
    assert message in str(refused.value) and "secret" not in str(refused.value)


@pytest.mark.parametrize("name", ["WECHAT_PUBLISH_POLL_DELAYS", "REVIEW_WEBHOOK_RETRY_DELAYS"])
@pytest.mark.parametrize("value", [",", "-1", "nan", "inf", "60,1e300", "sixty", "2592001"])
def test_a_schedule_of_delays_that_cannot_be_kept_is_refused(name, value):
    with pytest.raises(SettingsError, match=rf"^{name} must be seconds \(0 to 30 days\) separated by commas"):
        Settings.with_defaults({name: value})


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("REVIEW_ADMIN_PASSWORD", 12345678),
        ("WECHAT_SILICON_RISE_SECRET", 42),
        ("NOTIFY_FEISHU_SECRET", ["a"]),
        ("FEEDBACK_CLIENT_TOKENS", "web=secret-token-1,ios"),
        ("WECHAT_CARBON_FITNESS_AES_KEY", "secret-key"),
        ("NOTIFY_DINGTALK_WEBHOOK_URL", "oapi.dingtalk.com/robot/send?access_token=secret-token"),
    ],
)
def test_a_secrets_value_is_never_shown(name, value):
    with pytest.raises(SettingsError) as refused:
        Settings.with_defaults({name: value})
    assert str(refused.value).startswith(name) and str(value) not in str(refused.value)


def test_every_bad_setting_is_named_at_once():
    with pytest.raises(SettingsError) as refused:
        Settings.with_defaults({"PORT": "0", "THREADS": "many", "WECHAT_SILICON_RISE_MASS_QUOTA": "3"})
    assert str(refused.value).splitlines() == [
        "PORT must be a whole number from 1 to 65535, not '0'",
        "THREADS must be a whole number of at least 1, not 'many'",
    ]


def test_a_bad_value_in_the_environment_stops_the_start(tmp_path, monkeypatch):
    monkeypatch.setenv("WECHAT_TIMEOUT_SECONDS", "nan")
    folders = {"REVIEW_INSTANCE_PATH": str(tmp_path / "i"), "REVIEW_UPLOADS_PATH": str(tmp_path / "u")}
    with pytest.raises(SettingsError, match="WECHAT_TIMEOUT_SECONDS must be a finite number, not 'nan'"):
        create_app(folders, serve=True)
    monkeypatch.setenv("WECHAT_TIMEOUT_SECONDS", "7.5")
    assert create_app(folders, serve=True).extensions["settings"].wechat_timeout_seconds == 7.5


def test_a_bad_value_in_config_py_stops_the_start(tmp_path):
    instance = tmp_path / "inst"
    instance.mkdir()
    (instance / "config.py").write_text('SESSION_COOKIE_SECURE = "ja"\n')
    with pytest.raises(SettingsError, match="SESSION_COOKIE_SECURE must be true or false, not 'ja'"):
        create_app({"REVIEW_INSTANCE_PATH": str(instance), "REVIEW_UPLOADS_PATH": str(tmp_path / "u")}, serve=True)
