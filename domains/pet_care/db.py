"""pet_care DB layer, compiled from spec.json by worldsmith. Do not edit: recompile."""

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


class Pet(Base, table=True):
    'A pet of the household; age and latest weight are derived'
    __tablename__ = 'pet'
    __table_args__ = (
        CheckConstraint('"name" IS NULL OR length("name") <= 100', name='ck_pet_0'),
        CheckConstraint('"species" IS NULL OR "species" IN (\'dog\', \'cat\', \'bird\', \'rabbit\', \'rodent\', \'reptile\', \'fish\', \'other\')', name='ck_pet_1'),
        CheckConstraint('"breed" IS NULL OR length("breed") <= 100', name='ck_pet_2'),
        CheckConstraint('"sex" IS NULL OR "sex" IN (\'male\', \'female\', \'unknown\')', name='ck_pet_3'),
        CheckConstraint('"microchip_number" IS NULL OR length("microchip_number") <= 15', name='ck_pet_4'),
        CheckConstraint('"status" IS NULL OR "status" IN (\'active\', \'rehomed\', \'deceased\')', name='ck_pet_5'),
    )
    pet_id: str = Field(primary_key=True)
    name: str = Field(max_length=100, nullable=False)
    species: str = Field(nullable=False)
    breed: str = Field(max_length=100, nullable=False)
    sex: str = Field(nullable=False)
    birth_date: date = Field(nullable=False)
    microchip_number: Optional[str] = Field(default=None, unique=True, max_length=15, description='15 digits; null when none')
    neutered: bool = Field(default=False, nullable=False)
    status: str = Field(default='active', nullable=False)
    notes: str = Field(default='', nullable=False)
    created_at: NaiveDatetime = Field(nullable=False)


class VetClinic(Base, table=True):
    'A saved veterinary clinic'
    __tablename__ = 'vet_clinic'
    __table_args__ = (
        CheckConstraint('"name" IS NULL OR length("name") <= 150', name='ck_vet_clinic_0'),
        CheckConstraint('"phone" IS NULL OR length("phone") <= 40', name='ck_vet_clinic_1'),
        CheckConstraint('"address" IS NULL OR length("address") <= 300', name='ck_vet_clinic_2'),
    )
    clinic_id: str = Field(primary_key=True)
    name: str = Field(unique=True, max_length=150, nullable=False, description='Unique case-insensitively')
    phone: str = Field(max_length=40, nullable=False)
    address: str = Field(max_length=300, nullable=False)
    emergency_care: bool = Field(default=False, nullable=False)


class Appointment(Base, table=True):
    'A vet appointment of a pet at a clinic'
    __tablename__ = 'appointment'
    __table_args__ = (
        CheckConstraint('"reason" IS NULL OR length("reason") <= 300', name='ck_appointment_0'),
        CheckConstraint('"status" IS NULL OR "status" IN (\'scheduled\', \'completed\', \'cancelled\')', name='ck_appointment_1'),
        CheckConstraint('"amount_charged" IS NULL OR "amount_charged" >= 0', name='ck_appointment_2'),
    )
    appointment_id: str = Field(primary_key=True)
    pet_id: str = Field(foreign_key='pet.pet_id', nullable=False)
    clinic_id: str = Field(foreign_key='vet_clinic.clinic_id', nullable=False)
    scheduled_at: NaiveDatetime = Field(nullable=False)
    reason: str = Field(max_length=300, nullable=False)
    status: str = Field(default='scheduled', nullable=False)
    diagnosis_notes: Optional[str] = Field(default=None)
    amount_charged: Optional[float] = Field(default=None)
    expense_id: Optional[str] = Field(default=None, foreign_key='expense.expense_id', description='Veterinary expense logged on completion')
    cancellation_reason: Optional[str] = Field(default=None)
    created_at: NaiveDatetime = Field(nullable=False)
    completed_at: Optional[NaiveDatetime] = Field(default=None)
    cancelled_at: Optional[NaiveDatetime] = Field(default=None)


