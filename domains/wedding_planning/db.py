"""wedding_planning DB layer, compiled from spec.json by worldsmith. Do not edit: recompile."""

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


class Wedding(Base, table=True):
    "A couple's wedding; parent of all planning records."
    __tablename__ = 'wedding'
    __table_args__ = (
        CheckConstraint('"partner_a_name" IS NULL OR length("partner_a_name") <= 120', name='ck_wedding_0'),
        CheckConstraint('"partner_b_name" IS NULL OR length("partner_b_name") <= 120', name='ck_wedding_1'),
        CheckConstraint('"city" IS NULL OR length("city") <= 100', name='ck_wedding_2'),
        CheckConstraint('"target_guest_count" IS NULL OR "target_guest_count" >= 1', name='ck_wedding_3'),
        CheckConstraint('"total_budget" IS NULL OR "total_budget" >= 0', name='ck_wedding_4'),
        CheckConstraint('"status" IS NULL OR "status" IN (\'planning\', \'confirmed\', \'completed\', \'cancelled\')', name='ck_wedding_5'),
    )
    wedding_id: str = Field(primary_key=True)
    partner_a_name: str = Field(max_length=120, nullable=False)
    partner_b_name: str = Field(max_length=120, nullable=False)
    wedding_date: date = Field(nullable=False)
    city: str = Field(max_length=100, nullable=False)
    target_guest_count: int = Field(nullable=False)
    total_budget: float = Field(nullable=False)
    rsvp_deadline: Optional[date] = Field(default=None, description='Last day for on-time RSVPs; before wedding_date.')
    status: str = Field(default='planning', nullable=False)
    created_at: NaiveDatetime = Field(nullable=False)


class Guest(Base, table=True):
    "A person on a wedding's guest list with contact details, plus-one, dietary needs, overall RSVP status, meal choice and seat."
    __tablename__ = 'guest'
    __table_args__ = (
        CheckConstraint('"first_name" IS NULL OR length("first_name") <= 80', name='ck_guest_0'),
        CheckConstraint('"last_name" IS NULL OR length("last_name") <= 80', name='ck_guest_1'),
        CheckConstraint('"email" IS NULL OR length("email") <= 254', name='ck_guest_2'),
        CheckConstraint('"phone" IS NULL OR length("phone") <= 40', name='ck_guest_3'),
        CheckConstraint('"side" IS NULL OR "side" IN (\'partner_a\', \'partner_b\', \'shared\')', name='ck_guest_4'),
        CheckConstraint('"group" IS NULL OR length("group") <= 100', name='ck_guest_5'),
        CheckConstraint('"household" IS NULL OR length("household") <= 120', name='ck_guest_6'),
        CheckConstraint('"plus_one_name" IS NULL OR length("plus_one_name") <= 120', name='ck_guest_7'),
        CheckConstraint('"rsvp_status" IS NULL OR "rsvp_status" IN (\'pending\', \'attending\', \'maybe\', \'declined\')', name='ck_guest_8'),
    )
    guest_id: str = Field(primary_key=True)
    wedding_id: str = Field(foreign_key='wedding.wedding_id', nullable=False)
    first_name: str = Field(max_length=80, nullable=False)
    last_name: str = Field(max_length=80, nullable=False)
    email: Optional[str] = Field(default=None, max_length=254, description='Unique among the guests of one wedding.')
    phone: Optional[str] = Field(default=None, max_length=40)
    mailing_address: Optional[str] = Field(default=None)
    side: str = Field(default='shared', nullable=False)
    group: Optional[str] = Field(default=None, max_length=100, description='Free-text group label.')
    household: Optional[str] = Field(default=None, max_length=120)
    plus_one_allowed: bool = Field(default=False, nullable=False)
    plus_one_name: Optional[str] = Field(default=None, max_length=120)
    plus_one_attending: bool = Field(default=False, nullable=False)
    dietary_restrictions: str = Field(default='[]', nullable=False, description='JSON array of tags among vegetarian, vegan, pescatarian, gluten_free, dairy_free, nut_free, halal, kosher.')
    dietary_notes: Optional[str] = Field(default=None)
    rsvp_status: str = Field(default='pending', nullable=False, description="Overall status derived from the guest's RSVPs.")
    menu_option_id: Optional[str] = Field(default=None, foreign_key='menu_option.menu_option_id')
    table_id: Optional[str] = Field(default=None, foreign_key='reception_table.table_id')
    created_at: NaiveDatetime = Field(nullable=False)


