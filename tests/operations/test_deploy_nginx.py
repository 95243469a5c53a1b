"""deploy/nginx.conf, run as it is by Debian's nginx in a temporary folder in front of `python app.py`:
requests pass, a signed-in browser's writes pass the same-origin check, and a client cannot choose the
address its rate limits count against by sending its own X-Forwarded-For."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import requests

from tests.helpers.app import AGENT_TOKEN
from tests.helpers.served import answers_ok, free_port, served
from tests.helpers.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
SAMPLE = ROOT / "deploy" / "nginx.conf"
CLIENT_TOKEN = "nginx-test-client-token-0123456789"


@pytest.fixture
def nginx_in_front(tmp_path):
    if not Path(NGINX).exists():
        reason = "nginx is not installed (apt-get install nginx; .ci/run does it)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)

    def start(service_port):
        port = free_port()
        folder = tmp_path / "nginx"
        folder.mkdir()
        site = (
            SAMPLE.read_text()
            .replace("listen 80;", f"listen 127.0.0.1:{port};")
            .replace("127.0.0.1:8000", f"127.0.0.1:{service_port}")
        )
        assert site != SAMPLE.read_text()
        (folder / "site.conf").write_text(site)
        temp = {name: folder / name for name in ("body", "proxy", "fastcgi", "uwsgi", "scgi")}
        (folder / "nginx.conf").write_text(
            ("user root;\n" if os.geteuid() == 0 else "")
            + f"daemon off;\nworker_processes 1;\npid {folder}/nginx.pid;\nerror_log {folder}/error.log;\n"
            "events { worker_connections 1024; }\n"
            "http {\n  access_log off;\n"
            + "".join(
                f"  {name}_temp_path {path};\n"
                for name, path in (
                    ("client_body", temp["body"]),
                    ("proxy", temp["proxy"]),
                    ("fastcgi", temp["fastcgi"]),
                    ("uwsgi", temp["uwsgi"]),
                    ("scgi", temp["scgi"]),
                )
            )
            + f"  include {folder}/site.conf;\n}}\n"
        )
        checked = subprocess.run(
            [NGINX, "-t", "-c", str(folder / "nginx.conf"), "-p", str(folder)],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert checked.returncode == 0, checked.stderr
        process = subprocess.Popen(
            [NGINX, "-c", str(folder / "nginx.conf"), "-p", str(folder)], stderr=subprocess.PIPE, text=True
        )
        started.append(process)
        base = f"http://127.0.0.1:{port}"

        def passing_on():
            assert process.poll() is None, process.stderr.read()
            return answers_ok(f"{base}/healthz")

        wait_until(passing_on, 20, "nginx did not pass the service on", every=0.1)
        return base

    started = []
    yield start
    for process in started:
        process.terminate()
        process.wait(timeout=10)


def feedback(number):
    return {
        "appName": "nginx-test",
        "appVersion": "1.0",
        "platform": "web",
        "type": "bug",
        "title": f"t{number}",
        "content": f"不同的内容 {number}",
    }


@pytest.mark.timeout(120)
def test_the_sample_config_serves_the_service(tmp_path, nginx_in_front):
    with served(
        tmp_path,
        TRUSTED_PROXIES=1,
        FEEDBACK_CLIENT_TOKENS=f"web={CLIENT_TOKEN}",
        FEEDBACK_RATE_LIMIT_PER_IP="2/minute",
        FEEDBACK_RATE_LIMIT_PER_DEVICE="",
        REVIEW_ADMIN_USERNAME="admin",
        REVIEW_ADMIN_PASSWORD="a long enough password",
    ) as (_, port):
        base = nginx_in_front(port)
        listing = requests.get(
            f"{base}/api/review/agent/tasks", headers={"x-review-agent-token": AGENT_TOKEN}, timeout=10
        )
        assert listing.status_code == 200 and listing.json() == []

        # A browser signing in through the proxy: its Origin is the proxy's address, which the
        # service sees as its own (Host passed on), so the sign-in is not refused as cross-origin.
        browser = requests.Session()
        signed_in = browser.post(
            f"{base}/api/auth/login",
            data={"username": "admin", "password": "a long enough password"},
            headers={"Origin": base},
            allow_redirects=False,
            timeout=10,
        )
        assert signed_in.status_code == 303 and "error" not in signed_in.headers["Location"], signed_in.headers
        assert browser.get(f"{base}/api/review/tasks", timeout=10).status_code == 200

        # Rate limits count the address nginx saw, whatever X-Forwarded-For the client sends.
        statuses = [
            requests.post(
                f"{base}/api/feedbacks",
                json=feedback(n),
                timeout=10,
                headers={"x-feedback-client-token": CLIENT_TOKEN, "X-Forwarded-For": f"203.0.113.{n}"},
            ).status_code
            for n in range(3)
        ]
        assert statuses == [201, 201, 429]
