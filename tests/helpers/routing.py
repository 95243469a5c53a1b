"""One URL map for the apps a test worker builds: binding an app's ~66 rules compiles two URL builders
each, most of what building an app costs (26 ms an app; 10 ms on the shared map), and every app has the
same routes.

`shared_routes()` is held around one `create_app`: the Flask it builds takes the worker's map through
Flask's `url_map_class`, where the worker's first app bound the rules and the later ones find each rule
already there. A map an app added rules to afterwards (a test's probe routes) is not shared again."""

import threading
from contextlib import contextmanager

from flask import Flask
from werkzeug.routing import Map


def _key(rule):
    """What makes two rules the same route, from their public attributes (an unbound rule has no more)."""
    return (
        rule.rule,
        rule.endpoint,
        frozenset(rule.methods or ()),
        repr(sorted((rule.defaults or {}).items())),
        rule.subdomain,
        rule.host,
        rule.strict_slashes,
        rule.merge_slashes,
        rule.build_only,
        repr(rule.redirect_to),
        rule.alias,
        rule.websocket,
        getattr(rule, "provide_automatic_options", None),  # Flask's, on each rule it makes
    )


class SharedMap(Map):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.keys = set()  # the rules bound here
        self.seen = set()  # the rules the app being built added
        self.complete = False  # an app was built on it: it holds an app's routes
        self.grown = False  # a rule was added after that: it holds more

    def add(self, rulefactory):
        for rule in rulefactory.get_rules(self):
            key = _key(rule)
            self.seen.add(key)
            if key not in self.keys:
                self.keys.add(key)
                self.grown = self.complete
                super().add(rule)


_worker = {"map": None}


@contextmanager
def shared_routes():
    """Hold around one create_app: the first Flask made meanwhile routes on the worker's map."""
    shared = _worker["map"]
    if shared is None or not shared.complete or shared.grown:
        shared = _worker["map"] = SharedMap()
    shared.seen = set()
    handed, builder = [], threading.get_ident()

    def url_map(**options):
        # Another Flask made meanwhile (a second one, another thread's) gets a map of its own.
        if handed or threading.get_ident() != builder or options.get("host_matching"):
            return Map(**options)
        handed.append(shared)
        return shared

    own = Flask.__dict__.get("url_map_class")  # None: Flask inherits Map from its base class
    Flask.url_map_class = staticmethod(url_map)
    try:
        yield
    finally:
        if own is None:
            del Flask.url_map_class
        else:
            Flask.url_map_class = own
    if not handed:
        return
    if shared.complete:
        assert shared.seen == shared.keys, "this app's routes differ from the other apps': share no map with it"
    shared.complete = True
