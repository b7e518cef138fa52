"""Validating an LTI launch with pylti1p3, and refusing the bad ones by name.

pylti1p3 checks the OIDC state, the nonce against this browser's session,
the issuer and audience against the registry, the id_token's signature with
the platform's published keys and its `exp`/`iat`, the deployment id and
the message's claims. quizsvc adds what the library leaves out:

- a used-nonce store in the database: a nonce works once, whoever replays
  the id_token and whatever session cookie comes with it;
- `exp`, `iat` and `nonce` are required (PyJWT checks `exp` only if present);
- `azp`, when present (and always when there are several audiences), must be
  the client id.

Every refusal is a `LaunchRefused` with a reason code; the page and the log
line are made from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import jwt
from pylti1p3.contrib.flask import (
    FlaskCookieService,
    FlaskMessageLaunch,
    FlaskOIDCLogin,
    FlaskRequest,
    FlaskSessionService,
)
from pylti1p3.deep_link import DeepLink
from pylti1p3.exception import LtiException, OIDCException
from pylti1p3.roles import (
    DesignerRole,
    StudentRole,
    TeacherRole,
    TeachingAssistantRole,
)
from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from quizsvc.lti.platforms import DatabaseToolConf
from quizsvc.models.lti import ID_LENGTH, LtiUsedNonce

CLAIM = "https://purl.imsglobal.org/spec/lti/claim/"
CONTEXT_CLAIM = CLAIM + "context"
ROLES_CLAIM = CLAIM + "roles"
DEPLOYMENT_CLAIM = CLAIM + "deployment_id"
MESSAGE_TYPE_CLAIM = CLAIM + "message_type"
CUSTOM_CLAIM = CLAIM + "custom"
LIS_CLAIM = CLAIM + "lis"
LAUNCH_PRESENTATION_CLAIM = CLAIM + "launch_presentation"
NRPS_CLAIM = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
AGS_CLAIM = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
DEEP_LINKING_CLAIM = (
    "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"
)
# A nonce is remembered a little past its token's expiry (clock skew).
NONCE_MARGIN = timedelta(minutes=5)

# Reasons a launch is refused (each has a page text in quizsvc.lti.views).
REASONS = (
    "unknown_platform",
    "wrong_audience",
    "unknown_deployment",
    "expired",
    "bad_signature",
    "platform_keys",
    "replayed",
    "nonce",
    "state",
    "bad_message",
    "role",
    "no_course",
)


class LaunchRefused(Exception):
    """A launch (or login) that quizsvc refuses; `reason` is one of REASONS."""

    def __init__(self, reason: str, detail: str, *, issuer: str | None = None):
        assert reason in REASONS, reason
        self.reason = reason
        self.detail = detail[:300]
        self.issuer = issuer
        super().__init__(f"{reason}: {self.detail}")


# --- pylti1p3's services, adapted -------------------------------------------------


class FrameCookieService(FlaskCookieService):
    """The OIDC state cookie, sent back in a cross-site POST from the platform.

    pylti1p3 marks it `SameSite=None; Secure` only when the request itself came
    over HTTPS; behind a proxy that quizsvc was not told about, or on a test
    server on localhost, it would be `Lax` and the launch would lose it.
    """

    def update_response(self, response):
        for key, data in self._cookie_data_to_set.items():
            response.set_cookie(
                key,
                data["value"],
                max_age=data["exp"],
                secure=True,
                httponly=True,
                samesite="None",
                partitioned=True,
                path="/",
            )


class NonceSessionService(FlaskSessionService):
    """The nonce kept in the browser's session, used up when it is checked.

    The launch data is not copied into the session (pylti1p3 would put the
    whole id_token body in the cookie); quizsvc stores what it needs itself.
    """

    def __init__(self, request: FlaskRequest):
        super().__init__(request)
        self.request = request

    def check_nonce(self, nonce: str) -> bool:
        return self.request.session.pop(self._get_key("nonce", nonce), None) is not None

    def save_launch_data(self, key, jwt_body) -> None:
        return None

    def set_state_valid(self, state, id_token_hash) -> None:
        return None

    def check_state_is_valid(self, state, id_token_hash) -> bool:
        # Always compare the state with its cookie.
        return False


def _request() -> FlaskRequest:
    return FlaskRequest()


def oidc_login(session: Session, instance_path: str, launch_url: str) -> Any:
    """Answer a platform's OIDC login initiation: the redirect to its auth URL."""
    request = _request()
    tool_conf = DatabaseToolConf(session, instance_path)
    login = FlaskOIDCLogin(
        request,
        tool_conf,
        session_service=NonceSessionService(request),
        cookie_service=FrameCookieService(request),
    )
    issuer = request.get_param("iss")
    try:
        return login.redirect(launch_url)
    except OIDCException as exc:
        if issuer and not tool_conf.issuer_known(issuer):
            raise LaunchRefused(
                "unknown_platform", f"login from issuer {issuer!r}", issuer=issuer
            ) from None
        raise LaunchRefused("bad_message", str(exc), issuer=issuer) from None


