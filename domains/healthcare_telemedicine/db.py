"""healthcare_telemedicine DB layer, compiled from spec.json by worldsmith. Do not edit: recompile."""

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


class Patient(Base, table=True):
    'A registered patient with demographics, contact details and US address'
    __tablename__ = 'patient'
    __table_args__ = (
        CheckConstraint('"first_name" IS NULL OR length("first_name") <= 100', name='ck_patient_0'),
        CheckConstraint('"last_name" IS NULL OR length("last_name") <= 100', name='ck_patient_1'),
        CheckConstraint('"sex" IS NULL OR "sex" IN (\'female\', \'male\', \'other\', \'unknown\')', name='ck_patient_2'),
        CheckConstraint('"phone" IS NULL OR length("phone") <= 30', name='ck_patient_3'),
        CheckConstraint('"email" IS NULL OR length("email") <= 254', name='ck_patient_4'),
        CheckConstraint('"address_line1" IS NULL OR length("address_line1") <= 200', name='ck_patient_5'),
        CheckConstraint('"address_line2" IS NULL OR length("address_line2") <= 200', name='ck_patient_6'),
        CheckConstraint('"city" IS NULL OR length("city") <= 100', name='ck_patient_7'),
        CheckConstraint('"state" IS NULL OR length("state") <= 2', name='ck_patient_8'),
        CheckConstraint('"zip" IS NULL OR length("zip") <= 5', name='ck_patient_9'),
        CheckConstraint('"preferred_language" IS NULL OR length("preferred_language") <= 50', name='ck_patient_10'),
        CheckConstraint('"status" IS NULL OR "status" IN (\'active\', \'inactive\')', name='ck_patient_11'),
    )
    patient_id: str = Field(primary_key=True)
    first_name: str = Field(max_length=100, nullable=False)
    last_name: str = Field(max_length=100, nullable=False)
    date_of_birth: date = Field(nullable=False)
    sex: str = Field(nullable=False)
    phone: str = Field(max_length=30, nullable=False)
    email: str = Field(max_length=254, nullable=False)
    address_line1: str = Field(max_length=200, nullable=False)
    address_line2: str = Field(default='', max_length=200, nullable=False)
    city: str = Field(max_length=100, nullable=False)
    state: str = Field(max_length=2, nullable=False, description='Two-letter US state code of residence')
    zip: str = Field(max_length=5, nullable=False, description='Five-digit ZIP code')
    preferred_language: str = Field(default='English', max_length=50, nullable=False)
    preferred_pharmacy_id: Optional[str] = Field(default=None, foreign_key='pharmacy.pharmacy_id')
    primary_provider_id: Optional[str] = Field(default=None, foreign_key='provider.provider_id')
    status: str = Field(default='active', nullable=False)
    created_at: NaiveDatetime = Field(nullable=False)
    updated_at: Optional[NaiveDatetime] = Field(default=None)


class Consent(Base, table=True):
    'A consent signed by or for a patient'
    __tablename__ = 'consent'
    __table_args__ = (
        CheckConstraint('"consent_type" IS NULL OR "consent_type" IN (\'telehealth\', \'data_sharing\', \'guardian\')', name='ck_consent_0'),
        CheckConstraint('"signed_by" IS NULL OR length("signed_by") <= 200', name='ck_consent_1'),
        CheckConstraint('"signer_relationship" IS NULL OR "signer_relationship" IN (\'self\', \'parent\', \'legal_guardian\')', name='ck_consent_2'),
        CheckConstraint('"status" IS NULL OR "status" IN (\'active\', \'superseded\')', name='ck_consent_3'),
    )
    consent_id: str = Field(primary_key=True)
    patient_id: str = Field(foreign_key='patient.patient_id', nullable=False)
    consent_type: str = Field(nullable=False)
    signed_by: str = Field(max_length=200, nullable=False)
    signer_relationship: str = Field(default='self', nullable=False)
    signed_at: NaiveDatetime = Field(nullable=False)
    expires_on: Optional[date] = Field(default=None, description='Last day the consent applies; null when it does not expire')
    status: str = Field(default='active', nullable=False)
    superseded_by_consent_id: Optional[str] = Field(default=None, foreign_key='consent.consent_id', description='The consent that replaced this one')


class Provider(Base, table=True):
    'A licensed clinician offering telehealth visits'
    __tablename__ = 'provider'
    __table_args__ = (
        CheckConstraint('"first_name" IS NULL OR length("first_name") <= 100', name='ck_provider_0'),
        CheckConstraint('"last_name" IS NULL OR length("last_name") <= 100', name='ck_provider_1'),
        CheckConstraint('"credential" IS NULL OR "credential" IN (\'MD\', \'DO\', \'NP\', \'PA\')', name='ck_provider_2'),
        CheckConstraint('"npi" IS NULL OR length("npi") <= 10', name='ck_provider_3'),
        CheckConstraint('"status" IS NULL OR "status" IN (\'active\', \'inactive\')', name='ck_provider_4'),
    )
    provider_id: str = Field(primary_key=True)
    first_name: str = Field(max_length=100, nullable=False)
    last_name: str = Field(max_length=100, nullable=False)
    credential: str = Field(nullable=False)
    npi: str = Field(unique=True, max_length=10, nullable=False, description='10-digit National Provider Identifier')
    accepting_new_patients: bool = Field(default=True, nullable=False)
    can_prescribe_controlled: bool = Field(default=False, nullable=False, description='Holds a DEA registration')
    status: str = Field(default='active', nullable=False)


class ProviderSpecialty(Base, table=True):
    'A specialty of a provider'
    __tablename__ = 'provider_specialty'
    __table_args__ = (
        CheckConstraint('"specialty" IS NULL OR length("specialty") <= 50', name='ck_provider_specialty_0'),
    )
    provider_specialty_id: str = Field(primary_key=True)
    provider_id: str = Field(foreign_key='provider.provider_id', nullable=False)
    specialty: str = Field(max_length=50, nullable=False, description='Specialty code, e.g. family_medicine, dermatology')


class ProviderLicense(Base, table=True):
    'A state license held by a provider'
    __tablename__ = 'provider_license'
    __table_args__ = (
        CheckConstraint('"state" IS NULL OR length("state") <= 2', name='ck_provider_license_0'),
        CheckConstraint('"license_number" IS NULL OR length("license_number") <= 50', name='ck_provider_license_1'),
    )
    license_id: str = Field(primary_key=True)
    provider_id: str = Field(foreign_key='provider.provider_id', nullable=False)
    state: str = Field(max_length=2, nullable=False, description='Two-letter US state code')
    license_number: Optional[str] = Field(default=None, max_length=50)


class ProviderLanguage(Base, table=True):
    'A language spoken by a provider'
    __tablename__ = 'provider_language'
    __table_args__ = (
        CheckConstraint('"language" IS NULL OR length("language") <= 50', name='ck_provider_language_0'),
    )
    provider_language_id: str = Field(primary_key=True)
    provider_id: str = Field(foreign_key='provider.provider_id', nullable=False)
    language: str = Field(max_length=50, nullable=False)


class ProviderVisitType(Base, table=True):
    'A visit type a provider offers, with duration and self-pay fee'
    __tablename__ = 'provider_visit_type'
    __table_args__ = (
        CheckConstraint('"visit_type" IS NULL OR "visit_type" IN (\'video\', \'phone\')', name='ck_provider_visit_type_0'),
        CheckConstraint('"duration_minutes" IS NULL OR "duration_minutes" >= 5', name='ck_provider_visit_type_1'),
        CheckConstraint('"duration_minutes" IS NULL OR "duration_minutes" <= 120', name='ck_provider_visit_type_2'),
        CheckConstraint('"fee" IS NULL OR "fee" >= 0', name='ck_provider_visit_type_3'),
    )
    provider_visit_type_id: str = Field(primary_key=True)
    provider_id: str = Field(foreign_key='provider.provider_id', nullable=False)
    visit_type: str = Field(nullable=False)
    duration_minutes: int = Field(nullable=False)
    fee: float = Field(nullable=False, description='Self-pay fee in USD')


