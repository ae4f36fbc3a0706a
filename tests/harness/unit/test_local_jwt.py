"""The local JWT authorizer stand-in: what it accepts, every way it refuses, and how claims reach handlers."""

from __future__ import annotations

import base64
import json
import time
from typing import Any

import jwt
import pytest

from skillcore_local import token as token_cli
from skillcore_local.jwt_local import (
    AUDIENCE,
    DEFAULT_SECRET,
    ISSUER,
    TokenError,
    issue_token,
    render_claim,
    render_claims,
    verify,
)

# The contract's default secret is short on purpose (a dev default); PyJWT's warning about it is noise here.
pytestmark = pytest.mark.filterwarnings("ignore::jwt.warnings.InsecureKeyLengthWarning")

SECRET = "unit-test-secret"
NOW = int(time.time())


def bearer(token: str) -> str:
    return f"Bearer {token}"


def signed(claims: dict[str, Any], *, secret: str = SECRET, algorithm: str = "HS256") -> str:
    return jwt.encode(claims, secret, algorithm=algorithm)


def valid_claims(**changes: Any) -> dict[str, Any]:
    claims: dict[str, Any] = {
        "iss": ISSUER,
        "aud": AUDIENCE,
        "sub": "alice",
        "iat": NOW,
        "nbf": NOW,
        "exp": NOW + 600,
    }
    for name, value in changes.items():
        if value is None:
            claims.pop(name, None)
        else:
            claims[name] = value
    return claims


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


# ---------------------------------------------------------------------------------------------- accepted


def test_issued_token_verifies_with_the_claims_the_contract_names() -> None:
    claims = verify(bearer(issue_token("alice", secret=SECRET, ttl_seconds=60)), SECRET)

    assert claims["sub"] == "alice"
    assert claims["iss"] == "skillcore-local"
    assert claims["aud"] == "skillcore"
    assert claims["exp"] - claims["iat"] == 60
    assert claims["nbf"] == claims["iat"]
    assert abs(claims["iat"] - time.time()) < 5
    assert "cognito:groups" not in claims


def test_admin_token_carries_the_admin_group_as_cognito_does() -> None:
    claims = verify(bearer(issue_token("root", admin=True, secret=SECRET)), SECRET)
    assert claims["cognito:groups"] == ["admin"]


def test_a_persons_token_and_a_hosts_token_read_as_their_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    """Shaped as Cognito's: a person's ID token, a host's access token with the host scope and client."""
    from skillcore.api import http

    monkeypatch.setenv(http.HOST_CLIENT_IDS_ENV, "skillcore-local-host")
    person = verify(bearer(issue_token("alice", secret=SECRET)), SECRET)
    host = verify(bearer(issue_token("alice", kind="host", secret=SECRET)), SECRET)
    assert person["token_use"] == "id" and "scope" not in person and person["auth_time"] == person["iat"]
    assert host["token_use"] == "access" and host["scope"] == "skillcore/host"
    assert host["client_id"] == "skillcore-local-host" and host["auth_time"] == host["iat"]

    def kind(claims: dict[str, Any]) -> str:
        return http.caller_kind({"requestContext": {"authorizer": {"jwt": {"claims": render_claims(claims)}}}})

    assert (kind(person), kind(host)) == ("person", "host")
    monkeypatch.delenv(http.HOST_CLIENT_IDS_ENV)
    assert kind(host) == "host"  # the scope alone says so
    with pytest.raises(ValueError, match="kind"):
        issue_token("alice", kind="robot", secret=SECRET)


def test_the_token_command_mints_a_hosts_token(capsys: pytest.CaptureFixture[str]) -> None:
    assert token_cli.main(["alice", "--kind", "host"]) == 0
    claims = jwt.decode(capsys.readouterr().out.strip(), options={"verify_signature": False})
    assert claims["scope"] == "skillcore/host" and claims["sub"] == "alice"