class Vaccination(Base, table=True):
    'A vaccine given to a pet; due_status is computed on read, not stored'
    __tablename__ = 'vaccination'
    __table_args__ = (
        CheckConstraint('"vaccine_name" IS NULL OR length("vaccine_name") <= 100', name='ck_vaccination_0'),
    )
    vaccination_id: str = Field(primary_key=True)
    pet_id: str = Field(foreign_key='pet.pet_id', nullable=False)
    vaccine_name: str = Field(max_length=100, nullable=False)
    date_given: date = Field(nullable=False)
    next_due_date: Optional[date] = Field(default=None)
    clinic_id: Optional[str] = Field(default=None, foreign_key='vet_clinic.clinic_id')
    notes: str = Field(default='', nullable=False)
    created_at: NaiveDatetime = Field(nullable=False)


class Medication(Base, table=True):
    'A prescription of a pet; its status is computed from the dates, today and stopped_at'
    __tablename__ = 'medication'
    __table_args__ = (
        CheckConstraint('"drug_name" IS NULL OR length("drug_name") <= 100', name='ck_medication_0'),
        CheckConstraint('"dose" IS NULL OR "dose" >= 0.001', name='ck_medication_1'),
        CheckConstraint('"dose_unit" IS NULL OR "dose_unit" IN (\'mg\', \'ml\', \'tablet\', \'capsule\', \'drop\', \'application\')', name='ck_medication_2'),
        CheckConstraint('"times_per_day" IS NULL OR "times_per_day" >= 1', name='ck_medication_3'),
        CheckConstraint('"times_per_day" IS NULL OR "times_per_day" <= 6', name='ck_medication_4'),
    )
    medication_id: str = Field(primary_key=True)
    pet_id: str = Field(foreign_key='pet.pet_id', nullable=False)
    drug_name: str = Field(max_length=100, nullable=False)
    dose: float = Field(nullable=False, description='Greater than 0')
    dose_unit: str = Field(nullable=False)
    times_per_day: int = Field(nullable=False)
    start_date: date = Field(nullable=False)
    end_date: Optional[date] = Field(default=None, description='Null when open-ended')
    instructions: str = Field(default='', nullable=False)
    stop_reason: Optional[str] = Field(default=None)
    stopped_at: Optional[NaiveDatetime] = Field(default=None, description='Set by stop_medication; the prescription is then stopped')
    created_at: NaiveDatetime = Field(nullable=False)


class MedicationDose(Base, table=True):
    'A logged dose of a prescription'
    __tablename__ = 'medication_dose'
    dose_id: str = Field(primary_key=True)
    medication_id: str = Field(foreign_key='medication.medication_id', nullable=False)
    given_at: NaiveDatetime = Field(nullable=False)
    note: str = Field(default='', nullable=False)


class HealthCondition(Base, table=True):
    'An allergy or health condition of a pet'
    __tablename__ = 'health_condition'
    __table_args__ = (
        CheckConstraint('"type" IS NULL OR "type" IN (\'allergy\', \'chronic\', \'acute\', \'injury\')', name='ck_health_condition_0'),
        CheckConstraint('"name" IS NULL OR length("name") <= 150', name='ck_health_condition_1'),
        CheckConstraint('"severity" IS NULL OR "severity" IN (\'mild\', \'moderate\', \'severe\')', name='ck_health_condition_2'),
        CheckConstraint('"status" IS NULL OR "status" IN (\'active\', \'resolved\')', name='ck_health_condition_3'),
    )
    condition_id: str = Field(primary_key=True)
    pet_id: str = Field(foreign_key='pet.pet_id', nullable=False)
    type: str = Field(nullable=False)
    name: str = Field(max_length=150, nullable=False)
    severity: str = Field(nullable=False)
    status: str = Field(default='active', nullable=False)
    diagnosed_date: date = Field(nullable=False)
    resolved_date: Optional[date] = Field(default=None)
    notes: str = Field(default='', nullable=False)


class WeightEntry(Base, table=True):
    'A weight measurement of a pet'
    __tablename__ = 'weight_entry'
    __table_args__ = (
        CheckConstraint('"weight_kg" IS NULL OR "weight_kg" >= 0.001', name='ck_weight_entry_0'),
        CheckConstraint('"weight_kg" IS NULL OR "weight_kg" <= 150', name='ck_weight_entry_1'),
    )
    weight_entry_id: str = Field(primary_key=True)
    pet_id: str = Field(foreign_key='pet.pet_id', nullable=False)
    weight_kg: float = Field(nullable=False)
    measured_at: NaiveDatetime = Field(nullable=False)
    note: str = Field(default='', nullable=False)