class AvailabilityBlock(Base, table=True):
    "A one-off or weekly block of a provider's schedule from which slots are generated"
    __tablename__ = 'availability_block'
    __table_args__ = (
        CheckConstraint('"recurrence" IS NULL OR "recurrence" IN (\'one_off\', \'weekly\')', name='ck_availability_block_0'),
        CheckConstraint('"days_of_week" IS NULL OR length("days_of_week") <= 30', name='ck_availability_block_1'),
        CheckConstraint('"start_time" IS NULL OR length("start_time") <= 5', name='ck_availability_block_2'),
        CheckConstraint('"end_time" IS NULL OR length("end_time") <= 5', name='ck_availability_block_3'),
        CheckConstraint('"slot_minutes" IS NULL OR "slot_minutes" >= 15', name='ck_availability_block_4'),
        CheckConstraint('"slot_minutes" IS NULL OR "slot_minutes" <= 60', name='ck_availability_block_5'),
        CheckConstraint('"visit_types" IS NULL OR length("visit_types") <= 20', name='ck_availability_block_6'),
    )
    block_id: str = Field(primary_key=True)
    provider_id: str = Field(foreign_key='provider.provider_id', nullable=False)
    recurrence: str = Field(nullable=False)
    start_date: date = Field(nullable=False)
    end_date: date = Field(nullable=False, description='Last covered date; equals start_date for one_off')
    days_of_week: Optional[str] = Field(default=None, max_length=30, description='Comma-separated weekdays (mon..sun) of a weekly block; null for one_off')
    start_time: str = Field(max_length=5, nullable=False, description='HH:MM')
    end_time: str = Field(max_length=5, nullable=False, description='HH:MM')
    slot_minutes: int = Field(default=30, nullable=False)
    visit_types: str = Field(default='video', max_length=20, nullable=False, description="Comma-separated visit types, e.g. 'video,phone'")
    created_at: NaiveDatetime = Field(nullable=False)


class Slot(Base, table=True):
    'A bookable appointment slot of a provider'
    __tablename__ = 'slot'
    __table_args__ = (
        CheckConstraint('"visit_types" IS NULL OR length("visit_types") <= 20', name='ck_slot_0'),
        CheckConstraint('"status" IS NULL OR "status" IN (\'open\', \'booked\')', name='ck_slot_1'),
    )
    slot_id: str = Field(primary_key=True)
    provider_id: str = Field(foreign_key='provider.provider_id', nullable=False)
    block_id: Optional[str] = Field(default=None, foreign_key='availability_block.block_id', description='Generating block; null once the block is removed')
    start: NaiveDatetime = Field(nullable=False)
    end: NaiveDatetime = Field(nullable=False)
    visit_types: str = Field(default='video', max_length=20, nullable=False, description='Comma-separated visit types bookable in the slot')
    status: str = Field(default='open', nullable=False)


class Appointment(Base, table=True):
    'A video or phone visit booked by a patient in a slot'
    __tablename__ = 'appointment'
    __table_args__ = (
        CheckConstraint('"visit_type" IS NULL OR "visit_type" IN (\'video\', \'phone\')', name='ck_appointment_0'),
        CheckConstraint('"reason" IS NULL OR length("reason") <= 500', name='ck_appointment_1'),
        CheckConstraint('"status" IS NULL OR "status" IN (\'scheduled\', \'checked_in\', \'in_progress\', \'completed\', \'no_show\', \'cancelled\')', name='ck_appointment_2'),
        CheckConstraint('"cancelled_by" IS NULL OR "cancelled_by" IN (\'patient\', \'provider\', \'staff\')', name='ck_appointment_3'),
        CheckConstraint('"cancellation_reason" IS NULL OR length("cancellation_reason") <= 500', name='ck_appointment_4'),
    )
    appointment_id: str = Field(primary_key=True)
    patient_id: str = Field(foreign_key='patient.patient_id', nullable=False)
    provider_id: str = Field(foreign_key='provider.provider_id', nullable=False)
    slot_id: str = Field(foreign_key='slot.slot_id', nullable=False)
    visit_type: str = Field(nullable=False)
    start: NaiveDatetime = Field(nullable=False)
    end: NaiveDatetime = Field(nullable=False)
    reason: str = Field(max_length=500, nullable=False)
    status: str = Field(default='scheduled', nullable=False)
    created_at: NaiveDatetime = Field(nullable=False)
    checked_in_at: Optional[NaiveDatetime] = Field(default=None)
    cancelled_at: Optional[NaiveDatetime] = Field(default=None)
    cancelled_by: Optional[str] = Field(default=None)
    cancellation_reason: Optional[str] = Field(default=None, max_length=500)
    late_cancellation: bool = Field(default=False, nullable=False)


class IntakeForm(Base, table=True):
    'The pre-visit intake form of an appointment'
    __tablename__ = 'intake_form'
    __table_args__ = (
        CheckConstraint('"chief_complaint" IS NULL OR length("chief_complaint") <= 500', name='ck_intake_form_0'),
        CheckConstraint('"severity" IS NULL OR "severity" IN (\'mild\', \'moderate\', \'severe\')', name='ck_intake_form_1'),
    )
    intake_id: str = Field(primary_key=True)
    appointment_id: str = Field(foreign_key='appointment.appointment_id', unique=True, nullable=False)
    chief_complaint: str = Field(max_length=500, nullable=False)
    symptoms: str = Field(nullable=False, description='JSON list of reported symptoms')
    onset_date: Optional[date] = Field(default=None)
    severity: str = Field(nullable=False)
    current_medications: str = Field(default='[]', nullable=False, description='JSON list of patient-reported medications')
    notes: str = Field(default='', nullable=False)
    submitted_at: NaiveDatetime = Field(nullable=False)


class VideoSession(Base, table=True):
    'The video or audio-only session of an appointment'
    __tablename__ = 'video_session'
    __table_args__ = (
        CheckConstraint('"mode" IS NULL OR "mode" IN (\'video\', \'audio_only\')', name='ck_video_session_0'),
        CheckConstraint('"join_url" IS NULL OR length("join_url") <= 300', name='ck_video_session_1'),
        CheckConstraint('"status" IS NULL OR "status" IN (\'active\', \'ended\')', name='ck_video_session_2'),
        CheckConstraint('"duration_minutes" IS NULL OR "duration_minutes" >= 0', name='ck_video_session_3'),
    )
    session_id: str = Field(primary_key=True)
    appointment_id: str = Field(foreign_key='appointment.appointment_id', unique=True, nullable=False)
    mode: str = Field(nullable=False)
    join_url: str = Field(max_length=300, nullable=False)
    status: str = Field(default='active', nullable=False)
    started_at: NaiveDatetime = Field(nullable=False)
    ended_at: Optional[NaiveDatetime] = Field(default=None)
    duration_minutes: Optional[int] = Field(default=None)


class DiagnosisCode(Base, table=True):
    'ICD-10-CM catalogue entry'
    __tablename__ = 'diagnosis_code'
    __table_args__ = (
        CheckConstraint('"code" IS NULL OR length("code") <= 10', name='ck_diagnosis_code_0'),
        CheckConstraint('"description" IS NULL OR length("description") <= 300', name='ck_diagnosis_code_1'),
    )
    code: str = Field(primary_key=True, max_length=10, description='ICD-10 code with dot, e.g. E11.9')
    description: str = Field(max_length=300, nullable=False)
    billable: bool = Field(default=True, nullable=False)


