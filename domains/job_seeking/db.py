"""job_seeking DB layer, compiled from spec.json by worldsmith. Do not edit: recompile."""

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


class JobApplication(Base, table=True):
    'Core job application records tracked by the job seeker.'
    __tablename__ = 'job_application'
    __table_args__ = (
        CheckConstraint('"applicant_name" IS NULL OR length("applicant_name") <= 100', name='ck_job_application_0'),
        CheckConstraint('"email" IS NULL OR length("email") <= 200', name='ck_job_application_1'),
        CheckConstraint('"phone" IS NULL OR length("phone") <= 30', name='ck_job_application_2'),
        CheckConstraint('"job_title" IS NULL OR length("job_title") <= 200', name='ck_job_application_3'),
        CheckConstraint('"company_name" IS NULL OR length("company_name") <= 200', name='ck_job_application_4'),
        CheckConstraint('"job_location" IS NULL OR length("job_location") <= 200', name='ck_job_application_5'),
        CheckConstraint('"status" IS NULL OR "status" IN (\'draft\', \'submitted\', \'under_review\', \'interviewing\', \'offer_received\', \'accepted\', \'offer_declined\', \'rejected\', \'withdrawn\', \'archived\')', name='ck_job_application_6'),
        CheckConstraint('"resume_format" IS NULL OR "resume_format" IN (\'pdf\', \'docx\', \'txt\')', name='ck_job_application_7'),
        CheckConstraint('"deadline_type" IS NULL OR "deadline_type" IN (\'application\', \'follow_up\', \'response\', \'offer_decision\')', name='ck_job_application_8'),
        CheckConstraint('"referral_source" IS NULL OR length("referral_source") <= 100', name='ck_job_application_9'),
        CheckConstraint('"referral_person" IS NULL OR length("referral_person") <= 100', name='ck_job_application_10'),
        CheckConstraint('"priority_level" IS NULL OR "priority_level" >= 1', name='ck_job_application_11'),
        CheckConstraint('"priority_level" IS NULL OR "priority_level" <= 5', name='ck_job_application_12'),
        CheckConstraint('"expected_salary_min" IS NULL OR "expected_salary_min" >= 0', name='ck_job_application_13'),
        CheckConstraint('"expected_salary_max" IS NULL OR "expected_salary_max" >= 0', name='ck_job_application_14'),
        CheckConstraint('"salary_currency" IS NULL OR "salary_currency" IN (\'USD\', \'EUR\', \'GBP\', \'CAD\', \'AUD\', \'INR\', \'JPY\', \'CHF\', \'CNY\', \'SGD\')', name='ck_job_application_15'),
    )
    application_id: str = Field(primary_key=True)
    applicant_name: str = Field(max_length=100, nullable=False)
    email: str = Field(max_length=200, nullable=False)
    phone: Optional[str] = Field(default=None, max_length=30)
    job_title: str = Field(max_length=200, nullable=False, description='Title of the position applied for.')
    company_name: str = Field(max_length=200, nullable=False)
    job_location: Optional[str] = Field(default=None, max_length=200, description="City or 'remote' for the position.")
    application_date: Optional[date] = Field(default=None, description='Date the application was submitted; null while status is draft.')
    status: str = Field(default='submitted', nullable=False)
    resume_content: Optional[str] = Field(default=None, description='Text content of the uploaded resume; null until uploaded.')
    resume_format: Optional[str] = Field(default=None)
    resume_uploaded_at: Optional[NaiveDatetime] = Field(default=None, description='When the resume was last uploaded.')
    cover_letter_content: Optional[str] = Field(default=None, description='Text content of the cover letter; null until uploaded.')
    cover_letter_uploaded_at: Optional[NaiveDatetime] = Field(default=None, description='When the cover letter was last uploaded.')
    deadline_date: Optional[date] = Field(default=None, description='Next deadline tracked for the application.')
    deadline_type: Optional[str] = Field(default=None)
    referral_source: Optional[str] = Field(default=None, max_length=100, description='Source of the job lead or referral (e.g. LinkedIn, employee_referral).')
    referral_person: Optional[str] = Field(default=None, max_length=100, description='Name of the person who referred the applicant.')
    priority_level: Optional[int] = Field(default=None, description='Priority 1-5, higher is more important.')
    priority_reason: Optional[str] = Field(default=None)
    expected_salary_min: Optional[float] = Field(default=None)
    expected_salary_max: Optional[float] = Field(default=None)
    salary_currency: str = Field(default='USD', nullable=False)
    created_at: NaiveDatetime = Field(nullable=False)
    updated_at: Optional[NaiveDatetime] = Field(default=None, description='Last update timestamp (episode clock); null if never updated.')


