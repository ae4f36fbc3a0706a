"""Request models of the package, release, publisher and catalog routes (docs/packages.md)."""

from typing import Annotated, Literal

from pydantic import Field, StringConstraints, field_validator

from skillcore.packages.limits import MAX_PACKAGE_BYTES, MAX_SIGNATURE_BYTES
from skillcore.packages.models import TrustLevel
from skillcore.shapes import NOT_BLANK, Strict, not_blank

# base64 of a package at its largest
PACKAGE_B64_MAX = 4 * ((MAX_PACKAGE_BYTES + 2) // 3)
# A zip begins with a local file header, `PK\x03\x04`: base64 `UEsDB`.
Base64 = Annotated[str, StringConstraints(min_length=8, max_length=PACKAGE_B64_MAX,
                                          pattern=r"^UEsDB[A-Za-z0-9+/]*={0,2}$")]
PublisherId = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]{1,38}[a-z0-9]$")]  # as skillcore.json's
PublicKey = Annotated[str, StringConstraints(min_length=40, max_length=400)]
REASON_MAX = 500


class ImportPackage(Strict):
    package: Base64


class SubmitRelease(Strict):
    package: Base64
    # The signature file's text (`FILE.zip.sig`); without one the release is refused `signature_invalid`.
    signature: str | None = Field(default=None, max_length=MAX_SIGNATURE_BYTES)


class RegisterPublisher(Strict):
    publisher_id: PublisherId
    display_name: str = Field(min_length=1, max_length=60, json_schema_extra=NOT_BLANK)
    user_id: str = Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9@._+:-]+$")
    trust_level: Literal[TrustLevel.VERIFIED, TrustLevel.COMMUNITY]
    public_key: PublicKey

    _name = field_validator("display_name")(not_blank)


class AddPublisherKey(Strict):
    public_key: PublicKey
    revoke_others: bool = Field(default=False, strict=True)


class ReleaseDecision(Strict):
    decision: Literal["approve", "reject"]
    reason: str = Field(min_length=1, max_length=REASON_MAX, json_schema_extra=NOT_BLANK)

    _reason = field_validator("reason")(not_blank)
