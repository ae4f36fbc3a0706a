"""`PUT /rpc/me {"initialTimezone"}` over real HTTP, the Skills page's first call of a session: it creates a new
user's profile in that zone (the default daily memory job too, in the same zone), and answers an existing profile
as it is, without writing it; `timezone` still sets the zone, and a bad zone is refused naming its field."""

from __future__ import annotations

from tests.local_stack import Caller, StackClient


def test_it_creates_a_new_profile_in_the_initial_zone(stack: StackClient) -> None:
    user = Caller(stack, "first")
    assert user.call("GET", "/rpc/me")[0] == 404
    profile = user.ok("PUT", "/rpc/me", {"initialTimezone": "Europe/Paris"})
    assert profile["timezone"] == "Europe/Paris" and profile["limits"]
    (job,) = user.ok("GET", "/rpc/automation-jobs")["items"]
    assert job["timezone"] == "Europe/Paris"
    assert user.ok("GET", "/rpc/me")["timezone"] == "Europe/Paris"


def test_it_answers_an_existing_profile_unchanged(stack: StackClient) -> None:
    user = Caller(stack, "first")
    made = user.ok("PUT", "/rpc/me", {"timezone": "America/New_York", "displayName": "Ann"})
    again = user.ok("PUT", "/rpc/me", {"initialTimezone": "Europe/Paris"})
    for field in ("timezone", "displayName", "createdAt", "updatedAt"):
        assert again[field] == made[field], field
    assert user.ok("PUT", "/rpc/me", {})["updatedAt"] == made["updatedAt"]
    assert len(user.ok("GET", "/rpc/automation-jobs")["items"]) == 1


def test_timezone_wins_and_a_bad_zone_names_its_field(stack: StackClient) -> None:
    user = Caller(stack, "first")
    assert user.ok("PUT", "/rpc/me", {"timezone": "Asia/Tokyo", "initialTimezone": "Europe/Paris"})["timezone"] == "Asia/Tokyo"
    status, body = user.call("PUT", "/rpc/me", {"initialTimezone": "Mars/Olympus"})
    assert status == 422 and body["error"]["code"] == "invalid_timezone", body
    assert "initialTimezone" in str(body["error"]["details"])
    later = user.ok("PUT", "/rpc/me", {"timezone": "Europe/Berlin"})
    assert later["timezone"] == "Europe/Berlin"
