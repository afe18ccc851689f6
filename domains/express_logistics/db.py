"""express_logistics DB layer, compiled from spec.json by worldsmith. Do not edit: recompile."""

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


class CustomerAccount(Base, table=True):
    'A shipper account with contact, billing and credit details'
    __tablename__ = 'customer_account'
    __table_args__ = (
        CheckConstraint('"company_name" IS NULL OR length("company_name") <= 200', name='ck_customer_account_0'),
        CheckConstraint('"contact_name" IS NULL OR length("contact_name") <= 120', name='ck_customer_account_1'),
        CheckConstraint('"contact_email" IS NULL OR length("contact_email") <= 254', name='ck_customer_account_2'),
        CheckConstraint('"contact_phone" IS NULL OR length("contact_phone") <= 30', name='ck_customer_account_3'),
        CheckConstraint('"billing_address_line" IS NULL OR length("billing_address_line") <= 200', name='ck_customer_account_4'),
        CheckConstraint('"billing_city" IS NULL OR length("billing_city") <= 100', name='ck_customer_account_5'),
        CheckConstraint('"billing_postal_code" IS NULL OR length("billing_postal_code") <= 20', name='ck_customer_account_6'),
        CheckConstraint('"billing_country" IS NULL OR length("billing_country") <= 2', name='ck_customer_account_7'),
        CheckConstraint('"default_service_level" IS NULL OR "default_service_level" IN (\'same_day\', \'next_day\', \'economy\')', name='ck_customer_account_8'),
        CheckConstraint('"credit_limit" IS NULL OR "credit_limit" >= 0', name='ck_customer_account_9'),
        CheckConstraint('"status" IS NULL OR "status" IN (\'active\', \'suspended\')', name='ck_customer_account_10'),
    )
    account_id: str = Field(primary_key=True)
    company_name: str = Field(max_length=200, nullable=False)
    contact_name: str = Field(max_length=120, nullable=False)
    contact_email: str = Field(unique=True, max_length=254, nullable=False)
    contact_phone: str = Field(max_length=30, nullable=False)
    billing_address_line: str = Field(max_length=200, nullable=False)
    billing_city: str = Field(max_length=100, nullable=False)
    billing_postal_code: str = Field(max_length=20, nullable=False)
    billing_country: str = Field(max_length=2, nullable=False)
    default_service_level: str = Field(default='next_day', nullable=False)
    credit_limit: float = Field(default=1000.0, nullable=False)
    outstanding_balance: float = Field(default=0.0, nullable=False)
    status: str = Field(default='active', nullable=False)
    suspension_reason: Optional[str] = Field(default=None)
    suspended_at: Optional[NaiveDatetime] = Field(default=None)
    created_at: NaiveDatetime = Field(nullable=False)
    updated_at: Optional[NaiveDatetime] = Field(default=None)


class AddressBookEntry(Base, table=True):
    'A labelled pickup or delivery address of an account'
    __tablename__ = 'address_book_entry'
    __table_args__ = (
        CheckConstraint('"label" IS NULL OR length("label") <= 100', name='ck_address_book_entry_0'),
        CheckConstraint('"address_type" IS NULL OR "address_type" IN (\'pickup\', \'delivery\')', name='ck_address_book_entry_1'),
        CheckConstraint('"contact_name" IS NULL OR length("contact_name") <= 120', name='ck_address_book_entry_2'),
        CheckConstraint('"contact_phone" IS NULL OR length("contact_phone") <= 30', name='ck_address_book_entry_3'),
        CheckConstraint('"address_line" IS NULL OR length("address_line") <= 200', name='ck_address_book_entry_4'),
        CheckConstraint('"city" IS NULL OR length("city") <= 100', name='ck_address_book_entry_5'),
        CheckConstraint('"postal_code" IS NULL OR length("postal_code") <= 20', name='ck_address_book_entry_6'),
        CheckConstraint('"country" IS NULL OR length("country") <= 2', name='ck_address_book_entry_7'),
        CheckConstraint('"postal_zone" IS NULL OR length("postal_zone") <= 20', name='ck_address_book_entry_8'),
    )
    address_id: str = Field(primary_key=True)
    account_id: str = Field(foreign_key='customer_account.account_id', nullable=False)
    label: str = Field(max_length=100, nullable=False)
    address_type: str = Field(nullable=False)
    contact_name: str = Field(max_length=120, nullable=False)
    contact_phone: str = Field(max_length=30, nullable=False)
    address_line: str = Field(max_length=200, nullable=False)
    city: str = Field(max_length=100, nullable=False)
    postal_code: str = Field(max_length=20, nullable=False)
    country: str = Field(max_length=2, nullable=False)
    postal_zone: Optional[str] = Field(default=None, max_length=20)
    instructions: Optional[str] = Field(default=None)
    created_at: NaiveDatetime = Field(nullable=False)


class Facility(Base, table=True):
    'A hub or depot of the network'
    __tablename__ = 'facility'
    __table_args__ = (
        CheckConstraint('"name" IS NULL OR length("name") <= 120', name='ck_facility_0'),
        CheckConstraint('"facility_type" IS NULL OR "facility_type" IN (\'hub\', \'depot\')', name='ck_facility_1'),
        CheckConstraint('"city" IS NULL OR length("city") <= 100', name='ck_facility_2'),
        CheckConstraint('"country" IS NULL OR length("country") <= 2', name='ck_facility_3'),
    )
    facility_id: str = Field(primary_key=True)
    name: str = Field(max_length=120, nullable=False)
    facility_type: str = Field(nullable=False)
    city: str = Field(max_length=100, nullable=False)
    country: str = Field(default='US', max_length=2, nullable=False)


class ServiceZone(Base, table=True):
    'A postal zone of the service area with its serving depot and offered service levels'
    __tablename__ = 'service_zone'
    __table_args__ = (
        CheckConstraint('"zone_code" IS NULL OR length("zone_code") <= 20', name='ck_service_zone_0'),
        CheckConstraint('"country" IS NULL OR length("country") <= 2', name='ck_service_zone_1'),
        CheckConstraint('"postal_code_prefix" IS NULL OR length("postal_code_prefix") <= 10', name='ck_service_zone_2'),
    )
    zone_id: str = Field(primary_key=True)
    zone_code: str = Field(unique=True, max_length=20, nullable=False)
    country: str = Field(default='US', max_length=2, nullable=False)
    postal_code_prefix: str = Field(max_length=10, nullable=False, description='Postal codes starting with this prefix (same country) belong to the zone')
    depot_id: str = Field(foreign_key='facility.facility_id', nullable=False)
    offers_same_day: bool = Field(default=True, nullable=False)
    offers_next_day: bool = Field(default=True, nullable=False)
    offers_economy: bool = Field(default=True, nullable=False)