class ApplicationNote(Base, table=True):
    'Free-text notes attached to an application.'
    __tablename__ = 'application_note'
    __table_args__ = (
        CheckConstraint('"note_type" IS NULL OR "note_type" IN (\'general\', \'follow_up\', \'reminder\', \'research\', \'contact\')', name='ck_application_note_0'),
    )
    note_id: str = Field(primary_key=True)
    application_id: str = Field(foreign_key='job_application.application_id', nullable=False, description='The application the note belongs to.')
    note_content: str = Field(nullable=False)
    note_type: str = Field(default='general', nullable=False)
    created_at: NaiveDatetime = Field(nullable=False, description='When the note was created (episode clock).')


class ApplicationStage(Base, table=True):
    'Hiring stages an application has reached.'
    __tablename__ = 'application_stage'
    __table_args__ = (
        CheckConstraint('"stage_name" IS NULL OR "stage_name" IN (\'application_review\', \'phone_screening\', \'technical_interview\', \'behavioral_interview\', \'onsite_interview\', \'final_interview\', \'reference_check\', \'offer_negotiation\')', name='ck_application_stage_0'),
    )
    stage_id: str = Field(primary_key=True)
    application_id: str = Field(foreign_key='job_application.application_id', nullable=False, description='The application that reached the stage.')
    stage_name: str = Field(nullable=False)
    stage_date: NaiveDatetime = Field(nullable=False)
    stage_notes: Optional[str] = Field(default=None)


class InterviewSchedule(Base, table=True):
    'Interviews scheduled for applications.'
    __tablename__ = 'interview_schedule'
    __table_args__ = (
        CheckConstraint('"interview_type" IS NULL OR "interview_type" IN (\'phone_screening\', \'technical_interview\', \'behavioral_interview\', \'system_design\', \'onsite_interview\', \'final_interview\', \'hr_interview\')', name='ck_interview_schedule_0'),
        CheckConstraint('"interviewer_name" IS NULL OR length("interviewer_name") <= 100', name='ck_interview_schedule_1'),
        CheckConstraint('"interview_location" IS NULL OR length("interview_location") <= 200', name='ck_interview_schedule_2'),
        CheckConstraint('"interview_duration_minutes" IS NULL OR "interview_duration_minutes" >= 15', name='ck_interview_schedule_3'),
        CheckConstraint('"interview_duration_minutes" IS NULL OR "interview_duration_minutes" <= 480', name='ck_interview_schedule_4'),
        CheckConstraint('"interview_status" IS NULL OR "interview_status" IN (\'scheduled\', \'completed\', \'cancelled\')', name='ck_interview_schedule_5'),
    )
    interview_id: str = Field(primary_key=True)
    application_id: str = Field(foreign_key='job_application.application_id', nullable=False, description='The application the interview belongs to.')
    interview_type: str = Field(nullable=False)
    interview_date: NaiveDatetime = Field(nullable=False)
    interviewer_name: Optional[str] = Field(default=None, max_length=100)
    interview_location: Optional[str] = Field(default=None, max_length=200, description='Location or platform (e.g. Zoom, office address).')
    interview_duration_minutes: int = Field(default=60, nullable=False)
    interview_status: str = Field(default='scheduled', nullable=False)
    created_at: NaiveDatetime = Field(nullable=False, description='When the interview was scheduled (episode clock).')


