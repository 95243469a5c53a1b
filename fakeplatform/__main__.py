"""`python -m fakeplatform --port 9100`: run the fake platform so the service can publish offline."""
import argparse
import logging
import os

from fakeplatform.server import FakePlatform

ACCOUNTS = ("silicon-rise", "carbon-fitness")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m fakeplatform", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9100)
    parser.add_argument("--latency-ms", type=float, default=0, metavar="MS",
                        help="wait this long before answering each call, as a platform far away does (e.g. 150)")
    parser.add_argument("--jitter-ms", type=float, default=0, metavar="MS", help="± this much around --latency-ms")
    args = parser.parse_args(argv)

    fake = FakePlatform()
    fake.set_latency(args.latency_ms / 1000, args.jitter_ms / 1000)
    settings = []
    for account in ACCOUNTS:
        prefix = "WECHAT_" + account.upper().replace("-", "_")
        appid = os.environ.get(prefix + "_APPID") or f"wx-{account}"
        secret = os.environ.get(prefix + "_SECRET") or f"secret-{account}"
        fake.add_account(appid, secret)
        settings += [f"{prefix}_APPID={appid}", f"{prefix}_SECRET={secret}"]
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