class RateQuote(Base, table=True):
    'A stored price quote, bookable once until it expires'
    __tablename__ = 'rate_quote'
    __table_args__ = (
        CheckConstraint('"origin_postal_code" IS NULL OR length("origin_postal_code") <= 20', name='ck_rate_quote_0'),
        CheckConstraint('"origin_country" IS NULL OR length("origin_country") <= 2', name='ck_rate_quote_1'),
        CheckConstraint('"destination_postal_code" IS NULL OR length("destination_postal_code") <= 20', name='ck_rate_quote_2'),
        CheckConstraint('"destination_country" IS NULL OR length("destination_country") <= 2', name='ck_rate_quote_3'),
        CheckConstraint('"service_level" IS NULL OR "service_level" IN (\'same_day\', \'next_day\', \'economy\')', name='ck_rate_quote_4'),
        CheckConstraint('"parcel_count" IS NULL OR "parcel_count" >= 1', name='ck_rate_quote_5'),
        CheckConstraint('"parcel_count" IS NULL OR "parcel_count" <= 20', name='ck_rate_quote_6'),
        CheckConstraint('"total_weight_kg" IS NULL OR "total_weight_kg" >= 0', name='ck_rate_quote_7'),
        CheckConstraint('"chargeable_weight_kg" IS NULL OR "chargeable_weight_kg" >= 0', name='ck_rate_quote_8'),
        CheckConstraint('"declared_value" IS NULL OR "declared_value" >= 0', name='ck_rate_quote_9'),
        CheckConstraint('"cod_amount" IS NULL OR "cod_amount" >= 0', name='ck_rate_quote_10'),
        CheckConstraint('"shipping_charge" IS NULL OR "shipping_charge" >= 0', name='ck_rate_quote_11'),
        CheckConstraint('"insurance_fee" IS NULL OR "insurance_fee" >= 0', name='ck_rate_quote_12'),
        CheckConstraint('"cod_fee" IS NULL OR "cod_fee" >= 0', name='ck_rate_quote_13'),
        CheckConstraint('"total_charge" IS NULL OR "total_charge" >= 0', name='ck_rate_quote_14'),
        CheckConstraint('"status" IS NULL OR "status" IN (\'open\', \'booked\')', name='ck_rate_quote_15'),
    )
    quote_id: str = Field(primary_key=True)
    account_id: Optional[str] = Field(default=None, foreign_key='customer_account.account_id')
    origin_postal_code: str = Field(max_length=20, nullable=False)
    origin_country: str = Field(default='US', max_length=2, nullable=False)
    destination_postal_code: str = Field(max_length=20, nullable=False)
    destination_country: str = Field(default='US', max_length=2, nullable=False)
    service_level: str = Field(nullable=False)
    parcels_json: str = Field(nullable=False, description='JSON list of the quoted parcels (weight_kg, length_cm, width_cm, height_cm, contents)')
    parcel_count: int = Field(nullable=False)
    total_weight_kg: float = Field(nullable=False)
    chargeable_weight_kg: float = Field(nullable=False)
    declared_value: float = Field(default=0.0, nullable=False)
    cod_amount: float = Field(default=0.0, nullable=False)
    shipping_charge: float = Field(nullable=False)
    insurance_fee: float = Field(default=0.0, nullable=False)
    cod_fee: float = Field(default=0.0, nullable=False)
    total_charge: float = Field(nullable=False)
    promised_delivery_date: date = Field(nullable=False)
    status: str = Field(default='open', nullable=False)
    created_at: NaiveDatetime = Field(nullable=False)
    expires_at: NaiveDatetime = Field(nullable=False)


