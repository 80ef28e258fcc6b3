"""Liquid time-constant networks (Hasani et al., AAAI-21) and the recurrent baselines of their
repository: CT-RNN, Neural ODE RNN, CT-GRU and LSTM (facts §5), plus the random continuous-time
networks of the trajectory-length experiment (facts §5.7)."""