class InterviewFeedback(Base, table=True):
    "The job seeker's own notes and self-assessment after a completed interview (one per interview)."
    __tablename__ = 'interview_feedback'
    __table_args__ = (
        CheckConstraint('"performance_rating" IS NULL OR "performance_rating" >= 1', name='ck_interview_feedback_0'),
        CheckConstraint('"performance_rating" IS NULL OR "performance_rating" <= 5', name='ck_interview_feedback_1'),
    )
    feedback_id: str = Field(primary_key=True)
    interview_id: str = Field(foreign_key='interview_schedule.interview_id', unique=True, nullable=False, description='The interview the feedback is about.')
    feedback_content: str = Field(nullable=False, description='Notes about how the interview went.')
    performance_rating: Optional[int] = Field(default=None)
    created_at: NaiveDatetime = Field(nullable=False, description='When the feedback was recorded (episode clock).')


class JobOffer(Base, table=True):
    'Job offers received for applications (at most one per application).'
    __tablename__ = 'job_offer'
    __table_args__ = (
        CheckConstraint('"base_salary" IS NULL OR "base_salary" >= 0', name='ck_job_offer_0'),
        CheckConstraint('"salary_currency" IS NULL OR "salary_currency" IN (\'USD\', \'EUR\', \'GBP\', \'CAD\', \'AUD\', \'INR\', \'JPY\', \'CHF\', \'CNY\', \'SGD\')', name='ck_job_offer_1'),
        CheckConstraint('"signing_bonus" IS NULL OR "signing_bonus" >= 0', name='ck_job_offer_2'),
        CheckConstraint('"offer_status" IS NULL OR "offer_status" IN (\'pending\', \'accepted\', \'declined\')', name='ck_job_offer_3'),
    )
    offer_id: str = Field(primary_key=True)
    application_id: str = Field(foreign_key='job_application.application_id', unique=True, nullable=False)
    base_salary: float = Field(nullable=False)
    salary_currency: str = Field(default='USD', nullable=False)
    signing_bonus: Optional[float] = Field(default=None)
    start_date: Optional[date] = Field(default=None)
    response_deadline: Optional[date] = Field(default=None, description='Last day to respond to the offer.')
    offer_status: str = Field(default='pending', nullable=False)
    received_date: date = Field(nullable=False, description='Date the offer was recorded (episode clock).')
    responded_at: Optional[NaiveDatetime] = Field(default=None, description='When the job seeker accepted or declined (episode clock).')


class UserProfile(Base, table=True):
    "The job seeker's profile, the source of applications made from postings."
    __tablename__ = 'user_profile'
    __table_args__ = (
        CheckConstraint('"full_name" IS NULL OR length("full_name") <= 100', name='ck_user_profile_0'),
        CheckConstraint('"email" IS NULL OR length("email") <= 200', name='ck_user_profile_1'),
        CheckConstraint('"phone" IS NULL OR length("phone") <= 30', name='ck_user_profile_2'),
        CheckConstraint('"headline" IS NULL OR length("headline") <= 200', name='ck_user_profile_3'),
        CheckConstraint('"location" IS NULL OR length("location") <= 200', name='ck_user_profile_4'),
        CheckConstraint('"years_experience" IS NULL OR "years_experience" >= 0', name='ck_user_profile_5'),
        CheckConstraint('"years_experience" IS NULL OR "years_experience" <= 60', name='ck_user_profile_6'),
        CheckConstraint('"desired_salary_min" IS NULL OR "desired_salary_min" >= 0', name='ck_user_profile_7'),
        CheckConstraint('"salary_currency" IS NULL OR "salary_currency" IN (\'USD\', \'EUR\', \'GBP\', \'CAD\', \'AUD\', \'INR\', \'JPY\', \'CHF\', \'CNY\', \'SGD\')', name='ck_user_profile_8'),
    )
    profile_id: str = Field(primary_key=True)
    full_name: str = Field(max_length=100, nullable=False)
    email: str = Field(unique=True, max_length=200, nullable=False)
    phone: Optional[str] = Field(default=None, max_length=30)
    headline: Optional[str] = Field(default=None, max_length=200)
    location: Optional[str] = Field(default=None, max_length=200)
    years_experience: Optional[int] = Field(default=None)
    skills: Optional[str] = Field(default=None, description='Skill names, comma and space separated, in the order given.')
    desired_salary_min: Optional[float] = Field(default=None)
    salary_currency: str = Field(default='USD', nullable=False)
    created_at: NaiveDatetime = Field(nullable=False)
    updated_at: Optional[NaiveDatetime] = Field(default=None, description='Last update timestamp (episode clock); null if never updated.')