class Shipment(Base, table=True):
    'A booked shipment or return shipment with addresses, charges, status and delivery follow-up'
    __tablename__ = 'shipment'
    __table_args__ = (
        CheckConstraint('"tracking_number" IS NULL OR length("tracking_number") <= 20', name='ck_shipment_0'),
        CheckConstraint('"status" IS NULL OR "status" IN (\'booked\', \'picked_up\', \'in_transit\', \'out_for_delivery\', \'delivery_failed\', \'awaiting_collection\', \'delivered\', \'returned\', \'cancelled\')', name='ck_shipment_1'),
        CheckConstraint('"service_level" IS NULL OR "service_level" IN (\'same_day\', \'next_day\', \'economy\')', name='ck_shipment_2'),
        CheckConstraint('"sender_name" IS NULL OR length("sender_name") <= 200', name='ck_shipment_3'),
        CheckConstraint('"sender_phone" IS NULL OR length("sender_phone") <= 30', name='ck_shipment_4'),
        CheckConstraint('"sender_address_line" IS NULL OR length("sender_address_line") <= 200', name='ck_shipment_5'),
        CheckConstraint('"sender_city" IS NULL OR length("sender_city") <= 100', name='ck_shipment_6'),
        CheckConstraint('"sender_postal_code" IS NULL OR length("sender_postal_code") <= 20', name='ck_shipment_7'),
        CheckConstraint('"sender_country" IS NULL OR length("sender_country") <= 2', name='ck_shipment_8'),
        CheckConstraint('"recipient_name" IS NULL OR length("recipient_name") <= 200', name='ck_shipment_9'),
        CheckConstraint('"recipient_phone" IS NULL OR length("recipient_phone") <= 30', name='ck_shipment_10'),
        CheckConstraint('"recipient_address_line" IS NULL OR length("recipient_address_line") <= 200', name='ck_shipment_11'),
        CheckConstraint('"recipient_city" IS NULL OR length("recipient_city") <= 100', name='ck_shipment_12'),
        CheckConstraint('"recipient_postal_code" IS NULL OR length("recipient_postal_code") <= 20', name='ck_shipment_13'),
        CheckConstraint('"recipient_country" IS NULL OR length("recipient_country") <= 2', name='ck_shipment_14'),
        CheckConstraint('"declared_value" IS NULL OR "declared_value" >= 0', name='ck_shipment_15'),
        CheckConstraint('"cod_amount" IS NULL OR "cod_amount" >= 0', name='ck_shipment_16'),
        CheckConstraint('"chargeable_weight_kg" IS NULL OR "chargeable_weight_kg" >= 0', name='ck_shipment_17'),
        CheckConstraint('"shipping_charge" IS NULL OR "shipping_charge" >= 0', name='ck_shipment_18'),
        CheckConstraint('"insurance_fee" IS NULL OR "insurance_fee" >= 0', name='ck_shipment_19'),
        CheckConstraint('"cod_fee" IS NULL OR "cod_fee" >= 0', name='ck_shipment_20'),
        CheckConstraint('"total_charge" IS NULL OR "total_charge" >= 0', name='ck_shipment_21'),
        CheckConstraint('"charge_status" IS NULL OR "charge_status" IN (\'pending\', \'invoiced\', \'void\')', name='ck_shipment_22'),
        CheckConstraint('"customer_reference" IS NULL OR length("customer_reference") <= 100', name='ck_shipment_23'),
        CheckConstraint('"failed_attempts" IS NULL OR "failed_attempts" >= 0', name='ck_shipment_24'),
        CheckConstraint('"failed_attempts" IS NULL OR "failed_attempts" <= 3', name='ck_shipment_25'),
        CheckConstraint('"last_failure_reason" IS NULL OR "last_failure_reason" IN (\'recipient_absent\', \'address_not_found\', \'refused\')', name='ck_shipment_26'),
        CheckConstraint('"collected_by_name" IS NULL OR length("collected_by_name") <= 120', name='ck_shipment_27'),
        CheckConstraint('"collection_id_reference" IS NULL OR length("collection_id_reference") <= 100', name='ck_shipment_28'),
        CheckConstraint('"return_reason" IS NULL OR "return_reason" IN (\'refused\', \'undeliverable\', \'not_collected\', \'customer_return\', \'damaged\')', name='ck_shipment_29'),
    )
    shipment_id: str = Field(primary_key=True)
    tracking_number: str = Field(unique=True, max_length=20, nullable=False)
    account_id: str = Field(foreign_key='customer_account.account_id', nullable=False)
    quote_id: Optional[str] = Field(default=None, foreign_key='rate_quote.quote_id', unique=True)
    status: str = Field(default='booked', nullable=False)
    service_level: str = Field(nullable=False)
    sender_address_id: Optional[str] = Field(default=None, foreign_key='address_book_entry.address_id')
    sender_name: str = Field(max_length=200, nullable=False)
    sender_phone: str = Field(max_length=30, nullable=False)
    sender_address_line: str = Field(max_length=200, nullable=False)
    sender_city: str = Field(max_length=100, nullable=False)
    sender_postal_code: str = Field(max_length=20, nullable=False)
    sender_country: str = Field(default='US', max_length=2, nullable=False)
    recipient_name: str = Field(max_length=200, nullable=False)
    recipient_phone: str = Field(max_length=30, nullable=False)
    recipient_address_line: str = Field(max_length=200, nullable=False)
    recipient_city: str = Field(max_length=100, nullable=False)
    recipient_postal_code: str = Field(max_length=20, nullable=False)
    recipient_country: str = Field(default='US', max_length=2, nullable=False)
    declared_value: float = Field(default=0.0, nullable=False)
    cod_amount: float = Field(default=0.0, nullable=False)
    chargeable_weight_kg: float = Field(nullable=False)
    shipping_charge: float = Field(nullable=False)
    insurance_fee: float = Field(default=0.0, nullable=False)
    cod_fee: float = Field(default=0.0, nullable=False)
    total_charge: float = Field(nullable=False)
    charge_status: str = Field(default='pending', nullable=False)
    invoice_id: Optional[str] = Field(default=None, foreign_key='invoice.invoice_id')
    customer_reference: Optional[str] = Field(default=None, max_length=100)
    origin_depot_id: str = Field(foreign_key='facility.facility_id', nullable=False)
    destination_depot_id: str = Field(foreign_key='facility.facility_id', nullable=False)
    promised_delivery_date: date = Field(nullable=False)
    failed_attempts: int = Field(default=0, nullable=False)
    last_failure_reason: Optional[str] = Field(default=None)
    redelivery_date: Optional[date] = Field(default=None)
    collection_depot_id: Optional[str] = Field(default=None, foreign_key='facility.facility_id')
    collection_deadline: Optional[date] = Field(default=None)
    collected_by_name: Optional[str] = Field(default=None, max_length=120)
    collection_id_reference: Optional[str] = Field(default=None, max_length=100)
    is_return: bool = Field(default=False, nullable=False)
    original_shipment_id: Optional[str] = Field(default=None, foreign_key='shipment.shipment_id', unique=True)
    return_reason: Optional[str] = Field(default=None)
    return_note: Optional[str] = Field(default=None)
    booked_at: NaiveDatetime = Field(nullable=False)
    delivered_at: Optional[NaiveDatetime] = Field(default=None)
    cancelled_at: Optional[NaiveDatetime] = Field(default=None)
    cancellation_reason: Optional[str] = Field(default=None)
    updated_at: Optional[NaiveDatetime] = Field(default=None)


class Parcel(Base, table=True):
    'A parcel of a shipment with measurements and current location'
    __tablename__ = 'parcel'
    __table_args__ = (
        CheckConstraint('"weight_kg" IS NULL OR "weight_kg" >= 0', name='ck_parcel_0'),
        CheckConstraint('"weight_kg" IS NULL OR "weight_kg" <= 70', name='ck_parcel_1'),
        CheckConstraint('"length_cm" IS NULL OR "length_cm" >= 0', name='ck_parcel_2'),
        CheckConstraint('"length_cm" IS NULL OR "length_cm" <= 175', name='ck_parcel_3'),
        CheckConstraint('"width_cm" IS NULL OR "width_cm" >= 0', name='ck_parcel_4'),
        CheckConstraint('"width_cm" IS NULL OR "width_cm" <= 175', name='ck_parcel_5'),
        CheckConstraint('"height_cm" IS NULL OR "height_cm" >= 0', name='ck_parcel_6'),
        CheckConstraint('"height_cm" IS NULL OR "height_cm" <= 175', name='ck_parcel_7'),
        CheckConstraint('"contents" IS NULL OR length("contents") <= 200', name='ck_parcel_8'),
        CheckConstraint('"last_event_type" IS NULL OR "last_event_type" IN (\'picked_up\', \'arrived_at_facility\', \'departed_facility\', \'out_for_delivery\', \'exception\', \'delivered\', \'delivery_failed\')', name='ck_parcel_9'),
    )
    parcel_id: str = Field(primary_key=True)
    shipment_id: str = Field(foreign_key='shipment.shipment_id', nullable=False)
    weight_kg: float = Field(nullable=False)
    length_cm: float = Field(nullable=False)
    width_cm: float = Field(nullable=False)
    height_cm: float = Field(nullable=False)
    contents: Optional[str] = Field(default=None, max_length=200)
    current_facility_id: Optional[str] = Field(default=None, foreign_key='facility.facility_id')
    arrived_at: Optional[NaiveDatetime] = Field(default=None)
    last_event_type: Optional[str] = Field(default=None)
    last_scan_at: Optional[NaiveDatetime] = Field(default=None)


