"""Publishing approved tasks as drafts on the WeChat platform (publish-jobs, retry, phone preview; docs/api.md
§5, §12). Modules: snapshot (frozen content), image_uploads, pipeline (the platform calls), jobs (lifecycle).
"""

from services.publishing.jobs import (  # noqa: F401
    approve_and_publish,
    publish_progress,
    publish_task,
    retry_job,
    retryable_jobs,
)
from services.publishing.preview import send_preview  # noqa: F401