class Supply(Base, table=True):
    'An inventory item with its stock'
    __tablename__ = 'supply'
    __table_args__ = (
        CheckConstraint('"name" IS NULL OR length("name") <= 150', name='ck_supply_0'),
        CheckConstraint('"category" IS NULL OR "category" IN (\'food\', \'treats\', \'litter\', \'medication\', \'toys\', \'grooming\', \'other\')', name='ck_supply_1'),
        CheckConstraint('"quantity" IS NULL OR "quantity" >= 0', name='ck_supply_2'),
        CheckConstraint('"unit" IS NULL OR "unit" IN (\'g\', \'kg\', \'ml\', \'l\', \'piece\')', name='ck_supply_3'),
        CheckConstraint('"reorder_threshold" IS NULL OR "reorder_threshold" >= 0', name='ck_supply_4'),
    )
    supply_id: str = Field(primary_key=True)
    name: str = Field(unique=True, max_length=150, nullable=False, description='Unique case-insensitively')
    category: str = Field(nullable=False)
    quantity: float = Field(default=0, nullable=False)
    unit: str = Field(nullable=False)
    reorder_threshold: float = Field(default=0, nullable=False)
    updated_at: NaiveDatetime = Field(nullable=False)


class SupplyAdjustment(Base, table=True):
    'A stock change made with adjust_supply_quantity'
    __tablename__ = 'supply_adjustment'
    __table_args__ = (
        CheckConstraint('"previous_quantity" IS NULL OR "previous_quantity" >= 0', name='ck_supply_adjustment_0'),
        CheckConstraint('"quantity" IS NULL OR "quantity" >= 0', name='ck_supply_adjustment_1'),
        CheckConstraint('"reason" IS NULL OR "reason" IN (\'purchase\', \'usage\', \'spoilage\', \'correction\')', name='ck_supply_adjustment_2'),
    )
    adjustment_id: str = Field(primary_key=True)
    supply_id: str = Field(foreign_key='supply.supply_id', nullable=False)
    delta: float = Field(nullable=False)
    previous_quantity: float = Field(nullable=False)
    quantity: float = Field(nullable=False)
    reason: str = Field(nullable=False)
    created_at: NaiveDatetime = Field(nullable=False)


class FeedingSchedule(Base, table=True):
    'A daily feeding plan of a pet for one food or treats item'
    __tablename__ = 'feeding_schedule'
    __table_args__ = (
        CheckConstraint('"portion_grams" IS NULL OR "portion_grams" >= 0.1', name='ck_feeding_schedule_0'),
        CheckConstraint('"portion_grams" IS NULL OR "portion_grams" <= 2000', name='ck_feeding_schedule_1'),
        CheckConstraint('"feeding_times" IS NULL OR length("feeding_times") <= 40', name='ck_feeding_schedule_2'),
    )
    schedule_id: str = Field(primary_key=True)
    pet_id: str = Field(foreign_key='pet.pet_id', nullable=False)
    supply_id: str = Field(foreign_key='supply.supply_id', nullable=False)
    portion_grams: float = Field(nullable=False)
    feeding_times: str = Field(max_length=40, nullable=False, description="Distinct HH:MM times, ascending, comma-separated, e.g. '07:30,18:00'")
    created_at: NaiveDatetime = Field(nullable=False)


class FeedingLog(Base, table=True):
    "A logged meal; its portion was deducted from the item's stock"
    __tablename__ = 'feeding_log'
    __table_args__ = (
        CheckConstraint('"portion_grams" IS NULL OR "portion_grams" >= 0.1', name='ck_feeding_log_0'),
        CheckConstraint('"portion_grams" IS NULL OR "portion_grams" <= 2000', name='ck_feeding_log_1'),
    )
    feeding_id: str = Field(primary_key=True)
    pet_id: str = Field(foreign_key='pet.pet_id', nullable=False)
    supply_id: str = Field(foreign_key='supply.supply_id', nullable=False)
    portion_grams: float = Field(nullable=False)
    fed_at: NaiveDatetime = Field(nullable=False)
    note: str = Field(default='', nullable=False)