def test_header_is_HS256_jwt() -> None:
    header = jwt.get_unverified_header(issue_token("alice", secret=SECRET))
    assert header == {"alg": "HS256", "typ": "JWT"}


def test_secret_defaults_to_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLS_LOCAL_JWT_SECRET", "from-env")
    token = issue_token("alice")
    assert verify(bearer(token), "from-env")["sub"] == "alice"
    assert verify(bearer(token))["sub"] == "alice"
    with pytest.raises(TokenError):
        verify(bearer(token), DEFAULT_SECRET)


def test_secret_falls_back_to_the_documented_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SKILLS_LOCAL_JWT_SECRET", raising=False)
    token = issue_token("alice")
    assert verify(bearer(token), "skillcore-local-secret")["sub"] == "alice"


def test_audience_list_containing_ours_is_accepted() -> None:
    token = signed(valid_claims(aud=["other-client", AUDIENCE]))
    assert verify(bearer(token), SECRET)["sub"] == "alice"


# ---------------------------------------------------------------------------------------------- refused


@pytest.mark.parametrize("header", [None, "", "   "])
def test_missing_header_is_refused(header: str | None) -> None:
    with pytest.raises(TokenError, match="missing"):
        verify(header, SECRET)


@pytest.mark.parametrize(
    "header",
    [
        "{token}",  # a bare token, no scheme
        "Basic {token}",
        "Token {token}",
        "Bearer",
        "Bearer    ",
        "Bearer{token}",
    ],
)
def test_header_that_is_not_bearer_is_refused(header: str) -> None:
    token = issue_token("alice", secret=SECRET)
    with pytest.raises(TokenError, match="Bearer"):
        verify(header.format(token=token), SECRET)


def test_expired_token_is_refused() -> None:
    token = issue_token("alice", secret=SECRET, now=time.time() - 3600, ttl_seconds=60)
    with pytest.raises(TokenError, match="expired"):
        verify(bearer(token), SECRET)


def test_token_expiring_this_second_is_refused() -> None:
    token = signed(valid_claims(exp=int(time.time()) - 1))
    with pytest.raises(TokenError, match="expired"):
        verify(bearer(token), SECRET)


def test_token_issued_in_the_future_is_refused() -> None:
    token = issue_token("alice", secret=SECRET, now=time.time() + 3600)
    with pytest.raises(TokenError, match="not valid yet"):
        verify(bearer(token), SECRET)


def test_token_with_nbf_in_the_future_is_refused() -> None:
    token = signed(valid_claims(nbf=NOW + 3600))
    with pytest.raises(TokenError, match="not valid yet"):
        verify(bearer(token), SECRET)


def test_token_with_iat_in_the_future_is_refused() -> None:
    token = signed(valid_claims(iat=NOW + 3600, nbf=None))
    with pytest.raises(TokenError, match="not valid yet"):
        verify(bearer(token), SECRET)


def test_token_signed_with_another_secret_is_refused() -> None:
    token = issue_token("alice", secret="someone-elses-secret")
    with pytest.raises(TokenError, match="signature"):
        verify(bearer(token), SECRET)


def test_tampered_payload_is_refused() -> None:
    header, _, signature = issue_token("alice", secret=SECRET).split(".")
    forged = b64url(json.dumps(valid_claims(sub="mallory")).encode())
    with pytest.raises(TokenError, match="signature"):
        verify(bearer(f"{header}.{forged}.{signature}"), SECRET)


@pytest.mark.parametrize("alg", ["none", "None", "NONE"])
def test_unsigned_alg_none_token_is_refused(alg: str) -> None:
    header = b64url(json.dumps({"alg": alg, "typ": "JWT"}).encode())
    payload = b64url(json.dumps(valid_claims()).encode())
    for token in (f"{header}.{payload}.", f"{header}.{payload}"):
        with pytest.raises(TokenError):
            verify(bearer(token), SECRET)


