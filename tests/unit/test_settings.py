"""Settings.from_env: defaults, table names, and the checks that make a misconfigured cold start fail loudly."""

from __future__ import annotations

import pytest

from skillcore.settings import TABLES, Settings


def test_defaults_and_table_names() -> None:
    settings = Settings.from_env({"AWS_REGION": "eu-west-1", "SKILLS_TABLE_JOBS": "stack-Jobs-1A2B"})
    assert (settings.region, settings.model, settings.local, settings.dynamodb_endpoint) == ("eu-west-1", "offline", False, None)
    assert (settings.bedrock_max_tokens, settings.history_messages, settings.scan_batch_size) == (512, 20, 20)
    assert settings.tables.jobs == "stack-Jobs-1A2B"
    assert all(getattr(settings.tables, name) == f"skillcore-{name}" for name in TABLES if name != "jobs")


def test_values_from_the_environment() -> None:
    settings = Settings.from_env({
        "AWS_DEFAULT_REGION": "ap-east-1", "SKILLS_MODEL": "bedrock", "SKILLS_BEDROCK_MAX_TOKENS": "16",
        "SKILLS_HISTORY_MESSAGES": "0", "SKILLS_SCAN_BATCH_SIZE": "100", "SKILLS_LOCAL": "1",
        "SKILLS_DYNAMODB_ENDPOINT": "http://127.0.0.1:8000", "SKILLS_BEDROCK_REGION": "us-west-2",
    })
    assert (settings.region, settings.model, settings.local) == ("ap-east-1", "bedrock", True)
    assert (settings.bedrock_max_tokens, settings.history_messages, settings.scan_batch_size) == (16, 0, 100)
    assert (settings.dynamodb_endpoint, settings.bedrock_region) == ("http://127.0.0.1:8000", "us-west-2")


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("SKILLS_MODEL", "gpt", "SKILLS_MODEL must be one of offline, bedrock"),
        ("SKILLS_BEDROCK_MAX_TOKENS", "15", "SKILLS_BEDROCK_MAX_TOKENS must be an integer from 16 to 8192"),
        ("SKILLS_BEDROCK_MAX_TOKENS", "8193", "from 16 to 8192"),
        ("SKILLS_HISTORY_MESSAGES", "-1", "SKILLS_HISTORY_MESSAGES must be an integer from 0 to 100"),
        ("SKILLS_SCAN_BATCH_SIZE", "0", "SKILLS_SCAN_BATCH_SIZE must be an integer from 1 to 100"),
        ("SKILLS_SCAN_BATCH_SIZE", "ten", "SKILLS_SCAN_BATCH_SIZE must be an integer, not 'ten'"),
    ],
)
def test_bad_values_name_the_variable(variable: str, value: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Settings.from_env({variable: value})


def test_settings_are_immutable() -> None:
    settings = Settings.from_env({})
    with pytest.raises(AttributeError):
        settings.model = "bedrock"  # type: ignore[misc]
