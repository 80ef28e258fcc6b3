"""Fast paths: the same numbers as a body's generic computation, with fewer or fused kernels.

Organised by the model family they serve: :mod:`.solved` (the solved bodies of papers a and c),
:mod:`.ltc` (the LTC suite of paper b), :mod:`.fwp` (the fast weight programmers of paper a);
:mod:`.solve` holds the lean fixed-grid and adaptive solves and the continuous adjoint that
``solved`` and ``fwp`` share, and :mod:`.choice` the rule that picks fast or generic for a spec.
This package imports the fields it accelerates; fields never import it. :func:`attach`, called
when a model is built, is the one hook: it gives a body the fast path its family offers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..components import NO_FAST_PATH
from ..fields.body import Body, FastPath
from ..fields.fwp.body import FWPBody
from ..fields.ltc.recurrent_body import RecurrentBody
from ..fields.solved_body import SolvedBody
from . import fwp, ltc, solved

#: body class -> offer(body, ctx): its fast path, the reason it runs generic ("generic (...)"),
#: or None when it has no fast path
OFFERS: dict[type, Callable[[Any, Any], FastPath | str | None]] = {
    SolvedBody: solved.offer, RecurrentBody: ltc.offer, FWPBody: fwp.offer,
}


def attach(body: Any, ctx) -> None:
    """Give ``body`` its family's fast path when ``ctx``'s spec can use it, and set its
    ``implementation_used``. Bodies that are not :class:`~zoo.fields.body.Body` (plugins) are
    left as they are."""
    if not isinstance(body, Body):
        return
    offer = next((OFFERS[c] for c in type(body).__mro__ if c in OFFERS), None)
    outcome = offer(body, ctx) if offer is not None else None
    if outcome is None:
        body.implementation_used, body.fast_path = NO_FAST_PATH, None
    elif isinstance(outcome, str):
        body.implementation_used, body.fast_path = outcome, None
    else:
        body.implementation_used, body.fast_path = "fast", outcome