@pytest.mark.parametrize("algorithm", ["HS384", "HS512"])
def test_other_algorithms_are_refused_even_with_the_right_secret(algorithm: str) -> None:
    token = signed(valid_claims(), algorithm=algorithm)
    with pytest.raises(TokenError, match="HS256"):
        verify(bearer(token), SECRET)


def test_wrong_issuer_is_refused() -> None:
    token = signed(valid_claims(iss="https://cognito-idp.us-east-1.amazonaws.com/us-east-1_x"))
    with pytest.raises(TokenError, match="issuer"):
        verify(bearer(token), SECRET)


def test_missing_issuer_is_refused() -> None:
    with pytest.raises(TokenError):
        verify(bearer(signed(valid_claims(iss=None))), SECRET)


def test_wrong_audience_is_refused() -> None:
    token = signed(valid_claims(aud="another-app"))
    with pytest.raises(TokenError, match="audience"):
        verify(bearer(token), SECRET)


def test_missing_audience_is_refused() -> None:
    with pytest.raises(TokenError):
        verify(bearer(signed(valid_claims(aud=None))), SECRET)


def test_missing_exp_is_refused() -> None:
    token = signed(valid_claims(exp=None))
    with pytest.raises(TokenError, match="'exp'"):
        verify(bearer(token), SECRET)


def test_missing_sub_is_refused() -> None:
    token = signed(valid_claims(sub=None))
    with pytest.raises(TokenError, match="'sub'"):
        verify(bearer(token), SECRET)


@pytest.mark.parametrize("sub", ["", "   "])
def test_blank_sub_is_refused(sub: str) -> None:
    with pytest.raises(TokenError, match="sub"):
        verify(bearer(signed(valid_claims(sub=sub))), SECRET)


def test_garbage_token_is_refused() -> None:
    with pytest.raises(TokenError):
        verify("Bearer not.a.jwt", SECRET)


def test_issue_token_refuses_an_empty_user() -> None:
    with pytest.raises(ValueError):
        issue_token("", secret=SECRET)


# ---------------------------------------------------------------------------------------------- claims as AWS renders them


def test_claims_reach_the_handler_as_strings_with_arrays_bracketed() -> None:
    rendered = render_claims(
        {
            "sub": "alice",
            "exp": 1767225600,
            "cognito:groups": ["admin"],
            "email_verified": True,
            "scope": "a b",
        }
    )
    assert rendered == {
        "sub": "alice",
        "exp": "1767225600",
        "cognito:groups": "[admin]",
        "email_verified": "true",
        "scope": "a b",
    }


def test_several_groups_are_space_separated() -> None:
    assert render_claim(["admin", "ops"]) == "[admin ops]"
    assert render_claim([]) == "[]"
    assert render_claim(False) == "false"


# ---------------------------------------------------------------------------------------------- the CLI


def test_token_cli_prints_one_verifiable_token(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLS_LOCAL_JWT_SECRET", SECRET)
    assert token_cli.main(["alice", "--admin", "--ttl", "120"]) == 0
    printed = capsys.readouterr().out
    assert printed.count("\n") == 1
    claims = verify(bearer(printed.strip()), SECRET)
    assert claims["sub"] == "alice"
    assert claims["cognito:groups"] == ["admin"]
    assert claims["exp"] - claims["iat"] == 120


def test_token_cli_without_admin_has_no_groups(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLS_LOCAL_JWT_SECRET", SECRET)
    token_cli.main(["bob"])
    claims = verify(bearer(capsys.readouterr().out.strip()), SECRET)
    assert claims["sub"] == "bob"
    assert "cognito:groups" not in claims


@pytest.mark.parametrize("argv", [[], ["alice", "--ttl", "0"], ["alice", "--ttl", "x"], [" "]])
def test_token_cli_rejects_bad_arguments(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        token_cli.main(argv)
    assert exit_info.value.code == 2