class Event(Base, table=True):
    'An event of the wedding weekend.'
    __tablename__ = 'event'
    __table_args__ = (
        CheckConstraint('"event_type" IS NULL OR "event_type" IN (\'rehearsal\', \'rehearsal_dinner\', \'ceremony\', \'cocktail_hour\', \'reception\', \'brunch\', \'other\')', name='ck_event_0'),
        CheckConstraint('"name" IS NULL OR length("name") <= 120', name='ck_event_1'),
        CheckConstraint('"location" IS NULL OR length("location") <= 200', name='ck_event_2'),
        CheckConstraint('"dress_code" IS NULL OR length("dress_code") <= 100', name='ck_event_3'),
        CheckConstraint('"status" IS NULL OR "status" IN (\'scheduled\', \'cancelled\')', name='ck_event_4'),
    )
    event_id: str = Field(primary_key=True)
    wedding_id: str = Field(foreign_key='wedding.wedding_id', nullable=False)
    event_type: str = Field(nullable=False)
    name: str = Field(max_length=120, nullable=False)
    start_time: NaiveDatetime = Field(nullable=False)
    end_time: NaiveDatetime = Field(nullable=False)
    location: str = Field(max_length=200, nullable=False)
    address: Optional[str] = Field(default=None)
    dress_code: Optional[str] = Field(default=None, max_length=100)
    status: str = Field(default='scheduled', nullable=False)
    cancelled_at: Optional[NaiveDatetime] = Field(default=None)
    cancellation_reason: Optional[str] = Field(default=None)
    created_at: NaiveDatetime = Field(nullable=False)


class Rsvp(Base, table=True):
    "A guest's response to one event; one row per guest and event, replaced by a new response."
    __tablename__ = 'rsvp'
    __table_args__ = (
        CheckConstraint('"response" IS NULL OR "response" IN (\'attending\', \'declined\', \'maybe\')', name='ck_rsvp_0'),
    )
    rsvp_id: str = Field(primary_key=True)
    guest_id: str = Field(foreign_key='guest.guest_id', nullable=False)
    event_id: str = Field(foreign_key='event.event_id', nullable=False)
    response: str = Field(nullable=False)
    bringing_plus_one: bool = Field(default=False, nullable=False)
    responded_at: NaiveDatetime = Field(nullable=False)
    late: bool = Field(default=False, nullable=False)


class MenuOption(Base, table=True):
    "A dish on a wedding's reception menu."
    __tablename__ = 'menu_option'
    __table_args__ = (
        CheckConstraint('"name" IS NULL OR length("name") <= 150', name='ck_menu_option_0'),
        CheckConstraint('"course" IS NULL OR "course" IN (\'starter\', \'entree\', \'dessert\', \'kids_meal\')', name='ck_menu_option_1'),
        CheckConstraint('"price_per_plate" IS NULL OR "price_per_plate" >= 0', name='ck_menu_option_2'),
    )
    menu_option_id: str = Field(primary_key=True)
    wedding_id: str = Field(foreign_key='wedding.wedding_id', nullable=False)
    name: str = Field(max_length=150, nullable=False)
    course: str = Field(nullable=False)
    dietary_tags: str = Field(default='[]', nullable=False, description='JSON array of dietary tags the dish meets.')
    description: Optional[str] = Field(default=None)
    price_per_plate: Optional[float] = Field(default=None)
    created_at: NaiveDatetime = Field(nullable=False)


class ReceptionTable(Base, table=True):
    'A reception table; guests point to it through guest.table_id.'
    __tablename__ = 'reception_table'
    __table_args__ = (
        CheckConstraint('"name" IS NULL OR length("name") <= 80', name='ck_reception_table_0'),
        CheckConstraint('"shape" IS NULL OR "shape" IN (\'round\', \'rectangular\', \'square\', \'head\', \'sweetheart\')', name='ck_reception_table_1'),
        CheckConstraint('"capacity" IS NULL OR "capacity" >= 1', name='ck_reception_table_2'),
        CheckConstraint('"capacity" IS NULL OR "capacity" <= 30', name='ck_reception_table_3'),
    )
    table_id: str = Field(primary_key=True)
    wedding_id: str = Field(foreign_key='wedding.wedding_id', nullable=False)
    name: str = Field(max_length=80, nullable=False, description='Unique within the wedding.')
    shape: str = Field(default='round', nullable=False)
    capacity: int = Field(nullable=False)
    notes: Optional[str] = Field(default=None)
    created_at: NaiveDatetime = Field(nullable=False)


