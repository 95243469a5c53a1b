"""marshmallow shapes of the review area (the task and its parts, docs/api.md §4). No database, no state rules."""

from schemas.review import refs  # noqa: F401  (its schemas register with marshmallow on import)
from schemas.review.actions import (  # noqa: F401
    DeleteResultSchema,
    PhonePreviewSchema,
    PreviewResultSchema,
    PreviewSchema,
    PublishProgressSchema,
)
from schemas.review.candidates import CreateTaskSchema  # noqa: F401
from schemas.review.comments import (  # noqa: F401
    CommentSchema,
    FeaturedBodySchema,
    OpenBodySchema,
    ProposalBodySchema,
    ReplyBodySchema,
    TaskCommentsSchema,
)
from schemas.review.dataset import DatasetQuerySchema  # noqa: F401
from schemas.review.live import GoLiveSchema  # noqa: F401
from schemas.review.selections import DecisionSchema, PatchElementsSchema  # noqa: F401
from schemas.review.stats import TaskStatsSchema  # noqa: F401
from schemas.review.task import AgentTaskListQuerySchema, TaskListQuerySchema, TaskSchema  # noqa: F401
