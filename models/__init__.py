"""All tables. Each area adds its models module here; schema.py creates and upgrades them."""

from models.assets import Asset
from models.base import db, init_database  # noqa: F401
from models.chat import ChatCard
from models.comments import CommentFetch, CommentProposal, ReaderComment
from models.counters import EventCounter
from models.editions import EarlyMassEvent, Edition
from models.feedback import Feedback, FeedbackAttachment, FeedbackDaySequence
from models.files import AssetCleanup, PendingFile
from models.live import TaskLive
from models.nonces import SeenNonce
from models.outbox import OutboxMessage
from models.platform import PlatformToken, PlatformUpload
from models.presence import TaskPresence
from models.publishing import PublishLock
from models.ratelimit import RateHit
from models.review import IdempotencyKey, PublishJob, ReviewTask, TimelineEvent
from models.stats import StatsFetch, TaskDayStats
from models.users import AdminUser, EndedSession, LoginAttempt
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
    Edition,
    EarlyMassEvent,
    ChatCard,
    TaskDayStats,
    StatsFetch,
    SeenNonce,
    ReaderComment,
    CommentProposal,
    CommentFetch,
]