class TrackingEvent(Base, table=True):
    'A scan or delivery outcome event of a parcel'
    __tablename__ = 'tracking_event'
    __table_args__ = (
        CheckConstraint('"event_type" IS NULL OR "event_type" IN (\'picked_up\', \'arrived_at_facility\', \'departed_facility\', \'out_for_delivery\', \'exception\', \'delivered\', \'delivery_failed\')', name='ck_tracking_event_0'),
        CheckConstraint('"exception_code" IS NULL OR "exception_code" IN (\'damaged\', \'misrouted\', \'address_issue\', \'weather_delay\', \'held_for_inspection\', \'missing_label\')', name='ck_tracking_event_1'),
    )
    event_id: str = Field(primary_key=True)
    parcel_id: str = Field(foreign_key='parcel.parcel_id', nullable=False)
    shipment_id: str = Field(foreign_key='shipment.shipment_id', nullable=False)
    event_type: str = Field(nullable=False)
    facility_id: Optional[str] = Field(default=None, foreign_key='facility.facility_id')
    exception_code: Optional[str] = Field(default=None)
    note: Optional[str] = Field(default=None)
    occurred_at: NaiveDatetime = Field(nullable=False)


class Courier(Base, table=True):
    'A courier based at a home depot'
    __tablename__ = 'courier'
    __table_args__ = (
        CheckConstraint('"full_name" IS NULL OR length("full_name") <= 120', name='ck_courier_0'),
        CheckConstraint('"phone" IS NULL OR length("phone") <= 30', name='ck_courier_1'),
        CheckConstraint('"licence_class" IS NULL OR "licence_class" IN (\'A\', \'B\', \'C1\', \'C\')', name='ck_courier_2'),
        CheckConstraint('"status" IS NULL OR "status" IN (\'available\', \'on_route\', \'off_duty\', \'on_leave\')', name='ck_courier_3'),
    )
    courier_id: str = Field(primary_key=True)
    full_name: str = Field(max_length=120, nullable=False)
    phone: str = Field(unique=True, max_length=30, nullable=False)
    depot_id: str = Field(foreign_key='facility.facility_id', nullable=False)
    licence_class: str = Field(nullable=False)
    status: str = Field(default='available', nullable=False)
    status_note: Optional[str] = Field(default=None)
    current_route_id: Optional[str] = Field(default=None, foreign_key='delivery_route.route_id')
    created_at: NaiveDatetime = Field(nullable=False)
    updated_at: Optional[NaiveDatetime] = Field(default=None)


class Vehicle(Base, table=True):
    'A delivery vehicle based at a depot'
    __tablename__ = 'vehicle'
    __table_args__ = (
        CheckConstraint('"plate_number" IS NULL OR length("plate_number") <= 15', name='ck_vehicle_0'),
        CheckConstraint('"vehicle_type" IS NULL OR "vehicle_type" IN (\'motorcycle\', \'van\', \'light_truck\', \'truck\')', name='ck_vehicle_1'),
        CheckConstraint('"payload_capacity_kg" IS NULL OR "payload_capacity_kg" >= 0', name='ck_vehicle_2'),
        CheckConstraint('"cargo_volume_m3" IS NULL OR "cargo_volume_m3" >= 0', name='ck_vehicle_3'),
        CheckConstraint('"required_licence_class" IS NULL OR "required_licence_class" IN (\'A\', \'B\', \'C1\', \'C\')', name='ck_vehicle_4'),
        CheckConstraint('"status" IS NULL OR "status" IN (\'available\', \'in_use\', \'maintenance\')', name='ck_vehicle_5'),
    )
    vehicle_id: str = Field(primary_key=True)
    plate_number: str = Field(unique=True, max_length=15, nullable=False)
    vehicle_type: str = Field(nullable=False)
    depot_id: str = Field(foreign_key='facility.facility_id', nullable=False)
    payload_capacity_kg: float = Field(nullable=False)
    cargo_volume_m3: Optional[float] = Field(default=None)
    required_licence_class: str = Field(nullable=False)
    status: str = Field(default='available', nullable=False)
    maintenance_note: Optional[str] = Field(default=None)
    current_route_id: Optional[str] = Field(default=None, foreign_key='delivery_route.route_id')
    created_at: NaiveDatetime = Field(nullable=False)
    updated_at: Optional[NaiveDatetime] = Field(default=None)


class Pickup(Base, table=True):
    'A scheduled collection of shipments at an account address'
    __tablename__ = 'pickup'
    __table_args__ = (
        CheckConstraint('"pickup_address_line" IS NULL OR length("pickup_address_line") <= 200', name='ck_pickup_0'),
        CheckConstraint('"pickup_city" IS NULL OR length("pickup_city") <= 100', name='ck_pickup_1'),
        CheckConstraint('"pickup_postal_code" IS NULL OR length("pickup_postal_code") <= 20', name='ck_pickup_2'),
        CheckConstraint('"pickup_country" IS NULL OR length("pickup_country") <= 2', name='ck_pickup_3'),
        CheckConstraint('"window_start" IS NULL OR length("window_start") <= 5', name='ck_pickup_4'),
        CheckConstraint('"window_end" IS NULL OR length("window_end") <= 5', name='ck_pickup_5'),
        CheckConstraint('"status" IS NULL OR "status" IN (\'pending\', \'completed\', \'cancelled\')', name='ck_pickup_6'),
        CheckConstraint('"expected_parcel_count" IS NULL OR "expected_parcel_count" >= 0', name='ck_pickup_7'),
        CheckConstraint('"collected_parcel_count" IS NULL OR "collected_parcel_count" >= 1', name='ck_pickup_8'),
    )
    pickup_id: str = Field(primary_key=True)
    account_id: str = Field(foreign_key='customer_account.account_id', nullable=False)
    depot_id: str = Field(foreign_key='facility.facility_id', nullable=False)
    courier_id: Optional[str] = Field(default=None, foreign_key='courier.courier_id')
    address_id: Optional[str] = Field(default=None, foreign_key='address_book_entry.address_id')
    pickup_address_line: str = Field(max_length=200, nullable=False)
    pickup_city: str = Field(max_length=100, nullable=False)
    pickup_postal_code: str = Field(max_length=20, nullable=False)
    pickup_country: str = Field(default='US', max_length=2, nullable=False)
    pickup_date: date = Field(nullable=False)
    window_start: str = Field(max_length=5, nullable=False, description='HH:MM')
    window_end: str = Field(max_length=5, nullable=False, description='HH:MM')
    instructions: Optional[str] = Field(default=None)
    status: str = Field(default='pending', nullable=False)
    expected_parcel_count: int = Field(nullable=False)
    collected_parcel_count: Optional[int] = Field(default=None)
    parcel_count_mismatch: Optional[bool] = Field(default=None)
    cancellation_reason: Optional[str] = Field(default=None)
    created_at: NaiveDatetime = Field(nullable=False)
    updated_at: Optional[NaiveDatetime] = Field(default=None)
    completed_at: Optional[NaiveDatetime] = Field(default=None)
    cancelled_at: Optional[NaiveDatetime] = Field(default=None)


