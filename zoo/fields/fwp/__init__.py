"""Continuous-time Fast Weight Programmers (Irie et al., NeurIPS 2022;
docs/sources.md#paper-a).

The state is a fast weight matrix per head, programmed by a learning rule (Hebb, Oja, Delta)
whose keys, values and learning rates a slow net generates from the control; a query reads it
out at the end. Modules: ``fast_weight`` (state layout), ``rules`` (update terms),
``slow_net`` (projections), ``ode_form`` / ``cde_form`` (the two vector-field forms),
``multilayer`` (App. C.1), ``query_readout`` + ``feedforward`` (read-out path),
``initial_state`` (W(t0)), ``body`` (the field body), ``rfwp`` (the ``ode_rfwp`` model,
paper (a) §3.3) and ``config`` (the options of kinds ``fwp`` and ``ode_rfwp``; no torch).
"""