class Activity(Base, table=True):
    'A walk, play or training session of a pet'
    __tablename__ = 'activity'
    __table_args__ = (
        CheckConstraint('"activity_type" IS NULL OR "activity_type" IN (\'walk\', \'play\', \'training\')', name='ck_activity_0'),
        CheckConstraint('"duration_minutes" IS NULL OR "duration_minutes" >= 1', name='ck_activity_1'),
        CheckConstraint('"duration_minutes" IS NULL OR "duration_minutes" <= 600', name='ck_activity_2'),
        CheckConstraint('"distance_km" IS NULL OR "distance_km" >= 0.01', name='ck_activity_3'),
        CheckConstraint('"distance_km" IS NULL OR "distance_km" <= 50', name='ck_activity_4'),
    )
    activity_id: str = Field(primary_key=True)
    pet_id: str = Field(foreign_key='pet.pet_id', nullable=False)
    activity_type: str = Field(nullable=False)
    duration_minutes: int = Field(nullable=False)
    distance_km: Optional[float] = Field(default=None, description='Walks only')
    started_at: NaiveDatetime = Field(nullable=False)
    ended_at: NaiveDatetime = Field(nullable=False)
    notes: str = Field(default='', nullable=False)


class GroomingSession(Base, table=True):
    'A grooming appointment of a pet'
    __tablename__ = 'grooming_session'
    __table_args__ = (
        CheckConstraint('"service_type" IS NULL OR "service_type" IN (\'bath\', \'haircut\', \'nail_trim\', \'full_groom\')', name='ck_grooming_session_0'),
        CheckConstraint('"groomer_name" IS NULL OR length("groomer_name") <= 150', name='ck_grooming_session_1'),
        CheckConstraint('"quoted_price" IS NULL OR "quoted_price" >= 0', name='ck_grooming_session_2'),
        CheckConstraint('"price_paid" IS NULL OR "price_paid" >= 0', name='ck_grooming_session_3'),
        CheckConstraint('"status" IS NULL OR "status" IN (\'scheduled\', \'completed\', \'cancelled\')', name='ck_grooming_session_4'),
    )
    grooming_id: str = Field(primary_key=True)
    pet_id: str = Field(foreign_key='pet.pet_id', nullable=False)
    service_type: str = Field(nullable=False)
    groomer_name: str = Field(max_length=150, nullable=False)
    scheduled_at: NaiveDatetime = Field(nullable=False)
    quoted_price: Optional[float] = Field(default=None)
    price_paid: Optional[float] = Field(default=None)
    status: str = Field(default='scheduled', nullable=False)
    notes: str = Field(default='', nullable=False)
    expense_id: Optional[str] = Field(default=None, foreign_key='expense.expense_id', description='Grooming expense logged on completion')
    created_at: NaiveDatetime = Field(nullable=False)
    completed_at: Optional[NaiveDatetime] = Field(default=None)
    cancelled_at: Optional[NaiveDatetime] = Field(default=None)


class Expense(Base, table=True):
    'A pet expense, optionally for one pet'
    __tablename__ = 'expense'
    __table_args__ = (
        CheckConstraint('"category" IS NULL OR "category" IN (\'veterinary\', \'food\', \'treats\', \'medication\', \'grooming\', \'supplies\', \'pet_sitting\', \'insurance\', \'training\', \'other\')', name='ck_expense_0'),
        CheckConstraint('"amount" IS NULL OR "amount" >= 0.01', name='ck_expense_1'),
    )
    expense_id: str = Field(primary_key=True)
    pet_id: Optional[str] = Field(default=None, foreign_key='pet.pet_id', description='Null for household-wide expenses or after the pet is removed')
    category: str = Field(nullable=False)
    amount: float = Field(nullable=False)
    expense_date: date = Field(nullable=False)
    description: str = Field(nullable=False)
    created_at: NaiveDatetime = Field(nullable=False)


class Sitter(Base, table=True):
    'A saved pet sitter or walker'
    __tablename__ = 'sitter'
    __table_args__ = (
        CheckConstraint('"name" IS NULL OR length("name") <= 150', name='ck_sitter_0'),
        CheckConstraint('"phone" IS NULL OR length("phone") <= 40', name='ck_sitter_1'),
        CheckConstraint('"email" IS NULL OR length("email") <= 200', name='ck_sitter_2'),
        CheckConstraint('"services" IS NULL OR length("services") <= 100', name='ck_sitter_3'),
        CheckConstraint('"daily_rate" IS NULL OR "daily_rate" >= 0.01', name='ck_sitter_4'),
    )
    sitter_id: str = Field(primary_key=True)
    name: str = Field(max_length=150, nullable=False)
    phone: str = Field(unique=True, max_length=40, nullable=False)
    email: Optional[str] = Field(default=None, max_length=200)
    services: str = Field(max_length=100, nullable=False, description='Comma-separated, in the order pet_sitting, dog_walking, boarding, drop_in_visits')
    daily_rate: float = Field(nullable=False)


