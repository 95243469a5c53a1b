"""marshmallow shapes of the review area (the task and its parts, docs/api.md §4). No database, no state rules."""

from schemas.review.actions import (  # noqa: F401
    DeleteResultSchema,
    PhonePreviewSchema,
    PreviewResultSchema,
    PreviewSchema,
    PublishProgressSchema,
)
from schemas.review.candidates import (  # noqa: F401
    ArticleCandidatesSchema,
    BodyImageCandidateSchema,
    BodyOptionSchema,
    CandidatesSchema,
    CreateTaskSchema,
    ImageGroupSchema,
    ImagePostCandidatesSchema,
    TaskContextSchema,
)
from schemas.review.dataset import DatasetQuerySchema  # noqa: F401
from schemas.review.live import GoLiveSchema, LiveSchema  # noqa: F401
from schemas.review.refs import AssetIdSchema, CommentSettingsSchema, CoverCropSchema, CropPercentSchema  # noqa: F401
from schemas.review.selections import (  # noqa: F401
    ArticleSelectionsSchema,
    BodyDraftSchema,
    DecisionSchema,
    ImagePostSelectionsSchema,
    ManualOverridesSchema,
    PatchElementsSchema,
    SelectionsSchema,
)
from schemas.review.stats import TaskStatsSchema  # noqa: F401
from schemas.review.task import (  # noqa: F401
    AgentTaskListQuerySchema,
    PublishJobSchema,
    TaskListQuerySchema,
    TaskSchema,
    TimelineEventSchema,
)
