"""How a transaction begins and what it keeps: execution options, the read phase.

No Flask here, so services can use it: a session's transactions are marked
read-only (`READ_ONLY_OPTION`: the request's read phase, an export's snapshot)
or allowed to commit without waiting for the disk (`NO_FLUSH_OPTION`), and
`phase_cache` keeps values read in one transaction, and in the read phase
before it, for the rest of the request.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

READ_ONLY_OPTION = "quizsvc_read_only"
# The execution option (set on a session by `get_session` for views marked
# `commits_without_flush`) under which a transaction may commit without
# waiting for the disk.
NO_FLUSH_OPTION = "quizsvc_commit_without_flush"
_READ_PHASE = "quizsvc_read_phase"
_LAST_READ_PHASE = "quizsvc_last_read_phase"


class ReadPhaseWrite(RuntimeError):
    """Code tried to write inside a read-only transaction (a programming error)."""


def start_read_phase(session: Session) -> None:
    """Begin a read-only transaction on `session`, remembered as its read phase."""
    session.connection(execution_options={READ_ONLY_OPTION: True})
    session.info[_READ_PHASE] = session.get_transaction()


def end_read_phase(session: Session) -> None:
    """Let go of the read phase's snapshot (if it is still the open transaction)."""
    phase = session.info.pop(_READ_PHASE, None)
    if phase is not None and phase is session.get_transaction():
        # Nothing was written: the commit only lets go of the snapshot.
        session.commit()
        session.info[_LAST_READ_PHASE] = phase


def phase_cache(session: Session, name: str) -> dict[Any, Any]:
    """A dict for values read in this transaction (and in the read phase before it)."""
    session.connection()  # begins the transaction if it has not begun yet
    transaction = session.get_transaction()
    cached = session.info.get(name)
    if cached is not None and cached[0] is not transaction:
        if transaction is not None and cached[0] is session.info.get(_LAST_READ_PHASE):
            cached = session.info[name] = (transaction, cached[1])
        else:
            cached = None
    if cached is None:
        cached = session.info[name] = (transaction, {})
    return cached[1]
