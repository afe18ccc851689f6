"""email_management DB layer, compiled from spec.json by worldsmith. Do not edit: recompile."""

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


class Folder(Base, table=True):
    'A folder: the six system folders with the fixed ids inbox, sent, drafts, archive, spam and trash, and user folders with generated ids that may be nested'
    __tablename__ = 'folder'
    __table_args__ = (
        CheckConstraint('"name" IS NULL OR length("name") <= 64', name='ck_folder_0'),
    )
    folder_id: str = Field(primary_key=True)
    name: str = Field(unique=True, max_length=64, nullable=False, description="Unique ignoring case; no '/'")
    is_system: bool = Field(default=False, nullable=False)
    parent_folder_id: Optional[str] = Field(default=None, foreign_key='folder.folder_id', description='Parent user folder; null at the top level')
    created_at: NaiveDatetime = Field(nullable=False)


class Label(Base, table=True):
    'A user label'
    __tablename__ = 'label'
    __table_args__ = (
        CheckConstraint('"name" IS NULL OR length("name") <= 50', name='ck_label_0'),
        CheckConstraint('"color" IS NULL OR "color" IN (\'gray\', \'red\', \'orange\', \'yellow\', \'green\', \'blue\', \'purple\', \'pink\')', name='ck_label_1'),
    )
    label_id: str = Field(primary_key=True)
    name: str = Field(unique=True, max_length=50, nullable=False)
    color: str = Field(default='gray', nullable=False)
    created_at: NaiveDatetime = Field(nullable=False)


class Thread(Base, table=True):
    'A conversation'
    __tablename__ = 'thread'
    __table_args__ = (
        CheckConstraint('"subject" IS NULL OR length("subject") <= 255', name='ck_thread_0'),
    )
    thread_id: str = Field(primary_key=True)
    subject: str = Field(default='', max_length=255, nullable=False)
    created_at: NaiveDatetime = Field(nullable=False)


class Message(Base, table=True):
    'A received or sent email filed in exactly one folder'
    __tablename__ = 'message'
    __table_args__ = (
        CheckConstraint('"sender_email" IS NULL OR length("sender_email") <= 254', name='ck_message_0'),
        CheckConstraint('"sender_name" IS NULL OR length("sender_name") <= 100', name='ck_message_1'),
        CheckConstraint('"subject" IS NULL OR length("subject") <= 255', name='ck_message_2'),
    )
    message_id: str = Field(primary_key=True)
    thread_id: str = Field(foreign_key='thread.thread_id', nullable=False)
    folder_id: str = Field(default='inbox', foreign_key='folder.folder_id', nullable=False, description="Never 'drafts'")
    previous_folder_id: Optional[str] = Field(default=None, foreign_key='folder.folder_id', description='Folder before trashing; set only while in trash')
    is_outgoing: bool = Field(default=False, nullable=False)
    sender_email: str = Field(max_length=254, nullable=False)
    sender_name: str = Field(default='', max_length=100, nullable=False)
    to_addresses: str = Field(default='[]', nullable=False, description='JSON array of addresses')
    cc_addresses: str = Field(default='[]', nullable=False, description='JSON array of addresses')
    bcc_addresses: str = Field(default='[]', nullable=False, description='JSON array of addresses')
    subject: str = Field(default='', max_length=255, nullable=False)
    body: str = Field(default='', nullable=False)
    received_at: NaiveDatetime = Field(nullable=False, description='Receive time, or send time for outgoing mail')
    is_read: bool = Field(default=False, nullable=False)
    is_starred: bool = Field(default=False, nullable=False)
    in_reply_to_message_id: Optional[str] = Field(default=None, foreign_key='message.message_id')
    snoozed_until: Optional[NaiveDatetime] = Field(default=None)
    trashed_at: Optional[NaiveDatetime] = Field(default=None, description='Set only while in trash')


class MessageLabel(Base, table=True):
    'A label carried by a message'
    __tablename__ = 'message_label'
    message_label_id: str = Field(primary_key=True)
    message_id: str = Field(foreign_key='message.message_id', nullable=False)
    label_id: str = Field(foreign_key='label.label_id', nullable=False)
    applied_at: NaiveDatetime = Field(nullable=False)


class Signature(Base, table=True):
    'A saved signature; at most one is the default'
    __tablename__ = 'signature'
    __table_args__ = (
        CheckConstraint('"name" IS NULL OR length("name") <= 100', name='ck_signature_0'),
        CheckConstraint('"text" IS NULL OR length("text") <= 2000', name='ck_signature_1'),
    )
    signature_id: str = Field(primary_key=True)
    name: str = Field(unique=True, max_length=100, nullable=False)
    text: str = Field(max_length=2000, nullable=False)
    is_default: bool = Field(default=False, nullable=False)
    created_at: NaiveDatetime = Field(nullable=False)