class PickupShipment(Base, table=True):
    'A shipment covered by a pickup'
    __tablename__ = 'pickup_shipment'
    pickup_shipment_id: str = Field(primary_key=True)
    pickup_id: str = Field(foreign_key='pickup.pickup_id', nullable=False)
    shipment_id: str = Field(foreign_key='shipment.shipment_id', nullable=False)


class DeliveryRoute(Base, table=True):
    "A courier's delivery run from a depot on a date with one vehicle"
    __tablename__ = 'delivery_route'
    __table_args__ = (
        CheckConstraint('"status" IS NULL OR "status" IN (\'planned\', \'dispatched\', \'completed\')', name='ck_delivery_route_0'),
        CheckConstraint('"stop_count" IS NULL OR "stop_count" >= 0', name='ck_delivery_route_1'),
        CheckConstraint('"planned_load_kg" IS NULL OR "planned_load_kg" >= 0', name='ck_delivery_route_2'),
    )
    route_id: str = Field(primary_key=True)
    depot_id: str = Field(foreign_key='facility.facility_id', nullable=False)
    route_date: date = Field(nullable=False)
    courier_id: str = Field(foreign_key='courier.courier_id', nullable=False)
    vehicle_id: str = Field(foreign_key='vehicle.vehicle_id', nullable=False)
    status: str = Field(default='planned', nullable=False)
    stop_count: int = Field(default=0, nullable=False)
    planned_load_kg: float = Field(default=0.0, nullable=False)
    created_at: NaiveDatetime = Field(nullable=False)
    dispatched_at: Optional[NaiveDatetime] = Field(default=None)
    completed_at: Optional[NaiveDatetime] = Field(default=None)


class RouteStop(Base, table=True):
    'An ordered stop of a route delivering one shipment, with outcome and proof'
    __tablename__ = 'route_stop'
    __table_args__ = (
        CheckConstraint('"sequence" IS NULL OR "sequence" >= 1', name='ck_route_stop_0'),
        CheckConstraint('"outcome" IS NULL OR "outcome" IN (\'pending\', \'delivered\', \'failed\')', name='ck_route_stop_1'),
        CheckConstraint('"receiver_name" IS NULL OR length("receiver_name") <= 120', name='ck_route_stop_2'),
        CheckConstraint('"proof_type" IS NULL OR "proof_type" IN (\'signature\', \'photo\')', name='ck_route_stop_3'),
        CheckConstraint('"proof_reference" IS NULL OR length("proof_reference") <= 200', name='ck_route_stop_4'),
    )
    stop_id: str = Field(primary_key=True)
    route_id: str = Field(foreign_key='delivery_route.route_id', nullable=False)
    shipment_id: str = Field(foreign_key='shipment.shipment_id', nullable=False)
    sequence: int = Field(nullable=False)
    outcome: str = Field(default='pending', nullable=False)
    attempted_at: Optional[NaiveDatetime] = Field(default=None)
    receiver_name: Optional[str] = Field(default=None, max_length=120)
    proof_type: Optional[str] = Field(default=None)
    proof_reference: Optional[str] = Field(default=None, max_length=200)
    note: Optional[str] = Field(default=None)
    created_at: NaiveDatetime = Field(nullable=False)


class DeliveryAttempt(Base, table=True):
    'A failed delivery attempt at a route stop'
    __tablename__ = 'delivery_attempt'
    __table_args__ = (
        CheckConstraint('"reason" IS NULL OR "reason" IN (\'recipient_absent\', \'address_not_found\', \'refused\')', name='ck_delivery_attempt_0'),
        CheckConstraint('"attempt_number" IS NULL OR "attempt_number" >= 1', name='ck_delivery_attempt_1'),
        CheckConstraint('"attempt_number" IS NULL OR "attempt_number" <= 3', name='ck_delivery_attempt_2'),
    )
    attempt_id: str = Field(primary_key=True)
    stop_id: str = Field(foreign_key='route_stop.stop_id', unique=True, nullable=False)
    route_id: str = Field(foreign_key='delivery_route.route_id', nullable=False)
    shipment_id: str = Field(foreign_key='shipment.shipment_id', nullable=False)
    reason: str = Field(nullable=False)
    attempt_number: int = Field(nullable=False)
    note: Optional[str] = Field(default=None)
    attempted_at: NaiveDatetime = Field(nullable=False)


class Claim(Base, table=True):
    'A loss, damage or delay claim on a shipment'
    __tablename__ = 'claim'
    __table_args__ = (
        CheckConstraint('"claim_type" IS NULL OR "claim_type" IN (\'loss\', \'damage\', \'delay\')', name='ck_claim_0'),
        CheckConstraint('"claimed_amount" IS NULL OR "claimed_amount" >= 0', name='ck_claim_1'),
        CheckConstraint('"liability_cap" IS NULL OR "liability_cap" >= 0', name='ck_claim_2'),
        CheckConstraint('"status" IS NULL OR "status" IN (\'open\', \'approved\', \'rejected\')', name='ck_claim_3'),
        CheckConstraint('"settlement_amount" IS NULL OR "settlement_amount" >= 0', name='ck_claim_4'),
    )
    claim_id: str = Field(primary_key=True)
    shipment_id: str = Field(foreign_key='shipment.shipment_id', nullable=False)
    account_id: str = Field(foreign_key='customer_account.account_id', nullable=False)
    parcel_id: Optional[str] = Field(default=None, foreign_key='parcel.parcel_id')
    claim_type: str = Field(nullable=False)
    claimed_amount: float = Field(nullable=False)
    liability_cap: float = Field(nullable=False)
    description: str = Field(nullable=False)
    status: str = Field(default='open', nullable=False)
    settlement_amount: Optional[float] = Field(default=None)
    resolution_note: Optional[str] = Field(default=None)
    filed_at: NaiveDatetime = Field(nullable=False)
    resolved_at: Optional[NaiveDatetime] = Field(default=None)


