"""All tables. Each area adds its models module here; schema.py creates and upgrades them."""
from models.assets import Asset  # noqa: F401
from models.base import BaseModel, JSONField, db, init_database  # noqa: F401
from models.counters import EventCounter  # noqa: F401
from models.feedback import Feedback, FeedbackAttachment, FeedbackDaySequence  # noqa: F401
from models.files import AssetCleanup, PendingFile  # noqa: F401
from models.live import TaskLive  # noqa: F401
from models.outbox import OutboxMessage  # noqa: F401
from models.platform import PlatformToken, PlatformUpload  # noqa: F401
from models.presence import TaskPresence  # noqa: F401
from models.publishing import PublishLock  # noqa: F401
from models.ratelimit import RateHit  # noqa: F401
from models.review import IdempotencyKey, PublishJob, ReviewTask, TimelineEvent  # noqa: F401
from models.stats import StatsFetch, TaskDayStats  # noqa: F401
from models.users import AdminUser, EndedSession, LoginAttempt  # noqa: F401
from models.writes import immediate  # noqa: F401

ALL_MODELS = [
    AdminUser,
    EndedSession,
    LoginAttempt,
    Asset,
    Feedback,
    FeedbackAttachment,
    FeedbackDaySequence,
    OutboxMessage,
    PendingFile,
    AssetCleanup,
    PlatformToken,
    PlatformUpload,
    ReviewTask,
    TimelineEvent,
    PublishJob,
    PublishLock,
    IdempotencyKey,
    RateHit,
    TaskPresence,
    EventCounter,
    TaskLive,
    TaskDayStats,
    StatsFetch,
]