class Draft(Base, table=True):
    'An unsent message, possibly a reply or forward, possibly scheduled'
    __tablename__ = 'draft'
    __table_args__ = (
        CheckConstraint('"subject" IS NULL OR length("subject") <= 255', name='ck_draft_0'),
    )
    draft_id: str = Field(primary_key=True)
    thread_id: Optional[str] = Field(default=None, foreign_key='thread.thread_id')
    in_reply_to_message_id: Optional[str] = Field(default=None, foreign_key='message.message_id')
    to_addresses: str = Field(default='[]', nullable=False, description='JSON array of addresses')
    cc_addresses: str = Field(default='[]', nullable=False, description='JSON array of addresses')
    bcc_addresses: str = Field(default='[]', nullable=False, description='JSON array of addresses')
    subject: str = Field(default='', max_length=255, nullable=False)
    body: str = Field(default='', nullable=False)
    signature_id: Optional[str] = Field(default=None, foreign_key='signature.signature_id')
    scheduled_send_at: Optional[NaiveDatetime] = Field(default=None)
    created_at: NaiveDatetime = Field(nullable=False)
    updated_at: NaiveDatetime = Field(nullable=False)


class Attachment(Base, table=True):
    'A file attached to a message or a draft'
    __tablename__ = 'attachment'
    __table_args__ = (
        CheckConstraint('"filename" IS NULL OR length("filename") <= 255', name='ck_attachment_0'),
        CheckConstraint('"mime_type" IS NULL OR length("mime_type") <= 127', name='ck_attachment_1'),
        CheckConstraint('"size_bytes" IS NULL OR "size_bytes" >= 1', name='ck_attachment_2'),
        CheckConstraint('"size_bytes" IS NULL OR "size_bytes" <= 2.62144e+07', name='ck_attachment_3'),
    )
    attachment_id: str = Field(primary_key=True)
    message_id: Optional[str] = Field(default=None, foreign_key='message.message_id')
    draft_id: Optional[str] = Field(default=None, foreign_key='draft.draft_id')
    filename: str = Field(max_length=255, nullable=False)
    mime_type: str = Field(max_length=127, nullable=False)
    size_bytes: int = Field(nullable=False)


class Contact(Base, table=True):
    'An address-book contact'
    __tablename__ = 'contact'
    __table_args__ = (
        CheckConstraint('"name" IS NULL OR length("name") <= 100', name='ck_contact_0'),
        CheckConstraint('"email" IS NULL OR length("email") <= 254', name='ck_contact_1'),
        CheckConstraint('"phone" IS NULL OR length("phone") <= 20', name='ck_contact_2'),
        CheckConstraint('"company" IS NULL OR length("company") <= 100', name='ck_contact_3'),
        CheckConstraint('"notes" IS NULL OR length("notes") <= 1000', name='ck_contact_4'),
    )
    contact_id: str = Field(primary_key=True)
    name: str = Field(max_length=100, nullable=False)
    email: str = Field(unique=True, max_length=254, nullable=False, description='Lowercase')
    phone: Optional[str] = Field(default=None, max_length=20)
    company: Optional[str] = Field(default=None, max_length=100)
    notes: Optional[str] = Field(default=None, max_length=1000)
    created_at: NaiveDatetime = Field(nullable=False)
    updated_at: NaiveDatetime = Field(nullable=False)


class ContactGroup(Base, table=True):
    'A named group of contacts'
    __tablename__ = 'contact_group'
    __table_args__ = (
        CheckConstraint('"name" IS NULL OR length("name") <= 100', name='ck_contact_group_0'),
    )
    group_id: str = Field(primary_key=True)
    name: str = Field(unique=True, max_length=100, nullable=False)
    created_at: NaiveDatetime = Field(nullable=False)


class ContactGroupMember(Base, table=True):
    "A contact's membership in a group"
    __tablename__ = 'contact_group_member'
    membership_id: str = Field(primary_key=True)
    group_id: str = Field(foreign_key='contact_group.group_id', nullable=False)
    contact_id: str = Field(foreign_key='contact.contact_id', nullable=False)
    added_at: NaiveDatetime = Field(nullable=False)


class BlockedSender(Base, table=True):
    'A blocked address whose new mail goes to spam'
    __tablename__ = 'blocked_sender'
    __table_args__ = (
        CheckConstraint('"email" IS NULL OR length("email") <= 254', name='ck_blocked_sender_0'),
    )
    blocked_sender_id: str = Field(primary_key=True)
    email: str = Field(unique=True, max_length=254, nullable=False, description='Lowercase')
    blocked_at: NaiveDatetime = Field(nullable=False)