class EncounterNote(Base, table=True):
    'A SOAP encounter note of a completed appointment'
    __tablename__ = 'encounter_note'
    __table_args__ = (
        CheckConstraint('"status" IS NULL OR "status" IN (\'draft\', \'signed\')', name='ck_encounter_note_0'),
    )
    note_id: str = Field(primary_key=True)
    appointment_id: str = Field(foreign_key='appointment.appointment_id', unique=True, nullable=False)
    patient_id: str = Field(foreign_key='patient.patient_id', nullable=False)
    provider_id: str = Field(foreign_key='provider.provider_id', nullable=False, description='Authoring provider')
    status: str = Field(default='draft', nullable=False)
    subjective: str = Field(default='', nullable=False)
    objective: str = Field(default='', nullable=False)
    assessment: str = Field(default='', nullable=False)
    plan: str = Field(default='', nullable=False)
    created_at: NaiveDatetime = Field(nullable=False)
    updated_at: NaiveDatetime = Field(nullable=False)
    signed_by: Optional[str] = Field(default=None, foreign_key='provider.provider_id')
    signed_at: Optional[NaiveDatetime] = Field(default=None)


class EncounterDiagnosis(Base, table=True):
    'An ICD-10 diagnosis on an encounter note; position 1 is primary'
    __tablename__ = 'encounter_diagnosis'
    __table_args__ = (
        CheckConstraint('"position" IS NULL OR "position" >= 1', name='ck_encounter_diagnosis_0'),
    )
    encounter_diagnosis_id: str = Field(primary_key=True)
    note_id: str = Field(foreign_key='encounter_note.note_id', nullable=False)
    code: str = Field(foreign_key='diagnosis_code.code', nullable=False)
    position: int = Field(nullable=False, description="Order in the note's diagnosis list; 1 is the primary diagnosis")


class Allergy(Base, table=True):
    'A patient allergy record'
    __tablename__ = 'allergy'
    __table_args__ = (
        CheckConstraint('"allergen" IS NULL OR length("allergen") <= 100', name='ck_allergy_0'),
        CheckConstraint('"allergen_type" IS NULL OR "allergen_type" IN (\'drug\', \'food\', \'environmental\', \'other\')', name='ck_allergy_1'),
        CheckConstraint('"reaction" IS NULL OR length("reaction") <= 200', name='ck_allergy_2'),
        CheckConstraint('"severity" IS NULL OR "severity" IN (\'mild\', \'moderate\', \'severe\', \'life_threatening\')', name='ck_allergy_3'),
        CheckConstraint('"status" IS NULL OR "status" IN (\'active\', \'entered_in_error\', \'resolved\')', name='ck_allergy_4'),
    )
    allergy_id: str = Field(primary_key=True)
    patient_id: str = Field(foreign_key='patient.patient_id', nullable=False)
    allergen: str = Field(max_length=100, nullable=False)
    allergen_type: str = Field(nullable=False)
    reaction: str = Field(max_length=200, nullable=False)
    severity: str = Field(nullable=False)
    onset_date: Optional[date] = Field(default=None)
    status: str = Field(default='active', nullable=False)
    recorded_at: NaiveDatetime = Field(nullable=False)
    removed_at: Optional[NaiveDatetime] = Field(default=None)


class VitalsReading(Base, table=True):
    'A patient-reported home vitals reading'
    __tablename__ = 'vitals_reading'
    __table_args__ = (
        CheckConstraint('"systolic_bp" IS NULL OR "systolic_bp" >= 50', name='ck_vitals_reading_0'),
        CheckConstraint('"systolic_bp" IS NULL OR "systolic_bp" <= 300', name='ck_vitals_reading_1'),
        CheckConstraint('"diastolic_bp" IS NULL OR "diastolic_bp" >= 30', name='ck_vitals_reading_2'),
        CheckConstraint('"diastolic_bp" IS NULL OR "diastolic_bp" <= 200', name='ck_vitals_reading_3'),
        CheckConstraint('"heart_rate" IS NULL OR "heart_rate" >= 20', name='ck_vitals_reading_4'),
        CheckConstraint('"heart_rate" IS NULL OR "heart_rate" <= 250', name='ck_vitals_reading_5'),
        CheckConstraint('"temperature_f" IS NULL OR "temperature_f" >= 90', name='ck_vitals_reading_6'),
        CheckConstraint('"temperature_f" IS NULL OR "temperature_f" <= 110', name='ck_vitals_reading_7'),
        CheckConstraint('"weight_lb" IS NULL OR "weight_lb" >= 1', name='ck_vitals_reading_8'),
        CheckConstraint('"weight_lb" IS NULL OR "weight_lb" <= 1000', name='ck_vitals_reading_9'),
        CheckConstraint('"spo2" IS NULL OR "spo2" >= 50', name='ck_vitals_reading_10'),
        CheckConstraint('"spo2" IS NULL OR "spo2" <= 100', name='ck_vitals_reading_11'),
        CheckConstraint('"glucose_mg_dl" IS NULL OR "glucose_mg_dl" >= 20', name='ck_vitals_reading_12'),
        CheckConstraint('"glucose_mg_dl" IS NULL OR "glucose_mg_dl" <= 800', name='ck_vitals_reading_13'),
    )
    vitals_id: str = Field(primary_key=True)
    patient_id: str = Field(foreign_key='patient.patient_id', nullable=False)
    recorded_at: NaiveDatetime = Field(nullable=False)
    systolic_bp: Optional[int] = Field(default=None)
    diastolic_bp: Optional[int] = Field(default=None)
    heart_rate: Optional[int] = Field(default=None)
    temperature_f: Optional[float] = Field(default=None)
    weight_lb: Optional[float] = Field(default=None)
    spo2: Optional[int] = Field(default=None)
    glucose_mg_dl: Optional[int] = Field(default=None)
    flags: str = Field(default='[]', nullable=False, description='JSON list of abnormal-value flags in rule order; [] when none')
    notes: str = Field(default='', nullable=False)


class Drug(Base, table=True):
    'Formulary medication used for prescribing, allergy and interaction checks'
    __tablename__ = 'drug'
    __table_args__ = (
        CheckConstraint('"generic_name" IS NULL OR length("generic_name") <= 100', name='ck_drug_0'),
        CheckConstraint('"drug_class" IS NULL OR length("drug_class") <= 100', name='ck_drug_1'),
        CheckConstraint('"dea_schedule" IS NULL OR "dea_schedule" IN (\'II\', \'III\', \'IV\', \'V\')', name='ck_drug_2'),
    )
    drug_id: str = Field(primary_key=True)
    generic_name: str = Field(unique=True, max_length=100, nullable=False)
    drug_class: str = Field(max_length=100, nullable=False, description='e.g. penicillin, sulfonamides, ace_inhibitor')
    available_strengths: str = Field(nullable=False, description='JSON list of strengths, e.g. ["250 mg","500 mg"]')
    dea_schedule: Optional[str] = Field(default=None, description='Null when not a controlled substance')


class DrugInteraction(Base, table=True):
    'A known interaction between two formulary drugs'
    __tablename__ = 'drug_interaction'
    __table_args__ = (
        CheckConstraint('"severity" IS NULL OR "severity" IN (\'moderate\', \'major\')', name='ck_drug_interaction_0'),
        CheckConstraint('"description" IS NULL OR length("description") <= 500', name='ck_drug_interaction_1'),
    )
    interaction_id: str = Field(primary_key=True)
    drug_a_id: str = Field(foreign_key='drug.drug_id', nullable=False)
    drug_b_id: str = Field(foreign_key='drug.drug_id', nullable=False)
    severity: str = Field(nullable=False)
    description: str = Field(max_length=500, nullable=False)


class Pharmacy(Base, table=True):
    'A pharmacy; active ones accept e-prescriptions'
    __tablename__ = 'pharmacy'
    __table_args__ = (
        CheckConstraint('"name" IS NULL OR length("name") <= 200', name='ck_pharmacy_0'),
        CheckConstraint('"address_line1" IS NULL OR length("address_line1") <= 200', name='ck_pharmacy_1'),
        CheckConstraint('"city" IS NULL OR length("city") <= 100', name='ck_pharmacy_2'),
        CheckConstraint('"state" IS NULL OR length("state") <= 2', name='ck_pharmacy_3'),
        CheckConstraint('"zip" IS NULL OR length("zip") <= 5', name='ck_pharmacy_4'),
        CheckConstraint('"phone" IS NULL OR length("phone") <= 30', name='ck_pharmacy_5'),
        CheckConstraint('"status" IS NULL OR "status" IN (\'active\', \'inactive\')', name='ck_pharmacy_6'),
    )
    pharmacy_id: str = Field(primary_key=True)
    name: str = Field(max_length=200, nullable=False)
    address_line1: str = Field(max_length=200, nullable=False)
    city: str = Field(max_length=100, nullable=False)
    state: str = Field(max_length=2, nullable=False)
    zip: str = Field(max_length=5, nullable=False)
    phone: str = Field(max_length=30, nullable=False)
    open_24_hours: bool = Field(default=False, nullable=False)
    status: str = Field(default='active', nullable=False)


