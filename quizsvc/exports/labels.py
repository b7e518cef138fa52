"""How an export shows quizsvc's keys to a reader, in the reader's language.

CSV and XLSX are read by teachers: an item's type, its skills and lesson, a
misconception, a problem's kind and right-or-wrong are shown as words in the
export's language, the words the teacher's pages use. JSON lines and xAPI
are read by programs and keep the keys. A key nobody named is shown as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from quizsvc.grading import MISCONCEPTION_TITLES
from quizsvc.models import Lesson, Skill
from quizsvc.text import Bilingual, bilingual, pick

# A value as a reader sees it in a language: (value, language) -> shown value.
Show = Callable[[Any, str], Any]

ITEM_TYPES: dict[str, Bilingual] = {
    "choice": bilingual("选择题", "choice"),
    "numeric": bilingual("数值题", "numeric"),
    "cloze": bilingual("填空题", "fill in"),
    "recall": bilingual("记忆", "recall"),
    "ordering": bilingual("排序题", "ordering"),
    "generated": bilingual("随机生成的计算题", "generated problem"),
}
PROBLEM_KINDS: dict[str, Bilingual] = {
    "scores": bilingual("分数 S", "Scores S"),
    "softmax_row": bilingual("一行的 softmax", "Softmax of one row"),
    "weights": bilingual("权重 A", "Weights A"),
    "output": bilingual("输出 O", "Output O"),
    "attention": bilingual("完整计算", "The whole computation"),
    "causal": bilingual("因果遮罩", "Causal mask"),
    "padding_mask": bilingual("填充遮罩", "Padding mask"),
    "shapes": bilingual("形状", "Shapes"),
    "scale": bilingual("1/√d 缩放", "The 1/√d scale"),
    "temperature": bilingual("温度", "Temperature"),
    "shift_invariance": bilingual("整行平移", "Shifting a row"),
    "uniform": bilingual("分数相等", "Equal scores"),
    "lesson_example": bilingual("课文里的例子", "The lesson's example"),
}
# Right or wrong: words in Chinese; English keeps the truth value (CSV writes
# true/false, XLSX a boolean cell).
CORRECT: dict[bool, Bilingual] = {True: {"zh-CN": "对"}, False: {"zh-CN": "错"}}
# How a list of skills is joined, per language.
LIST_SEPARATORS = {"zh-CN": "；", "en": "; "}


def named(names: Mapping[Any, Bilingual]) -> Show:
    """Return a Show that names each key from `names` (others as they are)."""

    def show(value: Any, language: str) -> Any:
        name = names.get(value)
        return value if name is None else pick(name, language)

    return show


def show_correct(value: Any, language: str) -> Any:
    """Show right or wrong: 对/错 in Chinese, the truth value in English."""
    name = CORRECT.get(value) if value is not None else None
    return name.get(language, value) if name else value


def readable(value: Any, language: str) -> Any:
    """Show an answer as people read it (bilingual, from the item type) in a
    language; JSON lines keep both languages."""
    return pick(value, language) if isinstance(value, Mapping) else value


@dataclass(frozen=True)
class Labels:
    """The names an export shows for the bank's skills and lessons."""

    skills: dict[str, Bilingual]
    lessons: dict[str, Bilingual]

    def skill(self, value: Any, language: str) -> Any:
        """Show one skill id by its title."""
        return named(self.skills)(value, language)

    def skill_list(self, value: Any, language: str) -> Any:
        """Show a ";"-joined list of skill ids by their titles."""
        if not value:
            return value
        separator = LIST_SEPARATORS.get(language, "; ")
        return separator.join(self.skill(part, language) for part in value.split(";"))

    def lesson(self, value: Any, language: str) -> Any:
        """Show a lesson id by its title."""
        return named(self.lessons)(value, language)


def load_labels(session: Session) -> Labels:
    """Read the titles of every skill and lesson (retired ones too)."""
    return Labels(
        dict(session.execute(select(Skill.id, Skill.title)).all()),
        dict(session.execute(select(Lesson.id, Lesson.title)).all()),
    )


item_type = named(ITEM_TYPES)
misconception = named(MISCONCEPTION_TITLES)
problem_kind = named(PROBLEM_KINDS)
