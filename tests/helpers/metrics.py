"""Reading GET /metrics: the token the tests configure, a scrape, one sample."""

import re

TOKEN = "metrics-token-for-tests"
BEARER = {"Authorization": f"Bearer {TOKEN}"}


def scrape(client):
    response = client.get("/metrics", headers=BEARER)
    assert response.status_code == 200 and response.content_type.startswith("text/plain")
    values = {}
    for line in response.get_data(as_text=True).splitlines():
        if line and not line.startswith("#"):
            series, value = line.rsplit(" ", 1)
            values[series] = float(value)
    return values


def value(values, name, **labels):
    """The sample of `name` whose labels are exactly `labels` (0 when absent)."""
    for series, number in values.items():
        match = re.fullmatch(r"([a-z_]+)(?:\{(.*)\})?", series)
        found = dict(re.findall(r'(\w+)="([^"]*)"', match.group(2) or ""))
        if match.group(1) == name and found == {k: str(v) for k, v in labels.items()}:
            return number
    return 0.0
