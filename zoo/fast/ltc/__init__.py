"""Fast paths of the recurrent bodies (the LTC suite of paper b, and the CfC): one fused loop
over all steps of a sequence in place of the cell's step-by-step loop (:mod:`.cells` for the LTC
cells, with the compiled synapse sums and fused-solver unfolds of :mod:`.compiled` and
:mod:`.fused`; :mod:`.baselines` for the CT-RNN, Neural ODE, LSTM and CT-GRU; :mod:`.cfc`)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from ...fields.cfc.cell import CfCCell
from ...fields.ltc.cell_ncps import NCPSLTCCell
from ...fields.ltc.cell_tf import TFLTCCell
from ...fields.ltc.ctgru import CTGRUCell
from ...fields.ltc.ctrnn import CTRNNCell
from ...fields.ltc.lstm import LSTMCell
from ...fields.ltc.node_rnn import NODECell
from ...fields.ltc.recurrent_body import RecurrentBody, elapsed_times
from ..choice import implementation
from . import cfc
from .baselines import ctgru_sequence, ctrnn_sequence, lstm_sequence, node_sequence
from .cells import ltc_sequence

#: (cell, inputs (B, T, C), elapsed times (T,)) -> the cell's outputs after every step (T, B, out)
Sequence = Callable[[torch.nn.Module, torch.Tensor, torch.Tensor], torch.Tensor]

#: the fused loop of each cell class
SEQUENCES: dict[type, Sequence] = {
    TFLTCCell: ltc_sequence, NCPSLTCCell: ltc_sequence, CTRNNCell: ctrnn_sequence,
    NODECell: node_sequence, LSTMCell: lstm_sequence, CTGRUCell: ctgru_sequence,
    CfCCell: cfc.cfc_sequence,
}
#: for a cell class whose fast loop serves some of its variants: cell -> why it runs the
#: generic path (None: the fast path serves it)
LIMITS: dict[type, Callable[[torch.nn.Module], str | None]] = {CfCCell: cfc.limit}


class RecurrentFastPath:
    """``RecurrentBody.forward`` with the cell's fused loop over all steps."""

    def __init__(self, sequence: Sequence):
        self.sequence = sequence

    def forward(self, body: RecurrentBody, path, batch) -> torch.Tensor:
        outputs = self.sequence(body.cell, path.values, elapsed_times(path.times))
        return body.step_features(outputs, path, batch)


def offer(body: RecurrentBody, ctx) -> RecurrentFastPath | str | None:
    """The fast path for ``body``'s cell, or why it runs the generic path (None: it has none)."""
    sequence = SEQUENCES.get(type(body.cell))
    if sequence is None:
        return None
    limit = LIMITS.get(type(body.cell))
    reason = limit(body.cell) if limit is not None else None
    if reason is not None:
        return f"generic ({reason})"
    used = implementation(ctx, False)
    return RecurrentFastPath(sequence) if used == "fast" else used