class Prescription(Base, table=True):
    'An e-prescription sent to a pharmacy'
    __tablename__ = 'prescription'
    __table_args__ = (
        CheckConstraint('"medication_name" IS NULL OR length("medication_name") <= 100', name='ck_prescription_0'),
        CheckConstraint('"strength" IS NULL OR length("strength") <= 50', name='ck_prescription_1'),
        CheckConstraint('"dose" IS NULL OR length("dose") <= 100', name='ck_prescription_2'),
        CheckConstraint('"route" IS NULL OR "route" IN (\'oral\', \'topical\', \'inhaled\', \'nasal\', \'ophthalmic\', \'otic\', \'subcutaneous\', \'other\')', name='ck_prescription_3'),
        CheckConstraint('"frequency" IS NULL OR length("frequency") <= 100', name='ck_prescription_4'),
        CheckConstraint('"quantity" IS NULL OR "quantity" >= 1', name='ck_prescription_5'),
        CheckConstraint('"quantity" IS NULL OR "quantity" <= 1000', name='ck_prescription_6'),
        CheckConstraint('"days_supply" IS NULL OR "days_supply" >= 1', name='ck_prescription_7'),
        CheckConstraint('"days_supply" IS NULL OR "days_supply" <= 90', name='ck_prescription_8'),
        CheckConstraint('"dea_schedule" IS NULL OR "dea_schedule" IN (\'II\', \'III\', \'IV\', \'V\')', name='ck_prescription_9'),
        CheckConstraint('"refills_authorized" IS NULL OR "refills_authorized" >= 0', name='ck_prescription_10'),
        CheckConstraint('"refills_authorized" IS NULL OR "refills_authorized" <= 11', name='ck_prescription_11'),
        CheckConstraint('"refills_remaining" IS NULL OR "refills_remaining" >= 0', name='ck_prescription_12'),
        CheckConstraint('"refills_remaining" IS NULL OR "refills_remaining" <= 11', name='ck_prescription_13'),
        CheckConstraint('"status" IS NULL OR "status" IN (\'active\', \'cancelled\')', name='ck_prescription_14'),
        CheckConstraint('"cancellation_reason" IS NULL OR length("cancellation_reason") <= 500', name='ck_prescription_15'),
    )
    prescription_id: str = Field(primary_key=True)
    patient_id: str = Field(foreign_key='patient.patient_id', nullable=False)
    provider_id: str = Field(foreign_key='provider.provider_id', nullable=False, description='Prescribing provider')
    pharmacy_id: str = Field(foreign_key='pharmacy.pharmacy_id', nullable=False)
    drug_id: str = Field(foreign_key='drug.drug_id', nullable=False)
    medication_name: str = Field(max_length=100, nullable=False)
    strength: str = Field(max_length=50, nullable=False)
    dose: str = Field(max_length=100, nullable=False)
    route: str = Field(default='oral', nullable=False)
    frequency: str = Field(max_length=100, nullable=False)
    quantity: int = Field(nullable=False)
    days_supply: int = Field(nullable=False)
    instructions: str = Field(default='', nullable=False)
    dea_schedule: Optional[str] = Field(default=None)
    refills_authorized: int = Field(default=0, nullable=False)
    refills_remaining: int = Field(default=0, nullable=False)
    last_filled_on: date = Field(nullable=False)
    status: str = Field(default='active', nullable=False)
    written_at: NaiveDatetime = Field(nullable=False)
    expires_on: date = Field(nullable=False)
    appointment_id: Optional[str] = Field(default=None, foreign_key='appointment.appointment_id')
    cancelled_at: Optional[NaiveDatetime] = Field(default=None)
    cancellation_reason: Optional[str] = Field(default=None, max_length=500)


class PatientMedication(Base, table=True):
    "An entry of a patient's medication list, prescribed here or patient-reported"
    __tablename__ = 'patient_medication'
    __table_args__ = (
        CheckConstraint('"medication_name" IS NULL OR length("medication_name") <= 100', name='ck_patient_medication_0'),
        CheckConstraint('"strength" IS NULL OR length("strength") <= 50', name='ck_patient_medication_1'),
        CheckConstraint('"dose" IS NULL OR length("dose") <= 100', name='ck_patient_medication_2'),
        CheckConstraint('"frequency" IS NULL OR length("frequency") <= 100', name='ck_patient_medication_3'),
        CheckConstraint('"source" IS NULL OR "source" IN (\'prescription\', \'patient_reported\')', name='ck_patient_medication_4'),
        CheckConstraint('"refills_remaining" IS NULL OR "refills_remaining" >= 0', name='ck_patient_medication_5'),
        CheckConstraint('"refills_remaining" IS NULL OR "refills_remaining" <= 11', name='ck_patient_medication_6'),
        CheckConstraint('"status" IS NULL OR "status" IN (\'active\', \'discontinued\')', name='ck_patient_medication_7'),
    )
    medication_id: str = Field(primary_key=True)
    patient_id: str = Field(foreign_key='patient.patient_id', nullable=False)
    drug_id: Optional[str] = Field(default=None, foreign_key='drug.drug_id', description='Formulary drug, when known')
    medication_name: str = Field(max_length=100, nullable=False)
    strength: str = Field(max_length=50, nullable=False)
    dose: str = Field(max_length=100, nullable=False)
    frequency: str = Field(max_length=100, nullable=False)
    source: str = Field(nullable=False)
    prescription_id: Optional[str] = Field(default=None, foreign_key='prescription.prescription_id', unique=True)
    prescribing_provider_id: Optional[str] = Field(default=None, foreign_key='provider.provider_id')
    refills_remaining: Optional[int] = Field(default=None, description="Kept equal to the linked prescription's refills_remaining; null for patient-reported entries")
    status: str = Field(default='active', nullable=False)
    started_on: date = Field(nullable=False)
    discontinued_on: Optional[date] = Field(default=None)


class RefillRequest(Base, table=True):
    "A patient's request to refill a prescription"
    __tablename__ = 'refill_request'
    __table_args__ = (
        CheckConstraint('"status" IS NULL OR "status" IN (\'pending\', \'approved\', \'denied\')', name='ck_refill_request_0'),
        CheckConstraint('"denial_reason" IS NULL OR length("denial_reason") <= 500', name='ck_refill_request_1'),
    )
    refill_request_id: str = Field(primary_key=True)
    prescription_id: str = Field(foreign_key='prescription.prescription_id', nullable=False)
    provider_id: str = Field(foreign_key='provider.provider_id', nullable=False, description='Prescriber who reviews it')
    status: str = Field(default='pending', nullable=False)
    note: str = Field(default='', nullable=False)
    requested_at: NaiveDatetime = Field(nullable=False)
    reviewed_at: Optional[NaiveDatetime] = Field(default=None)
    denial_reason: Optional[str] = Field(default=None, max_length=500)


class LabPanel(Base, table=True):
    'Lab panel catalogue entry'
    __tablename__ = 'lab_panel'
    __table_args__ = (
        CheckConstraint('"panel_code" IS NULL OR length("panel_code") <= 20', name='ck_lab_panel_0'),
        CheckConstraint('"panel_name" IS NULL OR length("panel_name") <= 200', name='ck_lab_panel_1'),
    )
    panel_code: str = Field(primary_key=True, max_length=20, description='e.g. CBC, CMP, A1C')
    panel_name: str = Field(max_length=200, nullable=False)