class TimelineItem(Base, table=True):
    'A run-of-show item of an event.'
    __tablename__ = 'timeline_item'
    __table_args__ = (
        CheckConstraint('"title" IS NULL OR length("title") <= 150', name='ck_timeline_item_0'),
        CheckConstraint('"duration_minutes" IS NULL OR "duration_minutes" >= 1', name='ck_timeline_item_1'),
        CheckConstraint('"duration_minutes" IS NULL OR "duration_minutes" <= 600', name='ck_timeline_item_2'),
        CheckConstraint('"responsible_party" IS NULL OR length("responsible_party") <= 120', name='ck_timeline_item_3'),
    )
    timeline_item_id: str = Field(primary_key=True)
    event_id: str = Field(foreign_key='event.event_id', nullable=False)
    title: str = Field(max_length=150, nullable=False)
    start_time: NaiveDatetime = Field(nullable=False)
    end_time: NaiveDatetime = Field(nullable=False)
    duration_minutes: int = Field(nullable=False)
    responsible_party: Optional[str] = Field(default=None, max_length=120)
    booking_id: Optional[str] = Field(default=None, foreign_key='booking.booking_id')
    notes: Optional[str] = Field(default=None)
    created_at: NaiveDatetime = Field(nullable=False)


class Vendor(Base, table=True):
    'A vendor in the shared local catalog with its deposit and cancellation policy.'
    __tablename__ = 'vendor'
    __table_args__ = (
        CheckConstraint('"name" IS NULL OR length("name") <= 150', name='ck_vendor_0'),
        CheckConstraint('"category" IS NULL OR "category" IN (\'venue\', \'caterer\', \'photographer\', \'videographer\', \'florist\', \'band\', \'dj\', \'officiant\', \'baker\', \'hair_makeup\', \'rentals\', \'transportation\', \'stationery\', \'planner\')', name='ck_vendor_1'),
        CheckConstraint('"city" IS NULL OR length("city") <= 100', name='ck_vendor_2'),
        CheckConstraint('"contact_email" IS NULL OR length("contact_email") <= 254', name='ck_vendor_3'),
        CheckConstraint('"phone" IS NULL OR length("phone") <= 40', name='ck_vendor_4'),
        CheckConstraint('"rating" IS NULL OR "rating" >= 0', name='ck_vendor_5'),
        CheckConstraint('"rating" IS NULL OR "rating" <= 5', name='ck_vendor_6'),
        CheckConstraint('"review_count" IS NULL OR "review_count" >= 0', name='ck_vendor_7'),
        CheckConstraint('"deposit_percent" IS NULL OR "deposit_percent" >= 0', name='ck_vendor_8'),
        CheckConstraint('"deposit_percent" IS NULL OR "deposit_percent" <= 100', name='ck_vendor_9'),
        CheckConstraint('"free_cancellation_days" IS NULL OR "free_cancellation_days" >= 0', name='ck_vendor_10'),
        CheckConstraint('"late_cancellation_days" IS NULL OR "late_cancellation_days" >= 0', name='ck_vendor_11'),
        CheckConstraint('"late_cancellation_fee_percent" IS NULL OR "late_cancellation_fee_percent" >= 0', name='ck_vendor_12'),
        CheckConstraint('"late_cancellation_fee_percent" IS NULL OR "late_cancellation_fee_percent" <= 100', name='ck_vendor_13'),
    )
    vendor_id: str = Field(primary_key=True)
    name: str = Field(max_length=150, nullable=False)
    category: str = Field(nullable=False)
    city: str = Field(max_length=100, nullable=False)
    description: Optional[str] = Field(default=None)
    contact_email: Optional[str] = Field(default=None, max_length=254)
    phone: Optional[str] = Field(default=None, max_length=40)
    rating: float = Field(default=0, nullable=False)
    review_count: int = Field(default=0, nullable=False)
    deposit_percent: float = Field(default=25, nullable=False)
    free_cancellation_days: int = Field(default=180, nullable=False)
    late_cancellation_days: int = Field(default=30, nullable=False)
    late_cancellation_fee_percent: float = Field(default=50, nullable=False)
    cancellation_policy_summary: Optional[str] = Field(default=None)


