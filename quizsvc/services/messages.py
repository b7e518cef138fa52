"""Service errors whose message exists in both interface languages."""

from __future__ import annotations

from quizsvc.services import Conflict, InvalidInput, NotFound


class Localized:
    """Mixin: carry the message in zh-CN and en; str() is the English one."""

    def __init__(self, zh: str, en: str):
        self.messages = {"zh-CN": zh, "en": en}
        super().__init__(text=self.messages)

    def localized(self, lang: str) -> str:
        """The message in `lang` (English when that language is missing)."""
        return self.messages.get(lang) or self.messages["en"]


class LocalizedInvalidInput(Localized, InvalidInput):
    """InvalidInput with a bilingual message."""


class LocalizedConflict(Localized, Conflict):
    """Conflict with a bilingual message."""


class LocalizedNotFound(Localized, NotFound):
    """NotFound with a bilingual message."""
