"""`python -m fakeplatform --port 9100`: run the fake platform so the service can publish offline.

The accounts are the service's (WECHAT_ACCOUNTS from the environment, default the service's two); with
`--service URL` each account's events (a publish or a mass send finished) are pushed to
URL/wechat/<code>/events, signed with a token it prints."""

import argparse
import logging
import os
import secrets

from fakeplatform.server import FakePlatform

DEFAULT_ACCOUNTS = "silicon-rise,carbon-fitness"


def account_codes(environ) -> list[str]:
    """The codes of WECHAT_ACCOUNTS (`code=name` pairs): the fake stands alone, so it reads them itself."""
    text = environ.get("WECHAT_ACCOUNTS") or DEFAULT_ACCOUNTS
    return [item.partition("=")[0].strip() for item in text.split(",") if item.partition("=")[0].strip()]


def prefix(code: str) -> str:
    return "WECHAT_" + code.upper().replace("-", "_")


def account_lines(environ, fake=None, service=None) -> list[str]:
    """The settings that point the service's accounts at this fake (credentials known to `fake`)."""
    lines = []
    for code in account_codes(environ):
        appid = environ.get(prefix(code) + "_APPID") or f"wx-{code}"
        secret = environ.get(prefix(code) + "_SECRET") or f"secret-{code}"
        lines += [f"{prefix(code)}_APPID={appid}", f"{prefix(code)}_SECRET={secret}"]
        if fake is not None:
            fake.add_account(appid, secret)
        if fake is not None and service:
            token = environ.get(prefix(code) + "_TOKEN") or secrets.token_urlsafe(12)
            fake.send_events_to(appid, f"{service.rstrip('/')}/wechat/{code}/events", token)
            lines.append(f"{prefix(code)}_TOKEN={token}")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m fakeplatform", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9100)
    parser.add_argument(
        "--latency-ms",
        type=float,
        default=0,
        metavar="MS",
        help="wait this long before answering each call, as a platform far away does (e.g. 150)",
    )
    parser.add_argument("--jitter-ms", type=float, default=0, metavar="MS", help="± this much around --latency-ms")
    parser.add_argument(
        "--service",
        metavar="URL",
        help="the review service's address: publish and mass-send events are pushed to its server URLs",
    )
    args = parser.parse_args(argv)

    fake = FakePlatform()
    fake.set_latency(args.latency_ms / 1000, args.jitter_ms / 1000)
    settings = account_lines(os.environ, fake, args.service)
    base = f"http://{args.host}:{args.port}"
    print(f"Fake WeChat platform on {base} (Ctrl+C stops it; everything is kept in memory).")
    print("Point the review service at it with:")
    # Synced library images live on this host: the package download may fetch them from it.
    remote = [f"REVIEW_REMOTE_IMAGE_HOSTS={args.host}", "REVIEW_REMOTE_IMAGE_ALLOW_PRIVATE=true"]
    for line in [f"WECHAT_API_BASE={base}", *settings, *remote]:
        print(f"  export {line}", flush=True)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        fake.serve_forever(args.port, args.host)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