class VendorPackage(Base, table=True):
    'A priced package a vendor offers.'
    __tablename__ = 'vendor_package'
    __table_args__ = (
        CheckConstraint('"name" IS NULL OR length("name") <= 150', name='ck_vendor_package_0'),
        CheckConstraint('"price" IS NULL OR "price" >= 0', name='ck_vendor_package_1'),
        CheckConstraint('"max_guests" IS NULL OR "max_guests" >= 1', name='ck_vendor_package_2'),
    )
    package_id: str = Field(primary_key=True)
    vendor_id: str = Field(foreign_key='vendor.vendor_id', nullable=False)
    name: str = Field(max_length=150, nullable=False)
    price: float = Field(nullable=False)
    description: Optional[str] = Field(default=None)
    max_guests: Optional[int] = Field(default=None)


class Booking(Base, table=True):
    'A vendor package booked for a wedding on a service date with its payment terms.'
    __tablename__ = 'booking'
    __table_args__ = (
        CheckConstraint('"status" IS NULL OR "status" IN (\'pending_deposit\', \'confirmed\', \'paid_in_full\', \'cancelled\')', name='ck_booking_0'),
        CheckConstraint('"agreed_price" IS NULL OR "agreed_price" >= 0', name='ck_booking_1'),
        CheckConstraint('"deposit_amount" IS NULL OR "deposit_amount" >= 0', name='ck_booking_2'),
        CheckConstraint('"amount_paid" IS NULL OR "amount_paid" >= 0', name='ck_booking_3'),
        CheckConstraint('"forfeited_amount" IS NULL OR "forfeited_amount" >= 0', name='ck_booking_4'),
    )
    booking_id: str = Field(primary_key=True)
    wedding_id: str = Field(foreign_key='wedding.wedding_id', nullable=False)
    vendor_id: str = Field(foreign_key='vendor.vendor_id', nullable=False)
    package_id: str = Field(foreign_key='vendor_package.package_id', nullable=False)
    service_date: date = Field(nullable=False)
    arrival_time: Optional[NaiveDatetime] = Field(default=None)
    status: str = Field(default='pending_deposit', nullable=False)
    agreed_price: float = Field(nullable=False)
    deposit_amount: float = Field(default=0, nullable=False)
    deposit_due_date: date = Field(nullable=False)
    balance_due_date: date = Field(nullable=False)
    amount_paid: float = Field(default=0, nullable=False)
    contract_signed: bool = Field(default=False, nullable=False)
    contract_signed_at: Optional[NaiveDatetime] = Field(default=None)
    notes: Optional[str] = Field(default=None)
    booked_at: NaiveDatetime = Field(nullable=False)
    cancelled_at: Optional[NaiveDatetime] = Field(default=None)
    cancellation_reason: Optional[str] = Field(default=None)
    forfeited_amount: float = Field(default=0, nullable=False)


class Payment(Base, table=True):
    'A payment made to a vendor on a booking.'
    __tablename__ = 'payment'
    __table_args__ = (
        CheckConstraint('"amount" IS NULL OR "amount" >= 0.01', name='ck_payment_0'),
        CheckConstraint('"method" IS NULL OR "method" IN (\'card\', \'bank_transfer\', \'check\', \'cash\', \'other\')', name='ck_payment_1'),
    )
    payment_id: str = Field(primary_key=True)
    booking_id: str = Field(foreign_key='booking.booking_id', nullable=False)
    amount: float = Field(nullable=False)
    method: str = Field(nullable=False)
    paid_on: date = Field(nullable=False)
    note: Optional[str] = Field(default=None)
    expense_id: Optional[str] = Field(default=None, foreign_key='expense.expense_id', description='Expense logged with the payment, if any.')
    created_at: NaiveDatetime = Field(nullable=False)


class BudgetCategory(Base, table=True):
    'A budget category of a wedding with its allocation.'
    __tablename__ = 'budget_category'
    __table_args__ = (
        CheckConstraint('"name" IS NULL OR length("name") <= 100', name='ck_budget_category_0'),
        CheckConstraint('"allocated_amount" IS NULL OR "allocated_amount" >= 0', name='ck_budget_category_1'),
    )
    category_id: str = Field(primary_key=True)
    wedding_id: str = Field(foreign_key='wedding.wedding_id', nullable=False)
    name: str = Field(max_length=100, nullable=False, description='Unique within the wedding.')
    allocated_amount: float = Field(default=0, nullable=False)
    notes: Optional[str] = Field(default=None)
    created_at: NaiveDatetime = Field(nullable=False)


