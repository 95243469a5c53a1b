"""Decisions this code makes where docs/api.md leaves room (listed in docs/review-states.md)."""

from rules.limits import APPROVAL_AUTHOR_MAX, APPROVAL_SUMMARY_MAX

RULINGS = (
    "An article may be created with titles only (docs/api.md §4's creation rule 1: one kind of candidate "
    "content). Its body is written later, by the agent's PATCH of `body` or by the reviewer; its `bodyDraft` then has "
    "`sourceBodyCandidateId` null (a submitted one must say null: it has no option to name), "
    "`sourceBodyCandidate` null and `bodyEditedFromCandidate` true, and such a body gets no "
    "`manualOverrides.body` (it edits no candidate). Approval still needs `selections.body`; a "
    "field-level rejection of `body` may leave it out of `selections` while there is none to fix.",
    "Candidate string lists hold non-empty strings; `bodyOptions[].id`, `imageGroups[].id` and "
    "`bodyImageCandidates[].placeholderId` are unique; `topic` is 1 to 500 characters.",
    "Idempotency records are kept only for successful creations (201); a request that failed "
    "validation can be retried with the same key.",
    "Decision stages: (1) the selections object — required and complete unless the whole task is "
    "rejected, fields of the other content type refused, values checked at approval level except that "
    "keys being rejected only need their asset references to resolve; (2) the action-specific fields. "
    "Each stage answers with every problem it found.",
    "Rejection fields (`rejectedElements`, `lockedSelections`, `rejectionReason`, `rejectionNote`) "
    "are refused on approve actions; `lockedSelections` is refused on a whole-task rejection.",
    "A PATCH of `images` must keep the first image a stored `coverCrop` names (400 otherwise), unless "
    "`coverCrop` is patched in the same request or still waits for rework.",
    "Keys that stay locked in a field-level rejection are checked at approval level now (cover ratio, "
    f"summary ≤ {APPROVAL_SUMMARY_MAX}, a derivable or submitted bodyDraft for a locked body): the agent could "
    "never fix them.",
    f"Approval also holds `author` to {APPROVAL_AUTHOR_MAX} characters, the platform's limit (45110): an approved task "
    "cannot be edited any more, so a value the platform refuses would leave it failing for good. "
    "`bodyImages` may be left out (an article's body images are its Markdown image links).",
    "A whole-task rejection may carry partial `selections`; they are checked (references, limits) and "
    "saved. Without them the stored selections stay.",
    "Without a submitted `bodyDraft`, approval keeps the stored draft when its markdown equals "
    "`selections.body`, else derives one from the body option whose content equals it exactly, else 400.",
    "A submitted `bodyDraft` may omit `sourceBodyCandidate` and `bodyEditedFromCandidate`; the server "
    "fills them in. When given they must match the source option (content unchanged; edited = markdown "
    "differs). `themeTemplate` must be a known theme; `themeConfig.cssVariables` is checked like the "
    "renderer does.",
    "Decision rule 8 is kept by the server too: on approval and field-level rejection, every final value "
    "that is none of its candidates and not the value already stored (which an agent PATCH may have put "
    "there) gets an override when the request sends none for it: text `basedOn` the closest candidate, "
    "body `basedOnCandidateId` the draft's source, a cover `basedOn` the first candidate cover, image "
    "lists `basedOn` the placeholders' first options (image posts: null). A stored override whose value "
    "is still the selection is kept; submitted overrides are stored as sent.",
    "`manualOverrides.body.basedOnCandidateId` must equal `bodyDraft.sourceBodyCandidateId`; "
    "image override values are compared by the asset they resolve to (URL and `{assetId}` are equal).",
    "Approval clears `rejectedElements`, `lockedSelections`, `rejectionReason` and `rejectionNote` "
    "(the timeline keeps them); returning to review after rework keeps reason and note for the reviewer.",
    "A PATCH on a task in `rejected_rework` touching a key outside `rejectedElements` is 409 "
    "`field_locked` with every locked key in `details`; fields of the other content type are 400 first.",
    "Each rejected key a rework PATCH fixes leaves `rejectedElements` and is locked from then on, so it "
    "must pass the approval-level checks when it is patched (400 otherwise): the task can never be left "
    "with a fixed key that fails approval. A PATCH never blanks `title`, `summary` or `description`.",
    "The background sender's `agent_notified` and `agent_notification_failed` timeline events record a "
    "delivery, not a write of the task (docs/api.md §4: version +1 on every write), so `version`, ETag and "
    "`updatedAt` stay and the agent's next If-Match still matches.",
    "A body that fails its schema (shape, types, limits, unknown fields) is 400 before the task is read; "
    "then the If-Match check (412) comes before the state check (409), which comes before the rules "
    "that need the stored task (400).",
    "Lists default to `status=pending_review` for the agent too; the agent filters with "
    "`status=rejected_rework` to find work.",
)
