"""The registry of LMS platforms, and pylti1p3's view of it (a tool configuration).

An admin registers a platform with the values the LMS shows when quizsvc is
added to it (issuer, client id, deployment ids, and three URLs); launches
from any other issuer, client id or deployment are refused.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pylti1p3.deployment import Deployment
from pylti1p3.registration import Registration
from pylti1p3.tool_config import ToolConfAbstract
from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from quizsvc.lti import keys
from quizsvc.models.lti import ID_LENGTH, URL_LENGTH, LtiDeployment, LtiPlatform
from quizsvc.services import resolve_now
from quizsvc.services.errors import N_, Conflict, InvalidInput, Message, NotFound

MAX_NAME = 200
MAX_DEPLOYMENTS = 50


@dataclass(frozen=True)
class PlatformFields:
    """What registering a platform takes, as typed (checked by `add_platform`)."""

    issuer: str
    client_id: str
    deployment_ids: tuple[str, ...]
    auth_login_url: str
    auth_token_url: str
    key_set_url: str
    name: str | None = None
    frame_origins: tuple[str, ...] = ()


def origin(url: str) -> str:
    """The scheme://host[:port] of a URL."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _url(value: str, label: str, *, allow_http: bool) -> str:
    """Return a checked URL; `label` is the msgid naming the field."""
    value = (value or "").strip()
    schemes = ("https", "http") if allow_http else ("https",)
    try:
        parts = urlsplit(value)
        # .port raises ValueError for a port that is not a number below 65536.
        well_formed = bool(parts.hostname) and parts.port != 0
    except ValueError:  # e.g. an unclosed IPv6 bracket or a port out of range
        well_formed = False
    if (
        not well_formed
        or not value
        or len(value) > URL_LENGTH
        or parts.scheme not in schemes
        or any(ch.isspace() for ch in value)
        or not value.isprintable()
    ):
        need = Message(N_("https:// or http://")) if allow_http else "https://"
        raise InvalidInput(
            N_(
                "%(label)s must be a full URL starting with %(need)s (at most "
                "%(n)d characters): '%(value)s'."
            ),
            label=Message(label),
            need=need,
            n=URL_LENGTH,
            value=value[:80],
        )
    return value


def _identifier(value: str, label: str) -> str:
    """Return a checked identifier; `label` is the msgid naming the field."""
    value = (value or "").strip()
    if not value or len(value) > ID_LENGTH or not value.isprintable():
        raise InvalidInput(
            N_("%(label)s needs 1-%(n)d printable characters."),
            label=Message(label),
            n=ID_LENGTH,
        )
    return value


def check_fields(fields: PlatformFields, *, allow_http: bool) -> PlatformFields:
    """Return the fields trimmed and checked; InvalidInput names the bad one."""
    issuer = _url(fields.issuer, N_("The issuer"), allow_http=allow_http)
    deployments = tuple(
        dict.fromkeys(
            _identifier(d, N_("A deployment id")) for d in fields.deployment_ids
        )
    )
    if not deployments:
        raise InvalidInput(
            N_("At least one deployment id is needed (--deployment-id).")
        )
    if len(deployments) > MAX_DEPLOYMENTS:
        raise InvalidInput(N_("At most %(n)d deployment ids."), n=MAX_DEPLOYMENTS)
    name = " ".join((fields.name or "").split()) or urlsplit(issuer).hostname or ""
    if len(name) > MAX_NAME:
        raise InvalidInput(
            N_("The name may have at most %(n)d characters."), n=MAX_NAME
        )
    return PlatformFields(
        issuer=issuer,
        client_id=_identifier(fields.client_id, N_("The client id")),
        deployment_ids=deployments,
        auth_login_url=_url(
            fields.auth_login_url,
            N_("The auth login URL"),
            allow_http=allow_http,
        ),
        auth_token_url=_url(
            fields.auth_token_url,
            N_("The auth token URL"),
            allow_http=allow_http,
        ),
        key_set_url=_url(
            fields.key_set_url,
            N_("The key set URL"),
            allow_http=allow_http,
        ),
        name=name,
        frame_origins=tuple(
            dict.fromkeys(
                origin(_url(o, N_("A frame origin"), allow_http=allow_http))
                for o in fields.frame_origins
            )
        ),
    )


def add_platform(
    session: Session, fields: PlatformFields, *, allow_http: bool = False, now=None
) -> LtiPlatform:
    """Register a platform (issuer + client id) with its deployments."""
    fields = check_fields(fields, allow_http=allow_http)
    existing = session.scalar(
        select(LtiPlatform).where(
            LtiPlatform.issuer == fields.issuer,
            LtiPlatform.client_id == fields.client_id,
        )
    )
    if existing is not None:
        raise Conflict(
            N_(
                "This platform (%(issuer)s, client %(client)s) is already "
                "registered (id %(id)d); remove it first to change it."
            ),
            issuer=fields.issuer,
            client=fields.client_id,
            id=existing.id,
        )
    platform = LtiPlatform(
        name=fields.name or fields.issuer,
        issuer=fields.issuer,
        client_id=fields.client_id,
        auth_login_url=fields.auth_login_url,
        auth_token_url=fields.auth_token_url,
        key_set_url=fields.key_set_url,
        frame_origins=list(fields.frame_origins),
        created_at=resolve_now(now),
        deployments=[LtiDeployment(deployment_id=d) for d in fields.deployment_ids],
    )
    session.add(platform)
    session.flush()
    return platform


