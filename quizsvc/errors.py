"""Errors that carry a machine code, an HTTP status and a message in any language.

Standard library only, so the core and the services raise these without
knowing about Flask. A message is an English msgid marked with `N_` (which
`pybabel extract -k N_` collects into the catalogue) and its parameters; the
edge (quizsvc.http.errors) translates it into the request's language. Content
that already exists in both languages (a grader's remark about a typed matrix,
a bank item's text) travels as data instead, a {"zh-CN": …, "en": …} mapping,
and the edge picks from it with quizsvc.text.pick.

    raise InvalidInput(N_("Keep the note under %(n)d characters."), n=2000)
    raise NotFound(N_("There is no such token."), field="token_id")
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from quizsvc.text import Bilingual, pick


def N_(msgid: str) -> str:
    """Mark an English msgid for the catalogue; it is translated where it is shown."""
    return msgid


Translate = Callable[[str], str]


def _same(msgid: str) -> str:
    return msgid


class Message:
    """An English msgid with its parameters, translated only where it is shown.

    A parameter may itself be a Message, bilingual content (a mapping, picked
    in the language shown) or a list of either (joined as a list is in that
    language); anything else is formatted as it is.
    """

    __slots__ = ("msgid", "params")

    def __init__(self, msgid: str, /, **params: Any):
        self.msgid = msgid
        self.params = params

    def render(self, translate: Translate = _same, lang: str = "en") -> str:
        """Return the message in `lang`, with `translate` looking up msgids."""
        template = translate(self.msgid)
        if not self.params:
            return template
        values = {
            name: _render_value(value, translate, lang)
            for name, value in self.params.items()
        }
        return template % values

    def __str__(self) -> str:
        return self.render()

    def __repr__(self) -> str:
        return f"Message({self.msgid!r}, **{self.params!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Message) and (self.msgid, self.params) == (
            other.msgid,
            other.params,
        )

    __hash__ = None  # type: ignore[assignment]


# How the items of a list parameter are joined: a msgid of its own, so Chinese
# gets its enumeration comma (、).
LIST_SEPARATOR = N_(", ")


def _render_value(value: Any, translate: Translate, lang: str) -> Any:
    if isinstance(value, Message):
        return value.render(translate, lang)
    if isinstance(value, Mapping):
        return pick(value, lang)
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return translate(LIST_SEPARATOR).join(
            str(_render_value(item, translate, lang)) for item in value
        )
    return value


class QuizError(Exception):
    """A request quizsvc refuses: `code` for programs, `status` for HTTP, a message.

    `field` names the form or JSON field the error belongs to, when there is
    one, so a page can show it beside that field. `content` (bilingual) takes
    the place of the msgid for errors whose words come from the core or the
    bank.
    """

    code = "invalid"
    status = 400
    field: str | None = None
    default_message = N_("The request could not be carried out.")

    def __init__(
        self,
        message: str | Message | None = None,
        /,
        *,
        code: str | None = None,
        field: str | None = None,
        content: Bilingual | None = None,
        **params: Any,
    ):
        if isinstance(message, Message):
            self.message = message
        else:
            self.message = Message(message or self.default_message, **params)
        if code is not None:
            self.code = code
        if field is not None:
            self.field = field
        self.content = content
        super().__init__(self.english())

    @property
    def params(self) -> dict[str, Any]:
        """The message's parameters."""
        return self.message.params

    def render(self, translate: Translate = _same, lang: str = "en") -> str:
        """Return the message in `lang` (content is picked, msgids translated)."""
        if self.content is not None:
            return pick(self.content, lang)
        return self.message.render(translate, lang)

    def english(self) -> str:
        """Return the message in English (for logs, the CLI and str())."""
        return self.render()


class BadRequest(QuizError):
    """The request is malformed or breaks a rule (400)."""

    code = "invalid_input"
    status = 400


class Unauthorized(QuizError):
    """Nobody is signed in, or the credentials are wrong (401)."""

    code = "unauthorized"
    status = 401
    default_message = N_("Sign in first.")


class Forbidden(QuizError):
    """The signed-in account may not do this (403)."""

    code = "forbidden"
    status = 403
    default_message = N_("You may not do this.")


class NotFound(QuizError):
    """The thing asked for does not exist, or is not the caller's (404)."""

    code = "not_found"
    status = 404
    default_message = N_("There is nothing here.")


class Conflict(QuizError):
    """The request contradicts what is already stored (409)."""

    code = "conflict"
    status = 409


class UnsupportedMediaType(QuizError):
    """The body is not in a format this route reads (415)."""

    code = "unsupported_media_type"
    status = 415


class Locked(QuizError):
    """Closed for now, by the closed-book rule (423)."""

    code = "closed_book"
    status = 423


class Unavailable(QuizError):
    """The service cannot answer now: a dependency or its configuration (503)."""

    code = "unavailable"
    status = 503
    default_message = N_("The service is unavailable right now; try again shortly.")
