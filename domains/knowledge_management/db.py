"""knowledge_management DB layer, compiled from spec.json by worldsmith. Do not edit: recompile."""

from __future__ import annotations

from datetime import date, datetime
from typing import Optional

from pydantic import NaiveDatetime
from sqlalchemy import CheckConstraint, event
from sqlalchemy.engine import Engine
from sqlalchemy.orm import registry
from sqlmodel import Field, Session, SQLModel, select


class Base(SQLModel, registry=registry()):
    """Own registry: two domains (or two loads of one) never share table metadata."""


class User(Base, table=True):
    'A person in the company directory with a knowledge-base role'
    __tablename__ = 'user'
    __table_args__ = (
        CheckConstraint('"name" IS NULL OR length("name") <= 120', name='ck_user_0'),
        CheckConstraint('"email" IS NULL OR length("email") <= 200', name='ck_user_1'),
        CheckConstraint('"role" IS NULL OR "role" IN (\'reader\', \'editor\', \'admin\')', name='ck_user_2'),
        CheckConstraint('"team" IS NULL OR length("team") <= 100', name='ck_user_3'),
    )
    user_id: str = Field(primary_key=True)
    name: str = Field(max_length=120, nullable=False)
    email: str = Field(unique=True, max_length=200, nullable=False)
    role: str = Field(default='reader', nullable=False)
    team: str = Field(max_length=100, nullable=False)
    created_at: NaiveDatetime = Field(nullable=False)


class Space(Base, table=True):
    'A team-owned container of articles'
    __tablename__ = 'space'
    __table_args__ = (
        CheckConstraint('"key" IS NULL OR length("key") <= 10', name='ck_space_0'),
        CheckConstraint('"name" IS NULL OR length("name") <= 100', name='ck_space_1'),
        CheckConstraint('"team" IS NULL OR length("team") <= 100', name='ck_space_2'),
        CheckConstraint('"verification_interval_days" IS NULL OR "verification_interval_days" >= 7', name='ck_space_3'),
        CheckConstraint('"verification_interval_days" IS NULL OR "verification_interval_days" <= 730', name='ck_space_4'),
        CheckConstraint('"space_status" IS NULL OR "space_status" IN (\'active\', \'archived\')', name='ck_space_5'),
    )
    space_id: str = Field(primary_key=True)
    key: str = Field(unique=True, max_length=10, nullable=False, description='Upper-case key, 2-10 letters or digits starting with a letter')
    name: str = Field(max_length=100, nullable=False)
    description: str = Field(default='', nullable=False)
    team: str = Field(max_length=100, nullable=False)
    owner_id: str = Field(foreign_key='user.user_id', nullable=False)
    default_reviewer_id: Optional[str] = Field(default=None, foreign_key='user.user_id')
    verification_interval_days: int = Field(default=180, nullable=False)
    space_status: str = Field(default='active', nullable=False, description='Returned as status by the space tools')
    created_at: NaiveDatetime = Field(nullable=False)
    archived_at: Optional[NaiveDatetime] = Field(default=None)


class Template(Base, table=True):
    'A reusable article body, global (no space) or belonging to one space'
    __tablename__ = 'template'
    __table_args__ = (
        CheckConstraint('"name" IS NULL OR length("name") <= 100', name='ck_template_0'),
    )
    template_id: str = Field(primary_key=True)
    name: str = Field(max_length=100, nullable=False)
    description: str = Field(default='', nullable=False)
    body: str = Field(nullable=False)
    space_id: Optional[str] = Field(default=None, foreign_key='space.space_id', description='Null for a global template')
    created_at: NaiveDatetime = Field(nullable=False)


