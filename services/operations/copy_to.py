"""Copying this instance's database into another, empty one: `flask --app app copy-to DATABASE_URL`
(README: running several processes). Schema migrations are models/schema.py's."""

from models.row_copy import TargetNotEmpty, copy_rows_to, row_counts  # noqa: F401 (TargetNotEmpty: for callers)
from services.settings.values import check_database_url


def copy_to_database(target_url: str) -> dict[str, int]:
    """Copy the bound database into the empty one at `target_url`, then check every table's count;
    returns the rows per table. Raises SettingsError for an unusable URL, TargetNotEmpty."""
    check_database_url(target_url)
    before = row_counts()
    copied = copy_rows_to(target_url)
    missing = {table: (before[table], copied.get(table, 0)) for table in copied if copied[table] != before[table]}
    if missing:
        raise RuntimeError(f"rows changed while copying: {missing}; stop the service and run it again")
    return copied