class JobPosting(Base, table=True):
    'Job postings the job seeker saved while searching.'
    __tablename__ = 'job_posting'
    __table_args__ = (
        CheckConstraint('"company_name" IS NULL OR length("company_name") <= 200', name='ck_job_posting_0'),
        CheckConstraint('"job_title" IS NULL OR length("job_title") <= 200', name='ck_job_posting_1'),
        CheckConstraint('"location" IS NULL OR length("location") <= 200', name='ck_job_posting_2'),
        CheckConstraint('"employment_type" IS NULL OR "employment_type" IN (\'full_time\', \'part_time\', \'contract\', \'internship\')', name='ck_job_posting_3'),
        CheckConstraint('"salary_min" IS NULL OR "salary_min" >= 0', name='ck_job_posting_4'),
        CheckConstraint('"salary_max" IS NULL OR "salary_max" >= 0', name='ck_job_posting_5'),
        CheckConstraint('"salary_currency" IS NULL OR "salary_currency" IN (\'USD\', \'EUR\', \'GBP\', \'CAD\', \'AUD\', \'INR\', \'JPY\', \'CHF\', \'CNY\', \'SGD\')', name='ck_job_posting_6'),
        CheckConstraint('"source" IS NULL OR length("source") <= 100', name='ck_job_posting_7'),
        CheckConstraint('"posting_status" IS NULL OR "posting_status" IN (\'open\', \'closed\')', name='ck_job_posting_8'),
    )
    posting_id: str = Field(primary_key=True)
    company_name: str = Field(max_length=200, nullable=False)
    job_title: str = Field(max_length=200, nullable=False)
    location: Optional[str] = Field(default=None, max_length=200)
    employment_type: str = Field(default='full_time', nullable=False)
    salary_min: Optional[float] = Field(default=None, description='Lower end of the advertised yearly salary.')
    salary_max: Optional[float] = Field(default=None, description='Upper end of the advertised yearly salary.')
    salary_currency: str = Field(default='USD', nullable=False)
    required_skills: Optional[str] = Field(default=None, description='Skills asked for, comma and space separated.')
    source: Optional[str] = Field(default=None, max_length=100)
    closing_date: Optional[date] = Field(default=None)
    posting_status: str = Field(default='open', nullable=False)
    saved_at: NaiveDatetime = Field(nullable=False, description='When the posting was saved (episode clock).')