class Article(Base, table=True):
    'A page of a space with its current content, lifecycle, ownership, verification and view data'
    __tablename__ = 'article'
    __table_args__ = (
        CheckConstraint('"title" IS NULL OR length("title") <= 200', name='ck_article_0'),
        CheckConstraint('"status" IS NULL OR "status" IN (\'draft\', \'in_review\', \'published\', \'archived\')', name='ck_article_1'),
        CheckConstraint('"current_revision" IS NULL OR "current_revision" >= 1', name='ck_article_2'),
        CheckConstraint('"view_count" IS NULL OR "view_count" >= 0', name='ck_article_3'),
        CheckConstraint('"archive_reason" IS NULL OR length("archive_reason") <= 500', name='ck_article_4'),
    )
    article_id: str = Field(primary_key=True)
    space_id: str = Field(foreign_key='space.space_id', nullable=False)
    parent_article_id: Optional[str] = Field(default=None, foreign_key='article.article_id')
    title: str = Field(max_length=200, nullable=False)
    body: str = Field(default='', nullable=False)
    status: str = Field(default='draft', nullable=False)
    owner_id: str = Field(foreign_key='user.user_id', nullable=False)
    template_id: Optional[str] = Field(default=None, foreign_key='template.template_id')
    current_revision: int = Field(default=1, nullable=False)
    review_by: Optional[date] = Field(default=None)
    last_verified_at: Optional[NaiveDatetime] = Field(default=None)
    last_verified_by: Optional[str] = Field(default=None, foreign_key='user.user_id')
    view_count: int = Field(default=0, nullable=False)
    last_viewed_at: Optional[NaiveDatetime] = Field(default=None)
    archive_reason: str = Field(default='', max_length=500, nullable=False)
    created_at: NaiveDatetime = Field(nullable=False)
    updated_at: NaiveDatetime = Field(nullable=False)
    published_at: Optional[NaiveDatetime] = Field(default=None)
    archived_at: Optional[NaiveDatetime] = Field(default=None)


class Revision(Base, table=True):
    "A saved version of an article's title and body"
    __tablename__ = 'revision'
    __table_args__ = (
        CheckConstraint('"revision_number" IS NULL OR "revision_number" >= 1', name='ck_revision_0'),
        CheckConstraint('"title" IS NULL OR length("title") <= 200', name='ck_revision_1'),
        CheckConstraint('"change_note" IS NULL OR length("change_note") <= 500', name='ck_revision_2'),
        CheckConstraint('"restored_from" IS NULL OR "restored_from" >= 0', name='ck_revision_3'),
    )
    revision_id: str = Field(primary_key=True)
    article_id: str = Field(foreign_key='article.article_id', nullable=False)
    revision_number: int = Field(nullable=False)
    title: str = Field(max_length=200, nullable=False)
    body: str = Field(default='', nullable=False)
    author_id: str = Field(foreign_key='user.user_id', nullable=False)
    change_note: str = Field(default='', max_length=500, nullable=False)
    restored_from: int = Field(default=0, nullable=False)
    created_at: NaiveDatetime = Field(nullable=False)


class Review(Base, table=True):
    'A request to review one revision of an article'
    __tablename__ = 'review'
    __table_args__ = (
        CheckConstraint('"revision_number" IS NULL OR "revision_number" >= 1', name='ck_review_0'),
        CheckConstraint('"status" IS NULL OR "status" IN (\'pending\', \'approved\', \'rejected\')', name='ck_review_1'),
        CheckConstraint('"comment" IS NULL OR length("comment") <= 1000', name='ck_review_2'),
        CheckConstraint('"reason" IS NULL OR length("reason") <= 1000', name='ck_review_3'),
    )
    review_id: str = Field(primary_key=True)
    article_id: str = Field(foreign_key='article.article_id', nullable=False)
    reviewer_id: str = Field(foreign_key='user.user_id', nullable=False)
    revision_number: int = Field(nullable=False)
    status: str = Field(default='pending', nullable=False)
    message: str = Field(default='', nullable=False)
    comment: str = Field(default='', max_length=1000, nullable=False)
    reason: Optional[str] = Field(default=None, max_length=1000)
    requested_at: NaiveDatetime = Field(nullable=False)
    decided_at: Optional[NaiveDatetime] = Field(default=None)


class Tag(Base, table=True):
    'A lowercase label for articles and questions'
    __tablename__ = 'tag'
    __table_args__ = (
        CheckConstraint('"name" IS NULL OR length("name") <= 40', name='ck_tag_0'),
    )
    tag_id: str = Field(primary_key=True)
    name: str = Field(unique=True, max_length=40, nullable=False)
    created_at: NaiveDatetime = Field(nullable=False)


class ArticleTag(Base, table=True):
    'A tag attached to an article'
    __tablename__ = 'article_tag'
    article_tag_id: str = Field(primary_key=True)
    article_id: str = Field(foreign_key='article.article_id', nullable=False)
    tag_id: str = Field(foreign_key='tag.tag_id', nullable=False)


