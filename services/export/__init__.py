"""Package export of a review task (docs/api.md §7: package, manuscript, package_images) and the dataset
export (§20: dataset, dataset_formats). package.py imports its siblings, never this package.
"""

from services.export.package import build_package  # noqa: F401
