"""Package export of a review task (docs/api.md §7): a ZIP with manuscript.md and images/.

    from services.export import build_package
    package = build_package(task_id, settings)

`remote.fetch_to_file` is the SSRF-guarded fetcher of remote images.
"""
from services.export.package import PackageFile, build_package  # noqa: F401