class Comment(Base, table=True):
    'A comment or reply in a thread on an article'
    __tablename__ = 'comment'
    __table_args__ = (
        CheckConstraint('"text" IS NULL OR length("text") <= 2000', name='ck_comment_0'),
    )
    comment_id: str = Field(primary_key=True)
    article_id: str = Field(foreign_key='article.article_id', nullable=False)
    author_id: str = Field(foreign_key='user.user_id', nullable=False)
    parent_comment_id: Optional[str] = Field(default=None, foreign_key='comment.comment_id')
    text: str = Field(max_length=2000, nullable=False)
    resolved: bool = Field(default=False, nullable=False)
    resolved_at: Optional[NaiveDatetime] = Field(default=None)
    resolved_by: Optional[str] = Field(default=None, foreign_key='user.user_id')
    created_at: NaiveDatetime = Field(nullable=False)


class ArticleLink(Base, table=True):
    'A typed directed link between two articles'
    __tablename__ = 'article_link'
    __table_args__ = (
        CheckConstraint('"relation" IS NULL OR "relation" IN (\'related\', \'prerequisite\', \'supersedes\')', name='ck_article_link_0'),
    )
    link_id: str = Field(primary_key=True)
    source_article_id: str = Field(foreign_key='article.article_id', nullable=False)
    target_article_id: str = Field(foreign_key='article.article_id', nullable=False)
    relation: str = Field(nullable=False)
    created_at: NaiveDatetime = Field(nullable=False)


class Rating(Base, table=True):
    "A user's single helpful or not-helpful vote on an article"
    __tablename__ = 'rating'
    __table_args__ = (
        CheckConstraint('"vote" IS NULL OR "vote" IN (\'helpful\', \'not_helpful\')', name='ck_rating_0'),
        CheckConstraint('"comment" IS NULL OR length("comment") <= 500', name='ck_rating_1'),
    )
    rating_id: str = Field(primary_key=True)
    article_id: str = Field(foreign_key='article.article_id', nullable=False)
    user_id: str = Field(foreign_key='user.user_id', nullable=False)
    vote: str = Field(nullable=False)
    comment: str = Field(default='', max_length=500, nullable=False)
    rated_at: NaiveDatetime = Field(nullable=False)


class Bookmark(Base, table=True):
    'An article saved by a user'
    __tablename__ = 'bookmark'
    __table_args__ = (
        CheckConstraint('"note" IS NULL OR length("note") <= 300', name='ck_bookmark_0'),
    )
    bookmark_id: str = Field(primary_key=True)
    user_id: str = Field(foreign_key='user.user_id', nullable=False)
    article_id: str = Field(foreign_key='article.article_id', nullable=False)
    note: str = Field(default='', max_length=300, nullable=False)
    bookmarked_at: NaiveDatetime = Field(nullable=False)


class Collection(Base, table=True):
    'A curated, ordered list of articles such as an onboarding path'
    __tablename__ = 'collection'
    __table_args__ = (
        CheckConstraint('"name" IS NULL OR length("name") <= 100', name='ck_collection_0'),
    )
    collection_id: str = Field(primary_key=True)
    name: str = Field(unique=True, max_length=100, nullable=False)
    description: str = Field(default='', nullable=False)
    curator_id: str = Field(foreign_key='user.user_id', nullable=False)
    space_id: Optional[str] = Field(default=None, foreign_key='space.space_id')
    created_at: NaiveDatetime = Field(nullable=False)


class CollectionItem(Base, table=True):
    'An article at a position in a collection'
    __tablename__ = 'collection_item'
    __table_args__ = (
        CheckConstraint('"position" IS NULL OR "position" >= 1', name='ck_collection_item_0'),
        CheckConstraint('"position" IS NULL OR "position" <= 50', name='ck_collection_item_1'),
    )
    collection_item_id: str = Field(primary_key=True)
    collection_id: str = Field(foreign_key='collection.collection_id', nullable=False)
    article_id: str = Field(foreign_key='article.article_id', nullable=False)
    position: int = Field(nullable=False)
    added_at: NaiveDatetime = Field(nullable=False)