class AccountCredit(Base, table=True):
    "A credit from an approved claim, deducted from the account's next invoices"
    __tablename__ = 'account_credit'
    __table_args__ = (
        CheckConstraint('"amount" IS NULL OR "amount" >= 0', name='ck_account_credit_0'),
        CheckConstraint('"remaining_amount" IS NULL OR "remaining_amount" >= 0', name='ck_account_credit_1'),
        CheckConstraint('"status" IS NULL OR "status" IN (\'unapplied\', \'applied\')', name='ck_account_credit_2'),
    )
    credit_id: str = Field(primary_key=True)
    account_id: str = Field(foreign_key='customer_account.account_id', nullable=False)
    claim_id: str = Field(foreign_key='claim.claim_id', unique=True, nullable=False)
    amount: float = Field(nullable=False)
    remaining_amount: float = Field(nullable=False, description='Part of the credit not yet deducted from an invoice')
    status: str = Field(default='unapplied', nullable=False)
    invoice_id: Optional[str] = Field(default=None, foreign_key='invoice.invoice_id', description='Invoice that used up the credit')
    created_at: NaiveDatetime = Field(nullable=False)
    applied_at: Optional[NaiveDatetime] = Field(default=None)


class CodCollection(Base, table=True):
    'COD cash collected for a delivered shipment and owed to the shipper'
    __tablename__ = 'cod_collection'
    __table_args__ = (
        CheckConstraint('"amount" IS NULL OR "amount" >= 0', name='ck_cod_collection_0'),
        CheckConstraint('"payment_method" IS NULL OR "payment_method" IN (\'cash\', \'card\')', name='ck_cod_collection_1'),
        CheckConstraint('"remittance_status" IS NULL OR "remittance_status" IN (\'pending\', \'remitted\')', name='ck_cod_collection_2'),
    )
    collection_id: str = Field(primary_key=True)
    shipment_id: str = Field(foreign_key='shipment.shipment_id', unique=True, nullable=False)
    account_id: str = Field(foreign_key='customer_account.account_id', nullable=False)
    courier_id: str = Field(foreign_key='courier.courier_id', nullable=False)
    amount: float = Field(nullable=False)
    payment_method: str = Field(nullable=False)
    remittance_status: str = Field(default='pending', nullable=False)
    collected_at: NaiveDatetime = Field(nullable=False)
    remitted_at: Optional[NaiveDatetime] = Field(default=None)


class Invoice(Base, table=True):
    "An invoice of an account's shipment charges for a billing period"
    __tablename__ = 'invoice'
    __table_args__ = (
        CheckConstraint('"line_count" IS NULL OR "line_count" >= 1', name='ck_invoice_0'),
        CheckConstraint('"subtotal" IS NULL OR "subtotal" >= 0', name='ck_invoice_1'),
        CheckConstraint('"credits_applied" IS NULL OR "credits_applied" >= 0', name='ck_invoice_2'),
        CheckConstraint('"total_amount" IS NULL OR "total_amount" >= 0', name='ck_invoice_3'),
        CheckConstraint('"balance_due" IS NULL OR "balance_due" >= 0', name='ck_invoice_4'),
        CheckConstraint('"status" IS NULL OR "status" IN (\'unpaid\', \'paid\')', name='ck_invoice_5'),
    )
    invoice_id: str = Field(primary_key=True)
    account_id: str = Field(foreign_key='customer_account.account_id', nullable=False)
    period_start: date = Field(nullable=False)
    period_end: date = Field(nullable=False)
    line_count: int = Field(nullable=False)
    subtotal: float = Field(nullable=False)
    credits_applied: float = Field(default=0.0, nullable=False)
    total_amount: float = Field(nullable=False)
    balance_due: float = Field(nullable=False)
    status: str = Field(default='unpaid', nullable=False)
    issue_date: date = Field(nullable=False)
    due_date: date = Field(nullable=False)
    created_at: NaiveDatetime = Field(nullable=False)


