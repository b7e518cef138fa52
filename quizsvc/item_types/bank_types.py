"""The bank's own item types: choice, numeric, cloze and ordering (checked by
quizsvc.bank), and recall (rated by the learner)."""

from __future__ import annotations

import re
import secrets
from typing import Any

from quizsvc import bank, scheduling
from quizsvc.bank import Question, presented_steps
from quizsvc.errors import N_
from quizsvc.item_types.base import (
    Graded,
    ItemType,
    RatingRefused,
    UnreadableAnswer,
    pick_text,
    quoted,
    separator,
)


class Checked(ItemType):
    """An answer the bank's checker grades: right or wrong, and a score."""

    def check_shape(self, question: Question, answer: Any) -> None:
        """Refuse, before checking, an answer the type can name the fault of."""

    def grade(self, question, answer, *, problem=None, rating=None, two_button=False):
        if answer is None or answer == "" or answer == {}:
            raise UnreadableAnswer(N_("Type an answer first."))
        self.check_shape(question, answer)
        check = bank.check_answer(question, answer)
        if check.detail.get("invalid"):
            raise UnreadableAnswer.of([dict(check.detail["invalid"])])
        verdict = {
            "type": self.name,
            "correct": check.correct,
            "score": check.score,
            "detail": check.detail,
        }
        named = check.detail.get("misconceptions") or [None]
        return Graded(
            verdict=verdict,
            graded=scheduling.GradedAnswer(
                correct=check.correct, score=float(check.score)
            ),
            misconception=named[0],
        )

    def result_fields(self, question, verdict, text, lang, problem=None):
        return {"expected_text": self.expected_lines(question, lang)}


def _ids(value: Any, splitter: str) -> list[str] | None:
    """Option or step ids from a stored answer (a list, or ids typed in a row)."""
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [v.strip() for v in value]
    if isinstance(value, str):
        return [part for part in re.split(splitter, value.strip()) if part]
    return None


class Choice(Checked):
    name = "choice"
    xapi_interaction = "choice"
    json_answer = True
    own_answer_keys = ("chosen",)

    def public_fields(self, question, lang):
        return {
            "multiple": question.data["multiple"],
            "options": [
                {"id": option["id"], "text": pick_text(option["text"], lang)}
                for option in question.data["options"]
            ],
        }

    def read_form(self, question, form, problem):
        chosen = form.getlist("answer")
        return ",".join(chosen) if chosen else None

    def opening(self, question):
        # A fresh order each presentation: a learning-step repeat must not be
        # answerable by remembering "it was the last one". Ids stay stable.
        order = [option["id"] for option in question.data.get("options", ())]
        if len(order) < 2:
            return {}
        secrets.SystemRandom().shuffle(order)
        return {"option_order": order}

    def option_texts(self, question: Question, lang: str) -> dict[str, str]:
        """Each option's text in `lang`, by id (ids are never shown to people)."""
        return {o["id"]: pick_text(o["text"], lang) for o in question.data["options"]}

    def chosen(self, text: str | None) -> list[str]:
        return _ids(self.stored_answer(text), r"\s*[,，、;；\s]\s*") or []

    def expected_lines(self, question, lang):
        texts = self.option_texts(question, lang)
        return [texts[o["id"]] for o in question.data["options"] if o["correct"]]

    def readable(self, question, text, lang):
        if not text or question is None:
            return text or ""
        texts = self.option_texts(question, lang)
        ids = self.chosen(text)
        if not ids or any(i not in texts for i in ids):
            return text  # not ids of this item's options: show it as typed
        return separator(lang).join(texts.get(i, i) for i in ids)

    def result_fields(self, question, verdict, text, lang, problem=None):
        texts = self.option_texts(question, lang)
        detail = verdict.get("detail") or {}
        chosen = detail.get("chosen") or self.chosen(text)
        # Listed in the order the learner saw the options (stored with the
        # answer), so the result reads like the question did.
        seen = verdict.get("option_order") or [
            o["id"] for o in question.data["options"]
        ]
        rank = {option_id: index for index, option_id in enumerate(seen)}

        def place(option_id):
            return rank.get(option_id, len(rank))

        right = [o["id"] for o in question.data["options"] if o["correct"]]
        wrong = detail.get("why_wrong") or {}
        return {
            "expected_text": [texts[i] for i in sorted(right, key=place)],
            "chosen_text": [texts.get(c, "") for c in sorted(chosen, key=place)],
            "why_wrong": [
                (texts.get(option, ""), wrong[option])
                for option in sorted(wrong, key=place)
            ],
        }

    def preview(self, question, lines, labels, lang, seed):
        data = question.data
        label = labels["multiple" if data["multiple"] else "single"]
        said = label.strip("()（）").casefold()
        if said not in lines[-1].casefold():  # the prompt may say it already
            lines[-1] += labels["gap"] + label
        texts = self.option_texts(question, lang)
        lines += [
            f"  {option['id']}) {texts[option['id']]}" for option in data["options"]
        ]
        answer = []
        for option in data["options"]:
            mark = "✓" if option["correct"] else "✗"
            answer.append(f"  {mark} {option['id']}) {option['text'][lang]}")
            if option["why"] is not None:
                answer.append(f"      {option['why'][lang]}")
        return answer


class Numeric(Checked):
    name = "numeric"
    xapi_interaction = "numeric"
    own_answer_keys = ("value",)

    def public_fields(self, question, lang):
        return {"tolerance": question.data["tolerance"]}

    def expected_lines(self, question, lang):
        data = question.data
        return [bank.format_answer(data["answer"], data["tolerance"])]

    def result_fields(self, question, verdict, text, lang, problem=None):
        return {"expected_text": self.expected_lines(question, lang), "typed": text}

    def preview(self, question, lines, labels, lang, seed):
        data = question.data
        shown = bank.format_answer(data["answer"], data["tolerance"])
        return [f"  {shown}  ({labels['tolerance']} ±{data['tolerance']:g})"]