class Question(Base, table=True):
    'A question on the Q&A board'
    __tablename__ = 'question'
    __table_args__ = (
        CheckConstraint('"title" IS NULL OR length("title") <= 200', name='ck_question_0'),
        CheckConstraint('"status" IS NULL OR "status" IN (\'open\', \'answered\')', name='ck_question_1'),
    )
    question_id: str = Field(primary_key=True)
    asker_id: str = Field(foreign_key='user.user_id', nullable=False)
    title: str = Field(max_length=200, nullable=False)
    body: str = Field(default='', nullable=False)
    space_id: Optional[str] = Field(default=None, foreign_key='space.space_id')
    status: str = Field(default='open', nullable=False)
    accepted_answer_id: Optional[str] = Field(default=None, foreign_key='answer.answer_id')
    accepted_at: Optional[NaiveDatetime] = Field(default=None)
    article_id: Optional[str] = Field(default=None, foreign_key='article.article_id', unique=True, description='Article the question was converted into')
    asked_at: NaiveDatetime = Field(nullable=False)


class QuestionTag(Base, table=True):
    'A tag attached to a question'
    __tablename__ = 'question_tag'
    question_tag_id: str = Field(primary_key=True)
    question_id: str = Field(foreign_key='question.question_id', nullable=False)
    tag_id: str = Field(foreign_key='tag.tag_id', nullable=False)


class Answer(Base, table=True):
    'An answer to a question'
    __tablename__ = 'answer'
    __table_args__ = (
        CheckConstraint('"body" IS NULL OR length("body") <= 5000', name='ck_answer_0'),
    )
    answer_id: str = Field(primary_key=True)
    question_id: str = Field(foreign_key='question.question_id', nullable=False)
    author_id: str = Field(foreign_key='user.user_id', nullable=False)
    body: str = Field(max_length=5000, nullable=False)
    created_at: NaiveDatetime = Field(nullable=False)


