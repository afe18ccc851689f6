"""Semantic parameter matching: the pure matcher, and precision/recall on held-out tool sets.

The held-out domains are not part of graph/calibration.json; like it, every field carries a
hand-assigned concept and a pair is a true dependency when the concepts are equal.
"""

from __future__ import annotations

import numpy as np
import pytest

from domains.spec import DomainSpec
from graph import match
from graph.build import build_graph, load_graph, write_graph
from graph.calibrate import labelled_domain, measure, scored_pairs
from llm import LLM, ScriptedBackend, Transcript


def P(name, type, concept, description, required=True, **extra):
    return {"name": name, "type": type, "description": description, "concept": concept,
            **({} if required else {"required": False}), **extra}


def Out(name, type, concept, description, fields=None):
    return {"name": name, "type": type, "description": description, "concept": concept,
            **({"fields": fields} if fields else {})}


def T(name, description, parameters, output, mutates=False):
    return {"name": name, "description": description, "parameters": parameters, "output": output, "mutates": mutates}


EVENT_TICKETING = {"name": "event_ticketing", "tools": [
    T("search_events", "Search concerts and shows in a city.", [
        P("city", "string", "city", "City where the event takes place"),
        P("date_from", "string", "date", "Earliest event date", format="YYYY-MM-DD", required=False),
        P("genre", "string", "event.genre", "Music genre or show type", required=False)],
      [Out("events", "array", None, "Matching events", [
          Out("event_id", "string", "event.id", "Identifier of the event"),
          Out("title", "string", "event.title", "Event title"),
          Out("venue_id", "string", "venue.id", "Venue hosting the event"),
          Out("date", "string", "date", "Event date")])]),
    T("get_event", "Get an event with its ticket categories.", [
        P("event_id", "string", "event.id", "Event identifier")],
      [Out("event_id", "string", "event.id", "Event identifier"),
       Out("title", "string", "event.title", "Title"),
       Out("venue_id", "string", "venue.id", "Venue of the event"),
       Out("categories", "array", None, "Ticket categories", [
           Out("category_id", "string", "category.id", "Identifier of the ticket category"),
           Out("price", "number", "ticket.price", "Price of one ticket"),
           Out("remaining", "integer", "category.remaining", "Tickets still available")])]),
    T("get_venue", "Get the address and capacity of a venue.", [
        P("venue_id", "string", "venue.id", "Venue identifier")],
      [Out("venue_id", "string", "venue.id", "Venue identifier"),
       Out("name", "string", "venue.name", "Venue name"),
       Out("city", "string", "city", "City of the venue"),
       Out("capacity", "integer", "venue.capacity", "Number of seats")]),
    T("buy_tickets", "Buy tickets of one category for a customer.", [
        P("category_id", "string", "category.id", "Ticket category to buy"),
        P("quantity", "integer", "ticket.quantity", "Number of tickets"),
        P("customer_email", "string", "customer.email", "Email the tickets are sent to", format="email")],
      [Out("order_id", "string", "order.id", "Identifier of the ticket order"),
       Out("ticket_ids", "array", "ticket.id", "Issued tickets"),
       Out("total", "number", "order.total", "Amount charged")], mutates=True),
    T("get_ticket_order", "Get a ticket order.", [
        P("order_id", "string", "order.id", "Ticket order identifier")],
      [Out("order_id", "string", "order.id", "Ticket order identifier"),
       Out("event_id", "string", "event.id", "Event the tickets are for"),
       Out("customer_email", "string", "customer.email", "Buyer's email"),
       Out("quantity", "integer", "ticket.quantity", "Number of tickets"),
       Out("status", "string", "order.status", "paid or refunded")]),
    T("refund_order", "Refund a ticket order before the event.", [
        P("order_id", "string", "order.id", "Order to refund")],
      [Out("order_id", "string", "order.id", "Refunded order"),
       Out("refund_amount", "number", "refund.amount", "Amount returned")], mutates=True),
    T("transfer_ticket", "Transfer a ticket to another person.", [
        P("ticket_id", "string", "ticket.id", "Ticket to transfer"),
        P("recipient_email", "string", "customer.email", "Email of the new holder", format="email")],
      [Out("ticket_id", "string", "ticket.id", "Transferred ticket"),
       Out("holder_email", "string", "customer.email", "New holder")], mutates=True),
    T("list_customer_orders", "List the ticket orders made with an email address.", [
        P("customer_email", "string", "customer.email", "Buyer's email", format="email")],
      [Out("orders", "array", None, "Orders", [
          Out("order_id", "string", "order.id", "Order identifier"),
          Out("event_id", "string", "event.id", "Event"),
          Out("status", "string", "order.status", "Order status")])]),
]}