class LabSite(Base, table=True):
    'A lab collection site'
    __tablename__ = 'lab_site'
    __table_args__ = (
        CheckConstraint('"name" IS NULL OR length("name") <= 200', name='ck_lab_site_0'),
        CheckConstraint('"address_line1" IS NULL OR length("address_line1") <= 200', name='ck_lab_site_1'),
        CheckConstraint('"city" IS NULL OR length("city") <= 100', name='ck_lab_site_2'),
        CheckConstraint('"state" IS NULL OR length("state") <= 2', name='ck_lab_site_3'),
        CheckConstraint('"zip" IS NULL OR length("zip") <= 5', name='ck_lab_site_4'),
        CheckConstraint('"status" IS NULL OR "status" IN (\'active\', \'inactive\')', name='ck_lab_site_5'),
    )
    lab_site_id: str = Field(primary_key=True)
    name: str = Field(max_length=200, nullable=False)
    address_line1: str = Field(max_length=200, nullable=False)
    city: str = Field(max_length=100, nullable=False)
    state: str = Field(max_length=2, nullable=False)
    zip: str = Field(max_length=5, nullable=False)
    status: str = Field(default='active', nullable=False)


class LabOrder(Base, table=True):
    'A lab panel ordered for a patient'
    __tablename__ = 'lab_order'
    __table_args__ = (
        CheckConstraint('"priority" IS NULL OR "priority" IN (\'routine\', \'urgent\', \'stat\')', name='ck_lab_order_0'),
        CheckConstraint('"status" IS NULL OR "status" IN (\'ordered\', \'collected\', \'resulted\', \'cancelled\')', name='ck_lab_order_1'),
    )
    lab_order_id: str = Field(primary_key=True)
    patient_id: str = Field(foreign_key='patient.patient_id', nullable=False)
    provider_id: str = Field(foreign_key='provider.provider_id', nullable=False, description='Ordering provider')
    panel_code: str = Field(foreign_key='lab_panel.panel_code', nullable=False)
    lab_site_id: str = Field(foreign_key='lab_site.lab_site_id', nullable=False)
    appointment_id: Optional[str] = Field(default=None, foreign_key='appointment.appointment_id')
    diagnosis_codes: str = Field(nullable=False, description='JSON list of ICD-10 codes justifying the order')
    priority: str = Field(default='routine', nullable=False)
    fasting_required: bool = Field(default=False, nullable=False)
    notes: str = Field(default='', nullable=False)
    status: str = Field(default='ordered', nullable=False)
    ordered_at: NaiveDatetime = Field(nullable=False)
    due_by: date = Field(nullable=False)
    collected_at: Optional[NaiveDatetime] = Field(default=None)
    resulted_at: Optional[NaiveDatetime] = Field(default=None)


class LabResult(Base, table=True):
    'One analyte value of a resulted lab order'
    __tablename__ = 'lab_result'
    __table_args__ = (
        CheckConstraint('"analyte" IS NULL OR length("analyte") <= 100', name='ck_lab_result_0'),
        CheckConstraint('"unit" IS NULL OR length("unit") <= 30', name='ck_lab_result_1'),
        CheckConstraint('"flag" IS NULL OR "flag" IN (\'normal\', \'low\', \'high\', \'critical_low\', \'critical_high\')', name='ck_lab_result_2'),
    )
    lab_result_id: str = Field(primary_key=True)
    lab_order_id: str = Field(foreign_key='lab_order.lab_order_id', nullable=False)
    analyte: str = Field(max_length=100, nullable=False)
    value: float = Field(nullable=False)
    unit: str = Field(max_length=30, nullable=False)
    reference_low: Optional[float] = Field(default=None)
    reference_high: Optional[float] = Field(default=None)
    flag: str = Field(default='normal', nullable=False)


class Referral(Base, table=True):
    'A referral of a patient to a specialty or specialist'
    __tablename__ = 'referral'
    __table_args__ = (
        CheckConstraint('"specialty" IS NULL OR length("specialty") <= 50', name='ck_referral_0'),
        CheckConstraint('"urgency" IS NULL OR "urgency" IN (\'routine\', \'urgent\')', name='ck_referral_1'),
        CheckConstraint('"status" IS NULL OR "status" IN (\'created\', \'sent\', \'accepted\', \'scheduled\', \'completed\', \'declined\')', name='ck_referral_2'),
    )
    referral_id: str = Field(primary_key=True)
    patient_id: str = Field(foreign_key='patient.patient_id', nullable=False)
    referring_provider_id: str = Field(foreign_key='provider.provider_id', nullable=False)
    referred_to_provider_id: Optional[str] = Field(default=None, foreign_key='provider.provider_id')
    specialty: str = Field(max_length=50, nullable=False)
    reason: str = Field(nullable=False)
    urgency: str = Field(default='routine', nullable=False)
    diagnosis_codes: str = Field(default='[]', nullable=False, description='JSON list of ICD-10 codes')
    status: str = Field(default='created', nullable=False)
    created_at: NaiveDatetime = Field(nullable=False)
    updated_at: NaiveDatetime = Field(nullable=False)
    expires_on: date = Field(nullable=False)


class ReferralStatusHistory(Base, table=True):
    'A status change of a referral with its note'
    __tablename__ = 'referral_status_history'
    __table_args__ = (
        CheckConstraint('"from_status" IS NULL OR "from_status" IN (\'created\', \'sent\', \'accepted\', \'scheduled\')', name='ck_referral_status_history_0'),
        CheckConstraint('"to_status" IS NULL OR "to_status" IN (\'sent\', \'accepted\', \'scheduled\', \'completed\', \'declined\')', name='ck_referral_status_history_1'),
    )
    history_id: str = Field(primary_key=True)
    referral_id: str = Field(foreign_key='referral.referral_id', nullable=False)
    from_status: str = Field(nullable=False)
    to_status: str = Field(nullable=False)
    note: str = Field(default='', nullable=False)
    changed_at: NaiveDatetime = Field(nullable=False)


class MessageThread(Base, table=True):
    'A secure conversation between one patient and one provider'
    __tablename__ = 'message_thread'
    __table_args__ = (
        CheckConstraint('"subject" IS NULL OR length("subject") <= 200', name='ck_message_thread_0'),
    )
    thread_id: str = Field(primary_key=True)
    patient_id: str = Field(foreign_key='patient.patient_id', nullable=False)
    provider_id: str = Field(foreign_key='provider.provider_id', nullable=False)
    subject: str = Field(max_length=200, nullable=False)
    created_at: NaiveDatetime = Field(nullable=False)


class Message(Base, table=True):
    'A secure message in a thread'
    __tablename__ = 'message'
    __table_args__ = (
        CheckConstraint('"sender" IS NULL OR "sender" IN (\'patient\', \'provider\')', name='ck_message_0'),
        CheckConstraint('"body" IS NULL OR length("body") <= 5000', name='ck_message_1'),
    )
    message_id: str = Field(primary_key=True)
    thread_id: str = Field(foreign_key='message_thread.thread_id', nullable=False)
    sender: str = Field(nullable=False)
    body: str = Field(max_length=5000, nullable=False)
    sent_at: NaiveDatetime = Field(nullable=False)
    is_read: bool = Field(default=False, nullable=False)
    read_at: Optional[NaiveDatetime] = Field(default=None)


class Payer(Base, table=True):
    'Payer directory entry with telehealth coverage terms'
    __tablename__ = 'payer'
    __table_args__ = (
        CheckConstraint('"name" IS NULL OR length("name") <= 200', name='ck_payer_0'),
        CheckConstraint('"telehealth_copay" IS NULL OR "telehealth_copay" >= 0', name='ck_payer_1'),
    )
    payer_id: str = Field(primary_key=True)
    name: str = Field(unique=True, max_length=200, nullable=False)
    telehealth_covered: bool = Field(default=True, nullable=False)
    telehealth_copay: float = Field(default=0, nullable=False, description='Telehealth visit copay in USD')


