"""Automation jobs: schedules in the user's time zone, the default memory job, runs through the executor."""
