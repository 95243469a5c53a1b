"""Package export of a review task (docs/api.md §7): a ZIP with manuscript.md and images/.

    from services.export import build_package
    package = build_package(task_id, settings)

Modules: package (the ZIP), manuscript (manuscript.md), package_images (checking each image). Remote
images are fetched by services/images/fetch.py. package.py imports its siblings, never this package.

The dataset export (docs/api.md §20) lives here too: dataset (decided tasks as `raw` records, streamed)
and dataset_formats (sft, dpo, kto).
"""

from services.export.package import build_package  # noqa: F401
