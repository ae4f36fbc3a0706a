"""The chat turn's request model."""

from pydantic import Field, field_validator

from skillcore.shapes import NOT_BLANK, Id, Strict, not_blank

MESSAGE_TEXT_MAX = 4000


class PostMessage(Strict):
    client_message_id: str = Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")
    text: str = Field(min_length=1, max_length=MESSAGE_TEXT_MAX, json_schema_extra=NOT_BLANK)
    agent_id: Id | None = None

    _text = field_validator("text")(not_blank)