class Cloze(Checked):
    name = "cloze"
    xapi_interaction = "fill-in"
    own_answer_keys = ("normalized",)

    def expected_lines(self, question, lang):
        return [question.data["accepted"][0]]

    def result_fields(self, question, verdict, text, lang, problem=None):
        return {"expected_text": self.expected_lines(question, lang), "typed": text}

    def preview(self, question, lines, labels, lang, seed):
        accepted = question.data["accepted"]
        lines[-1] += labels["gap"] + labels["fill"]
        answer = [f"  {accepted[0]}"]
        if len(accepted) > 1:
            answer.append(
                f"  {labels['accepted']}{labels['colon']}{' | '.join(accepted)}"
            )
        return answer


class Ordering(Checked):
    name = "ordering"
    xapi_interaction = "sequencing"
    json_answer = True
    own_answer_keys = ("order",)

    def public_fields(self, question, lang):
        return {
            "steps": [
                {"id": step["id"], "text": pick_text(step["text"], lang)}
                for step in presented_steps(question)
            ]
        }

    def read_form(self, question, form, problem):
        picks = [form.get(f"order-{i}", "") for i in range(len(question.data["steps"]))]
        return picks if any(picks) else None

    def step_texts(self, question: Question, lang: str) -> dict[str, str]:
        return {s["id"]: pick_text(s["text"], lang) for s in question.data["steps"]}

    def check_shape(self, question, answer):
        """Refuse an ordering picked from the list with a step left out or twice,
        naming the steps as the learner sees them (never their ids)."""
        if not isinstance(answer, list) or not all(isinstance(a, str) for a in answer):
            return  # typed ids: the bank's checker reads and names them
        steps = {step["id"]: step["text"] for step in question.data["steps"]}
        picked = [a.strip() for a in answer if a.strip()]
        if any(p not in steps for p in picked):
            return
        missing = [steps[s] for s in steps if s not in picked]
        twice = [steps[s] for s in steps if picked.count(s) > 1]
        if not missing and not twice:
            return
        named = {
            "missing": [quoted(text) for text in missing],
            "twice": [quoted(text) for text in twice],
        }
        if missing and twice:
            raise UnreadableAnswer(
                N_(
                    "Use every step exactly once. Not chosen yet: %(missing)s; "
                    "chosen twice: %(twice)s."
                ),
                **named,
            )
        if missing:
            raise UnreadableAnswer(
                N_("Use every step exactly once. Not chosen yet: %(missing)s."),
                **named,
            )
        raise UnreadableAnswer(
            N_("Use every step exactly once. Chosen twice: %(twice)s."), **named
        )

    def order(self, text: str | None) -> list[str]:
        return _ids(self.stored_answer(text), r"\s*(?:->|→|[,，、;；\s])\s*") or []

    def expected_lines(self, question, lang):
        texts = self.step_texts(question, lang)
        return [
            f"{n}. {texts[step['id']]}"
            for n, step in enumerate(question.data["steps"], start=1)
        ]

    def readable(self, question, text, lang):
        if not text or question is None:
            return text or ""
        texts = self.step_texts(question, lang)
        ids = self.order(text)
        if not ids or any(i not in texts for i in ids):
            return text  # not ids of this item's steps: show it as typed
        return " → ".join(texts.get(i, i) for i in ids)

    def result_fields(self, question, verdict, text, lang, problem=None):
        texts = self.step_texts(question, lang)
        detail = verdict.get("detail") or {}
        order = detail.get("order") or self.order(text)
        return {
            "expected_text": self.expected_lines(question, lang),
            "order_text": [texts.get(s, s) for s in order],
        }

    def preview(self, question, lines, labels, lang, seed):
        lines.append(labels["steps"])
        lines += [
            f"  [{step['id']}] {step['text'][lang]}"
            for step in presented_steps(question)
        ]
        answer = [f"  {labels['order']}{labels['colon']}"]
        answer += [
            f"  {number}. [{step['id']}] {step['text'][lang]}"
            for number, step in enumerate(question.data["steps"], start=1)
        ]
        return answer


class Recall(ItemType):
    name = "recall"
    self_rated = True

    def read_form(self, question, form, problem):
        return form.get("attempt", "").strip() or None

    def grade(self, question, answer, *, problem=None, rating=None, two_button=False):
        try:
            parsed = scheduling.rate_recall(rating or "", two_button=two_button)
        except ValueError:
            raise RatingRefused(two_button) from None
        return Graded(
            verdict={"type": self.name, "self_rating": rating.lower()},
            self_rating=parsed,
        )

    def revealed_fields(self, question, lang):
        return {
            "model_answer": pick_text(question.data["model_answer"], lang),
            "key_points": [pick_text(p, lang) for p in question.data["key_points"]],
        }

    def legacy_verdict(self, correct, score, rating):
        verdict = super().legacy_verdict(correct, score, rating)
        verdict["self_rating"] = scheduling.Rating(rating).name.lower()
        return verdict

    def preview(self, question, lines, labels, lang, seed):
        data = question.data
        colon = labels["colon"]
        answer = [f"  {labels['model']}{colon}{data['model_answer'][lang]}"]
        if data["key_points"]:
            answer.append(f"  {labels['points']}{colon}")
            answer += [f"    - {point[lang]}" for point in data["key_points"]]
        answer.append(f"  {labels['rate']}")
        return answer