MODELS: dict[str, type[Base]] = {'user': User, 'space': Space, 'template': Template, 'article': Article, 'revision': Revision, 'review': Review, 'tag': Tag, 'article_tag': ArticleTag, 'comment': Comment, 'article_link': ArticleLink, 'rating': Rating, 'bookmark': Bookmark, 'collection': Collection, 'collection_item': CollectionItem, 'question': Question, 'question_tag': QuestionTag, 'answer': Answer}
TABLE_ORDER: list[str] = ['user', 'space', 'template', 'article', 'revision', 'review', 'tag', 'article_tag', 'comment', 'article_link', 'rating', 'bookmark', 'collection', 'collection_item', 'question', 'question_tag', 'answer']
PRIMARY_KEY: dict[str, str] = {'user': 'user_id', 'space': 'space_id', 'template': 'template_id', 'article': 'article_id', 'revision': 'revision_id', 'review': 'review_id', 'tag': 'tag_id', 'article_tag': 'article_tag_id', 'comment': 'comment_id', 'article_link': 'link_id', 'rating': 'rating_id', 'bookmark': 'bookmark_id', 'collection': 'collection_id', 'collection_item': 'collection_item_id', 'question': 'question_id', 'question_tag': 'question_tag_id', 'answer': 'answer_id'}
ID_PREFIX: dict[str, str] = {'user': 'USR', 'space': 'SPC', 'template': 'TPL', 'article': 'ART', 'revision': 'RVN', 'review': 'RVW', 'tag': 'TAG', 'article_tag': 'ATG', 'comment': 'CMT', 'article_link': 'LNK', 'rating': 'RAT', 'bookmark': 'BMK', 'collection': 'COL', 'collection_item': 'CIT', 'question': 'QST', 'question_tag': 'QTG', 'answer': 'ANS'}
COLUMNS: dict[str, list[str]] = {'user': ['user_id', 'name', 'email', 'role', 'team', 'created_at'], 'space': ['space_id', 'key', 'name', 'description', 'team', 'owner_id', 'default_reviewer_id', 'verification_interval_days', 'space_status', 'created_at', 'archived_at'], 'template': ['template_id', 'name', 'description', 'body', 'space_id', 'created_at'], 'article': ['article_id', 'space_id', 'parent_article_id', 'title', 'body', 'status', 'owner_id', 'template_id', 'current_revision', 'review_by', 'last_verified_at', 'last_verified_by', 'view_count', 'last_viewed_at', 'archive_reason', 'created_at', 'updated_at', 'published_at', 'archived_at'], 'revision': ['revision_id', 'article_id', 'revision_number', 'title', 'body', 'author_id', 'change_note', 'restored_from', 'created_at'], 'review': ['review_id', 'article_id', 'reviewer_id', 'revision_number', 'status', 'message', 'comment', 'reason', 'requested_at', 'decided_at'], 'tag': ['tag_id', 'name', 'created_at'], 'article_tag': ['article_tag_id', 'article_id', 'tag_id'], 'comment': ['comment_id', 'article_id', 'author_id', 'parent_comment_id', 'text', 'resolved', 'resolved_at', 'resolved_by', 'created_at'], 'article_link': ['link_id', 'source_article_id', 'target_article_id', 'relation', 'created_at'], 'rating': ['rating_id', 'article_id', 'user_id', 'vote', 'comment', 'rated_at'], 'bookmark': ['bookmark_id', 'user_id', 'article_id', 'note', 'bookmarked_at'], 'collection': ['collection_id', 'name', 'description', 'curator_id', 'space_id', 'created_at'], 'collection_item': ['collection_item_id', 'collection_id', 'article_id', 'position', 'added_at'], 'question': ['question_id', 'asker_id', 'title', 'body', 'space_id', 'status', 'accepted_answer_id', 'accepted_at', 'article_id', 'asked_at'], 'question_tag': ['question_tag_id', 'question_id', 'tag_id'], 'answer': ['answer_id', 'question_id', 'author_id', 'body', 'created_at']}
COLUMN_TYPES: dict[str, dict[str, str]] = {'user': {'user_id': 'string', 'name': 'string', 'email': 'string', 'role': 'string', 'team': 'string', 'created_at': 'datetime'}, 'space': {'space_id': 'string', 'key': 'string', 'name': 'string', 'description': 'text', 'team': 'string', 'owner_id': 'string', 'default_reviewer_id': 'string', 'verification_interval_days': 'integer', 'space_status': 'string', 'created_at': 'datetime', 'archived_at': 'datetime'}, 'template': {'template_id': 'string', 'name': 'string', 'description': 'text', 'body': 'text', 'space_id': 'string', 'created_at': 'datetime'}, 'article': {'article_id': 'string', 'space_id': 'string', 'parent_article_id': 'string', 'title': 'string', 'body': 'text', 'status': 'string', 'owner_id': 'string', 'template_id': 'string', 'current_revision': 'integer', 'review_by': 'date', 'last_verified_at': 'datetime', 'last_verified_by': 'string', 'view_count': 'integer', 'last_viewed_at': 'datetime', 'archive_reason': 'string', 'created_at': 'datetime', 'updated_at': 'datetime', 'published_at': 'datetime', 'archived_at': 'datetime'}, 'revision': {'revision_id': 'string', 'article_id': 'string', 'revision_number': 'integer', 'title': 'string', 'body': 'text', 'author_id': 'string', 'change_note': 'string', 'restored_from': 'integer', 'created_at': 'datetime'}, 'review': {'review_id': 'string', 'article_id': 'string', 'reviewer_id': 'string', 'revision_number': 'integer', 'status': 'string', 'message': 'text', 'comment': 'string', 'reason': 'string', 'requested_at': 'datetime', 'decided_at': 'datetime'}, 'tag': {'tag_id': 'string', 'name': 'string', 'created_at': 'datetime'}, 'article_tag': {'article_tag_id': 'string', 'article_id': 'string', 'tag_id': 'string'}, 'comment': {'comment_id': 'string', 'article_id': 'string', 'author_id': 'string', 'parent_comment_id': 'string', 'text': 'string', 'resolved': 'boolean', 'resolved_at': 'datetime', 'resolved_by': 'string', 'created_at': 'datetime'}, 'article_link': {'link_id': 'string', 'source_article_id': 'string', 'target_article_id': 'string', 'relation': 'string', 'created_at': 'datetime'}, 'rating': {'rating_id': 'string', 'article_id': 'string', 'user_id': 'string', 'vote': 'string', 'comment': 'string', 'rated_at': 'datetime'}, 'bookmark': {'bookmark_id': 'string', 'user_id': 'string', 'article_id': 'string', 'note': 'string', 'bookmarked_at': 'datetime'}, 'collection': {'collection_id': 'string', 'name': 'string', 'description': 'text', 'curator_id': 'string', 'space_id': 'string', 'created_at': 'datetime'}, 'collection_item': {'collection_item_id': 'string', 'collection_id': 'string', 'article_id': 'string', 'position': 'integer', 'added_at': 'datetime'}, 'question': {'question_id': 'string', 'asker_id': 'string', 'title': 'string', 'body': 'text', 'space_id': 'string', 'status': 'string', 'accepted_answer_id': 'string', 'accepted_at': 'datetime', 'article_id': 'string', 'asked_at': 'datetime'}, 'question_tag': {'question_tag_id': 'string', 'question_id': 'string', 'tag_id': 'string'}, 'answer': {'answer_id': 'string', 'question_id': 'string', 'author_id': 'string', 'body': 'text', 'created_at': 'datetime'}}