class SitterBooking(Base, table=True):
    'A booking of a sitter for a date range; booking_status is computed from cancelled, the dates and today'
    __tablename__ = 'sitter_booking'
    __table_args__ = (
        CheckConstraint('"days" IS NULL OR "days" >= 1', name='ck_sitter_booking_0'),
        CheckConstraint('"total_cost" IS NULL OR "total_cost" >= 0', name='ck_sitter_booking_1'),
    )
    booking_id: str = Field(primary_key=True)
    sitter_id: str = Field(foreign_key='sitter.sitter_id', nullable=False)
    start_date: date = Field(nullable=False)
    end_date: date = Field(nullable=False)
    days: int = Field(nullable=False)
    total_cost: float = Field(nullable=False)
    instructions: str = Field(default='', nullable=False)
    cancelled: bool = Field(default=False, nullable=False)
    cancelled_at: Optional[NaiveDatetime] = Field(default=None)
    created_at: NaiveDatetime = Field(nullable=False)


class SitterBookingPet(Base, table=True):
    'A pet covered by a sitter booking'
    __tablename__ = 'sitter_booking_pet'
    booking_pet_id: str = Field(primary_key=True)
    booking_id: str = Field(foreign_key='sitter_booking.booking_id', nullable=False)
    pet_id: str = Field(foreign_key='pet.pet_id', nullable=False)


class Reminder(Base, table=True):
    'A care reminder of a pet; overdue is computed'
    __tablename__ = 'reminder'
    __table_args__ = (
        CheckConstraint('"title" IS NULL OR length("title") <= 200', name='ck_reminder_0'),
        CheckConstraint('"repeat" IS NULL OR "repeat" IN (\'none\', \'daily\', \'weekly\', \'monthly\')', name='ck_reminder_1'),
        CheckConstraint('"status" IS NULL OR "status" IN (\'pending\', \'done\')', name='ck_reminder_2'),
    )
    reminder_id: str = Field(primary_key=True)
    pet_id: str = Field(foreign_key='pet.pet_id', nullable=False)
    title: str = Field(max_length=200, nullable=False)
    due_at: NaiveDatetime = Field(nullable=False)
    repeat: str = Field(default='none', nullable=False)
    status: str = Field(default='pending', nullable=False)
    completed_at: Optional[NaiveDatetime] = Field(default=None)
    created_at: NaiveDatetime = Field(nullable=False)


