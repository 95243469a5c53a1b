"""The README's demo section says how to choose the port, and that command works as written (docs/api.md
§1): run with another free port in its place, `python app.py --demo` serves there and its banner
names that address."""

import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

from tests.helpers.served import answers_ok, free_port
from tests.helpers.waiting import wait_until

ROOT = Path(__file__).resolve().parents[1].parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def demo_section():
    start = README.index("\n### Try it offline: `python app.py --demo`")
    return README[start : README.index("\n## ", start)]


def port_command():
    """The demo section's shell line that sets the port: (environment, argv)."""
    [line] = [
        line
        for block in re.findall(r"```sh\n(.*?)```", demo_section(), re.S)
        for line in block.splitlines()
        if re.search(r"\bPORT=\d+", line)
    ]
    words = shlex.split(line)
    env = dict(word.split("=", 1) for word in words if re.fullmatch(r"[A-Z_]+=\S*", word))
    argv = [word for word in words if not re.fullmatch(r"[A-Z_]+=\S*", word)]
    return env, argv


def test_the_readme_says_how_to_choose_the_demos_port_and_it_works():
    env, argv = port_command()
    assert argv == ["python", "app.py", "--demo"] and "PORT" in env, (env, argv)
    port = free_port()  # the README's number may be taken here: another free one in its place
    environment = {key: value for key, value in os.environ.items() if key not in ("HOST", "DATABASE_URL")}
    environment.update(env, PORT=str(port))
    demo = subprocess.Popen(
        [sys.executable, *argv[1:]],
        cwd=ROOT,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        wait_until(lambda: answers_ok(f"http://127.0.0.1:{port}/healthz"), 90, "the demo did not answer on PORT")
    finally:
        os.kill(demo.pid, signal.SIGTERM)
        banner = demo.communicate(timeout=30)[0]
    assert f"http://127.0.0.1:{port}/login" in banner, banner