CAR_RENTAL = {"name": "car_rental", "tools": [
    T("find_cars", "Find cars available at a pickup location for a period.", [
        P("location_id", "string", "location.id", "Rental office where the car is picked up"),
        P("pickup_date", "string", "date.pickup", "Pickup date", format="YYYY-MM-DD"),
        P("return_date", "string", "date.return", "Return date", format="YYYY-MM-DD"),
        P("car_class", "string", "car.class", "Vehicle class", enum=["economy", "compact", "suv", "van"], required=False)],
      [Out("cars", "array", None, "Available cars", [
          Out("car_id", "string", "car.id", "Identifier of the car"),
          Out("model", "string", "car.model", "Make and model"),
          Out("daily_rate", "number", "car.rate", "Price per day")])]),
    T("list_locations", "List rental offices in a city.", [
        P("city", "string", "city", "City name")],
      [Out("locations", "array", None, "Rental offices", [
          Out("location_id", "string", "location.id", "Identifier of the office"),
          Out("address", "string", "location.address", "Street address"),
          Out("city", "string", "city", "City")])]),
    T("create_reservation", "Reserve a car for a driver.", [
        P("car_id", "string", "car.id", "Car to reserve"),
        P("driver_id", "string", "driver.id", "Registered driver"),
        P("pickup_date", "string", "date.pickup", "Pickup date", format="YYYY-MM-DD"),
        P("return_date", "string", "date.return", "Return date", format="YYYY-MM-DD"),
        P("insurance", "boolean", "reservation.insurance", "Add full insurance", required=False, default=False)],
      [Out("reservation_id", "string", "reservation.id", "Identifier of the reservation"),
       Out("total_price", "number", "reservation.total", "Price for the whole period")], mutates=True),
    T("register_driver", "Register a driver with their licence.", [
        P("full_name", "string", "driver.name", "Driver's full name"),
        P("licence_number", "string", "driver.licence", "Driving licence number")],
      [Out("driver_id", "string", "driver.id", "Identifier of the driver")], mutates=True),
    T("get_reservation", "Get a reservation.", [
        P("reservation_id", "string", "reservation.id", "Reservation identifier")],
      [Out("reservation_id", "string", "reservation.id", "Reservation identifier"),
       Out("car_id", "string", "car.id", "Reserved car"),
       Out("driver_id", "string", "driver.id", "Driver"),
       Out("pickup_date", "string", "date.pickup", "Pickup date"),
       Out("return_date", "string", "date.return", "Return date"),
       Out("status", "string", "reservation.status", "booked, active, returned or cancelled")]),
    T("extend_reservation", "Move the return date of a reservation later.", [
        P("reservation_id", "string", "reservation.id", "Reservation to extend"),
        P("new_return_date", "string", "date.return", "New return date", format="YYYY-MM-DD")],
      [Out("reservation_id", "string", "reservation.id", "Extended reservation"),
       Out("total_price", "number", "reservation.total", "New total price")], mutates=True),
    T("cancel_reservation", "Cancel a reservation that has not started.", [
        P("reservation_id", "string", "reservation.id", "Reservation to cancel")],
      [Out("reservation_id", "string", "reservation.id", "Cancelled reservation"),
       Out("status", "string", "reservation.status", "cancelled")], mutates=True),
    T("report_damage", "Report damage found on a rented car.", [
        P("reservation_id", "string", "reservation.id", "Reservation during which it happened"),
        P("description", "string", "damage.description", "What is damaged")],
      [Out("claim_id", "string", "claim.id", "Identifier of the damage claim")], mutates=True),
]}

