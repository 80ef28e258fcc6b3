"""Liquid time-constant networks (Hasani et al., AAAI-21) and the recurrent baselines of their
repository: CT-RNN, Neural ODE RNN, CT-GRU and LSTM (docs/sources.md#paper-b), plus the random
continuous-time networks of the trajectory-length experiment
(docs/sources.md#ltc-trajectory-length). Their spec options are in ``config``; the cells and
models, imported when a model is built, in the other modules."""