class Expense(Base, table=True):
    'Money spent in a budget category, optionally linked to a booking.'
    __tablename__ = 'expense'
    __table_args__ = (
        CheckConstraint('"description" IS NULL OR length("description") <= 200', name='ck_expense_0'),
        CheckConstraint('"amount" IS NULL OR "amount" >= 0.01', name='ck_expense_1'),
        CheckConstraint('"payee" IS NULL OR length("payee") <= 150', name='ck_expense_2'),
    )
    expense_id: str = Field(primary_key=True)
    wedding_id: str = Field(foreign_key='wedding.wedding_id', nullable=False)
    category_id: str = Field(foreign_key='budget_category.category_id', nullable=False)
    description: str = Field(max_length=200, nullable=False)
    amount: float = Field(nullable=False)
    payee: Optional[str] = Field(default=None, max_length=150)
    booking_id: Optional[str] = Field(default=None, foreign_key='booking.booking_id')
    expense_date: date = Field(nullable=False)
    notes: Optional[str] = Field(default=None)
    created_at: NaiveDatetime = Field(nullable=False)


class Task(Base, table=True):
    'A checklist task of a wedding.'
    __tablename__ = 'task'
    __table_args__ = (
        CheckConstraint('"title" IS NULL OR length("title") <= 200', name='ck_task_0'),
        CheckConstraint('"priority" IS NULL OR "priority" IN (\'low\', \'medium\', \'high\')', name='ck_task_1'),
        CheckConstraint('"assignee" IS NULL OR length("assignee") <= 120', name='ck_task_2'),
        CheckConstraint('"status" IS NULL OR "status" IN (\'open\', \'done\')', name='ck_task_3'),
    )
    task_id: str = Field(primary_key=True)
    wedding_id: str = Field(foreign_key='wedding.wedding_id', nullable=False)
    title: str = Field(max_length=200, nullable=False)
    due_date: date = Field(nullable=False)
    priority: str = Field(default='medium', nullable=False)
    assignee: Optional[str] = Field(default=None, max_length=120)
    booking_id: Optional[str] = Field(default=None, foreign_key='booking.booking_id')
    notes: Optional[str] = Field(default=None)
    status: str = Field(default='open', nullable=False)
    created_at: NaiveDatetime = Field(nullable=False)
    completed_at: Optional[NaiveDatetime] = Field(default=None)


class Invitation(Base, table=True):
    'A save-the-date or invitation sent to a guest.'
    __tablename__ = 'invitation'
    __table_args__ = (
        CheckConstraint('"kind" IS NULL OR "kind" IN (\'save_the_date\', \'invitation\')', name='ck_invitation_0'),
        CheckConstraint('"channel" IS NULL OR "channel" IN (\'email\', \'post\')', name='ck_invitation_1'),
    )
    invitation_id: str = Field(primary_key=True)
    wedding_id: str = Field(foreign_key='wedding.wedding_id', nullable=False)
    guest_id: str = Field(foreign_key='guest.guest_id', nullable=False)
    kind: str = Field(nullable=False)
    channel: str = Field(nullable=False)
    sent_at: NaiveDatetime = Field(nullable=False)
    is_resend: bool = Field(default=False, nullable=False)


class RegistryItem(Base, table=True):
    "An item on a wedding's gift registry."
    __tablename__ = 'registry_item'
    __table_args__ = (
        CheckConstraint('"name" IS NULL OR length("name") <= 200', name='ck_registry_item_0'),
        CheckConstraint('"store" IS NULL OR length("store") <= 120', name='ck_registry_item_1'),
        CheckConstraint('"price" IS NULL OR "price" >= 0.01', name='ck_registry_item_2'),
        CheckConstraint('"quantity_wanted" IS NULL OR "quantity_wanted" >= 1', name='ck_registry_item_3'),
        CheckConstraint('"quantity_wanted" IS NULL OR "quantity_wanted" <= 100', name='ck_registry_item_4'),
        CheckConstraint('"quantity_received" IS NULL OR "quantity_received" >= 0', name='ck_registry_item_5'),
        CheckConstraint('"url" IS NULL OR length("url") <= 500', name='ck_registry_item_6'),
    )
    registry_item_id: str = Field(primary_key=True)
    wedding_id: str = Field(foreign_key='wedding.wedding_id', nullable=False)
    name: str = Field(max_length=200, nullable=False)
    store: str = Field(max_length=120, nullable=False)
    price: float = Field(nullable=False)
    quantity_wanted: int = Field(default=1, nullable=False)
    quantity_received: int = Field(default=0, nullable=False)
    url: Optional[str] = Field(default=None, max_length=500)
    notes: Optional[str] = Field(default=None)
    created_at: NaiveDatetime = Field(nullable=False)