class Filter(Base, table=True):
    'A rule for incoming mail: all set criteria must match, then its actions apply'
    __tablename__ = 'filter'
    __table_args__ = (
        CheckConstraint('"name" IS NULL OR length("name") <= 100', name='ck_filter_0'),
        CheckConstraint('"from_contains" IS NULL OR length("from_contains") <= 254', name='ck_filter_1'),
        CheckConstraint('"to_contains" IS NULL OR length("to_contains") <= 254', name='ck_filter_2'),
        CheckConstraint('"subject_contains" IS NULL OR length("subject_contains") <= 255', name='ck_filter_3'),
        CheckConstraint('"has_words" IS NULL OR length("has_words") <= 255', name='ck_filter_4'),
        CheckConstraint('"forward_to" IS NULL OR length("forward_to") <= 254', name='ck_filter_5'),
    )
    filter_id: str = Field(primary_key=True)
    name: str = Field(max_length=100, nullable=False)
    from_contains: Optional[str] = Field(default=None, max_length=254)
    to_contains: Optional[str] = Field(default=None, max_length=254)
    subject_contains: Optional[str] = Field(default=None, max_length=255)
    has_words: Optional[str] = Field(default=None, max_length=255)
    apply_label_id: Optional[str] = Field(default=None, foreign_key='label.label_id')
    move_to_folder_id: Optional[str] = Field(default=None, foreign_key='folder.folder_id', description="Never 'drafts', 'sent' or 'trash'")
    mark_as_read: bool = Field(default=False, nullable=False)
    star: bool = Field(default=False, nullable=False)
    forward_to: Optional[str] = Field(default=None, max_length=254)
    is_enabled: bool = Field(default=True, nullable=False)
    created_at: NaiveDatetime = Field(nullable=False)
    updated_at: NaiveDatetime = Field(nullable=False)


class VacationResponder(Base, table=True):
    "The mailbox's single row of vacation auto-reply settings (absent until first set)"
    __tablename__ = 'vacation_responder'
    __table_args__ = (
        CheckConstraint('"subject" IS NULL OR length("subject") <= 255', name='ck_vacation_responder_0'),
        CheckConstraint('"message" IS NULL OR length("message") <= 5000', name='ck_vacation_responder_1'),
    )
    vacation_responder_id: str = Field(primary_key=True)
    enabled: bool = Field(default=False, nullable=False)
    subject: str = Field(default='Out of office', max_length=255, nullable=False)
    message: Optional[str] = Field(default=None, max_length=5000)
    start_date: Optional[date] = Field(default=None)
    end_date: Optional[date] = Field(default=None)
    contacts_only: bool = Field(default=False, nullable=False)
    updated_at: Optional[NaiveDatetime] = Field(default=None)