MODELS: dict[str, type[Base]] = {'pet': Pet, 'vet_clinic': VetClinic, 'appointment': Appointment, 'vaccination': Vaccination, 'medication': Medication, 'medication_dose': MedicationDose, 'health_condition': HealthCondition, 'weight_entry': WeightEntry, 'supply': Supply, 'supply_adjustment': SupplyAdjustment, 'feeding_schedule': FeedingSchedule, 'feeding_log': FeedingLog, 'activity': Activity, 'grooming_session': GroomingSession, 'expense': Expense, 'sitter': Sitter, 'sitter_booking': SitterBooking, 'sitter_booking_pet': SitterBookingPet, 'reminder': Reminder}
TABLE_ORDER: list[str] = ['pet', 'vet_clinic', 'supply', 'sitter', 'vaccination', 'medication', 'health_condition', 'weight_entry', 'supply_adjustment', 'feeding_schedule', 'feeding_log', 'activity', 'expense', 'sitter_booking', 'reminder', 'appointment', 'medication_dose', 'grooming_session', 'sitter_booking_pet']
PRIMARY_KEY: dict[str, str] = {'pet': 'pet_id', 'vet_clinic': 'clinic_id', 'appointment': 'appointment_id', 'vaccination': 'vaccination_id', 'medication': 'medication_id', 'medication_dose': 'dose_id', 'health_condition': 'condition_id', 'weight_entry': 'weight_entry_id', 'supply': 'supply_id', 'supply_adjustment': 'adjustment_id', 'feeding_schedule': 'schedule_id', 'feeding_log': 'feeding_id', 'activity': 'activity_id', 'grooming_session': 'grooming_id', 'expense': 'expense_id', 'sitter': 'sitter_id', 'sitter_booking': 'booking_id', 'sitter_booking_pet': 'booking_pet_id', 'reminder': 'reminder_id'}
ID_PREFIX: dict[str, str] = {'pet': 'PET', 'vet_clinic': 'VC', 'appointment': 'APT', 'vaccination': 'VAC', 'medication': 'MED', 'medication_dose': 'DOSE', 'health_condition': 'COND', 'weight_entry': 'WT', 'supply': 'SUP', 'supply_adjustment': 'ADJ', 'feeding_schedule': 'FS', 'feeding_log': 'FEED', 'activity': 'ACT', 'grooming_session': 'GRM', 'expense': 'EXP', 'sitter': 'SIT', 'sitter_booking': 'BKG', 'sitter_booking_pet': 'BKP', 'reminder': 'REM'}
COLUMNS: dict[str, list[str]] = {'pet': ['pet_id', 'name', 'species', 'breed', 'sex', 'birth_date', 'microchip_number', 'neutered', 'status', 'notes', 'created_at'], 'vet_clinic': ['clinic_id', 'name', 'phone', 'address', 'emergency_care'], 'appointment': ['appointment_id', 'pet_id', 'clinic_id', 'scheduled_at', 'reason', 'status', 'diagnosis_notes', 'amount_charged', 'expense_id', 'cancellation_reason', 'created_at', 'completed_at', 'cancelled_at'], 'vaccination': ['vaccination_id', 'pet_id', 'vaccine_name', 'date_given', 'next_due_date', 'clinic_id', 'notes', 'created_at'], 'medication': ['medication_id', 'pet_id', 'drug_name', 'dose', 'dose_unit', 'times_per_day', 'start_date', 'end_date', 'instructions', 'stop_reason', 'stopped_at', 'created_at'], 'medication_dose': ['dose_id', 'medication_id', 'given_at', 'note'], 'health_condition': ['condition_id', 'pet_id', 'type', 'name', 'severity', 'status', 'diagnosed_date', 'resolved_date', 'notes'], 'weight_entry': ['weight_entry_id', 'pet_id', 'weight_kg', 'measured_at', 'note'], 'supply': ['supply_id', 'name', 'category', 'quantity', 'unit', 'reorder_threshold', 'updated_at'], 'supply_adjustment': ['adjustment_id', 'supply_id', 'delta', 'previous_quantity', 'quantity', 'reason', 'created_at'], 'feeding_schedule': ['schedule_id', 'pet_id', 'supply_id', 'portion_grams', 'feeding_times', 'created_at'], 'feeding_log': ['feeding_id', 'pet_id', 'supply_id', 'portion_grams', 'fed_at', 'note'], 'activity': ['activity_id', 'pet_id', 'activity_type', 'duration_minutes', 'distance_km', 'started_at', 'ended_at', 'notes'], 'grooming_session': ['grooming_id', 'pet_id', 'service_type', 'groomer_name', 'scheduled_at', 'quoted_price', 'price_paid', 'status', 'notes', 'expense_id', 'created_at', 'completed_at', 'cancelled_at'], 'expense': ['expense_id', 'pet_id', 'category', 'amount', 'expense_date', 'description', 'created_at'], 'sitter': ['sitter_id', 'name', 'phone', 'email', 'services', 'daily_rate'], 'sitter_booking': ['booking_id', 'sitter_id', 'start_date', 'end_date', 'days', 'total_cost', 'instructions', 'cancelled', 'cancelled_at', 'created_at'], 'sitter_booking_pet': ['booking_pet_id', 'booking_id', 'pet_id'], 'reminder': ['reminder_id', 'pet_id', 'title', 'due_at', 'repeat', 'status', 'completed_at', 'created_at']}
COLUMN_TYPES: dict[str, dict[str, str]] = {'pet': {'pet_id': 'string', 'name': 'string', 'species': 'string', 'breed': 'string', 'sex': 'string', 'birth_date': 'date', 'microchip_number': 'string', 'neutered': 'boolean', 'status': 'string', 'notes': 'text', 'created_at': 'datetime'}, 'vet_clinic': {'clinic_id': 'string', 'name': 'string', 'phone': 'string', 'address': 'string', 'emergency_care': 'boolean'}, 'appointment': {'appointment_id': 'string', 'pet_id': 'string', 'clinic_id': 'string', 'scheduled_at': 'datetime', 'reason': 'string', 'status': 'string', 'diagnosis_notes': 'text', 'amount_charged': 'number', 'expense_id': 'string', 'cancellation_reason': 'text', 'created_at': 'datetime', 'completed_at': 'datetime', 'cancelled_at': 'datetime'}, 'vaccination': {'vaccination_id': 'string', 'pet_id': 'string', 'vaccine_name': 'string', 'date_given': 'date', 'next_due_date': 'date', 'clinic_id': 'string', 'notes': 'text', 'created_at': 'datetime'}, 'medication': {'medication_id': 'string', 'pet_id': 'string', 'drug_name': 'string', 'dose': 'number', 'dose_unit': 'string', 'times_per_day': 'integer', 'start_date': 'date', 'end_date': 'date', 'instructions': 'text', 'stop_reason': 'text', 'stopped_at': 'datetime', 'created_at': 'datetime'}, 'medication_dose': {'dose_id': 'string', 'medication_id': 'string', 'given_at': 'datetime', 'note': 'text'}, 'health_condition': {'condition_id': 'string', 'pet_id': 'string', 'type': 'string', 'name': 'string', 'severity': 'string', 'status': 'string', 'diagnosed_date': 'date', 'resolved_date': 'date', 'notes': 'text'}, 'weight_entry': {'weight_entry_id': 'string', 'pet_id': 'string', 'weight_kg': 'number', 'measured_at': 'datetime', 'note': 'text'}, 'supply': {'supply_id': 'string', 'name': 'string', 'category': 'string', 'quantity': 'number', 'unit': 'string', 'reorder_threshold': 'number', 'updated_at': 'datetime'}, 'supply_adjustment': {'adjustment_id': 'string', 'supply_id': 'string', 'delta': 'number', 'previous_quantity': 'number', 'quantity': 'number', 'reason': 'string', 'created_at': 'datetime'}, 'feeding_schedule': {'schedule_id': 'string', 'pet_id': 'string', 'supply_id': 'string', 'portion_grams': 'number', 'feeding_times': 'string', 'created_at': 'datetime'}, 'feeding_log': {'feeding_id': 'string', 'pet_id': 'string', 'supply_id': 'string', 'portion_grams': 'number', 'fed_at': 'datetime', 'note': 'text'}, 'activity': {'activity_id': 'string', 'pet_id': 'string', 'activity_type': 'string', 'duration_minutes': 'integer', 'distance_km': 'number', 'started_at': 'datetime', 'ended_at': 'datetime', 'notes': 'text'}, 'grooming_session': {'grooming_id': 'string', 'pet_id': 'string', 'service_type': 'string', 'groomer_name': 'string', 'scheduled_at': 'datetime', 'quoted_price': 'number', 'price_paid': 'number', 'status': 'string', 'notes': 'text', 'expense_id': 'string', 'created_at': 'datetime', 'completed_at': 'datetime', 'cancelled_at': 'datetime'}, 'expense': {'expense_id': 'string', 'pet_id': 'string', 'category': 'string', 'amount': 'number', 'expense_date': 'date', 'description': 'text', 'created_at': 'datetime'}, 'sitter': {'sitter_id': 'string', 'name': 'string', 'phone': 'string', 'email': 'string', 'services': 'string', 'daily_rate': 'number'}, 'sitter_booking': {'booking_id': 'string', 'sitter_id': 'string', 'start_date': 'date', 'end_date': 'date', 'days': 'integer', 'total_cost': 'number', 'instructions': 'text', 'cancelled': 'boolean', 'cancelled_at': 'datetime', 'created_at': 'datetime'}, 'sitter_booking_pet': {'booking_pet_id': 'string', 'booking_id': 'string', 'pet_id': 'string'}, 'reminder': {'reminder_id': 'string', 'pet_id': 'string', 'title': 'string', 'due_at': 'datetime', 'repeat': 'string', 'status': 'string', 'completed_at': 'datetime', 'created_at': 'datetime'}}


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