HELD_OUT = [EVENT_TICKETING, CAR_RENTAL]


def test_matcher_keeps_compatible_cross_tool_pairs_above_threshold():
    outs = [match.Slot("a", "items.job_id", "string", ""), match.Slot("a", "count", "integer", ""),
            match.Slot("b", "job_id", "string", "")]
    ins = [match.Slot("b", "job_id", "string", ""), match.Slot("c", "job_ids", "array", "", items="string"),
           match.Slot("c", "limit", "number", ""), match.Slot("a", "job_id", "string", "")]
    # Vectors laid out as `texts` does: names first, then full texts; identical halves for clarity.
    unit = np.eye(3, dtype=np.float32)
    out_half = np.stack([unit[0], unit[1], unit[0]])
    in_half = np.stack([unit[0], unit[0], unit[1], unit[0]])
    found = match.match(outs, ins, np.vstack([out_half, out_half]), np.vstack([in_half, in_half]), 0.9)
    pairs = [(m.producer, m.output, m.consumer, m.parameter, m.score) for m in found]
    assert pairs == [
        ("a", "count", "c", "limit", 1.0),            # integer feeds number
        ("a", "items.job_id", "b", "job_id", 1.0),    # nested field of an array of objects
        ("a", "items.job_id", "c", "job_ids", 1.0),   # elements collected into an array parameter
        ("b", "job_id", "a", "job_id", 1.0),          # the reverse direction is its own pair
        ("b", "job_id", "c", "job_ids", 1.0),
    ]  # never a → a, and nothing below the threshold
    assert match.match(outs, ins, np.vstack([out_half, out_half]), np.vstack([in_half, in_half]), 1.01) == []


def test_outputs_flatten_nested_fields():
    tools, truth = labelled_domain(EVENT_TICKETING)
    paths = [s.path for s in match.outputs(tools[1])]
    assert paths == ["event_id", "title", "venue_id", "categories", "categories.category_id",
                     "categories.price", "categories.remaining"]
    assert ("get_event", "categories.category_id", "buy_tickets", "category_id") in truth


@pytest.mark.slow
def test_held_out_domains_match_well_and_build_deterministically(tmp_path):
    """One test so that the embedding model loads once, even when tests are spread over workers."""
    scores, truth = scored_pairs(HELD_OUT)
    result = measure(scores, truth, match.THRESHOLDS["all-MiniLM-L6-v2"])
    assert truth.sum() >= 40
    assert result["precision"] >= 0.9, result
    assert result["recall"] >= 0.8, result

    tools, _ = labelled_domain(CAR_RENTAL)
    spec = DomainSpec(
        name="car_rental", description="Rent cars.", tools=tools,
        db={"tables": [{"name": "cars", "id_prefix": "CAR",
                        "columns": [{"name": "car_id", "type": "string", "primary_key": True}]}]},
        tool_tables={t.name: ["cars"] for t in tools})
    answer = {"add": [{"producer": "create_reservation", "consumer": "report_damage", "dimension": "condition",
                       "reason": "damage is reported on an existing reservation"}], "prune": []}
    names = [t.name for t in tools]
    graphs = []
    for run in range(2):
        llm = LLM(ScriptedBackend({"graph/-/0": answer}), Transcript(tmp_path / f"t{run}.jsonl"))
        graphs.append(build_graph(spec, names, llm))
        numbers = write_graph(graphs[-1], tmp_path / str(run))
    for name in ("graph.json", "graph.svg", "graph.md"):
        assert (tmp_path / "0" / name).read_bytes() == (tmp_path / "1" / name).read_bytes()
    assert numbers["tools"] == len(names) and numbers["isolated_tools"] == []
    assert numbers["edges"]["llm"] == 0  # the condition joins an existing matched edge
    assert numbers["edges"]["embedding"] == numbers["edges"]["total"]
    loaded = load_graph(tmp_path / "0" / "graph.json")
    edge = loaded.edges["create_reservation", "report_damage"]
    assert edge["dimensions"] == ["data_flow", "condition"]
    assert "existing reservation" in edge["reason"]