class Gift(Base, table=True):
    'A gift received for a wedding and its thank-you state.'
    __tablename__ = 'gift'
    __table_args__ = (
        CheckConstraint('"giver_name" IS NULL OR length("giver_name") <= 160', name='ck_gift_0'),
        CheckConstraint('"gift_type" IS NULL OR "gift_type" IN (\'item\', \'cash\', \'check\', \'gift_card\', \'experience\')', name='ck_gift_1'),
        CheckConstraint('"description" IS NULL OR length("description") <= 200', name='ck_gift_2'),
        CheckConstraint('"value" IS NULL OR "value" >= 0', name='ck_gift_3'),
        CheckConstraint('"quantity" IS NULL OR "quantity" >= 1', name='ck_gift_4'),
        CheckConstraint('"thank_you_method" IS NULL OR "thank_you_method" IN (\'card\', \'email\', \'in_person\', \'phone\')', name='ck_gift_5'),
    )
    gift_id: str = Field(primary_key=True)
    wedding_id: str = Field(foreign_key='wedding.wedding_id', nullable=False)
    guest_id: Optional[str] = Field(default=None, foreign_key='guest.guest_id', description='Giving guest; null for other givers or removed guests.')
    giver_name: str = Field(max_length=160, nullable=False)
    gift_type: str = Field(default='item', nullable=False)
    description: str = Field(max_length=200, nullable=False)
    value: Optional[float] = Field(default=None)
    registry_item_id: Optional[str] = Field(default=None, foreign_key='registry_item.registry_item_id')
    quantity: int = Field(default=1, nullable=False)
    received_date: date = Field(nullable=False)
    thank_you_sent: bool = Field(default=False, nullable=False)
    thank_you_sent_on: Optional[date] = Field(default=None)
    thank_you_method: Optional[str] = Field(default=None)
    thank_you_note: Optional[str] = Field(default=None)
    created_at: NaiveDatetime = Field(nullable=False)