class InsuranceCoverage(Base, table=True):
    'An insurance coverage of a patient with its last eligibility verification'
    __tablename__ = 'insurance_coverage'
    __table_args__ = (
        CheckConstraint('"member_id" IS NULL OR length("member_id") <= 50', name='ck_insurance_coverage_0'),
        CheckConstraint('"group_number" IS NULL OR length("group_number") <= 50', name='ck_insurance_coverage_1'),
        CheckConstraint('"plan_type" IS NULL OR "plan_type" IN (\'hmo\', \'ppo\', \'epo\', \'pos\', \'medicare\', \'medicaid\', \'other\')', name='ck_insurance_coverage_2'),
        CheckConstraint('"subscriber_name" IS NULL OR length("subscriber_name") <= 200', name='ck_insurance_coverage_3'),
        CheckConstraint('"subscriber_relationship" IS NULL OR "subscriber_relationship" IN (\'self\', \'spouse\', \'parent\', \'other\')', name='ck_insurance_coverage_4'),
        CheckConstraint('"copay" IS NULL OR "copay" >= 0', name='ck_insurance_coverage_5'),
    )
    coverage_id: str = Field(primary_key=True)
    patient_id: str = Field(foreign_key='patient.patient_id', nullable=False)
    payer_id: str = Field(foreign_key='payer.payer_id', nullable=False)
    member_id: str = Field(max_length=50, nullable=False)
    group_number: str = Field(default='', max_length=50, nullable=False)
    plan_type: str = Field(nullable=False)
    subscriber_name: str = Field(max_length=200, nullable=False)
    subscriber_relationship: str = Field(default='self', nullable=False)
    effective_date: date = Field(nullable=False)
    termination_date: Optional[date] = Field(default=None)
    is_primary: bool = Field(default=True, nullable=False)
    created_at: NaiveDatetime = Field(nullable=False)
    eligible: Optional[bool] = Field(default=None, description='Result of the last verification; null until verified')
    copay: Optional[float] = Field(default=None, description='Telehealth copay found by the last verification; null when not eligible or not verified')
    verified_at: Optional[NaiveDatetime] = Field(default=None, description='When eligibility was last verified; null until verified')


class Invoice(Base, table=True):
    'A patient invoice for a visit or a late cancellation'
    __tablename__ = 'invoice'
    __table_args__ = (
        CheckConstraint('"invoice_type" IS NULL OR "invoice_type" IN (\'visit\', \'late_cancellation\')', name='ck_invoice_0'),
        CheckConstraint('"total_charge" IS NULL OR "total_charge" >= 0', name='ck_invoice_1'),
        CheckConstraint('"insurance_portion" IS NULL OR "insurance_portion" >= 0', name='ck_invoice_2'),
        CheckConstraint('"amount_due" IS NULL OR "amount_due" >= 0', name='ck_invoice_3'),
        CheckConstraint('"balance" IS NULL OR "balance" >= 0', name='ck_invoice_4'),
        CheckConstraint('"status" IS NULL OR "status" IN (\'open\', \'paid\', \'void\')', name='ck_invoice_5'),
    )
    invoice_id: str = Field(primary_key=True)
    patient_id: str = Field(foreign_key='patient.patient_id', nullable=False)
    appointment_id: str = Field(foreign_key='appointment.appointment_id', nullable=False)
    invoice_type: str = Field(nullable=False)
    total_charge: float = Field(nullable=False)
    insurance_portion: float = Field(default=0, nullable=False)
    amount_due: float = Field(nullable=False)
    balance: float = Field(nullable=False)
    coverage_id: Optional[str] = Field(default=None, foreign_key='insurance_coverage.coverage_id')
    status: str = Field(default='open', nullable=False)
    issued_on: date = Field(nullable=False)
    due_date: date = Field(nullable=False)


class Payment(Base, table=True):
    'A payment recorded against an invoice'
    __tablename__ = 'payment'
    __table_args__ = (
        CheckConstraint('"amount" IS NULL OR "amount" >= 0.01', name='ck_payment_0'),
        CheckConstraint('"method" IS NULL OR "method" IN (\'card\', \'hsa\')', name='ck_payment_1'),
        CheckConstraint('"reference" IS NULL OR length("reference") <= 100', name='ck_payment_2'),
    )
    payment_id: str = Field(primary_key=True)
    invoice_id: str = Field(foreign_key='invoice.invoice_id', nullable=False)
    amount: float = Field(nullable=False)
    method: str = Field(nullable=False)
    reference: str = Field(default='', max_length=100, nullable=False)
    paid_at: NaiveDatetime = Field(nullable=False)