# --- the launch ---------------------------------------------------------------------


class CheckedLaunch(FlaskMessageLaunch):
    """pylti1p3's launch whose every failing step says which check failed."""

    def __init__(self, session: Session, instance_path: str):
        request = _request()
        self.tool_conf = DatabaseToolConf(session, instance_path)
        super().__init__(
            request,
            self.tool_conf,
            session_service=NonceSessionService(request),
            cookie_service=FrameCookieService(request),
        )
        # PyJWT checks exp and iat only when present: require them (and the nonce).
        self.set_jwt_verify_options(
            {"verify_aud": False, "require": ["exp", "iat", "nonce", "iss", "sub"]}
        )

    def _issuer_or_none(self) -> str | None:
        iss = self._jwt.get("body", {}).get("iss")
        return iss if isinstance(iss, str) else None

    def _refuse(self, reason: str, exc: Exception) -> LaunchRefused:
        return LaunchRefused(reason, str(exc), issuer=self._issuer_or_none())

    def validate_state(self):
        try:
            return super().validate_state()
        except LtiException as exc:
            raise self._refuse("state", exc) from None

    def validate_jwt_format(self):
        try:
            return super().validate_jwt_format()
        except LtiException as exc:
            raise self._refuse("bad_message", exc) from None

    def validate_nonce(self):
        try:
            return super().validate_nonce()
        except LtiException as exc:
            raise self._refuse("nonce", exc) from None

    def validate_registration(self):
        iss = self._issuer_or_none()
        if not iss or not self.tool_conf.issuer_known(iss):
            raise LaunchRefused(
                "unknown_platform", f"launch from issuer {iss!r}", issuer=iss
            )
        try:
            super().validate_registration()
        except LtiException as exc:
            raise self._refuse("wrong_audience", exc) from None
        body = self._jwt.get("body", {})
        aud = body.get("aud")
        azp = body.get("azp")
        several = isinstance(aud, list) and len(aud) > 1
        if (several or azp is not None) and azp != self.get_client_id():
            raise LaunchRefused(
                "wrong_audience",
                f"azp {azp!r} is not the client id {self.get_client_id()!r}",
                issuer=iss,
            )
        return self

    def validate_jwt_signature(self):
        try:
            return super().validate_jwt_signature()
        except LtiException as exc:
            cause = exc.__cause__
            if isinstance(cause, jwt.ExpiredSignatureError):
                raise self._refuse("expired", exc) from None
            if isinstance(cause, jwt.InvalidTokenError):
                raise self._refuse("bad_signature", exc) from None
            raise self._refuse("platform_keys", exc) from None

    def validate_deployment(self):
        try:
            return super().validate_deployment()
        except LtiException as exc:
            raise self._refuse("unknown_deployment", exc) from None

    def validate_message(self):
        try:
            return super().validate_message()
        except LtiException as exc:
            raise self._refuse("bad_message", exc) from None


def validated_claims(session: Session, instance_path: str) -> dict[str, Any]:
    """Validate this request's launch; return the id_token's claims."""
    launch = CheckedLaunch(session, instance_path)
    try:
        launch.validate()
    except LaunchRefused:
        raise
    except LtiException as exc:  # anything pylti1p3 raises outside a step
        raise LaunchRefused("bad_message", str(exc)) from None
    return dict(launch.get_launch_data())


def deep_link(registration, deployment_id: str, settings: dict[str, Any]) -> DeepLink:
    """pylti1p3's deep-linking response builder (it signs with the tool's key)."""
    return DeepLink(registration, deployment_id, settings)