MODELS: dict[str, type[Base]] = {'wedding': Wedding, 'guest': Guest, 'event': Event, 'rsvp': Rsvp, 'menu_option': MenuOption, 'reception_table': ReceptionTable, 'timeline_item': TimelineItem, 'vendor': Vendor, 'vendor_package': VendorPackage, 'booking': Booking, 'payment': Payment, 'budget_category': BudgetCategory, 'expense': Expense, 'task': Task, 'invitation': Invitation, 'registry_item': RegistryItem, 'gift': Gift}
TABLE_ORDER: list[str] = ['wedding', 'vendor', 'event', 'menu_option', 'reception_table', 'vendor_package', 'budget_category', 'registry_item', 'guest', 'booking', 'rsvp', 'timeline_item', 'expense', 'task', 'invitation', 'gift', 'payment']
PRIMARY_KEY: dict[str, str] = {'wedding': 'wedding_id', 'guest': 'guest_id', 'event': 'event_id', 'rsvp': 'rsvp_id', 'menu_option': 'menu_option_id', 'reception_table': 'table_id', 'timeline_item': 'timeline_item_id', 'vendor': 'vendor_id', 'vendor_package': 'package_id', 'booking': 'booking_id', 'payment': 'payment_id', 'budget_category': 'category_id', 'expense': 'expense_id', 'task': 'task_id', 'invitation': 'invitation_id', 'registry_item': 'registry_item_id', 'gift': 'gift_id'}
ID_PREFIX: dict[str, str] = {'wedding': 'WED', 'guest': 'GST', 'event': 'EVT', 'rsvp': 'RSV', 'menu_option': 'MNU', 'reception_table': 'TBL', 'timeline_item': 'TLI', 'vendor': 'VEN', 'vendor_package': 'PKG', 'booking': 'BKG', 'payment': 'PAY', 'budget_category': 'CAT', 'expense': 'EXP', 'task': 'TSK', 'invitation': 'INV', 'registry_item': 'REG', 'gift': 'GFT'}
COLUMNS: dict[str, list[str]] = {'wedding': ['wedding_id', 'partner_a_name', 'partner_b_name', 'wedding_date', 'city', 'target_guest_count', 'total_budget', 'rsvp_deadline', 'status', 'created_at'], 'guest': ['guest_id', 'wedding_id', 'first_name', 'last_name', 'email', 'phone', 'mailing_address', 'side', 'group', 'household', 'plus_one_allowed', 'plus_one_name', 'plus_one_attending', 'dietary_restrictions', 'dietary_notes', 'rsvp_status', 'menu_option_id', 'table_id', 'created_at'], 'event': ['event_id', 'wedding_id', 'event_type', 'name', 'start_time', 'end_time', 'location', 'address', 'dress_code', 'status', 'cancelled_at', 'cancellation_reason', 'created_at'], 'rsvp': ['rsvp_id', 'guest_id', 'event_id', 'response', 'bringing_plus_one', 'responded_at', 'late'], 'menu_option': ['menu_option_id', 'wedding_id', 'name', 'course', 'dietary_tags', 'description', 'price_per_plate', 'created_at'], 'reception_table': ['table_id', 'wedding_id', 'name', 'shape', 'capacity', 'notes', 'created_at'], 'timeline_item': ['timeline_item_id', 'event_id', 'title', 'start_time', 'end_time', 'duration_minutes', 'responsible_party', 'booking_id', 'notes', 'created_at'], 'vendor': ['vendor_id', 'name', 'category', 'city', 'description', 'contact_email', 'phone', 'rating', 'review_count', 'deposit_percent', 'free_cancellation_days', 'late_cancellation_days', 'late_cancellation_fee_percent', 'cancellation_policy_summary'], 'vendor_package': ['package_id', 'vendor_id', 'name', 'price', 'description', 'max_guests'], 'booking': ['booking_id', 'wedding_id', 'vendor_id', 'package_id', 'service_date', 'arrival_time', 'status', 'agreed_price', 'deposit_amount', 'deposit_due_date', 'balance_due_date', 'amount_paid', 'contract_signed', 'contract_signed_at', 'notes', 'booked_at', 'cancelled_at', 'cancellation_reason', 'forfeited_amount'], 'payment': ['payment_id', 'booking_id', 'amount', 'method', 'paid_on', 'note', 'expense_id', 'created_at'], 'budget_category': ['category_id', 'wedding_id', 'name', 'allocated_amount', 'notes', 'created_at'], 'expense': ['expense_id', 'wedding_id', 'category_id', 'description', 'amount', 'payee', 'booking_id', 'expense_date', 'notes', 'created_at'], 'task': ['task_id', 'wedding_id', 'title', 'due_date', 'priority', 'assignee', 'booking_id', 'notes', 'status', 'created_at', 'completed_at'], 'invitation': ['invitation_id', 'wedding_id', 'guest_id', 'kind', 'channel', 'sent_at', 'is_resend'], 'registry_item': ['registry_item_id', 'wedding_id', 'name', 'store', 'price', 'quantity_wanted', 'quantity_received', 'url', 'notes', 'created_at'], 'gift': ['gift_id', 'wedding_id', 'guest_id', 'giver_name', 'gift_type', 'description', 'value', 'registry_item_id', 'quantity', 'received_date', 'thank_you_sent', 'thank_you_sent_on', 'thank_you_method', 'thank_you_note', 'created_at']}
COLUMN_TYPES: dict[str, dict[str, str]] = {'wedding': {'wedding_id': 'string', 'partner_a_name': 'string', 'partner_b_name': 'string', 'wedding_date': 'date', 'city': 'string', 'target_guest_count': 'integer', 'total_budget': 'number', 'rsvp_deadline': 'date', 'status': 'string', 'created_at': 'datetime'}, 'guest': {'guest_id': 'string', 'wedding_id': 'string', 'first_name': 'string', 'last_name': 'string', 'email': 'string', 'phone': 'string', 'mailing_address': 'text', 'side': 'string', 'group': 'string', 'household': 'string', 'plus_one_allowed': 'boolean', 'plus_one_name': 'string', 'plus_one_attending': 'boolean', 'dietary_restrictions': 'text', 'dietary_notes': 'text', 'rsvp_status': 'string', 'menu_option_id': 'string', 'table_id': 'string', 'created_at': 'datetime'}, 'event': {'event_id': 'string', 'wedding_id': 'string', 'event_type': 'string', 'name': 'string', 'start_time': 'datetime', 'end_time': 'datetime', 'location': 'string', 'address': 'text', 'dress_code': 'string', 'status': 'string', 'cancelled_at': 'datetime', 'cancellation_reason': 'text', 'created_at': 'datetime'}, 'rsvp': {'rsvp_id': 'string', 'guest_id': 'string', 'event_id': 'string', 'response': 'string', 'bringing_plus_one': 'boolean', 'responded_at': 'datetime', 'late': 'boolean'}, 'menu_option': {'menu_option_id': 'string', 'wedding_id': 'string', 'name': 'string', 'course': 'string', 'dietary_tags': 'text', 'description': 'text', 'price_per_plate': 'number', 'created_at': 'datetime'}, 'reception_table': {'table_id': 'string', 'wedding_id': 'string', 'name': 'string', 'shape': 'string', 'capacity': 'integer', 'notes': 'text', 'created_at': 'datetime'}, 'timeline_item': {'timeline_item_id': 'string', 'event_id': 'string', 'title': 'string', 'start_time': 'datetime', 'end_time': 'datetime', 'duration_minutes': 'integer', 'responsible_party': 'string', 'booking_id': 'string', 'notes': 'text', 'created_at': 'datetime'}, 'vendor': {'vendor_id': 'string', 'name': 'string', 'category': 'string', 'city': 'string', 'description': 'text', 'contact_email': 'string', 'phone': 'string', 'rating': 'number', 'review_count': 'integer', 'deposit_percent': 'number', 'free_cancellation_days': 'integer', 'late_cancellation_days': 'integer', 'late_cancellation_fee_percent': 'number', 'cancellation_policy_summary': 'text'}, 'vendor_package': {'package_id': 'string', 'vendor_id': 'string', 'name': 'string', 'price': 'number', 'description': 'text', 'max_guests': 'integer'}, 'booking': {'booking_id': 'string', 'wedding_id': 'string', 'vendor_id': 'string', 'package_id': 'string', 'service_date': 'date', 'arrival_time': 'datetime', 'status': 'string', 'agreed_price': 'number', 'deposit_amount': 'number', 'deposit_due_date': 'date', 'balance_due_date': 'date', 'amount_paid': 'number', 'contract_signed': 'boolean', 'contract_signed_at': 'datetime', 'notes': 'text', 'booked_at': 'datetime', 'cancelled_at': 'datetime', 'cancellation_reason': 'text', 'forfeited_amount': 'number'}, 'payment': {'payment_id': 'string', 'booking_id': 'string', 'amount': 'number', 'method': 'string', 'paid_on': 'date', 'note': 'text', 'expense_id': 'string', 'created_at': 'datetime'}, 'budget_category': {'category_id': 'string', 'wedding_id': 'string', 'name': 'string', 'allocated_amount': 'number', 'notes': 'text', 'created_at': 'datetime'}, 'expense': {'expense_id': 'string', 'wedding_id': 'string', 'category_id': 'string', 'description': 'string', 'amount': 'number', 'payee': 'string', 'booking_id': 'string', 'expense_date': 'date', 'notes': 'text', 'created_at': 'datetime'}, 'task': {'task_id': 'string', 'wedding_id': 'string', 'title': 'string', 'due_date': 'date', 'priority': 'string', 'assignee': 'string', 'booking_id': 'string', 'notes': 'text', 'status': 'string', 'created_at': 'datetime', 'completed_at': 'datetime'}, 'invitation': {'invitation_id': 'string', 'wedding_id': 'string', 'guest_id': 'string', 'kind': 'string', 'channel': 'string', 'sent_at': 'datetime', 'is_resend': 'boolean'}, 'registry_item': {'registry_item_id': 'string', 'wedding_id': 'string', 'name': 'string', 'store': 'string', 'price': 'number', 'quantity_wanted': 'integer', 'quantity_received': 'integer', 'url': 'string', 'notes': 'text', 'created_at': 'datetime'}, 'gift': {'gift_id': 'string', 'wedding_id': 'string', 'guest_id': 'string', 'giver_name': 'string', 'gift_type': 'string', 'description': 'string', 'value': 'number', 'registry_item_id': 'string', 'quantity': 'integer', 'received_date': 'date', 'thank_you_sent': 'boolean', 'thank_you_sent_on': 'date', 'thank_you_method': 'string', 'thank_you_note': 'text', 'created_at': 'datetime'}}


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