def list_platforms(session: Session) -> list[LtiPlatform]:
    """Every registered platform with its deployments, oldest first."""
    return list(
        session.scalars(
            select(LtiPlatform)
            .options(selectinload(LtiPlatform.deployments))
            .order_by(LtiPlatform.id)
        )
    )


def remove_platform(session: Session, platform_id: int) -> LtiPlatform:
    """Unregister a platform: its launches are refused from now on.

    Accounts and classes made by its launches stay (a platform registered
    again under the same issuer finds them).
    """
    platform = session.get(LtiPlatform, platform_id)
    if platform is None:
        raise NotFound(
            N_("No platform has id %(id)d (quizsvc lti list-platforms lists them)."),
            id=platform_id,
        )
    session.delete(platform)
    session.flush()
    return platform


def find_platform(session: Session, issuer: str, client_id: str) -> LtiPlatform | None:
    """The registration for an issuer and client id, or None."""
    return session.scalar(
        select(LtiPlatform)
        .options(selectinload(LtiPlatform.deployments))
        .where(LtiPlatform.issuer == issuer, LtiPlatform.client_id == client_id)
    )


def select_platforms_by_issuer(issuer: str):
    """A query for the platforms registered under an issuer."""
    return select(LtiPlatform).where(LtiPlatform.issuer == issuer)


def frame_ancestors(platform: LtiPlatform) -> list[str]:
    """The origins that may show quizsvc in a frame after a launch from `platform`."""
    found = [
        origin(platform.issuer),
        origin(platform.auth_login_url),
        *(platform.frame_origins or []),
    ]
    return list(dict.fromkeys(found))


# --- pylti1p3's tool configuration ---------------------------------------------


def registration(platform: LtiPlatform, instance_path: str | Path) -> Registration:
    """pylti1p3's Registration for a platform, signed with the tool's newest key."""
    key = keys.signing_key(instance_path)
    return (
        Registration()
        .set_issuer(platform.issuer)
        .set_client_id(platform.client_id)
        .set_auth_login_url(platform.auth_login_url)
        .set_auth_token_url(platform.auth_token_url)
        .set_key_set_url(platform.key_set_url)
        .set_tool_private_key(key.private_pem)
        .set_tool_public_key(key.public_pem)
    )


class DatabaseToolConf(ToolConfAbstract):
    """The platforms of the database, as pylti1p3 asks for them.

    Every issuer may have several client ids (pylti1p3's recommended form), so
    a launch is matched on its issuer and audience together. `issuer_known`
    tells a launch from an unknown issuer apart from a wrong audience.
    """

    def __init__(self, session: Session, instance_path: str | Path):
        super().__init__()
        self.session = session
        self.instance_path = instance_path
        self.issuers_relation_types = {}

    def check_iss_has_one_client(self, iss: str) -> bool:
        return False

    def check_iss_has_many_clients(self, iss: str) -> bool:
        return True

    def issuer_known(self, iss: str) -> bool:
        """True when some platform is registered under this issuer."""
        found = self.session.scalar(
            select(LtiPlatform.id).where(LtiPlatform.issuer == iss).limit(1)
        )
        return found is not None

    def _platforms(self, iss: str, client_id: str | None) -> Iterable[LtiPlatform]:
        query = (
            select(LtiPlatform)
            .options(selectinload(LtiPlatform.deployments))
            .where(LtiPlatform.issuer == iss)
        )
        if client_id is not None:
            query = query.where(LtiPlatform.client_id == client_id)
        return self.session.scalars(query.order_by(LtiPlatform.id))

    def find_registration_by_issuer(self, iss: str, *args, **kwargs) -> Any:
        platform = next(iter(self._platforms(iss, None)), None)
        return registration(platform, self.instance_path) if platform else None

    def find_registration_by_params(
        self, iss: str, client_id: str, *args, **kwargs
    ) -> Any:
        if not isinstance(iss, str) or not isinstance(client_id, (str, type(None))):
            return None
        found = list(self._platforms(iss, client_id))
        # A login without a client id is matched when the issuer has one only.
        if len(found) != 1 and client_id is None:
            return None
        return registration(found[0], self.instance_path) if found else None

    def find_deployment(self, iss: str, deployment_id: str) -> Deployment | None:
        return self.find_deployment_by_params(iss, deployment_id, None)

    def find_deployment_by_params(
        self, iss: str, deployment_id: str, client_id: str | None, *args, **kwargs
    ) -> Deployment | None:
        for platform in self._platforms(iss, client_id):
            if any(d.deployment_id == deployment_id for d in platform.deployments):
                return Deployment().set_deployment_id(deployment_id)
        return None
