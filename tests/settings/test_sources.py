"""Where settings come from (docs/api.md §1): defaults -> instance/config.py -> environment -> the config
argument, each read the same, typed once into app.config and the Settings services receive."""

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

from app import create_app
from services.settings import Settings
from tests.helpers.app import built_app
from tests.helpers.served import free_port

ROOT = Path(__file__).resolve().parents[2]


def test_settings_layering(tmp_path, monkeypatch):
    instance = tmp_path / "inst"
    instance.mkdir()
    (instance / "config.py").write_text('FEEDBACK_TYPES = "bug,idea"\nPORT = 9001\nTHREADS = 3\n')
    monkeypatch.setenv("PORT", "9002")
    monkeypatch.setenv("SESSION_COOKIE_SECURE", "true")
    monkeypatch.setenv("REVIEW_UPLOADS_PATH", str(tmp_path / "elsewhere"))
    app = create_app({"REVIEW_INSTANCE_PATH": str(instance), "THREADS": 5}, serve=True)
    assert app.config["FEEDBACK_TYPES"] == "bug,idea"  # config.py over the default
    assert app.extensions["settings"].feedback_types == ("bug", "idea")
    assert app.config["PORT"] == 9002  # environment over config.py, typed
    assert app.config["SESSION_COOKIE_SECURE"] is True
    assert app.config["THREADS"] == 5  # test config over everything
    assert app.config["REVIEW_COVER_RATIO_MAX"] == 2.5  # default
    assert (tmp_path / "elsewhere" / "review").is_dir()


def test_config_py_text_values_are_read_like_the_environments(tmp_path):
    """SESSION_COOKIE_SECURE = "false" in config.py was a true value (a non-empty string)."""
    instance = tmp_path / "inst"
    instance.mkdir()
    (instance / "config.py").write_text(
        'SESSION_COOKIE_SECURE = "false"\nWAL_CHECKPOINTER_ENABLED = "off"\n'
        'PORT = "8123"\nWECHAT_TIMEOUT_SECONDS = "7.5"\n'
        "import datetime\nPERMANENT_SESSION_LIFETIME = datetime.timedelta(hours=1)\n"
    )
    app = create_app({"REVIEW_INSTANCE_PATH": str(instance), "REVIEW_UPLOADS_PATH": str(tmp_path / "u")}, serve=True)
    assert app.config["SESSION_COOKIE_SECURE"] is False and app.config["WAL_CHECKPOINTER_ENABLED"] is False
    assert (app.config["PORT"], app.config["WECHAT_TIMEOUT_SECONDS"]) == (8123, 7.5)
    assert app.config["PERMANENT_SESSION_LIFETIME"] == timedelta(hours=1)  # Flask's own form works too
    assert "wal_checkpointer" not in app.extensions


def test_instance_path_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("REVIEW_INSTANCE_PATH", str(tmp_path / "env-instance"))
    monkeypatch.setenv("REVIEW_UPLOADS_PATH", str(tmp_path / "env-uploads"))
    create_app({}, serve=True)
    assert (tmp_path / "env-instance" / "review.db").exists()
    assert (tmp_path / "env-uploads" / "library").is_dir()


def test_default_state_folders_are_in_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("REVIEW_INSTANCE_PATH", "REVIEW_UPLOADS_PATH", "DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    app = create_app(
        {
            "WEBHOOK_SENDER_ENABLED": False,
            "TEAM_MESSAGES_ENABLED": False,
            "CHAT_CARDS_ENABLED": False,
            "FEEDBACK_INDEXER_ENABLED": False,
            "WAL_CHECKPOINTER_ENABLED": False,
        },
        serve=True,
    )
    assert (tmp_path / "instance" / "review.db").exists()
    assert (tmp_path / "uploads" / "review").is_dir()
    assert app.config["REVIEW_INSTANCE_PATH"] == str(tmp_path.resolve() / "instance")
    assert app.config["REVIEW_UPLOADS_PATH"] == str(tmp_path.resolve() / "uploads")
    assert app.extensions["settings"].instance_path == str(tmp_path.resolve() / "instance")


def test_database_url_setting(tmp_path):
    target = tmp_path / "custom.db"
    create_app(
        {
            "REVIEW_INSTANCE_PATH": str(tmp_path / "i"),
            "REVIEW_UPLOADS_PATH": str(tmp_path / "u"),
            "DATABASE_URL": f"sqlite:///{target}",
        },
        serve=True,
    )
    assert target.exists()
    assert not (tmp_path / "i" / "review.db").exists()


def test_per_account_settings_come_from_the_environment(make_app, monkeypatch):
    monkeypatch.setenv("WECHAT_ACCOUNTS", "silicon-rise,moon-walk=月球漫步")
    monkeypatch.setenv("WECHAT_MOON_WALK_APPID", "wx-moon")
    monkeypatch.setenv("WECHAT_MOON_WALK_SECRET", "s3cret")
    monkeypatch.setenv("WECHAT_MOON_WALK_MASS_QUOTA", "4/month")
    with built_app(make_app) as application:
        settings = application.extensions["settings"]
        assert settings.accounts == {"silicon-rise": "silicon-rise", "moon-walk": "月球漫步"}
        assert settings.wechat_credentials["moon-walk"].appid == "wx-moon"
        assert settings.wechat_accounts["moon-walk"].mass_quota == (4, "month")
        assert "s3cret" not in repr(settings)


def test_a_reloaded_app_config_reads_the_same():
    """tests/helpers/app.py's reload_settings types app.config again, whose values are typed already."""
    settings = Settings.with_defaults({"PORT": "8123", "FEEDBACK_TYPES": "bug"})
    again = Settings.with_defaults({"PORT": 8123, "FEEDBACK_TYPES": ("bug",)})
    assert settings == again


def test_the_served_process_names_the_setting_without_a_traceback(tmp_path):
    env = {
        **os.environ,
        "REVIEW_TIME_ZONE": "Asia",
        "REVIEW_INSTANCE_PATH": str(tmp_path / "instance"),
        "REVIEW_UPLOADS_PATH": str(tmp_path / "uploads"),
        "PORT": str(free_port()),
    }
    done = subprocess.run([sys.executable, "app.py"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr[-2000:]
    assert "error: REVIEW_TIME_ZONE must be a time zone name like Asia/Shanghai, not 'Asia'" in done.stderr
    assert "Traceback" not in done.stderr