@event.listens_for(Engine, 'connect')
def _foreign_keys_on(dbapi_connection, _record) -> None:
    dbapi_connection.execute("PRAGMA foreign_keys=ON")

class ToolError(Exception):
    """Base of the exceptions a tool declares; the message is shown to the agent."""


class NotFound(ToolError):
    pass


class InvalidInput(ToolError):
    pass


class Conflict(ToolError):
    pass


class PreconditionFailed(ToolError):
    pass


DEFAULT_NOW = "2025-03-01T09:00:00"


def now(session: Session) -> datetime:
    """The episode clock: fixed per episode so that runs are reproducible."""
    return datetime.fromisoformat(session.info.get("now", DEFAULT_NOW))


def today(session: Session) -> date:
    return now(session).date()


def next_id(session: Session, model: type[SQLModel]) -> str:
    """The next generated primary key of a table: PREFIX-0001, PREFIX-0002, ..."""
    prefix = ID_PREFIX[model.__tablename__]
    pk = getattr(model, PRIMARY_KEY[model.__tablename__])
    highest = 0
    for (key,) in session.execute(select(pk).where(pk.startswith(prefix + "-"))):
        tail = key[len(prefix) + 1:]
        if tail.isdigit():
            highest = max(highest, int(tail))
    return f"{prefix}-{highest + 1:04d}"


def parse_date(value: object, field: str) -> date:
    """Parse a YYYY-MM-DD argument or raise InvalidInput naming the field."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        raise InvalidInput(f"{field} must be a date in YYYY-MM-DD format, got {value!r}") from None


def parse_datetime(value: object, field: str) -> datetime:
    """Parse an ISO date-time (YYYY-MM-DDTHH:MM:SS or YYYY-MM-DD) or raise InvalidInput."""
    if isinstance(value, datetime):
        return value
    try:
        return datetime.fromisoformat(str(value))
    except ValueError:
        raise InvalidInput(f"{field} must be a date-time in YYYY-MM-DDTHH:MM:SS format, got {value!r}") from None


def get_or_raise(session: Session, model: type[SQLModel], key: object) -> SQLModel:
    row = session.get(model, key)
    if row is None:
        raise NotFound(f"{model.__tablename__} {key!r} does not exist")
    return row


def _json(value: object) -> object:
    return value.isoformat() if isinstance(value, (date, datetime)) else value


def to_dict(row: SQLModel) -> dict:
    """A row as JSON-ready data (dates as ISO strings), in column order."""
    return {c: _json(getattr(row, c)) for c in COLUMNS[row.__tablename__]}


def _from_json(table: str, row: dict) -> dict:
    out = {}
    for column, value in row.items():
        kind = COLUMN_TYPES[table].get(column)
        if kind is None:
            raise InvalidInput(f"{table} has no column {column!r}")
        if value is not None and kind == "date":
            value = parse_date(value, f"{table}.{column}")
        elif value is not None and kind == "datetime":
            value = parse_datetime(value, f"{table}.{column}")
        out[column] = value
    return out


def load_state(session: Session, state: dict) -> None:
    """Insert a state (table -> rows of JSON values) in foreign-key order."""
    unknown = set(state) - set(MODELS)
    if unknown:
        raise InvalidInput(f"unknown tables: {sorted(unknown)}")
    for table in TABLE_ORDER:
        for row in state.get(table, []):
            session.add(MODELS[table](**_from_json(table, row)))
        session.flush()


def dump_state(session: Session) -> dict:
    """Every table's rows as JSON values, ordered by primary key."""
    out = {}
    for table in TABLE_ORDER:
        model = MODELS[table]
        rows = session.exec(select(model).order_by(getattr(model, PRIMARY_KEY[table]))).all()
        out[table] = [to_dict(r) for r in rows]
    return out


def create_all(engine) -> None:
    Base.metadata.create_all(engine)