MODELS: dict[str, type[Base]] = {'folder': Folder, 'label': Label, 'thread': Thread, 'message': Message, 'message_label': MessageLabel, 'signature': Signature, 'draft': Draft, 'attachment': Attachment, 'contact': Contact, 'contact_group': ContactGroup, 'contact_group_member': ContactGroupMember, 'blocked_sender': BlockedSender, 'filter': Filter, 'vacation_responder': VacationResponder}
TABLE_ORDER: list[str] = ['folder', 'label', 'thread', 'signature', 'contact', 'contact_group', 'blocked_sender', 'vacation_responder', 'message', 'contact_group_member', 'filter', 'message_label', 'draft', 'attachment']
PRIMARY_KEY: dict[str, str] = {'folder': 'folder_id', 'label': 'label_id', 'thread': 'thread_id', 'message': 'message_id', 'message_label': 'message_label_id', 'signature': 'signature_id', 'draft': 'draft_id', 'attachment': 'attachment_id', 'contact': 'contact_id', 'contact_group': 'group_id', 'contact_group_member': 'membership_id', 'blocked_sender': 'blocked_sender_id', 'filter': 'filter_id', 'vacation_responder': 'vacation_responder_id'}
ID_PREFIX: dict[str, str] = {'folder': 'FLD', 'label': 'LBL', 'thread': 'THR', 'message': 'MSG', 'message_label': 'MLB', 'signature': 'SIG', 'draft': 'DRF', 'attachment': 'ATT', 'contact': 'CON', 'contact_group': 'GRP', 'contact_group_member': 'CGM', 'blocked_sender': 'BLK', 'filter': 'FLT', 'vacation_responder': 'VAC'}
COLUMNS: dict[str, list[str]] = {'folder': ['folder_id', 'name', 'is_system', 'parent_folder_id', 'created_at'], 'label': ['label_id', 'name', 'color', 'created_at'], 'thread': ['thread_id', 'subject', 'created_at'], 'message': ['message_id', 'thread_id', 'folder_id', 'previous_folder_id', 'is_outgoing', 'sender_email', 'sender_name', 'to_addresses', 'cc_addresses', 'bcc_addresses', 'subject', 'body', 'received_at', 'is_read', 'is_starred', 'in_reply_to_message_id', 'snoozed_until', 'trashed_at'], 'message_label': ['message_label_id', 'message_id', 'label_id', 'applied_at'], 'signature': ['signature_id', 'name', 'text', 'is_default', 'created_at'], 'draft': ['draft_id', 'thread_id', 'in_reply_to_message_id', 'to_addresses', 'cc_addresses', 'bcc_addresses', 'subject', 'body', 'signature_id', 'scheduled_send_at', 'created_at', 'updated_at'], 'attachment': ['attachment_id', 'message_id', 'draft_id', 'filename', 'mime_type', 'size_bytes'], 'contact': ['contact_id', 'name', 'email', 'phone', 'company', 'notes', 'created_at', 'updated_at'], 'contact_group': ['group_id', 'name', 'created_at'], 'contact_group_member': ['membership_id', 'group_id', 'contact_id', 'added_at'], 'blocked_sender': ['blocked_sender_id', 'email', 'blocked_at'], 'filter': ['filter_id', 'name', 'from_contains', 'to_contains', 'subject_contains', 'has_words', 'apply_label_id', 'move_to_folder_id', 'mark_as_read', 'star', 'forward_to', 'is_enabled', 'created_at', 'updated_at'], 'vacation_responder': ['vacation_responder_id', 'enabled', 'subject', 'message', 'start_date', 'end_date', 'contacts_only', 'updated_at']}
COLUMN_TYPES: dict[str, dict[str, str]] = {'folder': {'folder_id': 'string', 'name': 'string', 'is_system': 'boolean', 'parent_folder_id': 'string', 'created_at': 'datetime'}, 'label': {'label_id': 'string', 'name': 'string', 'color': 'string', 'created_at': 'datetime'}, 'thread': {'thread_id': 'string', 'subject': 'string', 'created_at': 'datetime'}, 'message': {'message_id': 'string', 'thread_id': 'string', 'folder_id': 'string', 'previous_folder_id': 'string', 'is_outgoing': 'boolean', 'sender_email': 'string', 'sender_name': 'string', 'to_addresses': 'text', 'cc_addresses': 'text', 'bcc_addresses': 'text', 'subject': 'string', 'body': 'text', 'received_at': 'datetime', 'is_read': 'boolean', 'is_starred': 'boolean', 'in_reply_to_message_id': 'string', 'snoozed_until': 'datetime', 'trashed_at': 'datetime'}, 'message_label': {'message_label_id': 'string', 'message_id': 'string', 'label_id': 'string', 'applied_at': 'datetime'}, 'signature': {'signature_id': 'string', 'name': 'string', 'text': 'text', 'is_default': 'boolean', 'created_at': 'datetime'}, 'draft': {'draft_id': 'string', 'thread_id': 'string', 'in_reply_to_message_id': 'string', 'to_addresses': 'text', 'cc_addresses': 'text', 'bcc_addresses': 'text', 'subject': 'string', 'body': 'text', 'signature_id': 'string', 'scheduled_send_at': 'datetime', 'created_at': 'datetime', 'updated_at': 'datetime'}, 'attachment': {'attachment_id': 'string', 'message_id': 'string', 'draft_id': 'string', 'filename': 'string', 'mime_type': 'string', 'size_bytes': 'integer'}, 'contact': {'contact_id': 'string', 'name': 'string', 'email': 'string', 'phone': 'string', 'company': 'string', 'notes': 'text', 'created_at': 'datetime', 'updated_at': 'datetime'}, 'contact_group': {'group_id': 'string', 'name': 'string', 'created_at': 'datetime'}, 'contact_group_member': {'membership_id': 'string', 'group_id': 'string', 'contact_id': 'string', 'added_at': 'datetime'}, 'blocked_sender': {'blocked_sender_id': 'string', 'email': 'string', 'blocked_at': 'datetime'}, 'filter': {'filter_id': 'string', 'name': 'string', 'from_contains': 'string', 'to_contains': 'string', 'subject_contains': 'string', 'has_words': 'string', 'apply_label_id': 'string', 'move_to_folder_id': 'string', 'mark_as_read': 'boolean', 'star': 'boolean', 'forward_to': 'string', 'is_enabled': 'boolean', 'created_at': 'datetime', 'updated_at': 'datetime'}, 'vacation_responder': {'vacation_responder_id': 'string', 'enabled': 'boolean', 'subject': 'string', 'message': 'text', 'start_date': 'date', 'end_date': 'date', 'contacts_only': 'boolean', 'updated_at': 'datetime'}}


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