MODELS: dict[str, type[Base]] = {'customer_account': CustomerAccount, 'address_book_entry': AddressBookEntry, 'facility': Facility, 'service_zone': ServiceZone, 'rate_quote': RateQuote, 'shipment': Shipment, 'parcel': Parcel, 'tracking_event': TrackingEvent, 'courier': Courier, 'vehicle': Vehicle, 'pickup': Pickup, 'pickup_shipment': PickupShipment, 'delivery_route': DeliveryRoute, 'route_stop': RouteStop, 'delivery_attempt': DeliveryAttempt, 'claim': Claim, 'account_credit': AccountCredit, 'cod_collection': CodCollection, 'invoice': Invoice}
TABLE_ORDER: list[str] = ['customer_account', 'address_book_entry', 'facility', 'service_zone', 'rate_quote', 'shipment', 'parcel', 'tracking_event', 'courier', 'vehicle', 'pickup', 'pickup_shipment', 'delivery_route', 'route_stop', 'delivery_attempt', 'claim', 'account_credit', 'cod_collection', 'invoice']
PRIMARY_KEY: dict[str, str] = {'customer_account': 'account_id', 'address_book_entry': 'address_id', 'facility': 'facility_id', 'service_zone': 'zone_id', 'rate_quote': 'quote_id', 'shipment': 'shipment_id', 'parcel': 'parcel_id', 'tracking_event': 'event_id', 'courier': 'courier_id', 'vehicle': 'vehicle_id', 'pickup': 'pickup_id', 'pickup_shipment': 'pickup_shipment_id', 'delivery_route': 'route_id', 'route_stop': 'stop_id', 'delivery_attempt': 'attempt_id', 'claim': 'claim_id', 'account_credit': 'credit_id', 'cod_collection': 'collection_id', 'invoice': 'invoice_id'}
ID_PREFIX: dict[str, str] = {'customer_account': 'ACC', 'address_book_entry': 'ADR', 'facility': 'FAC', 'service_zone': 'ZON', 'rate_quote': 'QT', 'shipment': 'SHP', 'parcel': 'PCL', 'tracking_event': 'EVT', 'courier': 'CR', 'vehicle': 'VH', 'pickup': 'PU', 'pickup_shipment': 'PUS', 'delivery_route': 'RT', 'route_stop': 'STP', 'delivery_attempt': 'ATT', 'claim': 'CLM', 'account_credit': 'CRD', 'cod_collection': 'COD', 'invoice': 'INV'}
COLUMNS: dict[str, list[str]] = {'customer_account': ['account_id', 'company_name', 'contact_name', 'contact_email', 'contact_phone', 'billing_address_line', 'billing_city', 'billing_postal_code', 'billing_country', 'default_service_level', 'credit_limit', 'outstanding_balance', 'status', 'suspension_reason', 'suspended_at', 'created_at', 'updated_at'], 'address_book_entry': ['address_id', 'account_id', 'label', 'address_type', 'contact_name', 'contact_phone', 'address_line', 'city', 'postal_code', 'country', 'postal_zone', 'instructions', 'created_at'], 'facility': ['facility_id', 'name', 'facility_type', 'city', 'country'], 'service_zone': ['zone_id', 'zone_code', 'country', 'postal_code_prefix', 'depot_id', 'offers_same_day', 'offers_next_day', 'offers_economy'], 'rate_quote': ['quote_id', 'account_id', 'origin_postal_code', 'origin_country', 'destination_postal_code', 'destination_country', 'service_level', 'parcels_json', 'parcel_count', 'total_weight_kg', 'chargeable_weight_kg', 'declared_value', 'cod_amount', 'shipping_charge', 'insurance_fee', 'cod_fee', 'total_charge', 'promised_delivery_date', 'status', 'created_at', 'expires_at'], 'shipment': ['shipment_id', 'tracking_number', 'account_id', 'quote_id', 'status', 'service_level', 'sender_address_id', 'sender_name', 'sender_phone', 'sender_address_line', 'sender_city', 'sender_postal_code', 'sender_country', 'recipient_name', 'recipient_phone', 'recipient_address_line', 'recipient_city', 'recipient_postal_code', 'recipient_country', 'declared_value', 'cod_amount', 'chargeable_weight_kg', 'shipping_charge', 'insurance_fee', 'cod_fee', 'total_charge', 'charge_status', 'invoice_id', 'customer_reference', 'origin_depot_id', 'destination_depot_id', 'promised_delivery_date', 'failed_attempts', 'last_failure_reason', 'redelivery_date', 'collection_depot_id', 'collection_deadline', 'collected_by_name', 'collection_id_reference', 'is_return', 'original_shipment_id', 'return_reason', 'return_note', 'booked_at', 'delivered_at', 'cancelled_at', 'cancellation_reason', 'updated_at'], 'parcel': ['parcel_id', 'shipment_id', 'weight_kg', 'length_cm', 'width_cm', 'height_cm', 'contents', 'current_facility_id', 'arrived_at', 'last_event_type', 'last_scan_at'], 'tracking_event': ['event_id', 'parcel_id', 'shipment_id', 'event_type', 'facility_id', 'exception_code', 'note', 'occurred_at'], 'courier': ['courier_id', 'full_name', 'phone', 'depot_id', 'licence_class', 'status', 'status_note', 'current_route_id', 'created_at', 'updated_at'], 'vehicle': ['vehicle_id', 'plate_number', 'vehicle_type', 'depot_id', 'payload_capacity_kg', 'cargo_volume_m3', 'required_licence_class', 'status', 'maintenance_note', 'current_route_id', 'created_at', 'updated_at'], 'pickup': ['pickup_id', 'account_id', 'depot_id', 'courier_id', 'address_id', 'pickup_address_line', 'pickup_city', 'pickup_postal_code', 'pickup_country', 'pickup_date', 'window_start', 'window_end', 'instructions', 'status', 'expected_parcel_count', 'collected_parcel_count', 'parcel_count_mismatch', 'cancellation_reason', 'created_at', 'updated_at', 'completed_at', 'cancelled_at'], 'pickup_shipment': ['pickup_shipment_id', 'pickup_id', 'shipment_id'], 'delivery_route': ['route_id', 'depot_id', 'route_date', 'courier_id', 'vehicle_id', 'status', 'stop_count', 'planned_load_kg', 'created_at', 'dispatched_at', 'completed_at'], 'route_stop': ['stop_id', 'route_id', 'shipment_id', 'sequence', 'outcome', 'attempted_at', 'receiver_name', 'proof_type', 'proof_reference', 'note', 'created_at'], 'delivery_attempt': ['attempt_id', 'stop_id', 'route_id', 'shipment_id', 'reason', 'attempt_number', 'note', 'attempted_at'], 'claim': ['claim_id', 'shipment_id', 'account_id', 'parcel_id', 'claim_type', 'claimed_amount', 'liability_cap', 'description', 'status', 'settlement_amount', 'resolution_note', 'filed_at', 'resolved_at'], 'account_credit': ['credit_id', 'account_id', 'claim_id', 'amount', 'remaining_amount', 'status', 'invoice_id', 'created_at', 'applied_at'], 'cod_collection': ['collection_id', 'shipment_id', 'account_id', 'courier_id', 'amount', 'payment_method', 'remittance_status', 'collected_at', 'remitted_at'], 'invoice': ['invoice_id', 'account_id', 'period_start', 'period_end', 'line_count', 'subtotal', 'credits_applied', 'total_amount', 'balance_due', 'status', 'issue_date', 'due_date', 'created_at']}
COLUMN_TYPES: dict[str, dict[str, str]] = {'customer_account': {'account_id': 'string', 'company_name': 'string', 'contact_name': 'string', 'contact_email': 'string', 'contact_phone': 'string', 'billing_address_line': 'string', 'billing_city': 'string', 'billing_postal_code': 'string', 'billing_country': 'string', 'default_service_level': 'string', 'credit_limit': 'number', 'outstanding_balance': 'number', 'status': 'string', 'suspension_reason': 'text', 'suspended_at': 'datetime', 'created_at': 'datetime', 'updated_at': 'datetime'}, 'address_book_entry': {'address_id': 'string', 'account_id': 'string', 'label': 'string', 'address_type': 'string', 'contact_name': 'string', 'contact_phone': 'string', 'address_line': 'string', 'city': 'string', 'postal_code': 'string', 'country': 'string', 'postal_zone': 'string', 'instructions': 'text', 'created_at': 'datetime'}, 'facility': {'facility_id': 'string', 'name': 'string', 'facility_type': 'string', 'city': 'string', 'country': 'string'}, 'service_zone': {'zone_id': 'string', 'zone_code': 'string', 'country': 'string', 'postal_code_prefix': 'string', 'depot_id': 'string', 'offers_same_day': 'boolean', 'offers_next_day': 'boolean', 'offers_economy': 'boolean'}, 'rate_quote': {'quote_id': 'string', 'account_id': 'string', 'origin_postal_code': 'string', 'origin_country': 'string', 'destination_postal_code': 'string', 'destination_country': 'string', 'service_level': 'string', 'parcels_json': 'text', 'parcel_count': 'integer', 'total_weight_kg': 'number', 'chargeable_weight_kg': 'number', 'declared_value': 'number', 'cod_amount': 'number', 'shipping_charge': 'number', 'insurance_fee': 'number', 'cod_fee': 'number', 'total_charge': 'number', 'promised_delivery_date': 'date', 'status': 'string', 'created_at': 'datetime', 'expires_at': 'datetime'}, 'shipment': {'shipment_id': 'string', 'tracking_number': 'string', 'account_id': 'string', 'quote_id': 'string', 'status': 'string', 'service_level': 'string', 'sender_address_id': 'string', 'sender_name': 'string', 'sender_phone': 'string', 'sender_address_line': 'string', 'sender_city': 'string', 'sender_postal_code': 'string', 'sender_country': 'string', 'recipient_name': 'string', 'recipient_phone': 'string', 'recipient_address_line': 'string', 'recipient_city': 'string', 'recipient_postal_code': 'string', 'recipient_country': 'string', 'declared_value': 'number', 'cod_amount': 'number', 'chargeable_weight_kg': 'number', 'shipping_charge': 'number', 'insurance_fee': 'number', 'cod_fee': 'number', 'total_charge': 'number', 'charge_status': 'string', 'invoice_id': 'string', 'customer_reference': 'string', 'origin_depot_id': 'string', 'destination_depot_id': 'string', 'promised_delivery_date': 'date', 'failed_attempts': 'integer', 'last_failure_reason': 'string', 'redelivery_date': 'date', 'collection_depot_id': 'string', 'collection_deadline': 'date', 'collected_by_name': 'string', 'collection_id_reference': 'string', 'is_return': 'boolean', 'original_shipment_id': 'string', 'return_reason': 'string', 'return_note': 'text', 'booked_at': 'datetime', 'delivered_at': 'datetime', 'cancelled_at': 'datetime', 'cancellation_reason': 'text', 'updated_at': 'datetime'}, 'parcel': {'parcel_id': 'string', 'shipment_id': 'string', 'weight_kg': 'number', 'length_cm': 'number', 'width_cm': 'number', 'height_cm': 'number', 'contents': 'string', 'current_facility_id': 'string', 'arrived_at': 'datetime', 'last_event_type': 'string', 'last_scan_at': 'datetime'}, 'tracking_event': {'event_id': 'string', 'parcel_id': 'string', 'shipment_id': 'string', 'event_type': 'string', 'facility_id': 'string', 'exception_code': 'string', 'note': 'text', 'occurred_at': 'datetime'}, 'courier': {'courier_id': 'string', 'full_name': 'string', 'phone': 'string', 'depot_id': 'string', 'licence_class': 'string', 'status': 'string', 'status_note': 'text', 'current_route_id': 'string', 'created_at': 'datetime', 'updated_at': 'datetime'}, 'vehicle': {'vehicle_id': 'string', 'plate_number': 'string', 'vehicle_type': 'string', 'depot_id': 'string', 'payload_capacity_kg': 'number', 'cargo_volume_m3': 'number', 'required_licence_class': 'string', 'status': 'string', 'maintenance_note': 'text', 'current_route_id': 'string', 'created_at': 'datetime', 'updated_at': 'datetime'}, 'pickup': {'pickup_id': 'string', 'account_id': 'string', 'depot_id': 'string', 'courier_id': 'string', 'address_id': 'string', 'pickup_address_line': 'string', 'pickup_city': 'string', 'pickup_postal_code': 'string', 'pickup_country': 'string', 'pickup_date': 'date', 'window_start': 'string', 'window_end': 'string', 'instructions': 'text', 'status': 'string', 'expected_parcel_count': 'integer', 'collected_parcel_count': 'integer', 'parcel_count_mismatch': 'boolean', 'cancellation_reason': 'text', 'created_at': 'datetime', 'updated_at': 'datetime', 'completed_at': 'datetime', 'cancelled_at': 'datetime'}, 'pickup_shipment': {'pickup_shipment_id': 'string', 'pickup_id': 'string', 'shipment_id': 'string'}, 'delivery_route': {'route_id': 'string', 'depot_id': 'string', 'route_date': 'date', 'courier_id': 'string', 'vehicle_id': 'string', 'status': 'string', 'stop_count': 'integer', 'planned_load_kg': 'number', 'created_at': 'datetime', 'dispatched_at': 'datetime', 'completed_at': 'datetime'}, 'route_stop': {'stop_id': 'string', 'route_id': 'string', 'shipment_id': 'string', 'sequence': 'integer', 'outcome': 'string', 'attempted_at': 'datetime', 'receiver_name': 'string', 'proof_type': 'string', 'proof_reference': 'string', 'note': 'text', 'created_at': 'datetime'}, 'delivery_attempt': {'attempt_id': 'string', 'stop_id': 'string', 'route_id': 'string', 'shipment_id': 'string', 'reason': 'string', 'attempt_number': 'integer', 'note': 'text', 'attempted_at': 'datetime'}, 'claim': {'claim_id': 'string', 'shipment_id': 'string', 'account_id': 'string', 'parcel_id': 'string', 'claim_type': 'string', 'claimed_amount': 'number', 'liability_cap': 'number', 'description': 'text', 'status': 'string', 'settlement_amount': 'number', 'resolution_note': 'text', 'filed_at': 'datetime', 'resolved_at': 'datetime'}, 'account_credit': {'credit_id': 'string', 'account_id': 'string', 'claim_id': 'string', 'amount': 'number', 'remaining_amount': 'number', 'status': 'string', 'invoice_id': 'string', 'created_at': 'datetime', 'applied_at': 'datetime'}, 'cod_collection': {'collection_id': 'string', 'shipment_id': 'string', 'account_id': 'string', 'courier_id': 'string', 'amount': 'number', 'payment_method': 'string', 'remittance_status': 'string', 'collected_at': 'datetime', 'remitted_at': 'datetime'}, 'invoice': {'invoice_id': 'string', 'account_id': 'string', 'period_start': 'date', 'period_end': 'date', 'line_count': 'integer', 'subtotal': 'number', 'credits_applied': 'number', 'total_amount': 'number', 'balance_due': 'number', 'status': 'string', 'issue_date': 'date', 'due_date': 'date', 'created_at': 'datetime'}}


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
