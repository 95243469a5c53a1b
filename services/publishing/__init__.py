"""Publishing approved tasks as drafts on the WeChat platform (publish-jobs, retry; docs/api.md §5).

    publish_task(task_id, trigger_mode, actor_name, settings, if_match=None) -> task JSON
    retry_job(task_id, job_id, actor_name, settings, if_match=None)         -> task JSON
    approve_and_publish(task_id, decision, actor_name, settings, if_match=None) -> task JSON
    publish_progress(task_id)                                                -> the running publish's step
    send_preview(task_id, recipient, actor_name, settings)                   -> task JSON

`settings` is the app's services.settings.Settings. Modules: snapshot (frozen content),
images (uploads, cached per asset and account), pipeline (the platform calls), jobs (lifecycle).
"""

from services.publishing.jobs import approve_and_publish, publish_progress, publish_task, retry_job  # noqa: F401
from services.publishing.preview import send_preview  # noqa: F401