MODELS: dict[str, type[Base]] = {'job_application': JobApplication, 'application_note': ApplicationNote, 'application_stage': ApplicationStage, 'interview_schedule': InterviewSchedule, 'interview_feedback': InterviewFeedback, 'job_offer': JobOffer, 'user_profile': UserProfile, 'job_posting': JobPosting}
TABLE_ORDER: list[str] = ['job_application', 'user_profile', 'job_posting', 'application_note', 'application_stage', 'interview_schedule', 'job_offer', 'interview_feedback']
PRIMARY_KEY: dict[str, str] = {'job_application': 'application_id', 'application_note': 'note_id', 'application_stage': 'stage_id', 'interview_schedule': 'interview_id', 'interview_feedback': 'feedback_id', 'job_offer': 'offer_id', 'user_profile': 'profile_id', 'job_posting': 'posting_id'}
ID_PREFIX: dict[str, str] = {'job_application': 'APP', 'application_note': 'NOTE', 'application_stage': 'STG', 'interview_schedule': 'INT', 'interview_feedback': 'FDB', 'job_offer': 'OFR', 'user_profile': 'PRO', 'job_posting': 'JOB'}
COLUMNS: dict[str, list[str]] = {'job_application': ['application_id', 'applicant_name', 'email', 'phone', 'job_title', 'company_name', 'job_location', 'application_date', 'status', 'resume_content', 'resume_format', 'resume_uploaded_at', 'cover_letter_content', 'cover_letter_uploaded_at', 'deadline_date', 'deadline_type', 'referral_source', 'referral_person', 'priority_level', 'priority_reason', 'expected_salary_min', 'expected_salary_max', 'salary_currency', 'created_at', 'updated_at'], 'application_note': ['note_id', 'application_id', 'note_content', 'note_type', 'created_at'], 'application_stage': ['stage_id', 'application_id', 'stage_name', 'stage_date', 'stage_notes'], 'interview_schedule': ['interview_id', 'application_id', 'interview_type', 'interview_date', 'interviewer_name', 'interview_location', 'interview_duration_minutes', 'interview_status', 'created_at'], 'interview_feedback': ['feedback_id', 'interview_id', 'feedback_content', 'performance_rating', 'created_at'], 'job_offer': ['offer_id', 'application_id', 'base_salary', 'salary_currency', 'signing_bonus', 'start_date', 'response_deadline', 'offer_status', 'received_date', 'responded_at'], 'user_profile': ['profile_id', 'full_name', 'email', 'phone', 'headline', 'location', 'years_experience', 'skills', 'desired_salary_min', 'salary_currency', 'created_at', 'updated_at'], 'job_posting': ['posting_id', 'company_name', 'job_title', 'location', 'employment_type', 'salary_min', 'salary_max', 'salary_currency', 'required_skills', 'source', 'closing_date', 'posting_status', 'saved_at']}
COLUMN_TYPES: dict[str, dict[str, str]] = {'job_application': {'application_id': 'string', 'applicant_name': 'string', 'email': 'string', 'phone': 'string', 'job_title': 'string', 'company_name': 'string', 'job_location': 'string', 'application_date': 'date', 'status': 'string', 'resume_content': 'text', 'resume_format': 'string', 'resume_uploaded_at': 'datetime', 'cover_letter_content': 'text', 'cover_letter_uploaded_at': 'datetime', 'deadline_date': 'date', 'deadline_type': 'string', 'referral_source': 'string', 'referral_person': 'string', 'priority_level': 'integer', 'priority_reason': 'text', 'expected_salary_min': 'number', 'expected_salary_max': 'number', 'salary_currency': 'string', 'created_at': 'datetime', 'updated_at': 'datetime'}, 'application_note': {'note_id': 'string', 'application_id': 'string', 'note_content': 'text', 'note_type': 'string', 'created_at': 'datetime'}, 'application_stage': {'stage_id': 'string', 'application_id': 'string', 'stage_name': 'string', 'stage_date': 'datetime', 'stage_notes': 'text'}, 'interview_schedule': {'interview_id': 'string', 'application_id': 'string', 'interview_type': 'string', 'interview_date': 'datetime', 'interviewer_name': 'string', 'interview_location': 'string', 'interview_duration_minutes': 'integer', 'interview_status': 'string', 'created_at': 'datetime'}, 'interview_feedback': {'feedback_id': 'string', 'interview_id': 'string', 'feedback_content': 'text', 'performance_rating': 'integer', 'created_at': 'datetime'}, 'job_offer': {'offer_id': 'string', 'application_id': 'string', 'base_salary': 'number', 'salary_currency': 'string', 'signing_bonus': 'number', 'start_date': 'date', 'response_deadline': 'date', 'offer_status': 'string', 'received_date': 'date', 'responded_at': 'datetime'}, 'user_profile': {'profile_id': 'string', 'full_name': 'string', 'email': 'string', 'phone': 'string', 'headline': 'string', 'location': 'string', 'years_experience': 'integer', 'skills': 'text', 'desired_salary_min': 'number', 'salary_currency': 'string', 'created_at': 'datetime', 'updated_at': 'datetime'}, 'job_posting': {'posting_id': 'string', 'company_name': 'string', 'job_title': 'string', 'location': 'string', 'employment_type': 'string', 'salary_min': 'number', 'salary_max': 'number', 'salary_currency': 'string', 'required_skills': 'text', 'source': 'string', 'closing_date': 'date', 'posting_status': 'string', 'saved_at': 'datetime'}}


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