MODELS: dict[str, type[Base]] = {'patient': Patient, 'consent': Consent, 'provider': Provider, 'provider_specialty': ProviderSpecialty, 'provider_license': ProviderLicense, 'provider_language': ProviderLanguage, 'provider_visit_type': ProviderVisitType, 'availability_block': AvailabilityBlock, 'slot': Slot, 'appointment': Appointment, 'intake_form': IntakeForm, 'video_session': VideoSession, 'diagnosis_code': DiagnosisCode, 'encounter_note': EncounterNote, 'encounter_diagnosis': EncounterDiagnosis, 'allergy': Allergy, 'vitals_reading': VitalsReading, 'drug': Drug, 'drug_interaction': DrugInteraction, 'pharmacy': Pharmacy, 'prescription': Prescription, 'patient_medication': PatientMedication, 'refill_request': RefillRequest, 'lab_panel': LabPanel, 'lab_site': LabSite, 'lab_order': LabOrder, 'lab_result': LabResult, 'referral': Referral, 'referral_status_history': ReferralStatusHistory, 'message_thread': MessageThread, 'message': Message, 'payer': Payer, 'insurance_coverage': InsuranceCoverage, 'invoice': Invoice, 'payment': Payment}
TABLE_ORDER: list[str] = ['provider', 'diagnosis_code', 'drug', 'pharmacy', 'lab_panel', 'lab_site', 'payer', 'patient', 'provider_specialty', 'provider_license', 'provider_language', 'provider_visit_type', 'availability_block', 'drug_interaction', 'consent', 'slot', 'allergy', 'vitals_reading', 'referral', 'message_thread', 'insurance_coverage', 'appointment', 'referral_status_history', 'message', 'intake_form', 'video_session', 'encounter_note', 'prescription', 'lab_order', 'invoice', 'encounter_diagnosis', 'patient_medication', 'refill_request', 'lab_result', 'payment']
PRIMARY_KEY: dict[str, str] = {'patient': 'patient_id', 'consent': 'consent_id', 'provider': 'provider_id', 'provider_specialty': 'provider_specialty_id', 'provider_license': 'license_id', 'provider_language': 'provider_language_id', 'provider_visit_type': 'provider_visit_type_id', 'availability_block': 'block_id', 'slot': 'slot_id', 'appointment': 'appointment_id', 'intake_form': 'intake_id', 'video_session': 'session_id', 'diagnosis_code': 'code', 'encounter_note': 'note_id', 'encounter_diagnosis': 'encounter_diagnosis_id', 'allergy': 'allergy_id', 'vitals_reading': 'vitals_id', 'drug': 'drug_id', 'drug_interaction': 'interaction_id', 'pharmacy': 'pharmacy_id', 'prescription': 'prescription_id', 'patient_medication': 'medication_id', 'refill_request': 'refill_request_id', 'lab_panel': 'panel_code', 'lab_site': 'lab_site_id', 'lab_order': 'lab_order_id', 'lab_result': 'lab_result_id', 'referral': 'referral_id', 'referral_status_history': 'history_id', 'message_thread': 'thread_id', 'message': 'message_id', 'payer': 'payer_id', 'insurance_coverage': 'coverage_id', 'invoice': 'invoice_id', 'payment': 'payment_id'}
ID_PREFIX: dict[str, str] = {'patient': 'PAT', 'consent': 'CNS', 'provider': 'PRV', 'provider_specialty': 'PSP', 'provider_license': 'PLC', 'provider_language': 'PLG', 'provider_visit_type': 'PVT', 'availability_block': 'BLK', 'slot': 'SLT', 'appointment': 'APT', 'intake_form': 'INT', 'video_session': 'SES', 'diagnosis_code': 'DX', 'encounter_note': 'NOTE', 'encounter_diagnosis': 'EDX', 'allergy': 'ALG', 'vitals_reading': 'VIT', 'drug': 'DRG', 'drug_interaction': 'DIN', 'pharmacy': 'PHM', 'prescription': 'RX', 'patient_medication': 'MED', 'refill_request': 'RFL', 'lab_panel': 'LP', 'lab_site': 'LAB', 'lab_order': 'LBO', 'lab_result': 'LRS', 'referral': 'REF', 'referral_status_history': 'RSH', 'message_thread': 'THR', 'message': 'MSG', 'payer': 'PAY', 'insurance_coverage': 'COV', 'invoice': 'INV', 'payment': 'PMT'}
COLUMNS: dict[str, list[str]] = {'patient': ['patient_id', 'first_name', 'last_name', 'date_of_birth', 'sex', 'phone', 'email', 'address_line1', 'address_line2', 'city', 'state', 'zip', 'preferred_language', 'preferred_pharmacy_id', 'primary_provider_id', 'status', 'created_at', 'updated_at'], 'consent': ['consent_id', 'patient_id', 'consent_type', 'signed_by', 'signer_relationship', 'signed_at', 'expires_on', 'status', 'superseded_by_consent_id'], 'provider': ['provider_id', 'first_name', 'last_name', 'credential', 'npi', 'accepting_new_patients', 'can_prescribe_controlled', 'status'], 'provider_specialty': ['provider_specialty_id', 'provider_id', 'specialty'], 'provider_license': ['license_id', 'provider_id', 'state', 'license_number'], 'provider_language': ['provider_language_id', 'provider_id', 'language'], 'provider_visit_type': ['provider_visit_type_id', 'provider_id', 'visit_type', 'duration_minutes', 'fee'], 'availability_block': ['block_id', 'provider_id', 'recurrence', 'start_date', 'end_date', 'days_of_week', 'start_time', 'end_time', 'slot_minutes', 'visit_types', 'created_at'], 'slot': ['slot_id', 'provider_id', 'block_id', 'start', 'end', 'visit_types', 'status'], 'appointment': ['appointment_id', 'patient_id', 'provider_id', 'slot_id', 'visit_type', 'start', 'end', 'reason', 'status', 'created_at', 'checked_in_at', 'cancelled_at', 'cancelled_by', 'cancellation_reason', 'late_cancellation'], 'intake_form': ['intake_id', 'appointment_id', 'chief_complaint', 'symptoms', 'onset_date', 'severity', 'current_medications', 'notes', 'submitted_at'], 'video_session': ['session_id', 'appointment_id', 'mode', 'join_url', 'status', 'started_at', 'ended_at', 'duration_minutes'], 'diagnosis_code': ['code', 'description', 'billable'], 'encounter_note': ['note_id', 'appointment_id', 'patient_id', 'provider_id', 'status', 'subjective', 'objective', 'assessment', 'plan', 'created_at', 'updated_at', 'signed_by', 'signed_at'], 'encounter_diagnosis': ['encounter_diagnosis_id', 'note_id', 'code', 'position'], 'allergy': ['allergy_id', 'patient_id', 'allergen', 'allergen_type', 'reaction', 'severity', 'onset_date', 'status', 'recorded_at', 'removed_at'], 'vitals_reading': ['vitals_id', 'patient_id', 'recorded_at', 'systolic_bp', 'diastolic_bp', 'heart_rate', 'temperature_f', 'weight_lb', 'spo2', 'glucose_mg_dl', 'flags', 'notes'], 'drug': ['drug_id', 'generic_name', 'drug_class', 'available_strengths', 'dea_schedule'], 'drug_interaction': ['interaction_id', 'drug_a_id', 'drug_b_id', 'severity', 'description'], 'pharmacy': ['pharmacy_id', 'name', 'address_line1', 'city', 'state', 'zip', 'phone', 'open_24_hours', 'status'], 'prescription': ['prescription_id', 'patient_id', 'provider_id', 'pharmacy_id', 'drug_id', 'medication_name', 'strength', 'dose', 'route', 'frequency', 'quantity', 'days_supply', 'instructions', 'dea_schedule', 'refills_authorized', 'refills_remaining', 'last_filled_on', 'status', 'written_at', 'expires_on', 'appointment_id', 'cancelled_at', 'cancellation_reason'], 'patient_medication': ['medication_id', 'patient_id', 'drug_id', 'medication_name', 'strength', 'dose', 'frequency', 'source', 'prescription_id', 'prescribing_provider_id', 'refills_remaining', 'status', 'started_on', 'discontinued_on'], 'refill_request': ['refill_request_id', 'prescription_id', 'provider_id', 'status', 'note', 'requested_at', 'reviewed_at', 'denial_reason'], 'lab_panel': ['panel_code', 'panel_name'], 'lab_site': ['lab_site_id', 'name', 'address_line1', 'city', 'state', 'zip', 'status'], 'lab_order': ['lab_order_id', 'patient_id', 'provider_id', 'panel_code', 'lab_site_id', 'appointment_id', 'diagnosis_codes', 'priority', 'fasting_required', 'notes', 'status', 'ordered_at', 'due_by', 'collected_at', 'resulted_at'], 'lab_result': ['lab_result_id', 'lab_order_id', 'analyte', 'value', 'unit', 'reference_low', 'reference_high', 'flag'], 'referral': ['referral_id', 'patient_id', 'referring_provider_id', 'referred_to_provider_id', 'specialty', 'reason', 'urgency', 'diagnosis_codes', 'status', 'created_at', 'updated_at', 'expires_on'], 'referral_status_history': ['history_id', 'referral_id', 'from_status', 'to_status', 'note', 'changed_at'], 'message_thread': ['thread_id', 'patient_id', 'provider_id', 'subject', 'created_at'], 'message': ['message_id', 'thread_id', 'sender', 'body', 'sent_at', 'is_read', 'read_at'], 'payer': ['payer_id', 'name', 'telehealth_covered', 'telehealth_copay'], 'insurance_coverage': ['coverage_id', 'patient_id', 'payer_id', 'member_id', 'group_number', 'plan_type', 'subscriber_name', 'subscriber_relationship', 'effective_date', 'termination_date', 'is_primary', 'created_at', 'eligible', 'copay', 'verified_at'], 'invoice': ['invoice_id', 'patient_id', 'appointment_id', 'invoice_type', 'total_charge', 'insurance_portion', 'amount_due', 'balance', 'coverage_id', 'status', 'issued_on', 'due_date'], 'payment': ['payment_id', 'invoice_id', 'amount', 'method', 'reference', 'paid_at']}
COLUMN_TYPES: dict[str, dict[str, str]] = {'patient': {'patient_id': 'string', 'first_name': 'string', 'last_name': 'string', 'date_of_birth': 'date', 'sex': 'string', 'phone': 'string', 'email': 'string', 'address_line1': 'string', 'address_line2': 'string', 'city': 'string', 'state': 'string', 'zip': 'string', 'preferred_language': 'string', 'preferred_pharmacy_id': 'string', 'primary_provider_id': 'string', 'status': 'string', 'created_at': 'datetime', 'updated_at': 'datetime'}, 'consent': {'consent_id': 'string', 'patient_id': 'string', 'consent_type': 'string', 'signed_by': 'string', 'signer_relationship': 'string', 'signed_at': 'datetime', 'expires_on': 'date', 'status': 'string', 'superseded_by_consent_id': 'string'}, 'provider': {'provider_id': 'string', 'first_name': 'string', 'last_name': 'string', 'credential': 'string', 'npi': 'string', 'accepting_new_patients': 'boolean', 'can_prescribe_controlled': 'boolean', 'status': 'string'}, 'provider_specialty': {'provider_specialty_id': 'string', 'provider_id': 'string', 'specialty': 'string'}, 'provider_license': {'license_id': 'string', 'provider_id': 'string', 'state': 'string', 'license_number': 'string'}, 'provider_language': {'provider_language_id': 'string', 'provider_id': 'string', 'language': 'string'}, 'provider_visit_type': {'provider_visit_type_id': 'string', 'provider_id': 'string', 'visit_type': 'string', 'duration_minutes': 'integer', 'fee': 'number'}, 'availability_block': {'block_id': 'string', 'provider_id': 'string', 'recurrence': 'string', 'start_date': 'date', 'end_date': 'date', 'days_of_week': 'string', 'start_time': 'string', 'end_time': 'string', 'slot_minutes': 'integer', 'visit_types': 'string', 'created_at': 'datetime'}, 'slot': {'slot_id': 'string', 'provider_id': 'string', 'block_id': 'string', 'start': 'datetime', 'end': 'datetime', 'visit_types': 'string', 'status': 'string'}, 'appointment': {'appointment_id': 'string', 'patient_id': 'string', 'provider_id': 'string', 'slot_id': 'string', 'visit_type': 'string', 'start': 'datetime', 'end': 'datetime', 'reason': 'string', 'status': 'string', 'created_at': 'datetime', 'checked_in_at': 'datetime', 'cancelled_at': 'datetime', 'cancelled_by': 'string', 'cancellation_reason': 'string', 'late_cancellation': 'boolean'}, 'intake_form': {'intake_id': 'string', 'appointment_id': 'string', 'chief_complaint': 'string', 'symptoms': 'text', 'onset_date': 'date', 'severity': 'string', 'current_medications': 'text', 'notes': 'text', 'submitted_at': 'datetime'}, 'video_session': {'session_id': 'string', 'appointment_id': 'string', 'mode': 'string', 'join_url': 'string', 'status': 'string', 'started_at': 'datetime', 'ended_at': 'datetime', 'duration_minutes': 'integer'}, 'diagnosis_code': {'code': 'string', 'description': 'string', 'billable': 'boolean'}, 'encounter_note': {'note_id': 'string', 'appointment_id': 'string', 'patient_id': 'string', 'provider_id': 'string', 'status': 'string', 'subjective': 'text', 'objective': 'text', 'assessment': 'text', 'plan': 'text', 'created_at': 'datetime', 'updated_at': 'datetime', 'signed_by': 'string', 'signed_at': 'datetime'}, 'encounter_diagnosis': {'encounter_diagnosis_id': 'string', 'note_id': 'string', 'code': 'string', 'position': 'integer'}, 'allergy': {'allergy_id': 'string', 'patient_id': 'string', 'allergen': 'string', 'allergen_type': 'string', 'reaction': 'string', 'severity': 'string', 'onset_date': 'date', 'status': 'string', 'recorded_at': 'datetime', 'removed_at': 'datetime'}, 'vitals_reading': {'vitals_id': 'string', 'patient_id': 'string', 'recorded_at': 'datetime', 'systolic_bp': 'integer', 'diastolic_bp': 'integer', 'heart_rate': 'integer', 'temperature_f': 'number', 'weight_lb': 'number', 'spo2': 'integer', 'glucose_mg_dl': 'integer', 'flags': 'text', 'notes': 'text'}, 'drug': {'drug_id': 'string', 'generic_name': 'string', 'drug_class': 'string', 'available_strengths': 'text', 'dea_schedule': 'string'}, 'drug_interaction': {'interaction_id': 'string', 'drug_a_id': 'string', 'drug_b_id': 'string', 'severity': 'string', 'description': 'string'}, 'pharmacy': {'pharmacy_id': 'string', 'name': 'string', 'address_line1': 'string', 'city': 'string', 'state': 'string', 'zip': 'string', 'phone': 'string', 'open_24_hours': 'boolean', 'status': 'string'}, 'prescription': {'prescription_id': 'string', 'patient_id': 'string', 'provider_id': 'string', 'pharmacy_id': 'string', 'drug_id': 'string', 'medication_name': 'string', 'strength': 'string', 'dose': 'string', 'route': 'string', 'frequency': 'string', 'quantity': 'integer', 'days_supply': 'integer', 'instructions': 'text', 'dea_schedule': 'string', 'refills_authorized': 'integer', 'refills_remaining': 'integer', 'last_filled_on': 'date', 'status': 'string', 'written_at': 'datetime', 'expires_on': 'date', 'appointment_id': 'string', 'cancelled_at': 'datetime', 'cancellation_reason': 'string'}, 'patient_medication': {'medication_id': 'string', 'patient_id': 'string', 'drug_id': 'string', 'medication_name': 'string', 'strength': 'string', 'dose': 'string', 'frequency': 'string', 'source': 'string', 'prescription_id': 'string', 'prescribing_provider_id': 'string', 'refills_remaining': 'integer', 'status': 'string', 'started_on': 'date', 'discontinued_on': 'date'}, 'refill_request': {'refill_request_id': 'string', 'prescription_id': 'string', 'provider_id': 'string', 'status': 'string', 'note': 'text', 'requested_at': 'datetime', 'reviewed_at': 'datetime', 'denial_reason': 'string'}, 'lab_panel': {'panel_code': 'string', 'panel_name': 'string'}, 'lab_site': {'lab_site_id': 'string', 'name': 'string', 'address_line1': 'string', 'city': 'string', 'state': 'string', 'zip': 'string', 'status': 'string'}, 'lab_order': {'lab_order_id': 'string', 'patient_id': 'string', 'provider_id': 'string', 'panel_code': 'string', 'lab_site_id': 'string', 'appointment_id': 'string', 'diagnosis_codes': 'text', 'priority': 'string', 'fasting_required': 'boolean', 'notes': 'text', 'status': 'string', 'ordered_at': 'datetime', 'due_by': 'date', 'collected_at': 'datetime', 'resulted_at': 'datetime'}, 'lab_result': {'lab_result_id': 'string', 'lab_order_id': 'string', 'analyte': 'string', 'value': 'number', 'unit': 'string', 'reference_low': 'number', 'reference_high': 'number', 'flag': 'string'}, 'referral': {'referral_id': 'string', 'patient_id': 'string', 'referring_provider_id': 'string', 'referred_to_provider_id': 'string', 'specialty': 'string', 'reason': 'text', 'urgency': 'string', 'diagnosis_codes': 'text', 'status': 'string', 'created_at': 'datetime', 'updated_at': 'datetime', 'expires_on': 'date'}, 'referral_status_history': {'history_id': 'string', 'referral_id': 'string', 'from_status': 'string', 'to_status': 'string', 'note': 'text', 'changed_at': 'datetime'}, 'message_thread': {'thread_id': 'string', 'patient_id': 'string', 'provider_id': 'string', 'subject': 'string', 'created_at': 'datetime'}, 'message': {'message_id': 'string', 'thread_id': 'string', 'sender': 'string', 'body': 'text', 'sent_at': 'datetime', 'is_read': 'boolean', 'read_at': 'datetime'}, 'payer': {'payer_id': 'string', 'name': 'string', 'telehealth_covered': 'boolean', 'telehealth_copay': 'number'}, 'insurance_coverage': {'coverage_id': 'string', 'patient_id': 'string', 'payer_id': 'string', 'member_id': 'string', 'group_number': 'string', 'plan_type': 'string', 'subscriber_name': 'string', 'subscriber_relationship': 'string', 'effective_date': 'date', 'termination_date': 'date', 'is_primary': 'boolean', 'created_at': 'datetime', 'eligible': 'boolean', 'copay': 'number', 'verified_at': 'datetime'}, 'invoice': {'invoice_id': 'string', 'patient_id': 'string', 'appointment_id': 'string', 'invoice_type': 'string', 'total_charge': 'number', 'insurance_portion': 'number', 'amount_due': 'number', 'balance': 'number', 'coverage_id': 'string', 'status': 'string', 'issued_on': 'date', 'due_date': 'date'}, 'payment': {'payment_id': 'string', 'invoice_id': 'string', 'amount': 'number', 'method': 'string', 'reference': 'string', 'paid_at': 'datetime'}}


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