def use_nonce(
    session: Session, claims: dict[str, Any], *, now: datetime | None = None
) -> None:
    """Record the launch's nonce as used; a second use is `replayed`.

    Nonces past their token's expiry are forgotten here too (such a token is
    refused by its `exp` anyway).
    """
    now = now or datetime.now(UTC)
    issuer, nonce = claims["iss"], str(claims["nonce"])
    if len(nonce) > ID_LENGTH:
        raise LaunchRefused("bad_message", "nonce too long", issuer=issuer)
    expires = datetime.fromtimestamp(int(claims["exp"]), UTC) + NONCE_MARGIN
    session.execute(delete(LtiUsedNonce).where(LtiUsedNonce.expires_at < now))
    seen = session.scalar(
        select(LtiUsedNonce.nonce).where(
            LtiUsedNonce.issuer == issuer, LtiUsedNonce.nonce == nonce
        )
    )
    if seen is not None:
        raise LaunchRefused(
            "replayed", f"nonce {nonce[:12]}… used before", issuer=issuer
        )
    try:
        with session.begin_nested():
            session.add(
                LtiUsedNonce(
                    issuer=issuer, nonce=nonce, used_at=now, expires_at=expires
                )
            )
    except IntegrityError:  # the same token, launched twice at once
        raise LaunchRefused(
            "replayed", f"nonce {nonce[:12]}… used at the same moment", issuer=issuer
        ) from None


# --- reading the claims -------------------------------------------------------------


@dataclass(frozen=True)
class LaunchFacts:
    """What quizsvc takes from a validated launch."""

    issuer: str
    client_id: str
    deployment_id: str
    sub: str
    message_type: str
    role: str | None  # "teacher", "learner", or None (observer, guest …)
    name: str | None
    email: str | None
    locale: str | None
    student_number: str | None
    context_id: str | None
    context_title: str | None
    memberships_url: str | None
    lineitems_url: str | None
    ags_scopes: tuple[str, ...]
    custom: dict[str, str]
    deep_linking: dict[str, Any] | None


def class_role(claims: dict[str, Any]) -> str | None:
    """The quizsvc class role for LTI role claims (context roles first)."""
    if any(
        role(claims).check()
        for role in (TeacherRole, TeachingAssistantRole, DesignerRole)
    ):
        return "teacher"
    if StudentRole(claims).check():
        return "learner"
    return None


def _text(value: Any, limit: int) -> str | None:
    if not isinstance(value, str):
        return None
    value = " ".join(value.split())
    return value[:limit] or None


def facts(claims: dict[str, Any]) -> LaunchFacts:
    """Read the claims quizsvc uses from a validated launch."""
    aud = claims.get("aud")
    client_id = aud[0] if isinstance(aud, list) else aud
    context = claims.get(CONTEXT_CLAIM) or {}
    nrps = claims.get(NRPS_CLAIM) or {}
    ags = claims.get(AGS_CLAIM) or {}
    name = _text(claims.get("name"), 128) or _text(
        " ".join(
            part
            for part in (claims.get("given_name"), claims.get("family_name"))
            if isinstance(part, str)
        ),
        128,
    )
    custom = claims.get(CUSTOM_CLAIM) or {}
    presentation = claims.get(LAUNCH_PRESENTATION_CLAIM) or {}
    return LaunchFacts(
        issuer=claims["iss"],
        client_id=str(client_id),
        deployment_id=str(claims.get(DEPLOYMENT_CLAIM)),
        sub=str(claims["sub"])[:ID_LENGTH],
        message_type=str(claims.get(MESSAGE_TYPE_CLAIM)),
        role=class_role(claims),
        name=name,
        email=_text(claims.get("email"), 320),
        locale=_text(presentation.get("locale") or claims.get("locale"), 16),
        student_number=_text((claims.get(LIS_CLAIM) or {}).get("person_sourcedid"), 64),
        context_id=_text(context.get("id"), ID_LENGTH),
        context_title=_text(context.get("title") or context.get("label"), 200),
        memberships_url=_text(nrps.get("context_memberships_url"), 1024),
        lineitems_url=_text(ags.get("lineitems"), 1024),
        ags_scopes=tuple(s for s in ags.get("scope") or () if isinstance(s, str)),
        custom={str(k): str(v) for k, v in custom.items()}
        if isinstance(custom, dict)
        else {},
        deep_linking=claims.get(DEEP_LINKING_CLAIM),
    )


def interface_language(locale: str | None) -> str | None:
    """quizsvc's language for an LMS locale ("zh-Hans-CN" -> zh-CN), else None."""
    if not locale:
        return None
    lowered = locale.lower().replace("_", "-")
    if lowered.startswith("zh"):
        return "zh-CN"
    if lowered.startswith("en"):
        return "en"
    return None
